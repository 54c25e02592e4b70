//! Failover exposure, standing: for every root, what each replica under it would lose if the
//! root died now, how long its relay log takes to apply, and which replica to promote
//! (`docs/failover-exposure.md`). A pure function of a snapshot with its alerts judged (the
//! errant transactions come from the `errant_transactions` alert), run by the engine on every
//! snapshot it publishes.
//!
//! The same rule runs after the root stops answering: its last sample is the reference, and
//! the replicas, which have nothing more to receive, are compared with it and with each other.

use std::collections::HashMap;
use std::time::Duration;

use crate::store::alert_view::AlertKind;
use crate::store::exposure::{Candidate, ClusterExposure, Held, ReplicaExposure};
use crate::store::{NodeView, ReplicaView, Role, Snapshot};
use crate::units;

/// Every root's exposure, in the snapshot's order; roots with no replica are left out.
#[must_use]
pub fn judge(snapshot: &Snapshot) -> Vec<ClusterExposure> {
    let by_name: HashMap<&str, &NodeView> = snapshot
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n))
        .collect();
    snapshot
        .nodes
        .iter()
        .filter(|n| n.role == Role::Primary)
        .filter_map(|root| cluster(snapshot, &by_name, root))
        .collect()
}

/// A replica under the root and its channel that leads there.
struct Member<'a> {
    node: &'a NodeView,
    channel: &'a ReplicaView,
    /// Its channel replicates from the root itself (not through a cascade).
    direct: bool,
}

fn cluster(
    snapshot: &Snapshot,
    by_name: &HashMap<&str, &NodeView>,
    root: &NodeView,
) -> Option<ClusterExposure> {
    let members: Vec<Member<'_>> = snapshot
        .nodes
        .iter()
        .filter(|n| n.name != root.name)
        .filter_map(|node| {
            node.channels.iter().find_map(|channel| {
                let source = channel.source.as_deref()?;
                leads_to(by_name, source, &root.name).then_some(Member {
                    node,
                    channel,
                    direct: source == root.name,
                })
            })
        })
        .collect();
    if members.is_empty() {
        return None;
    }
    let root_held = root.last_gtid.as_ref().map(Held::of_node);
    let root_answers = root.answers();
    let mut replicas: Vec<ReplicaExposure> = members
        .iter()
        .map(|m| row(snapshot, root, root_held.as_ref(), m, members.len()))
        .collect();
    let candidate = choose(&replicas, &members, root_answers, root_held.as_ref());
    if let Some(chosen) = &candidate {
        // The candidate's row says nothing more; the others keep their reasons.
        for r in &mut replicas {
            if r.node == chosen.node {
                r.excluded = None;
            }
        }
    }
    Some(ClusterExposure {
        root: root.name.clone(),
        root_answers,
        root_sample_age: root.sample_age,
        replicas,
        candidate,
        commit_path: commit_path(root),
    })
}

/// What the root's semi-sync state says of what a crash loses: while it is active a client is
/// told of a commit only once a replica acknowledged receiving it, so what no replica received
/// is at most the commits still waiting for that; once it fell back, commits go out unprotected.
fn commit_path(root: &NodeView) -> Option<String> {
    use crate::store::semisync::SemiSyncState;
    let semisync = root.semisync()?;
    match semisync.state? {
        SemiSyncState::Active => Some(format!(
            "semi-sync active: a commit returns to its client only once a replica received it, \
             so what no replica received is at most the {} commit(s) waiting for an ACK",
            semisync
                .wait_sessions
                .map_or_else(|| "?".to_owned(), |n| n.to_string())
        )),
        SemiSyncState::FellBack => Some(
            "semi-sync FELL BACK to async: commits since then returned to their clients before \
             any replica had them, and are lost with the primary until one receives them"
                .to_owned(),
        ),
        SemiSyncState::Off | SemiSyncState::Unknown => None,
    }
}

