//! One row of SHOW REPLICA/SLAVE STATUS (or `MariaDB`'s SHOW ALL SLAVES STATUS), typed.
//!
//! Column names changed across versions (`Master_*` → `Source_*`, `Slave_*` → `Replica_*`), so each
//! field lists every spelling. `MariaDB` keeps the old names even under `SHOW REPLICA STATUS`.

use serde::{Deserialize, Serialize};

use super::row::{RawRow, RowError, excerpt};
use crate::gtid::{GtidList, GtidSet};

/// `Slave_IO_Running`: the IO thread can be running but not connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoRunning {
    Yes,
    Connecting,
    No,
}

/// A binlog coordinate on the source: file name and byte offset.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BinlogPos {
    pub file: String,
    pub pos: u64,
}

impl BinlogPos {
    #[must_use]
    pub fn new(file: impl Into<String>, pos: u64) -> Self {
        Self {
            file: file.into(),
            pos,
        }
    }

    /// Whether this coordinate is at or past `target`, files ordered by their numeric suffix;
    /// a file of another basename is never "past" (the positions are not comparable).
    #[must_use]
    pub fn is_at_or_past(&self, target: &Self) -> bool {
        let split = |file: &str| {
            file.rsplit_once('.')
                .and_then(|(base, n)| Some((base.to_owned(), n.parse::<u64>().ok()?)))
        };
        match (split(&self.file), split(&target.file)) {
            (Some((base, a)), Some((target_base, t))) if base == target_base => {
                (a, self.pos) >= (t, target.pos)
            }
            _ => self.file == target.file && self.pos >= target.pos,
        }
    }
}

/// The last error of one replication thread; absent when the errno is 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadError {
    pub errno: u32,
    pub message: String,
    /// `MySQL`'s `Last_*_Error_Timestamp` as printed (`240315 10:22:31`); `MariaDB` has none.
    pub timestamp: Option<String>,
}

