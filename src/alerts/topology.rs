//! Topology changes: a replica re-pointed to another source, or another node became primary.
//!
//! A change is an event, but alerts need a condition that holds: here it is "differs from the
//! settled topology". The settled value adopts the new one once the alert is raised, so the
//! condition then stops holding and the alert clears by itself after the clean-sample count.
//! A change that reverts before it is raised (one odd sample) never raises and never settles.

use std::collections::HashMap;

use super::rules::{Verdict, fact};
use crate::store::{NodeView, Role, Snapshot};

#[derive(Debug, Default)]
pub struct TopologyMemory {
    /// Each replica's settled source, by replica name.
    sources: HashMap<String, String>,
    /// The settled primaries, sorted by name.
    primaries: Option<Vec<String>>,
}

/// Nodes acting as primaries now: no source and writable, as they answer. A node with no sample
/// yet defaults to primary, which says nothing about the topology; an old primary made
/// read-only (a switchover) or gone (a failover) takes no writes, so it does not make the new
/// one look like a split brain.
fn primaries(snapshot: &Snapshot) -> Vec<String> {
    let mut names: Vec<String> = snapshot
        .nodes
        .iter()
        .filter(|n| n.role == Role::Primary && n.read_only == Some(false))
        .map(|n| n.name.clone())
        .collect();
    names.sort();
    names
}

impl TopologyMemory {
    /// A replica's source differs from the settled one. Losing the source (`None`: not
    /// resolved, or the node is no replica) is not judged; the replication rules see to that.
    pub fn source_verdict(&self, node: &NodeView) -> Verdict {
        let (Some(current), Some(settled)) = (&node.source, self.sources.get(&node.name)) else {
            return if node.role == Role::Primary {
                Verdict::Clean
            } else {
                Verdict::Unknown
            };
        };
        if current == settled {
            return Verdict::Clean;
        }
        let evidence = vec![
            fact("previous_source", settled.clone()),
            fact("source", current.clone()),
        ];
        let cause = format!(
            "{} now replicates from {current} (was {settled}): failover or re-pointing",
            node.name
        );
        Verdict::bad(evidence, cause)
    }

    /// After the hysteresis has seen this sample: adopt the first value seen, and the current
    /// one once the change has been raised.
    pub fn settle_source(&mut self, node: &NodeView, raised: bool) {
        let Some(current) = &node.source else {
            return;
        };
        if raised || !self.sources.contains_key(&node.name) {
            self.sources.insert(node.name.clone(), current.clone());
        }
    }

    pub fn primary_verdict(&self, snapshot: &Snapshot) -> Verdict {
        let current = primaries(snapshot);
        let Some(settled) = &self.primaries else {
            return Verdict::Unknown;
        };
        if current.is_empty() {
            return Verdict::Unknown;
        }
        if &current == settled {
            return Verdict::Clean;
        }
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        let evidence = vec![
            fact("previous_primary", list(settled)),
            fact("primary", list(&current)),
        ];
        let cause = match current.len() {
            1 => format!(
                "{} is now the primary (was {}): failover or switchover",
                current.join(""),
                list(settled)
            ),
            n => format!(
                "{n} nodes act as primary ({}): split brain?",
                list(&current)
            ),
        };
        Verdict::bad(evidence, cause)
    }

    pub fn settle_primary(&mut self, snapshot: &Snapshot, raised: bool) {
        let current = primaries(snapshot);
        if current.is_empty() {
            return;
        }
        if raised || self.primaries.is_none() {
            self.primaries = Some(current);
        }
    }

