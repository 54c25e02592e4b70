//! What a node's poller is given by the engine: the node, how to reach it, its intervals, where
//! its lag comes from, and the handles it shares with the writers and the engine.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::beat_gtid::Marks;
use super::feeds::Feeds;
use super::pace::ReadPace;
use super::start_up::StartUp;
use crate::mysql::{Endpoint, Timeouts};

#[derive(Debug, Clone)]
pub struct PollerSpec {
    pub name: String,
    pub endpoint: Endpoint,
    pub timeouts: Timeouts,
    pub interval: Duration,
    /// How often the heartbeat is read: `read_interval`, spread in a large topology.
    pub pace: Arc<ReadPace>,
    pub discovery: bool,
    pub heartbeat: HeartbeatTable,
    /// Where each root's heartbeats stand in GTID terms, set by the writers: whether a
    /// replica's applied position can stand for the table read.
    pub marks: Arc<Marks>,
    /// Which nodes a watched replica replicates from, set by the engine from each snapshot:
    /// whether this node's status poll reads its binlog coordinate and list.
    pub feeds: Arc<Feeds>,
    /// Notified to poll now instead of at the next interval (the operator's force-probe).
    pub nudge: Arc<Notify>,
    /// How often the node's disks are read, beside the status poll; `None` (the default): never
    /// (`[headroom] read_disks` reads them every [`super::occasional::DISKS_EVERY`]).
    pub disks_every: Option<Duration>,
    /// rwtop's own start-up, during which no node is judged silent (`silence.rs`).
    pub start_up: Arc<StartUp>,
}

/// Where lag comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeartbeatTable {
    /// rwtop's own rows, one per root (by writer index), written by this or another rwtop.
    Own { writer_ids: Vec<String> },
    /// An existing pt-heartbeat table (read-only mode): read on every node, the primary's row
    /// telling whether pt-heartbeat still runs.
    Pt { table: String },
}
