//! What the store keeps per node, and how one node becomes a [`NodeView`].

use std::time::{Duration, Instant};

use super::apply_rate::{self, SourceInput, WriteHistory};
use super::backlog::{SourceHistory, bytes_behind, gtid_backlog};
pub use super::channel_entry::ChannelEntry;
use super::clock::ClockEstimate;
use super::node_parts::{BinlogView, ClockView, LiveParts, ProcessScan, Scanned, ServerIdentity};
use super::snapshot::{NodeView, ReplicaView, Role};
use super::windows::Window;
use super::{lag::Lag, lag_split::LagSplit};
use crate::mysql::{BinlogFile, Flavor, Identity, Processlist, ReplicaStatus, SafetySettings};
use crate::poll::{ConnState, NodeSample};

pub struct NodeEntry {
    pub name: String,
    pub address: String,
    pub configured_role: Option<Role>,
    pub configured: bool,
    pub conn: ConnState,
    pub flavor: Option<Flavor>,
    pub identity: Option<Identity>,
    pub sample: Option<NodeSample>,
    /// This node's last few states, against which its replicas' statuses are compared.
    pub as_source: SourceHistory,
    /// The last seconds of this node's own writes, for its replicas' catch-up.
    pub writes: WriteHistory,
    /// The newest binlog list: samples carry one only every few polls.
    pub binlog_files: Vec<BinlogFile>,
    /// The bytes that list says were written, over the last minutes.
    binlog_rate: super::headroom::BinlogHistory,
    /// The opted-in reads of the node's disks.
    pub disks: super::disks::DiskTrack,
    /// The newest processlist scan and the sample that carried it: samples carry one only
    /// every few polls.
    processes: Option<Scanned<Processlist>>,
    /// The lint's settings, read at connect and every few minutes.
    pub settings: Option<SafetySettings>,
    /// The newest online schema change runs read (every few polls on a writable root), and
    /// which sample carried them.
    osc: Option<Scanned<Vec<crate::mysql::OscRun>>>,
    /// Status samples applied so far: rules count consecutive samples by it.
    pub samples: u64,
    /// One per replication channel of the newest sample, in its order.
    pub channels: Vec<ChannelEntry>,
    /// The best estimate of its clock against this host's (`clock.rs`).
    pub clock: Option<ClockEstimate>,
    /// Semi-sync state and the differences of its counters between polls.
    semisync: super::semisync::SemiSyncTrack,
    /// A Galera member's status, counters and lag behind its cluster's writer.
    pub(super) galera: super::galera::GaleraTrack,
}

/// A channel of the view under construction: the status, and where its source is known.
pub struct ChannelSource<'a> {
    pub name: Option<String>,
    pub entry: Option<&'a NodeEntry>,
}

/// What the store knows of a node beyond its polls, for its view.
pub struct Outside {
    /// The load balancer's word for it, where drains are configured.
    pub lb: Option<String>,
    /// What rwtop's account lacks there.
    pub missing_grants: Vec<crate::mysql::grants::MissingGrant>,
}

impl NodeEntry {
    pub fn new(name: &str, address: String, role: Option<Role>, configured: bool) -> Self {
        Self {
            name: name.to_owned(),
            address,
            configured_role: role,
            configured,
            conn: ConnState::Connecting,
            flavor: None,
            identity: None,
            sample: None,
            as_source: SourceHistory::default(),
            writes: WriteHistory::default(),
            binlog_files: Vec::new(),
            binlog_rate: super::headroom::BinlogHistory::default(),
            disks: super::disks::DiskTrack::default(),
            processes: None,
            settings: None,
            osc: None,
            samples: 0,
            channels: Vec::new(),
            clock: None,
            semisync: super::semisync::SemiSyncTrack::default(),
            galera: super::galera::GaleraTrack::default(),
        }
    }

    /// The channels of the newest sample (none before one).
    pub fn statuses(&self) -> &[ReplicaStatus] {
        self.sample
            .as_ref()
            .map_or(&[][..], |s| &s.reported.replication)
    }

