//! The store's task: events in from every task, alerts judged on each snapshot, snapshots out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use crate::alerts::AlertEngine;
use crate::drain::DrainEvent;
use crate::poll::{Feeds, PollEvent};
use crate::probe::ProbeEvent;
use crate::store::{Discovered, Event, Snapshot, Store};
use crate::topology::Topology as _;

/// How often a changed store publishes a snapshot in a small topology: fast enough for a live
/// display.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(250);

/// The slowest publication, for the largest topologies: one snapshot per status poll.
const PUBLISH_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// A snapshot rebuilds every node's view, so past 250 nodes the store publishes about a
/// thousand node views a second rather than four snapshots: every 250 ms up to 250 nodes, then
/// 1 ms per node up to once a second at 1,000 nodes (measured in commit `488a4cb`,
/// docs/benchmarks.md's history). A thousand nodes are polled once a second and their heartbeats
/// read about as often (the read budget), so a faster snapshot would mostly repeat the last one.
#[must_use]
pub fn publish_every(nodes: usize) -> Duration {
    let per_node = Duration::from_millis(u64::try_from(nodes).unwrap_or(u64::MAX));
    per_node.clamp(PUBLISH_EVERY, PUBLISH_AT_MOST_EVERY)
}

/// The channels events arrive on, one per kind of task.
pub struct Inbox {
    pub poll: mpsc::Receiver<PollEvent>,
    pub probe: mpsc::Receiver<ProbeEvent>,
    pub drain: mpsc::Receiver<DrainEvent>,
}

/// Where the store's task hands what it made.
pub struct Outbox {
    pub snapshots: watch::Sender<Arc<Snapshot>>,
    /// Nodes discovered, for whoever spawns pollers.
    pub discovered: mpsc::UnboundedSender<Discovered>,
    /// Each published snapshot's sources, for the pollers (`poll/feeds.rs`).
    pub feeds: Arc<Feeds>,
}

/// Applies events as they come, publishes on a timer when something changed (with the alerts
/// judged on that very snapshot, so every output shows the same alerts), tells the pollers
/// which nodes feed a watched replica, and hands discovered nodes to whoever spawns pollers.
pub async fn run(
    mut store: Store,
    mut alerts: AlertEngine,
    mut inbox: Inbox,
    outbox: Outbox,
    mut stop: watch::Receiver<bool>,
) {
    let Outbox {
        snapshots,
        discovered,
        feeds,
    } = outbox;
    let mut every = publish_every(store.node_count());
    let mut publish = tokio::time::interval(every);
    publish.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut dirty = true;
    loop {
        let event: Event = tokio::select! {
            biased;
            _ = stop.changed() => return,
            // Before events, so a flood of events cannot starve publication.
            _ = publish.tick() => {
                if dirty {
                    let mut snapshot = store.snapshot(Instant::now());
                    snapshot.alerts = alerts.evaluate(&snapshot);
                    snapshot.exposure = crate::alerts::exposure::judge(&snapshot);
                    feeds.set(snapshot.sources());
                    snapshots.send_replace(Arc::new(snapshot));
                    dirty = false;
                }
                // Discovery adds nodes as it goes: the cadence follows the count.
                let now_every = publish_every(store.node_count());
                if now_every != every {
                    every = now_every;
                    publish = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                    publish.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                }
                continue;
            }
            Some(event) = inbox.probe.recv() => event.into(),
            Some(event) = inbox.drain.recv() => event.into(),
            event = inbox.poll.recv() => match event {
                Some(event) => event.into(),
                // Every poller and the engine are gone.
                None => return,
            },
        };
        for node in store.apply(event) {
            let _ = discovered.send(node);
        }
        dirty = true;
    }
}

#[cfg(test)]
mod tests {
    use super::publish_every;
    use std::time::Duration;

    #[test]
    fn publication_slows_with_the_node_count_between_a_quarter_second_and_a_second() {
        let ms = Duration::from_millis;
        assert_eq!(publish_every(0), ms(250));
        assert_eq!(publish_every(3), ms(250));
        assert_eq!(publish_every(250), ms(250));
        assert_eq!(publish_every(500), ms(500));
        assert_eq!(publish_every(1_000), ms(1_000));
        assert_eq!(publish_every(100_000), ms(1_000));
    }
}
