//! The heartbeat writer: a row in `rwtop.heartbeat` on the primary, its sequence number bumped
//! every `interval`, and the local monotonic instant each bump was acknowledged sent to the store.
//!
//! Lag is then `now − ack(N+1)` for a replica that shows N (`docs/design.md`, "Lag from the
//! heartbeat"): no clock agreement between servers is needed. The row is keyed by a stable
//! writer id so rows do not pile up across runs, and a named lock makes a second rwtop on the
//! same primary watch the row instead of writing it twice.
//!
//! Before its first write on a connection the writer reads the root's `rwtop.heartbeat`
//! (`mysql::own_tables`): it creates the table with every property spelled out when it is
//! missing, and writes nothing on a root whose copy is not rwtop's definition.
//!
//! The writer never writes to a node with `read_only=ON`: it checks before every write, since a
//! switchover turns the primary read-only under a live connection and an account with SUPER or
//! `READ_ONLY ADMIN` would still be let through by the server. (A check and a write are two
//! statements: a `read_only` set between them lets at most that one write through, and only for
//! such an account. A write conditional on `@@global.read_only` inside the statement would close
//! that gap but replicates wrongly in statement-based binlogs, where each replica would evaluate
//! its own `read_only=ON` and never apply the heartbeat.)
//!
//! After a failover the writer refuses (the old primary read-only) or fails (gone), and then
//! moves to the promoted node once the topology shows one beyond doubt
//! ([`Topology::successor_of`]); until then the heartbeat goes stale and lag that rests on it
//! reads unknown. It never leaves a primary that answers and is writable.
//!
//! On `MariaDB` each write asks `@@last_gtid` in the same round trip, so each acknowledgement
//! carries the heartbeat's GTID and replicas can be read by their applied position
//! (`beat_gtid.rs`); the writer keeps its run's first GTID in the shared [`Marks`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::beat_gtid::{Marks, Run};
use super::events::{PollEvent, WriterState};
use super::node_poller::backoff;
use crate::gtid::DomainGtid;
use crate::mysql::{Endpoint, NodeConn, SqlError, Timeouts, literal, own_tables};
use crate::topology::{TableGate, Topology};

/// How often an observer tries to take the lock over from a writer that may have gone away,
/// and a refused writer re-checks `read_only` (a failover can make the node writable).
const RECHECK_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct WriterSpec {
    /// The node written to: the configured primary, then whichever took over from it.
    pub node: String,
    pub endpoint: Endpoint,
    /// Configured nodes the writer may move to; discovered ones get the primary's credentials.
    pub others: BTreeMap<String, Endpoint>,
    pub timeouts: Timeouts,
    pub interval: Duration,
    pub writer_id: String,
    /// This writer's place among the engine's writers (one per root): its events carry it.
    pub index: usize,
    /// Where it keeps its run's first GTID for the pollers.
    pub marks: Arc<Marks>,
}

/// Reads the rows of `writer_ids` (one per root), each with its writer's id.
impl WriterSpec {
    fn state(&self, state: WriterState) -> PollEvent {
        PollEvent::Writer {
            writer: self.index,
            state,
        }
    }
}

#[must_use]
pub fn heartbeat_read_sql(writer_ids: &[String]) -> String {
    // The row's age by the reading server's clock: an upper bound on lag when the ack history
    // cannot tell (UTC on both sides, so server time zones do not matter).
    let ids: Vec<String> = writer_ids.iter().map(|id| literal(id)).collect();
    let filter = match ids.as_slice() {
        [one] => format!("= {one}"),
        many => format!("IN ({})", many.join(", ")),
    };
    format!(
        "SELECT writer_id, seq, TIMESTAMPDIFF(MICROSECOND, ts, UTC_TIMESTAMP(6)) AS age_us \
         FROM rwtop.heartbeat WHERE writer_id {filter}"
    )
}

fn lock_sql(writer_id: &str) -> String {
    format!(
        "SELECT GET_LOCK({}, 0) AS got",
        literal(&format!("rwtop-hb-{writer_id}"))
    )
}

/// `ER_OPTION_PREVENTS_STATEMENT`: the server refused a write because of `read_only` (or
/// `super_read_only`).
const READ_ONLY_ERROR: u16 = 1290;

/// Says why nothing is written and closes the connection; the caller re-checks later.
async fn refuse(spec: &WriterSpec, conn: NodeConn, events: &mpsc::Sender<PollEvent>) -> Served {
    let reason = format!(
        "{} has read_only=ON: rwtop writes its heartbeat only to a writable primary",
        spec.endpoint.address()
    );
    let _ = events
        .send(spec.state(WriterState::Refused { reason }))
        .await;
    conn.close().await;
    Served::Refused
}

/// Look before writing: a copy of the table that is not rwtop's would send row images a replica
/// below may not be able to apply. Says what differs, closes the connection; the caller looks
/// again later.
async fn refuse_table(
    spec: &WriterSpec,
    conn: NodeConn,
    events: &mpsc::Sender<PollEvent>,
    mismatch: own_tables::Mismatch,
) -> Served {
    let _ = events
        .send(spec.state(WriterState::Unsafe { mismatch }))
        .await;
    conn.close().await;
    Served::Refused
}

