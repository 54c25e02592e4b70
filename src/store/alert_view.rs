//! The alerts a snapshot carries, as every output shows them. The rules that raise them live in
//! `alerts`; these are the published view types.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What an alert is about. The `snake_case` names are part of the JSON schema: never rename one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    SbmUnderstatesLag,
    SbmOverstatesLag,
    IoThreadStopped,
    SqlThreadStopped,
    ReplicationError,
    HeartbeatStale,
    LagP99High,
    GtidBacklogHigh,
    ErrantTransactions,
    NodeDown,
    ClockSkew,
    TopologyChanged,
    WritableReplica,
    AllReplicasLagging,
    DdlInFlight,
    ReplicaNotRecovering,
    /// Semi-sync is enabled on a primary but its status is `OFF`: it commits asynchronously.
    SemisyncFellBack,
    /// Fewer semi-sync replicas connected than a commit needs ACKs from.
    SemisyncAcksShort,
    /// Commits went out without an ACK since the last poll.
    SemisyncUnackedCommits,
    DiskFilling,
    /// A Galera member out of the primary component, or not ready.
    GaleraNotPrimary,
    /// A Galera member in the primary component but not synced: a donor or desynced member
    /// serves stale reads, a joining or joined one none.
    GaleraNotSynced,
    /// A Galera member sent flow control: its backlog paused the cluster's writes.
    GaleraFlowControl,
}

impl AlertKind {
    /// The JSON name, for text that must match the schema (logs, summaries).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::SbmUnderstatesLag => "sbm_understates_lag",
            Self::SbmOverstatesLag => "sbm_overstates_lag",
            Self::IoThreadStopped => "io_thread_stopped",
            Self::SqlThreadStopped => "sql_thread_stopped",
            Self::ReplicationError => "replication_error",
            Self::HeartbeatStale => "heartbeat_stale",
            Self::LagP99High => "lag_p99_high",
            Self::GtidBacklogHigh => "gtid_backlog_high",
            Self::ErrantTransactions => "errant_transactions",
            Self::NodeDown => "node_down",
            Self::ClockSkew => "clock_skew",
            Self::TopologyChanged => "topology_changed",
            Self::WritableReplica => "writable_replica",
            Self::AllReplicasLagging => "all_replicas_lagging",
            Self::DdlInFlight => "ddl_in_flight",
            Self::ReplicaNotRecovering => "replica_not_recovering",
            Self::SemisyncFellBack => "semisync_fell_back",
            Self::SemisyncAcksShort => "semisync_acks_short",
            Self::SemisyncUnackedCommits => "semisync_unacked_commits",
            Self::DiskFilling => "disk_filling",
            Self::GaleraNotPrimary => "galera_not_primary",
            Self::GaleraNotSynced => "galera_not_synced",
            Self::GaleraFlowControl => "galera_flow_control",
        }
    }

    /// Critical means replication is broken or reads/failover are at risk now (a replica
    /// silently behind while SBM says 0 serves stale reads that every SBM-based check passes);
    /// warning means something is off and worth a look. Semi-sync short of acking replicas is
    /// critical: the next commit either waits the whole timeout (writes stall) or goes out
    /// unprotected; commits without an ACK are a warning because the fall-back that causes them
    /// is its own critical alert, and alone (between two polls) they mean a flap.
    #[must_use]
    pub fn severity(self) -> Severity {
        match self {
            Self::IoThreadStopped
            | Self::SqlThreadStopped
            | Self::ReplicationError
            | Self::SbmUnderstatesLag
            | Self::HeartbeatStale
            | Self::ErrantTransactions
            | Self::NodeDown
            | Self::AllReplicasLagging
            | Self::SemisyncFellBack
            | Self::SemisyncAcksShort
            | Self::GaleraNotPrimary
            | Self::GaleraNotSynced => Severity::Critical,
            Self::SbmOverstatesLag
            | Self::LagP99High
            | Self::GtidBacklogHigh
            | Self::ClockSkew
            | Self::TopologyChanged
            | Self::WritableReplica
            | Self::DdlInFlight
            | Self::ReplicaNotRecovering
            | Self::SemisyncUnackedCommits
            | Self::DiskFilling
            | Self::GaleraFlowControl => Severity::Warning,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Critical,
}

/// A raised alert, as shown until it clears.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub kind: AlertKind,
    /// `None` for alerts about the whole topology.
    pub node: Option<String>,
    /// The replication channel a channel rule judged, when it is a named one (the default
    /// channel `''` stays unnamed, as in every output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    pub severity: Severity,
    /// When the condition was first seen in the run of samples that raised it.
    pub since: chrono::DateTime<chrono::Utc>,
    /// The newest sample on which the condition held.
    pub last_seen: chrono::DateTime<chrono::Utc>,
    /// Samples on which it held.
    pub count: u64,
    /// The numbers that disagree, in display order, as text an operator reads ("12.40s").
    pub evidence: Vec<(String, String)>,
    /// One line: the likeliest explanation given the evidence.
    pub cause: String,
    /// Which incident it belongs to (`alerts::incidents`): empty until the engine folded it.
    #[serde(default)]
    pub membership: Membership,
}

