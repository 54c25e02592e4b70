//! The snapshot as the tasks below the store see it: the [`Topology`] they route, drain and
//! follow a failover by.

use std::collections::HashSet;
use std::time::Duration;

use super::lag::Lag;
use super::windows::Window;
use super::{NodeView, ReplicaView, Snapshot};
use crate::mysql::IoRunning;
use crate::poll::ConnState;
use crate::topology::{Channel, Health, Member, Role, TableGate, Topology};

fn member(node: &NodeView) -> Member<'_> {
    Member {
        name: &node.name,
        address: &node.address,
        role: node.role,
        source: node.source.as_deref(),
    }
}

fn health(replica: &ReplicaView) -> Health {
    let lag = match &replica.heartbeat_lag {
        Lag::Exact { lag } => Some(*lag),
        Lag::AtLeast { upper, .. } => *upper,
        Lag::Unknown { .. } => None,
    };
    let lag_p99_5m = replica
        .windows
        .iter()
        .find(|(w, _)| *w == Window::FiveMinutes)
        .and_then(|(_, stats)| stats.as_ref())
        .map(|stats| stats.p99);
    Health {
        running: replica.sql_running && replica.io_running == IoRunning::Yes,
        lag,
        lag_p99_5m,
    }
}

/// The channels a task may act on: those of a node that answers. A node that does not keeps its
/// channels in the snapshot, unknown, but nothing can be routed to, read from or fed through
/// them until it answers again.
fn live(node: &NodeView) -> &[ReplicaView] {
    if node.answers() { &node.channels } else { &[] }
}

impl Snapshot {
    /// The roots in writer order: the heartbeat's, else (read-only mode) the primaries.
    fn root_names(&self) -> Vec<&str> {
        let beats: Vec<&str> = self
            .heartbeat
            .roots
            .iter()
            .filter_map(|r| r.node.as_deref())
            .collect();
        if !beats.is_empty() {
            return beats;
        }
        self.nodes
            .iter()
            .filter(|n| n.role == Role::Primary)
            .map(|n| n.name.as_str())
            .collect()
    }

    /// The roots at or above `node`: itself when it is one, else those above each of its
    /// channels. `seen` breaks rings.
    fn roots_above<'a>(
        &'a self,
        node: &'a str,
        roots: &[&'a str],
        seen: &mut HashSet<&'a str>,
    ) -> Vec<&'a str> {
        if let Some(root) = roots.iter().find(|r| **r == node) {
            return vec![root];
        }
        if !seen.insert(node) {
            return Vec::new();
        }
        let mut found = Vec::new();
        for channel in self.node(node).map_or(&[][..], |n| &n.channels[..]) {
            for root in channel
                .source
                .as_deref()
                .map(|s| self.roots_above(s, roots, seen))
                .unwrap_or_default()
            {
                if !found.contains(&root) {
                    found.push(root);
                }
            }
        }
        found
    }
}

impl Topology for Snapshot {
    fn polled_gtid(&self, node: &str) -> Option<(&crate::mysql::GtidState, Duration)> {
        let node = self.node(node)?;
        let since = (chrono::Utc::now() - self.taken_at)
            .to_std()
            .unwrap_or_default();
        Some((node.gtid()?, node.sample_age.unwrap_or_default() + since))
    }

