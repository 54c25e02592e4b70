//! The one owner of monitoring state. It accepts [`Event`]s (what pollers, the prober and the
//! drain task report), applies them in plain methods and builds immutable [`Snapshot`]s, the
//! view types every output reads. The engine runs it as a task; the store itself spawns nothing.

pub mod alert_view;
pub mod applier;
pub mod apply_rate;
pub mod backlog;
mod carried;
mod channel_entry;
mod clock;
pub mod cluster;
pub mod delay;
mod discovery;
pub mod disks;
pub mod exposure;
mod failover;
pub mod galera;
pub mod headroom;
pub mod histogram;
pub mod lag;
pub mod lag_split;
mod news;
mod node;
pub mod node_parts;
pub mod protection;
mod pt_lag;
mod readings;
mod roots;
pub mod semisync;
pub mod series;
pub mod snapshot;
mod snapshot_wire;
/// Synthetic snapshots for tests and benches (alerts, panels, exports, render timing).
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
mod topology_view;
pub mod windows;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::drain::DrainEvent;
use crate::mysql::Endpoint;
use crate::poll::{PollEvent, ReportedReplica, WriterState};
use crate::probe::ProbeEvent;
pub use applier::{ApplierGroups, ApplierView, BusyWorkers};
use node::{ChannelSource, NodeEntry, Outside};
use roots::{Beat, Routes, SourceIndex};
pub use snapshot::{
    BinlogView, ClockView, HeartbeatView, LagBeyondDelay, LiveParts, NodeView, ProcessScan,
    ReplicaView, Role, RootBeat, Scanned, ServerIdentity, Snapshot,
};

/// What the store accepts: every task's reports, each in the task's own type.
#[derive(Debug, Clone)]
pub enum Event {
    Poll(PollEvent),
    Probe(ProbeEvent),
    Drain(DrainEvent),
}

impl From<PollEvent> for Event {
    fn from(event: PollEvent) -> Self {
        Self::Poll(event)
    }
}

impl From<ProbeEvent> for Event {
    fn from(event: ProbeEvent) -> Self {
        Self::Probe(event)
    }
}

impl From<DrainEvent> for Event {
    fn from(event: DrainEvent) -> Self {
        Self::Drain(event)
    }
}

/// A node the store learnt of through discovery and wants polled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    pub name: String,
    pub endpoint: Endpoint,
}

#[derive(Debug, Clone)]
pub struct StoreSettings {
    /// How often heartbeats are read now (shown beside the write interval); `None` outside an
    /// engine.
    pub read_pace: Option<std::sync::Arc<crate::poll::ReadPace>>,
    pub heartbeat_interval: Duration,
    pub poll_interval: Duration,
    pub discovery: bool,
    /// Credentials for discovered nodes (the configured primary's).
    pub template: Option<Endpoint>,
    /// Each root's heartbeat row id and node, by writer index; empty: one row on the
    /// configured primary, as [`testkit::store_settings`] and single-root engines have.
    pub writers: Vec<(String, String)>,
    /// Read-only mode: lag comes from this pt-heartbeat table.
    pub pt_table: Option<String>,
    /// The drain backend's kind, for display; `None` without one.
    pub drain_backend: Option<String>,
    /// Where that backend is, for the TUI's confirmation.
    pub drain_detail: Option<String>,
    /// The Galera clusters found at start-up: their members and the one each writes on.
    pub clusters: Vec<cluster::ClusterSpec>,
}

pub struct Store {
    settings: StoreSettings,
    started: Instant,
    nodes: BTreeMap<String, NodeEntry>,
    /// Configured order first, discovered after.
    order: Vec<String>,
    /// One per root, by writer index: the first is the configured primary's.
    beats: Vec<Beat>,
    /// Which roots each channel reads its lag from; worked out again when sources change.
    routes: Routes,
    routes_dirty: bool,
    /// Read-only mode: what pt-heartbeat's rows have shown.
    pt: pt_lag::PtLag,
    /// The primary's name: the configured one, then the node the heartbeat writer moved to.
    primary: Option<String>,
    probes: crate::probe::ProbeBook,
    drains: crate::drain::DrainBook,
    /// Per node, what this run needs that its account lacks, as last read.
    grants: BTreeMap<String, Vec<crate::mysql::grants::MissingGrant>>,
    /// The node whose sample, the last applied, shows a running link stalling (`news.rs`).
    stalling: Option<String>,
}

