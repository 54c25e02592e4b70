//! How much work a replica still has in flight, from its status and its source's state:
//! GTID transactions not yet received / received but not applied, and binlog bytes behind.

use serde::{Deserialize, Serialize};

use crate::mysql::{
    BinlogFile, BinlogPos, BinlogStatus, GtidState, NodeState, ReplicaGtid, ReplicaStatus,
    bytes_between,
};

/// Transactions in flight; `None` when the inputs to tell are missing (source not polled yet,
/// GTID off), never a guessed 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
    // The replica may be sampled after its source: a read position past the source's last known
    // head means nothing is left to read (0), not an unknown distance.
    let index = |pos: &BinlogPos| files.iter().position(|f| f.name == pos.file);
    let at_or_past = |a: &BinlogPos, b: &BinlogPos| match (index(a), index(b)) {
        (Some(i), Some(j)) => i > j || (i == j && a.pos >= b.pos),
        _ => false,
    };
    let between = |from: &BinlogPos, to: &BinlogPos| {
        bytes_between(&files, from, to).or_else(|| at_or_past(from, to).then_some(0))
    };
    BytesBehind {
        io: between(&status.received, &head.position),
        sql: between(&status.applied, &status.received),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gtid::{GtidList, GtidSet};
    use crate::mysql::{Family, parse_vertical};

    fn fixture(path: &str) -> crate::mysql::RawRow {
        let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(full).unwrap();
        parse_vertical(&text).unwrap().rows.remove(0)
    }

    fn state_mysql(executed: &str) -> NodeState {
        NodeState {
            gtid: GtidState::Mysql {
                executed: GtidSet::parse(executed).unwrap(),
            },
            read_only: false,
            super_read_only: Some(false),
        }
    }

    #[test]
    fn mysql_backlog_is_set_arithmetic() {
        let status =
            ReplicaStatus::from_row(&fixture("mysql-8.0/show_replica_status__sql_stopped.txt"))
                .unwrap();
        let ReplicaGtid::Mysql {
            executed,
            retrieved,
            ..
        } = &status.gtid
        else {
            panic!()
        };
        let replica = state_mysql(&executed.to_string());
        // The source has 5 transactions beyond what the replica retrieved.
        let uuid = retrieved.uuids().next().unwrap();
        let source = state_mysql(&format!("{executed},{uuid}:1-211898"));
        let backlog = gtid_backlog(&status, &replica, Some(&source));
        assert_eq!(backlog.not_received, Some(5));
        assert_eq!(backlog.not_applied, Some(211_893 - 210_457));
        assert_eq!(backlog.total(), Some(5 + 211_893 - 210_457));
        // Without the source's state the first half is unknown, not 0.
        let alone = gtid_backlog(&status, &replica, None);
        assert_eq!((alone.not_received, alone.total()), (None, None));
    }

    #[test]
    fn mariadb_backlog_is_per_domain_sequence_distance() {
        let row = fixture("mariadb-10.11/show_all_slaves_status__sql_stopped.txt");
        let status = ReplicaStatus::from_row(&row).unwrap();
        let replica = NodeState::from_row(
            &fixture("mariadb-10.11/state__replica.txt"),
            Family::Mariadb,
        )
        .unwrap();
        let source = NodeState {
            gtid: GtidState::Mariadb {
                binlog_pos: GtidList::parse("0-1-13").unwrap(),
                slave_pos: GtidList::empty(),
                current_pos: GtidList::parse("0-1-13").unwrap(),
            },
            read_only: false,
            super_read_only: None,
        };
        let backlog = gtid_backlog(&status, &replica, Some(&source));
        // Received up to 0-1-10, applied 0-1-8, source at 0-1-13.
        assert_eq!(backlog.not_received, Some(3));
        assert_eq!(backlog.not_applied, Some(2));
    }

    #[test]
    fn bytes_behind_adds_the_sources_current_file_when_the_list_predates_it() {
        let status =
            ReplicaStatus::from_row(&fixture("mysql-8.0/show_replica_status__sql_stopped.txt"))
                .unwrap();
        let head = BinlogStatus {
            position: BinlogPos {
                file: "binlog.000043".into(),
                pos: 1000,
            },
            executed_gtid_set: None,
        };
        let files = [BinlogFile {
            name: "binlog.000042".into(),
            size: 80_000_000,
        }];
        let behind = bytes_behind(&status, Some(&head), &files);
        assert_eq!(behind.io, Some(80_000_000 - 79_904_418 + 1000));
        assert_eq!(behind.sql, Some(79_904_418 - 73_461_285));
        assert_eq!(bytes_behind(&status, None, &files), BytesBehind::default());
        // The source sampled before the replica: its head is behind what the replica has read.
        let stale_head = BinlogStatus {
            position: BinlogPos {
                file: "binlog.000042".into(),
                pos: 79_000_000,
            },
            executed_gtid_set: None,
        };
        assert_eq!(bytes_behind(&status, Some(&stale_head), &files).io, Some(0));
        // A file rwtop has never seen stays unknown.
        let unknown = BinlogStatus {
            position: BinlogPos {
                file: "other.000001".into(),
                pos: 5,
            },
            executed_gtid_set: None,
        };
        assert_eq!(bytes_behind(&status, Some(&unknown), &[]).io, None);
    }
}
