//! The snapshot as the tasks below the store see it: the [`Topology`] they route, drain and
//! follow a failover by.

use std::time::Duration;

use super::lag::Lag;
use super::windows::Window;
use super::{NodeView, Snapshot};
use crate::mysql::IoRunning;
use crate::topology::{Health, Member, Topology};

fn member(node: &NodeView) -> Member<'_> {
    Member {
        name: &node.name,
        address: &node.address,
        role: node.role,
        source: node.source.as_deref(),
    }
}

impl Topology for Snapshot {
    fn members(&self) -> Vec<Member<'_>> {
        self.nodes.iter().map(member).collect()
    }

    fn member(&self, name: &str) -> Option<Member<'_>> {
        self.node(name).map(member)
    }

    fn health(&self, name: &str) -> Option<Health> {
        let replica = self.node(name)?.replica()?;
        let lag = match &replica.heartbeat_lag {
            Lag::Exact { lag } => Some(*lag),
            Lag::AtLeast { upper, .. } => *upper,
            Lag::Unknown { .. } => None,
        };
        let lag_p99_5m = replica
            .windows
            .iter()
            .find(|(w, _)| *w == Window::FiveMinutes)
            .and_then(|(_, stats)| stats.as_ref())
            .map(|stats| stats.p99);
        Some(Health {
            running: replica.sql_running && replica.io_running == IoRunning::Yes,
            lag,
            lag_p99_5m,
        })
    }

    fn is_drained(&self, name: &str) -> bool {
        self.drain.is_drained(name)
    }

    fn heartbeat_interval(&self) -> Duration {
        self.heartbeat.interval
    }

    fn writer_node(&self) -> Option<&str> {
        self.heartbeat.node.as_deref()
    }

    fn successor_of(&self, name: &str) -> Option<Member<'_>> {
        self.successor(name).map(member)
    }
}