impl Store {
    #[must_use]
    pub fn new(settings: StoreSettings, configured: &[(String, Endpoint, Role)]) -> Self {
        let history =
            Duration::from_secs(3600).as_millis() / settings.heartbeat_interval.as_millis().max(1);
        let history = usize::try_from(history).unwrap_or(14_400);
        let primary = configured
            .iter()
            .find(|(_, _, role)| *role == Role::Primary)
            .map(|(name, _, _)| name.clone());
        let beats = if settings.writers.is_empty() {
            vec![Beat::new(String::new(), primary.clone(), history)]
        } else {
            let writers = settings.writers.iter();
            writers
                .map(|(id, node)| Beat::new(id.clone(), Some(node.clone()), history))
                .collect()
        };
        let mut store = Self {
            beats,
            routes: Routes::new(),
            routes_dirty: true,
            started: Instant::now(),
            nodes: BTreeMap::new(),
            grants: BTreeMap::new(),
            order: Vec::new(),
            probes: crate::probe::ProbeBook::default(),
            drains: crate::drain::DrainBook::new(
                settings.drain_backend.clone(),
                settings.drain_detail.clone(),
            ),
            pt: pt_lag::PtLag::default(),
            primary,
            stalling: None,
            settings,
        };
        for (name, endpoint, role) in configured {
            store.add(name, endpoint.address(), Some(*role), true);
        }
        store
    }

    /// A node the engine found above the configured ones before it started: polled as if
    /// configured, shown as found.
    pub fn mark_found(&mut self, name: &str) {
        if let Some(entry) = self.nodes.get_mut(name) {
            entry.configured = false;
        }
    }

    fn add(&mut self, name: &str, address: String, role: Option<Role>, configured: bool) {
        self.nodes.insert(
            name.to_owned(),
            NodeEntry::new(name, address, role, configured),
        );
        self.order.push(name.to_owned());
        self.routes_dirty = true;
    }

    /// Applies one event; returns nodes discovery found that nobody polls yet.
    pub fn apply(&mut self, event: impl Into<Event>) -> Vec<Discovered> {
        match event.into() {
            Event::Poll(event) => return self.apply_poll(event),
            Event::Probe(ProbeEvent::Finished(result)) => self.probes.record(*result),
            Event::Probe(ProbeEvent::Running(what)) => self.probes.set_running(what),
            Event::Drain(event) => self.drains.apply(event),
        }
        Vec::new()
    }

