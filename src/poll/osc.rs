//! Online schema change runs on one connection: when the status poll looks for the tools'
//! tables, and each run's ETA from the pace of its copy.
//!
//! The tools run against a writable root (they create tables and triggers there; replicas get
//! them by replication), so only a node that is writable and replicates from nothing is asked:
//! every [`OSC_EVERY`]th poll at the node's phase, and every poll while a run is seen and for
//! [`OSC_LINGER`] polls after, so the swap and the run's end are seen at once. A replica's part
//! in a run, the lag it causes, is its heartbeat lag, read as always.

use std::collections::HashMap;
use std::time::Instant;

use crate::mysql::batch::PollParts;
use crate::mysql::{OscPhase, OscRun, OscTool};

/// Detection's cadence on a writable root with no run seen. The statement lists every schema's
/// tables: ~0.13 ms of server CPU on a server with a few tables, ~3.1 ms with 5,000
/// (docs/benchmarks.md, "Statements measured by hand"), so every 15th poll keeps its average
/// under 0.21 ms a poll even there. A run is seen within 15 s at the shipped 1 s poll, and its
/// window still starts when the tool created its first table.
pub const OSC_EVERY: u64 = 15;
/// Polls after the last run seen during which every poll still looks.
pub const OSC_LINGER: u64 = 5;
/// The copy's pace is trusted for an ETA once measured over this long.
const PACE_AFTER_S: f64 = 5.0;

/// What the poller keeps about runs between polls.
#[derive(Debug, Default)]
pub struct OscWatch {
    /// The poll that last saw a run.
    seen: Option<u64>,
    /// Each run's first sighting with a row count: when, and how many rows.
    first: HashMap<(OscTool, String, String), (Instant, u64)>,
}

impl OscWatch {
    /// Adds detection to the `n`th poll of a node at `phase` when due; `writable_root`: the
    /// node's last sample showed it writable and replicating from nothing.
    #[must_use]
    pub fn parts(
        &self,
        mut parts: PollParts,
        n: u64,
        phase: u64,
        writable_root: bool,
    ) -> PollParts {
        // At a poll that neither scans (every 3rd at 1) nor reads the clock (every 5th at 0).
        let due = (n + phase) % OSC_EVERY == 3;
        let lingering = self.seen.is_some_and(|seen| n - seen <= OSC_LINGER);
        parts.osc = writable_root && (due || lingering);
        parts
    }

    /// Takes the runs poll `n` read at `at`, and fills in each one's ETA.
    pub fn saw(&mut self, n: u64, at: Instant, runs: &mut [OscRun]) {
        if !runs.is_empty() {
            self.seen = Some(n);
        }
        self.first
            .retain(|key, _| runs.iter().any(|r| r.key() == *key));
        for run in runs {
            let Some(copied) = run.rows_copied else {
                continue;
            };
            let (since, from) = *self.first.entry(run.key()).or_insert((at, copied));
            run.eta_s = eta(run, at.saturating_duration_since(since).as_secs_f64(), from);
        }
    }
}

/// Seconds left of the copy at its pace over `secs` since `from` rows; none before the pace is
/// measured, or once the copy is done.
fn eta(run: &OscRun, secs: f64, from: u64) -> Option<u64> {
    if run.phase != OscPhase::Copy || secs < PACE_AFTER_S {
        return None;
    }
    let (copied, total) = (run.rows_copied?, run.rows_estimate?);
    let moved = copied.checked_sub(from).filter(|m| *m > 0)?;
    #[expect(
        clippy::cast_precision_loss,
        reason = "row counts far below 2^52; an estimate"
    )]
    let left = total.saturating_sub(copied) as f64 / (moved as f64 / secs);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative number of seconds, rounded"
    )]
    Some(left.round() as u64)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn run(copied: u64) -> OscRun {
        let mut run: OscRun = serde_json::from_value(serde_json::json!({
            "tool": "pt-osc", "schema": "shop", "table": "orders", "phase": "copy",
        }))
        .unwrap();
        run.rows_copied = Some(copied);
        run.rows_estimate = Some(1000);
        run
    }

    #[test]
    fn only_writable_roots_look_every_fifteenth_poll_and_every_poll_while_a_run_is_seen() {
        let mut watch = OscWatch::default();
        let asked: Vec<u64> = (0..40)
            .filter(|n| watch.parts(PollParts::default(), *n, 0, true).osc)
            .collect();
        assert_eq!(asked, [3, 18, 33]);
        assert!(!(0..40).any(|n| watch.parts(PollParts::default(), n, 0, false).osc));
        watch.saw(18, Instant::now(), &mut [run(1)]);
        assert!((19..=23).all(|n| watch.parts(PollParts::default(), n, 0, true).osc));
        assert!(!watch.parts(PollParts::default(), 24, 0, true).osc);
    }

    #[test]
    fn the_eta_follows_the_copy_pace_once_measured() {
        let mut watch = OscWatch::default();
        let t0 = Instant::now();
        let mut runs = [run(100)];
        watch.saw(1, t0, &mut runs);
        assert_eq!(runs[0].eta_s, None);
        let mut runs = [run(200)];
        watch.saw(2, t0 + Duration::from_secs(2), &mut runs);
        assert_eq!(runs[0].eta_s, None, "pace not measured yet");
        // 300 rows in 10 s: 30 rows/s, 600 left.
        let mut runs = [run(400)];
        watch.saw(3, t0 + Duration::from_secs(10), &mut runs);
        assert_eq!(runs[0].eta_s, Some(20));
        let mut cut_over = run(1000);
        cut_over.phase = OscPhase::CutOver;
        let mut runs = [cut_over];
        watch.saw(4, t0 + Duration::from_secs(12), &mut runs);
        assert_eq!(runs[0].eta_s, None);
    }
}
