//! The engine: decides what each snapshot brings that is new, asks the rules about it, and runs
//! their verdicts through the hysteresis.
//!
//! The store publishes snapshots on a timer, several per poll, so "a sample" cannot mean "a
//! snapshot": a replica judged four times on the same status would raise on one bad poll.
//! A node's rules run only when its `sample_seq` moved. A node that does not answer has no new
//! samples, so it counts one per poll interval of uptime (that is how `node_down` raises and
//! clears); the global rules do the same. A change of a node's connection state is a sample of
//! its own, judged on the first snapshot that shows it: a node that went down is news then, not
//! up to an interval later.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::ddl::DdlMemory;
use super::hysteresis::{Tracker, Transition};
use super::log::AlertLog;
use super::rules::node_verdicts;
use super::topology::TopologyMemory;
use super::verdict::{RuleInputs, Verdict};
use super::{AlertKind, AlertSettings, AlertsView, Severity, global};
use crate::poll::ConnState;
use crate::store::{NodeView, Snapshot};

/// An alert's identity: its kind, node and (named) channel.
type Key = (AlertKind, Option<String>, Option<String>);

/// Which status sample of a node was judged last, and when.
#[derive(Debug)]
struct NodeClock {
    seq: u64,
    counted_at: Duration,
    /// The connection state (its name) of the last counted sample.
    conn: &'static str,
}

#[derive(Debug)]
pub struct AlertEngine {
    settings: AlertSettings,
    trackers: BTreeMap<Key, Tracker>,
    nodes: HashMap<String, NodeClock>,
    /// Uptime of the last global sample.
    global_at: Option<Duration>,
    ddl: DdlMemory,
    topology: TopologyMemory,
    log: AlertLog,
    /// Raised on this snapshot, logged once folded into their incidents: the log then keeps the
    /// cause every output shows, not the one the rule wrote before it knew the root.
    raised: Vec<Key>,
}

impl AlertEngine {
    #[must_use]
    pub fn new(settings: AlertSettings) -> Self {
        Self {
            log: AlertLog::new(settings.log_capacity),
            settings,
            trackers: BTreeMap::new(),
            nodes: HashMap::new(),
            global_at: None,
            ddl: DdlMemory::default(),
            topology: TopologyMemory::default(),
            raised: Vec::new(),
        }
    }

    /// Judges what is new in `snapshot` and returns the alerts as they stand after it.
    pub fn evaluate(&mut self, snapshot: &Snapshot) -> AlertsView {
        let at = snapshot.taken_at;
        self.ddl.observe(snapshot);
        let due: Vec<&NodeView> = snapshot
            .nodes
            .iter()
            .filter(|n| self.node_due(n, snapshot.uptime))
            .collect();
        let global_due = self.global_due(snapshot.uptime);

        let mut verdicts: Vec<(Key, Verdict)> = Vec::new();
        {
            let inputs = RuleInputs::new(snapshot, &self.settings, &self.ddl, &self.topology);
            for node in &due {
                for (kind, channel, verdict) in node_verdicts(&inputs, node) {
                    verdicts.push(((kind, Some(node.name.clone()), channel), verdict));
                }
            }
            if global_due {
                let global = |kind| (kind, None, None);
                for (root, verdict) in global::heartbeat_stale(&inputs) {
                    verdicts.push(((AlertKind::HeartbeatStale, root, None), verdict));
                }
                verdicts.extend([
                    (
                        global(AlertKind::AllReplicasLagging),
                        global::all_replicas_lagging(&inputs),
                    ),
                    (
                        global(AlertKind::TopologyChanged),
                        self.topology.primary_verdict(snapshot),
                    ),
                ]);
            }
        }
        for (key, verdict) in verdicts {
            self.apply(&key, verdict, at);
        }

        for node in &due {
            let trackers = &self.trackers;
            self.topology.settle_source(node, |channel| {
                let channel = (!channel.is_empty()).then(|| channel.to_owned());
                let key = (AlertKind::TopologyChanged, Some(node.name.clone()), channel);
                trackers.get(&key).is_some_and(|t| t.active().is_some())
            });
        }
        if global_due {
            let raised = self.is_active(AlertKind::TopologyChanged, None);
            self.topology.settle_primary(snapshot, raised);
        } else {
            // The first primaries are adopted as soon as any snapshot shows them, not at the next
            // global sample: a switchover within that second would otherwise become the baseline.
            self.topology.settle_primary(snapshot, false);
        }
        self.forget_departed(snapshot, at);
        let mut view = self.view();
        view.incidents = super::incidents::fold(snapshot, &self.settings, &mut view.active);
        let raised = std::mem::take(&mut self.raised);
        for (kind, node, channel) in &raised {
            let alert = view
                .active
                .iter()
                .find(|a| a.kind == *kind && &a.node == node && &a.channel == channel);
            if let Some(alert) = alert {
                self.log.raised(alert, at);
            }
        }
        if !raised.is_empty() {
            view.log = self.log.newest_first();
        }
        view
    }

