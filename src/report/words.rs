//! The phrases both formats share, so a Markdown report and an HTML one say the same thing the
//! same way: times, run times, crossings and catch-up.

use std::time::Duration;

use super::facts::{Facts, Statement};
use super::replica::{CaughtUp, ReplicaLag};
use crate::units;

/// What a window without statements, lag readings or test reads says in their place.
pub const NO_DDL: &str = "No DDL was seen running in this window.";
pub const NO_LAG: &str = "No replica lag was recorded in this window.";
pub const NONE_RUN: &str = "None were run in this window.";

/// `12:03:05 (+15s)`: the wall-clock time (UTC) and the offset into the window.
#[must_use]
pub fn when(facts: &Facts, offset: f64) -> String {
    let sign = if offset < 0.0 { "-" } else { "+" };
    format!(
        "{} ({sign}{})",
        facts.at(offset).format("%H:%M:%S"),
        units::duration(secs(offset.abs()))
    )
}

/// Whole or fractional seconds as a duration (negative and non-finite read as zero).
#[must_use]
pub fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or_default()
}

/// `2026-12-03 12:03:05 – 12:05:40 UTC (2m35s)`.
#[must_use]
pub fn window(facts: &Facts) -> String {
    format!(
        "{} – {} UTC ({})",
        facts.from.format("%Y-%m-%d %H:%M:%S"),
        facts.to.format("%H:%M:%S"),
        units::duration(secs(facts.length))
    )
}

/// How the window opened and closed.
#[must_use]
pub fn how(facts: &Facts, quiet: Duration) -> String {
    let opened = facts.bounds.by.label();
    let closed = if facts.bounds.cut_short {
        "still open when the snapshots ended".to_owned()
    } else if facts.bounds.by == super::Opened::Mark {
        "closed by hand".to_owned()
    } else {
        format!(
            "closed once every replica had stayed under the routing threshold ({}) for {}",
            units::lag(facts.threshold),
            units::duration(quiet)
        )
    };
    format!("{opened}, {closed}")
}

#[must_use]
pub fn run_by(statement: &Statement) -> &'static str {
    if statement.osc_phase.is_some() {
        return "online schema change tool";
    }
    match (statement.applier, statement.on_primary) {
        (true, _) => "replication applier",
        (false, true) => "client on the primary",
        (false, false) => "client on a replica",
    }
}

/// `9s, done by 12:03:14` or `≥ 42s, still running`, and how long of it the statement waited
/// for a lock: `; waited 30s for the table metadata lock`.
#[must_use]
pub fn run_time(statement: &Statement) -> String {
    let time = units::secs(statement.elapsed_s);
    let run = if statement.running_at_end {
        format!("≥ {time}, still running")
    } else {
        format!("{time}, done by {}", statement.last_seen.format("%H:%M:%S"))
    };
    match statement.wait.waited() {
        Some((waited, lock)) => format!("{run}; waited {} for the {lock}", units::secs(waited)),
        None => run,
    }
}

#[must_use]
pub fn progress(statement: &Statement) -> String {
    match (statement.progress, statement.osc_phase) {
        (Some(p), Some(phase)) => format!(
            "{} (rows against the estimate), last {}",
            units::approx_percent(p),
            phase.name()
        ),
        (None, Some(phase)) => format!("last {}", phase.name()),
        (Some(p), None) => format!("{p:.1} %"),
        (None, None) => "–".to_owned(),
    }
}

#[must_use]
pub fn max_lag(facts: &Facts, replica: &ReplicaLag) -> String {
    replica.max.map_or_else(
        || "unknown (no heartbeat read)".to_owned(),
        |(at, lag)| format!("{} at {}", units::lag(secs(lag)), when(facts, at)),
    )
}

/// Each stretch above the threshold: `12:03:14 (+9s) → 12:03:27 (+22s), peak 12.40s`.
#[must_use]
pub fn crossings(facts: &Facts, replica: &ReplicaLag) -> Vec<String> {
    replica
        .crossings
        .iter()
        .map(|c| {
            let back = c
                .back_at
                .map_or_else(|| "still above at the end".to_owned(), |b| when(facts, b));
            format!(
                "{} → {back}, peak {}",
                when(facts, c.above_at),
                units::lag(secs(c.peak))
            )
        })
        .collect()
}

#[must_use]
pub fn catch_up(replica: &ReplicaLag) -> String {
    match replica.catch_up {
        CaughtUp::NeverBehind => "never behind after the primary finished".to_owned(),
        CaughtUp::After(s) => format!("{} after the primary finished", units::duration(secs(s))),
        CaughtUp::NotYet => "still behind at the window's end".to_owned(),
        CaughtUp::Unknown => "the primary's end was not seen".to_owned(),
    }
}

/// A replica's lag as a row of block characters, for a text-only ticket.
#[must_use]
pub fn sparkline(replica: &ReplicaLag, width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let top = replica.max.map_or(0.0, |m| m.1);
    if replica.points.is_empty() || width == 0 {
        return String::new();
    }
    let chunk = replica.points.len().div_ceil(width);
    replica
        .points
        .chunks(chunk)
        .map(|c| {
            let worst = c
                .iter()
                .filter_map(|p| p.1)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            match worst {
                None => ' ',
                Some(_) if top <= 0.0 => BARS[0],
                Some(v) => {
                    #[expect(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        reason = "a ratio in 0..=1 times 7"
                    )]
                    let i = ((v / top) * 7.0).round() as usize;
                    BARS[i.min(7)]
                }
            }
        })
        .collect()
}
