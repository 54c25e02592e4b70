//! Incidents: the active alerts grouped by root cause, so one fault reads as one problem.
//!
//! Each alert either heads an incident (it is a cause) or folds under another alert's, in one
//! of two ways (`docs/incidents.md` has the rules with examples):
//!
//! * **At the same place.** On one node and channel, a stopped node outranks a stopped IO
//!   thread, which outranks a stopped SQL thread, a replication error, a DDL in flight, and the
//!   lag symptoms (`sbm_understates_lag`, `replica_not_recovering`, `gtid_backlog_high`,
//!   `lag_p99_high`, `sbm_overstates_lag`, in that order). The best-ranked alert there heads
//!   the others (a node's down and DDL alerts hold for all its channels).
//! * **Inherited from upstream.** A lag symptom on a replica whose source (or its source, up
//!   the chain) has an alert of rank up to the lag symptoms folds under that alert's incident
//!   when the replica's own share of the lag is small: it is behind because its source is. So
//!   does an IO thread that cannot connect to a source that does not answer. The stale
//!   heartbeat folds under its writer's node being down.
//!
//! Everything else (errant transactions, clock skew, a changed topology, a writable replica,
//! all replicas lagging) heads an incident of its own. A primary's semi-sync alerts head their
//! own incident too, one for all three: the fall-back heads the shortage of acking replicas,
//! and either heads the commits without an ACK.
//!
//! A folded alert keeps its kind and evidence but is shown as a warning: the incident carries
//! the highest severity of its members that are not recovering, so one fault pages once. A
//! folded lag symptom's cause is rewritten to name the root ("c1: behind because r1 stopped
//! receiving"): the rule that raised it judged the replica alone, and its text would blame the
//! wrong thing.
//!
//! A lag symptom whose replica is back under its rule's limit now is an after-effect: a
//! `lag_p99_high` that the minute's spike keeps up, or an alert waiting out its clean polls
//! before it clears. It is marked recovering, and an incident made only of such alerts is a
//! recovering one.

use std::collections::HashMap;
use std::time::Duration;

use super::{Alert, AlertKind, AlertSettings, Incident, Severity};
use crate::mysql::IoRunning;
use crate::store::alert_view::Membership;
use crate::store::{NodeView, ReplicaView, Snapshot};
use crate::units;

/// How an alert heads others at its own place: lower heads higher. `None`: it never folds
/// there and heads nothing.
fn rank(kind: AlertKind) -> Option<u8> {
    Some(match kind {
        AlertKind::NodeDown => 0,
        AlertKind::IoThreadStopped => 1,
        AlertKind::SqlThreadStopped => 2,
        AlertKind::ReplicationError => 3,
        AlertKind::DdlInFlight => 4,
        AlertKind::SbmUnderstatesLag => 5,
        AlertKind::ReplicaNotRecovering => 6,
        AlertKind::GtidBacklogHigh => 7,
        AlertKind::LagP99High => 8,
        AlertKind::SbmOverstatesLag => 9,
        _ => return None,
    })
}

/// A symptom of lag: what a replica shows when it is behind, whatever the reason.
fn is_lag_symptom(kind: AlertKind) -> bool {
    rank(kind).is_some_and(|r| r >= 5)
}

/// Holds for every channel of its node.
fn node_wide(kind: AlertKind) -> bool {
    matches!(kind, AlertKind::NodeDown | AlertKind::DdlInFlight)
}

/// Stops a replica's data from moving on: what is downstream of it cannot be newer.
fn blocks_data(kind: AlertKind) -> bool {
    matches!(
        kind,
        AlertKind::NodeDown
            | AlertKind::IoThreadStopped
            | AlertKind::SqlThreadStopped
            | AlertKind::ReplicationError
            | AlertKind::DdlInFlight
    )
}

/// The alert one folds under, and whether it came from upstream.
#[derive(Clone, Copy)]
struct Link {
    to: usize,
    inherited: bool,
}

struct Folder<'a> {
    snapshot: &'a Snapshot,
    settings: &'a AlertSettings,
    alerts: &'a [Alert],
    by_node: HashMap<&'a str, &'a NodeView>,
}

