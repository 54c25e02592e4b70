//! Every root found before the engine starts: each configured node's channels are followed up
//! to their sources, and a source nobody named is added to the topology — as a primary (a root,
//! with a heartbeat writer of its own) when it replicates from nobody, else as a replica whose
//! own sources are followed in turn.
//!
//! Downward discovery (the replicas a node reports) runs inside the engine, but a root has to
//! be known before the writers start: each root's heartbeat row is what every channel below it
//! reads its lag from. So `rwtop --primary A --replica agg` finds the second primary that feeds
//! `agg` here, once, at start-up; a root that appears later (a channel added while rwtop runs,
//! a node that did not answer now) is polled by the engine's discovery, and its channels say
//! that its heartbeat is not written and what to add.
//!
//! A discovered root is written to like a configured one (the useful default: lag is then
//! exact on every channel); `heartbeat.write_discovered_roots = false` only reads it. Either
//! way the start-up says what was found and what was chosen ([`Found::describe`]).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::task::JoinSet;

use super::EngineSpec;
use super::clusters::{self, MemberRead};
use crate::mysql::{Endpoint, NodeConn, ReplicaStatus, Timeouts};
use crate::topology::Role;

/// How many nodes are read at once: a thousand configured names start in well under a second
/// without opening a thousand connections together.
const AT_ONCE: usize = 32;

/// What rwtop does on a root it found rather than was given (`heartbeat.write_discovered_roots`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundRoots {
    /// Writes its heartbeat there, as on a configured primary.
    Write,
    /// Polls it and reads its row, and writes nothing.
    Read,
}

/// A node found above a configured one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub address: String,
    pub role: Role,
    /// The replica and channel it was found through: `agg's channel 'p2'`.
    pub via: String,
    /// A root rwtop writes its heartbeat on (`false`: only reads it).
    pub writes: bool,
}

impl Found {
    /// The start-up line: what was found, and what rwtop does there.
    #[must_use]
    pub fn describe(&self) -> String {
        match (self.role, self.writes) {
            (Role::Primary, true) => format!(
                "found root {} ({}) through {}: writing its heartbeat there, as for a \
                 configured primary (heartbeat.write_discovered_roots = false only reads it)",
                self.name, self.address, self.via
            ),
            (Role::Primary, false) => format!(
                "found root {} ({}) through {}: reading it only \
                 (heartbeat.write_discovered_roots = false), so its channels' lag is known only \
                 while another rwtop writes its heartbeat row",
                self.name, self.address, self.via
            ),
            (Role::Replica, _) => format!(
                "found {} ({}) through {}: an intermediate replica, followed up to its roots",
                self.name, self.address, self.via
            ),
            (Role::Member, _) => format!(
                "found {} ({}) through {}: polled as a member of that cluster (rwtop writes \
                 a cluster's heartbeat on one member only)",
                self.name, self.address, self.via
            ),
        }
    }

    /// The node found answered `read`: its role, and its own name for itself when it gives
    /// a usable one no other node has (a member's `wsrep_node_name`, else its `report_host`).
    fn answered(&mut self, read: &Read, names: &mut HashSet<String>) {
        self.role = if read.member.is_some() {
            Role::Member
        } else if read.statuses.is_empty() {
            Role::Primary
        } else {
            Role::Replica
        };
        let own = read.member.as_ref().map(|m| m.names.node.as_str());
        if let Some(better) = [own, read.report_host.as_deref()]
            .into_iter()
            .flatten()
            .find(|h| usable(h) && !names.contains(*h))
        {
            names.remove(&self.name);
            better.clone_into(&mut self.name);
            names.insert(self.name.clone());
        }
    }
}

/// What one node told about itself and its sources.
struct Read {
    server_id: Option<u32>,
    report_host: Option<String>,
    statuses: Vec<ReplicaStatus>,
    /// A Galera member's status and names; `None` for any other server.
    member: Option<MemberRead>,
}

async fn read(endpoint: Endpoint, timeouts: Timeouts) -> Option<Read> {
    let mut conn = NodeConn::connect(&endpoint, timeouts).await.ok()?;
    let server_id = Some(conn.identity().server_id);
    let statuses = conn.replica_status().await.ok()?;
    let report_host = conn
        .query_rows("SELECT @@report_host AS report_host")
        .await
        .ok()
        .and_then(|rows| {
            rows.first()
                .and_then(|r| r.optional_text(&["report_host"]).map(str::to_owned))
        });
    let member = clusters::read_member(&mut conn).await;
    conn.close().await;
    Some(Read {
        server_id,
        report_host,
        statuses,
        member,
    })
}