    fn members(&self) -> Vec<Member<'_>> {
        self.nodes.iter().map(member).collect()
    }

    fn sources(&self) -> Option<Vec<&str>> {
        if self.nodes.iter().any(|n| n.sample_seq == 0) {
            return None;
        }
        let mut sources: Vec<&str> = self
            .nodes
            .iter()
            .flat_map(live)
            .filter_map(|c| c.source.as_deref())
            .collect();
        sources.sort_unstable();
        sources.dedup();
        Some(sources)
    }

    fn member(&self, name: &str) -> Option<Member<'_>> {
        self.node(name).map(member)
    }

    fn health(&self, name: &str) -> Option<Health> {
        let node = self.node(name)?;
        node.replica().filter(|_| node.answers()).map(health)
    }

    fn channels(&self, node: &str) -> Vec<Channel<'_>> {
        let Some(node) = self.node(node) else {
            return Vec::new();
        };
        let default = node.replica().map(|r| r.channel.as_str());
        let first = live(node)
            .iter()
            .filter(|c| Some(c.channel.as_str()) == default);
        let others = live(node)
            .iter()
            .filter(|c| Some(c.channel.as_str()) != default);
        first
            .chain(others)
            .map(|c| Channel {
                name: &c.channel,
                source: c.source.as_deref(),
                health: health(c),
            })
            .collect()
    }

    fn roots_of(&self, node: &str, channel: &str) -> Vec<&str> {
        let roots = self.root_names();
        let Some(view) = self.node(node) else {
            return Vec::new();
        };
        let Some(status) = view.channel(channel) else {
            return Vec::new();
        };
        let mut seen = HashSet::from([view.name.as_str()]);
        let mut found = match status.source.as_deref() {
            Some(source) => self.roots_above(source, &roots, &mut seen),
            None => Vec::new(),
        };
        // As the store reads lag: a lone channel whose source rwtop does not poll is taken to
        // come from the first root (the one-primary topology); one of several is unknown.
        if found.is_empty() && view.channels.len() == 1 {
            found.extend(roots.first());
        }
        found.sort_by_key(|r| roots.iter().position(|x| x == r));
        found
    }

    fn is_drained(&self, name: &str) -> bool {
        self.drain.is_drained(name)
    }

    fn heartbeat_interval(&self) -> Duration {
        self.heartbeat.interval
    }

    fn writer_node(&self) -> Option<&str> {
        self.heartbeat.node.as_deref()
    }

    fn successor_of(&self, name: &str) -> Option<Member<'_>> {
        self.successor(name).map(member)
    }

    fn own_table_gate(&self, root: &str, table: &str) -> TableGate {
        let mut pending = false;
        for node in self.nodes.iter().filter(|n| n.name != root) {
            let checked = match (&node.conn, node.settings()) {
                (_, Some(settings)) => settings,
                // Never answered yet, or answering but not yet read: its copy is unknown.
                (ConnState::Connecting | ConnState::Up, None) => {
                    pending = true;
                    continue;
                }
                // Down: nothing can be read of it until it answers again.
                _ => continue,
            };
            let Some(mismatch) = checked.own_tables.iter().find(|m| m.table == table) else {
                continue;
            };
            let below = node
                .channels
                .iter()
                .any(|c| self.roots_of(&node.name, &c.channel).contains(&root));
            if below {
                return TableGate::Unsafe(format!(
                    "{}, a replica below {root}, holds a {} that would not take rwtop's rows \
                     ({})",
                    node.name,
                    mismatch.table,
                    mismatch.differences.join("; ")
                ));
            }
        }
        if pending {
            TableGate::Wait
        } else {
            TableGate::Open
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::probe::Target;
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;
    use crate::topology::Topology;

    /// Two roots, `db1` (with `r1`, `r2`) and `p2`, an aggregator `agg` replicating from both
    /// and `c1` below it.
    fn two_roots() -> Topo {
        let mut topo = Topo::new();
        topo.add_primary("p2", 4);
        topo.add_replica("agg", "db1", 5);
        topo.add_channel("agg", "p2", "p2");
        topo.add_replica("c1", "agg", 6);
        topo
    }

    #[test]
    fn each_channel_leads_to_its_own_root() {
        let mut topo = two_roots();
        topo.add_replica("lone", "elsewhere", 7);
        let s = topo.at(1);
        assert_eq!(s.roots_of("r1", ""), ["db1"]);
        assert_eq!(s.roots_of("agg", ""), ["db1"]);
        assert_eq!(s.roots_of("agg", "p2"), ["p2"]);
        assert_eq!(s.roots_of("c1", ""), ["db1", "p2"], "below both roots");
        assert_eq!(
            s.roots_of("lone", ""),
            ["db1"],
            "as the store reads its lag"
        );
        assert!(s.roots_of("agg", "nope").is_empty());
        let names: Vec<_> = s.channels("agg").iter().map(|c| c.name).collect();
        assert_eq!(names, ["", "p2"]);
        assert_eq!(s.channels("agg")[1].source, Some("p2"));
        assert!(s.channels("db1").is_empty());

        let aim = |text| Target::parse(text).unwrap().channel_in(&s);
        assert_eq!(aim("agg").unwrap(), "");
        assert_eq!(aim("agg/P2").unwrap(), "p2", "as MariaDB compares names");
        assert_eq!(
            aim("agg/nope").unwrap_err(),
            "agg has no channel 'nope': its channels are '' (the default: agg), 'p2' (agg/p2)"
        );
        assert!(
            aim("db1/p2")
                .unwrap_err()
                .contains("no replication channel")
        );
    }

    /// Every node of `topo` answered and had its copies of rwtop's tables read; `odd` holds a
    /// heartbeat table that is not rwtop's.
    fn checked(topo: &mut Topo, odd: &[&str]) {
        let names: Vec<String> = topo.at(0).nodes.iter().map(|n| n.name.clone()).collect();
        for name in names {
            let mut settings = crate::mysql::SafetySettings::default();
            if odd.contains(&name.as_str()) {
                settings
                    .own_tables
                    .push(crate::mysql::own_tables::Mismatch {
                        table: "rwtop.heartbeat".to_owned(),
                        differences: vec!["column writer_id is varchar(64) latin1".to_owned()],
                        fix: "ALTER TABLE rwtop.heartbeat …".to_owned(),
                    });
            }
            topo.node_mut(&name, |n| live(n).settings = Some(settings));
        }
    }

    #[test]
    fn a_root_writes_only_once_every_copy_below_it_was_read_and_is_rwtops() {
        use crate::topology::TableGate;
        let gate = |topo: &Topo, root| topo.at(1).own_table_gate(root, "rwtop.heartbeat");
        let mut topo = two_roots();
        assert_eq!(gate(&topo, "db1"), TableGate::Wait, "no copy read yet");
        checked(&mut topo, &[]);
        assert_eq!(gate(&topo, "db1"), TableGate::Open);
        // c1 below agg, below both roots: neither root may write.
        checked(&mut topo, &["c1"]);
        for root in ["db1", "p2"] {
            match gate(&topo, root) {
                TableGate::Unsafe(why) => assert!(
                    why.starts_with("c1, a replica below") && why.contains("latin1"),
                    "{why}"
                ),
                other => panic!("{root}: {other:?}"),
            }
        }
        // r1 is below db1 only; a root's own copy is the writer's to judge.
        checked(&mut topo, &["r1", "p2"]);
        assert!(matches!(gate(&topo, "db1"), TableGate::Unsafe(_)));
        assert_eq!(gate(&topo, "p2"), TableGate::Open);
        // A node that does not answer is not waited for.
        checked(&mut topo, &[]);
        topo.stop_answering("r2");
        topo.node_mut("r2", |n| live(n).settings = None);
        assert_eq!(gate(&topo, "db1"), TableGate::Open);
    }

    #[test]
    fn every_channel_s_source_once_known_when_every_node_answered() {
        let mut s = two_roots().at(1);
        assert_eq!(s.sources(), Some(vec!["agg", "db1", "p2"]));
        // c1 has not answered: what it replicates from is not known.
        if let Some(c1) = s.nodes.iter_mut().find(|n| n.name == "c1") {
            c1.sample_seq = 0;
        }
        assert_eq!(s.sources(), None);
    }
}
