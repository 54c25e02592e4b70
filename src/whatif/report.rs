//! A what-if over gathered series: every setting judged, and the cheapest one that meets the
//! goal recommended, with why.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use super::input::{ChannelSeries, InputError, MIN_KNOWN};
use super::line::LagLine;
use super::setting::Setting;
use super::simulate::{Judged, Workload, simulate};
use crate::units;

/// What the operator will accept: shares, 0..=1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Goal {
    /// The largest share of reads that may be stale (`--max-stale`, 0.1 % by default).
    pub max_stale: f64,
    /// The largest share of reads the primary may take in any whole minute (`--primary-budget`,
    /// 80 % by default: the 20 % headroom the fallback path needs, docs/whatif.md).
    pub primary_budget: f64,
}

impl Default for Goal {
    fn default() -> Self {
        Self {
            max_stale: 0.001,
            primary_budget: 0.80,
        }
    }
}

/// One channel the what-if read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelInfo {
    pub target: String,
    pub points: usize,
    /// Seconds of known heartbeat lag.
    pub known_s: f64,
}

/// One setting's row: its result, whether it meets the goal, and the primary's extra queries
/// per write it costs (`reads_per_write × primary share`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub judged: Judged,
    pub meets_goal: bool,
    pub primary_reads_per_write: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatifReport {
    pub source: String,
    pub workload: Workload,
    pub goal: Goal,
    pub channels: Vec<ChannelInfo>,
    /// Channels left out: no known lag at all.
    pub without_lag: Vec<String>,
    /// The median sample spacing and the heartbeat interval (ms): the model's resolution.
    pub spacing_ms: f64,
    pub heartbeat_ms: f64,
    pub rows: Vec<Row>,
    /// The cheapest setting meeting the goal, if any.
    pub recommended: Option<Setting>,
    /// Why that one, or why none.
    pub why: String,
}

#[expect(clippy::cast_precision_loss, reason = "durations in ms fit a f64")]
fn ms(d: Duration) -> f64 {
    d.as_millis() as f64
}

/// A share as every what-if output prints it: `0.12%`.
#[must_use]
pub fn pct(share: f64) -> String {
    format!("{:.2}%", share * 100.0)
}

/// Judges every setting over `channels` (`source` names them in messages: a file, or "the
/// live topology"); `heartbeat` is the heartbeat interval the lag was measured with.
pub fn run(
    source: &str,
    channels: &[ChannelSeries],
    heartbeat: Duration,
    settings: &[Setting],
    workload: &Workload,
    goal: Goal,
) -> Result<WhatifReport, InputError> {
    if channels.is_empty() {
        return Err(InputError::NoReplica {
            origin: source.to_owned(),
        });
    }
    let lines: Vec<(String, LagLine)> = channels
        .iter()
        .map(|c| (c.label(), LagLine::new(&c.points)))
        .collect();
    let without: Vec<String> = lines
        .iter()
        .filter(|(_, l)| l.known_ms() == 0.0)
        .map(|(t, _)| t.clone())
        .collect();
    let horizon = settings
        .iter()
        .filter_map(Setting::param)
        .max()
        .unwrap_or_default()
        + workload
            .read_after
            .iter()
            .max()
            .copied()
            .unwrap_or_default();
    let need = MIN_KNOWN + horizon;
    let best = lines
        .iter()
        .max_by(|a, b| a.1.known_ms().total_cmp(&b.1.known_ms()))
        .map(|(t, l)| (t.clone(), l.known_ms()));
    match best {
        Some((_, 0.0)) => {
            return Err(InputError::NoLag {
                origin: source.to_owned(),
                without: without.join(", "),
            });
        }
        Some((best, have)) if have < ms(need) => {
            return Err(InputError::TooShort {
                origin: source.to_owned(),
                best,
                have: wait(have),
                need: units::duration(need),
                without: if without.is_empty() {
                    String::new()
                } else {
                    format!("; no lag at all on {}", without.join(", "))
                },
            });
        }
        _ => {}
    }
    let used: Vec<(String, LagLine)> = lines
        .into_iter()
        .filter(|(_, l)| l.known_ms() >= ms(need))
        .collect();
    let spacing = used.iter().map(|(_, l)| l.spacing()).fold(0.0, f64::max);
    let resolution = spacing + ms(heartbeat);
    let only: Vec<LagLine> = used.iter().map(|(_, l)| l.clone()).collect();
    let rows: Vec<Row> = settings
        .iter()
        .map(|s| {
            let judged = simulate(&only, *s, workload, resolution);
            Row {
                // Judged on the upper end of the model's own error: a setting whose stale share
                // is 0 only because the race could not be called does not qualify.
                meets_goal: judged.reads > 0
                    && judged.stale + judged.stale_error <= goal.max_stale
                    && judged.primary_peak_minute + judged.primary_error <= goal.primary_budget,
                primary_reads_per_write: judged.primary * f64::from(workload.reads_per_write),
                judged,
            }
        })
        .collect();
    let (recommended, why) = recommend(&rows, goal);
    Ok(WhatifReport {
        source: source.to_owned(),
        workload: workload.clone(),
        goal,
        channels: channels
            .iter()
            .filter(|c| used.iter().any(|(t, _)| *t == c.label()))
            .map(|c| {
                let line = LagLine::new(&c.points);
                ChannelInfo {
                    target: c.label(),
                    points: c.points.len(),
                    known_s: line.known_ms() / 1000.0,
                }
            })
            .collect(),
        without_lag: without,
        spacing_ms: spacing,
        heartbeat_ms: ms(heartbeat),
        rows,
        recommended,
        why,
    })
}

