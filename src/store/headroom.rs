//! Log headroom: how fast each channel's relay log grows and how fast each node writes its
//! binlog, from figures the status poll already reads.
//!
//! * **Relay growth**: `Relay_Log_Space` (every relay log file of the channel, in bytes) over the
//!   polls of the last [`RELAY_WINDOW`], the net change over the time between the first and the
//!   last. Net: a running applier purges the files it has applied, so a channel that applies as
//!   fast as it receives reads about 0 and one draining its backlog reads negative. What fills a
//!   disk is the net figure. A poll whose row has no such column (or a NULL) ends the window: the
//!   growth is unknown until the window holds enough again, never 0.
//! * **Binlog rate**: bytes a node wrote to its binlogs over the last [`BINLOG_WINDOW`], from
//!   its binlog list (read every minute and at once after a rotation; the newest file follows
//!   the node's coordinate every poll). The bytes written are the sum of every file's size,
//!   counting a file that left the list (a `PURGE`, `expire_logs_days`) at the size it last had:
//!   a purge takes no bytes back. A rotation the list has not caught up with counts the closed
//!   file at the size last seen, and the rest when the list is read again: a little late, never
//!   twice. A file that shrank (`RESET MASTER`, another server behind the same name) restarts
//!   the window.
//!
//! Until a window spans [`MIN_SPAN`] over at least [`MIN_POINTS`] polls, its rate is unknown.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::mysql::BinlogFile;

/// How far back the relay log's growth looks: long enough that the relay log's purges (a whole
/// file at a time) average out at a busy channel, short enough to follow a catch-up.
pub const RELAY_WINDOW: Duration = Duration::from_secs(30);
/// How far back the binlog rate looks: a rate per hour is read over minutes.
pub const BINLOG_WINDOW: Duration = Duration::from_secs(300);
/// Least time between the first and the last poll of a window before its rate is stated.
pub const MIN_SPAN: Duration = Duration::from_secs(5);
/// Fewest polls in a window before its rate is stated.
pub const MIN_POINTS: usize = 3;
/// Polls kept per window at most (a 100 ms poll interval over the binlog window).
const MAX_POINTS: usize = 3_000;

/// Bytes counted at moments (ms since the store's start), at most a window old.
#[derive(Debug, Clone, Default)]
struct Points {
    points: VecDeque<(u64, u64)>,
}

impl Points {
    fn push(&mut self, at_ms: u64, bytes: u64, window: Duration) {
        // A poll older than the newest (never expected) would make the span negative.
        if self.points.back().is_some_and(|&(last, _)| at_ms < last) {
            self.points.clear();
        }
        self.points.push_back((at_ms, bytes));
        let window = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        while self.points.len() > MAX_POINTS
            || self
                .points
                .front()
                .is_some_and(|&(first, _)| at_ms.saturating_sub(first) > window)
        {
            self.points.pop_front();
        }
    }

    /// The net change per second from the first point to the last, and the span it covers;
    /// `None` until the window holds enough.
    fn rate(&self) -> Option<(f64, Duration)> {
        let (&(t0, b0), &(t1, b1)) = (self.points.front()?, self.points.back()?);
        let span = Duration::from_millis(t1.saturating_sub(t0));
        if self.points.len() < MIN_POINTS || span < MIN_SPAN {
            return None;
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "byte counts far below 2^53 per window; a rate, not a count"
        )]
        let change = b1 as f64 - b0 as f64;
        Some((change / span.as_secs_f64(), span))
    }
}

/// A channel's relay log over the last polls.
#[derive(Debug, Clone, Default)]
pub struct RelayHistory {
    points: Points,
    newest: Option<u64>,
}

impl RelayHistory {
    /// One poll's `Relay_Log_Space` (`None`: the row had no such column, or a NULL).
    pub fn record(&mut self, at_ms: u64, space: Option<u64>) {
        self.newest = space;
        match space {
            Some(bytes) => self.points.push(at_ms, bytes, RELAY_WINDOW),
            None => self.points = Points::default(),
        }
    }

    #[must_use]
    pub fn view(&self) -> RelayGrowth {
        let rate = self.points.rate();
        RelayGrowth {
            space: self.newest,
            bytes_per_s: rate.map(|(r, _)| r),
            window: rate.map(|(_, w)| w),
        }
    }
}

