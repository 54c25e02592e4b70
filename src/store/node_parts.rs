//! The parts a [`super::NodeView`] is made of. Each part is one concern a poll reports about a
//! node (what the server is, its clock, its processlist scan, its binlog, …), built in one place
//! (`store/node.rs`) and read through the view. A new polled fact belongs to one part, or is a
//! new part: the view, its builder and its readers change, nothing else.
//!
//! What a node reports only while it answers is grouped in [`LiveParts`], present as a whole
//! while it answers and absent as a whole while it does not: the one place where "only while
//! the node answers" is decided.

use serde::{Deserialize, Serialize};

use crate::mysql::{
    BinlogFile, BinlogPos, DdlStatement, Flavor, GtidState, OscRun, ProcessSummary, SafetySettings,
};

/// What the server is, as detected at connect: kept while it does not answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// Detected once at connect; `None` before the first connection.
    pub flavor: Option<Flavor>,
    pub server_id: Option<u32>,
    /// `MySQL` only.
    pub server_uuid: Option<String>,
}

impl ServerIdentity {
    /// `MariaDB 10.11.19`, as the header and the exports show it.
    #[must_use]
    pub fn flavor_name(&self) -> Option<String> {
        self.flavor.as_ref().map(ToString::to_string)
    }

    /// `@@version` as the server reported it.
    #[must_use]
    pub fn version(&self) -> Option<&str> {
        self.flavor.as_ref().map(|f| f.version_string.as_str())
    }
}

/// The server's clock against rwtop's host's, estimated from query round trips (`clock.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockView {
    /// The server's clock minus this host's.
    pub offset_ms: i64,
    /// How far that estimate may be off: half the round trip it was read with.
    pub error_ms: i64,
}

/// A value read only every few status samples (the processlist scan, the online schema change
/// tools' tables), with the sample that carried it. Rules that count consecutive samples judge
/// it only when [`Self::fresh_at`] the node's newest sample: the others repeat an older read,
/// which can neither prove a thing still runs nor that it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scanned<T> {
    /// The status sample (by `NodeView::sample_seq`) that carried this read.
    pub sample: u64,
    pub value: T,
}

impl<T> Scanned<T> {
    /// Whether it was read with sample `seq`.
    #[must_use]
    pub fn fresh_at(&self, seq: u64) -> bool {
        self.sample == seq
    }
}

/// The newest processlist scan: its summary and the schema changes it found running.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessScan {
    pub summary: ProcessSummary,
    /// Schema changes running on the node, oldest first as the server listed them.
    pub ddl: Vec<DdlStatement>,
}

/// The node's binary log, where it is read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BinlogView {
    /// Its own coordinate (`SHOW BINLOG STATUS`) from the newest sample: read only on a node a
    /// watched replica replicates from (or while a node has not answered yet); `None` on a leaf
    /// and where binary logging is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<BinlogPos>,
    /// Its binlogs (`SHOW BINARY LOGS`), oldest first: what its replicas can still fetch. Read
    /// when a node begins to feed a replica, at once after each rotation and every minute (a
    /// `PURGE`); the newest file's size follows [`Self::head`]. Empty on a leaf.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<BinlogFile>,
    /// How fast it writes them (`store/headroom.rs`), where the list is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<super::headroom::BinlogRate>,
}

/// What a node reports only while it answers, from its newest sample and the reads that came
/// with it: all of it, or (while it does not answer, or before its first sample) none of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveParts {
    pub read_only: bool,
    /// The node's own GTID state.
    pub gtid: GtidState,
    /// The newest processlist scan; `None` before the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<Scanned<ProcessScan>>,
    /// Online schema change runs on this node (a writable root), from the newest look for the
    /// tools' tables; `None` before the first look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osc: Option<Scanned<Vec<OscRun>>>,
    #[serde(default)]
    pub binlog: BinlogView,
    /// The health lint's settings, as last read (at connect and every few minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<SafetySettings>,
    /// Semi-sync: the source side's state and ACK waits on a primary, the replica side's on a
    /// replica; `None` where neither plugin is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semisync: Option<super::semisync::SemiSyncView>,
    /// The disks holding the node's directories, where the operator opted in to reading them
    /// (`store/disks.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disks: Option<super::disks::DisksView>,
    /// A Galera member's state, component, queues and last interval (`store/galera.rs`);
    /// `None` on any other node, and before the first reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub galera: Option<super::galera::GaleraView>,
}
