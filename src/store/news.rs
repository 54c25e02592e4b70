//! News: an event that states a fact some alert is raised on at its first sample (a replication
//! thread stopped or started, an error came or went, a node stopped answering or came back).
//! The store's task publishes a snapshot for it at once instead of at its next tick
//! (`engine/store_task.rs`): in a large topology the tick is a second apart, and waiting for it
//! would add up to that second to the time to alert.

use super::{Event, Store};
use crate::mysql::ReplicaStatus;
use crate::poll::{ConnState, PollEvent};

impl Store {
    /// Whether `event`, not yet applied, is news (see the module's text). A node's first sample
    /// is not: nothing it says changed.
    #[must_use]
    pub fn is_news(&self, event: &Event) -> bool {
        let Event::Poll(event) = event else {
            return false;
        };
        match event {
            PollEvent::Conn { node, state } => self
                .nodes
                .get(node)
                .is_some_and(|e| (e.conn == ConnState::Up) != (*state == ConnState::Up)),
            PollEvent::Sample { node, sample } => self.nodes.get(node).is_some_and(|e| {
                e.sample.is_some() && stated_change(e.statuses(), &sample.reported.replication)
            }),
            _ => false,
        }
    }
}

/// A channel came or went, or one of its threads, or its errors, changed.
fn stated_change(old: &[ReplicaStatus], new: &[ReplicaStatus]) -> bool {
    let errno = |e: &Option<crate::mysql::ThreadError>| e.as_ref().map(|e| e.errno);
    old.len() != new.len()
        || old.iter().zip(new).any(|(a, b)| {
            a.channel != b.channel
                || a.io_running != b.io_running
                || a.sql_running != b.sql_running
                || errno(&a.last_io_error) != errno(&b.last_io_error)
                || errno(&a.last_sql_error) != errno(&b.last_sql_error)
        })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::mysql::{IoRunning, ThreadError};
    use crate::poll::{ConnState, PollEvent};
    use crate::store::Event;
    use crate::store::testkit::{multi_source_store, replica_sample, running_status};

    fn sample(change: impl FnOnce(&mut Vec<crate::mysql::ReplicaStatus>)) -> Event {
        let mut statuses = vec![running_status("", 3306), running_status("p2", 3308)];
        change(&mut statuses);
        Event::Poll(PollEvent::Sample {
            node: "r2".to_owned(),
            sample: Box::new(replica_sample(
                Instant::now() + Duration::from_secs(1),
                statuses,
            )),
        })
    }

    #[test]
    fn a_stated_change_is_news_and_a_moving_figure_is_not() {
        let store = multi_source_store();
        // The same threads and errors, other positions and lags: the next tick will do.
        assert!(!store.is_news(&sample(|s| s[0].seconds_behind_source = Some(7))));
        assert!(store.is_news(&sample(|s| s[1].io_running = IoRunning::No)));
        assert!(store.is_news(&sample(|s| s[0].sql_running = false)));
        assert!(store.is_news(&sample(|s| {
            s[0].last_sql_error = Some(ThreadError {
                errno: 1062,
                message: "Duplicate entry".to_owned(),
                timestamp: None,
            });
        })));
        assert!(store.is_news(&sample(|s| {
            s.pop();
        })));
        let conn = |state| {
            Event::Poll(PollEvent::Conn {
                node: "r2".to_owned(),
                state,
            })
        };
        assert!(!store.is_news(&conn(ConnState::Up)));
        assert!(store.is_news(&conn(ConnState::Retrying {
            next: Duration::from_secs(1),
            cause: "refused".to_owned(),
        })));
        // A node never sampled says nothing new with its first sample.
        let mut first = sample(|_| {});
        if let Event::Poll(PollEvent::Sample { node, .. }) = &mut first {
            "db2".clone_into(node);
        }
        assert!(!store.is_news(&first));
    }
}
