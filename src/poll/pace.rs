//! How often each node's heartbeat row is read. The configured `read_interval` is the pace; left
//! unset, reads are spread so that the whole topology costs at most [`READ_BUDGET`] reads a
//! second: every 250 ms up to 250 nodes, every 1 s at 1,000. Each reading stays exact to the write
//! interval; a slower pace only takes fewer of them (docs/benchmarks.md, "Scale": at 1,000 nodes,
//! reads every 250 ms cost rwtop ~17 % of one core and the budget's one a second 8–10 %). A replica
//! with a `SQL_Delay` is read five times as often as the pace ([`read_every`]).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Heartbeat reads a second across all nodes when `read_interval` is not set.
pub const READ_BUDGET: u32 = 1_000;

/// How many heartbeat readings a replica with a `SQL_Delay` gets for one at the pace
/// ([`read_every`]): every 50 ms at the default 250 ms.
pub const DELAYED_READS: u32 = 5;

/// How long a node waits between two heartbeat readings at `pace`: the pace, or a
/// [`DELAYED_READS`]th of it while one of its channels has a `SQL_Delay` (`delayed`).
///
/// A delayed `MariaDB` replica applies a whole second of events at one instant: the server holds
/// each event until its timestamp, in whole seconds, plus the delay, so every event of one second
/// is released together and the lag drops by a second at once. The store carries a reading
/// forward to the instant a snapshot is published (`store/node.rs`): a snapshot published after
/// that drop but built on a reading taken before it reads a second high (`lag_truth`'s
/// `master_delay_5` at 3 nodes: P95 of |reported − truth| 1.0 s with a reading every 250 ms,
/// 0.06–0.47 s with one every 50 ms; docs/benchmarks.md, "Lag against truth"). The
/// chance that a snapshot falls in that window is the reading's age over the second, so a
/// reading five times as often makes it five times smaller. A read by position is one variable,
/// a table read one row; only delayed replicas pay for it.
#[must_use]
pub fn read_every(pace: Duration, delayed: bool) -> Duration {
    if delayed { pace / DELAYED_READS } else { pace }
}

/// The current pace, shared by the engine (which counts pollers) and every poller and the store
/// (which read it).
#[derive(Debug)]
pub struct ReadPace {
    base: Duration,
    budget: Option<u32>,
    nodes: AtomicUsize,
    every_us: AtomicU64,
}

impl ReadPace {
    /// `budget`: reads a second for all nodes together; `None` keeps `base` whatever the size.
    #[must_use]
    pub fn new(base: Duration, budget: Option<u32>) -> Self {
        let pace = Self {
            base,
            budget,
            nodes: AtomicUsize::new(0),
            every_us: AtomicU64::new(0),
        };
        pace.recompute();
        pace
    }

    /// One more node is polled.
    pub fn add_node(&self) {
        self.nodes.fetch_add(1, Ordering::Relaxed);
        self.recompute();
    }

    /// The configured pace, which a small topology reads at.
    #[must_use]
    pub fn base(&self) -> Duration {
        self.base
    }

    /// How long a node waits between two heartbeat reads now.
    #[must_use]
    pub fn every(&self) -> Duration {
        Duration::from_micros(self.every_us.load(Ordering::Relaxed))
    }

    fn recompute(&self) {
        let nodes = u64::try_from(self.nodes.load(Ordering::Relaxed)).unwrap_or(u64::MAX);
        let spread = self.budget.map_or(Duration::ZERO, |budget| {
            Duration::from_micros(nodes.saturating_mul(1_000_000) / u64::from(budget.max(1)))
        });
        let every = self.base.max(spread);
        self.every_us.store(
            u64::try_from(every.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paced(budget: Option<u32>, nodes: usize) -> Duration {
        let pace = ReadPace::new(Duration::from_millis(250), budget);
        (0..nodes).for_each(|_| pace.add_node());
        pace.every()
    }

    #[test]
    fn a_delayed_replica_reads_five_times_as_often_at_any_pace() {
        let ms = Duration::from_millis;
        assert_eq!(read_every(ms(250), false), ms(250));
        assert_eq!(read_every(ms(250), true), ms(50));
        assert_eq!(read_every(ms(1_000), true), ms(200));
    }

    #[test]
    fn reads_spread_past_the_budget_and_never_go_faster_than_configured() {
        let ms = Duration::from_millis;
        assert_eq!(paced(Some(READ_BUDGET), 0), ms(250));
        assert_eq!(paced(Some(READ_BUDGET), 100), ms(250));
        assert_eq!(paced(Some(READ_BUDGET), 250), ms(250));
        assert_eq!(paced(Some(READ_BUDGET), 500), ms(500));
        assert_eq!(paced(Some(READ_BUDGET), 1_000), ms(1_000));
        assert_eq!(paced(Some(READ_BUDGET), 1_001), ms(1_001));
        // Set explicitly: kept at any size.
        assert_eq!(paced(None, 5_000), ms(250));
    }
}