/// Follows every channel of the spec's nodes to its source, adds the sources nobody named
/// (roots as primaries, after the configured ones, so the first root stays the first), and
/// returns what it added. A Galera member's fellow members are added too, and each cluster
/// gets one writer ([`clusters::settle`]). A node that does not answer within the timeouts is
/// left for the engine; the whole walk ends after `limit`. With discovery off, only the
/// configured nodes are read, for their clusters.
pub async fn find_roots(spec: &mut EngineSpec, limit: Duration) -> Vec<Found> {
    if spec.nodes.is_empty() {
        return Vec::new();
    }
    let follow = spec.discovery;
    let deadline = tokio::time::Instant::now() + limit;
    let template = spec.nodes[0].1.clone();
    let mut addresses: HashSet<String> = spec.nodes.iter().map(|(_, e, _)| e.address()).collect();
    let mut names: HashSet<String> = spec.nodes.iter().map(|(n, _, _)| n.clone()).collect();
    let mut server_ids: HashSet<u32> = HashSet::new();
    let mut found: Vec<Found> = Vec::new();
    let mut members: Vec<(String, MemberRead)> = Vec::new();
    // (name, endpoint, index in `found` when discovered here)
    let mut level: Vec<(String, Endpoint, Option<usize>)> = spec
        .nodes
        .iter()
        .map(|(n, e, _)| (n.clone(), e.clone(), None))
        .collect();
    while !level.is_empty() {
        let reads = read_all(&level, spec.timeouts, deadline).await;
        for (_, read) in &reads {
            server_ids.extend(read.server_id);
        }
        let mut next = Vec::new();
        for (i, read) in reads {
            let (node, _, discovered) = &level[i];
            let mut node = node.clone();
            if let Some(at) = *discovered {
                found[at].answered(&read, &mut names);
                node.clone_from(&found[at].name);
            }
            if let Some(member) = &read.member {
                members.push((node.clone(), member.clone()));
            }
            if !follow {
                continue;
            }
            for address in read.member.iter().flat_map(|m| &m.status.incoming) {
                if addresses.contains(address) {
                    continue;
                }
                let Some(endpoint) = template.at(address) else {
                    continue;
                };
                addresses.insert(address.clone());
                names.insert(address.clone());
                found.push(Found {
                    name: address.clone(),
                    address: address.clone(),
                    role: Role::Member,
                    via: clusters::via(&node, read.member.as_ref()),
                    writes: false,
                });
                next.push((address.clone(), endpoint, Some(found.len() - 1)));
            }
            for status in &read.statuses {
                let address = format!("{}:{}", status.source_host, status.source_port);
                let known = addresses.contains(&address)
                    || status
                        .source_server_id
                        .is_some_and(|id| server_ids.contains(&id));
                if known || status.source_host.is_empty() {
                    continue;
                }
                let Some(endpoint) = template.at(&address) else {
                    continue;
                };
                addresses.insert(address.clone());
                let name = [status.channel.as_str(), address.as_str()]
                    .into_iter()
                    .find(|n| usable(n) && !names.contains(*n))
                    .unwrap_or(&address)
                    .to_owned();
                names.insert(name.clone());
                let channel = if status.channel.is_empty() {
                    "default channel".to_owned()
                } else {
                    format!("channel '{}'", status.channel)
                };
                found.push(Found {
                    name: name.clone(),
                    address,
                    // Until it answers: a source nobody reached is shown as a replica would be.
                    role: Role::Replica,
                    via: format!("{node}'s {channel}"),
                    writes: spec.found_roots == FoundRoots::Write,
                });
                next.push((name, endpoint, Some(found.len() - 1)));
            }
        }
        level = next;
    }
    add_found(spec, &mut found, &template, &members);
    found
}

/// Adds what the walk found to `spec`, settles its Galera clusters, and orders the nodes.
fn add_found(
    spec: &mut EngineSpec,
    found: &mut [Found],
    template: &Endpoint,
    members: &[(String, MemberRead)],
) {
    // Members found after everything else found, by name (their fellows list them in no
    // particular order); the sort is stable, so roots keep the order they were found in.
    found.sort_by_cached_key(|f| (f.role == Role::Member).then(|| f.name.clone()));
    for f in found.iter() {
        if let Some(endpoint) = template.at(&f.address) {
            spec.nodes.push((f.name.clone(), endpoint, f.role));
        }
    }
    spec.clusters = clusters::settle(&mut spec.nodes, members);
    // Roots after the configured ones, members and replicas last: the writers' order is the
    // nodes' order.
    spec.nodes.sort_by_key(|(_, _, role)| match role {
        Role::Primary => 0,
        Role::Member => 1,
        Role::Replica => 2,
    });
    spec.found = found.to_vec();
}

/// A name a node may go by: what a config accepts.
fn usable(name: &str) -> bool {
    crate::config::check_node_name(name).is_ok()
}

/// Reads every node of `level`, [`AT_ONCE`] at a time, until `deadline`: each answer by its
/// index in `level`.
async fn read_all(
    level: &[(String, Endpoint, Option<usize>)],
    timeouts: Timeouts,
    deadline: tokio::time::Instant,
) -> Vec<(usize, Read)> {
    let mut pending = level.iter().enumerate();
    let mut running = JoinSet::new();
    let mut reads = HashMap::new();
    loop {
        while running.len() < AT_ONCE {
            let Some((i, (_, endpoint, _))) = pending.next() else {
                break;
            };
            let endpoint = endpoint.clone();
            running.spawn(async move { (i, read(endpoint, timeouts).await) });
        }
        match tokio::time::timeout_at(deadline, running.join_next()).await {
            Ok(Some(Ok((i, Some(read))))) => {
                reads.insert(i, read);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    running.abort_all();
    let mut out: Vec<(usize, Read)> = reads.into_iter().collect();
    out.sort_by_key(|(i, _)| *i);
    out
}