    fn apply_poll(&mut self, event: PollEvent) -> Vec<Discovered> {
        match event {
            PollEvent::Conn { node, state } => {
                if let Some(entry) = self.nodes.get_mut(&node) {
                    if state != crate::poll::ConnState::Up {
                        // Never show the last value of a node that stopped answering.
                        let reason = format!("node is {}", state.name());
                        entry.set_lag_all(Instant::now(), &lag::Lag::Unknown { reason });
                    }
                    entry.conn = state;
                }
            }
            PollEvent::Connected {
                node,
                flavor,
                identity,
            } => {
                if let Some(entry) = self.nodes.get_mut(&node) {
                    entry.flavor = Some(flavor);
                    entry.identity = Some(identity);
                    self.routes_dirty = true;
                }
            }
            PollEvent::Sample { node, sample } => {
                let since_start = self.since_start(sample.at);
                let hosts = sample.reported_replicas();
                if let Some(entry) = self.nodes.get_mut(&node) {
                    if !roots::same_sources(entry.statuses(), &sample.reported.replication) {
                        self.routes_dirty = true;
                    }
                    entry.apply_sample(*sample, since_start);
                }
                self.apply_received(&node);
                if let Some(hosts) = hosts {
                    return self.discover(&hosts);
                }
            }
            PollEvent::Disks { node, sample } => self.apply_disks(&node, *sample),
            PollEvent::Settings { node, settings } => {
                if let Some(entry) = self.nodes.get_mut(&node) {
                    entry.settings = Some(*settings);
                }
            }
            PollEvent::Grants { node, missing } => {
                self.grants.insert(node, missing);
            }
            PollEvent::Heartbeat { node, read } => {
                self.apply_lags(&node, read.sent_at, |store, writer| {
                    store.root_lag(writer, &node, &read)
                });
                self.apply_member_lag(&node, &read);
            }
            PollEvent::OutOfComponent { node, sent_at } => self.apply_out_of(&node, sent_at),
            PollEvent::Applied { node, read } => {
                self.apply_lags(&node, read.sent_at, |store, writer| {
                    match store.beat(writer, read.sent_at) {
                        Ok((beat, stale)) => {
                            beat.acks.lag_applied(&read.applied, read.sent_at, stale)
                        }
                        Err(lag) => lag,
                    }
                });
            }
            PollEvent::PtHeartbeat { node, read } => self.apply_pt(&node, read),
            PollEvent::Clock {
                node,
                offset_ms,
                rtt,
            } => {
                if let Some(entry) = self.nodes.get_mut(&node) {
                    entry.apply_clock(offset_ms, rtt, Instant::now());
                }
            }
            PollEvent::Ack {
                writer,
                seq,
                at,
                gtid,
            } => {
                if let Some(beat) = self.beats.get_mut(writer) {
                    beat.acks.push(seq, at, gtid);
                }
            }
            PollEvent::Writer { writer, state } => {
                if let Some(beat) = self.beats.get_mut(writer) {
                    beat.state = state;
                }
            }
            PollEvent::WriterMoved { writer, to } => {
                // Clock offsets and pt-heartbeat's zone are judged against the first root.
                if writer == 0 {
                    self.primary = Some(to.clone());
                }
                if let Some(beat) = self.beats.get_mut(writer) {
                    beat.node = Some(to);
                }
                self.routes_dirty = true;
            }
        }
        Vec::new()
    }

    fn apply_disks(&mut self, node: &str, sample: crate::poll::DiskSample) {
        let at_ms = self.since_start(sample.at);
        if let Some(entry) = self.nodes.get_mut(node) {
            entry
                .disks
                .record(sample.at, at_ms, sample.read, sample.took);
        }
    }

    /// pt-heartbeat lag of one node (read-only mode, [`pt_lag`]).
    fn apply_pt(&mut self, node: &str, read: crate::poll::PtRead) {
        let table = self.settings.pt_table.clone().unwrap_or_default();
        let correction = self.clock_correction(node);
        let root = self.primary.as_deref();
        if let Some(lag) = self.pt.read(node, root, read, correction, &table)
            && let Some(entry) = self.nodes.get_mut(node)
        {
            entry.set_lag_all(read.sent_at, &lag);
        }
    }

    /// How far `node`'s clock runs ahead of the primary's, in ms (0 until both are estimated).
    fn clock_correction(&self, node: &str) -> i64 {
        let offset = |name: &str| {
            self.nodes
                .get(name)
                .and_then(|n| n.clock)
                .map(|c| c.offset_ms)
        };
        match (offset(node), self.primary.as_deref().and_then(offset)) {
            (Some(mine), Some(theirs)) => mine - theirs,
            _ => 0,
        }
    }

