//! The store's task: events in from every task, alerts judged on each snapshot, snapshots out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use crate::alerts::AlertEngine;
use crate::drain::DrainEvent;
use crate::poll::PollEvent;
use crate::probe::ProbeEvent;
use crate::store::{Discovered, Event, Snapshot, Store};

/// How often a changed store publishes a snapshot: fast enough for a live display, rare enough
/// that a thousand nodes cost little.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(250);

/// The channels events arrive on, one per kind of task.
pub struct Inbox {
    pub poll: mpsc::Receiver<PollEvent>,
    pub probe: mpsc::Receiver<ProbeEvent>,
    pub drain: mpsc::Receiver<DrainEvent>,
}

/// Applies events as they come, publishes on a timer when something changed (with the alerts
/// judged on that very snapshot, so every output shows the same alerts), and hands discovered
/// nodes to whoever spawns pollers.
pub async fn run(
    mut store: Store,
    mut alerts: AlertEngine,
    mut inbox: Inbox,
    snapshots: watch::Sender<Arc<Snapshot>>,
    discovered: mpsc::UnboundedSender<Discovered>,
    mut stop: watch::Receiver<bool>,
) {
    let mut publish = tokio::time::interval(PUBLISH_EVERY);
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
                    snapshots.send_replace(Arc::new(snapshot));
                    dirty = false;
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
