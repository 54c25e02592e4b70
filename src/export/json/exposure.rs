//! The snapshot's `exposure` (docs/json-schema.md, docs/failover-exposure.md): per root, what
//! each replica would lose if the root died now, and the replica to promote.

use serde::Serialize;

use crate::store::exposure::{ClusterExposure, ReplicaExposure};

/// Since 1.12: one root's failover exposure.
#[derive(Debug, Serialize)]
pub struct JsonExposure {
    pub root: String,
    /// `false` once the root stopped answering: every figure is then as of its last sample.
    pub root_answers: bool,
    /// Age of the root's newest sample, the state the figures are counted against.
    pub root_sample_age_seconds: Option<f64>,
    pub replicas: Vec<JsonReplicaExposure>,
    pub candidate: Option<JsonCandidate>,
    /// What the root's semi-sync state means for the figures; absent without semi-sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_path: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct JsonReplicaExposure {
    pub node: String,
    pub channel: String,
    pub source: Option<String>,
    /// Transactions the root had that this replica has not received (a lower bound while the
    /// root takes writes); `null` when it cannot be told.
    pub not_received: Option<u64>,
    /// Received, not yet applied.
    pub relay_trx: Option<u64>,
    pub relay_bytes: Option<u64>,
    pub apply_trx_per_s: Option<f64>,
    /// Seconds to apply the relay log at the measured rate; `null` with `drain_unknown`.
    pub drain_seconds: Option<f64>,
    pub drain_unknown: Option<String>,
    /// Errant GTIDs, `""` when none.
    pub errant_gtids: String,
    pub log_replica_updates: Option<bool>,
    pub sql_delay: Option<u64>,
    /// Why it cannot be promoted; `null` for a replica that qualifies.
    pub excluded: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct JsonCandidate {
    pub node: String,
    /// Transactions it never received that the root (as last seen) or another replica has.
    pub loses: Option<u64>,
    pub reason: String,
}

pub fn exposure(c: &ClusterExposure) -> JsonExposure {
    JsonExposure {
        root: c.root.clone(),
        root_answers: c.root_answers,
        root_sample_age_seconds: c.root_sample_age.map(|d| d.as_secs_f64()),
        replicas: c.replicas.iter().map(replica).collect(),
        candidate: c.candidate.as_ref().map(|c| JsonCandidate {
            node: c.node.clone(),
            loses: c.loses,
            reason: c.reason.clone(),
        }),
        commit_path: c.commit_path.clone(),
    }
}

fn replica(r: &ReplicaExposure) -> JsonReplicaExposure {
    JsonReplicaExposure {
        node: r.node.clone(),
        channel: r.channel.clone(),
        source: r.source.clone(),
        not_received: r.not_received,
        relay_trx: r.relay_trx,
        relay_bytes: r.relay_bytes,
        apply_trx_per_s: r.apply_trx_per_s,
        drain_seconds: r.drain.map(|d| d.as_secs_f64()),
        drain_unknown: r.drain_unknown.clone(),
        errant_gtids: r.errant.clone(),
        log_replica_updates: r.log_replica_updates,
        sql_delay: r.sql_delay,
        excluded: r.excluded.clone(),
    }
}