    fn since_start(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.started).as_millis()).unwrap_or(u64::MAX)
    }

    /// The first root's writer has stalled (see [`Beat::stale`]).
    fn heartbeat_stale(&self, now: Instant) -> bool {
        self.beats
            .first()
            .is_some_and(|b| b.stale(now, self.settings.heartbeat_interval))
    }

    /// Nodes to poll among the replicas a node reports: named by the host name they report
    /// when they report one, reached where [`discovery`] says. A replica already polled (by
    /// server id, reported address, or name and port) is skipped before any name is resolved.
    fn discover(&mut self, hosts: &[ReportedReplica]) -> Vec<Discovered> {
        let Some(template) = self
            .settings
            .template
            .clone()
            .filter(|_| self.settings.discovery)
        else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for reported in hosts.iter().filter(|h| !h.host.host.is_empty()) {
            let host = &reported.host;
            let port = format!(":{}", host.port);
            let polled = self.nodes.iter().any(|(name, n)| {
                n.identity
                    .as_ref()
                    .is_some_and(|i| i.server_id == host.server_id)
                    || n.address == format!("{}{port}", host.host)
                    || (*name == host.host && n.address.ends_with(&port))
            });
            if polled {
                continue;
            }
            let connect = discovery::connect_host(&host.host, &template.host, reported.resolves);
            let address = format!("{connect}{port}");
            if self.nodes.values().any(|n| n.address == address) {
                continue;
            }
            let name =
                discovery::node_name(&host.host, &address, |name| self.nodes.contains_key(name));
            if self.nodes.contains_key(&name) {
                continue;
            }
            self.add(&name, address, None, false);
            found.push(Discovered {
                name,
                endpoint: Endpoint {
                    host: connect,
                    port: host.port,
                    ..template.clone()
                },
            });
        }
        found
    }

    /// Nodes known, configured and discovered: what a snapshot's cost grows with.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    #[must_use]
    pub fn snapshot(&self, now: Instant) -> Snapshot {
        let index = SourceIndex::new(&self.nodes);
        let drain = self.drains.view();
        let nodes: Vec<NodeView> = self
            .order
            .iter()
            .filter_map(|name| self.nodes.get(name))
            .map(|entry| {
                let sources: Vec<ChannelSource<'_>> = entry
                    .statuses()
                    .iter()
                    .map(|status| {
                        let name = index.source_of(status);
                        ChannelSource {
                            name: name.map(str::to_owned),
                            entry: name.and_then(|s| self.nodes.get(s)),
                        }
                    })
                    .collect();
                let outside = Outside {
                    lb: drain.label(&entry.name),
                    missing_grants: self.grants.get(&entry.name).cloned().unwrap_or_default(),
                };
                entry.view(now, &sources, self.settings.heartbeat_interval, outside)
            })
            .collect();
        Snapshot {
            uptime: now.saturating_duration_since(self.started),
            taken_at: chrono::Utc::now(),
            heartbeat: self.heartbeat_view(now),
            alerts: alert_view::AlertsView::default(),
            probes: self.probes.view(),
            clusters: self
                .settings
                .clusters
                .iter()
                .map(|spec| cluster::ClusterView::of(spec, &nodes))
                .collect(),
            nodes,
            drain,
            exposure: Vec::new(),
        }
    }
}

impl Store {
    fn heartbeat_view(&self, now: Instant) -> HeartbeatView {
        let read_only = self.settings.pt_table.is_some();
        let interval = self.settings.heartbeat_interval;
        let roots: Vec<RootBeat> = self
            .beats
            .iter()
            .filter(|_| !read_only)
            .map(|beat| RootBeat {
                writer_id: beat.id.clone(),
                node: beat.node.clone(),
                writer: beat.state.clone(),
                last_seq: beat.acks.latest().map(|(s, _)| s),
                last_ack_age: beat
                    .acks
                    .latest()
                    .map(|(_, at)| now.saturating_duration_since(at)),
                stale: beat.stale(now, interval),
            })
            .collect();
        let first = self.beats.first();
        HeartbeatView {
            interval,
            read_every: self.settings.read_pace.as_ref().map(|p| p.every()),
            writer: first.map_or(WriterState::Starting, |b| b.state.clone()),
            node: self.primary.clone().filter(|_| !read_only),
            last_seq: roots.first().and_then(|r| r.last_seq),
            last_ack_age: roots.first().and_then(|r| r.last_ack_age),
            stale: if read_only {
                self.pt.stale()
            } else {
                self.heartbeat_stale(now)
            },
            roots,
        }
    }
}

#[cfg(test)]
mod tests;
