//! Topology changes: a replica re-pointed to another source, or another node became primary.
//!
//! A change is an event, but alerts need a condition that holds: here it is "differs from the
//! settled topology". The settled value adopts the new one once the alert is raised, so the
//! condition then stops holding and the alert clears by itself after the clean-sample count.
//! A change that reverts before it is raised (one odd sample) never raises and never settles.

use std::collections::HashMap;

use super::verdict::{Verdict, fact};
use crate::poll::ConnState;
use crate::store::{NodeView, Role, Snapshot};

#[derive(Debug, Default)]
pub struct TopologyMemory {
    /// Each channel's settled source, by replica name and channel.
    sources: HashMap<(String, String), String>,
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
        .filter(|n| n.role == Role::Primary && n.read_only() == Some(false))
        .map(|n| n.name.clone())
        .collect();
    names.sort();
    names
}

impl TopologyMemory {
    /// Each channel's verdict: its source differs from the settled one. Losing the source
    /// (`None`: not resolved, or the node is no replica) is not judged; the replication rules
    /// see to that. A node without channels is judged once, on the node's own source.
    pub fn source_verdicts(&self, node: &NodeView) -> Vec<(String, Verdict)> {
        let sources = channel_sources(node);
        if sources.is_empty() {
            let verdict = if node.role == Role::Primary {
                Verdict::Clean
            } else {
                Verdict::Unknown
            };
            return vec![(String::new(), verdict)];
        }
        sources
            .into_iter()
            .map(|(channel, current)| {
                let settled = self.sources.get(&(node.name.clone(), channel.to_owned()));
                let verdict = match (current, settled) {
                    (Some(current), Some(settled)) if current != settled => {
                        let evidence = vec![
                            fact("previous_source", settled.clone()),
                            fact("source", current.to_owned()),
                        ];
                        let cause = format!(
                            "{} now replicates from {current} (was {settled}): failover or \
                             re-pointing",
                            node.name
                        );
                        Verdict::bad(evidence, cause)
                    }
                    (Some(_), Some(_)) => Verdict::Clean,
                    _ => Verdict::Unknown,
                };
                (channel.to_owned(), verdict)
            })
            .collect()
    }

    /// After the hysteresis has seen this sample: adopt the first value seen, and the current
    /// one once the change has been raised (`raised` says so of a channel).
    pub fn settle_source(&mut self, node: &NodeView, raised: impl Fn(&str) -> bool) {
        for (channel, current) in channel_sources(node) {
            let Some(current) = current else { continue };
            let key = (node.name.clone(), channel.to_owned());
            if raised(channel) || !self.sources.contains_key(&key) {
                self.sources.insert(key, current.to_owned());
            }
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
        // A multi-source topology has a root per configured primary: that many acting as
        // primaries is its shape, more is a split brain.
        let roots = snapshot.heartbeat.roots.len().max(1);
        let cause = match current.len() {
            1 => format!(
                "{} is now the primary (was {}): failover or switchover",
                current.join(""),
                list(settled)
            ),
            n if n <= roots => format!(
                "the primaries are now {} (were {}): failover or switchover of a root",
                list(&current),
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
        // The first picture waits for every primary that may still answer: two roots whose
        // first polls land in different snapshots are one topology, not a switchover.
        let unanswered = snapshot.nodes.iter().any(|n| {
            n.role == Role::Primary
                && n.read_only().is_none()
                && matches!(n.conn, ConnState::Connecting | ConnState::Up)
        });
        if self.primaries.is_none() && unanswered {
            return;
        }
        if raised || self.primaries.is_none() {
            self.primaries = Some(current);
        }
    }

    /// Forgets replicas that left the topology.
    pub fn retain(&mut self, present: &std::collections::HashSet<&str>) {
        self.sources
            .retain(|(name, _), _| present.contains(name.as_str()));
    }
}

/// Each channel's name and source node.
fn channel_sources(node: &NodeView) -> Vec<(&str, Option<&str>)> {
    node.channels
        .iter()
        .map(|c| (c.channel.as_str(), c.source.as_deref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::alerts::{AlertEngine, AlertKind, AlertSettings};
    use crate::store::Role;
    use crate::store::testkit::live;
    use crate::store::testkit::{Topo, find};

    /// r1 stops replicating and becomes a writable primary.
    fn promote_r1(topo: &mut Topo) {
        topo.node_mut("r1", |n| {
            n.role = Role::Primary;
            n.source = None;
            n.channels.clear();
            live(n).read_only = false;
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

    /// A named channel re-pointed is that channel's change; the node's other channel stays put.
    #[test]
    fn a_re_pointed_channel_raises_on_that_channel() {
        let mut topo = Topo::new();
        topo.add_channel("r2", "p2", "r1");
        let mut engine = AlertEngine::new(AlertSettings::default());
        let kind = AlertKind::TopologyChanged;
        engine.evaluate(&topo.at(1));
        topo.channel_mut("r2", "p2", |c| c.source = Some("db1".to_owned()));
        engine.evaluate(&topo.at(2));
        let raised = engine.evaluate(&topo.at(3));
        let on_r2: Vec<_> = raised
            .active
            .iter()
            .filter(|a| a.kind == kind && a.node.as_deref() == Some("r2"))
            .collect();
        assert_eq!(on_r2.len(), 1, "{raised:#?}");
        assert_eq!(on_r2[0].channel.as_deref(), Some("p2"));
        assert_eq!(
            on_r2[0].evidence[0],
            ("channel".to_owned(), "p2".to_owned())
        );
        assert!(
            on_r2[0]
                .cause
                .starts_with("r2 now replicates from db1 (was r1)")
        );
    }

    /// Two roots whose first answers land in different snapshots are one topology from the
    /// start, not "the primaries are now db1, p2".
    #[test]
    fn roots_answering_one_after_the_other_raise_nothing() {
        let mut topo = Topo::new();
        topo.add_primary("p2", 4);
        topo.node_mut("db1", |n| live(n).read_only = false);
        topo.node_mut("p2", |n| n.live = None);
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&topo.at(1));
        topo.node_mut("p2", |n| live(n).read_only = false);
        for step in 2..8 {
            let view = engine.evaluate(&topo.at(step));
            assert!(
                find(&view, AlertKind::TopologyChanged, None).is_none(),
                "{view:?}"
            );
        }
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
            live(n).read_only = true;
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
                    n.live = None;
                } else {
                    live(n).read_only = true;
                }
            });
            topo.node_mut("r1", |n| {
                n.role = Role::Primary;
                n.source = None;
                n.channels.clear();
                live(n).read_only = false;
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
        topo.node_mut("db1", |n| n.live = None);
        engine.evaluate(&topo.at(1));
        // Half a second later (no global sample yet) db1 is seen writable.
        topo.node_mut("db1", |n| live(n).read_only = false);
        let mut between = topo.at(1);
        between.uptime += std::time::Duration::from_millis(500);
        engine.evaluate(&between);
        // Then, before the next global sample, a switchover to r1.
        topo.node_mut("db1", |n| live(n).read_only = true);
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