fn write_sql(writer_id: &str, seq: u64) -> String {
    format!(
        "INSERT INTO rwtop.heartbeat (writer_id, seq, ts) VALUES ({}, {seq}, UTC_TIMESTAMP(6)) \
         ON DUPLICATE KEY UPDATE seq = VALUES(seq), ts = VALUES(ts)",
        literal(writer_id)
    )
}

pub async fn run<T: Topology>(
    mut spec: WriterSpec,
    events: mpsc::Sender<PollEvent>,
    mut snapshots: watch::Receiver<Arc<T>>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = events.send(spec.state(WriterState::Starting)).await;
    let mut failures = 0u32;
    loop {
        let outcome = match NodeConn::connect(&spec.endpoint, spec.timeouts).await {
            Ok(conn) => {
                let watch = Watch {
                    events: &events,
                    stop: &mut stop,
                    snapshots: &snapshots,
                };
                serve(&spec, conn, watch, &mut failures).await
            }
            Err(err) => Err(err),
        };
        let wait = match outcome {
            Ok(Served::Stopped) => return,
            Ok(Served::Refused) => RECHECK_EVERY,
            Err(err) => {
                failures = failures.saturating_add(1);
                let cause = err.to_string();
                if events
                    .send(spec.state(WriterState::Failing { cause }))
                    .await
                    .is_err()
                {
                    return;
                }
                backoff(failures)
            }
        };
        // The node refused or failed: wait for the retry, or for the topology to show who took
        // over from it.
        let retry = tokio::time::sleep(wait);
        tokio::pin!(retry);
        loop {
            let next = successor(&spec, snapshots.borrow_and_update().as_ref());
            if let Some((node, endpoint)) = next {
                spec.others.remove(&node);
                let old_node = std::mem::replace(&mut spec.node, node.clone());
                let old_endpoint = std::mem::replace(&mut spec.endpoint, endpoint);
                spec.others.insert(old_node, old_endpoint);
                failures = 0;
                if events
                    .send(PollEvent::WriterMoved {
                        writer: spec.index,
                        to: node,
                    })
                    .await
                    .is_err()
                {
                    return;
                }
                break;
            }
            tokio::select! {
                () = &mut retry => break,
                changed = snapshots.changed() => if changed.is_err() { return },
                _ = stop.changed() => return,
            }
        }
    }
}

/// The node that took over from the writer's and its endpoint, when the snapshot shows one.
fn successor(spec: &WriterSpec, view: &dyn Topology) -> Option<(String, Endpoint)> {
    let next = view.successor_of(&spec.node)?;
    let endpoint = match spec.others.get(next.name) {
        Some(endpoint) => endpoint.clone(),
        None => spec.endpoint.at(next.address)?,
    };
    Some((next.name.to_owned(), endpoint))
}

enum Served {
    Stopped,
    Refused,
}

/// What a serving writer listens to and reports to.
struct Watch<'a, T> {
    events: &'a mpsc::Sender<PollEvent>,
    stop: &'a mut watch::Receiver<bool>,
    snapshots: &'a watch::Receiver<Arc<T>>,
}

/// How long the first write waits for every node that answers to have had its copy of the
/// table read (`Topology::own_table_gate`); a node slower than this is not waited for.
const FIRST_WRITE_WAITS_AT_MOST: Duration = Duration::from_secs(10);

/// Whether this tick may write: the nodes below the root hold copies that take rwtop's rows.
/// A change of answer is reported as the writer's state.
fn gate<T: Topology>(
    spec: &WriterSpec,
    watch: &Watch<'_, T>,
    since: Instant,
    blocked: &mut Option<String>,
) -> bool {
    let table = own_tables::HEARTBEAT.qualified();
    let answer = watch.snapshots.borrow().own_table_gate(&spec.node, &table);
    let reason = match answer {
        TableGate::Wait if since.elapsed() < FIRST_WRITE_WAITS_AT_MOST => return false,
        TableGate::Open | TableGate::Wait => None,
        TableGate::Unsafe(why) => Some(format!(
            "{why}: its channel would stop, so rwtop writes no heartbeat on {} until that copy \
             is fixed (rwtop lint: own_table)",
            spec.node
        )),
    };
    if *blocked != reason {
        let state = match &reason {
            Some(reason) => WriterState::Refused {
                reason: reason.clone(),
            },
            None => WriterState::Writing,
        };
        let _ = watch.events.try_send(spec.state(state));
        blocked.clone_from(&reason);
    }
    reason.is_none()
}

