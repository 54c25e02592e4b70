//! What a node is busy with, from one scan of its processlist: a summary, and the DDL statements
//! in flight — on a primary from clients, on a replica from the replication SQL thread.
//!
//! The scan answers a row per thread (MySQL's query also costs the server several times a status
//! read; MariaDB's `SHOW PROCESSLIST` about one, docs/benchmarks.md, "Statements measured by
//! hand"), so pollers take it only every few polls (fewer on a replica whose appliers are idle),
//! and every poll while a DDL runs (`poll/cadence.rs`).

use serde::{Deserialize, Serialize};

use super::flavor::{Family, Flavor};
use super::replica_status::StatusError;
use super::row::RawRow;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProcessSummary {
    pub threads: u64,
    /// Client threads doing something (not sleeping, not replication plumbing).
    pub active: u64,
    /// The longest-running client statement, in seconds.
    pub longest_query_s: u64,
}

/// A schema change running on a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DdlStatement {
    pub id: u64,
    /// The statement, cut to [`STATEMENT_CHARS`] characters.
    pub statement: String,
    pub elapsed_s: u64,
    /// Percent done where the server reports it (MariaDB's `Progress`); `None` elsewhere.
    pub progress: Option<f64>,
    /// Run by replication (the SQL thread applying it), not by a client.
    pub applier: bool,
    /// The lock it waits for before it can go on (`table metadata lock`, `backup lock`), from
    /// the thread's state; `None` while it works. A DDL waiting for a table's metadata lock
    /// queues every later statement on that table behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    /// Who holds that lock, read on the same connection right after the scan that saw the wait
    /// (`lock_holders.rs`); `None` while it waits for none, or where the read failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockers: Option<super::lock_holders::Blockers>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Processlist {
    pub summary: ProcessSummary,
    pub ddl: Vec<DdlStatement>,
    /// The parallel appliers' workers: `MariaDB`'s one pool from this scan's `Slave_worker`
    /// rows, `MySQL`'s per channel from its worker table; empty without parallel replication.
    pub workers: Vec<super::WorkerSample>,
    /// The replication threads applying row events, with the table where the scan names it
    /// (`row_events.rs`).
    pub row_events: Vec<super::RowApply>,
}

pub const STATEMENT_CHARS: usize = 120;

/// Marks rwtop's own scan so it can leave itself out.
const MARKER: &str = "/* rwtop processlist */";

/// One row per thread with the columns `from_rows` reads (`STATE` for the appliers' workers).
/// On `MariaDB`, `SHOW PROCESSLIST` (not `information_schema.PROCESSLIST`): the same threads and
/// columns (`Progress` included) for 7 to 12 times less server CPU at 100 connections, because the
/// server sends the rows as it walks its threads instead of filling a temporary table first
/// (docs/benchmarks.md, "Statements measured by hand"); its `Info` is cut at 100 characters,
/// enough to tell a DDL and show it.
/// `MySQL` reports ALTER progress as `InnoDB` stage events
/// (`stage/innodb/alter%`, work completed and estimated) in `performance_schema`, joined to the
/// thread here (needs the `SELECT ON performance_schema.*` grant README lists, and the stage
/// instruments and consumer enabled, as they are by default for ALTER since MySQL 8.0).
#[must_use]
pub fn processlist_sql(flavor: &Flavor) -> String {
    match flavor.family {
        Family::Mariadb => format!("{MARKER} SHOW PROCESSLIST"),
        Family::Mysql => format!(
            "SELECT {MARKER} p.ID, p.USER, p.DB, p.COMMAND, p.STATE, p.TIME, \
             LEFT(p.INFO, {STATEMENT_CHARS}) AS INFO, \
             ROUND(100 * s.WORK_COMPLETED / NULLIF(s.WORK_ESTIMATED, 0), 1) AS PROGRESS \
             FROM information_schema.PROCESSLIST p \
             LEFT JOIN performance_schema.threads t ON t.PROCESSLIST_ID = p.ID \
             LEFT JOIN performance_schema.events_stages_current s \
             ON s.THREAD_ID = t.THREAD_ID AND s.EVENT_NAME LIKE 'stage/innodb/alter%'"
        ),
    }
}

