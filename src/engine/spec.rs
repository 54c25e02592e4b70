//! What the engine is asked to run, whatever it came from (config file, flags, tests), and the
//! task specs derived from it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::alerts::{AlertSettings, Thresholds};
use crate::config::{Config, FileSettings};
use crate::drain::DrainSpec;
use crate::mysql::{Endpoint, Timeouts};
use crate::poll::{HeartbeatTable, READ_BUDGET, ReadPace};
use crate::probe::ProbeSpec;
use crate::store::StoreSettings;
use crate::store::cluster::ClusterSpec;
use crate::topology::Role;

/// Everything the engine needs, independent of where it came from.
#[derive(Debug, Clone)]
pub struct EngineSpec {
    /// Primary first.
    pub nodes: Vec<(String, Endpoint, Role)>,
    pub timeouts: Timeouts,
    pub interval: Duration,
    pub heartbeat_interval: Duration,
    pub read_interval: Duration,
    /// Heartbeat reads a second for all nodes together, read less often beyond it; `None` reads
    /// every node every `read_interval` (set explicitly).
    pub read_budget: Option<u32>,
    pub writer_id: String,
    pub discovery: bool,
    /// Write nothing (no heartbeat writer); lag comes from `pt_table`.
    pub read_only: bool,
    pub pt_table: String,
    /// A replica's heartbeat reading from its applied GTID position where that tells
    /// (`poll/beat_gtid.rs`); `false` reads the table on every reading.
    pub by_position: bool,
    pub thresholds: Thresholds,
    /// The load balancer drains go through; `None` without one.
    pub drain: Option<DrainSpec>,
    /// Whether the roots [`super::upward::find_roots`] adds get a heartbeat writer.
    pub found_roots: super::upward::FoundRoots,
    /// The nodes found above the configured ones before the engine started.
    pub found: Vec<super::upward::Found>,
    /// Who runs test reads on this engine's topology.
    pub test_reads: TestReads,
    /// How often each node's disks are read (`[headroom] read_disks`); `None`, the default:
    /// never.
    pub disks_every: Option<Duration>,
    /// The Galera clusters found among the nodes before the engine started
    /// (`engine/clusters.rs`).
    pub clusters: Vec<ClusterSpec>,
}

/// Who runs test reads: one prober per process, never two side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestReads {
    /// The engine's prober task, asked through [`super::Engine::probe`] (the TUI's keys).
    Task,
    /// The command that started the engine owns the one prober and runs it itself
    /// (`rwtop probe`'s bake-off): the engine starts none.
    Caller,
}

impl EngineSpec {
    #[must_use]
    pub fn from_config(config: &Config) -> Self {
        let nodes = config
            .nodes
            .iter()
            .map(|n| (n.name.clone(), n.endpoint.clone(), n.role))
            .collect();
        Self::from_settings(nodes, &config.settings)
    }

    /// What runs over `nodes` with `settings` (the shipped ones: `FileSettings::default()`), as
    /// the binary builds it from a file with those settings.
    #[must_use]
    pub fn from_settings(nodes: Vec<(String, Endpoint, Role)>, settings: &FileSettings) -> Self {
        Self {
            nodes,
            timeouts: settings.timeouts,
            interval: settings.interval,
            heartbeat_interval: settings.heartbeat.interval,
            read_interval: settings.heartbeat.read_interval,
            read_budget: (!settings.heartbeat.read_interval_set).then_some(READ_BUDGET),
            writer_id: settings.heartbeat.writer_id.clone(),
            discovery: settings.discovery,
            read_only: settings.read_only,
            pt_table: settings.heartbeat.pt_table.clone(),
            by_position: settings.heartbeat.by_position,
            thresholds: settings.thresholds,
            drain: settings.drain.clone(),
            found_roots: if settings.heartbeat.write_discovered_roots {
                super::upward::FoundRoots::Write
            } else {
                super::upward::FoundRoots::Read
            },
            found: Vec::new(),
            clusters: Vec::new(),
            test_reads: TestReads::Task,
            disks_every: settings
                .headroom
                .read_disks
                .then_some(crate::poll::DISKS_EVERY),
        }
    }

    /// What the kill task needs: every node's endpoint (configured and found before start),
    /// the timeouts, and the audit log kills are appended to.
    #[must_use]
    pub fn kill_spec(&self, audit: crate::drain::AuditLog) -> crate::drain::KillSpec {
        crate::drain::KillSpec {
            endpoints: self
                .nodes
                .iter()
                .map(|(name, endpoint, _)| (name.clone(), endpoint.clone()))
                .collect(),
            timeouts: self.timeouts,
            audit,
        }
    }

    /// The configured primary, if there is one.
    #[must_use]
    pub fn primary(&self) -> Option<(&str, &Endpoint)> {
        self.nodes
            .iter()
            .find(|(_, _, role)| *role == Role::Primary)
            .map(|(name, endpoint, _)| (name.as_str(), endpoint))
    }

    /// The configured primaries: every writable root of the topology (two primaries feeding an
    /// aggregator are two roots), in configuration order.
    #[must_use]
    pub fn primaries(&self) -> Vec<(&str, &Endpoint)> {
        self.nodes
            .iter()
            .filter(|(_, _, role)| *role == Role::Primary)
            .map(|(name, endpoint, _)| (name.as_str(), endpoint))
            .collect()
    }

