//! The node-scoped rules simple enough to sit together: replication threads and errors,
//! backlog, connection, clocks and read-only. What a rule returns and may read is in
//! `verdict.rs`; the lag percentile, SBM, errant, topology and DDL rules each have their own
//! file.

use super::verdict::{RuleInputs, Verdict, fact};
use super::{AlertKind, AlertSettings, format};
use crate::mysql::replica_status::ThreadError;
use crate::mysql::{IoRunning, own_tables};
use crate::poll::ConnState;
use crate::store::{NodeView, ReplicaView, Role};
use crate::units;

/// A verdict and the channel it is about (`None`: the node as a whole, or its default channel,
/// which stays unnamed).
pub type Scoped = (AlertKind, Option<String>, Verdict);

/// Every node-scoped rule's verdict on a new sample of `node`: the node's own rules once, the
/// replication rules once per channel. A node that does not answer is judged only on that: the
/// rest of its data is its last sample's, already judged.
pub fn node_verdicts(inputs: &RuleInputs<'_>, node: &NodeView) -> Vec<Scoped> {
    let mut out = vec![(AlertKind::NodeDown, None, node_down(node))];
    if node.conn != ConnState::Up {
        return out;
    }
    if node.channels.is_empty() {
        let unjudged = |kind| (kind, None, with_replica(node, |_| Verdict::Clean));
        out.push((AlertKind::IoThreadStopped, None, no_channel(node)));
        out.extend(CHANNEL_RULES.iter().skip(1).map(|kind| unjudged(*kind)));
    }
    for r in &node.channels {
        let scope = (!r.channel.is_empty()).then(|| r.channel.clone());
        for kind in CHANNEL_RULES {
            let verdict = channel_verdict(inputs, node, r, kind);
            out.push((kind, scope.clone(), named(verdict, scope.as_deref())));
        }
    }
    out.extend([
        (
            AlertKind::ErrantTransactions,
            None,
            super::errant::verdict(inputs, node),
        ),
        (AlertKind::ClockSkew, None, clock_skew(inputs, node)),
    ]);
    for (channel, verdict) in inputs.topology.source_verdicts(node) {
        let scope = (!channel.is_empty()).then_some(channel);
        let verdict = named(verdict, scope.as_deref());
        out.push((AlertKind::TopologyChanged, scope, verdict));
    }
    out.extend([
        (AlertKind::WritableReplica, None, writable_replica(node)),
        (
            AlertKind::DdlInFlight,
            None,
            super::ddl::verdict(inputs, node),
        ),
        (
            AlertKind::SemisyncFellBack,
            None,
            super::semisync::fell_back(node),
        ),
        (
            AlertKind::SemisyncAcksShort,
            None,
            super::semisync::acks_short(node),
        ),
        (
            AlertKind::SemisyncUnackedCommits,
            None,
            super::semisync::unacked_commits(node),
        ),
        (
            AlertKind::DiskFilling,
            None,
            super::disk::verdict(inputs, node),
        ),
        (
            AlertKind::GaleraNotPrimary,
            None,
            super::galera::not_primary(node),
        ),
        (
            AlertKind::GaleraNotSynced,
            None,
            super::galera::not_synced(node),
        ),
        (
            AlertKind::GaleraFlowControl,
            None,
            super::galera::flow_control(node),
        ),
    ]);
    out
}

/// The rules judged on each replication channel of a node.
const CHANNEL_RULES: [AlertKind; 8] = [
    AlertKind::IoThreadStopped,
    AlertKind::SqlThreadStopped,
    AlertKind::ReplicationError,
    AlertKind::SbmUnderstatesLag,
    AlertKind::SbmOverstatesLag,
    AlertKind::LagP99High,
    AlertKind::GtidBacklogHigh,
    AlertKind::ReplicaNotRecovering,
];

fn channel_verdict(
    inputs: &RuleInputs<'_>,
    node: &NodeView,
    r: &ReplicaView,
    kind: AlertKind,
) -> Verdict {
    match kind {
        AlertKind::IoThreadStopped => io_thread_stopped(r),
        AlertKind::SqlThreadStopped => sql_thread_stopped(r),
        AlertKind::ReplicationError => replication_error(r),
        AlertKind::SbmUnderstatesLag => super::sbm::understates(inputs, r),
        AlertKind::SbmOverstatesLag => super::sbm::overstates(inputs, node, r),
        AlertKind::LagP99High => super::lag::p99_high(inputs.settings, r),
        AlertKind::GtidBacklogHigh => gtid_backlog_high(inputs.settings, r),
        AlertKind::ReplicaNotRecovering => {
            super::not_recovering::verdict(inputs.settings, inputs.snapshot.uptime, r)
        }
        _ => Verdict::Unknown,
    }
}

