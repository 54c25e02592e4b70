//! What poller and heartbeat tasks send to the store: owned results, one message each.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::gtid::{DomainGtid, GtidList};
use crate::mysql::batch::Reported;
use crate::mysql::{Flavor, Identity, ReplicaHost, SafetySettings};

/// The state of a node's connection, shown as data rather than hidden in logs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum ConnState {
    Connecting,
    Up,
    /// A poll or connect failed; the next attempt is due in `next`.
    Retrying {
        next: Duration,
        cause: String,
    },
    /// Failing repeatedly; still retrying in the background with capped back-off.
    Down {
        next: Duration,
        cause: String,
    },
}

impl ConnState {
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Up => "up",
            Self::Retrying { .. } => "retrying",
            Self::Down { .. } => "down",
        }
    }
}

/// One status poll of one node.
#[derive(Debug, Clone)]
pub struct NodeSample {
    /// When the first statement was sent: the sample describes the node no earlier than this.
    pub at: Instant,
    /// What the node reported, as the batch read it: its replication status and state every
    /// poll, the rest as the cadence asked (`PollParts`).
    pub reported: Reported,
    /// The host names among `reported.replica_hosts` that resolve from here (the poller looks
    /// each up once per connection, with a deadline, so the store never waits on a resolver).
    pub resolving: BTreeSet<String>,
    /// Wall time the poll took (all statements), for the cost display.
    pub took: Duration,
}

impl NodeSample {
    /// The replicas the node reports, each with whether its host resolves from here; `None`
    /// when not read this time.
    #[must_use]
    pub fn reported_replicas(&self) -> Option<Vec<ReportedReplica>> {
        let hosts = self.reported.replica_hosts.as_ref()?;
        Some(
            hosts
                .iter()
                .map(|host| ReportedReplica {
                    resolves: self.resolving.contains(&host.host),
                    host: host.clone(),
                })
                .collect(),
        )
    }
}

/// A replica another node reports, and whether its reported host resolves from here: the
/// poller asks the resolver (asynchronously, with a deadline), so the store never waits on one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedReplica {
    pub host: ReplicaHost,
    pub resolves: bool,
}

/// One read of rwtop's heartbeat rows on a replica: one row per root the topology has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatRead {
    /// When the read was sent: the replica showed each `seq` at some moment after this.
    pub sent_at: Instant,
    pub rtt: Duration,
    /// By writer index (the order of the engine's writers); a row the replica does not have
    /// (yet) reads `seq: None`.
    pub rows: Vec<BeatRow>,
}

/// One root's heartbeat row as a replica shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BeatRow {
    /// `None`: the row (or table) is not there yet.
    pub seq: Option<u64>,
    /// The row's age by the replica's clock (ms; negative when that clock runs behind).
    pub row_age_ms: Option<i64>,
}

impl HeartbeatRead {
    /// Writer `writer`'s row, absent rows reading as none.
    #[must_use]
    pub fn row(&self, writer: usize) -> BeatRow {
        self.rows.get(writer).copied().unwrap_or_default()
    }
}

/// A replica's applied position read as its heartbeat reading (`beat_gtid.rs`): its
/// `gtid_slave_pos`, from a status poll or alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedRead {
    /// When the read was sent: the replica had applied at least this much at some moment after.
    pub sent_at: Instant,
    pub applied: GtidList,
}

/// One read of a pt-heartbeat row (read-only mode). The row's `ts` was written with the clock of
/// the host running pt-heartbeat, in its local zone or in UTC; both readings are kept and the
/// store picks the zone that makes the primary's own row fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtRead {
    pub sent_at: Instant,
    /// `NOW(6) − ts` and `UTC_TIMESTAMP(6) − ts` on the server read, in ms; `None`: no row.
    pub local_ms: Option<i64>,
    pub utc_ms: Option<i64>,
    /// The row's `ts` as written: whether it moves between reads tells whether anything still
    /// updates it, however fresh it looks.
    pub ts: Option<chrono::NaiveDateTime>,
}

