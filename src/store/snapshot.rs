//! Immutable pictures of the store. The TUI, JSON, recordings and metrics all read these, so they
//! show the same truth.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::backlog::{BytesBehind, GtidBacklog};
use super::lag::Lag;
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
    /// Failover exposure per root (`alerts/exposure.rs`), judged by the engine with the
    /// alerts; empty as the store builds it, and in recordings made before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exposure: Vec<super::exposure::ClusterExposure>,
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
    /// Every root's heartbeat, the one above first: a topology with two writable roots (two
    /// primaries feeding an aggregator) has a row and a writer on each. Empty in read-only mode.
    #[serde(default)]
    pub roots: Vec<RootBeat>,
}

/// One root's heartbeat row and the writer that bumps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RootBeat {
    pub writer_id: String,
    /// The node written to; it changes after a failover.
    pub node: Option<String>,
    pub writer: WriterState,
    pub last_seq: Option<u64>,
    pub last_ack_age: Option<Duration>,
    pub stale: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeView {
    pub name: String,
    pub address: String,
    pub role: Role,
    /// Name of the node this one replicates from (its first channel's source, when known).
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
    /// How far that estimate may be off: half the round trip it was read with.
    pub clock_error_ms: Option<i64>,
    /// The newest processlist summary (read every few polls).
    pub processes: Option<crate::mysql::ProcessSummary>,
    /// Schema changes running on this node (from the newest processlist scan).
    pub ddl: Vec<crate::mysql::DdlStatement>,
    /// The newest sample carried that scan: `processes` and `ddl` are as of `sample_seq`, not
    /// an older sample's (rules about them judge only such samples).
    #[serde(default)]
    pub processes_fresh: bool,
    /// Online schema change runs on this node (a writable root), from the newest look for the
    /// tools' tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub osc: Vec<crate::mysql::OscRun>,
    /// The newest sample looked for them: `osc` is as of `sample_seq`.
    #[serde(default)]
    pub osc_fresh: bool,
    /// Status samples taken so far: a new value means a new sample to judge.
    pub sample_seq: u64,
    /// MySQL only.
    pub server_uuid: Option<String>,
    /// The node's own GTID state from the newest sample, while it answers.
    pub gtid: Option<crate::mysql::GtidState>,
    /// The same from the newest sample it ever answered, kept after it stops answering (then
    /// [`Self::sample_age`] old): what a dead primary last had, for the failover exposure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_gtid: Option<crate::mysql::GtidState>,
    /// The load balancer's word for this node (`READY`, `DRAIN`, ...) when drains are
    /// configured; rwtop's own intent (`DRAIN`) until the balancer's view is read.
    #[serde(default)]
    pub lb: Option<String>,
    /// Every replication channel, in the server's order: empty on a node that replicates from
    /// nobody. A node that stops answering keeps the channels it last showed, each
    /// [`ReplicaView::unanswered`]: a channel is never hidden because its node went quiet.
    /// Recordings before schema 1.4 held one channel under `replica`.
    #[serde(alias = "replica", deserialize_with = "one_or_many", default)]
    pub channels: Vec<ReplicaView>,
    /// The health lint's settings, as last read (at connect and every few minutes), while the
    /// node answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<crate::mysql::SafetySettings>,
    /// What this run needs that the node's account lacks, each with what goes off without it
    /// and the fix, as last read (at connect and every 10 s); kept while the node does
    /// not answer, since a missing grant may be why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_grants: Vec<crate::mysql::grants::MissingGrant>,
    /// The node's own binlog coordinate (`SHOW BINLOG STATUS`) from the newest sample, while it
    /// answers: read only on a node a watched replica replicates from (or while a node has not
    /// answered yet); `None` on a leaf and where binary logging is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binlog_head: Option<crate::mysql::BinlogPos>,
    /// The node's binlogs (`SHOW BINARY LOGS`), oldest first, while the node answers: what its
    /// replicas can still fetch. Read when a node begins to feed a replica, at once after each
    /// rotation and every minute (a `PURGE`); the newest file's size follows
    /// [`Self::binlog_head`]. Read only where the coordinate is; empty on a leaf.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binlog_files: Vec<crate::mysql::BinlogFile>,
    /// Semi-sync, while the node answers: the source side's state and ACK waits on a primary,
    /// the replica side's on a replica; `None` where neither plugin is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semisync: Option<super::semisync::SemiSyncView>,
    /// How fast the node writes its binlog, where its list is read (`store/headroom.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binlog_rate: Option<super::headroom::BinlogRate>,
    /// The disks holding the node's directories, where the operator opted in to reading them
    /// (`store/disks.rs`); `None` when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disks: Option<super::disks::DisksView>,
}