/// A named channel's evidence starts with its name, so every output says which channel.
fn named(verdict: Verdict, channel: Option<&str>) -> Verdict {
    match (verdict, channel) {
        (Verdict::Bad(mut finding), Some(channel)) => {
            finding.evidence.insert(0, fact("channel", channel));
            Verdict::Bad(finding)
        }
        (verdict, _) => verdict,
    }
}

/// Runs a replica rule on the node's first channel; a primary is clean, a replica without
/// status data is not judged.
pub fn with_replica(node: &NodeView, rule: impl FnOnce(&ReplicaView) -> Verdict) -> Verdict {
    match node.replica() {
        Some(replica) => rule(replica),
        None if node.role == Role::Primary => Verdict::Clean,
        None => Verdict::Unknown,
    }
}

fn node_down(node: &NodeView) -> Verdict {
    match &node.conn {
        ConnState::Up => Verdict::Clean,
        ConnState::Down { next, cause } => {
            let mut evidence = vec![
                fact("conn", "down"),
                fact("error", format::quote(cause)),
                fact("next_retry", units::duration(*next)),
            ];
            if let Some(age) = node.sample_age {
                evidence.push(fact("last_sample_age", units::duration(age)));
            }
            let cause = format!("rwtop cannot poll {}: {}", node.name, format::quote(cause));
            // Down is already two failures in a row, or a poll silent past its interval.
            Verdict::stated(evidence, cause)
        }
        // Connecting or one failed poll: not down yet, and not known to be up.
        ConnState::Connecting | ConnState::Retrying { .. } => Verdict::Unknown,
    }
}

/// A replica by configuration that reports no replication channel at all.
fn no_channel(node: &NodeView) -> Verdict {
    if node.role == Role::Replica && node.sample_seq > 0 {
        let evidence = vec![fact("replica_status", "empty")];
        return Verdict::bad(
            evidence,
            "no replication configured (replica status is empty): RESET REPLICA ALL?",
        );
    }
    with_replica(node, |_| Verdict::Clean)
}

fn io_thread_stopped(r: &ReplicaView) -> Verdict {
    if r.io_running == IoRunning::Yes {
        return Verdict::Clean;
    }
    let mut evidence = vec![
        fact(
            "seconds_behind_source",
            format::sbm(r.seconds_behind_source),
        ),
        fact("heartbeat_lag", format::lag(&r.heartbeat_lag)),
        fact("io_running", format::io_running(r.io_running)),
    ];
    if !r.io_state.is_empty() {
        evidence.push(fact("io_state", r.io_state.clone()));
    }
    if let Some(e) = &r.last_io_error {
        evidence.push(fact("last_io_error", format::thread_error(e)));
    }
    let why = r
        .last_io_error
        .as_ref()
        .map(|e| format!(": error {}: {}", e.errno, format::quote(&e.message)))
        .unwrap_or_default();
    let cause = match r.io_running {
        IoRunning::Connecting => format!("IO thread cannot connect to the source{why}"),
        _ => format!("IO thread stopped: nothing new arrives from the source{why}"),
    };
    // `No` is the server's word that the thread is stopped (on an error, by hand or at an UNTIL
    // condition): a fact, raised at once. A thread caught reconnecting may be running again at
    // the next poll: that one can flicker.
    if r.io_running == IoRunning::No {
        return Verdict::stated(evidence, cause);
    }
    Verdict::bad(evidence, cause)
}

fn sql_thread_stopped(r: &ReplicaView) -> Verdict {
    if r.sql_running {
        return Verdict::Clean;
    }
    let mut evidence = vec![
        fact(
            "seconds_behind_source",
            format::sbm(r.seconds_behind_source),
        ),
        fact("sql_running", "No"),
        fact("heartbeat_lag", format::lag(&r.heartbeat_lag)),
    ];
    match &r.last_sql_error {
        // Stopped on an error: it stays stopped until someone repairs and starts it.
        Some(e) => {
            evidence.push(fact("last_sql_error", format::thread_error(e)));
            let cause = format!(
                "SQL thread stopped on error {}: {}",
                e.errno,
                format::quote(&e.message)
            );
            let cause = own_damage(cause, e, &mut evidence);
            Verdict::stated(evidence, cause)
        }
        // Stopped by hand: the server says so, a fact like an error (it may be started again
        // before the next poll, and the alert then clears).
        None => Verdict::stated(
            evidence,
            "SQL thread stopped without an error (by hand or an UNTIL condition): \
             nothing received is applied",
        ),
    }
}

