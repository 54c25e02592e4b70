//! Semi-sync rules on a node whose source side is loaded: it fell back to async (a state the
//! server states, raised on its first sample), fewer semi-sync replicas connected than a commit
//! needs ACKs from, and commits that went out without an ACK since the last poll (readings,
//! raised after the configured run). A node with semi-sync off or not loaded is clean; one whose
//! figures are unknown is not judged.

use super::verdict::{Verdict, fact};
use crate::store::NodeView;
use crate::store::semisync::{SemiSyncState, SemiSyncView};
use crate::units;

/// How many ACKs a commit needs, as the alerts say it.
fn required(s: &SemiSyncView) -> String {
    match s.required_acks {
        Some(n) => n.to_string(),
        None => "?".to_owned(),
    }
}

fn known(n: Option<u64>) -> String {
    n.map_or_else(|| "unknown".to_owned(), |n| n.to_string())
}

fn timeout(s: &SemiSyncView) -> String {
    s.timeout
        .map_or_else(|| "unknown".to_owned(), units::duration)
}

/// The primary is semi-sync by configuration and asynchronous in fact.
pub fn fell_back(node: &NodeView) -> Verdict {
    let Some(s) = &node.semisync() else {
        return Verdict::Clean;
    };
    match s.state {
        Some(SemiSyncState::FellBack) => {}
        Some(SemiSyncState::Unknown) => return Verdict::Unknown,
        _ => return Verdict::Clean,
    }
    let mut evidence = vec![
        fact("enabled", "ON"),
        fact("status", "OFF"),
        fact("acking_replicas", known(s.clients)),
        fact("required_acks", required(s)),
        fact("timeout", timeout(s)),
    ];
    if let Some(total) = s.totals.no_tx {
        evidence.push(fact("commits_without_ack_total", total.to_string()));
    }
    let cause = format!(
        "{}: semi-sync fell back to asynchronous replication (enabled, status OFF; {} of {} \
         required semi-sync replicas connected): commits are not acknowledged by any replica and \
         a crash of {} now loses them. Fix: start replication on a replica with \
         rpl_semi_sync_slave_enabled=ON (START SLAVE); the primary turns semi-sync back on once \
         that replica has caught up",
        node.name,
        known(s.clients),
        required(s),
        node.name
    );
    Verdict::stated(evidence, cause)
}

/// Fewer semi-sync replicas connected than a commit needs ACKs from.
pub fn acks_short(node: &NodeView) -> Verdict {
    let Some(s) = node.semisync().filter(|s| s.source_enabled()) else {
        return Verdict::Clean;
    };
    let (Some(clients), Some(needed)) = (s.clients, s.required_acks) else {
        return Verdict::Unknown;
    };
    if clients >= needed {
        return Verdict::Clean;
    }
    let evidence = vec![
        fact("acking_replicas", clients.to_string()),
        fact("required_acks", needed.to_string()),
        fact(
            "status",
            if s.state == Some(SemiSyncState::Active) {
                "ON"
            } else {
                "OFF"
            },
        ),
        fact("timeout", timeout(s)),
    ];
    let cause = format!(
        "{}: {clients} semi-sync replica(s) connected, {needed} required: each commit waits up \
         to the {} timeout for an ACK that cannot come, then the primary falls back to async. \
         Fix: start the IO thread of a replica with rpl_semi_sync_slave_enabled=ON, or lower the \
         ACK count the primary waits for",
        node.name,
        timeout(s)
    );
    Verdict::bad(evidence, cause)
}

/// Commits without an ACK since the last poll.
pub fn unacked_commits(node: &NodeView) -> Verdict {
    let Some(s) = node.semisync().filter(|s| s.source_enabled()) else {
        return Verdict::Clean;
    };
    let Some(interval) = s.interval else {
        return Verdict::Unknown;
    };
    let Some(n) = interval.no_ack_commits else {
        return Verdict::Unknown;
    };
    if n == 0 {
        return Verdict::Clean;
    }
    let rate = interval
        .no_ack_per_s()
        .map_or_else(|| "?".to_owned(), units::per_second);
    let mut evidence = vec![
        fact("commits_without_ack", n.to_string()),
        fact("rate", rate.clone()),
        fact("over", units::duration(interval.span)),
    ];
    if let Some(f) = interval.fallbacks.filter(|f| *f > 0) {
        evidence.push(fact("fallbacks", f.to_string()));
    }
    let cause = format!(
        "{}: {n} commit(s) in the last {} got no replica's ACK ({rate}): a crash of {} now \
         would lose them. Fix: keep a semi-sync replica connected and replicating; if the acks time \
         out under load, look at the replicas' network and IO (the ACK wait P99)",
        node.name,
        units::duration(interval.span),
        node.name
    );
    Verdict::bad(evidence, cause)
}
