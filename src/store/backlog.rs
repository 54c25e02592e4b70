//! How much work a replica still has in flight, from its status and its source's state:
//! GTID transactions not yet received / received but not applied, and binlog bytes behind.
//!
//! A replica and its source are polled separately, so "not received" compares two moments. A
//! source state read *after* the replica's status counts the writes of the gap as missing from a
//! replica that had them all along (37 transactions for a gap of 250 ms at 150 writes/s). So a
//! replica is compared with the newest state its source had reported before the replica's poll
//! began ([`SourceHistory::before`]): what the source had then, the replica has received or
//! not, and a caught-up replica reads 0. The price is that the count (and the bytes the IO
//! thread has to read) is a lower bound: writes the source took since that state are not
//! counted until a later poll.

use std::collections::VecDeque;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::gtid::{GtidList, GtidSet};
use crate::mysql::{
    BinlogFile, BinlogPos, GtidState, NodeState, ReplicaGtid, ReplicaStatus, bytes_between, reached,
};
use crate::poll::NodeSample;

/// Transactions in flight; `None` when the inputs to tell are missing (source not polled yet,
/// GTID off), never a guessed 0. `not_received` is a lower bound (see the module's comment);
/// `not_applied` compares two positions of one status row and is exact for that moment.
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

/// `source` is what the node this replica replicates from had, reported before the replica's
/// status was read ([`SourceHistory::before`]); the transactions it has and the replica has not
/// received are a lower bound of those in flight.
#[must_use]
pub fn gtid_backlog(
    status: &ReplicaStatus,
    replica: &NodeState,
    source: Option<&SourceGtid>,
) -> GtidBacklog {
    match (&status.gtid, source) {
        (
            ReplicaGtid::Mysql {
                retrieved,
                executed,
                ..
            },
            source_gtid,
        ) => {
            let not_received = match source_gtid {
                Some(SourceGtid::Mysql { executed: upstream }) => Some(saturate(
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
            // A channel's `Gtid_IO_Pos` also lists domains other channels bring (it starts
            // from `gtid_slave_pos`): only the domains its source writes are its backlog.
            let (not_received, io_pos) = match source_gtid {
                Some(SourceGtid::Mariadb { binlog_pos }) => (
                    Some(binlog_pos.total_distance(io_pos)),
                    std::borrow::Cow::Owned(only_domains_of(io_pos, binlog_pos)),
                ),
                _ => (None, std::borrow::Cow::Borrowed(io_pos)),
            };
            GtidBacklog {
                not_received,
                not_applied: applied.map(|a| io_pos.total_distance(a)),
            }
        }
    }
}

/// `list` cut to the domains `source` has.
fn only_domains_of(list: &GtidList, source: &GtidList) -> GtidList {
    let mut out = GtidList::empty();
    for gtid in list.iter().filter(|g| source.get(g.domain).is_some()) {
        out.insert(*gtid);
    }
    out
}

/// Binlog bytes the IO thread has yet to read (a lower bound, as "not received") and the SQL
/// thread has yet to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BytesBehind {
    pub io: Option<u64>,
    pub sql: Option<u64>,
}

/// Across binlog file boundaries using the source's binlog list. `head` is the source's binlog
/// position from the same state as the GTIDs compared. The list is refreshed less often than the
/// position, so the source's current file is added when the list predates it.
#[must_use]
pub fn bytes_behind(
    status: &ReplicaStatus,
    head: Option<&BinlogPos>,
    files: &[BinlogFile],
) -> BytesBehind {
    let Some(head) = head else {
        return BytesBehind::default();
    };
    let files = reached(files, head);
    // The replica is sampled after that state of its source: a read position past the source's
    // head then means nothing is left to read (0), not an unknown distance.
    let index = |pos: &BinlogPos| files.iter().position(|f| f.name == pos.file);
    let at_or_past = |a: &BinlogPos, b: &BinlogPos| match (index(a), index(b)) {
        (Some(i), Some(j)) => i > j || (i == j && a.pos >= b.pos),
        _ => false,
    };
    let between = |from: &BinlogPos, to: &BinlogPos| {
        bytes_between(&files, from, to).or_else(|| at_or_past(from, to).then_some(0))
    };
    BytesBehind {
        io: between(&status.received, head),
        sql: between(&status.applied, &status.received),
    }
}

/// The part of a node's GTID state its replicas are compared with: what it has executed
/// (`MySQL`) or written to its binlog (`MariaDB`), and nothing else, since a few are kept per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceGtid {
    Mysql { executed: GtidSet },
    Mariadb { binlog_pos: GtidList },
}

impl SourceGtid {
    #[must_use]
    pub fn of(state: &GtidState) -> Self {
        match state {
            GtidState::Mysql { executed } => Self::Mysql {
                executed: executed.clone(),
            },
            GtidState::Mariadb { binlog_pos, .. } => Self::Mariadb {
                binlog_pos: binlog_pos.clone(),
            },
        }
    }
}

/// What a node reported of itself as a source in one poll, and the last instant that report
/// can describe.
#[derive(Debug, Clone)]
pub struct SourceState {
    /// When the poll's answers were all in: the state is the node's at some moment before.
    pub answered: Instant,
    pub gtid: SourceGtid,
    pub head: Option<BinlogPos>,
}

/// A node's last few states as a source, oldest first. Every node polls at the same interval,
/// so the state a replica needs (the newest before its own poll began) is one of the last two or
/// three; [`SourceHistory::KEEP`] leaves room for a nudged poll, and more would only hold memory
/// (each state is a GTID set and a binlog position, a few hundred bytes).
#[derive(Debug, Default)]
pub struct SourceHistory {
    states: VecDeque<SourceState>,
}

impl SourceHistory {
    pub const KEEP: usize = 4;

    /// Keeps this sample's state; samples of one node arrive in the order they were taken.
    pub fn record(&mut self, sample: &NodeSample) {
        if self.states.len() == Self::KEEP {
            self.states.pop_front();
        }
        self.states.push_back(SourceState {
            answered: sample.at + sample.took,
            gtid: SourceGtid::of(&sample.reported.state.gtid),
            head: sample.reported.binlog.as_ref().map(|b| b.position.clone()),
        });
    }

    /// The newest state the source had reported by `at` (when a replica's poll began: its
    /// status describes a moment no earlier). `None` when every state kept is later, as for a
    /// replica's first poll that overlapped its source's: "not received" is unknown for that
    /// poll rather than a count of writes that happened after the replica's status.
    #[must_use]
    pub fn before(&self, at: Instant) -> Option<&SourceState> {
        self.states.iter().rev().find(|s| s.answered <= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::Family;
    use crate::mysql::row::fixture_row as fixture;

    fn state_mysql(executed: &str) -> NodeState {
        NodeState {
            gtid: GtidState::Mysql {
                executed: GtidSet::parse(executed).unwrap(),
            },
            read_only: false,
            super_read_only: Some(false),
            parallel_workers: None,
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
        let backlog = gtid_backlog(&status, &replica, Some(&SourceGtid::of(&source.gtid)));
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
            parallel_workers: None,
        };
        let backlog = gtid_backlog(&status, &replica, Some(&SourceGtid::of(&source.gtid)));
        // Received up to 0-1-10, applied 0-1-8, source at 0-1-13.
        assert_eq!(backlog.not_received, Some(3));
        assert_eq!(backlog.not_applied, Some(2));
    }

    /// A channel of a multi-source replica counts only the domains its source writes: the
    /// other channel's domain in its `Gtid_IO_Pos` is not its backlog.
    #[test]
    fn a_channel_counts_only_its_sources_domains() {
        let row = fixture("mariadb-10.11/show_all_slaves_status__running.txt");
        let mut status = ReplicaStatus::from_row(&row).unwrap();
        let list = |text: &str| GtidList::parse(text).unwrap();
        status.gtid = ReplicaGtid::Mariadb {
            using_gtid: "Slave_Pos".to_owned(),
            // Domain 0 (the other channel's) ahead of what was applied there.
            io_pos: list("0-1-70,1-2-95"),
            slave_pos: Some(list("0-1-60,1-2-95")),
        };
        let replica = NodeState::from_row(
            &fixture("mariadb-10.11/state__replica.txt"),
            Family::Mariadb,
        )
        .unwrap();
        let source = SourceGtid::Mariadb {
            binlog_pos: list("1-2-100"),
        };
        let backlog = gtid_backlog(&status, &replica, Some(&source));
        assert_eq!(
            (backlog.not_received, backlog.not_applied),
            (Some(5), Some(0))
        );
    }

    #[test]
    fn bytes_behind_adds_the_sources_current_file_when_the_list_predates_it() {
        let status =
            ReplicaStatus::from_row(&fixture("mysql-8.0/show_replica_status__sql_stopped.txt"))
                .unwrap();
        let head = BinlogPos {
            file: "binlog.000043".into(),
            pos: 1000,
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
        let stale_head = BinlogPos {
            file: "binlog.000042".into(),
            pos: 79_000_000,
        };
        assert_eq!(bytes_behind(&status, Some(&stale_head), &files).io, Some(0));
        // A file rwtop has never seen stays unknown.
        let unknown = BinlogPos {
            file: "other.000001".into(),
            pos: 5,
        };
        assert_eq!(bytes_behind(&status, Some(&unknown), &[]).io, None);
    }

    fn mariadb_state(binlog_pos: &str) -> NodeState {
        let list = GtidList::parse(binlog_pos).unwrap();
        NodeState {
            gtid: GtidState::Mariadb {
                binlog_pos: list.clone(),
                slave_pos: GtidList::empty(),
                current_pos: list,
            },
            read_only: false,
            super_read_only: None,
            parallel_workers: None,
        }
    }

    /// A poll of a source that began at `at` and took `took_ms`.
    fn source_sample(at: Instant, took_ms: u64, binlog_pos: &str, head: u64) -> NodeSample {
        NodeSample {
            at,
            reported: crate::mysql::batch::Reported {
                binlog: Some(crate::mysql::BinlogStatus {
                    position: BinlogPos {
                        file: "binlog.000001".into(),
                        pos: head,
                    },
                    executed_gtid_set: None,
                }),
                ..crate::mysql::batch::Reported::status_only(Vec::new(), mariadb_state(binlog_pos))
            },
            resolving: std::collections::BTreeSet::new(),
            took: std::time::Duration::from_millis(took_ms),
        }
    }

    fn gtid_of(state: Option<&SourceState>) -> Option<String> {
        match &state?.gtid {
            SourceGtid::Mariadb { binlog_pos } => Some(binlog_pos.to_string()),
            SourceGtid::Mysql { executed } => Some(executed.to_string()),
        }
    }

    #[test]
    fn a_replica_is_compared_with_the_newest_source_state_answered_before_its_poll() {
        let ms = std::time::Duration::from_millis;
        let t0 = Instant::now();
        let mut history = SourceHistory::default();
        for (i, gtid) in ["0-1-10", "0-1-20", "0-1-30"].iter().enumerate() {
            let second = u64::try_from(i).unwrap() * 1000;
            history.record(&source_sample(t0 + ms(second), 2, gtid, 100));
        }
        // A source poll that began before the replica's but answered after it may have read
        // writes the replica's status predates: the one before it is used.
        let gtid = |history: &SourceHistory, at| gtid_of(history.before(at));
        assert_eq!(gtid(&history, t0 + ms(1_001)).as_deref(), Some("0-1-10"));
        assert_eq!(gtid(&history, t0 + ms(1_002)).as_deref(), Some("0-1-20"));
        assert_eq!(gtid(&history, t0 + ms(1_900)).as_deref(), Some("0-1-20"));
        assert_eq!(gtid(&history, t0 + ms(9_000)).as_deref(), Some("0-1-30"));
        // A replica polled before any source state was in: unknown, not the later state.
        assert_eq!(gtid(&history, t0 + ms(1)), None);
        // Bounded: the oldest states make room.
        for i in 3..20 {
            let gtid = format!("0-1-{}", 10 * (i + 1));
            history.record(&source_sample(t0 + ms(i * 1000), 2, &gtid, 100));
        }
        assert_eq!(history.states.len(), SourceHistory::KEEP);
        assert_eq!(gtid(&history, t0 + ms(15_900)), None);
        assert_eq!(gtid(&history, t0 + ms(17_002)).as_deref(), Some("0-1-180"));
    }

    /// Through the store: a caught-up replica (received everything the source had before its
    /// poll) reads 0 although a newer source state is in, and a real backlog still shows.
    #[test]
    fn the_store_reads_no_backlog_from_a_source_state_taken_after_the_replica() {
        use crate::poll::{ConnState, PollEvent};
        use crate::store::{Role, Store};
        let ms = std::time::Duration::from_millis;
        // The fixture's replica reads from 127.0.0.1:26306: received 0-1-10 up to
        // binlog.000001:2291, applied 0-1-8.
        let endpoint = crate::store::testkit::local_endpoint;
        let nodes = [
            ("p".to_owned(), endpoint(26_306), Role::Primary),
            ("r".to_owned(), endpoint(26_307), Role::Replica),
        ];
        let settings = crate::store::testkit::store_settings();
        let mut store = Store::new(settings, &nodes);
        for node in ["p", "r"] {
            let state = ConnState::Up;
            store.apply(PollEvent::Conn {
                node: node.to_owned(),
                state,
            });
        }
        let status = fixture("mariadb-10.11/show_all_slaves_status__sql_stopped.txt");
        let status = ReplicaStatus::from_row(&status).unwrap();
        let replica_sample = |at| {
            let mut sample = source_sample(at, 2, "0-1-10", 2291);
            sample.reported.replication = vec![status.clone()];
            Box::new(sample)
        };
        let feed = |store: &mut Store, node: &str, sample| {
            store.apply(PollEvent::Sample {
                node: node.to_owned(),
                sample,
            });
        };
        let t0 = Instant::now();
        feed(
            &mut store,
            "p",
            Box::new(source_sample(t0, 2, "0-1-10", 2291)),
        );
        feed(&mut store, "r", replica_sample(t0 + ms(500)));
        // The source took 3 more transactions after the replica's status was read.
        feed(
            &mut store,
            "p",
            Box::new(source_sample(t0 + ms(1000), 2, "0-1-13", 2900)),
        );
        let backlog = |store: &Store| {
            let snapshot = store.snapshot(t0 + ms(1100));
            let r = snapshot.node("r").unwrap().replica().cloned().unwrap();
            (r.gtid_backlog, r.bytes_behind.io)
        };
        let (gtid, io) = backlog(&store);
        assert_eq!(
            (gtid.not_received, gtid.not_applied, io),
            (Some(0), Some(2), Some(0))
        );
        // The replica polled again with nothing more received: those 3 now count.
        feed(&mut store, "r", replica_sample(t0 + ms(1500)));
        let (gtid, io) = backlog(&store);
        assert_eq!((gtid.not_received, io), (Some(3), Some(609)));
    }
}