impl NodeView {
    /// The node's first channel: the default one (`''`) when it has one. What a caller that
    /// judges a node as a whole (a router, a failover, the header) reads; everything that shows
    /// or alerts on replication reads [`Self::channels`].
    #[must_use]
    pub fn replica(&self) -> Option<&ReplicaView> {
        self.channels.get(self.replica_index()?)
    }

    /// [`Self::replica`], to change.
    pub fn replica_mut(&mut self) -> Option<&mut ReplicaView> {
        let index = self.replica_index()?;
        self.channels.get_mut(index)
    }

    /// Where [`Self::replica`] is in [`Self::channels`].
    #[must_use]
    pub fn replica_index(&self) -> Option<usize> {
        if self.channels.is_empty() {
            return None;
        }
        Some(
            self.channels
                .iter()
                .position(|c| c.channel.is_empty())
                .unwrap_or(0),
        )
    }

    /// One channel by name (`''` the default).
    #[must_use]
    pub fn channel(&self, name: &str) -> Option<&ReplicaView> {
        self.channels.iter().find(|c| c.channel == name)
    }

    /// The node's lag as a whole: the worst of its channels' (a read there is only as fresh as
    /// its furthest-behind channel); `None` on a node with no channel.
    #[must_use]
    pub fn lag(&self) -> Option<Lag> {
        super::roots::worst(self.channels.iter().map(|c| c.heartbeat_lag.clone()))
    }

    /// Whether this node replicates on more than one channel (then each is shown by name).
    #[must_use]
    pub fn is_multi_source(&self) -> bool {
        self.channels.len() > 1
    }

    /// Whether the node answers now: only then do its channels carry live values (threads,
    /// SBM, positions, backlog); otherwise each is [`ReplicaView::unanswered`].
    #[must_use]
    pub fn answers(&self) -> bool {
        self.conn == ConnState::Up
    }
}

