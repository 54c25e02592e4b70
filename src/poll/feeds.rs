//! Which nodes feed a replica rwtop watches. A node's own binlog coordinate (`SHOW BINLOG
//! STATUS`, every poll) and list (`SHOW BINARY LOGS`, `cadence.rs`) are only ever read as a
//! source's state: its replicas' bytes behind, their byte rates and catch-up, the retention
//! headroom they still need. So a status poll asks for them only on a node that some watched
//! channel replicates from, or while that is not known yet (a node has not answered, so its
//! channels are unknown): at 1,000 nodes most are leaves, and their polls send a statement
//! fewer (docs/benchmarks.md, "Poll path").
//!
//! The engine sets it from each snapshot it publishes ([`Feeds::set`], from
//! `Topology::sources`); each poller asks it before every status poll ([`Feeds::feeds`]). A node
//! that starts feeding one (a new replica, a failover) reads its coordinate from its first poll
//! after the snapshot that shows it.

use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError, RwLock};

/// The sources of every watched channel, or `None` while they are not all known.
#[derive(Debug, Default)]
pub struct Feeds {
    sources: RwLock<Option<BTreeSet<String>>>,
}

impl Feeds {
    /// Not known yet: every node reads its coordinate and list.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Takes the sources the topology shows ([`crate::topology::Topology::sources`]: sorted,
    /// each once); written only when they changed, so the pollers' reads do not wait on an
    /// unchanged topology.
    pub fn set(&self, shown: Option<Vec<&str>>) {
        let same = {
            let known = self.sources.read().unwrap_or_else(PoisonError::into_inner);
            match (&*known, &shown) {
                (None, None) => true,
                (Some(known), Some(shown)) => {
                    known.iter().map(String::as_str).eq(shown.iter().copied())
                }
                _ => false,
            }
        };
        if !same {
            let new = shown.map(|names| names.into_iter().map(str::to_owned).collect());
            *self.sources.write().unwrap_or_else(PoisonError::into_inner) = new;
        }
    }

    /// Whether `node`'s status poll reads its binlog coordinate and list: a watched channel
    /// replicates from it, or the topology does not tell yet.
    #[must_use]
    pub fn feeds(&self, node: &str) -> bool {
        let known = self.sources.read().unwrap_or_else(PoisonError::into_inner);
        known.as_ref().is_none_or(|sources| sources.contains(node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_source_reads_its_coordinate_once_the_sources_are_known() {
        let feeds = Feeds::new();
        assert!(
            feeds.feeds("db1") && feeds.feeds("r1"),
            "before any snapshot"
        );

        feeds.set(Some(vec!["db1", "r1"]));
        assert!(feeds.feeds("db1") && feeds.feeds("r1"));
        assert!(!feeds.feeds("r2") && !feeds.feeds("c1"), "leaves");

        // A node that has not answered could replicate from any: every node reads again.
        feeds.set(None);
        assert!(feeds.feeds("r2") && feeds.feeds("c1"));

        // c1 goes (RESET REPLICA ALL): r1 feeds nobody rwtop watches.
        feeds.set(Some(vec!["db1"]));
        assert!(feeds.feeds("db1"));
        assert!(!feeds.feeds("r1"));
        feeds.set(Some(vec!["r1"]));
        assert!(
            !feeds.feeds("db1") && feeds.feeds("r1"),
            "a set of the same size"
        );
    }
}