/// Groups `alerts` into incidents: sets every alert's [`Membership`] (and lowers a folded one to
/// a warning, rewriting a folded lag symptom's cause), and returns the incidents, active before
/// recovering, critical first, then oldest first.
pub fn fold(snapshot: &Snapshot, settings: &AlertSettings, alerts: &mut [Alert]) -> Vec<Incident> {
    let recovering: Vec<Option<Duration>> = alerts
        .iter()
        .map(|a| recovered(snapshot, settings, a))
        .collect();
    let roots: Vec<(usize, bool)> = {
        let folder = Folder {
            snapshot,
            settings,
            alerts,
            by_node: snapshot
                .nodes
                .iter()
                .map(|n| (n.name.as_str(), n))
                .collect(),
        };
        let links: Vec<Option<Link>> = (0..alerts.len()).map(|i| folder.link(i)).collect();
        (0..alerts.len()).map(|i| root_of(&links, i)).collect()
    };
    let keys: Vec<String> = alerts.iter().map(Alert::key).collect();
    let heads: Vec<Alert> = alerts.to_vec();
    let texts: Vec<String> = alerts.iter().map(|a| phrase(a, snapshot)).collect();
    for (i, alert) in alerts.iter_mut().enumerate() {
        let (root, inherited) = roots[i];
        alert.membership = Membership {
            incident: keys[root].clone(),
            caused_by: (root != i).then(|| keys[root].clone()),
            inherited,
            recovering: recovering[i].is_some(),
        };
        if let Some(now) = recovering[i] {
            alert.severity = Severity::Warning;
            if root == i {
                clearing(alert, now, settings);
            }
        }
        if root == i {
            continue;
        }
        alert.severity = Severity::Warning;
        let own = own_share(snapshot, alert);
        if let Some(cause) = folded_cause(alert, &heads[root], &texts[root], own) {
            alert.cause = cause;
            alert
                .evidence
                .push(("caused_by".to_owned(), keys[root].clone()));
        }
    }
    incidents(alerts, &roots, &texts)
}

