//! Semi-sync health of one node: the state its newest poll reported (enabled, active or fell
//! back; acking replicas against those required), and what the server's running totals say
//! between two polls — the average ACK wait of the commits in each poll interval, commits that
//! got no ACK, ACKs a replica sent.
//!
//! The server keeps only totals (microseconds waited, commits that waited), so the finest
//! figure there is one average per poll interval. The windows' P50 and P99 are percentiles of
//! those per-interval averages, over the same windows the lag uses: a single slow commit in a
//! busy second is averaged with the rest of that second (docs/semisync.md). Totals that go down
//! (the server restarted, the plugin was reloaded) start the differences over: that interval
//! is not counted.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::windows::Window;
use crate::mysql::semisync::{Counters, SemiSync};

/// What the source side of a node is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SemiSyncState {
    /// Loaded but not enabled (`rpl_semi_sync_master_enabled=OFF`).
    Off,
    /// Enabled, and commits wait for ACKs (status `ON`).
    Active,
    /// Enabled but status `OFF`: the primary gave up waiting and commits asynchronously.
    FellBack,
    /// The server did not say (a switch missing from its answer).
    Unknown,
}

/// ACK waits over one window: percentiles of the poll intervals' average waits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AckWaitStats {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    /// Poll intervals in the window in which commits waited for an ACK.
    pub intervals: u64,
    /// Commits that waited for an ACK in those intervals.
    pub commits: u64,
}

/// What the totals said between the two newest polls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SemiSyncInterval {
    /// Between the two polls.
    pub span: Duration,
    /// Commits that waited for an ACK and got it.
    pub commits_waited: Option<u64>,
    /// Their average wait; `None` when no commit waited.
    pub avg_wait: Option<Duration>,
    /// Commits that got no ACK (sent while async, or timed out).
    pub no_ack_commits: Option<u64>,
    /// Times the primary fell back to async.
    pub fallbacks: Option<u64>,
    /// ACKs this node sent (a replica).
    pub acks_sent: Option<u64>,
}

impl SemiSyncInterval {
    /// Commits without an ACK per second.
    #[must_use]
    pub fn no_ack_per_s(&self) -> Option<f64> {
        per_s(self.no_ack_commits, self.span)
    }

    /// ACKs sent per second (a replica).
    #[must_use]
    pub fn acks_per_s(&self) -> Option<f64> {
        per_s(self.acks_sent, self.span)
    }
}

fn per_s(count: Option<u64>, span: Duration) -> Option<f64> {
    #[expect(clippy::cast_precision_loss, reason = "a count per poll")]
    let count = count? as f64;
    (!span.is_zero()).then(|| count / span.as_secs_f64())
}

/// A node's semi-sync as published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemiSyncView {
    /// The source side's state; `None` where the source side is not loaded.
    pub state: Option<SemiSyncState>,
    /// Semi-sync replicas connected now (`Rpl_semi_sync_master_clients`).
    pub clients: Option<u64>,
    /// ACKs a commit waits for: the server's `wait_for_slave_count`, or one where it has none.
    pub required_acks: Option<u64>,
    pub timeout: Option<Duration>,
    pub wait_point: Option<String>,
    /// Sessions waiting for an ACK at the poll.
    pub wait_sessions: Option<u64>,
    /// The newest poll interval; `None` before two polls, and after a reset of the totals.
    pub interval: Option<SemiSyncInterval>,
    /// ACK wait per window, shortest first; `None` where no commit waited in it.
    pub ack_wait: Vec<(Window, Option<AckWaitStats>)>,
    /// The server's totals as last read.
    pub totals: Counters,
    /// Replica side: enabled, and whether its IO thread acknowledges now
    /// (`Rpl_semi_sync_slave_status`); `None` where not loaded.
    pub replica_enabled: Option<bool>,
    pub replica_active: Option<bool>,
}

impl SemiSyncView {
    /// Whether the source side is enabled (fell back or not).
    #[must_use]
    pub fn source_enabled(&self) -> bool {
        matches!(
            self.state,
            Some(SemiSyncState::Active | SemiSyncState::FellBack)
        )
    }

    /// The ACK wait over `window`.
    #[must_use]
    pub fn window(&self, window: Window) -> Option<AckWaitStats> {
        self.ack_wait
            .iter()
            .find(|(w, _)| *w == window)
            .and_then(|(_, s)| *s)
    }
}

