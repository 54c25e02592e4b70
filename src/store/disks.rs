//! Disk headroom: each opted-in node's disks (`mysql/disks.rs`), which of its directories lies
//! on which, how fast each fills, and when it would be full.
//!
//! The fill rate is the faster of two measures. The disk's own: the fall of its free space over
//! the reads of the last [`FILL_WINDOW`] (one read every 10 s), at least [`FILL_MIN_SPAN`]
//! apart, which counts an `ALTER`'s copy and temporary files and every other writer on the disk.
//! And the logs': the relay logs' net growth and the binlog rate of the directories on that
//! disk, which rwtop measures every poll and has from the start. A disk is as near full as the
//! faster measure says; on a disk other programs share, its own rate moves with them.
//!
//! A rate is only worth extrapolating while something on the node writes steadily: an `ALTER`
//! runs there (the processlist shows it) or a channel's relay log grows (a stopped applier, a
//! catch-up). Then the pane says "full in ~N min at this rate"; otherwise it says it cannot
//! tell, never a figure drawn from noise (a disk shared with other programs moves by itself).

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::mysql::{DisksRead, DisksUnavailable, disk_of};

/// How far back a disk's fill rate looks.
pub const FILL_WINDOW: Duration = Duration::from_secs(60);
/// Least time between the first and last read of the window before the disk's own rate is used.
pub const FILL_MIN_SPAN: Duration = Duration::from_secs(15);
/// A relay log growing at least this fast is a reason to extrapolate (below it, a relay log
/// that takes in only the heartbeat).
pub const RELAY_GROWING_BYTES_PER_S: f64 = 1024.0;

/// The reads of one node's disks.
#[derive(Debug, Clone, Default)]
pub struct DiskTrack {
    newest: Option<(Instant, DisksRead, Duration)>,
    /// Free bytes per disk (by mount path) at each read of the window.
    free: BTreeMap<String, VecDeque<(u64, u64)>>,
}

impl DiskTrack {
    /// One read sent at `at` (`at_ms` since the store's start) that took `took`.
    pub fn record(&mut self, at: Instant, at_ms: u64, read: DisksRead, took: Duration) {
        let window = u64::try_from(FILL_WINDOW.as_millis()).unwrap_or(u64::MAX);
        match &read.disks {
            Ok(disks) => {
                self.free
                    .retain(|path, _| disks.iter().any(|d| &d.path == path));
                for d in disks {
                    let points = self.free.entry(d.path.clone()).or_default();
                    points.push_back((at_ms, d.available));
                    while points
                        .front()
                        .is_some_and(|&(t, _)| at_ms.saturating_sub(t) > window)
                    {
                        points.pop_front();
                    }
                }
            }
            Err(_) => self.free.clear(),
        }
        self.newest = Some((at, read, took));
    }

    /// Bytes a disk loses per second over the window (negative: it gains); `None` before two
    /// reads [`FILL_MIN_SPAN`] apart.
    fn fill_rate(&self, path: &str) -> Option<f64> {
        let points = self.free.get(path)?;
        let (&(t0, a0), &(t1, a1)) = (points.front()?, points.back()?);
        let span = Duration::from_millis(t1.saturating_sub(t0));
        if span < FILL_MIN_SPAN {
            return None;
        }
        #[expect(clippy::cast_precision_loss, reason = "free bytes, a rate")]
        let fall = a0 as f64 - a1 as f64;
        Some(fall / span.as_secs_f64())
    }

