//! Immutable pictures of the store. The TUI, JSON, recordings and metrics all read these, so they
//! show the same truth.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::backlog::{BytesBehind, GtidBacklog};
use super::lag::Lag;
use super::series::Point;
use super::windows::{Window, WindowStats};
use crate::mysql::{BinlogPos, IoRunning, ThreadError};
use crate::poll::{ConnState, WriterState};

pub use crate::topology::Role;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// Time since the store started; snapshots are ordered by it.
    pub uptime: Duration,
    pub taken_at: chrono::DateTime<chrono::Utc>,
    pub heartbeat: HeartbeatView,
    pub nodes: Vec<NodeView>,
    /// Judged by the alert engine on this very snapshot (empty as the store builds it: the engine
    /// fills it in before publishing).
    pub alerts: super::alert_view::AlertsView,
    /// Test reads: recent results and a tally per strategy and replica.
    #[serde(default)]
    pub probes: crate::probe::ProbesView,
    /// Drains: rwtop's actions and the load balancer's own view.
    #[serde(default)]
    pub drain: crate::drain::DrainView,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeartbeatView {
    pub interval: Duration,
    /// How often each replica's heartbeat is read now: `read_interval`, or slower past the read
    /// budget of a large topology. `None` outside an engine.
    #[serde(default)]
    pub read_every: Option<Duration>,
    pub writer: WriterState,
    /// The node the writer writes to: the configured primary, or the one that took over from it
    /// after a failover. `None` when rwtop writes nothing.
    #[serde(default)]
    pub node: Option<String>,
    pub last_seq: Option<u64>,
    /// Since the last acknowledged heartbeat; `None` before the first.
    pub last_ack_age: Option<Duration>,
    /// The writer stopped advancing: every "caught up" lag is unknown.
    pub stale: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeView {
    pub name: String,
    pub address: String,
    pub role: Role,
    /// Name of the node this one replicates from (first channel).
    pub source: Option<String>,
    pub configured: bool,
    pub conn: ConnState,
    pub flavor: Option<String>,
    pub version: Option<String>,
    pub server_id: Option<u32>,
    pub read_only: Option<bool>,
    /// Age of the newest status sample; the values below are that old.
    pub sample_age: Option<Duration>,
    /// This server's clock minus rwtop's host clock, estimated from query round trips.
    pub clock_offset_ms: Option<i64>,
    /// The newest processlist summary (read every few polls).
    pub processes: Option<crate::mysql::ProcessSummary>,
    /// Schema changes running on this node (from the newest processlist scan).
    pub ddl: Vec<crate::mysql::DdlStatement>,
    /// The newest sample carried that scan: `processes` and `ddl` are as of `sample_seq`, not
    /// an older sample's (rules about them judge only such samples).
    #[serde(default)]
    pub processes_fresh: bool,
    /// Status samples taken so far: a new value means a new sample to judge.
    pub sample_seq: u64,
    /// MySQL only.
    pub server_uuid: Option<String>,
    /// The node's own GTID state from the newest sample, while it answers.
    pub gtid: Option<crate::mysql::GtidState>,
    /// The load balancer's word for this node (`READY`, `DRAIN`, ...) when drains are
    /// configured; rwtop's own intent (`DRAIN`) until the balancer's view is read.
    #[serde(default)]
    pub lb: Option<String>,
    pub replica: Option<ReplicaView>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicaView {
    pub channel: String,
    pub io_running: IoRunning,
    pub sql_running: bool,
    pub io_state: String,
    pub sql_state: String,
    /// NULL from the server stays `None`.
    pub seconds_behind_source: Option<u64>,
    pub heartbeat_lag: Lag,
    pub windows: Vec<(Window, Option<WindowStats>)>,
    pub gtid_backlog: GtidBacklog,
    pub bytes_behind: BytesBehind,
    pub received: BinlogPos,
    pub applied: BinlogPos,
    pub sql_delay: Option<u64>,
    pub sql_remaining_delay: Option<u64>,
    pub last_io_error: Option<ThreadError>,
    pub last_sql_error: Option<ThreadError>,
    /// The last hour at the poll interval, for charts; `at_ms` counts from the store's start.
    /// Saved as a plain list, so a recorded snapshot still draws its chart.
    pub series: Arc<[Point]>,
    /// Every exact heartbeat lag since rwtop started, in fixed buckets (Prometheus).
    #[serde(default)]
    pub lag_histogram: super::histogram::LagHistogram,
    /// While the replica has a `SQL_Delay` (and for a minute after it is removed): its lag less
    /// the delay, which the lag alerts judge it on. The lag above stays the true one.
    #[serde(default)]
    pub beyond_delay: Option<LagBeyondDelay>,
}

/// A delayed replica's heartbeat lag beyond its intended delay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LagBeyondDelay {
    /// The last minute of exact readings, each less the delay in force when it was read (0 while
    /// within the delay); `None` before the first such reading.
    pub one_minute: Option<WindowStats>,
}

impl Snapshot {
    #[must_use]
    pub fn node(&self, name: &str) -> Option<&NodeView> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Every node's name, for membership tests that would otherwise scan the nodes per node.
    #[must_use]
    pub fn names(&self) -> std::collections::HashSet<&str> {
        self.nodes.iter().map(|n| n.name.as_str()).collect()
    }
}
