//! How much work a replica still has in flight, from its status and its source's state:
//! GTID transactions not yet received / received but not applied, and binlog bytes behind.

use serde::Serialize;

use crate::mysql::{
    BinlogFile, BinlogPos, BinlogStatus, GtidState, NodeState, ReplicaGtid, ReplicaStatus,
    bytes_between,
};

/// Transactions in flight; `None` when the inputs to tell are missing (source not polled yet,
/// GTID off), never a guessed 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct GtidBacklog {
    pub not_received: Option<u64>,
    pub not_applied: Option<u64>,
}

impl GtidBacklog {
    #[must_use]
    pub fn total(&self) -> Option<u64> {
        Some(self.not_received?.saturating_add(self.not_applied?))
    }
}

fn saturate(count: u128) -> u64 {
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// `source` is the state of the node this replica replicates from (sampled separately, so the
/// two may be a poll apart: a source sampled earlier makes the backlog read low, clamped at 0).
#[must_use]
pub fn gtid_backlog(
    status: &ReplicaStatus,
    replica: &NodeState,
    source: Option<&NodeState>,
) -> GtidBacklog {
    match (&status.gtid, source.map(|s| &s.gtid)) {
        (
            ReplicaGtid::Mysql {
                retrieved,
                executed,
                ..
            },
            source_gtid,
        ) => {
            let not_received = match source_gtid {
                Some(GtidState::Mysql { executed: upstream }) => Some(saturate(
                    upstream.subtract(&retrieved.union(executed)).count(),
                )),
                _ => None,
            };
            GtidBacklog {
                not_received,
                not_applied: Some(saturate(retrieved.subtract(executed).count())),
            }
        }
        (
            ReplicaGtid::Mariadb {
                io_pos, slave_pos, ..
            },
            source_gtid,
        ) => {
            let applied = match (slave_pos, &replica.gtid) {
                (Some(pos), _) => Some(pos),
                (None, GtidState::Mariadb { slave_pos, .. }) => Some(slave_pos),
                (None, GtidState::Mysql { .. }) => None,
            };
            let not_received = match source_gtid {
                Some(GtidState::Mariadb { binlog_pos, .. }) => {
                    Some(binlog_pos.total_distance(io_pos))
                }
                _ => None,
            };
            GtidBacklog {
                not_received,
                not_applied: applied.map(|a| io_pos.total_distance(a)),
            }
        }
    }
}

/// Binlog bytes the IO thread has yet to read and the SQL thread has yet to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BytesBehind {
    pub io: Option<u64>,
    pub sql: Option<u64>,
}

/// Across binlog file boundaries using the source's binlog list. The list is refreshed less often
/// than the position, so the source's current file is added when the list predates it.
#[must_use]
pub fn bytes_behind(
    status: &ReplicaStatus,
    head: Option<&BinlogStatus>,
    files: &[BinlogFile],
) -> BytesBehind {
    let Some(head) = head else {
        return BytesBehind::default();
    };
    let mut files = files.to_vec();
    match files.iter_mut().find(|f| f.name == head.position.file) {
        Some(current) => current.size = current.size.max(head.position.pos),
        None => files.push(BinlogFile {
            name: head.position.file.clone(),
            size: head.position.pos,
        }),
    }
    let between = |from: &BinlogPos, to: &BinlogPos| bytes_between(&files, from, to);
    BytesBehind {
        io: between(&status.received, &head.position),
        sql: between(&status.applied, &status.received),
    }
}
