//! Failover exposure as every output shows it: per root, what each replica under it would lose
//! if the root died now, and the replica to promote. The judgement lives in
//! `alerts/exposure.rs`; these are the published view types, and the GTID positions they are
//! worked out from ([`Held`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::gtid::{GtidList, GtidSet};
use crate::mysql::{GtidState, ReplicaGtid};

/// The transactions a node holds (or a replica has received), in its family's terms: `MySQL`
/// a set, `MariaDB` the last sequence number per domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Held {
    Mysql { set: GtidSet },
    Mariadb { list: GtidList },
}

impl Held {
    /// What a node holds as a source: `gtid_executed`, or `gtid_binlog_pos`.
    #[must_use]
    pub fn of_node(state: &GtidState) -> Self {
        match state {
            GtidState::Mysql { executed } => Self::Mysql {
                set: executed.clone(),
            },
            GtidState::Mariadb { binlog_pos, .. } => Self::Mariadb {
                list: binlog_pos.clone(),
            },
        }
    }

    /// What a channel has received: `Retrieved_Gtid_Set` with `Executed_Gtid_Set` (`MySQL`),
    /// `Gtid_IO_Pos` (`MariaDB`). `None` where GTIDs are off (`MySQL`'s empty sets).
    #[must_use]
    pub fn received(gtid: &ReplicaGtid) -> Option<Self> {
        match gtid {
            ReplicaGtid::Mysql {
                retrieved,
                executed,
                ..
            } => {
                let set = retrieved.union(executed);
                (!set.is_empty()).then_some(Self::Mysql { set })
            }
            ReplicaGtid::Mariadb { io_pos, .. } => Some(Self::Mariadb {
                list: io_pos.clone(),
            }),
        }
    }

    /// Transactions `other` holds that `self` does not; `None` across families.
    #[must_use]
    pub fn lacks(&self, other: &Self) -> Option<u64> {
        match (self, other) {
            (Self::Mysql { set: mine }, Self::Mysql { set: theirs }) => {
                Some(u64::try_from(theirs.subtract(mine).count()).unwrap_or(u64::MAX))
            }
            (Self::Mariadb { list: mine }, Self::Mariadb { list: theirs }) => {
                Some(theirs.total_distance(mine))
            }
            _ => None,
        }
    }

    /// Everything either holds: the union of sets, or per domain the furthest position.
    /// `None` across families.
    #[must_use]
    pub fn merged(&self, other: &Self) -> Option<Self> {
        match (self, other) {
            (Self::Mysql { set: a }, Self::Mysql { set: b }) => {
                Some(Self::Mysql { set: a.union(b) })
            }
            (Self::Mariadb { list: a }, Self::Mariadb { list: b }) => {
                let mut list = a.clone();
                for gtid in b.iter() {
                    if list.seq(gtid.domain).is_none_or(|seq| seq < gtid.seq) {
                        list.insert(*gtid);
                    }
                }
                Some(Self::Mariadb { list })
            }
            _ => None,
        }
    }
}

/// One root's exposure: its replicas' rows and the candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterExposure {
    /// The root (the primary) the replicas below replicate from.
    pub root: String,
    /// Whether the root answers now. When it does not, every figure is as of its last sample
    /// ([`Self::root_sample_age`] old): what it had then, its replicas lack.
    pub root_answers: bool,
    /// Age of the root's newest sample: how old the state the figures compare against is.
    pub root_sample_age: Option<Duration>,
    /// Every replica under the root, in the snapshot's order.
    pub replicas: Vec<ReplicaExposure>,
    /// The replica to promote if the root died now; `None` when none qualifies.
    pub candidate: Option<Candidate>,
    /// What the root's semi-sync state means for the figures above; `None` where semi-sync is
    /// not loaded, off, or not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_path: Option<String>,
}

/// What one replica (its channel from the root) stands to lose and to apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicaExposure {
    pub node: String,
    pub channel: String,
    /// The node it replicates from (the root, or a replica above it in a cascade).
    pub source: Option<String>,
    /// Transactions the root had (at its sample before this replica's status) that this
    /// replica has not received: lost with the root if it crashed now. A lower bound while the
    /// root takes writes; `None` when it cannot be told.
    pub not_received: Option<u64>,
    /// Received, not yet applied (the relay log left to apply).
    pub relay_trx: Option<u64>,
    /// The same in binlog bytes, where known.
    pub relay_bytes: Option<u64>,
    /// The measured apply rate the drain is timed at (transactions per second).
    pub apply_trx_per_s: Option<f64>,
    /// How long applying the relay log takes at that rate: 0 with nothing to apply; `None`
    /// with the SQL thread stopped (it does not drain) or no rate measured yet.
    pub drain: Option<Duration>,
    /// Why [`Self::drain`] is unknown, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_unknown: Option<String>,
    /// Errant GTIDs (the active `errant_transactions` alert's), empty when none.
    #[serde(default)]
    pub errant: String,
    /// `log_slave_updates` / `log_replica_updates`, as last read.
    pub log_replica_updates: Option<bool>,
    /// `SQL_Delay` in seconds.
    pub sql_delay: Option<u64>,
    /// Why this replica is not a candidate; `None` when it is one.
    pub excluded: Option<String>,
}

/// The replica to promote, and what promoting it would lose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub node: String,
    /// Transactions it never received that the root (as last seen) or another replica has.
    pub loses: Option<u64>,
    /// Why it was chosen over the other qualifying replicas.
    pub reason: String,
}

impl ClusterExposure {
    /// One replica's row, by node name.
    #[must_use]
    pub fn replica(&self, node: &str) -> Option<&ReplicaExposure> {
        self.replicas.iter().find(|r| r.node == node)
    }
}
