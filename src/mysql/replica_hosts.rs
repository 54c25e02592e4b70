//! Replicas a node says are registered with it (SHOW SLAVE HOSTS / SHOW REPLICAS).
//!
//! Only a hint for discovery: the primary keeps listing a replica for a while after its IO thread
//! stops, and a replica without `report_host` shows an empty host.

use serde::Serialize;

use super::replica_status::StatusError;
use super::row::RawRow;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaHost {
    pub server_id: u32,
    /// `report_host` of the replica; empty when it has none.
    pub host: String,
    pub port: u16,
    pub source_id: u32,
    /// `MySQL` only.
    pub uuid: Option<String>,
}

impl ReplicaHost {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            server_id: row.u32(&["Server_Id"])?,
            host: row.string(&["Host"])?,
            port: row.u16(&["Port"])?,
            source_id: row.u32(&["Source_Id", "Master_Id"])?,
            uuid: row
                .optional_text(&["Replica_UUID", "Slave_UUID"])
                .filter(|u| !u.is_empty())
                .map(str::to_owned),
        })
    }
}
