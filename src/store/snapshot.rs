//! Immutable pictures of the store. The TUI, JSON, recordings and metrics all read these, so they
//! show the same truth.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::backlog::{BytesBehind, GtidBacklog};
use super::lag::Lag;
pub use super::node_parts::{
    BinlogView, ClockView, LiveParts, ProcessScan, Scanned, ServerIdentity,
};
use super::windows::{Window, WindowStats};
use crate::mysql::{BinlogPos, GtidState, IoRunning, ThreadError};
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
    /// Each Galera cluster as one unit (`store/cluster.rs`); empty without one, and in
    /// recordings made before they were seen as clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<super::cluster::ClusterView>,
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

/// One node as published: who it is and how it is reached, then its parts
/// (`store/node_parts.rs`), each one concern a poll reports, and its replication channels.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "super::snapshot_wire::NodeViewWire")]
pub struct NodeView {
    pub name: String,
    pub address: String,
    pub role: Role,
    /// Name of the node this one replicates from (its first channel's source, when known).
    pub source: Option<String>,
    pub configured: bool,
    pub conn: ConnState,
    /// What the server is: kept while it does not answer.
    pub identity: ServerIdentity,
    /// Status samples taken so far: a new value means a new sample to judge.
    pub sample_seq: u64,
    /// Age of the newest status sample; the values below are that old.
    pub sample_age: Option<Duration>,
    /// The server's clock against this host's, once estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockView>,
    /// The load balancer's word for this node (`READY`, `DRAIN`, ...) when drains are
    /// configured; rwtop's own intent (`DRAIN`) until the balancer's view is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lb: Option<String>,
    /// The node's GTID state from the newest sample it ever answered, kept after it stops
    /// answering (then [`Self::sample_age`] old): what a dead primary last had, for the
    /// failover exposure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_gtid: Option<GtidState>,
    /// What this run needs that the node's account lacks, each with what goes off without it
    /// and the fix, as last read (at connect and every 10 s); kept while the node does not
    /// answer, since a missing grant may be why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_grants: Vec<crate::mysql::grants::MissingGrant>,
    /// Every replication channel, in the server's order: empty on a node that replicates from
    /// nobody. A node that stops answering keeps the channels it last showed, each
    /// [`ReplicaView::unanswered`]: a channel is never hidden because its node went quiet.
    #[serde(default)]
    pub channels: Vec<ReplicaView>,
    /// What the node reports only while it answers; `None` while it does not (or before its
    /// first sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveParts>,
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

    /// `read_only` while the node answers.
    #[must_use]
    pub fn read_only(&self) -> Option<bool> {
        self.live.as_ref().map(|l| l.read_only)
    }

    /// The node's own GTID state while it answers.
    #[must_use]
    pub fn gtid(&self) -> Option<&GtidState> {
        self.live.as_ref().map(|l| &l.gtid)
    }

    /// The health lint's settings while the node answers.
    #[must_use]
    pub fn settings(&self) -> Option<&crate::mysql::SafetySettings> {
        self.live.as_ref()?.settings.as_ref()
    }

    /// Semi-sync while the node answers, where a plugin is loaded.
    #[must_use]
    pub fn semisync(&self) -> Option<&super::semisync::SemiSyncView> {
        self.live.as_ref()?.semisync.as_ref()
    }

    /// The node as a Galera member, while it answers; `None` on any other node.
    #[must_use]
    pub fn galera(&self) -> Option<&super::galera::GaleraView> {
        self.live.as_ref()?.galera.as_ref()
    }

    /// The node's disks while it answers, where they are read.
    #[must_use]
    pub fn disks(&self) -> Option<&super::disks::DisksView> {
        self.live.as_ref()?.disks.as_ref()
    }

    /// The node's binlog while it answers; empty otherwise.
    #[must_use]
    pub fn binlog(&self) -> &BinlogView {
        static NONE: BinlogView = BinlogView {
            head: None,
            files: Vec::new(),
            rate: None,
        };
        self.live.as_ref().map_or(&NONE, |l| &l.binlog)
    }

    /// The newest processlist scan while the node answers, however old.
    #[must_use]
    pub fn scan(&self) -> Option<&Scanned<ProcessScan>> {
        self.live.as_ref()?.scan.as_ref()
    }

    /// That scan, only when the newest sample carried it: what rules that count samples judge.
    #[must_use]
    pub fn fresh_scan(&self) -> Option<&ProcessScan> {
        self.scan()
            .filter(|s| s.fresh_at(self.sample_seq))
            .map(|s| &s.value)
    }

    /// Schema changes the newest scan found running (none while the node does not answer).
    #[must_use]
    pub fn ddl(&self) -> &[crate::mysql::DdlStatement] {
        self.scan().map_or(&[], |s| &s.value.ddl)
    }

    /// Online schema change runs the newest look found (none while the node does not answer).
    #[must_use]
    pub fn osc(&self) -> &[crate::mysql::OscRun] {
        self.live
            .as_ref()
            .and_then(|l| l.osc.as_ref())
            .map_or(&[], |o| &o.value)
    }

    /// Whether the newest sample looked for online schema change runs.
    #[must_use]
    pub fn osc_fresh(&self) -> bool {
        self.live
            .as_ref()
            .and_then(|l| l.osc.as_ref())
            .is_some_and(|o| o.fresh_at(self.sample_seq))
    }
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