/// One poll interval's average ACK wait.
#[derive(Debug, Clone, Copy)]
struct Wait {
    at: Instant,
    avg_us: u64,
    commits: u64,
}

/// What the store keeps of one node's semi-sync.
#[derive(Debug, Default)]
pub struct SemiSyncTrack {
    latest: Option<SemiSync>,
    /// The totals of the newest poll that carried them, and when it was sent.
    last: Option<(Instant, Counters)>,
    interval: Option<SemiSyncInterval>,
    /// Intervals in which commits waited, oldest first, over the longest window.
    waits: VecDeque<Wait>,
}

impl SemiSyncTrack {
    /// Takes a poll sent at `at`; `None`: semi-sync was not read (refused).
    pub fn record(&mut self, at: Instant, semisync: Option<&SemiSync>) {
        self.latest = semisync.cloned();
        let Some(semi) = semisync else {
            self.interval = None;
            return;
        };
        let now = semi.counters;
        self.interval = self
            .last
            .and_then(|(then, before)| interval(at.saturating_duration_since(then), before, now));
        if let Some(i) = self.interval
            && let (Some(avg), Some(commits)) = (i.avg_wait, i.commits_waited)
        {
            let avg_us = u64::try_from(avg.as_micros()).unwrap_or(u64::MAX);
            self.waits.push_back(Wait {
                at,
                avg_us,
                commits,
            });
        }
        let oldest = Window::FifteenMinutes.duration();
        while self
            .waits
            .front()
            .is_some_and(|w| at.saturating_duration_since(w.at) > oldest)
        {
            self.waits.pop_front();
        }
        self.last = Some((at, now));
    }

    /// The view at `now`; `None` where neither side of semi-sync is loaded or nothing was read.
    #[must_use]
    pub fn view(&self, now: Instant) -> Option<SemiSyncView> {
        let semi = self.latest.as_ref()?;
        if !semi.has_source_side() && !semi.has_replica_side() {
            return None;
        }
        let state =
            semi.has_source_side()
                .then_some(match (semi.source_enabled, semi.source_active) {
                    (Some(false), _) => SemiSyncState::Off,
                    (Some(true), Some(true)) => SemiSyncState::Active,
                    (Some(true), Some(false)) => SemiSyncState::FellBack,
                    _ => SemiSyncState::Unknown,
                });
        Some(SemiSyncView {
            state,
            clients: semi.source_clients,
            required_acks: semi.required_acks(),
            timeout: semi.source_timeout_ms.map(Duration::from_millis),
            wait_point: semi.source_wait_point.clone(),
            wait_sessions: semi.counters.wait_sessions,
            interval: self.interval,
            ack_wait: Window::ALL
                .iter()
                .map(|w| (*w, self.stats(now, w.duration())))
                .collect(),
            totals: semi.counters,
            replica_enabled: semi.replica_enabled,
            replica_active: semi.replica_active,
        })
    }

    /// Nearest-rank percentiles of the intervals' averages within `span` of `now`.
    fn stats(&self, now: Instant, span: Duration) -> Option<AckWaitStats> {
        let within: Vec<&Wait> = self
            .waits
            .iter()
            .filter(|w| now.saturating_duration_since(w.at) <= span)
            .collect();
        if within.is_empty() {
            return None;
        }
        let mut values: Vec<u64> = within.iter().map(|w| w.avg_us).collect();
        values.sort_unstable();
        let rank = |p: usize| values[(values.len() * p).div_ceil(100).max(1) - 1];
        Some(AckWaitStats {
            p50: Duration::from_micros(rank(50)),
            p99: Duration::from_micros(rank(99)),
            max: Duration::from_micros(values[values.len() - 1]),
            intervals: values.len() as u64,
            commits: within.iter().map(|w| w.commits).sum(),
        })
    }
}