/// GTID state of the replication stream, which differs in kind between the families.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ReplicaGtid {
    Mysql {
        auto_position: bool,
        /// Transactions received into the relay log.
        retrieved: GtidSet,
        /// Transactions applied (the replica's whole `gtid_executed`).
        executed: GtidSet,
    },
    Mariadb {
        /// `Using_Gtid`: `No`, `Current_Pos` or `Slave_Pos`.
        using_gtid: String,
        /// Last GTID received per domain (`Gtid_IO_Pos`).
        io_pos: GtidList,
        /// Last GTID applied per domain (`Gtid_Slave_Pos`, only in SHOW ALL SLAVES STATUS).
        slave_pos: Option<GtidList>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaStatus {
    /// Channel (`MySQL`) or connection name (`MariaDB`); empty for the default one.
    pub channel: String,
    pub source_host: String,
    pub source_port: u16,
    pub source_user: String,
    pub source_server_id: Option<u32>,
    pub source_uuid: Option<String>,
    pub io_running: IoRunning,
    pub sql_running: bool,
    /// `Slave_IO_State`: what the IO thread is doing, empty when stopped.
    pub io_state: String,
    /// `Slave_SQL_Running_State`; empty when the SQL thread is stopped.
    pub sql_state: String,
    /// NULL when a thread is stopped: kept as `None`, never read as 0.
    pub seconds_behind_source: Option<u64>,
    /// Where the IO thread has read to in the source's binlog.
    pub received: BinlogPos,
    /// Where the SQL thread has applied to in the source's binlog.
    pub applied: BinlogPos,
    pub relay_log_space: Option<u64>,
    pub sql_delay: Option<u64>,
    pub sql_remaining_delay: Option<u64>,
    pub last_io_error: Option<ThreadError>,
    pub last_sql_error: Option<ThreadError>,
    pub gtid: ReplicaGtid,
    /// Parallel-applier counters (`MariaDB`); all `None` where the row has no such columns.
    pub appliers: super::ApplierCounters,
    /// When the newest transaction in the relay log was committed on its original source, in
    /// microseconds since the epoch on that source's clock (`MySQL` 8, read beside the status:
    /// `mysql/queued.rs`); `None` where not read or nothing was queued.
    pub queued_commit_us: Option<i64>,
    /// Heartbeat period, TLS, filters, `UNTIL` and skip counter, for the health lint.
    pub link: super::LinkHygiene,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Row(#[from] RowError),
    #[error("column {column}: {source}")]
    Gtid {
        column: &'static str,
        source: crate::gtid::GtidParseError,
    },
    #[error("column {column} holds {value:?}, expected {expected}")]
    Value {
        column: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error(
        "the replica status has neither Executed_Gtid_Set (MySQL) nor Gtid_IO_Pos (MariaDB): unsupported server"
    )]
    UnknownGtidColumns,
}

const IO_RUNNING: &[&str] = &["Replica_IO_Running", "Slave_IO_Running"];
const SQL_RUNNING: &[&str] = &["Replica_SQL_Running", "Slave_SQL_Running"];

impl ReplicaStatus {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            channel: row
                .optional_text(&["Channel_Name", "Connection_name"])
                .unwrap_or_default()
                .to_owned(),
            source_host: row.string(&["Source_Host", "Master_Host"])?,
            source_port: row.u16(&["Source_Port", "Master_Port"])?,
            source_user: row.string(&["Source_User", "Master_User"])?,
            source_server_id: row.optional_u32(&["Source_Server_Id", "Master_Server_Id"])?,
            source_uuid: row
                .optional_text(&["Source_UUID", "Master_UUID"])
                .filter(|uuid| !uuid.is_empty())
                .map(str::to_owned),
            io_running: io_running(row)?,
            sql_running: yes_no(row, SQL_RUNNING)?,
            io_state: row.string(&["Replica_IO_State", "Slave_IO_State"])?,
            sql_state: row
                .optional_text(&["Replica_SQL_Running_State", "Slave_SQL_Running_State"])
                .unwrap_or_default()
                .to_owned(),
            seconds_behind_source: row
                .opt_u64(&["Seconds_Behind_Source", "Seconds_Behind_Master"])?,
            received: BinlogPos {
                file: row.string(&["Source_Log_File", "Master_Log_File"])?,
                pos: row.u64(&["Read_Source_Log_Pos", "Read_Master_Log_Pos"])?,
            },
            applied: BinlogPos {
                file: row.string(&["Relay_Source_Log_File", "Relay_Master_Log_File"])?,
                pos: row.u64(&["Exec_Source_Log_Pos", "Exec_Master_Log_Pos"])?,
            },
            relay_log_space: row.optional_u64(&["Relay_Log_Space"])?,
            sql_delay: row.optional_u64(&["SQL_Delay"])?,
            sql_remaining_delay: row.optional_u64(&["SQL_Remaining_Delay"])?,
            last_io_error: thread_error(
                row,
                &["Last_IO_Errno"],
                &["Last_IO_Error"],
                &["Last_IO_Error_Timestamp"],
            )?,
            last_sql_error: thread_error(
                row,
                &["Last_SQL_Errno"],
                &["Last_SQL_Error"],
                &["Last_SQL_Error_Timestamp"],
            )?,
            gtid: replica_gtid(row)?,
            appliers: super::ApplierCounters::from_row(row)?,
            queued_commit_us: None,
            link: super::LinkHygiene::from_row(row),
        })
    }
}

/// What an applier that has applied all it received says while it waits: `MySQL` 8.0.26 and
/// later begin it with "Replica", `MariaDB` and older `MySQL` with "Slave".
const APPLIER_WAITING: &str = "has read all relay log; waiting for more updates";

impl ReplicaStatus {
    /// Whether this channel applies nothing now: its applier runs, waits for more, and has
    /// applied up to where it has received. No replicated statement (a DDL included) is being
    /// applied and no parallel worker holds a transaction. A stopped applier is not idle in
    /// this sense: that is when a DBA runs statements on a replica by hand.
    #[must_use]
    pub fn applier_idle(&self) -> bool {
        self.sql_running
            && self.sql_state.ends_with(APPLIER_WAITING)
            && self.applied == self.received
    }
}

