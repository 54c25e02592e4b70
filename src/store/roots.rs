//! Heartbeat roots (`docs/design.md`, "Channels and roots"): every writable root of the topology
//! has a heartbeat row and a writer of its own, and a channel's lag is read from the rows of the
//! roots upstream of it.
//! Two primaries feeding an aggregator give the aggregator two channels, each with the lag of
//! its own root; a replica below the aggregator is behind by the worse of the two.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use super::lag::{Acks, Lag};
use super::node::NodeEntry;
use crate::mysql::ReplicaStatus;
use crate::poll::WriterState;

/// One root's heartbeat: its row's id, the node written to and the acknowledged sequence.
#[derive(Debug)]
pub struct Beat {
    pub id: String,
    /// The root node now (it moves after a failover); `None` without a configured primary.
    pub node: Option<String>,
    pub acks: Acks,
    pub state: WriterState,
}

impl Beat {
    pub fn new(id: String, node: Option<String>, history: usize) -> Self {
        Self {
            id,
            node,
            acks: Acks::with_capacity(history),
            state: WriterState::Starting,
        }
    }

    /// The writer has not advanced for three intervals (and at least a second): lag figures that
    /// rest on "no newer heartbeat exists" are no longer true.
    pub fn stale(&self, now: Instant, interval: Duration) -> bool {
        let limit = (interval * 3).max(Duration::from_secs(1));
        self.acks
            .latest()
            .is_some_and(|(_, at)| now.saturating_duration_since(at) > limit)
    }
}

/// Why lag behind `beat`'s root cannot be told, when its writer writes nothing by choice
/// (read-only, a table that is not rwtop's): every channel below that root says so rather than
/// a bare "unknown".
pub fn not_writing(beat: &Beat) -> Option<String> {
    let root = beat.node.as_deref().unwrap_or("the primary");
    match &beat.state {
        WriterState::Refused { .. } | WriterState::Unsafe { .. } => Some(format!(
            "rwtop writes no heartbeat on {root}: {}",
            beat.state.detail().unwrap_or_default()
        )),
        _ => None,
    }
}

/// Nodes by address and by server id, built once per pass so that finding every channel's
/// source costs O(nodes). The first node in name order wins a tie, as a scan would.
pub struct SourceIndex<'a> {
    by_address: HashMap<&'a str, &'a str>,
    by_server_id: HashMap<u32, &'a str>,
}

impl<'a> SourceIndex<'a> {
    pub fn new(nodes: &'a BTreeMap<String, NodeEntry>) -> Self {
        let mut index = Self {
            by_address: HashMap::new(),
            by_server_id: HashMap::new(),
        };
        for (name, entry) in nodes {
            index.by_address.entry(&entry.address).or_insert(name);
            if let Some(identity) = &entry.identity {
                index.by_server_id.entry(identity.server_id).or_insert(name);
            }
        }
        index
    }

    /// Which node a channel replicates from: by address first, then by server id (hostnames in
    /// configs rarely match the IP a replica reports).
    pub fn source_of(&self, status: &ReplicaStatus) -> Option<&'a str> {
        let address = format!("{}:{}", status.source_host, status.source_port);
        self.by_address
            .get(address.as_str())
            .or_else(|| self.by_server_id.get(&status.source_server_id?))
            .copied()
    }
}

/// For every node, the writers (by index) upstream of each of its channels, in channel order.
pub type Routes = HashMap<String, Vec<Vec<usize>>>;

