//! Semi-synchronous replication state. `MySQL` 5.7 names it `rpl_semi_sync_master_*`, 8.0.26+
//! `rpl_semi_sync_source_*` (new plugin), `MariaDB` has it built in with the old names. Absent
//! variables mean the plugin is not loaded, which is not the same as "off".

use serde::Serialize;

use super::replica_status::StatusError;
use super::row::{RawRow, excerpt, parse_bool};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SemiSync {
    /// `None`: the source-side plugin is not loaded.
    pub source_enabled: Option<bool>,
    pub replica_enabled: Option<bool>,
    pub source_timeout_ms: Option<u64>,
    pub source_wait_point: Option<String>,
    /// Whether the primary is semi-sync *now*; it silently falls back to async after a timeout.
    pub source_active: Option<bool>,
    pub source_clients: Option<u64>,
    pub replica_active: Option<bool>,
}

/// Turns a name of either generation into the one spelling matched below.
fn normalize(name: &str) -> String {
    name.to_ascii_lowercase()
        .replace("_master_", "_source_")
        .replace("_slave_", "_replica_")
}

impl SemiSync {
    /// From the rows of `SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%'` and
    /// `SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'`.
    pub fn from_rows(variables: &[RawRow], status: &[RawRow]) -> Result<Self, StatusError> {
        let mut out = Self::default();
        for row in variables.iter().chain(status) {
            let name = normalize(&row.string(&["Variable_name"])?);
            let value = row.string(&["Value"])?;
            let flag = || {
                parse_bool(&value).ok_or_else(|| StatusError::Value {
                    column: "Value",
                    value: format!("{name}={}", excerpt(&value)),
                    expected: "ON or OFF",
                })
            };
            let number = || {
                value.trim().parse::<u64>().map_err(|_| StatusError::Value {
                    column: "Value",
                    value: format!("{name}={}", excerpt(&value)),
                    expected: "a non-negative integer",
                })
            };
            match name.as_str() {
                "rpl_semi_sync_source_enabled" => out.source_enabled = Some(flag()?),
                "rpl_semi_sync_replica_enabled" => out.replica_enabled = Some(flag()?),
                "rpl_semi_sync_source_timeout" => out.source_timeout_ms = Some(number()?),
                "rpl_semi_sync_source_wait_point" => out.source_wait_point = Some(value.clone()),
                "rpl_semi_sync_source_status" => out.source_active = Some(flag()?),
                "rpl_semi_sync_source_clients" => out.source_clients = Some(number()?),
                "rpl_semi_sync_replica_status" => out.replica_active = Some(flag()?),
                _ => {}
            }
        }
        Ok(out)
    }
}