/// Whether following `from`'s first channel upward reaches `root` (a cascade), stopping at a
/// loop.
fn leads_to(by_name: &HashMap<&str, &NodeView>, from: &str, root: &str) -> bool {
    let mut at = from;
    let mut seen = Vec::new();
    loop {
        if at == root {
            return true;
        }
        if seen.contains(&at) {
            return false;
        }
        seen.push(at);
        let Some(next) = by_name
            .get(at)
            .and_then(|n| n.replica())
            .and_then(|c| c.source.as_deref())
        else {
            return false;
        };
        at = next;
    }
}

fn row(
    snapshot: &Snapshot,
    root: &NodeView,
    root_held: Option<&Held>,
    m: &Member<'_>,
    members: usize,
) -> ReplicaExposure {
    let (node, channel) = (m.node, m.channel);
    let answers = node.answers();
    // A direct replica's count was taken against the root's state from before its own status
    // (`store/backlog.rs`); a cascaded one is compared with the root's newest state.
    let not_received = if !answers {
        None
    } else if m.direct {
        channel.gtid_backlog.not_received
    } else {
        channel
            .received_gtid
            .as_ref()
            .zip(root_held)
            .and_then(|(mine, root)| mine.lacks(root))
    };
    let relay_trx = channel.gtid_backlog.not_applied.filter(|_| answers);
    let rate = channel.catch_up.apply_trx_per_s.filter(|_| answers);
    let (drain, drain_unknown) = drain(relay_trx, channel.sql_running, rate);
    let errant = snapshot
        .alerts
        .active
        .iter()
        .find(|a| a.kind == AlertKind::ErrantTransactions && a.node.as_deref() == Some(&node.name))
        .and_then(|a| a.evidence.iter().find(|(k, _)| k == "errant_gtids"))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let settings = node.settings();
    let mut out = ReplicaExposure {
        node: node.name.clone(),
        channel: channel.channel.clone(),
        source: channel.source.clone(),
        not_received,
        relay_trx,
        relay_bytes: channel.bytes_behind.sql.filter(|_| answers),
        apply_trx_per_s: rate,
        drain,
        drain_unknown,
        errant,
        log_replica_updates: settings.and_then(|s| s.log_replica_updates),
        sql_delay: channel.sql_delay.filter(|_| answers),
        excluded: None,
    };
    let updates_name = settings.map_or("log_slave_updates", |s| {
        if s.names.log_replica_updates.is_empty() {
            "log_slave_updates"
        } else {
            s.names.log_replica_updates.as_str()
        }
    });
    out.excluded = exclusion(root, m, &out, members, updates_name);
    out
}

/// The relay log's drain time at the measured apply rate, or why it cannot be told.
fn drain(
    relay: Option<u64>,
    sql_running: bool,
    rate: Option<f64>,
) -> (Option<Duration>, Option<String>) {
    match (relay, rate) {
        (None, _) => (None, Some("relay log unknown".to_owned())),
        (Some(0), _) => (Some(Duration::ZERO), None),
        (Some(_), _) if !sql_running => (
            None,
            Some("the SQL thread is stopped: nothing drains".to_owned()),
        ),
        #[expect(clippy::cast_precision_loss, reason = "a count of transactions")]
        (Some(n), Some(rate)) if rate > 0.0 => {
            (Duration::try_from_secs_f64(n as f64 / rate).ok(), None)
        }
        (Some(_), _) => (None, Some("no apply rate measured yet".to_owned())),
    }
}

/// Why a replica cannot be promoted, the first reason that holds.
fn exclusion(
    root: &NodeView,
    m: &Member<'_>,
    row: &ReplicaExposure,
    members: usize,
    updates_name: &str,
) -> Option<String> {
    let (node, channel) = (m.node, m.channel);
    if !node.answers() {
        return Some(format!("not answering ({})", node.conn.name()));
    }
    if !m.direct {
        let via = channel.source.as_deref().unwrap_or("?");
        return Some(format!(
            "replicates from {via}, not from {}: cascaded",
            root.name
        ));
    }
    if let Some(delay) = row.sql_delay.filter(|d| *d > 0) {
        return Some(format!(
            "delayed replica (SQL_Delay {}): behind on purpose",
            units::secs(delay)
        ));
    }
    if !row.errant.is_empty() {
        return Some(format!(
            "errant GTIDs {}: its new replicas would fetch or miss them",
            row.errant
        ));
    }
    if root.answers()
        && channel.io_running != crate::mysql::IoRunning::Yes
        && let Some(error) = &channel.last_io_error
    {
        return Some(format!("IO thread broken: {}", error.message));
    }
    if !channel.sql_running
        && let Some(error) = &channel.last_sql_error
    {
        return Some(format!(
            "SQL thread stopped on error {}: its relay log would never apply",
            error.errno
        ));
    }
    if let (Some(mine), Some(theirs)) = (major(node), major(root))
        && mine != theirs
    {
        return Some(format!("runs {mine}, the primary {theirs}"));
    }
    if members > 1 && row.log_replica_updates == Some(false) {
        return Some(format!(
            "{updates_name} is OFF: the other replicas could not replicate from it"
        ));
    }
    if row.not_received.is_none() {
        return Some("cannot tell what it lacks (GTID positions unknown)".to_owned());
    }
    None
}

