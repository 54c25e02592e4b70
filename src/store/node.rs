//! What the store keeps per node, and how one node becomes a [`NodeView`].

use std::sync::Arc;
use std::time::Instant;

use super::backlog::{SourceHistory, bytes_behind, gtid_backlog};
use super::delay::BeyondDelay;
use super::lag::Lag;
use super::series::{Point, Series};
use super::snapshot::{NodeView, ReplicaView, Role};
use super::windows::{LagWindows, Window};
use crate::mysql::{BinlogFile, Flavor, Identity, Processlist};
use crate::poll::{ConnState, HeartbeatRead, NodeSample};

/// Charts look back at most this far; the rest of the hour stays in the store.
const CHART_SPAN_MS: u64 = 15 * 60 * 1000;

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
    /// The newest binlog list: samples carry one only every few polls.
    pub binlog_files: Vec<BinlogFile>,
    /// The newest processlist scan: samples carry one only every few polls.
    pub processes: Option<Processlist>,
    /// Which sample (by [`Self::samples`]) carried that scan.
    processes_at: u64,
    /// Status samples applied so far: rules count consecutive samples by it.
    pub samples: u64,
    pub lag: Lag,
    /// Best clock-offset estimate (server minus this host, ms), its round trip and age.
    pub clock: Option<(i64, std::time::Duration, Instant)>,
    windows: LagWindows,
    /// Lag less `SQL_Delay`, only while the replica is delayed.
    beyond_delay: Option<Box<BeyondDelay>>,
    histogram: super::histogram::LagHistogram,
    series: Series,
    /// The chart's points, rebuilt once per new point rather than per snapshot.
    chart: Arc<[Point]>,
}