/// The difference of two polls' totals; `None` when any total went down (a restart).
fn interval(span: Duration, before: Counters, now: Counters) -> Option<SemiSyncInterval> {
    let mut reset = false;
    let mut delta = |new: Option<u64>, old: Option<u64>| match (new, old) {
        (Some(new), Some(old)) if new >= old => Some(new - old),
        (Some(_), Some(_)) => {
            reset = true;
            None
        }
        _ => None,
    };
    let waited_us = delta(now.tx_wait_time_us, before.tx_wait_time_us);
    let commits_waited = delta(now.tx_waits, before.tx_waits);
    let no_ack_commits = delta(now.no_tx, before.no_tx);
    let fallbacks = delta(now.no_times, before.no_times);
    let acks_sent = delta(now.acks_sent, before.acks_sent);
    if reset {
        return None;
    }
    let avg_wait = match (waited_us, commits_waited) {
        (Some(us), Some(n)) if n > 0 => Some(Duration::from_micros(us / n)),
        _ => None,
    };
    Some(SemiSyncInterval {
        span,
        commits_waited,
        avg_wait,
        no_ack_commits,
        fallbacks,
        acks_sent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn primary(waits: u64, wait_us: u64, no_tx: u64) -> SemiSync {
        SemiSync {
            source_enabled: Some(true),
            source_active: Some(true),
            source_clients: Some(2),
            counters: Counters {
                tx_waits: Some(waits),
                tx_wait_time_us: Some(wait_us),
                no_tx: Some(no_tx),
                ..Counters::default()
            },
            ..SemiSync::default()
        }
    }

    #[test]
    fn ack_wait_is_the_intervals_average_and_its_percentiles() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut track = SemiSyncTrack::default();
        track.record(t0, Some(&primary(100, 50_000, 3)));
        // 10 commits waited 1 ms each, then 4 waited 5 ms each, then 2 waited 20 ms each.
        track.record(t0 + s(1), Some(&primary(110, 60_000, 3)));
        track.record(t0 + s(2), Some(&primary(114, 80_000, 5)));
        track.record(t0 + s(3), Some(&primary(116, 120_000, 5)));
        let view = track.view(t0 + s(3)).unwrap();
        assert_eq!(view.state, Some(SemiSyncState::Active));
        let one = view.window(Window::OneMinute).unwrap();
        assert_eq!(one.p50, Duration::from_millis(5));
        assert_eq!(one.p99, Duration::from_millis(20));
        assert_eq!((one.intervals, one.commits), (3, 16));
        let last = view.interval.unwrap();
        assert_eq!(last.avg_wait, Some(Duration::from_millis(20)));
        assert_eq!(last.no_ack_commits, Some(0));
        // Two minutes on, the 1-minute window is empty; the 5-minute one still holds them.
        let later = track.view(t0 + s(120)).unwrap();
        assert_eq!(later.window(Window::OneMinute), None);
        assert_eq!(later.window(Window::FiveMinutes).unwrap().intervals, 3);
    }

    #[test]
    fn totals_that_go_down_start_over_and_missing_ones_stay_unknown() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut track = SemiSyncTrack::default();
        track.record(t0, Some(&primary(100, 50_000, 3)));
        // Restarted: every total back near 0. No interval, no bogus wait.
        track.record(t0 + s(1), Some(&primary(2, 400, 0)));
        assert_eq!(track.view(t0 + s(1)).unwrap().interval, None);
        track.record(t0 + s(2), Some(&primary(4, 1_400, 1)));
        let i = track.view(t0 + s(2)).unwrap().interval.unwrap();
        assert_eq!(i.avg_wait, Some(Duration::from_micros(500)));
        assert_eq!(i.no_ack_commits, Some(1));
        // The wait counters vanish (NULL): unknown, never a zero wait or zero commits.
        let mut blind = primary(0, 0, 2);
        blind.counters.tx_waits = None;
        blind.counters.tx_wait_time_us = None;
        track.record(t0 + s(3), Some(&blind));
        let i = track.view(t0 + s(3)).unwrap().interval.unwrap();
        assert_eq!((i.commits_waited, i.avg_wait), (None, None));
        assert_eq!(i.no_ack_commits, Some(1));
    }

    #[test]
    fn enabled_with_status_off_is_a_fall_back_and_no_plugin_is_no_view() {
        let mut semi = primary(0, 0, 0);
        semi.source_active = Some(false);
        let mut track = SemiSyncTrack::default();
        track.record(Instant::now(), Some(&semi));
        let view = track.view(Instant::now()).unwrap();
        assert_eq!(view.state, Some(SemiSyncState::FellBack));
        track.record(Instant::now(), Some(&SemiSync::default()));
        assert_eq!(track.view(Instant::now()), None);
    }
}
