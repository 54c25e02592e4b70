//! A channel's parallel appliers (`docs/design.md`, "Parallel appliers and catch-up"): the
//! configured workers and mode, the busy workers of the newest processlist scan with that scan's
//! age, retries as a rate, the event groups applied by kind, and the tables the newest scan
//! showed row events applied on.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::mysql::{ApplierCounters, RowApply, SafetySettings, WorkerSample};

/// Retries per second are counted over this span of polls: one poll's difference is 0 or 1
/// most of the time, a rate nobody can read.
const RATE_SPAN: Duration = Duration::from_secs(10);
/// Shortest span a rate is given over: two polls of a nudge in quick succession say nothing.
const RATE_MIN_SPAN: Duration = Duration::from_millis(900);

/// What the store keeps of one channel's appliers between polls.
#[derive(Debug, Default)]
pub struct ApplierTrack {
    /// `Retried_transactions` at each poll of the last [`RATE_SPAN`] (and one before it).
    retries: VecDeque<(Instant, u64)>,
    /// The newest scan that showed this channel's workers, and when that poll began.
    workers: Option<(Instant, WorkerSample)>,
    /// The row events the newest scan showed being applied.
    row_events: Vec<RowApply>,
}

impl ApplierTrack {
    /// One status poll of the channel at `at`; `scan` is the processlist scan that poll carried
    /// (`None`: no scan this time: the last one stays, with its age).
    pub fn observe(
        &mut self,
        at: Instant,
        channel: &str,
        counters: &ApplierCounters,
        scan: Option<&[WorkerSample]>,
    ) {
        match counters.retried_transactions {
            Some(count) => {
                // A counter that went down was reset (the replica restarted): start again.
                if self.retries.back().is_some_and(|(_, last)| *last > count) {
                    self.retries.clear();
                }
                self.retries.push_back((at, count));
                while self.retries.len() > 2
                    && self
                        .retries
                        .get(1)
                        .is_some_and(|(t, _)| at.saturating_duration_since(*t) >= RATE_SPAN)
                {
                    self.retries.pop_front();
                }
            }
            None => self.retries.clear(),
        }
        if let Some(scan) = scan {
            // This channel's own workers (MySQL), else the node's shared pool (MariaDB).
            let own = scan
                .iter()
                .find(|w| w.channel.as_deref() == Some(channel))
                .or_else(|| scan.iter().find(|w| w.channel.is_none()));
            self.workers = own.map(|w| (at, w.clone()));
        }
    }

    /// The row events a processlist scan showed being applied (the node's, as `MariaDB`'s
    /// processlist does not say which connection a worker serves).
    pub fn observe_row_events(&mut self, scan: &[RowApply]) {
        self.row_events = scan.to_vec();
    }

    fn retries_per_second(&self) -> Option<f64> {
        let ((t0, c0), (t1, c1)) = (self.retries.front()?, self.retries.back()?);
        let span = t1.saturating_duration_since(*t0);
        #[expect(
            clippy::cast_precision_loss,
            reason = "a retry count is far below 2^52"
        )]
        let retried = (c1 - c0) as f64;
        (span >= RATE_MIN_SPAN).then(|| retried / span.as_secs_f64())
    }

    /// The view at `now`; `shared_by` is how many channels the node has (a `MariaDB` pool serves
    /// them all).
    #[must_use]
    pub fn view(
        &self,
        now: Instant,
        counters: &ApplierCounters,
        settings: Option<&SafetySettings>,
        shared_by: usize,
    ) -> ApplierView {
        let busy = self.workers.as_ref().map(|(at, w)| BusyWorkers {
            workers: w.workers,
            busy: w.busy,
            commit_order_waits: w.commit_order_waits,
            age: now.saturating_duration_since(*at),
            shared: w.channel.is_none() && shared_by > 1,
        });
        ApplierView {
            workers: settings.and_then(|s| s.parallel_workers),
            mode: counters
                .parallel_mode
                .clone()
                .or_else(|| settings.and_then(|s| s.parallel_mode.clone())),
            preserve_commit_order: settings.and_then(|s| s.preserve_commit_order),
            busy,
            retried_transactions: counters.retried_transactions,
            retries_per_second: self.retries_per_second(),
            groups: ApplierGroups {
                ddl: counters.ddl_groups,
                transactional: counters.transactional_groups,
                non_transactional: counters.non_transactional_groups,
            },
            row_events: self.row_events.clone(),
        }
    }
}