impl Folder<'_> {
    fn link(&self, i: usize) -> Option<Link> {
        let a = &self.alerts[i];
        if a.kind == AlertKind::HeartbeatStale {
            let writer = a
                .node
                .as_deref()
                .or(self.snapshot.heartbeat.node.as_deref())?;
            return self
                .find(writer, None, |k| k == AlertKind::NodeDown)
                .map(|to| Link {
                    to,
                    inherited: false,
                });
        }
        let node = a.node.as_deref()?;
        if let Some(to) = self.semisync_head(i, node) {
            return Some(Link {
                to,
                inherited: false,
            });
        }
        let mine = rank(a.kind)?;
        if let Some(to) = self.best_at(node, a.channel.as_deref(), |r| r < mine) {
            return Some(Link {
                to,
                inherited: false,
            });
        }
        let channel = self.channel_of(a)?;
        let connecting =
            a.kind == AlertKind::IoThreadStopped && channel.io_running == IoRunning::Connecting;
        if !is_lag_symptom(a.kind) && !connecting {
            return None;
        }
        // Up the chain of sources, nearest first; a cycle (circular replication) ends the walk.
        let mut seen = vec![node];
        let mut upstream = channel.source.as_deref();
        while let Some(up) = upstream {
            if seen.contains(&up) {
                return None;
            }
            seen.push(up);
            let source = self.by_node.get(up).copied()?;
            if connecting {
                return self
                    .find(up, None, |k| k == AlertKind::NodeDown)
                    .map(|to| Link {
                        to,
                        inherited: true,
                    });
            }
            if let Some(to) = self.best_at(up, None, |r| r <= 9)
                && self.behind_because_of(channel, source, &self.alerts[to], seen.len() == 2)
            {
                return Some(Link {
                    to,
                    inherited: true,
                });
            }
            upstream = source.replica().and_then(|r| r.source.as_deref());
        }
        None
    }

    /// A primary's semi-sync alerts form one incident, headed by the fall-back when it is
    /// raised (it explains both the missing ACKs and the commits without one), else by the
    /// shortage of acking replicas (which explains the commits without one).
    fn semisync_head(&self, i: usize, node: &str) -> Option<usize> {
        let heads: &[AlertKind] = match self.alerts[i].kind {
            AlertKind::SemisyncAcksShort => &[AlertKind::SemisyncFellBack],
            AlertKind::SemisyncUnackedCommits => {
                &[AlertKind::SemisyncFellBack, AlertKind::SemisyncAcksShort]
            }
            _ => return None,
        };
        heads
            .iter()
            .find_map(|head| self.find(node, None, |k| k == *head))
    }

    /// The best-ranked alert at `node` (on `channel`, or node-wide; any channel when `channel`
    /// is `None`) whose rank passes `keep`.
    fn best_at(
        &self,
        node: &str,
        channel: Option<&str>,
        keep: impl Fn(u8) -> bool,
    ) -> Option<usize> {
        self.alerts
            .iter()
            .enumerate()
            .filter(|(_, b)| b.node.as_deref() == Some(node))
            .filter(|(_, b)| {
                channel.is_none() || node_wide(b.kind) || b.channel.as_deref() == channel
            })
            .filter_map(|(j, b)| Some((rank(b.kind)?, b.since, j)))
            .filter(|(r, _, _)| keep(*r))
            .min()
            .map(|(_, _, j)| j)
    }

    fn find(
        &self,
        node: &str,
        channel: Option<&str>,
        kind: impl Fn(AlertKind) -> bool,
    ) -> Option<usize> {
        self.alerts.iter().position(|b| {
            b.node.as_deref() == Some(node)
                && kind(b.kind)
                && (channel.is_none() || b.channel.as_deref() == channel)
        })
    }

    fn channel_of(&self, a: &Alert) -> Option<&ReplicaView> {
        let node = self.by_node.get(a.node.as_deref()?)?;
        node.channel(a.channel.as_deref().unwrap_or(""))
            .or_else(|| node.replica())
    }

    /// Whether `replica` is behind only because `source` is, where `root` is the source's
    /// alert: its own share of the lag (its hop, or its lag less the source's further up) is
    /// within the routing threshold. A source whose data stopped moving explains a share that
    /// cannot be told, and a lag no older than the stop: once the source moves again it
    /// catches up first, and for a moment the replica's whole lag reads as its own share,
    /// though it misses only work the source could not pass on while stopped.
    fn behind_because_of(
        &self,
        replica: &ReplicaView,
        source: &NodeView,
        root: &Alert,
        direct: bool,
    ) -> bool {
        let share = if direct {
            replica.hop_lag
        } else {
            let mine = replica.heartbeat_lag.value();
            let theirs = source.lag().and_then(|l| l.value());
            mine.zip(theirs).map(|(m, t)| m.saturating_sub(t))
        };
        let margin = self.settings.routing_max_lag_seconds.max(1.0);
        let blocked = blocks_data(root.kind);
        match share {
            Some(share) if share.as_secs_f64() <= margin => true,
            Some(_) => blocked && self.since_the_stop(replica, root, margin),
            None => blocked,
        }
    }

    /// Whether `replica`'s lag began no earlier than `root`'s fault: it is no longer than the
    /// alert's age plus the time the alert took to be raised (polls until it was) and `margin`.
    fn since_the_stop(&self, replica: &ReplicaView, root: &Alert, margin: f64) -> bool {
        let Some(lag) = replica.heartbeat_lag.value() else {
            return false;
        };
        let age = (self.snapshot.taken_at - root.since)
            .to_std()
            .unwrap_or_default();
        let raising = self.settings.poll_interval * (self.settings.raise_after + 1);
        lag.as_secs_f64() <= (age + raising).as_secs_f64() + margin
    }
}

/// The incident's root for alert `i` and whether the way there came from upstream. Links that
/// run in a circle (circular replication, each side lagging) make the circle's first alert
/// the root, the same one from wherever the walk enters it.
fn root_of(links: &[Option<Link>], i: usize) -> (usize, bool) {
    let mut path = vec![i];
    let mut inherited = false;
    let mut at = i;
    while let Some(link) = links[at] {
        if let Some(pos) = path.iter().position(|&p| p == link.to) {
            let root = path[pos..].iter().copied().min().unwrap_or(i);
            return (root, root != i && inherited);
        }
        inherited |= link.inherited;
        at = link.to;
        path.push(at);
    }
    (at, inherited)
}