    pub fn apply_sample(&mut self, mut sample: NodeSample, at_ms: u64) {
        if let Some(files) = sample.reported.binlog_files.take() {
            self.binlog_files = files;
        }
        // The list is read every minute or so; its newest file's size follows the coordinate. A
        // poll without the coordinate (a leaf's) leaves no stale list behind.
        match &sample.reported.binlog {
            Some(head) if !self.binlog_files.is_empty() => {
                crate::mysql::reach(&mut self.binlog_files, &head.position);
            }
            Some(_) => {}
            None => self.binlog_files.clear(),
        }
        self.binlog_rate.record(at_ms, &self.binlog_files);
        self.samples += 1;
        let seq = self.samples;
        if let Some(value) = sample.reported.processes.take() {
            self.processes = Some(Scanned { sample: seq, value });
        }
        if let Some(value) = sample.reported.osc.take() {
            self.osc = Some(Scanned { sample: seq, value });
        }
        // Only this sample's scan: an older one says nothing of the workers now.
        let scan = self
            .processes
            .as_ref()
            .filter(|p| p.fresh_at(self.samples))
            .map(|p| &p.value);
        self.as_source.record(&sample);
        self.semisync
            .record(sample.at, sample.reported.semisync.as_ref());
        self.galera
            .record(sample.at, sample.reported.galera.as_ref());
        let head = sample.reported.binlog.as_ref().map(|b| &b.position);
        self.writes.record(at_ms, &sample.reported.state, head);
        // A channel keeps its history while the server reports it; one that is gone (RESET
        // REPLICA ALL) goes with it.
        let mut old = std::mem::take(&mut self.channels);
        for status in &sample.reported.replication {
            let mut channel = match old.iter().position(|c| c.name == status.channel) {
                Some(i) => old.swap_remove(i),
                None => ChannelEntry::new(&status.channel),
            };
            channel.push_point(status, &sample.reported.state, sample.at, at_ms);
            let workers = scan.map(|p| p.workers.as_slice());
            channel
                .applier
                .observe(sample.at, &status.channel, &status.appliers, workers);
            if let Some(list) = scan {
                channel.applier.observe_row_events(&list.row_events);
            }
            self.channels.push(channel);
        }
        self.sample = Some(sample);
    }

    /// Records a lag reading for channel `index` (by [`Self::channels`]).
    pub fn apply_lag(&mut self, index: usize, at: Instant, lag: Lag) {
        let delay = self
            .statuses()
            .get(index)
            .and_then(|r| r.sql_delay)
            .unwrap_or(0);
        if let Some(channel) = self.channels.get_mut(index) {
            channel.apply_lag(at, lag, delay);
        }
    }

    /// Records the lag of the newest heartbeat channel `index` has received, from a status
    /// poll sent at `at`.
    pub fn apply_received(&mut self, index: usize, at: Instant, lag: Lag) {
        if let Some(channel) = self.channels.get_mut(index) {
            channel.apply_received(at, lag);
        }
    }

    /// Every channel's lag becomes `lag` (a node that stopped answering, pt-heartbeat's one row).
    pub fn set_lag_all(&mut self, at: Instant, lag: &Lag) {
        for index in 0..self.channels.len() {
            self.apply_lag(index, at, lag.clone());
        }
    }

    pub fn apply_clock(&mut self, offset_ms: i64, rtt: std::time::Duration, at: Instant) {
        ClockEstimate::keep(&mut self.clock, offset_ms, rtt, at);
    }

    fn is_up(&self) -> bool {
        self.conn == ConnState::Up
    }

    /// The node's lag as a whole at `now` (the worst of its channels'), as its view shows it:
    /// only while it answers. What a cascade's hop is measured against.
    fn lag_at(&self, now: Instant) -> Option<Duration> {
        if !self.is_up() {
            return None;
        }
        super::roots::worst(self.channels.iter().map(|c| c.lag_at(now)))?.value()
    }