/// Statements that rebuild or lock a table for long: what makes replicas fall behind in a
/// maintenance window.
fn is_ddl(info: &str) -> bool {
    let mut text = info.trim_start();
    // Leading comments (`/* gh-ost */ ALTER ...`).
    while let Some(rest) = text.strip_prefix("/*") {
        text = rest
            .split_once("*/")
            .map_or("", |(_, after)| after)
            .trim_start();
    }
    let upper: String = text
        .chars()
        .take(40)
        .collect::<String>()
        .to_ascii_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["ALTER", "TABLE" | "ONLINE" | "IGNORE", ..]
            | ["OPTIMIZE" | "REPAIR" | "TRUNCATE" | "RENAME", ..]
            | ["CREATE" | "DROP", "INDEX", ..]
            | ["CREATE", "UNIQUE" | "FULLTEXT" | "SPATIAL", "INDEX", ..]
    )
}

/// The lock a thread's `STATE` says it waits for (`Waiting for table metadata lock` →
/// `table metadata lock`), as `MariaDB` and `MySQL` both name them; `None` for any other state.
fn lock_waited(state: &str) -> Option<String> {
    let lock = state.trim().strip_prefix("Waiting for ")?;
    lock.ends_with(" lock").then(|| lock.to_owned())
}

/// Replication plumbing and idle threads: not a client doing work.
fn is_idle_or_plumbing(command: &str, user: &str) -> bool {
    user == "system user"
        || matches!(
            command,
            "Sleep" | "Daemon" | "Binlog Dump" | "Binlog Dump GTID" | "Connect"
        )
}

/// `TIME`, NULL as 0. `MySQL` (not Percona Server) prints a negative time for an applier thread
/// whose event is stamped ahead of the replica's clock (the processlist subtracts the event's
/// timestamp from now); such a thread has just started, so it counts as 0, not as a bad scan.
fn seconds(row: &RawRow) -> Result<u64, StatusError> {
    let negative = row
        .optional_text(&["TIME"])
        .map(str::trim)
        .and_then(|t| t.strip_prefix('-'))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    if negative {
        return Ok(0);
    }
    Ok(row.optional_u64(&["TIME"])?.unwrap_or(0))
}

/// A percentage as the server reports it, kept within 0-100: `MySQL`'s completed work can pass
/// its revised estimate (over 100 %), and a NaN, an infinity or a negative value says nothing.
fn percent(text: &str) -> Option<f64> {
    let value = text.trim().parse::<f64>().ok()?;
    // `abs` turns a `-0` into 0, which would print as "-0 %".
    (value.is_finite() && value >= 0.0).then(|| value.min(100.0).abs())
}

impl Processlist {
    pub fn from_rows(rows: &[RawRow]) -> Result<Self, StatusError> {
        let mut out = Self::default();
        for row in rows {
            let info = row.optional_text(&["INFO"]).unwrap_or_default();
            if info.contains(MARKER) || info.contains(super::lock_holders::MARKER) {
                continue;
            }
            let user = row.string(&["USER"])?;
            let command = row.string(&["COMMAND"])?;
            let time = seconds(row)?;
            out.summary.threads += 1;
            if !is_idle_or_plumbing(&command, &user) {
                out.summary.active += 1;
                if command == "Query" {
                    out.summary.longest_query_s = out.summary.longest_query_s.max(time);
                }
            }
            if is_ddl(info) {
                out.ddl.push(DdlStatement {
                    id: row.u64(&["ID"])?,
                    statement: info.chars().take(STATEMENT_CHARS).collect(),
                    elapsed_s: time,
                    progress: row.optional_text(&["PROGRESS"]).and_then(percent),
                    applier: user == "system user",
                    waiting_for: row.optional_text(&["STATE"]).and_then(lock_waited),
                    blockers: None,
                });
            }
        }
        // The threads count includes rwtop's own scanning connection.
        out.summary.threads += 1;
        out.workers
            .extend(super::appliers::pool_from_processlist(rows));
        out.row_events = super::row_events::from_processlist(rows);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        id: &str,
        user: &str,
        command: &str,
        time: &str,
        info: Option<&str>,
        progress: Option<&str>,
    ) -> RawRow {
        RawRow::new(vec![
            ("ID".into(), Some(id.into())),
            ("USER".into(), Some(user.into())),
            ("COMMAND".into(), Some(command.into())),
            ("TIME".into(), Some(time.into())),
            ("INFO".into(), info.map(Into::into)),
            ("PROGRESS".into(), progress.map(Into::into)),
        ])
    }

