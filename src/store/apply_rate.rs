//! Catch-up: how fast a channel applies against how fast its source writes, and when its lag
//! will be gone. The one source of "when will it have caught up" outside a schema change
//! (`alerts/eta.rs` reads it; the TUI, JSON and `/metrics` show it).
//!
//! How it is worked out, from the polls of the last [`WINDOW`] (20 s: a poll's jitter is one
//! point among twenty at the default 1 s interval, and a change of pace shows within seconds):
//!
//! * **Apply rate**: transactions the channel applied per second, the growth of what it has
//!   applied from the first poll of the window to the last over the time between them. `MariaDB`:
//!   the sum of `Gtid_Slave_Pos` sequence numbers over the domains its source writes (every
//!   domain of the list on a replica with one channel when the source is not polled). `MySQL`:
//!   the size of `Executed_Gtid_Set` (one channel only: the set is the replica's, not the
//!   channel's). Bytes per second from `Relay_Master_Log_File`/`Exec_Master_Log_Pos` across the
//!   source's binlog files, for replicas without GTIDs.
//! * **Source rate**: the same over the source's own polls of the window: its
//!   `gtid_binlog_pos` sequence sum (`gtid_executed` size on `MySQL`) and binlog position.
//! * **Lag change**: the least-squares slope of the channel's heartbeat lag over the window,
//!   seconds per second; negative while it shrinks. The ETA is the lag beyond `SQL_Delay`
//!   (the channel's own plus its source's: a cascade under a delayed replica inherits that
//!   delay and can never catch up on it) divided by how fast it shrinks.
//!
//! The state comes from the lag: caught up at most [`CAUGHT_UP`] beyond `SQL_Delay`, else
//! catching up, falling behind or not shrinking by the trend. A lag that is only bounded (a
//! fresh rwtop, a replica that has not applied its first heartbeat) has no trend; then only
//! the rates can speak, and only to say that the source outruns the channel.
//!
//! The window restarts when the channel's IO or SQL thread starts or stops: the pace before a
//! restart says nothing about the pace after it. Until the window holds [`MIN_POINTS`] polls
//! over [`MIN_SPAN`], or when a figure went backwards (a reset, a re-fetched relay log, a
//! binlog file rwtop has not listed), that figure is unknown: never a guess, never 0.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::gtid::GtidList;
use crate::mysql::{
    BinlogFile, BinlogPos, GtidState, IoRunning, NodeState, ReplicaGtid, ReplicaStatus,
    bytes_between, reached,
};
use crate::units;

use super::lag::Lag;

/// How far back the rates and the lag trend look.
pub const WINDOW: Duration = Duration::from_secs(20);
/// Fewest polls, and least time between the first and last, before anything is stated.
pub const MIN_POINTS: usize = 4;
pub const MIN_SPAN: Duration = Duration::from_secs(5);
/// A lag trend smaller than this either way is flat: heartbeat lag moves in steps of its
/// 250 ms interval, which a 20 s slope spreads to about 0.01 s/s.
pub const FLAT_S_PER_S: f64 = 0.02;
/// At most this much lag beyond `SQL_Delay` is caught up: a replica applying as fast as its
/// source writes still reads a heartbeat interval or two.
pub const CAUGHT_UP: Duration = Duration::from_secs(1);
/// Polls kept per channel: the window at a 100 ms poll interval.
const MAX_POINTS: usize = 200;

/// What a node had, counted the way its family counts transactions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// `MariaDB`: the last sequence number per domain.
    Domains(GtidList),
    /// `MySQL`: how many transactions the set holds.
    Count(u128),
}

impl Progress {
    /// Transactions from `earlier` to `self` over `domains` (every domain of `self` when
    /// `None`); `None` when the kinds differ or a count went backwards.
    fn since(&self, earlier: &Self, domains: Option<&GtidList>) -> Option<u128> {
        match (self, earlier) {
            (Self::Count(now), Self::Count(then)) => now.checked_sub(*then),
            (Self::Domains(now), Self::Domains(then)) => {
                let mut total: u128 = 0;
                let wanted: Vec<u32> = domains.unwrap_or(now).domains().collect();
                for domain in wanted {
                    let after = now.seq(domain).unwrap_or(0);
                    let before = then.seq(domain).unwrap_or(0);
                    total += u128::from(after.checked_sub(before)?);
                }
                Some(total)
            }
            _ => None,
        }
    }