/// An alert's place in its incident.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Membership {
    /// The incident's id: its root alert's [`Alert::key`].
    pub incident: String,
    /// The root alert's key; `None` on the root itself.
    pub caused_by: Option<String>,
    /// Behind only because a node upstream of it (its source, transitively) is: a downstream
    /// replica's share of an upstream incident.
    pub inherited: bool,
    /// An after-effect: a figure over a past window (the lag's P99 over a minute) that stays
    /// high after the replica caught up again. Nothing to do but wait for it to clear.
    pub recovering: bool,
}

/// Symptom alerts that share one root cause, headed by that cause (`alerts::incidents` says
/// how they are formed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    /// Its root alert's key: stable for as long as the root stays raised.
    pub id: String,
    /// The root alert's kind and place.
    pub kind: AlertKind,
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The highest severity its members' kinds carry: one incident pages once.
    pub severity: Severity,
    /// Every member is an after-effect ([`Membership::recovering`]).
    pub recovering: bool,
    /// The root's `since`.
    pub since: chrono::DateTime<chrono::Utc>,
    /// One line: the root's cause and what it drags along.
    pub summary: String,
    /// Its alerts' keys, the root first.
    pub alerts: Vec<String>,
}

/// One raise or clear, for the alert log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub at: chrono::DateTime<chrono::Utc>,
    pub raised: bool,
    pub kind: AlertKind,
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    pub summary: String,
}

impl Alert {
    /// Where it holds, as every output names it: `r1`, `agg/p2` for a named channel, `None`
    /// for the whole topology.
    #[must_use]
    pub fn place(&self) -> Option<String> {
        place(self.node.as_deref(), self.channel.as_deref())
    }

    /// Its identity as text, as the JSON and the metrics name it: `io_thread_stopped:r1`,
    /// `lag_p99_high:agg/p2`, `all_replicas_lagging` for the whole topology.
    #[must_use]
    pub fn key(&self) -> String {
        match self.place() {
            Some(place) => format!("{}:{place}", self.kind.name()),
            None => self.kind.name().to_owned(),
        }
    }

    /// Folded under another alert's incident (its symptom, not its cause).
    #[must_use]
    pub fn is_folded(&self) -> bool {
        self.membership.caused_by.is_some()
    }
}

impl LogEntry {
    /// As [`Alert::place`].
    #[must_use]
    pub fn place(&self) -> Option<String> {
        place(self.node.as_deref(), self.channel.as_deref())
    }
}

/// `node` or `node/channel`: the one spelling of a channel's place (a test-read target too).
#[must_use]
pub fn place(node: Option<&str>, channel: Option<&str>) -> Option<String> {
    match (node, channel) {
        (Some(node), Some(channel)) => Some(format!("{node}/{channel}")),
        (node, _) => node.map(str::to_owned),
    }
}

/// What the outputs show: the active alerts and the log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AlertsView {
    /// Critical first, then oldest first.
    pub active: Vec<Alert>,
    /// The active alerts grouped by root cause: active before recovering, critical first, then
    /// oldest first. Empty in recordings made before incidents existed.
    #[serde(default)]
    pub incidents: Vec<Incident>,
    /// Newest first; every snapshot shares the alert engine's list until it next changes.
    pub log: Arc<Vec<LogEntry>>,
}
