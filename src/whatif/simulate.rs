//! Every read of the workload, judged under one setting over every channel's lag line.

use std::time::Duration;

use serde::Serialize;

use super::line::{LagLine, Visible};
use super::setting::Setting;

/// Monitor phases tried per read for `fast`: the monitor's last look is spread evenly over the
/// interval before the read.
const FAST_PHASES: u32 = 8;
/// A replica applies a write some milliseconds after its commit, far below what the heartbeat
/// resolves: a replica read that lands less than this after the write became visible (by the
/// series) is a race the model cannot call, counted in its error rather than as fresh.
pub const RACE_MS: f64 = 10.0;
/// Reads are bucketed by minute for the primary's peak share.
const MINUTE_MS: f64 = 60_000.0;

/// What the application does: every write is followed by reads, `read_after` after it (the
/// delays taken in equal shares).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Workload {
    /// Reads per write: turns the primary's share of reads into its extra queries per write.
    pub reads_per_write: u32,
    #[serde(serialize_with = "durations_ms")]
    pub read_after: Vec<Duration>,
}

fn durations_ms<S: serde::Serializer>(list: &[Duration], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(list.iter().map(Duration::as_millis))
}

impl Default for Workload {
    fn default() -> Self {
        Self {
            reads_per_write: 1,
            read_after: vec![Duration::ZERO],
        }
    }
}

/// One read: how much of it is stale, how much went to the primary (fractions, for `fast`'s
/// phases), and what it waited (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Read {
    stale: f64,
    primary: f64,
    wait_ms: f64,
    /// A fresh replica read within [`RACE_MS`] of the write's visibility.
    race: f64,
}

impl Read {
    const PRIMARY: Self = Self {
        stale: 0.0,
        primary: 1.0,
        wait_ms: 0.0,
        race: 0.0,
    };

    /// A replica read; `margin` is how long before the read the write became visible
    /// (negative: stale).
    fn replica(margin: f64, wait_ms: f64) -> Self {
        Self {
            stale: f64::from(u8::from(margin < 0.0)),
            primary: 0.0,
            wait_ms,
            race: f64::from(u8::from((0.0..RACE_MS).contains(&margin))),
        }
    }

    /// A read the wait function made fresh: no race, the server said so.
    fn waited(wait_ms: f64) -> Self {
        Self {
            primary: 0.0,
            wait_ms,
            ..Self::PRIMARY
        }
    }

    fn fell_back(wait_ms: f64) -> Self {
        Self {
            wait_ms,
            ..Self::PRIMARY
        }
    }
}

#[expect(clippy::cast_precision_loss, reason = "durations in ms fit a f64")]
fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// One read of a write made at `write` (ms), issued `after` later, under `setting`; `None` when
/// the series cannot tell (a gap, or its end).
fn judge(line: &LagLine, setting: Setting, write: f64, after: f64) -> Option<Read> {
    let at = write + after;
    // How long before `t` the write became visible, by the series (negative: not yet).
    let stale_at = |t: f64| line.lag_at(t).map(|lag| t - write - lag);
    Some(match setting {
        Setting::Primary => Read::PRIMARY,
        Setting::Sticky(window) if after < ms(window) => Read::PRIMARY,
        Setting::None | Setting::Sticky(_) => Read::replica(stale_at(at)?, 0.0),
        Setting::Sleep(d) => Read::replica(stale_at(at + ms(d))?, ms(d)),
        Setting::LagThreshold(max) => match line.measured_at(at) {
            Some(seen) if seen <= ms(max) => Read::replica(stale_at(at)?, 0.0),
            _ => {
                // Unknown before the read: the router sends it to the primary, as rwtop's does.
                line.lag_at(at)?;
                Read::PRIMARY
            }
        },
        Setting::SbmZero(timeout) => match line.sbm_zero(at, at + ms(timeout)) {
            Visible::At(t) => Read::replica(stale_at(t)?, t - at),
            Visible::NotBy => Read::fell_back(ms(timeout)),
            Visible::Unknown => return None,
        },
        Setting::GtidWait(timeout) | Setting::PosWait(timeout) => {
            match line.first_visible(write, at, at + ms(timeout)) {
                Visible::At(t) => Read::waited(t - at),
                Visible::NotBy => Read::fell_back(ms(timeout)),
                Visible::Unknown => return None,
            }
        }
        Setting::Fast(interval) => {
            line.lag_at(at)?;
            let mut covered = 0_u32;
            for phase in 0..FAST_PHASES {
                let looked = at - ms(interval) * (f64::from(phase) + 0.5) / f64::from(FAST_PHASES);
                // The replica only moves forward: covered when looked at means fresh now.
                if line.visible(write, looked) == Some(true) {
                    covered += 1;
                }
            }
            Read {
                primary: 1.0 - f64::from(covered) / f64::from(FAST_PHASES),
                ..Read::PRIMARY
            }
        }
    })
}