    /// The heartbeat row of each root, by writer index: the first primary's row is
    /// `writer_id` itself (as before there were several roots); each other root's adds its
    /// node's name, so every root's row is stable across runs. Without a primary, the one row
    /// another rwtop may write.
    #[must_use]
    pub fn writer_ids(&self) -> Vec<String> {
        let primaries = self.primaries();
        if primaries.len() <= 1 {
            return vec![self.writer_id.clone()];
        }
        primaries
            .iter()
            .enumerate()
            .map(|(i, (name, _))| root_writer_id(&self.writer_id, i, name))
            .collect()
    }

    /// Where the pollers read lag: rwtop's own rows, or pt-heartbeat's table in read-only mode.
    #[must_use]
    pub fn heartbeat_table(&self) -> HeartbeatTable {
        if self.read_only {
            HeartbeatTable::Pt {
                table: self.pt_table.clone(),
            }
        } else {
            HeartbeatTable::Own {
                writer_ids: self.writer_ids(),
            }
        }
    }

    /// How many writers keep their heartbeats' GTIDs for the pollers to read replicas by
    /// position (`poll/beat_gtid.rs`): every root's, unless rwtop writes nothing or
    /// `by_position` is off.
    #[must_use]
    pub fn position_writers(&self) -> usize {
        if self.read_only || !self.by_position {
            0
        } else {
            self.writer_ids().len()
        }
    }

    /// Each root's row id and node, by writer index, as the store keeps them.
    #[must_use]
    pub fn root_rows(&self) -> Vec<(String, String)> {
        let roots = self
            .primaries()
            .into_iter()
            .map(|(name, _)| name.to_owned());
        self.writer_ids().into_iter().zip(roots).collect()
    }

    /// Why rwtop writes no heartbeat on root `name`, when it was found rather than configured
    /// and `write_discovered_roots` is off.
    #[must_use]
    pub fn read_only_root(&self, name: &str) -> Option<String> {
        self.found
            .iter()
            .find(|f| f.name == name && f.role == Role::Primary && !f.writes)
            .map(|f| {
                format!(
                    "{} was found through {} and heartbeat.write_discovered_roots is false: \
                     rwtop only reads it (name it with --primary or a [[primary]] to write there)",
                    f.name, f.via
                )
            })
    }

    /// Every configured node's endpoint but `name`'s, by name.
    #[must_use]
    pub fn endpoints_except(&self, name: &str) -> BTreeMap<String, Endpoint> {
        self.nodes
            .iter()
            .filter(|(other, _, _)| other != name)
            .map(|(other, endpoint, _)| (other.clone(), endpoint.clone()))
            .collect()
    }

    /// What the prober needs; `None` without a primary.
    #[must_use]
    pub fn probe_spec(&self) -> Option<ProbeSpec> {
        let (name, endpoint) = self.primary()?;
        Some(ProbeSpec {
            primary: (name.to_owned(), endpoint.clone()),
            endpoints: self.endpoints_except(name),
            timeouts: self.timeouts,
            token_prefix: self.writer_id.clone(),
            read_only: self.read_only,
        })
    }

    /// The store's settings for this engine, reading at `pace`.
    #[must_use]
    pub fn store_settings(&self, pace: &Arc<ReadPace>) -> StoreSettings {
        StoreSettings {
            read_pace: Some(Arc::clone(pace)),
            heartbeat_interval: self.heartbeat_interval,
            poll_interval: self.interval,
            discovery: self.discovery,
            template: self.primary().map(|(_, endpoint)| endpoint.clone()),
            writers: self.root_rows(),
            pt_table: self.read_only.then(|| self.pt_table.clone()),
            drain_backend: self.drain.as_ref().map(|d| d.backend.kind().to_owned()),
            drain_detail: self.drain.as_ref().map(|d| d.backend.summary()),
            clusters: self.clusters.clone(),
        }
    }

    /// The alert rules' settings: the configured thresholds at this engine's intervals.
    #[must_use]
    pub fn alert_settings(&self) -> AlertSettings {
        AlertSettings::from_thresholds(&self.thresholds, self.interval, self.heartbeat_interval)
    }
}

/// A root's row id: the base for the first root, `base@node` (cut to the column's 64
/// characters, the node's name kept whole) for the others.
fn root_writer_id(base: &str, index: usize, node: &str) -> String {
    if index == 0 {
        return base.to_owned();
    }
    let suffix = format!("@{node}");
    let room = 64usize.saturating_sub(suffix.chars().count());
    let mut id: String = base.chars().take(room).collect();
    id.push_str(&suffix);
    id.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::root_writer_id;

    #[test]
    fn each_root_has_a_stable_row_of_its_own() {
        assert_eq!(
            root_writer_id("rwtop-h-db1-3306", 0, "primary"),
            "rwtop-h-db1-3306"
        );
        assert_eq!(
            root_writer_id("rwtop-h-db1-3306", 1, "p2"),
            "rwtop-h-db1-3306@p2"
        );
        let long = "x".repeat(64);
        let id = root_writer_id(&long, 2, "p3");
        assert_eq!(id.len(), 64);
        assert!(id.ends_with("@p3"));
    }
}