    fn node_due(&mut self, node: &NodeView, uptime: Duration) -> bool {
        let up = node.conn == ConnState::Up;
        let Some(clock) = self.nodes.get_mut(&node.name) else {
            self.nodes.insert(
                node.name.clone(),
                NodeClock {
                    seq: node.sample_seq,
                    counted_at: uptime,
                    conn: node.conn.name(),
                },
            );
            return true;
        };
        if clock.conn != node.conn.name() {
            clock.conn = node.conn.name();
            // Back up, it is judged on its next sample (the one shown now is from before).
            if !up {
                clock.counted_at = uptime;
                return true;
            }
        }
        if up {
            if clock.seq == node.sample_seq {
                return false;
            }
            clock.seq = node.sample_seq;
            clock.counted_at = uptime;
            return true;
        }
        match tick(Some(clock.counted_at), uptime, self.settings.poll_interval) {
            Some(at) => {
                clock.counted_at = at;
                true
            }
            None => false,
        }
    }

    fn global_due(&mut self, uptime: Duration) -> bool {
        let next = tick(self.global_at, uptime, self.settings.poll_interval);
        if next.is_some() {
            self.global_at = next;
        }
        next.is_some()
    }

    fn apply(&mut self, key: &Key, verdict: Verdict, at: DateTime<Utc>) {
        let kind = key.0;
        // Clean or unknown samples of a rule with nothing in progress change nothing: no state
        // is kept for them, so memory follows what is wrong, not the size of the topology.
        if !matches!(verdict, Verdict::Bad(_)) && !self.trackers.contains_key(key) {
            return;
        }
        let tracker = self.trackers.entry(key.clone()).or_default();
        let scope = (key.1.as_deref(), key.2.as_deref());
        match tracker.observe(kind, scope, verdict, at, &self.settings) {
            Transition::Nothing => {}
            Transition::Raised => self.raised.push(key.clone()),
            Transition::Cleared(alert) => {
                let why = match self.settings.clean_samples_to_clear(kind) {
                    1 => "after 1 clean sample".to_owned(),
                    n => format!("after {n} clean samples"),
                };
                self.log.cleared(&alert, at, &why);
            }
        }
        if self.trackers.get(key).is_some_and(Tracker::is_idle) {
            self.trackers.remove(key);
        }
    }

    fn is_active(&self, kind: AlertKind, node: Option<&str>) -> bool {
        self.trackers
            .get(&(kind, node.map(str::to_owned), None))
            .is_some_and(|t| t.active().is_some())
    }

    /// Nodes gone from the topology will send no more samples: their alerts clear now.
    fn forget_departed(&mut self, snapshot: &Snapshot, at: DateTime<Utc>) {
        let present = snapshot.names();
        self.nodes.retain(|name, _| present.contains(name.as_str()));
        self.topology.retain(&present);
        // A channel the node answers without (RESET REPLICA ALL) is gone too.
        let channel_gone = |node: &str, channel: &str| {
            snapshot.node(node).is_some_and(|n| {
                n.conn == ConnState::Up && n.sample_seq > 0 && n.channel(channel).is_none()
            })
        };
        let gone: Vec<(Key, &str)> = self
            .trackers
            .keys()
            .filter_map(|key| match key {
                (_, Some(node), _) if !present.contains(node.as_str()) => {
                    Some((key.clone(), "(node no longer monitored)"))
                }
                (_, Some(node), Some(channel)) if channel_gone(node, channel) => {
                    Some((key.clone(), "(channel no longer configured)"))
                }
                _ => None,
            })
            .collect();
        for (key, why) in gone {
            if let Some(alert) = self.trackers.remove(&key).and_then(|mut t| t.take()) {
                self.log.cleared(&alert, at, why);
            }
        }
    }

    fn view(&self) -> AlertsView {
        let mut active: Vec<_> = self
            .trackers
            .values()
            .filter_map(Tracker::active)
            .cloned()
            .collect();
        active.sort_by(|a, b| {
            (
                a.severity != Severity::Critical,
                a.since,
                a.kind,
                &a.node,
                &a.channel,
            )
                .cmp(&(
                    b.severity != Severity::Critical,
                    b.since,
                    b.kind,
                    &b.node,
                    &b.channel,
                ))
        });
        AlertsView {
            active,
            incidents: Vec::new(),
            log: self.log.newest_first(),
        }
    }
}

/// Whether a sample clock counts a sample at `now`, and the instant to count the next from.
/// Snapshots arrive every 250 ms or so, never exactly on the interval: stepping from the last
/// count rather than from `now` keeps the rate at one per interval instead of drifting below
/// it, and a long gap restarts from `now` rather than paying out a burst of samples.
fn tick(last: Option<Duration>, now: Duration, every: Duration) -> Option<Duration> {
    let Some(last) = last else {
        return Some(now);
    };
    let gap = now.saturating_sub(last);
    if gap < every {
        None
    } else if gap < every * 2 {
        Some(last + every)
    } else {
        Some(now)
    }
}

#[cfg(test)]
mod tests;