/// A channel's relay log: its size and how fast it grows.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RelayGrowth {
    /// `Relay_Log_Space` as last read; `None` where the server does not report it.
    pub space: Option<u64>,
    /// Net growth per second over [`Self::window`]; negative while the relay log shrinks.
    pub bytes_per_s: Option<f64>,
    /// What the rate spans (up to [`RELAY_WINDOW`]).
    pub window: Option<Duration>,
}

/// A node's binlog over the last polls.
#[derive(Debug, Clone, Default)]
pub struct BinlogHistory {
    /// The newest list's files by name, each at the largest size seen.
    sizes: BTreeMap<String, u64>,
    /// Bytes of the files that left the list since the window began.
    gone: u64,
    points: Points,
}

impl BinlogHistory {
    /// One poll's binlog list, its newest file grown to the coordinate; empty where the node
    /// writes no binlog or the list is not read there (a leaf), which ends the window.
    pub fn record(&mut self, at_ms: u64, files: &[BinlogFile]) {
        let shrank = files
            .iter()
            .any(|f| self.sizes.get(&f.name).is_some_and(|&seen| f.size < seen));
        // The newest file numbered below the newest seen: the list started again.
        let number = |name: &str| {
            name.rsplit_once('.')
                .and_then(|(_, n)| n.parse::<u64>().ok())
        };
        let newest = |names: &mut dyn Iterator<Item = &str>| names.filter_map(number).max();
        let restarted = match (
            newest(&mut files.iter().map(|f| f.name.as_str())),
            newest(&mut self.sizes.keys().map(String::as_str)),
        ) {
            (Some(now), Some(before)) => now < before,
            _ => false,
        };
        if files.is_empty() || shrank || restarted {
            *self = Self::default();
            if files.is_empty() {
                return;
            }
        }
        let listed: BTreeMap<String, u64> = files
            .iter()
            .map(|f| {
                let seen = self.sizes.get(&f.name).copied().unwrap_or(0);
                (f.name.clone(), f.size.max(seen))
            })
            .collect();
        let purged = self
            .sizes
            .iter()
            .filter(|(name, _)| !listed.contains_key(*name))
            .fold(0_u64, |total, (_, size)| total.saturating_add(*size));
        self.gone = self.gone.saturating_add(purged);
        self.sizes = listed;
        let written = self
            .sizes
            .values()
            .fold(self.gone, |total, size| total.saturating_add(*size));
        self.points.push(at_ms, written, BINLOG_WINDOW);
    }

    #[must_use]
    pub fn view(&self) -> Option<BinlogRate> {
        if self.sizes.is_empty() {
            return None;
        }
        let rate = self.points.rate();
        Some(BinlogRate {
            bytes_per_s: rate.map(|(r, _)| r.max(0.0)),
            window: rate.map(|(_, w)| w),
            files: self.sizes.len(),
            total: self.sizes.values().fold(0_u64, |t, s| t.saturating_add(*s)),
        })
    }
}

/// How fast a node writes its binlog, where rwtop reads its binlog list.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BinlogRate {
    /// Bytes written per second over [`Self::window`]; `None` until the window holds enough.
    pub bytes_per_s: Option<f64>,
    /// What the rate spans (up to [`BINLOG_WINDOW`]).
    pub window: Option<Duration>,
    /// Binlog files the node keeps now, and their bytes together.
    pub files: usize,
    pub total: u64,
}

