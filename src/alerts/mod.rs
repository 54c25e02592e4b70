//! The alert engine: rules judged on every new sample of the store, with hysteresis, so the
//! operator sees a condition that holds rather than one that flickered for a poll.
//!
//! The engine is pure model: it reads [`crate::store::Snapshot`]s and returns an
//! [`AlertsView`]; the TUI and the JSON export show that view. Time comes from the snapshot
//! (`taken_at` for the wall clock, `uptime` for the sample clock), never from the system clock,
//! so the same snapshots always give the same alerts.
//!
//! * [`engine`] decides which rules have a new sample to judge and keeps their state.
//! * [`hysteresis`] turns a run of verdicts into raised and cleared alerts.
//! * [`log`] is the bounded ring of raised/cleared events (no log file: the JSON export and the
//!   TUI read the ring).
//! * [`rules`] and the files beside it hold one idea each: thread and error rules, the two SBM
//!   rules, errant transactions, topology, DDL with its catch-up [`eta`], and the global rules.

mod ddl;
mod engine;
mod errant;
mod eta;
mod format;
mod global;
mod hysteresis;
mod log;
mod rules;
mod sbm;
mod topology;

/// Synthetic snapshots for unit tests (alerts and UI panels).
#[cfg(test)]
pub(crate) mod testkit;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use engine::AlertEngine;

/// Thresholds and timing the rules judge by; defaults follow DESIGN.md §5.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertSettings {
    /// Consecutive bad samples before an alert is raised.
    pub raise_after: u32,
    /// Consecutive clean samples before a raised alert clears.
    pub clear_after: u32,
    /// One sample per this much uptime for global rules and for nodes that do not answer.
    pub poll_interval: Duration,
    /// The heartbeat's resolution: lag differences below two intervals are noise.
    pub heartbeat_interval: Duration,
    pub sbm_disagree_seconds: f64,
    pub lag_p99_seconds: f64,
    pub gtid_backlog: u64,
    pub routing_max_lag_seconds: f64,
    pub clock_skew_ms: i64,
    /// Entries the in-memory alert log keeps; the oldest go first.
    pub log_capacity: usize,
}

impl Default for AlertSettings {
    fn default() -> Self {
        Self::from_thresholds(
            &crate::config::Thresholds::default(),
            Duration::from_secs(1),
            Duration::from_millis(250),
        )
    }
}

impl AlertSettings {
    /// The configured thresholds; the rest (hysteresis, clock skew, log size) are not in the
    /// config file yet and take their defaults.
    #[must_use]
    pub fn from_thresholds(
        t: &crate::config::Thresholds,
        poll_interval: Duration,
        heartbeat_interval: Duration,
    ) -> Self {
        Self {
            raise_after: t.raise_after.max(1),
            clear_after: t.clear_after.max(1),
            poll_interval,
            heartbeat_interval,
            sbm_disagree_seconds: t.sbm_disagree_seconds,
            lag_p99_seconds: t.lag_p99_seconds,
            gtid_backlog: t.gtid_backlog,
            routing_max_lag_seconds: t.routing_max_lag_seconds,
            clock_skew_ms: i64::try_from(t.clock_skew_ms).unwrap_or(i64::MAX),
            log_capacity: 1000,
        }
    }
}

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
        }
    }

    /// Critical means replication is broken or reads/failover are at risk now (a replica
    /// silently behind while SBM says 0 serves stale reads that every SBM-based check passes);
    /// warning means something is off and worth a look.
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
            | Self::AllReplicasLagging => Severity::Critical,
            Self::SbmOverstatesLag
            | Self::LagP99High
            | Self::GtidBacklogHigh
            | Self::ClockSkew
            | Self::TopologyChanged
            | Self::WritableReplica
            | Self::DdlInFlight => Severity::Warning,
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
}

/// One raise or clear, for the alert log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    pub at: chrono::DateTime<chrono::Utc>,
    pub raised: bool,
    pub kind: AlertKind,
    pub node: Option<String>,
    pub summary: String,
}

/// What the outputs show: the active alerts and the log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AlertsView {
    /// Critical first, then oldest first.
    pub active: Vec<Alert>,
    /// Newest first.
    pub log: Vec<LogEntry>,
}

#[cfg(test)]
mod settings_tests {
    use std::time::Duration;

    use super::AlertSettings;
    use crate::config::Thresholds;

    #[test]
    fn settings_take_every_configured_threshold() {
        let t = Thresholds {
            sbm_disagree_seconds: 2.5,
            lag_p99_seconds: 3.0,
            gtid_backlog: 7,
            routing_max_lag_seconds: 4.0,
            clock_skew_ms: 900,
            raise_after: 4,
            clear_after: 6,
        };
        let s =
            AlertSettings::from_thresholds(&t, Duration::from_secs(2), Duration::from_millis(500));
        assert_eq!(
            (
                s.raise_after,
                s.clear_after,
                s.clock_skew_ms,
                s.gtid_backlog
            ),
            (4, 6, 900, 7)
        );
        assert_eq!(
            (
                s.sbm_disagree_seconds,
                s.lag_p99_seconds,
                s.routing_max_lag_seconds
            ),
            (2.5, 3.0, 4.0)
        );
        assert_eq!(
            (s.poll_interval, s.heartbeat_interval),
            (Duration::from_secs(2), Duration::from_millis(500))
        );
    }
}