/// The lag now of a lag symptom that is only an after-effect: its replica is back within the
/// rule's limit (`lag_p99_high`, `replica_not_recovering` beyond the delay,
/// `sbm_understates_lag` within its margin), and the alert stays only for the minute's memory
/// of the spike or the clean polls it waits for before clearing.
fn recovered(snapshot: &Snapshot, settings: &AlertSettings, a: &Alert) -> Option<Duration> {
    let r = snapshot
        .node(a.node.as_deref()?)?
        .channel(a.channel.as_deref().unwrap_or(""))?;
    // Each rule's own limit, judged as that rule judges the lag: under it the rule reads clean
    // now, and only the minute or the clean polls before clearing keep the alert up.
    let (now, limit) = match a.kind {
        AlertKind::LagP99High => (now_beyond_delay(r), settings.lag_p99_seconds),
        AlertKind::ReplicaNotRecovering => (now_beyond_delay(r), settings.routing_max_lag_seconds),
        AlertKind::SbmUnderstatesLag => (
            r.heartbeat_lag.value(),
            super::sbm::understate_margin(settings),
        ),
        _ => return None,
    };
    now.filter(|now| now.as_secs_f64() <= limit)
}

/// Says of a recovering alert at its own place that it is clearing: the rule's text was true
/// when it was raised, and the lag now tells why it is no longer (a recovering alert pages no
/// more: it is a warning, wherever it is). `lag_p99_high`'s rule says it itself, the minute
/// being what keeps it.
fn clearing(alert: &mut Alert, now: Duration, settings: &AlertSettings) {
    if alert.kind == AlertKind::LagP99High {
        return;
    }
    let polls = settings.clean_samples_to_clear(alert.kind);
    alert.cause = format!(
        "{}; caught up again at {} now: this clears after {polls} clean polls (recovering)",
        alert.cause,
        units::lag(now)
    );
    alert.evidence.push(("lag_now".to_owned(), units::lag(now)));
}

/// The channel's lag now, less its configured delay.
#[must_use]
pub fn now_beyond_delay(r: &ReplicaView) -> Option<Duration> {
    let delay = Duration::from_secs(r.sql_delay.unwrap_or(0));
    r.heartbeat_lag.value().map(|l| l.saturating_sub(delay))
}

/// The replica's own share of the lag, for an inherited alert's text.
fn own_share(snapshot: &Snapshot, a: &Alert) -> Option<Duration> {
    let node = snapshot.node(a.node.as_deref()?)?;
    node.channel(a.channel.as_deref().unwrap_or(""))?.hop_lag
}

/// What the root did, as the end of "behind because …".
fn phrase(a: &Alert, snapshot: &Snapshot) -> String {
    let place = a.place().unwrap_or_else(|| "the topology".to_owned());
    let node = a.node.as_deref().unwrap_or("");
    let channel = || {
        snapshot
            .node(node)
            .and_then(|n| n.channel(a.channel.as_deref().unwrap_or("")))
    };
    match a.kind {
        AlertKind::NodeDown => format!("{node} does not answer"),
        AlertKind::IoThreadStopped
            if channel().is_some_and(|r| r.io_running == IoRunning::Connecting) =>
        {
            format!("{place} cannot connect to its source")
        }
        AlertKind::IoThreadStopped => format!("{place} stopped receiving"),
        AlertKind::SqlThreadStopped => format!("{place} stopped applying"),
        AlertKind::ReplicationError => format!("{place}'s replication stopped on an error"),
        AlertKind::DdlInFlight => format!("{node} is in a schema change"),
        AlertKind::HeartbeatStale => "the heartbeat writer stopped".to_owned(),
        AlertKind::SemisyncFellBack => format!("{node}'s semi-sync fell back to async"),
        AlertKind::SemisyncAcksShort => format!("{node} has fewer acking replicas than required"),
        AlertKind::SemisyncUnackedCommits => format!("{node} commits without a replica's ACK"),
        AlertKind::GaleraNotPrimary => format!("{node} is out of the cluster's primary component"),
        AlertKind::GaleraNotSynced => format!("{node} is not synced with its cluster"),
        AlertKind::GaleraFlowControl => format!("{node}'s backlog pauses the cluster's writes"),
        kind if is_lag_symptom(kind) => format!("{place} is behind its source"),
        _ => format!("{} on {place}", a.kind.name()),
    }
}