/// The spelling of `names` this row uses, for a message that names the column the server sent.
fn spelling(row: &RawRow, names: &[&'static str]) -> &'static str {
    names
        .iter()
        .copied()
        .find(|name| row.has(&[name]))
        .or_else(|| names.first().copied())
        .unwrap_or_default()
}

fn yes_no(row: &RawRow, names: &[&'static str]) -> Result<bool, StatusError> {
    match row.text(names)? {
        Some("Yes") => Ok(true),
        Some("No") => Ok(false),
        other => Err(StatusError::Value {
            column: spelling(row, names),
            value: excerpt(other.unwrap_or("NULL")),
            expected: "Yes or No",
        }),
    }
}

fn io_running(row: &RawRow) -> Result<IoRunning, StatusError> {
    match row.text(IO_RUNNING)? {
        Some("Yes") => Ok(IoRunning::Yes),
        // MariaDB's IO thread reads "Preparing" between connecting and receiving (its states
        // are No, Connecting, Preparing, Yes): connected, not yet receiving, as Connecting is.
        Some("Connecting" | "Preparing") => Ok(IoRunning::Connecting),
        Some("No") => Ok(IoRunning::No),
        other => Err(StatusError::Value {
            column: spelling(row, IO_RUNNING),
            value: excerpt(other.unwrap_or("NULL")),
            expected: "Yes, Connecting, Preparing or No",
        }),
    }
}

fn thread_error(
    row: &RawRow,
    errno: &[&str],
    message: &[&str],
    timestamp: &[&str],
) -> Result<Option<ThreadError>, StatusError> {
    let errno = row.u32(errno)?;
    if errno == 0 {
        return Ok(None);
    }
    Ok(Some(ThreadError {
        errno,
        message: row.string(message)?,
        timestamp: row
            .optional_text(timestamp)
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
    }))
}

pub(super) fn gtid_set(row: &RawRow, column: &'static str) -> Result<GtidSet, StatusError> {
    GtidSet::parse(row.text(&[column])?.unwrap_or_default())
        .map_err(|source| StatusError::Gtid { column, source })
}

pub(super) fn gtid_list(row: &RawRow, column: &'static str) -> Result<GtidList, StatusError> {
    GtidList::parse(row.text(&[column])?.unwrap_or_default())
        .map_err(|source| StatusError::Gtid { column, source })
}

fn replica_gtid(row: &RawRow) -> Result<ReplicaGtid, StatusError> {
    if row.has(&["Executed_Gtid_Set"]) {
        return Ok(ReplicaGtid::Mysql {
            auto_position: row.optional_bool(&["Auto_Position"])?.unwrap_or(false),
            retrieved: gtid_set(row, "Retrieved_Gtid_Set")?,
            executed: gtid_set(row, "Executed_Gtid_Set")?,
        });
    }
    if row.has(&["Gtid_IO_Pos"]) {
        let slave_pos = if row.has(&["Gtid_Slave_Pos"]) {
            Some(gtid_list(row, "Gtid_Slave_Pos")?)
        } else {
            None
        };
        return Ok(ReplicaGtid::Mariadb {
            using_gtid: row.string(&["Using_Gtid"])?,
            io_pos: gtid_list(row, "Gtid_IO_Pos")?,
            slave_pos,
        });
    }
    Err(StatusError::UnknownGtidColumns)
}

/// The first channel of a recorded status under `tests/fixtures/` (`mariadb-10.11/…`).
#[cfg(test)]
pub(crate) fn from_fixture(path: &str) -> ReplicaStatus {
    ReplicaStatus::from_row(&super::row::fixture_row(path)).unwrap()
}

#[cfg(test)]
mod tests {
    use super::{BinlogPos, IoRunning, ReplicaStatus, from_fixture};

    #[test]
    fn a_preparing_io_thread_is_connecting_and_an_unknown_state_is_named() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/mariadb-10.11/show_all_slaves_status__second_connection_refused.txt"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let status = |io: &str| {
            let changed = text.replacen(
                "Slave_IO_Running: Connecting",
                &format!("Slave_IO_Running: {io}"),
                1,
            );
            let rows = crate::mysql::parse_vertical(&changed).unwrap().rows;
            ReplicaStatus::from_row(&rows[1]).map(|s| s.io_running)
        };
        assert_eq!(status("Connecting").unwrap(), IoRunning::Connecting);
        assert_eq!(status("Preparing").unwrap(), IoRunning::Connecting);
        let err = status("Dreaming").unwrap_err().to_string();
        assert!(
            err.contains("Dreaming") && err.contains("Preparing"),
            "{err}"
        );
    }

    #[test]
    fn an_applier_is_idle_only_when_waiting_with_all_it_received_applied() {
        for idle in [
            "mariadb-10.11/show_all_slaves_status__running.txt",
            "mariadb-10.11/show_all_slaves_status__io_stopped.txt",
            "mysql-8.4/show_replica_status__running.txt",
            "mysql-5.7/show_slave_status__running.txt",
        ] {
            assert!(from_fixture(idle).applier_idle(), "{idle}");
        }
        for busy in [
            "mariadb-10.11/show_all_slaves_status__delayed.txt",
            "mariadb-10.11/show_all_slaves_status__sql_stopped.txt",
            "mariadb-10.11/show_all_slaves_status__sql_error.txt",
            "mysql-8.4/show_replica_status__lagging.txt",
            "mysql-8.4/show_replica_status__sql_stopped.txt",
        ] {
            assert!(!from_fixture(busy).applier_idle(), "{busy}");
        }
        // Waiting, but with received events not yet applied (read just after the IO thread
        // wrote them): not idle.
        let mut behind = from_fixture("mariadb-10.11/show_all_slaves_status__running.txt");
        behind.received.pos += 1;
        assert!(!behind.applier_idle());
    }

    /// The received position is what the IO thread wrote to the relay log, never the applied
    /// one: the lag split's transport is read from it (`store/lag_split.rs`). Both recorded
    /// replicas have their SQL thread stopped, so the two differ.
    #[test]
    fn each_flavors_received_position_is_what_its_io_thread_received() {
        use super::ReplicaGtid;
        use crate::gtid::{GtidList, GtidSet};
        let status = from_fixture("mariadb-10.11/show_all_slaves_status__sql_stopped.txt");
        let ReplicaGtid::Mariadb {
            using_gtid,
            io_pos,
            slave_pos,
        } = &status.gtid
        else {
            panic!("MariaDB GTIDs: {:?}", status.gtid);
        };
        assert_eq!(using_gtid, "Slave_Pos");
        assert_eq!(io_pos, &GtidList::parse("0-1-10").unwrap(), "Gtid_IO_Pos");
        assert_eq!(
            slave_pos.as_ref(),
            Some(&GtidList::parse("0-1-8").unwrap()),
            "Gtid_Slave_Pos"
        );
        // SHOW SLAVE STATUS has no Gtid_Slave_Pos: the received position is there all the same.
        let status = from_fixture("mariadb-10.11/show_slave_status__running.txt");
        assert!(
            matches!(&status.gtid, ReplicaGtid::Mariadb { io_pos, slave_pos: None, .. }
                if *io_pos == GtidList::parse("0-1-8").unwrap()),
            "{:?}",
            status.gtid
        );
        let status = from_fixture("mysql-8.0/show_replica_status__sql_stopped.txt");
        let ReplicaGtid::Mysql {
            retrieved,
            executed,
            ..
        } = &status.gtid
        else {
            panic!("MySQL GTIDs: {:?}", status.gtid);
        };
        let source = "8a1f3c2e-4b5d-11ee-b7a9-00163e5a1b01";
        assert_eq!(
            retrieved,
            &GtidSet::parse(&format!("{source}:158112-211893")).unwrap(),
            "Retrieved_Gtid_Set"
        );
        assert!(
            executed.to_string().contains(&format!("{source}:1-210457")),
            "Executed_Gtid_Set {executed}"
        );
        // What was queued when is read beside the status (`queued.rs`), never from it.
        assert_eq!(status.queued_commit_us, None);
    }

    #[test]
    fn positions_compare_by_file_number_then_offset() {
        let pos = BinlogPos::new;
        assert!(pos("mysql-bin.000002", 4).is_at_or_past(&pos("mysql-bin.000001", 900)));
        assert!(pos("mysql-bin.000001", 900).is_at_or_past(&pos("mysql-bin.000001", 900)));
        assert!(!pos("mysql-bin.000001", 899).is_at_or_past(&pos("mysql-bin.000001", 900)));
        // Suffixes past the zero padding still order as numbers.
        assert!(pos("mysql-bin.1000000", 4).is_at_or_past(&pos("mysql-bin.999999", 9)));
        // Another basename is not comparable: never "reached".
        assert!(!pos("other.000009", 9).is_at_or_past(&pos("mysql-bin.000001", 4)));
    }
}