    fn of_source(state: &GtidState) -> Option<Self> {
        match state {
            GtidState::Mariadb { binlog_pos, .. } => Some(Self::Domains(binlog_pos.clone())),
            // An empty set is GTIDs off, not a source that never wrote.
            GtidState::Mysql { executed } if executed.is_empty() => None,
            GtidState::Mysql { executed } => Some(Self::Count(executed.count())),
        }
    }

    fn of_replica(status: &ReplicaStatus, replica: &NodeState) -> Option<Self> {
        match (&status.gtid, &replica.gtid) {
            (ReplicaGtid::Mariadb { slave_pos, .. }, state) => match (slave_pos, state) {
                (Some(pos), _) => Some(Self::Domains(pos.clone())),
                (None, GtidState::Mariadb { slave_pos, .. }) => {
                    Some(Self::Domains(slave_pos.clone()))
                }
                (None, GtidState::Mysql { .. }) => None,
            },
            (ReplicaGtid::Mysql { executed, .. }, _) if executed.is_empty() => None,
            (ReplicaGtid::Mysql { executed, .. }, _) => Some(Self::Count(executed.count())),
        }
    }
}

/// One poll of a replica channel.
#[derive(Debug, Clone)]
struct Applied {
    at_ms: u64,
    lag_ms: Option<u64>,
    gtid: Option<Progress>,
    pos: BinlogPos,
}

/// One poll of a node as a source.
#[derive(Debug, Clone)]
struct Written {
    at_ms: u64,
    gtid: Option<Progress>,
    head: Option<BinlogPos>,
}

/// A channel's polls since its threads last started or stopped, at most [`WINDOW`] old.
#[derive(Debug, Clone, Default)]
pub struct ApplyHistory {
    points: VecDeque<Applied>,
    threads: Option<(IoRunning, bool)>,
}

impl ApplyHistory {
    /// Notes one poll: `lag` is the channel's lag at `at_ms` (ms since the store's start).
    pub fn record(
        &mut self,
        at_ms: u64,
        status: &ReplicaStatus,
        replica: &NodeState,
        lag: Option<Duration>,
    ) {
        let threads = (status.io_running, status.sql_running);
        if self.threads != Some(threads) {
            self.points.clear();
            self.threads = Some(threads);
        }
        self.points.push_back(Applied {
            at_ms,
            lag_ms: lag.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            gtid: Progress::of_replica(status, replica),
            pos: status.applied.clone(),
        });
        trim(&mut self.points, |p| p.at_ms);
    }
}

/// A node's polls as a source, at most [`WINDOW`] old.
#[derive(Debug, Clone, Default)]
pub struct WriteHistory {
    points: VecDeque<Written>,
}

impl WriteHistory {
    pub fn record(&mut self, at_ms: u64, state: &NodeState, head: Option<&BinlogPos>) {
        self.points.push_back(Written {
            at_ms,
            gtid: Progress::of_source(&state.gtid),
            head: head.cloned(),
        });
        trim(&mut self.points, |p| p.at_ms);
    }
}

fn trim<T>(points: &mut VecDeque<T>, at_ms: impl Fn(&T) -> u64) {
    let window = u64::try_from(WINDOW.as_millis()).unwrap_or(u64::MAX);
    let newest = points.back().map_or(0, &at_ms);
    while points.len() > MAX_POINTS
        || points
            .front()
            .is_some_and(|p| newest.saturating_sub(at_ms(p)) > window)
    {
        points.pop_front();
    }
}

/// Where a channel stands against its lag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchUpState {
    /// Lag beyond `SQL_Delay` at most [`CAUGHT_UP`].
    CaughtUp,
    /// The lag shrinks: see the ETA.
    CatchingUp,
    /// The lag grows: at this rate never.
    FallingBehind,
    /// The lag neither grows nor shrinks: at this rate never.
    NotShrinking,
    /// Lag unknown, or too few polls since the threads last changed.
    #[default]
    Unknown,
}

impl CatchUpState {
    /// The JSON name, for metrics labels.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::CaughtUp => "caught_up",
            Self::CatchingUp => "catching_up",
            Self::FallingBehind => "falling_behind",
            Self::NotShrinking => "not_shrinking",
            Self::Unknown => "unknown",
        }
    }

    pub const ALL: [Self; 5] = [
        Self::CaughtUp,
        Self::CatchingUp,
        Self::FallingBehind,
        Self::NotShrinking,
        Self::Unknown,
    ];
}