    /// Forgets replicas that left the topology.
    pub fn retain(&mut self, present: &std::collections::HashSet<&str>) {
        self.sources
            .retain(|name, _| present.contains(name.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use crate::alerts::{AlertEngine, AlertKind, AlertSettings};
    use crate::store::Role;
    use crate::store::testkit::{Topo, find};

    /// r1 stops replicating and becomes a writable primary.
    fn promote_r1(topo: &mut Topo) {
        topo.node_mut("r1", |n| {
            n.role = Role::Primary;
            n.source = None;
            n.channels.clear();
            n.read_only = Some(false);
        });
    }

    fn assert_r1_took_over(view: &crate::alerts::AlertsView) {
        let alert = find(view, AlertKind::TopologyChanged, None).cloned();
        let alert = alert.unwrap_or_else(|| panic!("not raised: {view:?}"));
        assert_eq!(
            alert.cause,
            "r1 is now the primary (was db1): failover or switchover"
        );
    }

    #[test]
    fn a_re_pointed_replica_raises_then_clears_by_itself() {
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        let kind = AlertKind::TopologyChanged;
        engine.evaluate(&topo.at(1));
        topo.set_source("r2", "r1");
        assert!(find(&engine.evaluate(&topo.at(2)), kind, Some("r2")).is_none());
        let raised = engine.evaluate(&topo.at(3));
        let alert = find(&raised, kind, Some("r2")).cloned();
        let alert = alert.unwrap_or_else(|| panic!("not raised: {raised:?}"));
        assert_eq!(alert.evidence[0].1, "db1");
        assert!(
            alert.cause.starts_with("r2 now replicates from r1"),
            "{}",
            alert.cause
        );
        for step in 4..6 {
            assert!(find(&engine.evaluate(&topo.at(step)), kind, Some("r2")).is_some());
        }
        let cleared = engine.evaluate(&topo.at(6));
        assert!(cleared.active.is_empty(), "{cleared:?}");
        assert!(!cleared.log[0].raised && cleared.log[1].raised);
    }

    #[test]
    fn a_one_sample_flip_raises_nothing() {
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&topo.at(1));
        topo.set_source("r2", "r1");
        engine.evaluate(&topo.at(2));
        topo.set_source("r2", "db1");
        for step in 3..8 {
            assert!(engine.evaluate(&topo.at(step)).active.is_empty());
        }
    }

    #[test]
    fn a_new_primary_is_a_global_topology_change() {
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&topo.at(1));
        topo.node_mut("db1", |n| {
            n.role = Role::Replica;
            n.source = Some("r1".to_owned());
            n.read_only = Some(true);
        });
        promote_r1(&mut topo);
        engine.evaluate(&topo.at(2));
        assert_r1_took_over(&engine.evaluate(&topo.at(3)));
    }

    #[test]
    fn an_old_primary_read_only_or_gone_is_no_split_brain() {
        use crate::poll::ConnState;
        for gone in [false, true] {
            let mut topo = Topo::new();
            let mut engine = AlertEngine::new(AlertSettings::default());
            engine.evaluate(&topo.at(1));
            // r1 promoted; db1 kept without a source, but read-only or not answering.
            topo.node_mut("db1", |n| {
                if gone {
                    n.conn = ConnState::Down {
                        next: std::time::Duration::from_secs(5),
                        cause: "refused".to_owned(),
                    };
                    n.read_only = None;
                } else {
                    n.read_only = Some(true);
                }
            });
            topo.node_mut("r1", |n| {
                n.role = Role::Primary;
                n.source = None;
                n.channels.clear();
                n.read_only = Some(false);
            });
            engine.evaluate(&topo.at(2));
            let view = engine.evaluate(&topo.at(3));
            let alert = find(&view, AlertKind::TopologyChanged, None).cloned();
            let alert = alert.unwrap_or_else(|| panic!("not raised (gone: {gone}): {view:?}"));
            assert_eq!(
                alert.cause, "r1 is now the primary (was db1): failover or switchover",
                "gone: {gone}"
            );
        }
    }

    #[test]
    fn the_first_primary_seen_between_global_samples_is_the_baseline() {
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        // The first global sample comes before db1 was ever sampled.
        topo.node_mut("db1", |n| n.read_only = None);
        engine.evaluate(&topo.at(1));
        // Half a second later (no global sample yet) db1 is seen writable.
        topo.node_mut("db1", |n| n.read_only = Some(false));
        let mut between = topo.at(1);
        between.uptime += std::time::Duration::from_millis(500);
        engine.evaluate(&between);
        // Then, before the next global sample, a switchover to r1.
        topo.node_mut("db1", |n| n.read_only = Some(true));
        promote_r1(&mut topo);
        engine.evaluate(&topo.at(2));
        assert_r1_took_over(&engine.evaluate(&topo.at(3)));
    }

    #[test]
    fn two_writable_primaries_are_a_split_brain() {
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&topo.at(1));
        promote_r1(&mut topo);
        engine.evaluate(&topo.at(2));
        let view = engine.evaluate(&topo.at(3));
        let alert = find(&view, AlertKind::TopologyChanged, None).cloned();
        let alert = alert.unwrap_or_else(|| panic!("not raised: {view:?}"));
        assert_eq!(
            alert.cause,
            "2 nodes act as primary (db1, r1): split brain?"
        );
    }
}
