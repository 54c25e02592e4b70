//! Galera clusters, settled before the engine starts: which nodes are members of which
//! cluster, and the one member of each that carries rwtop's heartbeat.
//!
//! Every member of a cluster takes writes, and a row written on two members at once fails
//! certification on one of them: rwtop must write a cluster's heartbeat on exactly one member,
//! and read it on all of them. So a member is never a root of its own. The start-up walk
//! (`upward.rs`) reads each node's `wsrep` status; a member lists its fellows in
//! `wsrep_incoming_addresses`, and with discovery on those are read and added too (named by
//! their `wsrep_node_name`). Then each cluster, told apart by its state UUID, gets as its
//! writer the first member configured as a primary; the other members become members. A
//! cluster none of whose members was configured as a primary gets no writer: rwtop writes
//! nothing into it, as it writes nothing on a replica.

use crate::mysql::Endpoint;
use crate::mysql::NodeConn;
use crate::mysql::galera::{GaleraStatus, IDENTITY_SQL, MemberNames, STATUS_SQL, Wsrep};
use crate::store::cluster::ClusterSpec;
use crate::topology::Role;

/// A member as the start-up walk read it.
#[derive(Debug, Clone)]
pub struct MemberRead {
    pub status: GaleraStatus,
    pub names: MemberNames,
}

/// The node's Galera status and names, when it is a member; `None` for any other server, and
/// when the statements are refused (a member then shows as one at its first poll, without a
/// cluster of its own).
pub async fn read_member(conn: &mut NodeConn) -> Option<MemberRead> {
    let rows = conn.query_rows(STATUS_SQL).await.ok()?;
    let Wsrep::Member(status) = Wsrep::from_rows(&rows) else {
        return None;
    };
    let names = conn.query_rows(IDENTITY_SQL).await.ok()?;
    Some(MemberRead {
        status: *status,
        names: MemberNames::from_rows(&names)?,
    })
}

/// How a member was found: `cluster 'c1', as n1 lists its members`.
#[must_use]
pub fn via(node: &str, member: Option<&MemberRead>) -> String {
    let cluster = member.map_or("", |m| m.names.cluster.as_str());
    format!("Galera cluster '{cluster}', as {node} lists its members")
}

/// Groups the members read (by node name) into clusters, picks each cluster's writer, and
/// sets the roles in `nodes` to match: the writer stays (or becomes) a primary, a root; every
/// other member is a member. Returns the clusters, members in `nodes`' order.
pub fn settle(
    nodes: &mut [(String, Endpoint, Role)],
    members: &[(String, MemberRead)],
) -> Vec<ClusterSpec> {
    // Told apart by the state UUID (two clusters may share the default name), in the order
    // their first member is listed.
    let mut clusters: Vec<(String, ClusterSpec)> = Vec::new();
    for (name, _, _) in nodes.iter() {
        let Some((_, read)) = members.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let key = if read.status.cluster_uuid.is_empty() {
            read.names.cluster.clone()
        } else {
            read.status.cluster_uuid.clone()
        };
        let at = clusters
            .iter()
            .position(|(k, _)| *k == key)
            .unwrap_or_else(|| {
                clusters.push((
                    key,
                    ClusterSpec {
                        name: read.names.cluster.clone(),
                        members: Vec::new(),
                        writer: None,
                    },
                ));
                clusters.len() - 1
            });
        clusters[at].1.members.push(name.clone());
    }
    for (_, cluster) in &mut clusters {
        cluster.writer = nodes
            .iter()
            .find(|(name, _, role)| *role == Role::Primary && cluster.members.contains(name))
            .map(|(name, _, _)| name.clone());
        for (name, _, role) in nodes.iter_mut() {
            if cluster.members.contains(name) && cluster.writer.as_ref() != Some(name) {
                *role = Role::Member;
            }
        }
    }
    clusters.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::RawRow;
    use crate::store::testkit::local_endpoint;

    fn member(cluster: &str, uuid: &str) -> MemberRead {
        let pairs = [
            ("wsrep_provider_name", "Galera"),
            ("wsrep_local_state", "4"),
            ("wsrep_cluster_status", "Primary"),
            ("wsrep_cluster_state_uuid", uuid),
        ];
        let rows: Vec<RawRow> = pairs
            .iter()
            .map(|(n, v)| RawRow::of(&[("Variable_name", Some(n)), ("Value", Some(v))]))
            .collect();
        MemberRead {
            status: GaleraStatus::from_rows(&rows).unwrap(),
            names: MemberNames {
                cluster: cluster.to_owned(),
                node: String::new(),
            },
        }
    }

    fn nodes(list: &[(&str, Role)]) -> Vec<(String, Endpoint, Role)> {
        (0..)
            .zip(list)
            .map(|(i, (name, role))| ((*name).to_owned(), local_endpoint(3306 + i), *role))
            .collect()
    }

    fn roles(nodes: &[(String, Endpoint, Role)]) -> Vec<(&str, Role)> {
        nodes.iter().map(|(n, _, r)| (n.as_str(), *r)).collect()
    }

    #[test]
    fn one_writer_per_cluster_however_the_members_were_configured() {
        use Role::{Member, Primary, Replica};
        // Three members all given as primaries, and an async replica of n1.
        let mut all = nodes(&[
            ("n1", Primary),
            ("n2", Primary),
            ("n3", Primary),
            ("r1", Replica),
        ]);
        let reads: Vec<(String, MemberRead)> = ["n1", "n2", "n3"]
            .iter()
            .map(|n| ((*n).to_owned(), member("c", "u1")))
            .collect();
        let clusters = settle(&mut all, &reads);
        assert_eq!(
            roles(&all),
            [
                ("n1", Primary),
                ("n2", Member),
                ("n3", Member),
                ("r1", Replica)
            ]
        );
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].name, "c");
        assert_eq!(clusters[0].members, ["n1", "n2", "n3"]);
        assert_eq!(clusters[0].writer.as_deref(), Some("n1"));

        // Two clusters of the same default name, told apart by their UUIDs; the second has
        // no member configured as a primary, so no writer.
        let mut two = nodes(&[
            ("a1", Replica),
            ("b1", Primary),
            ("a2", Replica),
            ("b2", Replica),
        ]);
        let reads = vec![
            ("a1".to_owned(), member("my_wsrep_cluster", "ua")),
            ("a2".to_owned(), member("my_wsrep_cluster", "ua")),
            ("b1".to_owned(), member("my_wsrep_cluster", "ub")),
            ("b2".to_owned(), member("my_wsrep_cluster", "ub")),
        ];
        let clusters = settle(&mut two, &reads);
        let by_members: Vec<(Vec<String>, Option<String>)> = clusters
            .into_iter()
            .map(|c| (c.members, c.writer))
            .collect();
        assert_eq!(
            by_members,
            [
                (vec!["a1".to_owned(), "a2".to_owned()], None),
                (
                    vec!["b1".to_owned(), "b2".to_owned()],
                    Some("b1".to_owned())
                ),
            ]
        );
        assert_eq!(
            roles(&two),
            [
                ("a1", Member),
                ("b1", Primary),
                ("a2", Member),
                ("b2", Member)
            ]
        );
    }
}