/// `MariaDB 10.11` from `MariaDB 10.11.19`: the family and major version of a node.
fn major(node: &NodeView) -> Option<String> {
    node.identity
        .flavor
        .as_ref()
        .map(crate::mysql::Flavor::series)
}

/// The qualifying replica that lacks least, then has least to apply, then drains soonest.
fn choose(
    rows: &[ReplicaExposure],
    members: &[Member<'_>],
    root_answers: bool,
    root_held: Option<&Held>,
) -> Option<Candidate> {
    let mut ranked: Vec<&ReplicaExposure> = rows.iter().filter(|r| r.excluded.is_none()).collect();
    let key = |r: &ReplicaExposure| {
        (
            r.not_received.unwrap_or(u64::MAX),
            r.relay_trx.unwrap_or(u64::MAX),
            r.drain.unwrap_or(Duration::MAX),
        )
    };
    ranked.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.node.cmp(&b.node)));
    let best = *ranked.first()?;
    let reason = match ranked.get(1) {
        None => "the only replica that qualifies".to_owned(),
        Some(next) => versus(best, next),
    };
    let loses = if root_answers {
        best.not_received
    } else {
        after_crash_loss(best, rows, members, root_held).or(best.not_received)
    };
    Some(Candidate {
        node: best.node.clone(),
        loses,
        reason,
    })
}

/// Why `best` ranks above `next`, on the first figure that tells them apart.
fn versus(best: &ReplicaExposure, next: &ReplicaExposure) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), units::count);
    if best.not_received != next.not_received {
        return format!(
            "lacks least: {} trx against {} on {}",
            count(best.not_received),
            count(next.not_received),
            next.node
        );
    }
    if best.relay_trx != next.relay_trx {
        return format!(
            "lacks as little as {} and has least to apply: {} trx against {}",
            next.node,
            count(best.relay_trx),
            count(next.relay_trx)
        );
    }
    if best.drain != next.drain {
        let eta = |d: Option<Duration>| d.map_or_else(|| "?".to_owned(), units::duration);
        return format!(
            "lacks and applies as little as {} and drains sooner: {} against {}",
            next.node,
            eta(best.drain),
            eta(next.drain)
        );
    }
    format!("tied with {} on every figure: first by name", next.node)
}

/// Once the root is gone nothing more arrives, so the replicas can be compared with each other
/// exactly: what the root last showed or any replica under it received, that `best` lacks.
fn after_crash_loss(
    best: &ReplicaExposure,
    rows: &[ReplicaExposure],
    members: &[Member<'_>],
    root_held: Option<&Held>,
) -> Option<u64> {
    let held = |name: &str| {
        members
            .iter()
            .find(|m| m.node.name == name && m.node.answers())
            .and_then(|m| m.channel.received_gtid.as_ref())
    };
    let mine = held(&best.node)?;
    let mut all = root_held.cloned();
    for other in rows.iter().filter(|r| r.node != best.node) {
        if let Some(theirs) = held(&other.node) {
            all = Some(match all {
                None => theirs.clone(),
                Some(all) => all.merged(theirs)?,
            });
        }
    }
    mine.lacks(&all?)
}

#[cfg(test)]
#[path = "exposure_tests.rs"]
mod tests;