    /// The node's disks as of `now`, with what writes there now: `growth` is what rwtop
    /// measures itself per directory role (`relay log`, `binlog`: bytes per second), `ddl` the
    /// schema change the processlist shows running (its statement), if any.
    #[must_use]
    pub fn view(
        &self,
        now: Instant,
        replicates: bool,
        growth: &[(&str, f64)],
        ddl: Option<&str>,
    ) -> Option<DisksView> {
        let (at, read, took) = self.newest.as_ref()?;
        let age = now.saturating_duration_since(*at);
        let named = read.dirs.named(replicates);
        let disks = match &read.disks {
            Err(why) => {
                return Some(DisksView {
                    unavailable: Some(why.clone()),
                    disks: Vec::new(),
                    age,
                    took: *took,
                });
            }
            Ok(disks) => disks,
        };
        let relay_growing: f64 = growth
            .iter()
            .filter(|(role, _)| *role == "relay log")
            .map(|(_, g)| *g)
            .sum();
        let mut reason = Vec::new();
        if let Some(statement) = ddl {
            reason.push(format!("a schema change runs ({statement})"));
        }
        if relay_growing >= RELAY_GROWING_BYTES_PER_S {
            reason.push(format!(
                "the relay log grows {}",
                crate::units::byte_rate(relay_growing)
            ));
        }
        let views = disks
            .iter()
            .map(|d| {
                let holds: Vec<String> = named
                    .iter()
                    .filter(|(_, dir)| disk_of(disks, dir).is_some_and(|on| on.path == d.path))
                    .map(|(role, _)| (*role).to_owned())
                    .collect();
                let logs: f64 = growth
                    .iter()
                    .filter(|(role, _)| holds.iter().any(|h| h == role))
                    .map(|(_, g)| g.max(0.0))
                    .sum();
                // The faster of the two: a disk is as near full as the faster measure says
                // (the disk's own counts other writers too; the logs' is there from the start).
                let measured = self.fill_rate(&d.path);
                let from_logs = (logs > 0.0).then_some(logs);
                let rate = match (measured, from_logs) {
                    (Some(m), Some(l)) => Some(m.max(l)),
                    (m, l) => m.or(l),
                };
                let measured = measured.filter(|m| rate == Some(*m));
                let full_in = match rate {
                    Some(r) if r > 0.0 && !reason.is_empty() && !holds.is_empty() => {
                        #[expect(clippy::cast_precision_loss, reason = "free bytes, an estimate")]
                        let secs = d.available as f64 / r;
                        Duration::try_from_secs_f64(secs).ok()
                    }
                    _ => None,
                };
                DiskView {
                    disk: d.disk.clone(),
                    path: d.path.clone(),
                    total: d.total,
                    available: d.available,
                    holds,
                    fill_bytes_per_s: rate,
                    logs_bytes_per_s: from_logs,
                    rate_from_disk: measured.is_some(),
                    full_in,
                    why: reason.join("; "),
                }
            })
            .filter(|v| !v.holds.is_empty())
            .collect();
        Some(DisksView {
            unavailable: None,
            disks: views,
            age,
            took: *took,
        })
    }
}

/// A node's disks as shown: only those holding one of its directories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisksView {
    /// Why the disks cannot be read (with the fix); `None` when they were.
    pub unavailable: Option<DisksUnavailable>,
    pub disks: Vec<DiskView>,
    /// How old the newest read is, and what it cost.
    pub age: Duration,
    pub took: Duration,
}

/// One disk holding some of a node's directories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskView {
    pub disk: String,
    /// Where it is mounted.
    pub path: String,
    pub total: u64,
    pub available: u64,
    /// The node's directories on it: `datadir`, `binlog`, `relay log`, `tmpdir`.
    pub holds: Vec<String>,
    /// Bytes it loses per second (negative: gains); `None` before it can be told.
    pub fill_bytes_per_s: Option<f64>,
    /// What the node's relay logs and binlogs on it grow by, per second; `None` when they do
    /// not grow.
    #[serde(default)]
    pub logs_bytes_per_s: Option<f64>,
    /// Whether that rate is the disk's own (free space over the reads) rather than the logs'.
    pub rate_from_disk: bool,
    /// When it would be full at that rate, while something writes steadily (see
    /// [`Self::why`]); `None`: cannot tell, or not filling.
    pub full_in: Option<Duration>,
    /// What writes steadily on the node now (a schema change, a growing relay log); empty when
    /// nothing does, and then [`Self::full_in`] is not told.
    pub why: String,
}

impl DiskView {
    /// What fills the disk, in words: what writes steadily on the node, and, where the disk's
    /// own fall is the faster, how much of it the node's logs are (the rest is other writers: an
    /// `ALTER`'s files, or programs that share the disk).
    #[must_use]
    pub fn filled_by(&self) -> String {
        match (self.rate_from_disk, self.fill_bytes_per_s) {
            (true, Some(rate)) => format!(
                "{}; the disk's free space falls {}, of which the node's logs grow {}",
                self.why,
                crate::units::byte_rate(rate),
                crate::units::byte_rate(self.logs_bytes_per_s.unwrap_or(0.0))
            ),
            _ => self.why.clone(),
        }
    }