    /// The whole view of this node at `now`, built here and nowhere else. `sources` holds each
    /// channel's source, by the order of [`Self::channels`]; `interval` is the heartbeat's (it
    /// tells two readings of one heartbeat apart); `outside` is what the store knows of the node
    /// beyond its polls.
    pub fn view(
        &self,
        now: Instant,
        sources: &[ChannelSource<'_>],
        interval: Duration,
        outside: Outside,
    ) -> NodeView {
        // Role, source and the channels come from the last sample even when the node is down;
        // live values (threads, lag, backlog) only from a node that answers now.
        let read_only = self.sample.as_ref().map(|s| s.reported.state.read_only);
        let role = if self.galera.is_member() || self.configured_role == Some(Role::Member) {
            Role::Member
        } else {
            role(self.configured_role, !self.statuses().is_empty(), read_only)
        };
        let channels = self.sample.as_ref().map_or_else(Vec::new, |last| {
            last.reported
                .replication
                .iter()
                .zip(&self.channels)
                .enumerate()
                .map(|(i, (status, channel))| {
                    let source = sources.get(i);
                    let mut view = Self::channel_view(now, last, status, channel, source);
                    view.lag_split = channel.split_at(now, interval);
                    if !self.is_up() {
                        // Never dropped, never its last values: the channel is there, unknown.
                        return view.unanswered(format!("node is {}", self.conn.name()));
                    }
                    let (settings, shared_by) = (self.settings.as_ref(), self.channels.len());
                    view.appliers =
                        channel
                            .applier
                            .view(now, &status.appliers, settings, shared_by);
                    view.hop_lag = self.hop_lag(now, &view, source.and_then(|s| s.entry));
                    view
                })
                .collect()
        });
        NodeView {
            name: self.name.clone(),
            address: self.address.clone(),
            role,
            source: sources
                .first()
                .and_then(|s| s.name.clone())
                .filter(|_| role == Role::Replica),
            configured: self.configured,
            conn: self.conn.clone(),
            identity: ServerIdentity {
                flavor: self.flavor.clone(),
                server_id: self.identity.as_ref().map(|i| i.server_id),
                server_uuid: self.identity.as_ref().and_then(|i| i.server_uuid.clone()),
            },
            sample_seq: self.samples,
            sample_age: self
                .sample
                .as_ref()
                .map(|s| now.saturating_duration_since(s.at)),
            clock: self.clock.map(|c| ClockView {
                offset_ms: c.offset_ms,
                error_ms: c.error_ms(),
            }),
            lb: outside.lb,
            last_gtid: self.sample.as_ref().map(|s| s.reported.state.gtid.clone()),
            missing_grants: outside.missing_grants,
            channels,
            live: self.live_parts(now),
        }
    }

    /// What the node reports only while it answers: the one place that rule is applied.
    fn live_parts(&self, now: Instant) -> Option<LiveParts> {
        let sample = self.sample.as_ref().filter(|_| self.is_up())?;
        let state = &sample.reported.state;
        Some(LiveParts {
            read_only: state.read_only,
            gtid: state.gtid.clone(),
            scan: self.processes.as_ref().map(|p| Scanned {
                sample: p.sample,
                value: ProcessScan {
                    summary: p.value.summary,
                    ddl: p.value.ddl.clone(),
                },
            }),
            osc: self.osc.clone(),
            binlog: BinlogView {
                head: sample.reported.binlog.as_ref().map(|b| b.position.clone()),
                files: self.binlog_files.clone(),
                rate: self.binlog_rate.view(),
            },
            settings: self.settings.clone(),
            semisync: self.semisync.view(now),
            disks: self.disks_view(now),
            galera: self.galera.view(now),
        })
    }

    /// In a cascade, this channel's own share of the lag: its lag less its source's (both from
    /// the same root's heartbeat); `None` when the source is a root or either is unknown. Zero
    /// when the channel lacks nothing its source has: the two readings then differ only by
    /// their ages.
    fn hop_lag(
        &self,
        now: Instant,
        view: &ReplicaView,
        source: Option<&NodeEntry>,
    ) -> Option<Duration> {
        let source = source?;
        let hop = view
            .heartbeat_lag
            .value()?
            .saturating_sub(source.lag_at(now)?);
        if super::readings::has_all_of(self, &view.channel, source) {
            return Some(Duration::ZERO);
        }
        Some(hop)
    }

    /// The disks with what rwtop measures writing to them: the relay logs' growth, the binlog
    /// rate, a running schema change.
    fn disks_view(&self, now: Instant) -> Option<super::disks::DisksView> {
        let mut growth: Vec<(&str, f64)> = self
            .channels
            .iter()
            .filter_map(|c| c.relay.view().bytes_per_s)
            .map(|g| ("relay log", g))
            .collect();
        if let Some(rate) = self.binlog_rate.view().and_then(|b| b.bytes_per_s) {
            growth.push(("binlog", rate));
        }
        let ddl = self
            .processes
            .as_ref()
            .and_then(|p| p.value.ddl.first())
            .map(|d| crate::units::excerpt(&d.statement));
        let replicates = !self.channels.is_empty();
        self.disks.view(now, replicates, &growth, ddl.as_deref())
    }

    fn channel_view(
        now: Instant,
        sample: &NodeSample,
        status: &ReplicaStatus,
        channel: &ChannelEntry,
        source: Option<&ChannelSource<'_>>,
    ) -> ReplicaView {
        let source_entry = source.and_then(|s| s.entry);
        // Only what the source had before this status was read: never writes it took after.
        let source_state = source_entry.and_then(|s| s.as_source.before(sample.at));
        let heartbeat_lag = channel.lag_at(now);
        // A cascade's lag includes its source's own delay, which it can never catch up on.
        let inherited = source_entry
            .and_then(|s| s.statuses().iter().filter_map(|st| st.sql_delay).max())
            .unwrap_or(0);
        let catch_up = apply_rate::catch_up(
            &channel.rate,
            source_entry.map(|s| SourceInput {
                writes: &s.writes,
                files: &s.binlog_files,
            }),
            sample.reported.replication.len() == 1,
            &heartbeat_lag,
            std::time::Duration::from_secs(status.sql_delay.unwrap_or(0).saturating_add(inherited)),
        );
        ReplicaView {
            channel: status.channel.clone(),
            source: source.and_then(|s| s.name.clone()),
            source_address: format!("{}:{}", status.source_host, status.source_port),
            hop_lag: None,
            io_running: status.io_running,
            sql_running: status.sql_running,
            io_state: status.io_state.clone(),
            sql_state: status.sql_state.clone(),
            seconds_behind_source: status.seconds_behind_source,
            lag_split: LagSplit::default(),
            windows: Window::ALL
                .iter()
                .map(|w| (*w, channel.windows.stats(now, *w)))
                .collect(),
            gtid_backlog: gtid_backlog(
                status,
                &sample.reported.state,
                source_state.map(|s| &s.gtid),
            ),
            bytes_behind: bytes_behind(
                status,
                source_state.and_then(|s| s.head.as_ref()),
                source_entry.map_or(&[][..], |s| &s.binlog_files),
            ),
            received_gtid: super::exposure::Held::received(&status.gtid),
            received: status.received.clone(),
            applied: status.applied.clone(),
            sql_delay: status.sql_delay,
            sql_remaining_delay: status.sql_remaining_delay,
            last_io_error: status.last_io_error.clone(),
            last_sql_error: status.last_sql_error.clone(),
            series: channel.chart.chart().clone(),
            lag_histogram: channel.histogram.clone(),
            beyond_delay: channel.beyond_delay.as_ref().map(|b| b.view(now)),
            appliers: super::ApplierView::default(),
            relay_growth: channel.relay.view(),
            protection: super::protection::Protection::of(
                status.sql_delay,
                status.sql_remaining_delay,
                status.io_running,
                status.sql_running,
                &heartbeat_lag,
            ),
            heartbeat_lag,
            catch_up,
            link: status.link.clone(),
        }
    }
}

/// A node's role: what it was configured as, unless the server's own state contradicts that
/// unambiguously. A switchover turns the configured roles around: a configured primary that
/// replicates and refuses writes was demoted, and a configured replica that replicates from
/// nobody and takes writes was promoted. Anything else keeps the configured role, so that a
/// replica that lost its channel, or a primary in a ring, is reported as what it was meant to
/// be. Unconfigured (discovered) nodes are replicas when they replicate. (A Galera member is a
/// member whatever it was configured as: the caller settles that first.)
fn role(configured: Option<Role>, replicates: bool, read_only: Option<bool>) -> Role {
    match (configured, replicates, read_only) {
        (None, true, _) | (Some(Role::Primary), true, Some(true)) => Role::Replica,
        (None, false, _) | (Some(Role::Replica), false, Some(false)) => Role::Primary,
        (Some(role), _, _) => role,
    }
}

#[cfg(test)]
mod tests {
    use super::{Role, role};

    #[test]
    fn roles_follow_a_switchover_and_nothing_less() {
        let (p, r) = (Some(Role::Primary), Some(Role::Replica));
        // Demoted and promoted.
        assert_eq!(role(p, true, Some(true)), Role::Replica);
        assert_eq!(role(r, false, Some(false)), Role::Primary);
        // A primary in a ring, a replica that lost its channel, a writable replica, unknown.
        assert_eq!(role(p, true, Some(false)), Role::Primary);
        assert_eq!(role(r, false, Some(true)), Role::Replica);
        assert_eq!(role(r, true, Some(false)), Role::Replica);
        assert_eq!(role(r, false, None), Role::Replica);
        assert_eq!(role(p, true, None), Role::Primary);
        // Discovered.
        assert_eq!(role(None, true, Some(false)), Role::Replica);
        assert_eq!(role(None, false, Some(true)), Role::Primary);
    }
}
