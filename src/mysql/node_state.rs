//! Per-node facts: identity (read once per connection) and GTID/read-only state (every poll).

use serde::{Deserialize, Serialize};

use super::flavor::Family;
use super::replica_status::{StatusError, gtid_list, gtid_set};
use super::row::RawRow;
use crate::gtid::{GtidList, GtidSet};

/// What does not change while a connection lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identity {
    pub server_id: u32,
    pub log_bin: bool,
    /// `MySQL` only.
    pub server_uuid: Option<String>,
    /// `MySQL` `gtid_mode` (`ON`, `OFF`, `ON_PERMISSIVE`, ...).
    pub gtid_mode: Option<String>,
    /// `MariaDB` only.
    pub gtid_domain_id: Option<u32>,
    pub gtid_strict_mode: Option<bool>,
}

impl Identity {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            server_id: row.u32(&["server_id"])?,
            log_bin: row.bool(&["log_bin"])?,
            server_uuid: row.optional_text(&["server_uuid"]).map(str::to_owned),
            gtid_mode: row.optional_text(&["gtid_mode"]).map(str::to_owned),
            gtid_domain_id: row.optional_u32(&["gtid_domain_id"])?,
            gtid_strict_mode: row.optional_bool(&["gtid_strict_mode"])?,
        })
    }
}

/// GTID state variables, in each family's own terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum GtidState {
    Mysql {
        executed: GtidSet,
    },
    Mariadb {
        /// Last GTID per domain written to this node's binlog.
        binlog_pos: GtidList,
        /// Last GTID per domain applied by replication (empty on a primary).
        slave_pos: GtidList,
        current_pos: GtidList,
    },
}

/// What can change at any poll: GTID state and the read-only switches (failover flips them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeState {
    pub gtid: GtidState,
    pub read_only: bool,
    /// `MySQL` only; `MariaDB` has no such switch.
    pub super_read_only: Option<bool>,
    /// The configured parallel applier workers (`slave_parallel_threads`,
    /// `replica_parallel_workers`): the poller reads the settings again when it changes.
    pub parallel_workers: Option<u64>,
}

impl NodeState {
    pub fn from_row(row: &RawRow, family: Family) -> Result<Self, StatusError> {
        let gtid = match family {
            Family::Mysql => GtidState::Mysql {
                executed: gtid_set(row, "gtid_executed")?,
            },
            Family::Mariadb => GtidState::Mariadb {
                binlog_pos: gtid_list(row, "gtid_binlog_pos")?,
                slave_pos: gtid_list(row, "gtid_slave_pos")?,
                current_pos: gtid_list(row, "gtid_current_pos")?,
            },
        };
        Ok(Self {
            gtid,
            read_only: row.bool(&["read_only"])?,
            super_read_only: row.optional_bool(&["super_read_only"])?,
            parallel_workers: row.optional_u64(&["parallel_workers"])?,
        })
    }
}

impl NodeState {
    /// Whether this node has applied every transaction `source` has: the sandbox's "caught up"
    /// test, and the basis of GTID-equality read-after-write checks.
    #[must_use]
    pub fn has_applied_all_of(&self, source: &NodeState) -> bool {
        match (&self.gtid, &source.gtid) {
            (GtidState::Mysql { executed: mine }, GtidState::Mysql { executed: theirs }) => {
                mine.is_superset_of(theirs)
            }
            (GtidState::Mariadb { slave_pos, .. }, GtidState::Mariadb { binlog_pos, .. }) => {
                binlog_pos
                    .domains()
                    .filter_map(|d| binlog_pos.get(d))
                    .all(|gtid| slave_pos.contains(gtid))
            }
            _ => false,
        }
    }
}