/// One channel's appliers as shown. Anything the server did not report is `None`, never 0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ApplierView {
    /// Configured workers (`slave_parallel_threads`, `replica_parallel_workers`); 0: one
    /// applier thread, no parallel replication.
    pub workers: Option<u64>,
    /// The channel's `Parallel_Mode`, else the node's `slave_parallel_mode`.
    pub mode: Option<String>,
    /// `MySQL`'s `replica_preserve_commit_order`.
    pub preserve_commit_order: Option<bool>,
    /// The newest processlist scan's workers; `None` before a scan that showed any.
    pub busy: Option<BusyWorkers>,
    pub retried_transactions: Option<u64>,
    /// Over the last 10 s of polls; `None` until two polls a second apart.
    pub retries_per_second: Option<f64>,
    pub groups: ApplierGroups,
    /// What the newest scan showed the appliers applying row events on, as old as
    /// [`Self::busy`]'s scan; empty when they apply none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub row_events: Vec<RowApply>,
}

impl ApplierView {
    /// The first table being applied that lacks a primary or unique key: under ROW format each of
    /// its row events scans the table.
    #[must_use]
    pub fn scanning_table(&self) -> Option<&RowApply> {
        self.row_events.iter().find(|r| r.scans_table())
    }
}

/// A sample: the processlist is scanned only every few polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusyWorkers {
    /// Worker threads the scan saw.
    pub workers: u32,
    /// Holding a transaction, commit-order waiters included.
    pub busy: u32,
    pub commit_order_waits: Option<u32>,
    /// How old the scan is.
    pub age: Duration,
    /// The node's pool serves several channels (`MariaDB` multi-source): these are all of them.
    pub shared: bool,
}

/// Event groups applied since the replica started, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ApplierGroups {
    pub ddl: Option<u64>,
    pub transactional: Option<u64>,
    pub non_transactional: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retried(n: u64) -> ApplierCounters {
        ApplierCounters {
            retried_transactions: Some(n),
            ..ApplierCounters::default()
        }
    }

    #[test]
    fn retries_are_a_rate_over_the_last_polls_and_a_reset_starts_again() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut track = ApplierTrack::default();
        let rate = |track: &ApplierTrack| track.view(t0, &retried(0), None, 1).retries_per_second;
        track.observe(t0, "", &retried(10), None);
        assert_eq!(rate(&track), None, "one poll is no rate");
        for i in 1..=20 {
            // 3 retries every 2 s.
            track.observe(t0 + s(i), "", &retried(10 + 3 * (i / 2)), None);
        }
        let r = rate(&track).unwrap();
        assert!((1.4..=1.6).contains(&r), "{r}");
        track.observe(t0 + s(21), "", &retried(2), None);
        assert_eq!(rate(&track), None, "counter reset");
    }

    #[test]
    fn the_newest_scan_is_kept_with_its_age_and_a_pool_is_shared_by_channels() {
        let t0 = Instant::now();
        let mut track = ApplierTrack::default();
        let pool = WorkerSample {
            channel: None,
            workers: 4,
            busy: 3,
            commit_order_waits: Some(1),
        };
        let counters = ApplierCounters::default();
        track.observe(t0, "p2", &counters, Some(std::slice::from_ref(&pool)));
        track.observe(t0 + Duration::from_secs(2), "p2", &counters, None);
        let view = track.view(t0 + Duration::from_secs(3), &counters, None, 2);
        let busy = view.busy.unwrap();
        assert_eq!(
            (busy.busy, busy.age, busy.shared),
            (3, Duration::from_secs(3), true)
        );
        // A later scan without workers (parallel replication switched off) clears it.
        track.observe(t0 + Duration::from_secs(4), "p2", &counters, Some(&[]));
        assert_eq!(track.view(t0, &counters, None, 2).busy, None);
    }
}
