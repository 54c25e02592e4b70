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
//! (`beat_gtid.rs`); the writer keeps its run's first GTID in the shared [`super::beat_gtid::Marks`].
//!
//! One connection's steps (open, lock, gate, write or watch, acknowledge) are `beat_write.rs`'s;
//! this file keeps the task that goes from connection to connection and follows a failover.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::backoff::backoff;
use super::beat_write::{RECHECK_EVERY, Served, Watch, serve};
pub use super::beat_write::{WriterSpec, heartbeat_read_sql};
use super::events::{PollEvent, WriterState};
use crate::mysql::{Endpoint, NodeConn};
use crate::topology::Topology;

/// Keeps a heartbeat written on the root `spec` names, from connection to connection: serves
/// each ([`serve`]), waits out a refusal or a failure's back-off, and moves to the node that
/// took over once the topology shows one.
pub async fn run<T: Topology>(
    mut spec: WriterSpec,
    events: mpsc::Sender<PollEvent>,
    mut snapshots: watch::Receiver<Arc<T>>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = events.send(spec.state(WriterState::Starting)).await;
    let mut failures = 0u32;
    let mut held_by = None;
    loop {
        let outcome = match NodeConn::connect(&spec.endpoint, spec.timeouts).await {
            Ok(conn) => {
                let watch = Watch {
                    events: &events,
                    stop: &mut stop,
                    snapshots: &snapshots,
                    held_by: &mut held_by,
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