    #[test]
    fn ddl_from_clients_and_from_the_applier_with_progress() {
        let rows = [
            row(
                "5",
                "app",
                "Query",
                "41",
                Some("/* gh-ost */ alter table big add column c int"),
                Some("37.500"),
            ),
            row(
                "6",
                "system user",
                "Slave_SQL",
                "12",
                Some("ALTER TABLE big ENGINE=InnoDB"),
                Some("0.000"),
            ),
            row("7", "app", "Query", "3", Some("SELECT * FROM big"), None),
            row("8", "app", "Sleep", "900", None, None),
            row(
                "9",
                "rwtop",
                "Query",
                "0",
                Some("SELECT /* rwtop processlist */ ID"),
                None,
            ),
        ];
        let list = Processlist::from_rows(&rows).unwrap();
        assert_eq!(list.ddl.len(), 2);
        assert_eq!(
            (
                list.ddl[0].elapsed_s,
                list.ddl[0].progress,
                list.ddl[0].applier
            ),
            (41, Some(37.5), false)
        );
        assert!(list.ddl[1].applier);
        assert_eq!(
            list.summary,
            ProcessSummary {
                threads: 5,
                active: 2,
                longest_query_s: 41
            }
        );
    }

    #[test]
    fn a_ddl_waiting_for_a_lock_names_the_lock() {
        let with_state = |id: &str, user: &str, state: &str, info: &str| {
            let mut row = row(id, user, "Query", "95", Some(info), Some("0.000"));
            row.push("STATE", Some(state.into()));
            row
        };
        let rows = [
            with_state(
                "5",
                "app",
                "Waiting for table metadata lock",
                "ALTER TABLE big ADD c INT",
            ),
            with_state(
                "6",
                "system user",
                "Waiting for backup lock",
                "CREATE INDEX i ON t (a)",
            ),
            with_state("7", "app", "copy to tmp table", "OPTIMIZE TABLE t"),
            // Not a DDL: queued behind the first, it is no schema change of its own.
            with_state(
                "8",
                "app",
                "Waiting for table metadata lock",
                "SELECT * FROM big",
            ),
            // A state that waits, but for no lock.
            with_state("9", "app", "Waiting for table flush", "RENAME TABLE a TO b"),
        ];
        let list = Processlist::from_rows(&rows).unwrap();
        let waits: Vec<Option<&str>> = list.ddl.iter().map(|d| d.waiting_for.as_deref()).collect();
        assert_eq!(
            waits,
            [Some("table metadata lock"), Some("backup lock"), None, None]
        );
        assert_eq!(
            lock_waited("  Waiting for global read lock "),
            Some("global read lock".into())
        );
        assert_eq!(lock_waited("Waiting for lock"), None);
    }

    #[test]
    fn only_schema_changes_count_as_ddl() {
        for yes in [
            "ALTER TABLE t ADD x INT",
            "create index i on t(x)",
            "CREATE UNIQUE INDEX u ON t(a)",
            "OPTIMIZE TABLE t",
            "TRUNCATE t",
            "RENAME TABLE a TO b",
            "alter online table t force",
        ] {
            assert!(is_ddl(yes), "{yes}");
        }
        for no in [
            "SELECT 1",
            "ALTER USER x",
            "CREATE TABLE t (a INT)",
            "INSERT INTO alter_log VALUES (1)",
            "",
            "/* unterminated",
        ] {
            assert!(!is_ddl(no), "{no}");
        }
    }
}
