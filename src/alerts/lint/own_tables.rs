//! rwtop's own tables: a copy of `rwtop.heartbeat` or `rwtop.probe` that is not rwtop's
//! definition (`mysql::own_tables`). On a root rwtop writes nothing there (its writer says why);
//! on a replica, rows a root above sends could stop the channel. Either is an error with the
//! statement that fixes it.

use super::{LintFinding, LintSeverity, finding};
use crate::mysql::own_tables::Mismatch;
use crate::poll::WriterState;
use crate::store::{NodeView, Snapshot};

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    // The roots whose writer found its table not rwtop's: that finding says it, once.
    let mut refused: Vec<(&str, &Mismatch)> = Vec::new();
    for root in &s.heartbeat.roots {
        if let (WriterState::Unsafe { mismatch }, Some(node)) = (&root.writer, root.node.as_deref())
        {
            refused.push((node, mismatch));
        }
    }
    for node in &s.nodes {
        let root_refusal = refused.iter().find(|(name, _)| *name == node.name);
        if let Some((_, mismatch)) = root_refusal {
            out.push(on_root(node, mismatch));
        }
        let read = node
            .settings()
            .into_iter()
            .flat_map(|set| set.own_tables.iter());
        for mismatch in read {
            if root_refusal.is_some_and(|(_, m)| m.table == mismatch.table) {
                continue;
            }
            out.push(if node.channels.is_empty() {
                on_root(node, mismatch)
            } else {
                on_replica(node, mismatch)
            });
        }
    }
}

fn on_root(node: &NodeView, mismatch: &Mismatch) -> LintFinding {
    LintFinding {
        summary: mismatch.summary(),
        why: format!(
            "rows rwtop wrote to this copy would replicate as row images that a replica holding \
             rwtop's definition may not convert, stopping its channel; so rwtop writes nothing in \
             {} on {} (no heartbeat: the lag of every channel below reads unknown; no test \
             reads' marker), and never alters the table itself",
            mismatch.table, node.name
        ),
        fix: format!(
            "on {} (it replicates to the replicas below, which then hold rwtop's definition \
             too): {}",
            node.name, mismatch.fix
        ),
        ..finding("own_table", LintSeverity::Error, node)
    }
}

fn on_replica(node: &NodeView, mismatch: &Mismatch) -> LintFinding {
    LintFinding {
        summary: mismatch.summary(),
        why: format!(
            "rwtop writes its rows on the roots above in its own definition; this copy may not \
             take their row images, and the channel that brings them would stop with an error \
             naming {}",
            mismatch.table
        ),
        fix: format!(
            "on {}, unlogged so that it adds no transaction of its own (a replica below it \
             needs the same): SET SESSION sql_log_bin = 0; {}; SET SESSION sql_log_bin = 1",
            node.name, mismatch.fix
        ),
        ..finding("own_table", LintSeverity::Error, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RootBeat;
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;

    fn mismatch() -> Mismatch {
        Mismatch {
            table: "rwtop.heartbeat".to_owned(),
            differences: vec!["column writer_id is varchar(64) latin1".to_owned()],
            fix: "ALTER TABLE rwtop.heartbeat MODIFY writer_id …".to_owned(),
        }
    }

    #[test]
    fn a_refused_root_and_a_replica_below_are_each_an_error_with_where_to_run_the_fix() {
        let mut topo = Topo::new();
        topo.add_primary("p2", 4);
        topo.add_replica("agg", "p2", 5);
        // p2's writer found its own copy not rwtop's; its settings read says the same.
        let mut s = topo.at(1);
        s.heartbeat.roots = vec![RootBeat {
            writer_id: "rwtop-x@p2".to_owned(),
            node: Some("p2".to_owned()),
            writer: WriterState::Unsafe {
                mismatch: mismatch(),
            },
            last_seq: None,
            last_ack_age: None,
            stale: false,
        }];
        for name in ["p2", "agg"] {
            let node = s.nodes.iter_mut().find(|n| n.name == name).unwrap();
            let mut settings = crate::mysql::SafetySettings::default();
            settings.own_tables.push(mismatch());
            live(node).settings = Some(settings);
        }
        let mut out = Vec::new();
        check(&s, &mut out);
        assert_eq!(out.len(), 2, "one finding per node: {out:?}");
        let on = |node: &str| out.iter().find(|f| f.node == node).unwrap();
        assert_eq!(on("p2").severity, LintSeverity::Error);
        assert!(
            on("p2").fix.starts_with("on p2 (it replicates"),
            "{}",
            on("p2").fix
        );
        assert!(
            on("p2").why.contains("rwtop writes nothing"),
            "{}",
            on("p2").why
        );
        let agg = on("agg");
        assert_eq!(agg.id, "own_table");
        assert!(
            agg.fix
                .contains("SET SESSION sql_log_bin = 0; ALTER TABLE rwtop.heartbeat"),
            "{}",
            agg.fix
        );
        assert!(agg.summary.contains("differs from rwtop's definition"));
    }
}
