//! A Galera cluster as one unit: the members rwtop found when it started, the one it writes
//! the cluster's heartbeat on, and what the members' own readings say of the whole — how many
//! are in the primary component against how many there should be, whether components
//! disagree (a split), and each member's distance in write-sets from the newest.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::snapshot::NodeView;
use crate::mysql::galera::Component;

/// A cluster as the engine found it at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSpec {
    /// `wsrep_cluster_name`.
    pub name: String,
    /// Every member found, in display order: the configured ones first.
    pub members: Vec<String>,
    /// The member rwtop writes the cluster's heartbeat on; every member's lag is measured
    /// behind it. `None` when none of the members was configured as a primary (rwtop then
    /// writes nothing into the cluster).
    pub writer: Option<String>,
}

/// A cluster in a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterView {
    pub name: String,
    pub members: Vec<String>,
    pub writer: Option<String>,
    /// How many members there should be: as many as were found at start-up.
    pub expected_size: usize,
    /// The largest primary component's size, as its members report it; `None` while no
    /// member in one answers.
    pub size: Option<u64>,
    /// Members that answer from inside a primary component.
    pub in_primary: Vec<String>,
    /// Members that answer from outside one (non-Primary, disconnected).
    pub outside: Vec<String>,
    /// Members that do not answer, or have not answered yet.
    pub silent: Vec<String>,
    /// Members in primary components that disagree on the cluster's state UUID or
    /// configuration: two components each believing it is the cluster.
    pub split: bool,
    /// The newest write-set committed on any member (`wsrep_last_committed`), the mark each
    /// member's distance is counted from.
    pub newest_committed: Option<u64>,
}

impl ClusterView {
    /// The cluster as its members' views show it.
    #[must_use]
    pub fn of(spec: &ClusterSpec, nodes: &[NodeView]) -> Self {
        let mut view = Self {
            name: spec.name.clone(),
            members: spec.members.clone(),
            writer: spec.writer.clone(),
            expected_size: spec.members.len(),
            size: None,
            in_primary: Vec::new(),
            outside: Vec::new(),
            silent: Vec::new(),
            split: false,
            newest_committed: None,
        };
        let mut components = BTreeSet::new();
        for name in &spec.members {
            let status = nodes
                .iter()
                .find(|n| &n.name == name)
                .and_then(NodeView::galera)
                .map(|g| &g.status);
            let Some(status) = status else {
                view.silent.push(name.clone());
                continue;
            };
            view.newest_committed = view.newest_committed.max(status.last_committed);
            if status.component == Component::Primary {
                view.in_primary.push(name.clone());
                view.size = view.size.max(status.cluster_size);
                components.insert((status.cluster_uuid.clone(), status.conf_id));
            } else {
                view.outside.push(name.clone());
            }
        }
        view.split = components.len() > 1;
        view
    }

    /// Write-sets `member` has committed fewer than the newest member: `None` when either is
    /// not known.
    #[must_use]
    pub fn behind(&self, member: &NodeView) -> Option<u64> {
        let own = member.galera()?.status.last_committed?;
        self.newest_committed?.checked_sub(own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::galera::GaleraView;
    use crate::store::testkit::{Topo, galera_member, live};

    fn spec() -> ClusterSpec {
        ClusterSpec {
            name: "c".to_owned(),
            members: vec!["db1".to_owned(), "r1".to_owned(), "r2".to_owned()],
            writer: Some("db1".to_owned()),
        }
    }

    /// A member of the primary component of configuration `conf_id` (size 2).
    fn synced(conf_id: u64, committed: u64) -> GaleraView {
        let mut g = galera_member();
        g.status.conf_id = Some(conf_id);
        g.status.last_committed = Some(committed);
        g.status.cluster_size = Some(2);
        g
    }

    fn cluster(members: [Option<GaleraView>; 3]) -> (Topo, ClusterView) {
        let mut topo = Topo::new();
        for (name, g) in ["db1", "r1", "r2"].into_iter().zip(members) {
            if let Some(g) = g {
                topo.node_mut(name, |n| live(n).galera = Some(g));
            }
        }
        let view = ClusterView::of(&spec(), &topo.snapshot.nodes);
        (topo, view)
    }

    #[test]
    fn members_are_counted_by_component_and_a_disagreement_is_a_split() {
        let mut out = galera_member();
        out.status.component = Component::NonPrimary;
        out.status.last_committed = Some(90);
        let (topo, view) = cluster([Some(synced(7, 120)), Some(synced(7, 117)), Some(out)]);
        assert_eq!(view.in_primary, ["db1", "r1"]);
        assert_eq!(view.outside, ["r2"]);
        assert!(view.silent.is_empty());
        assert_eq!((view.size, view.expected_size), (Some(2), 3));
        assert!(!view.split);
        let node = |name: &str| topo.snapshot.node(name).unwrap();
        assert_eq!(view.behind(node("r1")), Some(3));
        assert_eq!(view.behind(node("r2")), Some(30));

        // r1 in a primary component of its own: a split; a member that does not answer.
        let (_, view) = cluster([Some(synced(7, 120)), Some(synced(8, 117)), None]);
        assert!(view.split);
        assert_eq!(view.silent, ["r2"]);
    }
}
