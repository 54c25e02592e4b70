//! The store's task: events in from every task, alerts judged on each snapshot, snapshots out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use crate::alerts::{AlertEngine, AlertKind};
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

/// Publication: the snapshot with its alerts judged, out to every watcher and the pollers.
struct Publisher {
    alerts: AlertEngine,
    snapshots: watch::Sender<Arc<Snapshot>>,
    feeds: Arc<Feeds>,
    /// Something changed since the last snapshot.
    dirty: bool,
    published: tokio::time::Instant,
    /// Where the current period of the regular cadence began: the last publication, however it
    /// came (so news is never followed a moment later by a tick), or the last tick that found
    /// nothing changed.
    period_from: tokio::time::Instant,
    /// News that came too soon after a publication: published as soon as the gap allows.
    news_due: Option<tokio::time::Instant>,
}

impl Publisher {
    fn publish(&mut self, store: &Store) {
        let mut snapshot = store.snapshot(Instant::now());
        snapshot.alerts = self.alerts.evaluate(&snapshot);
        snapshot.exposure = crate::alerts::exposure::judge(&snapshot);
        self.feeds.set(snapshot.sources());
        self.snapshots.send_replace(Arc::new(snapshot));
        self.published = tokio::time::Instant::now();
        self.period_from = self.published;
        self.news_due = None;
        self.dirty = false;
    }

    /// When the next publication is due at a cadence of `every`: the news waiting for its gap,
    /// or the end of the period.
    fn due(&self, every: Duration) -> tokio::time::Instant {
        self.news_due.unwrap_or(self.period_from + every)
    }

    /// At the due time: publishes what changed, or starts the next period with nothing to show.
    fn on_due(&mut self, store: &Store) {
        if self.dirty {
            self.publish(store);
        } else {
            self.period_from = tokio::time::Instant::now();
        }
    }

    /// Whether the last snapshot already carries a stalled-link alert on `node`.
    fn stall_raised(&self, node: &str) -> bool {
        let snapshot = self.snapshots.borrow();
        snapshot
            .alerts
            .active
            .iter()
            .any(|a| a.kind == AlertKind::SbmUnderstatesLag && a.node.as_deref() == Some(node))
    }

    /// A stated fault is shown at once, however slow the cadence, but no more often than a
    /// small topology's: a server behind many names sends its news from each of them.
    fn news(&mut self, store: &Store) {
        let gap_ends = self.published + PUBLISH_EVERY;
        if tokio::time::Instant::now() >= gap_ends {
            self.publish(store);
        } else {
            self.news_due = Some(gap_ends);
        }
    }
}

/// Applies events as they come; publishes on a timer when something changed, and at once for
/// news (`store/news.rs`), with the alerts judged on that very snapshot so every output shows
/// the same alerts; tells the pollers which nodes feed a watched replica; and hands discovered
/// nodes to whoever spawns pollers.
pub async fn run(
    mut store: Store,
    alerts: AlertEngine,
    mut inbox: Inbox,
    outbox: Outbox,
    mut stop: watch::Receiver<bool>,
) {
    let Outbox {
        snapshots,
        discovered,
        feeds,
    } = outbox;
    let now = tokio::time::Instant::now();
    let mut out = Publisher {
        alerts,
        snapshots,
        feeds,
        dirty: true,
        published: now,
        // The first publication at once.
        period_from: now
            .checked_sub(publish_every(store.node_count()))
            .unwrap_or(now),
        news_due: None,
    };
    // One timer, moved only when the due time moves (not once per event).
    let timer = tokio::time::sleep_until(out.due(publish_every(store.node_count())));
    tokio::pin!(timer);
    loop {
        // Discovery adds nodes as it goes: the cadence follows the count.
        let due = out.due(publish_every(store.node_count()));
        if timer.deadline() != due {
            timer.as_mut().reset(due);
        }
        let event: Event = tokio::select! {
            biased;
            _ = stop.changed() => return,
            // Before events, so a flood of events cannot starve publication.
            () = &mut timer => {
                out.on_due(&store);
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
        let news = store.is_news(&event);
        for node in store.apply(event) {
            let _ = discovered.send(node);
        }
        out.dirty = true;
        // A stalling link is news until its alert is out (`store/news.rs`).
        let stalling = store.take_stalling();
        if news || stalling.is_some_and(|node| !out.stall_raised(&node)) {
            out.news(&store);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Inbox, Outbox, publish_every, run};
    use crate::alerts::{AlertEngine, AlertSettings};
    use crate::poll::{ConnState, Feeds, PollEvent};
    use crate::store::testkit::{local_endpoint, replica_sample, running_status, store_settings};
    use crate::store::{Role, Store};
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::sync::{mpsc, watch};

    /// 1,000 nodes publish once a second; a thread that stops is published within the quarter
    /// second after the last snapshot, not at the next tick.
    #[tokio::test(start_paused = true)]
    async fn news_is_published_before_the_next_tick() {
        let nodes: Vec<_> = (0..1_000_u16)
            .map(|i| (format!("r{i}"), local_endpoint(20_000 + i), Role::Replica))
            .collect();
        let store = Store::new(store_settings(), &nodes);
        let (poll_tx, poll) = mpsc::channel(16);
        let (_probe_tx, probe) = mpsc::channel(1);
        let (_drain_tx, drain) = mpsc::channel(1);
        let (snapshots, mut published) =
            watch::channel(Arc::new(store.snapshot(std::time::Instant::now())));
        let (discovered, _found) = mpsc::unbounded_channel();
        let (_stop_tx, stop) = watch::channel(false);
        let inbox = Inbox { poll, probe, drain };
        let outbox = Outbox {
            snapshots,
            discovered,
            feeds: Feeds::new(),
        };
        let task = tokio::spawn(run(
            store,
            AlertEngine::new(AlertSettings::default()),
            inbox,
            outbox,
            stop,
        ));
        let sample = |sql_running: bool| {
            let mut status = running_status("", 3306);
            status.sql_running = sql_running;
            PollEvent::Sample {
                node: "r7".to_owned(),
                sample: Box::new(replica_sample(std::time::Instant::now(), vec![status])),
            }
        };
        let send = |event| {
            let poll_tx = poll_tx.clone();
            async move { poll_tx.send(event).await.expect("the store task") }
        };
        send(PollEvent::Conn {
            node: "r7".to_owned(),
            state: ConnState::Up,
        })
        .await;
        send(sample(true)).await;
        // The first tick publishes at once; the next is a second later.
        published.changed().await.expect("first snapshot");
        let start = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(100)).await;
        send(sample(true)).await;
        send(sample(false)).await;
        published.changed().await.expect("the news");
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(250) && took < Duration::from_millis(300),
            "{took:?}"
        );
        let shown = published
            .borrow()
            .node("r7")
            .and_then(|n| n.channel(""))
            .map(|r| r.sql_running);
        assert_eq!(shown, Some(false));
        // Nothing new: the next comes at the tick, a whole period after the news (the tick
        // due at 1 s would have published twice within a quarter second of it at 250 nodes).
        send(sample(false)).await;
        published.changed().await.expect("the tick");
        assert!(
            start.elapsed() >= Duration::from_millis(1_250),
            "{:?}",
            start.elapsed()
        );
        task.abort();
    }

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