/// The text a folded alert shows instead of its rule's, or `None` to keep the rule's. A rule
/// judged its replica alone: downstream of a fault its text would blame the replica (an
/// inherited lag symptom is always rewritten), and at the fault's own place a throughput
/// phrase ("cannot keep up") is wrong when the data stopped moving (`lag_p99_high` and
/// `gtid_backlog_high` under a stopped thread, an error, a DDL or a node down are rewritten).
/// A stopped thread's, an error's or `replica_not_recovering`'s own text is true whatever
/// else is wrong, and so is a lag symptom's under another lag symptom at its place.
fn folded_cause(
    a: &Alert,
    root: &Alert,
    root_phrase: &str,
    own: Option<Duration>,
) -> Option<String> {
    let place = a.place().unwrap_or_default();
    let inherited = a.membership.inherited;
    if a.kind == AlertKind::IoThreadStopped && inherited {
        return Some(format!(
            "{place}: cannot reach its source because {root_phrase}"
        ));
    }
    let throughput = matches!(a.kind, AlertKind::LagP99High | AlertKind::GtidBacklogHigh);
    if !(is_lag_symptom(a.kind) && inherited || throughput && blocks_data(root.kind)) {
        return None;
    }
    let because = if inherited {
        format!("because {root_phrase}")
    } else {
        let root_place = root.place().unwrap_or_default();
        let own_place = root_phrase
            .replacen(&format!("{root_place}'s"), "its", 1)
            .replacen(&root_place, "it", 1);
        format!("because {own_place}")
    };
    let mut what = match a.kind {
        AlertKind::SbmUnderstatesLag => "SBM counts only what arrived",
        AlertKind::SbmOverstatesLag => "SBM reads more than the heartbeat",
        AlertKind::GtidBacklogHigh => "transactions wait",
        AlertKind::ReplicaNotRecovering => "the lag does not shrink",
        _ => "lag high",
    }
    .to_owned();
    // A delayed replica's lag rule judged the lag beyond its delay: the text keeps saying so.
    if let Some((_, delay)) = a.evidence.iter().find(|(k, _)| k == "sql_delay") {
        what = format!("{what} beyond the {delay} SQL_Delay");
    }
    let mut cause = if a.membership.recovering {
        format!("{place}: caught up again; the lag spiked {because}")
    } else {
        format!("{place}: behind {because} ({what})")
    };
    if inherited && let Some(own) = own {
        cause = format!("{cause}; its own hop adds {}", units::lag(own));
    }
    Some(cause)
}

fn incidents(alerts: &[Alert], roots: &[(usize, bool)], texts: &[String]) -> Vec<Incident> {
    let mut out: Vec<Incident> = Vec::new();
    for (root, _) in roots.iter().enumerate().filter(|(i, (r, _))| i == r) {
        let head = &alerts[root];
        let members: Vec<usize> = std::iter::once(root)
            .chain((0..alerts.len()).filter(|&i| i != root && roots[i].0 == root))
            .collect();
        let severity = if members.iter().any(|&i| {
            alerts[i].kind.severity() == Severity::Critical && !alerts[i].membership.recovering
        }) {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let downstream: Vec<String> = members
            .iter()
            .filter(|&&i| roots[i].1)
            .filter_map(|&i| alerts[i].place())
            .fold(Vec::new(), |mut acc, p| {
                if !acc.contains(&p) {
                    acc.push(p);
                }
                acc
            });
        let mut summary = texts[root].clone();
        if !downstream.is_empty() {
            summary = format!("{summary}; behind because of it: {}", downstream.join(", "));
        }
        out.push(Incident {
            id: head.key(),
            kind: head.kind,
            node: head.node.clone(),
            channel: head.channel.clone(),
            severity,
            recovering: members.iter().all(|&i| alerts[i].membership.recovering),
            since: head.since,
            summary,
            alerts: members.iter().map(|&i| alerts[i].key()).collect(),
        });
    }
    out.sort_by(|a, b| {
        (
            a.recovering,
            a.severity != Severity::Critical,
            a.since,
            &a.id,
        )
            .cmp(&(
                b.recovering,
                b.severity != Severity::Critical,
                b.since,
                &b.id,
            ))
    });
    out
}

#[cfg(test)]
mod tests;