impl BinlogRate {
    /// Bytes per hour at the measured rate.
    #[must_use]
    pub fn bytes_per_hour(&self) -> Option<f64> {
        self.bytes_per_s.map(|r| r * 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: u64) -> BinlogFile {
        BinlogFile {
            name: name.to_owned(),
            size,
        }
    }

    #[test]
    fn relay_growth_is_the_net_change_and_unknown_until_the_window_holds_enough() {
        let mut relay = RelayHistory::default();
        relay.record(0, Some(1_000));
        relay.record(1_000, Some(2_000));
        // Two polls a second apart: not yet.
        assert_eq!(relay.view().bytes_per_s, None);
        for i in 2..=10 {
            relay.record(i * 1_000, Some(1_000 + i * 1_000));
        }
        let view = relay.view();
        assert_eq!(view.space, Some(11_000));
        assert_eq!(view.bytes_per_s, Some(1_000.0));
        assert_eq!(view.window, Some(Duration::from_secs(10)));
        // Draining: negative.
        for i in 11..=40 {
            relay.record(i * 1_000, Some(11_000 - (i - 10) * 300));
        }
        assert_eq!(relay.view().bytes_per_s, Some(-300.0));
        // A NULL reads unknown, never 0, and restarts the window.
        relay.record(41_000, None);
        assert_eq!(relay.view(), RelayGrowth::default());
        relay.record(42_000, Some(5));
        assert_eq!(relay.view().bytes_per_s, None);
    }

    #[test]
    fn binlog_rate_survives_rotation_and_purge_and_restarts_on_reset() {
        let mut log = BinlogHistory::default();
        log.record(0, &[file("b.1", 1_000), file("b.2", 100)]);
        log.record(5_000, &[file("b.1", 1_000), file("b.2", 600)]);
        // Rotated before the list caught up: b.2 at its last size, b.3 from the coordinate.
        log.record(
            10_000,
            &[file("b.1", 1_000), file("b.2", 600), file("b.3", 50)],
        );
        // The list read again: b.2 closed at 800; b.1 purged (its bytes stay written).
        log.record(15_000, &[file("b.2", 800), file("b.3", 300)]);
        let rate = log.view().unwrap();
        // Written over 15 s: 700 (b.2) + 300 (b.3).
        assert_eq!(rate.bytes_per_s, Some(1_000.0 / 15.0));
        assert_eq!(rate.bytes_per_hour().map(f64::round), Some(240_000.0));
        assert_eq!((rate.files, rate.total), (2, 1_100));
        // RESET MASTER: a file shrank; the window starts again, unknown until it holds enough.
        log.record(20_000, &[file("b.1", 300)]);
        assert_eq!(log.view().unwrap().bytes_per_s, None);
        // A leaf: no list, no figure.
        log.record(25_000, &[]);
        assert_eq!(log.view(), None);
    }

    /// A recorded status with `column` dropped (an older server) or made NULL.
    fn status_with(path: &str, column: &str, null: bool) -> crate::mysql::ReplicaStatus {
        let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(full).unwrap();
        let changed: String = text
            .lines()
            .filter_map(|line| match line.trim_start().split_once(':') {
                Some((name, _)) if name == column && null => {
                    let pad = line.len() - line.trim_start().len();
                    Some(format!("{}{column}: NULL", " ".repeat(pad)))
                }
                Some((name, _)) if name == column => None,
                _ => Some(line.to_owned()),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let rows = crate::mysql::parse_vertical(&changed).unwrap().rows;
        crate::mysql::ReplicaStatus::from_row(&rows[0]).unwrap()
    }

    #[test]
    fn missing_or_null_columns_read_unknown_never_zero() {
        use crate::mysql::IoRunning;
        use crate::store::lag::Lag;
        use crate::store::protection::Protection;
        let lag = Lag::Exact {
            lag: Duration::from_secs(3_601),
        };
        for path in [
            "mysql-5.7/show_slave_status__delayed.txt",
            "mysql-8.4/show_replica_status__delayed.txt",
            "mariadb-10.11/show_all_slaves_status__delayed.txt",
        ] {
            for null in [false, true] {
                let status = status_with(path, "Relay_Log_Space", null);
                assert_eq!(status.relay_log_space, None, "{path}");
                let mut relay = RelayHistory::default();
                for i in 0..10 {
                    relay.record(i * 1_000, status.relay_log_space);
                }
                assert_eq!(relay.view(), RelayGrowth::default(), "{path}");
                let status = status_with(path, "SQL_Remaining_Delay", null);
                assert_eq!(status.sql_remaining_delay, None, "{path}");
                let p = Protection::of(status.sql_delay, None, IoRunning::Yes, true, &lag).unwrap();
                assert_eq!(p.remaining, None, "{path}");
                // No SQL_Delay column at all: no window, rather than a window of 0.
                let status = status_with(path, "SQL_Delay", null);
                assert_eq!(status.sql_delay, None, "{path}");
                assert_eq!(
                    Protection::of(status.sql_delay, None, IoRunning::Yes, true, &lag),
                    None
                );
            }
        }
    }
}