/// A recording's `replica` (one channel or null, schema ≤ 1.3) or `channels` (a list).
fn one_or_many<'de, D>(deserializer: D) -> Result<Vec<ReplicaView>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<ReplicaView>),
        One(Box<ReplicaView>),
    }
    Ok(match Option::<OneOrMany>::deserialize(deserializer)? {
        None => Vec::new(),
        Some(OneOrMany::Many(channels)) => channels,
        Some(OneOrMany::One(channel)) => vec![*channel],
    })
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplicaView {
    /// The channel (`MySQL`) or connection name (`MariaDB`); `''` is the default one.
    pub channel: String,
    /// The node this channel replicates from, when rwtop polls it.
    #[serde(default)]
    pub source: Option<String>,
    /// Where the channel's source is, as the replica reports it (`host:port`).
    #[serde(default)]
    pub source_address: String,
    /// In a cascade, this hop's own share of the lag: the channel's lag less its source's own
    /// (both from the same root's heartbeat). `None` when the source is a root (the whole lag
    /// is this hop's) or either figure is unknown.
    #[serde(default)]
    pub hop_lag: Option<Duration>,
    pub io_running: IoRunning,
    pub sql_running: bool,
    pub io_state: String,
    pub sql_state: String,
    /// NULL from the server stays `None`.
    pub seconds_behind_source: Option<u64>,
    pub heartbeat_lag: Lag,
    /// The heartbeat lag in two parts, transport and apply (`store/lag_split.rs`).
    #[serde(default)]
    pub lag_split: super::lag_split::LagSplit,
    pub windows: Vec<(Window, Option<WindowStats>)>,
    pub gtid_backlog: GtidBacklog,
    pub bytes_behind: BytesBehind,
    /// The GTIDs the channel has received (`store/exposure.rs`), while its node answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_gtid: Option<super::exposure::Held>,
    pub received: BinlogPos,
    pub applied: BinlogPos,
    pub sql_delay: Option<u64>,
    pub sql_remaining_delay: Option<u64>,
    pub last_io_error: Option<ThreadError>,
    pub last_sql_error: Option<ThreadError>,
    /// The last 15 minutes at the poll interval, for charts; `at_ms` counts from the store's
    /// start.
    /// Saved as a plain list, so a recorded snapshot still draws its chart.
    pub series: super::series::Chart,
    /// Every exact heartbeat lag since rwtop started, in fixed buckets (Prometheus).
    #[serde(default)]
    pub lag_histogram: super::histogram::LagHistogram,
    /// While the replica has a `SQL_Delay` (and for a minute after it is removed): its lag less
    /// the delay, which the lag alerts judge it on. The lag above stays the true one.
    #[serde(default)]
    pub beyond_delay: Option<LagBeyondDelay>,
    /// Parallel appliers: workers, busy ones at the newest scan, retries, groups.
    #[serde(default)]
    pub appliers: super::ApplierView,
    /// Apply rate against the source's write rate, the lag trend and the ETA
    /// (`store/apply_rate.rs`); unknown in recordings made before it existed.
    #[serde(default)]
    pub catch_up: super::apply_rate::CatchUp,
    /// The link's heartbeat period, TLS, filters, `UNTIL` and skip counter, as of the newest
    /// status poll (the health lint judges them); unknown while the node does not answer.
    #[serde(default)]
    pub link: crate::mysql::LinkHygiene,
    /// The relay log's size and growth (`store/headroom.rs`).
    #[serde(default)]
    pub relay_growth: super::headroom::RelayGrowth,
    /// A delayed channel's protection window (`store/protection.rs`); `None` without a delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<super::protection::Protection>,
}

impl ReplicaView {
    /// This channel as a node that does not answer shows it: what identifies it (its name, its
    /// source and the source's address, as last reported) and its history (windows, chart,
    /// histogram: readings taken while it answered) stay; its lag is unknown for `reason`, and
    /// every live value is unknown rather than its last one: threads not running, SBM, backlog,
    /// delay and errors `None`, positions and states empty. Whoever shows threads or positions
    /// asks [`NodeView::answers`] first.
    #[must_use]
    pub fn unanswered(self, reason: String) -> Self {
        Self {
            channel: self.channel,
            source: self.source,
            source_address: self.source_address,
            hop_lag: None,
            io_running: IoRunning::No,
            sql_running: false,
            io_state: String::new(),
            sql_state: String::new(),
            seconds_behind_source: None,
            lag_split: super::lag_split::LagSplit::unknown(&reason),
            heartbeat_lag: Lag::Unknown { reason },
            windows: self.windows,
            gtid_backlog: GtidBacklog::default(),
            bytes_behind: BytesBehind::default(),
            received_gtid: None,
            received: BinlogPos::default(),
            applied: BinlogPos::default(),
            sql_delay: None,
            sql_remaining_delay: None,
            last_io_error: None,
            last_sql_error: None,
            series: self.series,
            lag_histogram: self.lag_histogram,
            beyond_delay: None,
            appliers: super::ApplierView::default(),
            catch_up: super::apply_rate::CatchUp::default(),
            link: crate::mysql::LinkHygiene::default(),
            relay_growth: super::headroom::RelayGrowth::default(),
            protection: None,
        }
    }
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