/// The cost a row is ranked by: the primary's share (to 0.1 %), then the p99 wait, then the p50.
fn cost(row: &Row) -> (i64, i64, i64) {
    #[expect(clippy::cast_possible_truncation, reason = "rounded shares and ms")]
    let round = |x: f64| x.round() as i64;
    (
        round(row.judged.primary * 1000.0),
        round(row.judged.wait_p99_ms),
        round(row.judged.wait_p50_ms),
    )
}

fn recommend(rows: &[Row], goal: Goal) -> (Option<Setting>, String) {
    let mut meeting: Vec<&Row> = rows.iter().filter(|r| r.meets_goal).collect();
    meeting.sort_by_key(|r| cost(r));
    let Some(best) = meeting.first() else {
        let safest = rows
            .iter()
            .filter(|r| r.judged.primary_peak_minute <= goal.primary_budget && r.judged.reads > 0)
            .min_by(|a, b| a.judged.stale.total_cmp(&b.judged.stale));
        let why = match safest {
            Some(r) => format!(
                "no setting keeps stale reads within {} inside a primary budget of {}: the least stale within budget is {} at {} stale; raise --max-stale or --primary-budget, or fix the lag itself",
                pct(goal.max_stale),
                pct(goal.primary_budget),
                r.judged.setting,
                pct(r.judged.stale)
            ),
            None => format!(
                "every setting that is fresh enough puts more than {} of a minute's reads on the primary; raise --primary-budget or add replica capacity",
                pct(goal.primary_budget)
            ),
        };
        return (None, why);
    };
    let j = &best.judged;
    let mut why = format!(
        "{} is the cheapest of {} settings that meet the goal: {} stale (± {}) ≤ {}, the primary takes {} of reads ({} in the worst minute) ≤ {}, waits p50 {} p99 {}",
        j.setting,
        meeting.len(),
        pct(j.stale),
        pct(j.stale_error),
        pct(goal.max_stale),
        pct(j.primary),
        pct(j.primary_peak_minute),
        pct(goal.primary_budget),
        wait(j.wait_p50_ms),
        wait(j.wait_p99_ms),
    );
    if let Some(cheaper) = rows
        .iter()
        .filter(|r| !r.meets_goal && cost(r) < cost(best) && r.judged.reads > 0)
        .min_by(|a, b| a.judged.stale.total_cmp(&b.judged.stale))
    {
        let _ = write!(
            why,
            "; cheaper {} reads {} stale",
            cheaper.judged.setting,
            pct(cheaper.judged.stale)
        );
    }
    (Some(j.setting), why)
}

/// A wait in ms as the durations everywhere print.
#[must_use]
pub fn wait(ms: f64) -> String {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a wait"
    )]
    units::duration(Duration::from_micros((ms.max(0.0) * 1000.0) as u64))
}
