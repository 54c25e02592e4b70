//! rwtop's own start-up, shared by every poller: while a node configured at start has not had
//! its first attempt, no node is judged silent (`silence.rs`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// rwtop's own start-up: the nodes configured at start whose first attempt (a connection
/// refused or timed out, or a first tick ended) is not over. While any is, no node is judged
/// silent (its ticks are held to the query timeout): a thousand connections opening at once on
/// a 2-core host that also runs the servers hold up every node's answers for seconds, the early
/// ones' second ticks included (1–35 healthy names of 1,000 were shown down for a moment in each
/// scale run). Bounded: each first attempt ends within the connect and query timeouts. Nodes
/// discovered later are not waited for.
#[derive(Debug, Default)]
pub struct StartUp {
    /// How many of `names` are left: read on every tick of every poller, without the lock.
    pending: AtomicUsize,
    /// The configured nodes whose first attempt is not over, so that a part ends once.
    names: Mutex<HashSet<String>>,
}

impl StartUp {
    #[must_use]
    pub fn new(nodes: impl IntoIterator<Item = String>) -> Arc<Self> {
        let names: HashSet<String> = nodes.into_iter().collect();
        Arc::new(Self {
            pending: AtomicUsize::new(names.len()),
            names: Mutex::new(names),
        })
    }

    /// Whether some configured node's first attempt is not over.
    #[must_use]
    pub fn under_way(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }

    /// `node`'s first attempt is over, however it ended; again, or for a node not waited for,
    /// nothing.
    pub fn ended(&self, node: &str) {
        let mut names = self
            .names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if names.remove(node) {
            self.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each configured node ends its part once; a node discovered later, or the same node
    /// again, changes nothing.
    #[test]
    fn start_up_waits_for_each_configured_node_once() {
        let start_up = StartUp::new(["a".to_owned(), "b".to_owned()]);
        start_up.ended("a");
        start_up.ended("a");
        start_up.ended("discovered");
        assert!(start_up.under_way());
        start_up.ended("b");
        assert!(!start_up.under_way());
        start_up.ended("b");
        assert!(!start_up.under_way());
        assert!(!StartUp::new(Vec::new()).under_way());
    }
}
