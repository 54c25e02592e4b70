//! The prober's own position monitor, for the MaxScale fast modes' `monitor=INTERVAL`.
//!
//! MaxScale's mariadbmon reads every server's GTID position once per `monitor_interval`, and the
//! fast modes route on whatever it read last. To reproduce a given interval, the prober starts
//! a task per node that does the same on a connection of its own, and a route takes the newest
//! reading without asking for a fresher one: the position it routes on is at most one interval
//! (plus a query) old, and of a random phase against the write, as MaxScale's is. The readings
//! are monitor queries, not the probe's: they are not counted in its `queries`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::mysql::{Endpoint, GtidState, NodeConn, Timeouts};

/// One reading of a node's GTID state.
#[derive(Debug, Clone)]
pub(super) struct Reading {
    pub gtid: GtidState,
    pub at: Instant,
}

/// The running monitors, by node and interval; each stops when this is dropped.
#[derive(Default)]
pub(super) struct Monitors {
    running: HashMap<(String, Duration), Watch>,
}

struct Watch {
    latest: watch::Receiver<Option<Reading>>,
    task: JoinHandle<()>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Monitors {
    /// The newest reading of `node` by the monitor that reads it every `every`. The first call
    /// starts that monitor and waits (up to a connect and a query) for its first reading, as a
    /// proxy that has just started would; `None` when there is none yet.
    pub async fn latest(
        &mut self,
        node: &str,
        endpoint: Endpoint,
        every: Duration,
        timeouts: Timeouts,
    ) -> Option<Reading> {
        let key = (node.to_owned(), every);
        if self.running.get(&key).is_some_and(|w| w.task.is_finished()) {
            self.running.remove(&key);
        }
        let watch = self.running.entry(key).or_insert_with(|| {
            let (tx, latest) = watch::channel(None);
            let task = tokio::spawn(monitor(endpoint, timeouts, every, tx));
            Watch { latest, task }
        });
        if watch.latest.borrow().is_none() {
            let first = timeouts.connect + timeouts.query;
            let mut rx = watch.latest.clone();
            let _ = tokio::time::timeout(first, rx.wait_for(Option::is_some)).await;
        }
        watch.latest.borrow().clone()
    }
}

/// Reads the node's GTID state every `every` until the receiver is gone; a failed read keeps
/// the previous reading (a monitor that cannot reach a server has nothing newer either).
async fn monitor(
    endpoint: Endpoint,
    timeouts: Timeouts,
    every: Duration,
    tx: watch::Sender<Option<Reading>>,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut conn: Option<NodeConn> = None;
    loop {
        tick.tick().await;
        if tx.is_closed() {
            break;
        }
        if !conn.as_ref().is_some_and(NodeConn::is_open) {
            conn = NodeConn::connect(&endpoint, timeouts).await.ok();
        }
        let Some(c) = conn.as_mut() else { continue };
        if let Ok(state) = c.node_state().await {
            let _ = tx.send(Some(Reading {
                gtid: state.gtid,
                at: Instant::now(),
            }));
        }
    }
}
