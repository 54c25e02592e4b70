//! What a rule returns ([`Verdict`]: bad with its [`Diagnosis`] and its [`Standing`], clean, or
//! unknown) and what every rule may read ([`RuleInputs`]): the snapshot judged, the thresholds
//! and the engine's memories.

use super::AlertSettings;
use super::ddl::DdlMemory;
use super::topology::TopologyMemory;
use crate::store::{NodeView, ReplicaView, Snapshot};

/// The numbers behind a bad verdict and the likeliest explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub evidence: Vec<(String, String)>,
    pub cause: String,
    pub standing: Standing,
}

/// What a bad verdict rests on, which decides how many bad samples raise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// A reading that can flicker (a lag, a backlog, a thread caught mid-reconnect or stopped
    /// by hand for a moment): raised after the configured run of bad samples.
    Reading,
    /// A state the server or the connection states, which does not come and go between polls:
    /// a thread stopped on an error, a node refused or silent past its poll interval. Raised on
    /// the first sample; the debounce already lies in how it was read.
    Stated,
}

/// One rule's judgement of one sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Bad(Diagnosis),
    Clean,
    /// The inputs are missing (a source not sampled yet, lag unknown): no judgement, so a gap
    /// in the data can neither raise nor clear an alert.
    Unknown,
}

impl Verdict {
    pub fn bad(evidence: Vec<(String, String)>, cause: impl Into<String>) -> Self {
        Self::Bad(Diagnosis {
            evidence,
            cause: cause.into(),
            standing: Standing::Reading,
        })
    }

    /// A bad verdict on a state read as such ([`Standing::Stated`]): raised on its first sample.
    pub fn stated(evidence: Vec<(String, String)>, cause: impl Into<String>) -> Self {
        Self::Bad(Diagnosis {
            evidence,
            cause: cause.into(),
            standing: Standing::Stated,
        })
    }
}

/// One piece of an alert's evidence: a named fact, as the alert shows it.
pub fn fact(name: &str, value: impl Into<String>) -> (String, String) {
    (name.to_owned(), value.into())
}

/// What every rule may read: the snapshot judged, the thresholds, and the engine's memories
/// (rules only read them).
pub struct RuleInputs<'a> {
    pub snapshot: &'a Snapshot,
    pub settings: &'a AlertSettings,
    pub ddl: &'a DdlMemory,
    pub topology: &'a TopologyMemory,
    /// The snapshot's nodes by name: rules look sources up for every node.
    pub by_name: std::collections::HashMap<&'a str, &'a NodeView>,
}

impl<'a> RuleInputs<'a> {
    pub fn new(
        snapshot: &'a Snapshot,
        settings: &'a AlertSettings,
        ddl: &'a DdlMemory,
        topology: &'a TopologyMemory,
    ) -> Self {
        let by_name = snapshot
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n))
            .collect();
        Self {
            snapshot,
            settings,
            ddl,
            topology,
            by_name,
        }
    }

    pub fn source_of(&self, node: &NodeView) -> Option<&'a NodeView> {
        node.source
            .as_deref()
            .and_then(|s| self.by_name.get(s).copied())
    }

    /// The routing threshold: replicas above it would not get reads.
    pub fn is_lagging(&self, replica: &ReplicaView) -> bool {
        replica
            .heartbeat_lag
            .value()
            .is_some_and(|lag| lag.as_secs_f64() > self.settings.routing_max_lag_seconds)
    }
}