/// One setting's result over every channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    pub setting: Setting,
    /// Reads the series could judge, and those it could not (a gap, the series' end).
    pub reads: u64,
    pub unjudged: u64,
    /// Shares of the judged reads, 0..=1.
    pub stale: f64,
    pub primary: f64,
    /// The primary's share in the worst whole minute (the fallback storm the budget's headroom is
    /// for: docs/whatif.md).
    pub primary_peak_minute: f64,
    pub wait_p50_ms: f64,
    pub wait_p99_ms: f64,
    /// Fresh replica reads within [`RACE_MS`] of the write's visibility (a share): the model
    /// cannot call them, and counts them in `stale_error`.
    pub race: f64,
    /// The model's own error on `stale` and `primary` (shares): docs/whatif.md, "Error".
    pub stale_error: f64,
    pub primary_error: f64,
}

/// Runs `setting` over every line; `resolution_ms` is how far an edge in the lag may be from
/// where the series puts it (the sample spacing plus the heartbeat interval).
#[must_use]
pub fn simulate(
    lines: &[LagLine],
    setting: Setting,
    workload: &Workload,
    resolution_ms: f64,
) -> Judged {
    let mut reads = Vec::new();
    let (mut unjudged, mut stale_moves, mut primary_moves) = (0_u64, 0.0, 0.0);
    let mut spacing: f64 = 1.0;
    for line in lines {
        spacing = spacing.max(line.spacing());
        for after in workload.read_after.iter().map(|d| ms(*d)) {
            let mut previous: Option<Read> = None;
            for write in line.known_instants() {
                match judge(line, setting, write, after) {
                    Some(read) => {
                        if let Some(p) = previous {
                            stale_moves += (read.stale - p.stale).abs();
                            primary_moves += (read.primary - p.primary).abs();
                        }
                        previous = Some(read);
                        reads.push((write + after, read));
                    }
                    None => unjudged += 1,
                }
            }
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "read counts fit a f64")]
    let n = reads.len() as f64;
    let share = |f: fn(&Read) -> f64| {
        if n == 0.0 {
            0.0
        } else {
            reads.iter().map(|(_, r)| f(r)).sum::<f64>() / n
        }
    };
    // Each edge of a verdict can be off by the resolution either way, and the reads on the
    // grid around it by one more spacing.
    let per_edge = resolution_ms / spacing + 1.0;
    let error = |moves: f64| {
        if n == 0.0 {
            0.0
        } else {
            (moves * per_edge / n).min(1.0)
        }
    };
    let mut waits: Vec<f64> = reads.iter().map(|(_, r)| r.wait_ms).collect();
    waits.sort_by(f64::total_cmp);
    Judged {
        setting,
        reads: reads.len() as u64,
        unjudged,
        stale: share(|r| r.stale),
        primary: share(|r| r.primary),
        primary_peak_minute: peak_minute(&reads),
        wait_p50_ms: percentile(&waits, 0.50),
        wait_p99_ms: percentile(&waits, 0.99),
        race: share(|r| r.race),
        stale_error: (error(stale_moves) + share(|r| r.race)).min(1.0),
        primary_error: error(primary_moves),
    }
}

/// Nearest-rank percentile of sorted values; 0 for none.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a rank within the slice"
    )]
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The primary's share in the worst minute with at least half the reads of the fullest one (a
/// ragged first or last minute would otherwise decide); the whole span's share when shorter.
fn peak_minute(reads: &[(f64, Read)]) -> f64 {
    let mut minutes = std::collections::BTreeMap::<i64, (f64, f64)>::new();
    for (at, read) in reads {
        #[expect(clippy::cast_possible_truncation, reason = "minutes since start")]
        let entry = minutes.entry((at / MINUTE_MS).floor() as i64).or_default();
        entry.0 += 1.0;
        entry.1 += read.primary;
    }
    let fullest = minutes.values().map(|(n, _)| *n).fold(0.0, f64::max);
    minutes
        .values()
        .filter(|(n, _)| *n >= fullest / 2.0)
        .map(|(n, p)| p / n)
        .fold(0.0, f64::max)
}