async fn serve<T: Topology>(
    spec: &WriterSpec,
    mut conn: NodeConn,
    watch: Watch<'_, T>,
    failures: &mut u32,
) -> Result<Served, SqlError> {
    let events = watch.events;
    // A new connection starts a new run, and until it writes no position can be read by it.
    spec.marks.set(spec.index, None);
    if conn.is_read_only().await? {
        return Ok(refuse(spec, conn, events).await);
    }
    if let Some(mismatch) = own_tables::ensure(&mut conn, &own_tables::HEARTBEAT).await? {
        return Ok(refuse_table(spec, conn, events, mismatch).await);
    }
    // Each write's GTID, where the flavor tells a session its own (`Flavor::own_last_gtid_sql`).
    let asks_gtid = conn.flavor().own_last_gtid_sql();
    let mut run = Run::after(match asks_gtid {
        Some(sql) => last_gtid(&conn.query_rows(sql).await?),
        None => None,
    });
    let mut last_seen = conn
        .query_rows(&heartbeat_read_sql(std::slice::from_ref(&spec.writer_id)))
        .await?
        .first()
        .and_then(|r| r.optional_u64(&["seq"]).ok().flatten());
    let mut writing = false;
    let since = Instant::now();
    let mut blocked: Option<String> = None;
    let mut last_lock_try: Option<Instant> = None;
    let mut ticker = tokio::time::interval(spec.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = watch.stop.changed() => {
                conn.close().await;
                return Ok(Served::Stopped);
            }
        }
        if !writing && last_lock_try.is_none_or(|t| t.elapsed() >= RECHECK_EVERY) {
            last_lock_try = Some(Instant::now());
            let got = conn.query_rows(&lock_sql(&spec.writer_id)).await?;
            writing = got
                .first()
                .and_then(|r| r.optional_u64(&["got"]).ok().flatten())
                == Some(1);
            let state = if writing {
                WriterState::Writing
            } else {
                WriterState::Observing
            };
            let _ = events.send(spec.state(state)).await;
        }
        let acked = if writing {
            if !gate(spec, &watch, since, &mut blocked) {
                continue;
            }
            if conn.is_read_only().await? {
                return Ok(refuse(spec, conn, events).await);
            }
            let seq = last_seen.unwrap_or(0) + 1;
            match write(&mut conn, &spec.writer_id, seq, asks_gtid).await {
                Ok(gtid) => Some((seq, gtid)),
                // Turned read-only between the check and the write.
                Err(SqlError::Server {
                    code: READ_ONLY_ERROR,
                    ..
                }) => return Ok(refuse(spec, conn, events).await),
                Err(err) => return Err(err),
            }
        } else {
            // Observing: the instant a new sequence number is first seen bounds its commit
            // time from above by one interval.
            let rows = conn
                .query_rows(&heartbeat_read_sql(std::slice::from_ref(&spec.writer_id)))
                .await?;
            let seq = rows
                .first()
                .and_then(|r| r.optional_u64(&["seq"]).ok().flatten());
            (seq != last_seen)
                .then_some(seq)
                .flatten()
                .map(|seq| (seq, None))
        };
        if let Some((seq, answer)) = acked {
            last_seen = Some(seq);
            *failures = 0;
            let at = Instant::now();
            let writer = spec.index;
            let (gtid, mark) = run.next(answer);
            if events
                .send(PollEvent::Ack {
                    writer,
                    seq,
                    at,
                    gtid,
                })
                .await
                .is_err()
            {
                return Ok(Served::Stopped);
            }
            // Published after the ack is queued: a poller that reads by it sends its reading
            // after the store has the ack.
            spec.marks
                .acknowledged(writer, mark, gtid.map(|gtid| (gtid, at)));
        }
    }
}

/// Writes heartbeat `seq`; with `asks_gtid` (the flavor's own-GTID statement), reads the
/// session's last GTID in the same round trip ([`Run::next`] tells whether the write got it).
async fn write(
    conn: &mut NodeConn,
    writer_id: &str,
    seq: u64,
    asks_gtid: Option<&str>,
) -> Result<Option<DomainGtid>, SqlError> {
    let write = write_sql(writer_id, seq);
    let Some(ask) = asks_gtid else {
        conn.query_rows(&write).await?;
        return Ok(None);
    };
    let sets = conn.query_sets(&[&write, ask]).await?;
    Ok(sets.get(1).and_then(|rows| last_gtid(rows)))
}

/// The GTID in the rows of `Flavor::own_last_gtid_sql`; `None` when empty (nothing
/// binary-logged yet).
fn last_gtid(rows: &[crate::mysql::RawRow]) -> Option<DomainGtid> {
    rows.first()
        .and_then(|row| row.optional_text(&["last_gtid"]))
        .and_then(|text| DomainGtid::parse(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_ids_are_quoted_not_trusted() {
        assert_eq!(
            heartbeat_read_sql(&["a'b\\c".to_owned()]),
            "SELECT writer_id, seq, TIMESTAMPDIFF(MICROSECOND, ts, UTC_TIMESTAMP(6)) AS age_us \
             FROM rwtop.heartbeat WHERE writer_id = 'a''b\\\\c'"
        );
        assert!(
            heartbeat_read_sql(&["p1".to_owned(), "p2".to_owned()])
                .ends_with("WHERE writer_id IN ('p1', 'p2')")
        );
    }
}
