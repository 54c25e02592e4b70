//! Which node took over as primary, judged from one snapshot: the rule the heartbeat writer and
//! the prober follow after a failover.
//!
//! The writer moves only when both of these hold:
//! - the node it writes to is gone (not answering) or read-only — a writable primary that
//!   answers is never abandoned, whatever else looks writable (two writable "primaries" is a
//!   split brain for a human to settle, not for a monitor to pick a side in);
//! - exactly one other node answers, is writable and replicates from nobody (no channel, or
//!   both threads stopped), and either another node replicates from it (a promotion that has
//!   been carried out) or the old primary is gone (nothing left to repoint);
//! - that node is not another root already (a second primary with a writer of its own): two
//!   primaries feeding an aggregator are two roots, and one dying does not make the other its
//!   successor. Moving a root's row onto another root would replicate it to the aggregator
//!   twice, through both channels, and break the second with a duplicate key.

use super::{NodeView, Snapshot};
use crate::mysql::IoRunning;
use crate::poll::ConnState;

impl Snapshot {
    /// The node that replaced `current` as the writable primary, if this snapshot shows one
    /// beyond doubt (the rule in the module docs).
    #[must_use]
    pub fn successor(&self, current: &str) -> Option<&NodeView> {
        let old = self.node(current);
        if old.is_some_and(|n| is_up(n) && n.read_only() == Some(false)) {
            return None;
        }
        let other_root = |n: &NodeView| {
            self.heartbeat
                .roots
                .iter()
                .any(|r| r.node.as_deref() == Some(n.name.as_str()))
        };
        let mut candidates = self
            .nodes
            .iter()
            .filter(|n| n.name != current && is_up(n) && n.read_only() == Some(false))
            .filter(|n| !replicating(n) && !other_root(n));
        let candidate = candidates.next()?;
        if candidates.next().is_some() {
            return None;
        }
        let followed = self.nodes.iter().any(|n| {
            n.name != candidate.name
                && is_up(n)
                && n.channels.iter().any(|r| {
                    r.source.as_deref() == Some(candidate.name.as_str())
                        && r.io_running == IoRunning::Yes
                })
        });
        let old_gone = old.is_none_or(|n| !is_up(n));
        (followed || old_gone).then_some(candidate)
    }
}

fn is_up(node: &NodeView) -> bool {
    node.conn == ConnState::Up
}

/// Has a channel with a thread running (a replica, whatever its `read_only`).
fn replicating(node: &NodeView) -> bool {
    node.channels
        .iter()
        .any(|r| r.sql_running || r.io_running != IoRunning::No)
}

#[cfg(test)]
mod tests {
    use crate::mysql::IoRunning;
    use crate::poll::ConnState;
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;

    /// db1 read-only, r1 promoted (channel reset, writable), r2 repointed at r1.
    fn switched_over() -> Topo {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| live(n).read_only = true);
        topo.node_mut("r1", |n| {
            live(n).read_only = false;
            n.channels.clear();
            n.source = None;
        });
        topo.set_source("r2", "r1");
        topo
    }

    fn down() -> ConnState {
        ConnState::Down {
            next: std::time::Duration::from_secs(1),
            cause: "connection refused".to_owned(),
        }
    }

    fn successor(topo: &Topo) -> Option<String> {
        topo.snapshot.successor("db1").map(|n| n.name.clone())
    }

    #[test]
    fn a_carried_out_switchover_names_the_promoted_node() {
        assert_eq!(successor(&switched_over()).as_deref(), Some("r1"));
    }

    #[test]
    fn a_healthy_topology_has_no_successor() {
        assert_eq!(successor(&Topo::new()), None);
    }

    #[test]
    fn a_writable_primary_that_answers_is_never_left() {
        let mut topo = switched_over();
        topo.node_mut("db1", |n| live(n).read_only = false);
        assert_eq!(successor(&topo), None, "split brain: a human decides");
    }

    #[test]
    fn a_promotion_without_followers_counts_only_once_the_old_primary_is_gone() {
        let mut topo = switched_over();
        topo.set_source("r2", "db1");
        assert_eq!(successor(&topo), None, "db1 is read-only but answers");
        topo.node_mut("db1", |n| n.conn = down());
        assert_eq!(successor(&topo).as_deref(), Some("r1"));
    }

    #[test]
    fn a_follower_must_be_replicating_from_the_candidate() {
        let mut topo = switched_over();
        topo.replica_mut("r2", |r| r.io_running = IoRunning::Connecting);
        assert_eq!(successor(&topo), None);
    }

    #[test]
    fn two_writable_candidates_are_ambiguous() {
        let mut topo = switched_over();
        topo.node_mut("db1", |n| n.conn = down());
        topo.node_mut("r2", |n| {
            live(n).read_only = false;
            n.channels.clear();
        });
        assert_eq!(successor(&topo), None);
    }

    #[test]
    fn a_writable_replica_still_replicating_is_no_candidate() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| n.conn = down());
        topo.node_mut("r1", |n| live(n).read_only = false);
        assert_eq!(successor(&topo), None);
        // Promoted by stopping both threads and lifting read_only, channel kept.
        topo.replica_mut("r1", |r| {
            r.io_running = IoRunning::No;
            r.sql_running = false;
        });
        assert_eq!(successor(&topo).as_deref(), Some("r1"));
    }

    #[test]
    fn another_root_never_succeeds_a_root_that_died() {
        // Two roots, db1 and p2 (gone), each with a writer: db1 is writable, replicates from
        // nobody and is followed, yet it is a root of its own, not p2's successor.
        let mut topo = Topo::new();
        let root = |node: &str| crate::store::snapshot::RootBeat {
            writer_id: format!("w@{node}"),
            node: Some(node.to_owned()),
            writer: crate::poll::WriterState::Writing,
            last_seq: None,
            last_ack_age: None,
            stale: false,
        };
        topo.snapshot.heartbeat.roots = vec![root("db1")];
        assert_eq!(
            topo.snapshot
                .successor("p2")
                .map(|n| n.name.clone())
                .as_deref(),
            None
        );
        // Without db1's writer in the roots, db1 would have been taken.
        topo.snapshot.heartbeat.roots.clear();
        assert_eq!(
            topo.snapshot
                .successor("p2")
                .map(|n| n.name.clone())
                .as_deref(),
            Some("db1")
        );
    }

    #[test]
    fn a_candidate_that_does_not_answer_or_whose_read_only_is_unknown_is_skipped() {
        let mut topo = switched_over();
        topo.node_mut("r1", |n| n.live = None);
        assert_eq!(successor(&topo), None);
        let mut topo = switched_over();
        topo.node_mut("r1", |n| n.conn = down());
        assert_eq!(successor(&topo), None);
    }
}