impl NodeEntry {
    pub fn new(
        name: &str,
        address: String,
        role: Option<Role>,
        configured: bool,
        points: usize,
    ) -> Self {
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
            binlog_files: Vec::new(),
            processes: None,
            processes_at: 0,
            samples: 0,
            clock: None,
            lag: Lag::Unknown {
                reason: "no heartbeat read yet".to_owned(),
            },
            windows: LagWindows::new(),
            beyond_delay: None,
            histogram: super::histogram::LagHistogram::default(),
            series: Series::with_capacity(points),
            chart: Arc::from(Vec::new()),
        }
    }

    pub fn apply_sample(&mut self, mut sample: NodeSample, at_ms: u64) {
        if let Some(files) = sample.binlog_files.take() {
            self.binlog_files = files;
        }
        self.samples += 1;
        if let Some(processes) = sample.processes.take() {
            self.processes = Some(processes);
            self.processes_at = self.samples;
        }
        self.as_source.record(&sample);
        if let Some(status) = sample.replication.first() {
            if status.sql_delay.is_some_and(|d| d > 0) {
                BeyondDelay::delay_seen(&mut self.beyond_delay, sample.at);
            }
            let lag_ms = self
                .lag
                .value()
                .map(|d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX));
            let sbm = status
                .seconds_behind_source
                .map(|s| u32::try_from(s).unwrap_or(u32::MAX));
            self.series.push(Point {
                at_ms,
                heartbeat_lag_ms: lag_ms,
                sbm_s: sbm,
            });
            let from = at_ms.saturating_sub(CHART_SPAN_MS);
            self.chart = self.series.since(from).collect();
        }
        self.sample = Some(sample);
    }

    pub fn apply_heartbeat(&mut self, read: HeartbeatRead, lag: Lag) {
        self.apply_lag(read.sent_at, lag);
    }

    pub fn apply_lag(&mut self, at: Instant, lag: Lag) {
        if let Lag::Exact { lag } = lag {
            // Bounds and unknowns stay out of the percentiles: they would pull them toward
            // whatever the bound happens to be.
            self.windows.record(at, lag);
            self.histogram.observe(lag);
            let delay = self
                .sample
                .as_ref()
                .and_then(|s| s.replication.first())
                .and_then(|r| r.sql_delay)
                .unwrap_or(0);
            BeyondDelay::track(&mut self.beyond_delay, at, lag, delay);
        }
        self.lag = lag;
    }

    /// Keeps the estimate with the shortest round trip (the tightest bound on its error), unless
    /// it is a minute old: clocks drift and get stepped.
    pub fn apply_clock(&mut self, offset_ms: i64, rtt: std::time::Duration, at: Instant) {
        let replace = self.clock.is_none_or(|(_, best, when)| {
            rtt <= best + best / 2 || at.saturating_duration_since(when).as_secs() >= 60
        });
        if replace {
            self.clock = Some((offset_ms, rtt, at));
        }
    }

    fn is_up(&self) -> bool {
        self.conn == ConnState::Up
    }

    pub fn view(
        &self,
        now: Instant,
        source_name: Option<String>,
        source: Option<&NodeEntry>,
    ) -> NodeView {
        // Role and source come from the last sample even when the node is down; live values
        // (threads, lag, backlog) only from a node that answers now.
        let last_status = self.sample.as_ref().and_then(|s| s.replication.first());
        let read_only = self.sample.as_ref().map(|s| s.state.read_only);
        let role = role(self.configured_role, last_status.is_some(), read_only);
        let sample = self.sample.as_ref().filter(|_| self.is_up());
        let status = sample.and_then(|s| s.replication.first());
        let replica = status.zip(sample).map(|(status, sample)| {
            // Only what the source had before this status was read: never writes it took after.
            let source_state = source.and_then(|s| s.as_source.before(sample.at));
            let heartbeat_lag = self.lag.clone();
            ReplicaView {
                channel: status.channel.clone(),
                io_running: status.io_running,
                sql_running: status.sql_running,
                io_state: status.io_state.clone(),
                sql_state: status.sql_state.clone(),
                seconds_behind_source: status.seconds_behind_source,
                heartbeat_lag,
                windows: Window::ALL
                    .iter()
                    .map(|w| (*w, self.windows.stats(now, *w)))
                    .collect(),
                gtid_backlog: gtid_backlog(status, &sample.state, source_state.map(|s| &s.gtid)),
                bytes_behind: bytes_behind(
                    status,
                    source_state.and_then(|s| s.head.as_ref()),
                    source.map_or(&[][..], |s| &s.binlog_files),
                ),
                received: status.received.clone(),
                applied: status.applied.clone(),
                sql_delay: status.sql_delay,
                sql_remaining_delay: status.sql_remaining_delay,
                last_io_error: status.last_io_error.clone(),
                last_sql_error: status.last_sql_error.clone(),
                series: Arc::clone(&self.chart),
                lag_histogram: self.histogram.clone(),
                beyond_delay: self.beyond_delay.as_ref().map(|b| b.view(now)),
            }
        });
        NodeView {
            name: self.name.clone(),
            address: self.address.clone(),
            role,
            source: source_name.filter(|_| role == Role::Replica),
            configured: self.configured,
            conn: self.conn.clone(),
            flavor: self.flavor.as_ref().map(ToString::to_string),
            version: self.flavor.as_ref().map(|f| f.version_string.clone()),
            server_id: self.identity.as_ref().map(|i| i.server_id),
            read_only: sample.map(|s| s.state.read_only),
            sample_age: self
                .sample
                .as_ref()
                .map(|s| now.saturating_duration_since(s.at)),
            processes: self
                .processes
                .as_ref()
                .filter(|_| self.is_up())
                .map(|p| p.summary),
            ddl: self
                .processes
                .as_ref()
                .filter(|_| self.is_up())
                .map(|p| p.ddl.clone())
                .unwrap_or_default(),
            processes_fresh: self.processes.is_some() && self.processes_at == self.samples,
            sample_seq: self.samples,
            server_uuid: self.identity.as_ref().and_then(|i| i.server_uuid.clone()),
            gtid: sample.map(|s| s.state.gtid.clone()),
            clock_offset_ms: self.clock.map(|(offset, _, _)| offset),
            lb: None,
            replica,
        }
    }
}

/// A node's role: what it was configured as, unless the server's own state contradicts that
/// unambiguously. A switchover turns the configured roles around: a configured primary that
/// replicates and refuses writes was demoted, and a configured replica that replicates from
/// nobody and takes writes was promoted. Anything else keeps the configured role, so that a
/// replica that lost its channel, or a primary in a ring, is reported as what it was meant to
/// be. Unconfigured (discovered) nodes are replicas when they replicate.
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