    /// The pane's and the alert's words for when it fills.
    #[must_use]
    pub fn outlook(&self) -> String {
        match (self.full_in, self.fill_bytes_per_s) {
            (Some(eta), Some(rate)) => format!(
                "full in {} at {}",
                crate::units::eta(eta),
                crate::units::byte_rate(rate)
            ),
            _ if self.why.is_empty() => {
                "cannot tell when full: no ALTER runs and no relay log grows".to_owned()
            }
            (None, Some(rate)) if rate <= 0.0 => "not filling".to_owned(),
            _ => "cannot tell when full yet: too few reads".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::{DataDirs, Disk};

    fn read(available: u64) -> DisksRead {
        DisksRead {
            dirs: DataDirs {
                datadir: Some("/var/lib/mysql/".into()),
                binlog: Some("/var/lib/mysql/bin".into()),
                relay_log: Some("/var/lib/mysql/relay".into()),
                tmpdir: Some("/tmp".into()),
            },
            disks: Ok(vec![
                Disk {
                    disk: "/dev/vda".into(),
                    path: "/".into(),
                    total: 10_000_000,
                    used: 0,
                    available: 5_000_000,
                },
                Disk {
                    disk: "/dev/vdb".into(),
                    path: "/var/lib/mysql".into(),
                    total: 10_000_000,
                    used: 0,
                    available,
                },
            ]),
        }
    }

    #[test]
    fn a_disk_fills_at_its_own_rate_only_while_something_writes_steadily() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut track = DiskTrack::default();
        track.record(t0, 0, read(1_000_000), ms(2));
        // One read: the relay log's growth stands in, while it grows.
        let relay = [("relay log", 10_000.0)];
        let view = track.view(at(100), true, &relay, None).unwrap();
        let data = &view.disks[1];
        assert_eq!(data.holds, ["datadir", "binlog", "relay log"]);
        assert_eq!(view.disks[0].holds, ["tmpdir"]);
        assert!(!data.rate_from_disk);
        assert_eq!(data.full_in, Some(Duration::from_secs(100)));
        // Two reads 20 s apart: the disk's own rate (2 kB/s here), when it is the faster.
        track.record(at(20_000), 20_000, read(960_000), ms(2));
        let data = &track.view(at(20_000), true, &relay, None).unwrap().disks[1];
        assert!(!data.rate_from_disk);
        assert_eq!(data.fill_bytes_per_s, Some(10_000.0));
        let slow = [("relay log", 1_500.0)];
        let data = &track.view(at(20_000), true, &slow, None).unwrap().disks[1];
        assert!(data.rate_from_disk);
        assert_eq!(data.fill_bytes_per_s, Some(2_000.0));
        assert_eq!(data.full_in, Some(Duration::from_secs(480)));
        assert!(
            data.outlook().starts_with("full in ~8m"),
            "{}",
            data.outlook()
        );
        // Nothing writes steadily: no figure, and it says so.
        let data = &track
            .view(at(20_000), true, &[("relay log", 0.0)], None)
            .unwrap()
            .disks[1];
        assert_eq!(data.full_in, None);
        assert!(data.outlook().contains("cannot tell"), "{}", data.outlook());
        // An ALTER runs: the disk's rate again.
        let view = track
            .view(at(20_000), true, &[], Some("ALTER TABLE t FORCE"))
            .unwrap();
        assert_eq!(view.disks[1].full_in, Some(Duration::from_secs(480)));
        assert!(view.disks[1].why.contains("ALTER TABLE t FORCE"));
        // Unreadable: why, and no disks.
        let mut read = read(0);
        read.disks = Err(DisksUnavailable::NoPlugin);
        track.record(at(30_000), 30_000, read, ms(1));
        let view = track.view(at(30_000), true, &relay, None).unwrap();
        assert_eq!(view.unavailable, Some(DisksUnavailable::NoPlugin));
        assert!(view.disks.is_empty());
    }
}
