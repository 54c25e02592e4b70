//! News: an event that states a fact some alert is raised on at its first sample (a replication
//! thread stopped or started, an error came or went, a node stopped answering or came back).
//! The store's task publishes a snapshot for it at once instead of at its next tick
//! (`engine/store_task.rs`): in a large topology the tick is a second apart, and waiting for it
//! would add up to that second to the time to alert.
//!
//! A stalling link is news of another kind: a lag, not a stated fact, but one the stalled-link
//! alert is raised on at its first sample once the source's state and the split say so
//! (`alerts/sbm.rs`). A sample that shows a running channel's received heartbeats a second old,
//! and less than the poller's close watch ([`close_watch`]) past that, is news until that
//! alert is raised.

use std::time::Duration;

use super::lag::Lag;
use super::lag_split::WORTH_A_WORD;
use super::{Event, Store};
use crate::mysql::{IoRunning, ReplicaStatus};
use crate::poll::{ConnState, PollEvent, close_watch};

/// Whether a running channel with `status` that has received heartbeats `received` old, polled
/// every `interval`, is stalling: a second old at least (the lag split's floor, and the
/// stalled-link alert's threshold at the defaults), and less than the close watch its poller keeps
/// ([`close_watch`], one policy for both) past that. A cascaded replica's link stalls with its
/// source's and raises no stalled-link alert of its own, so its samples are news for this long
/// and no longer.
pub(super) fn stalling(interval: Duration, (status, received): (&ReplicaStatus, &Lag)) -> bool {
    status.io_running == IoRunning::Yes
        && received
            .exact()
            .is_some_and(|lag| lag >= WORTH_A_WORD && lag < WORTH_A_WORD + close_watch(interval))
}

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

    /// The node whose sample, the last applied, shows a running link stalling ([`stalling`]);
    /// taken once.
    pub fn take_stalling(&mut self) -> Option<String> {
        self.stalling.take()
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

    /// A running link's received heartbeats from a second old to two poll intervals past
    /// that (the poller's close watch): the stretch in which the stalled-link alert is due, at a
    /// 250 ms, the shipped 1 s and a 5 s interval. Not a bound, not a stopped IO thread (its
    /// own news), not a link that has stalled for long.
    #[test]
    fn a_running_link_stalls_from_its_first_second_for_two_poll_intervals() {
        use crate::store::lag::Lag;
        let running = running_status("", 3306);
        let ms = |ms| Lag::Exact {
            lag: Duration::from_millis(ms),
        };
        for (interval, ends_ms) in [(250, 1_500), (1_000, 3_000), (5_000, 11_000)] {
            let stalling =
                |status, lag: &Lag| super::stalling(Duration::from_millis(interval), (status, lag));
            assert!(!stalling(&running, &ms(990)), "{interval} ms");
            assert!(stalling(&running, &ms(1_000)), "{interval} ms");
            assert!(stalling(&running, &ms(ends_ms - 10)), "{interval} ms");
            assert!(!stalling(&running, &ms(ends_ms)), "{interval} ms");
        }
        let stalling = |status, lag: &Lag| super::stalling(Duration::from_secs(1), (status, lag));
        let bound = Lag::AtLeast {
            lag: Duration::from_millis(1_500),
            upper: None,
        };
        assert!(!stalling(&running, &bound));
        let mut stopped = running.clone();
        stopped.io_running = IoRunning::No;
        assert!(!stalling(&stopped, &ms(1_500)));
    }
}