/// A channel's catch-up as of a snapshot. Every figure is `None` when it cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CatchUp {
    pub state: CatchUpState,
    pub apply_trx_per_s: Option<f64>,
    pub source_trx_per_s: Option<f64>,
    pub apply_bytes_per_s: Option<f64>,
    pub source_bytes_per_s: Option<f64>,
    /// Seconds of lag gained per second over the window; negative while it shrinks.
    pub lag_change_s_per_s: Option<f64>,
    /// Until the lag beyond `SQL_Delay` is gone, at the pace of the window; only while
    /// catching up.
    pub eta: Option<Duration>,
    /// The time the figures span (from the first poll of the window to the last).
    pub window: Option<Duration>,
}

impl CatchUp {
    /// How much faster the source writes than the channel applies, when both are known.
    #[must_use]
    pub fn deficit_trx_per_s(&self) -> Option<f64> {
        Some(self.source_trx_per_s? - self.apply_trx_per_s?)
    }

    /// One phrase for a table cell or a cause line: `catching up 2.3 s/s, ~18s`, `falling behind
    /// 40 trx/s`, `falling behind 1.0 s/s` (rates unknown), `not shrinking`, `caught up`, `?`.
    #[must_use]
    pub fn text(&self) -> String {
        match self.state {
            CatchUpState::CaughtUp => "caught up".to_owned(),
            CatchUpState::CatchingUp => {
                let rate = self.lag_change_s_per_s.map(units::lag_rate);
                let eta = self.eta.map(units::eta);
                match (rate, eta) {
                    (Some(rate), Some(eta)) => format!("catching up {rate}, {eta}"),
                    _ => "catching up".to_owned(),
                }
            }
            CatchUpState::FallingBehind => match self.deficit_trx_per_s() {
                Some(d) if d > 0.0 => format!("falling behind {}", units::trx_rate(d)),
                _ => match self.lag_change_s_per_s {
                    Some(rate) => format!("falling behind {}", units::lag_rate(rate)),
                    None => "falling behind".to_owned(),
                },
            },
            CatchUpState::NotShrinking => "not shrinking".to_owned(),
            CatchUpState::Unknown => "?".to_owned(),
        }
    }

    /// When it will have caught up, in words: `~18s`, `at this rate never`, `now`, `unknown`.
    #[must_use]
    pub fn eta_text(&self) -> String {
        match (self.state, self.eta) {
            (CatchUpState::CaughtUp, _) => "now".to_owned(),
            (CatchUpState::CatchingUp, Some(eta)) => units::eta(eta),
            (CatchUpState::FallingBehind | CatchUpState::NotShrinking, _) => {
                "at this rate never".to_owned()
            }
            _ => "unknown".to_owned(),
        }
    }
}

/// What the channel's source offers the computation: its polls and its binlog list. `None`
/// when rwtop does not poll it.
#[derive(Clone, Copy)]
pub struct SourceInput<'a> {
    pub writes: &'a WriteHistory,
    pub files: &'a [BinlogFile],
}