/// Follows every channel up its chain of sources to the roots that have a writer. A channel
/// whose source is not polled reads the first root's row when it is the node's only channel
/// (the one-primary topology rwtop always handled), and no row when the node has several: its
/// lag is then unknown rather than another channel's.
pub fn routes(nodes: &BTreeMap<String, NodeEntry>, beats: &[Beat]) -> Routes {
    let index = SourceIndex::new(nodes);
    let roots: HashMap<&str, usize> = beats
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((b.node.as_deref()?, i)))
        .collect();
    let mut memo: HashMap<&str, Vec<usize>> = HashMap::new();
    nodes
        .iter()
        .map(|(name, entry)| {
            let statuses = entry.statuses();
            let channels = statuses
                .iter()
                .map(|status| {
                    let upstream = index.source_of(status).map(|source| {
                        let mut seen = HashSet::from([name.as_str()]);
                        upstream_of(source, nodes, &index, &roots, &mut seen, &mut memo)
                    });
                    match upstream {
                        Some(writers) if !writers.is_empty() => writers,
                        _ if statuses.len() == 1 && !beats.is_empty() => vec![0],
                        _ => Vec::new(),
                    }
                })
                .collect();
            (name.clone(), channels)
        })
        .collect()
}

/// The writers at or above `node`: its own when it is a root, else those above each of its
/// channels. `seen` breaks rings.
fn upstream_of<'a>(
    node: &'a str,
    nodes: &'a BTreeMap<String, NodeEntry>,
    index: &SourceIndex<'a>,
    roots: &HashMap<&str, usize>,
    seen: &mut HashSet<&'a str>,
    memo: &mut HashMap<&'a str, Vec<usize>>,
) -> Vec<usize> {
    if let Some(&writer) = roots.get(node) {
        return vec![writer];
    }
    if let Some(found) = memo.get(node) {
        return found.clone();
    }
    if !seen.insert(node) {
        return Vec::new();
    }
    let mut found: Vec<usize> = Vec::new();
    for status in nodes.get(node).map_or(&[][..], NodeEntry::statuses) {
        if let Some(source) = index.source_of(status) {
            for writer in upstream_of(source, nodes, index, roots, seen, memo) {
                if !found.contains(&writer) {
                    found.push(writer);
                }
            }
        }
    }
    found.sort_unstable();
    memo.insert(node, found.clone());
    found
}

/// A channel fed by several roots is as far behind as the furthest: an unknown one makes the
/// whole unknown, and otherwise the largest figure wins (a bound over an exact one of the same
/// size, since it may be more).
pub fn worst(lags: impl IntoIterator<Item = Lag>) -> Option<Lag> {
    let mut worst: Option<Lag> = None;
    for lag in lags {
        worst = Some(match (worst, lag) {
            (Some(unknown @ Lag::Unknown { .. }), _) | (_, unknown @ Lag::Unknown { .. }) => {
                unknown
            }
            (None, lag) => lag,
            (Some(a), b) => {
                let bound = |l: &Lag| matches!(l, Lag::AtLeast { .. });
                if (b.value(), bound(&b)) > (a.value(), bound(&a)) {
                    b
                } else {
                    a
                }
            }
        });
    }
    worst
}

/// Whether a sample changes where a node's channels point, so routes must be worked out again.
pub fn same_sources(old: &[ReplicaStatus], new: &[ReplicaStatus]) -> bool {
    old.len() == new.len()
        && old.iter().zip(new).all(|(a, b)| {
            a.channel == b.channel
                && a.source_host == b.source_host
                && a.source_port == b.source_port
                && a.source_server_id == b.source_server_id
        })
}

#[cfg(test)]
mod tests {
    use super::{Lag, worst};
    use std::time::Duration;

    #[test]
    fn the_worst_root_sets_the_lag() {
        let ms = Duration::from_millis;
        let exact = |n| Lag::Exact { lag: ms(n) };
        let bound = |n| Lag::AtLeast {
            lag: ms(n),
            upper: None,
        };
        let unknown = Lag::Unknown {
            reason: "p2's row has not advanced".to_owned(),
        };
        assert_eq!(worst([]), None);
        assert_eq!(worst([exact(100), exact(900)]), Some(exact(900)));
        assert_eq!(worst([exact(900), bound(200)]), Some(exact(900)));
        assert_eq!(worst([exact(900), bound(900)]), Some(bound(900)));
        assert_eq!(worst([exact(0), unknown.clone()]), Some(unknown.clone()));
        assert_eq!(worst([unknown.clone(), bound(5000)]), Some(unknown));
    }
}