/// One read of a node's disks.
#[derive(Debug, Clone)]
pub struct DiskSample {
    pub read: crate::mysql::DisksRead,
    /// When the read was sent, and how long it took (the cost the docs state).
    pub at: Instant,
    pub took: Duration,
}

/// What the heartbeat writer is doing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum WriterState {
    Starting,
    /// This process writes the row.
    Writing,
    /// Another live rwtop holds the writer lock: this one watches the row on the primary instead
    /// and times each new sequence number as it appears.
    Observing,
    /// `--read-only`, or the primary is read-only: nothing is written.
    Refused {
        reason: String,
    },
    /// The root's `rwtop.heartbeat` is not rwtop's definition: rows written to it could stop
    /// a replica below, so nothing is written until it is fixed (`mysql::own_tables`).
    Unsafe {
        mismatch: crate::mysql::own_tables::Mismatch,
    },
    Failing {
        cause: String,
    },
}

impl WriterState {
    /// The state's one word in JSON, metrics and alert evidence: a table that is not rwtop's is
    /// a refusal like a read-only primary, with its own detail.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Writing => "writing",
            Self::Observing => "observing",
            Self::Refused { .. } | Self::Unsafe { .. } => "refused",
            Self::Failing { .. } => "failing",
        }
    }

    /// Why it refuses or fails, in one line; `None` while all is well.
    #[must_use]
    pub fn detail(&self) -> Option<String> {
        match self {
            Self::Starting | Self::Writing | Self::Observing => None,
            Self::Refused { reason } => Some(reason.clone()),
            Self::Unsafe { mismatch } => Some(format!(
                "{}; rwtop writes nothing there until it is fixed: {}",
                mismatch.summary(),
                mismatch.fix
            )),
            Self::Failing { cause } => Some(cause.clone()),
        }
    }
}

#[derive(Debug, Clone)]
pub enum PollEvent {
    Conn {
        node: String,
        state: ConnState,
    },
    Connected {
        node: String,
        flavor: Flavor,
        identity: Identity,
    },
    Sample {
        node: String,
        sample: Box<NodeSample>,
    },
    /// The health lint's settings, read at connect and every [`super::SETTINGS_EVERY`].
    Settings {
        node: String,
        settings: Box<SafetySettings>,
    },
    /// The privileges this run needs that the node's account lacks, each with what goes off
    /// without it (`mysql/grants.rs`): read at connect and every [`super::GRANTS_EVERY`].
    Grants {
        node: String,
        missing: Vec<crate::mysql::grants::MissingGrant>,
    },
    /// The node's disks and directories (`mysql/disks.rs`), where the operator opted in.
    Disks {
        node: String,
        sample: Box<DiskSample>,
    },
    Heartbeat {
        node: String,
        read: HeartbeatRead,
    },
    /// A Galera member refused the heartbeat read sent at `sent_at` with error 1047: it is out
    /// of the primary component, and its tables serve nothing.
    OutOfComponent {
        node: String,
        sent_at: Instant,
    },
    /// A replica's heartbeat reading taken from its applied position instead of the table.
    Applied {
        node: String,
        read: AppliedRead,
    },
    PtHeartbeat {
        node: String,
        read: PtRead,
    },
    /// The server's clock minus this host's, estimated at the midpoint of a query round trip.
    Clock {
        node: String,
        offset_ms: i64,
        rtt: Duration,
    },
    /// A heartbeat with sequence `seq` was committed (or first seen) on the primary at `at`.
    Ack {
        /// Which root's writer (its index among the engine's writers).
        writer: usize,
        seq: u64,
        at: Instant,
        /// The GTID the heartbeat's write got (`MariaDB` with binary logging on, when this
        /// process wrote it).
        gtid: Option<DomainGtid>,
    },
    Writer {
        writer: usize,
        state: WriterState,
    },
    /// A heartbeat writer moved to the node that took over as primary.
    WriterMoved {
        writer: usize,
        to: String,
    },
}
