//! The lag series a what-if reads: every replica channel's points gathered from snapshots (a
//! live engine's, or a recording's frames), and the check that they are enough.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::store::Snapshot;
use crate::store::series::Point;

/// A what-if needs at least this much known lag on one channel, beyond the longest setting's
/// horizon.
pub const MIN_KNOWN: Duration = Duration::from_secs(30);

/// One replica channel's gathered points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelSeries {
    pub node: String,
    /// `''` is the default channel.
    pub channel: String,
    #[serde(skip)]
    pub points: Vec<Point>,
}

impl ChannelSeries {
    /// `node`, or `node/channel` for a named channel (as `rwtop probe` targets are written).
    #[must_use]
    pub fn label(&self) -> String {
        if self.channel.is_empty() {
            self.node.clone()
        } else {
            format!("{}/{}", self.node, self.channel)
        }
    }
}

/// Gathers points from snapshots in time order: each snapshot's series is the last stretch of
/// the channel's, so only points newer than those already held are taken.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    channels: BTreeMap<(String, String), Vec<Point>>,
    heartbeat: Option<Duration>,
}

impl Collector {
    pub fn add(&mut self, snapshot: &Snapshot) {
        self.heartbeat = Some(snapshot.heartbeat.interval);
        for node in &snapshot.nodes {
            for channel in &node.channels {
                let held = self
                    .channels
                    .entry((node.name.clone(), channel.channel.clone()))
                    .or_default();
                let last = held.last().map(|p| p.at_ms);
                let new = channel
                    .series
                    .since(last.map_or(0, |l| l.saturating_add(1)));
                held.extend(new.copied());
            }
        }
    }

    /// The newest point's time (ms since the store's start), to pick the next frame to read.
    #[must_use]
    pub fn newest_ms(&self) -> Option<u64> {
        self.channels
            .values()
            .filter_map(|p| p.last().map(|p| p.at_ms))
            .max()
    }

    /// The heartbeat interval the snapshots reported (250 ms when none was added).
    #[must_use]
    pub fn heartbeat(&self) -> Duration {
        self.heartbeat.unwrap_or(Duration::from_millis(250))
    }

    #[must_use]
    pub fn into_channels(self) -> Vec<ChannelSeries> {
        self.channels
            .into_iter()
            .map(|((node, channel), points)| ChannelSeries {
                node,
                channel,
                points,
            })
            .collect()
    }
}

/// Why the series cannot carry a what-if, and what it would take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error(
        "{origin} holds no replica channel: a what-if reads the lag of replicas; watch or record a topology with at least one replica"
    )]
    NoReplica { origin: String },
    #[error(
        "{origin} has no heartbeat lag on any replica ({without}): rwtop measures lag with its heartbeat row, which read-only mode or a stopped writer does not write; run rwtop with writes allowed on the primary"
    )]
    NoLag { origin: String, without: String },
    #[error(
        "{origin} holds {have} of known heartbeat lag on its best channel ({best}); the what-if needs at least {need} on one channel (30 s plus the longest setting and read delay): record longer (rwtop --record FILE for a few minutes), or run rwtop whatif live with a longer --duration{without}"
    )]
    TooShort {
        origin: String,
        best: String,
        have: String,
        need: String,
        /// Channels with no lag at all, named, or empty.
        without: String,
    },
}
