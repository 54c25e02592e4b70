//! Recordings: store snapshots written to a JSON Lines file as they are published, and played
//! back later into the same TUI (`rwtop --record FILE`, `rwtop replay FILE`).
//!
//! The file is a header line and then one frame per line, at most one frame per
//! [`FRAME_PERIOD`]:
//!
//! ```text
//! {"rwtop_recording":1,"rwtop_version":"0.1.0","started_at":"…","frame_period_ms":1000,
//!  "thresholds":{"routing_max_lag_seconds":1.0,"report_quiet_seconds":10.0}}
//! {"snapshot":{…, "series":[] per replica},"charts":{"r1":{"len":900,"new_points":[…]}}}
//! ```
//!
//! A snapshot's chart series is the last 15 minutes of one replica (about 21 KiB of JSON each),
//! nearly all of it already in the previous frame, so a frame carries the snapshot with its
//! series emptied and, per replica, only the points newer than the previous frame's plus the
//! series' length; [`Recording`] rebuilds each series on replay. The alert log, the recent test
//! reads and the drain log are carried the same way (length plus new entries). The rest is
//! written as it is, which keeps a recording readable with `jq` and makes a replayed frame the
//! very snapshot the live TUI drew.
//!
//! Each frame goes to the file in one write as soon as it is made, so a crash loses at most the
//! second being written; a last line cut short that way is tolerated on replay.

mod lists;
mod player;
mod recorder;
mod recording;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use player::{Player, ReplayStatus, Speed};
pub use recorder::{RecordError, Recorder, Summary};
pub use recording::{Recording, ReplayError};

use crate::store::series::Point;

/// The version in the header; bumped when a frame's layout changes in a way an older reader
/// would misread. 2: a node's facts are in parts (`store/node_parts.rs`); format 1's flat
/// nodes are still read.
pub const FORMAT_VERSION: u32 = 2;

/// At most one frame per period: the store publishes every 250 ms, but a second is finer than
/// anything a person reviews afterwards and keeps a 3-replica recording near 20 MiB an hour.
pub const FRAME_PERIOD: Duration = Duration::from_secs(1);

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format version; the key itself says what the file is.
    pub rwtop_recording: u32,
    /// The rwtop that recorded it (snapshots follow that version's layout).
    pub rwtop_version: String,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// Frames were written at most this often.
    pub frame_period_ms: u64,
    /// What the recording rwtop judged by, so that `rwtop report` marks the same crossings;
    /// `None` in recordings made before it was written (and by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<RecordedThresholds>,
}

/// The thresholds a recording was made with: the routing threshold (a replica above it is
/// behind, in the alerts and in a DDL window's report) and the calm that closes a report's
/// window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecordedThresholds {
    pub routing_max_lag_seconds: f64,
    pub report_quiet_seconds: f64,
}

impl Header {
    #[must_use]
    pub fn new(started_at: chrono::DateTime<chrono::Utc>) -> Self {
        Self {
            rwtop_recording: FORMAT_VERSION,
            rwtop_version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at,
            frame_period_ms: u64::try_from(FRAME_PERIOD.as_millis()).unwrap_or(u64::MAX),
            thresholds: None,
        }
    }
}

/// The key of channel `index` of `node` in a frame's `charts`: the node's name for its first
/// channel (the one recordings before several channels carried), `node/channel` for the others.
fn chart_key(node: &crate::store::NodeView, index: usize) -> std::borrow::Cow<'_, str> {
    match node.channels.get(index) {
        Some(c) if node.replica_index() != Some(index) => {
            std::borrow::Cow::Owned(format!("{}/{}", node.name, c.channel))
        }
        _ => std::borrow::Cow::Borrowed(node.name.as_str()),
    }
}

/// One channel's chart in a frame: the series' length, and the points not in an earlier frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Chart<P> {
    len: usize,
    new_points: P,
}

/// One line after the header. `S` and `P` are borrowed when writing, owned when reading.
#[derive(Debug, Serialize, Deserialize)]
struct Frame<S, P> {
    snapshot: S,
    /// By [`chart_key`]: every channel has one (recordings before 1.4's channels: every
    /// node's first channel only, the others' series left in the snapshot).
    charts: BTreeMap<String, Chart<P>>,
    /// The alert log, recent test reads and drain log, emptied in `snapshot`; absent in a
    /// frame that carries them whole in the snapshot.
    #[serde(default)]
    lists: Option<lists::Lists>,
}

type ReadFrame = Frame<crate::store::Snapshot, Vec<Point>>;
