//! A summary of what a node is busy with, from its processlist. The scan costs the server several
//! times a status read, so pollers take it less often.

use serde::Serialize;

use super::replica_status::StatusError;
use super::row::RawRow;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ProcessSummary {
    pub threads: u64,
    /// Client threads doing something (not sleeping, not replication plumbing).
    pub active: u64,
    /// The longest-running client statement, in seconds.
    pub longest_query_s: u64,
}

/// The same statement serves both families: `information_schema.PROCESSLIST` has these columns
/// in MySQL 5.7+ and MariaDB alike.
pub const SUMMARY_SQL: &str = "SELECT COUNT(*) AS threads, \
     COALESCE(SUM(COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID', 'Connect') \
         AND USER <> 'system user' AND ID <> CONNECTION_ID()), 0) AS active, \
     COALESCE(MAX(IF(COMMAND = 'Query' AND USER <> 'system user' AND ID <> CONNECTION_ID(), TIME, 0)), 0) \
         AS longest_query_s \
     FROM information_schema.PROCESSLIST";

impl ProcessSummary {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            threads: row.u64(&["threads"])?,
            active: row.u64(&["active"])?,
            longest_query_s: row.u64(&["longest_query_s"])?,
        })
    }
}
