//! What the tasks that talk to servers may know of the topology, and nothing more.
//!
//! The prober routes test reads by measured lag, the drain task finds its targets and the
//! heartbeat writer follows a failover: each needs a little of what the store knows. They sit
//! below the store, so they ask through [`Topology`], which the store's snapshot implements; a
//! task never sees a snapshot's type, and the store is free to change its views.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A node's part in replication: the configured one, or what the node showed after a
/// switchover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Primary,
    Replica,
    /// A Galera cluster's member: writable and serving reads as every other member is, neither
    /// a primary of its own nor anyone's replica. One member per cluster carries rwtop's
    /// heartbeat; in an engine's spec that one is the cluster's root and configured `Primary`.
    Member,
}

/// One node as the tasks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member<'a> {
    pub name: &'a str,
    /// `host:port`, as rwtop connects to it.
    pub address: &'a str,
    pub role: Role,
    /// The node it replicates from, when that node is known.
    pub source: Option<&'a str>,
}

/// A replica's health as a router judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// Both replication threads run.
    pub running: bool,
    /// The lag a routing decision may rely on: an exact figure or the upper bound of an
    /// at-least; `None` when not known.
    pub lag: Option<Duration>,
    /// Lag P99 over the last five minutes, when there are samples.
    pub lag_p99_5m: Option<Duration>,
}

/// One replication channel of a node (a row of `SHOW ALL SLAVES STATUS`), as a router sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channel<'a> {
    /// The connection (`MariaDB`) or channel (`MySQL`) name; `''` is the default one.
    pub name: &'a str,
    /// The node this channel replicates from, when that node is known.
    pub source: Option<&'a str>,
    pub health: Health,
}

/// Whether rwtop may write its rows in one of its tables on a root now, as the nodes below it
/// hold that table (`mysql::own_tables`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableGate {
    /// Every node that answers has had its copy read, and none below the root differs.
    Open,
    /// A node has not answered its first poll or had its copy read yet.
    Wait,
    /// A node below the root holds a copy that would not take rwtop's rows: why, in one line.
    Unsafe(String),
}

/// The topology as the latest snapshot shows it.
pub trait Topology: Send + Sync + 'static {
    /// Every node, in display order.
    fn members(&self) -> Vec<Member<'_>>;

    fn member(&self, name: &str) -> Option<Member<'_>> {
        self.members().into_iter().find(|m| m.name == name)
    }

    /// `None` for a node with no replication status now (a primary, one not yet polled, one
    /// that does not answer). A node with several channels is judged by its default one, as
    /// [`Self::channels`] lists first.
    fn health(&self, name: &str) -> Option<Health>;

    /// Every channel of a node, in the server's order; empty for a node that replicates from
    /// nobody, has not answered yet or does not answer now.
    fn channels(&self, node: &str) -> Vec<Channel<'_>>;

    /// The writable roots (heartbeat roots) upstream of one channel of `node`, following its
    /// source up a cascade: one for a plain channel, several below a multi-source node. Empty
    /// when the chain leads to no root rwtop knows. It answers as the store reads the channel's
    /// lag, so a probe writes where the lag it is judged by is measured from.
    fn roots_of(&self, node: &str, channel: &str) -> Vec<&str>;

    /// Whether rwtop drained the node from the read pool.
    fn is_drained(&self, name: &str) -> bool;

    /// The heartbeat's write interval: the resolution of every lag figure.
    fn heartbeat_interval(&self) -> Duration;

    /// The node the heartbeat writer writes to now; `None` when rwtop writes nothing.
    fn writer_node(&self) -> Option<&str>;

    /// The node that took over from `name` as primary, when the topology proves one did.
    fn successor_of(&self, name: &str) -> Option<Member<'_>>;

    /// The nodes some watched channel replicates from, sorted, each once: those whose own binlog
    /// coordinate a replica's figures need. `None` while a node has not answered yet, since its
    /// channels, and so the sources, are not known.
    fn sources(&self) -> Option<Vec<&str>>;

    /// Whether rows in `table` (`rwtop.heartbeat`) written on `root` would meet, on some node
    /// below it, a copy of the table that is not rwtop's.
    fn own_table_gate(&self, _root: &str, _table: &str) -> TableGate {
        TableGate::Open
    }

    /// The node's GTID state as rwtop last polled it, and how old that poll is now: the
    /// "monitored position" a proxy's fast modes route on. `None` before a poll answered.
    fn polled_gtid(&self, _node: &str) -> Option<(&crate::mysql::GtidState, Duration)> {
        None
    }
}
