//! Parallel appliers (`docs/design.md`, "Parallel appliers and catch-up"; what the servers show:
//! `docs/server-facts.md`, "Parallel appliers"): what a replica's applier counters say per
//! channel, and how many of its workers were busy at one processlist scan.
//!
//! The counters come with the status poll (`MariaDB`'s SHOW ALL SLAVES STATUS has them per
//! connection); the worker count and mode with the settings (read at connect and every few
//! minutes); busy workers with the processlist scan, every few polls, so a busy count is a sample
//! and carries the instant it was taken.

use serde::{Deserialize, Serialize};

use super::flavor::{Family, Flavor};
use super::replica_status::StatusError;
use super::row::RawRow;

/// One channel's applier counters as the status row reports them; each is `None` where the
/// server has no such column (`MySQL`'s SHOW REPLICA STATUS has none of them).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ApplierCounters {
    /// `Parallel_Mode` (`optimistic`, `conservative`, ...): the connection's own mode.
    pub parallel_mode: Option<String>,
    /// `Retried_transactions`: transactions the appliers had to roll back and run again (a
    /// conflict between workers in optimistic mode, a deadlock, a lock wait timeout).
    pub retried_transactions: Option<u64>,
    /// `Slave_DDL_Groups`, `Slave_Transactional_Groups`, `Slave_Non_Transactional_Groups`: event
    /// groups applied since the replica started, by kind.
    pub ddl_groups: Option<u64>,
    pub transactional_groups: Option<u64>,
    pub non_transactional_groups: Option<u64>,
}

impl ApplierCounters {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            parallel_mode: row
                .optional_text(&["Parallel_Mode"])
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
            retried_transactions: row.optional_u64(&["Retried_transactions"])?,
            ddl_groups: row.optional_u64(&["Replica_DDL_Groups", "Slave_DDL_Groups"])?,
            transactional_groups: row
                .optional_u64(&["Replica_Transactional_Groups", "Slave_Transactional_Groups"])?,
            non_transactional_groups: row.optional_u64(&[
                "Replica_Non_Transactional_Groups",
                "Slave_Non_Transactional_Groups",
            ])?,
        })
    }
}

/// The workers of one scan: how many there are, how many hold a transaction, and how many of
/// those wait for an earlier one to commit first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorkerSample {
    /// The channel they serve (`MySQL`'s worker table names it); `None`: the node's one pool,
    /// which `MariaDB` shares among all its connections.
    pub channel: Option<String>,
    pub workers: u32,
    /// Workers holding a transaction, commit-order waiters included.
    pub busy: u32,
    /// Workers whose transaction waits for an earlier one to commit (the commit order kept);
    /// `None` where the scan cannot tell.
    pub commit_order_waits: Option<u32>,
}

/// A `MariaDB` worker with nothing to do; `MySQL`'s says "Waiting for an event from Coordinator".
const IDLE_STATES: [&str; 2] = [
    "Waiting for work from SQL thread",
    "Waiting for an event from Coordinator",
];

/// `MariaDB`: "Waiting for prior transaction to commit" (and "... to start commit before starting
/// next transaction"); `MySQL`: "Waiting for preceding transaction to commit".
fn is_commit_order_wait(state: &str) -> bool {
    state.starts_with("Waiting for prior transaction")
        || state.starts_with("Waiting for preceding transaction")
}

fn is_idle(state: Option<&str>) -> bool {
    let state = state.map(str::trim).unwrap_or_default();
    state.is_empty() || IDLE_STATES.contains(&state)
}

/// A `MariaDB` worker whose transaction conflicted with an earlier one's (optimistic mode) is
/// killed to be rolled back and retried: for that moment its `COMMAND` reads `Killed`, its state
/// the step it was at or a wait for the prior commit. It is one of the pool's workers all the
/// same, and busy. Counted only beside `Slave_worker` rows: a serial replica's SQL thread killed
/// by `STOP SLAVE` is no worker (a parallel one's, for the moment of its stop, would count).
fn is_retried_worker(row: &RawRow) -> bool {
    row.optional_text(&["COMMAND"]) == Some("Killed")
        && row.optional_text(&["USER"]) == Some("system user")
}

/// `MariaDB`'s worker pool from the rows of one processlist scan (`COMMAND = 'Slave_worker'`,
/// with `STATE`, and a worker being retried); `None` when the scan shows no worker (parallel
/// replication off).
#[must_use]
pub fn pool_from_processlist(rows: &[RawRow]) -> Option<WorkerSample> {
    let mut pool = WorkerSample {
        commit_order_waits: Some(0),
        ..WorkerSample::default()
    };
    let mut parallel = false;
    for row in rows {
        let worker = row.optional_text(&["COMMAND"]) == Some("Slave_worker");
        if !worker && !is_retried_worker(row) {
            continue;
        }
        parallel |= worker;
        let state = row.optional_text(&["STATE"]);
        pool.workers += 1;
        if worker && is_idle(state) {
            continue;
        }
        pool.busy += 1;
        if state.is_some_and(is_commit_order_wait) {
            pool.commit_order_waits = pool.commit_order_waits.map(|n| n + 1);
        }
    }
    parallel.then_some(pool)
}