fn replication_error(r: &ReplicaView) -> Verdict {
    if r.last_io_error.is_none() && r.last_sql_error.is_none() {
        return Verdict::Clean;
    }
    let mut evidence = Vec::new();
    if let Some(e) = &r.last_io_error {
        evidence.push(fact("last_io_error", format::thread_error(e)));
    }
    if let Some(e) = &r.last_sql_error {
        evidence.push(fact("last_sql_error", format::thread_error(e)));
    }
    // The SQL error first: it means data did not apply, an IO error only that it did not arrive.
    let cause = match (&r.last_sql_error, &r.last_io_error) {
        (Some(e), _) => own_damage(
            format!("SQL error {}: {}", e.errno, format::quote(&e.message)),
            e,
            &mut evidence,
        ),
        (None, Some(e)) => format!("IO error {}: {}", e.errno, format::quote(&e.message)),
        (None, None) => String::new(),
    };
    Verdict::bad(evidence, cause)
}

/// An applier error that names one of rwtop's own tables is rwtop's doing: the cause says so,
/// and how to repair the channel without touching anything but rwtop's rows.
fn own_damage(cause: String, e: &ThreadError, evidence: &mut Vec<(String, String)>) -> String {
    let Some(table) = own_tables::named_in(&e.message) else {
        return cause;
    };
    evidence.push(fact("caused_by", format!("rwtop ({table})")));
    format!(
        "{cause}. rwtop caused this: the failing transaction writes only rwtop's own {table}, \
         none of your data. Repair: make this replica's {table} rwtop's definition without \
         logging it (`rwtop lint` prints the statement; run it after SET SESSION sql_log_bin = \
         0), then start this channel's SQL thread again; skip nothing"
    )
}

fn gtid_backlog_high(settings: &AlertSettings, r: &ReplicaView) -> Verdict {
    let backlog = r.gtid_backlog;
    let known = backlog.not_received.unwrap_or(0) + backlog.not_applied.unwrap_or(0);
    if known <= settings.gtid_backlog {
        // Below the threshold so far; a missing half could still hold the rest.
        return match backlog.total() {
            Some(_) => Verdict::Clean,
            None => Verdict::Unknown,
        };
    }
    let show = |n: Option<u64>| n.map_or_else(|| "unknown".to_owned(), format::trx);
    let evidence = vec![
        fact("gtid_backlog", format::trx(known)),
        fact("threshold", format::trx(settings.gtid_backlog)),
        fact("not_received", show(backlog.not_received)),
        fact("not_applied", show(backlog.not_applied)),
    ];
    let cause = if backlog.not_received.unwrap_or(0) > backlog.not_applied.unwrap_or(0) {
        "most of the backlog has not been received: the link to the source is slow or stalled"
    } else {
        "most of the backlog is received but not applied: the SQL thread cannot keep up"
    };
    Verdict::bad(evidence, cause)
}

fn clock_skew(inputs: &RuleInputs<'_>, node: &NodeView) -> Verdict {
    let Some(source) = inputs.source_of(node) else {
        return if node.role == Role::Primary {
            Verdict::Clean
        } else {
            Verdict::Unknown
        };
    };
    let (Some(mine), Some(theirs)) = (node.clock, source.clock) else {
        return Verdict::Unknown;
    };
    let diff = mine.offset_ms.saturating_sub(theirs.offset_ms);
    // Each estimate may be off by half the round trip it was read with: a poll answered late on
    // a busy host (1,000 connections opening at once) reads an offset hundreds of ms out, which
    // is no skew. Only a difference beyond both errors counts.
    let error = mine.error_ms.saturating_add(theirs.error_ms);
    if diff.abs().saturating_sub(error) <= inputs.settings.clock_skew_ms {
        return Verdict::Clean;
    }
    let size = |ms: i64| units::duration(std::time::Duration::from_millis(ms.unsigned_abs()));
    let evidence = vec![
        fact("clock_offset", units::offset_ms(mine.offset_ms)),
        fact("source_clock_offset", units::offset_ms(theirs.offset_ms)),
        fact("difference", size(diff)),
        fact("threshold", size(inputs.settings.clock_skew_ms)),
        fact("estimate_error", size(error)),
    ];
    let direction = if diff > 0 { "ahead of" } else { "behind" };
    let cause = format!(
        "{}'s clock is {} {direction} {}'s: SBM and pt-heartbeat lag are off by as much \
         (check NTP)",
        node.name,
        size(diff),
        source.name
    );
    Verdict::bad(evidence, cause)
}

fn writable_replica(node: &NodeView) -> Verdict {
    if node.role != Role::Replica {
        return Verdict::Clean;
    }
    match node.read_only() {
        Some(false) => {
            let mut evidence = vec![fact("role", "replica"), fact("read_only", "OFF")];
            if let Some(source) = &node.source {
                evidence.push(fact("source", source.clone()));
            }
            Verdict::bad(
                evidence,
                "a writable replica accepts writes its source never sees (errant transactions); \
                 SET GLOBAL read_only=ON",
            )
        }
        Some(true) => Verdict::Clean,
        None => Verdict::Unknown,
    }
}