/// The channel's catch-up from its polls, its source's, and its lag now.
#[must_use]
pub fn catch_up(
    history: &ApplyHistory,
    source: Option<SourceInput<'_>>,
    only_channel: bool,
    lag: &Lag,
    sql_delay: Duration,
) -> CatchUp {
    let points = &history.points;
    let (Some(first), Some(last)) = (points.front(), points.back()) else {
        return CatchUp::default();
    };
    let span_ms = last.at_ms.saturating_sub(first.at_ms);
    let enough = points.len() >= MIN_POINTS && Duration::from_millis(span_ms) >= MIN_SPAN;
    let mut out = CatchUp {
        window: enough.then(|| Duration::from_millis(span_ms)),
        ..CatchUp::default()
    };
    if enough {
        let source_gtid = source
            .as_ref()
            .and_then(|s| s.writes.points.back())
            .and_then(|w| w.gtid.as_ref());
        // The domains the channel's source writes; all of them on a replica with one channel.
        let domains = match source_gtid {
            Some(Progress::Domains(written)) => Some(Some(written)),
            _ if only_channel => Some(None),
            _ => None,
        };
        out.apply_trx_per_s = domains.and_then(|domains| {
            let delta = last.gtid.as_ref()?.since(first.gtid.as_ref()?, domains)?;
            per_second(delta, span_ms)
        });
        if let Some(source) = &source {
            // The applied position is in the source's binlog coordinates.
            let files = match source.writes.points.back().and_then(|w| w.head.as_ref()) {
                Some(head) => reached(source.files, head),
                None => source.files.to_vec(),
            };
            out.apply_bytes_per_s = bytes_between(&files, &first.pos, &last.pos)
                .and_then(|b| per_second(u128::from(b), span_ms));
            let (trx, bytes) = source_rates(source, first.at_ms);
            (out.source_trx_per_s, out.source_bytes_per_s) = (trx, bytes);
        }
        out.lag_change_s_per_s = slope(points.iter().filter_map(|p| Some((p.at_ms, p.lag_ms?))));
    }
    // The source outrunning the channel by more than a poll's jitter: measured, not a guess.
    let outrun = out
        .deficit_trx_per_s()
        .zip(out.source_trx_per_s)
        .is_some_and(|(deficit, source)| deficit > (source * 0.05).max(1.0));
    let beyond = |l: Duration| l.saturating_sub(sql_delay);
    out.state = match (lag.exact().map(beyond), out.lag_change_s_per_s) {
        (Some(now), _) if now <= CAUGHT_UP => CatchUpState::CaughtUp,
        (Some(now), Some(change)) if change <= -FLAT_S_PER_S => {
            out.eta = Duration::try_from_secs_f64(now.as_secs_f64() / -change).ok();
            CatchUpState::CatchingUp
        }
        (Some(_), Some(change)) if change >= FLAT_S_PER_S => CatchUpState::FallingBehind,
        (Some(_), Some(_)) => CatchUpState::NotShrinking,
        // A bound (a fresh rwtop, a replica that has not applied its first heartbeat) or no
        // trend yet: only the rates can tell, and only that it falls behind.
        _ if lag.value().is_some() && outrun => CatchUpState::FallingBehind,
        _ => CatchUpState::Unknown,
    };
    out
}

/// The source's transactions and bytes per second over its polls since `from_ms`.
fn source_rates(source: &SourceInput<'_>, from_ms: u64) -> (Option<f64>, Option<f64>) {
    let mut polls = source.writes.points.iter().filter(|w| w.at_ms >= from_ms);
    let (Some(first), Some(last)) = (polls.next(), polls.next_back()) else {
        return (None, None);
    };
    let span_ms = last.at_ms.saturating_sub(first.at_ms);
    if Duration::from_millis(span_ms) < MIN_SPAN / 2 {
        return (None, None);
    }
    let trx = last
        .gtid
        .as_ref()
        .zip(first.gtid.as_ref())
        .and_then(|(now, then)| now.since(then, None))
        .and_then(|n| per_second(n, span_ms));
    let bytes = last
        .head
        .as_ref()
        .zip(first.head.as_ref())
        .and_then(|(now, then)| bytes_between(&reached(source.files, now), then, now))
        .and_then(|b| per_second(u128::from(b), span_ms));
    (trx, bytes)
}

#[expect(clippy::cast_precision_loss, reason = "rates, not counts")]
fn per_second(amount: u128, span_ms: u64) -> Option<f64> {
    (span_ms > 0).then(|| amount as f64 * 1000.0 / span_ms as f64)
}

/// The least-squares slope of `(ms, ms)` points, in ms per ms (= s/s); `None` below
/// [`MIN_POINTS`] points or [`MIN_SPAN`].
#[expect(
    clippy::cast_precision_loss,
    reason = "an hour of milliseconds at most"
)]
fn slope(points: impl Iterator<Item = (u64, u64)>) -> Option<f64> {
    let points: Vec<(u64, u64)> = points.collect();
    let (first, last) = (points.first()?.0, points.last()?.0);
    if points.len() < MIN_POINTS || Duration::from_millis(last - first) < MIN_SPAN {
        return None;
    }
    let n = points.len() as f64;
    // Centred on the first point, so the sums stay small.
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|&(x, y)| ((x - first) as f64, y as f64))
        .collect();
    let mean_x = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = xy.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
#[path = "apply_rate/tests.rs"]
mod tests;