/// `MySQL` 8.0+: the worker table, with each worker thread's processlist state beside it (for
/// the commit-order wait, which the table does not report). `performance_schema` is in memory:
/// one row per worker, cheap next to the processlist scan it goes with. `MariaDB`'s table has no
/// applying transaction and is off by default, so its workers come from the processlist.
#[must_use]
pub fn workers_sql(flavor: &Flavor) -> Option<&'static str> {
    match flavor.family {
        Family::Mysql if flavor.version.at_least(8, 0, 2) => Some(
            "SELECT w.CHANNEL_NAME, w.WORKER_ID, w.SERVICE_STATE, w.APPLYING_TRANSACTION, \
             t.PROCESSLIST_STATE \
             FROM performance_schema.replication_applier_status_by_worker w \
             LEFT JOIN performance_schema.threads t ON t.THREAD_ID = w.THREAD_ID",
        ),
        _ => None,
    }
}

/// The rows of [`workers_sql`], one sample per channel in the order first seen. A worker is
/// busy while its service runs and it names a transaction it is applying.
pub fn workers_from_table(rows: &[RawRow]) -> Result<Vec<WorkerSample>, StatusError> {
    let mut out: Vec<WorkerSample> = Vec::new();
    for row in rows {
        let channel = row.string(&["CHANNEL_NAME"])?;
        let running = row.optional_text(&["SERVICE_STATE"]) == Some("ON");
        let applying = row
            .optional_text(&["APPLYING_TRANSACTION"])
            .is_some_and(|gtid| !gtid.trim().is_empty());
        let waits = row
            .optional_text(&["PROCESSLIST_STATE"])
            .is_some_and(is_commit_order_wait);
        let known = out
            .iter()
            .position(|s| s.channel.as_deref() == Some(&channel));
        let i = known.unwrap_or_else(|| {
            out.push(WorkerSample {
                channel: Some(channel),
                commit_order_waits: Some(0),
                ..WorkerSample::default()
            });
            out.len() - 1
        });
        let sample = &mut out[i];
        sample.workers += 1;
        if running && applying {
            sample.busy += 1;
            if waits {
                sample.commit_order_waits = sample.commit_order_waits.map(|n| n + 1);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[(&str, Option<&str>)]) -> RawRow {
        RawRow::of(cells)
    }

    fn thread(command: &str, state: Option<&str>) -> RawRow {
        row(&[
            ("ID", Some("7")),
            ("USER", Some("system user")),
            ("COMMAND", Some(command)),
            ("STATE", state),
        ])
    }

    #[test]
    fn mariadb_workers_idle_busy_and_waiting_on_commit_order() {
        let rows = [
            thread("Slave_IO", Some("Waiting for master to send event")),
            thread(
                "Slave_SQL",
                Some("Slave has read all relay log; waiting for more updates"),
            ),
            thread("Slave_worker", Some("Waiting for work from SQL thread")),
            thread(
                "Slave_worker",
                Some("Waiting for prior transaction to commit"),
            ),
            thread("Slave_worker", Some("Update_rows_log_event::find_row(-1)")),
            thread("Slave_worker", None),
            row(&[("COMMAND", Some("Query")), ("STATE", Some("Sending data"))]),
        ];
        let pool = pool_from_processlist(&rows).unwrap();
        assert_eq!(
            pool,
            WorkerSample {
                channel: None,
                workers: 4,
                busy: 2,
                commit_order_waits: Some(1),
            }
        );
        // Parallel replication off: the SQL thread alone, no sample at all rather than "0 busy".
        assert_eq!(pool_from_processlist(&rows[..2]), None);
    }

    #[test]
    fn a_mariadb_worker_killed_for_its_retry_is_still_a_busy_worker() {
        let rows = [
            thread("Slave_worker", Some("Waiting for work from SQL thread")),
            thread("Slave_worker", Some("Update_rows_log_event::find_row()")),
            thread("Killed", Some("Rollback")),
            thread("Killed", Some("Waiting for prior transaction to commit")),
            // A client's killed statement is no worker.
            row(&[
                ("USER", Some("app")),
                ("COMMAND", Some("Killed")),
                ("STATE", Some("Sending data")),
            ]),
        ];
        let pool = pool_from_processlist(&rows).unwrap();
        let counts = (pool.workers, pool.busy, pool.commit_order_waits);
        assert_eq!(counts, (4, 3, Some(1)), "{pool:?}");
        // Without a worker row, no pool: a serial replica's SQL thread being stopped is none.
        assert_eq!(pool_from_processlist(&rows[2..3]), None);
    }

    #[test]
    fn status_counters_are_typed_and_null_stays_none() {
        let r = row(&[
            ("Parallel_Mode", Some("optimistic")),
            ("Retried_transactions", Some("3")),
            ("Slave_DDL_Groups", Some("12")),
            ("Slave_Transactional_Groups", Some("1204")),
            ("Slave_Non_Transactional_Groups", None),
        ]);
        let c = ApplierCounters::from_row(&r).unwrap();
        assert_eq!(c.parallel_mode.as_deref(), Some("optimistic"));
        assert_eq!(
            (c.retried_transactions, c.ddl_groups, c.transactional_groups),
            (Some(3), Some(12), Some(1204))
        );
        assert_eq!(c.non_transactional_groups, None);
        let bad = row(&[("Retried_transactions", Some("many"))]);
        let err = ApplierCounters::from_row(&bad).unwrap_err().to_string();
        assert!(err.contains("Retried_transactions"), "{err}");
        // A status without the columns (MySQL) reads as nothing known.
        let none = ApplierCounters::from_row(&row(&[])).unwrap();
        assert_eq!(none, ApplierCounters::default());
    }
}
