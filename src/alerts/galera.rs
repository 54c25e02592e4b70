//! Galera rules on a member, in the order a DBA asks: is it in the primary component (quorum),
//! does it serve fresh reads (synced, or desynced and falling behind), and does its backlog
//! pause the cluster's writes (flow control it *sent*: every member reads as paused while one
//! asks, so only the sender is named). Each is a state the server states, raised on its first
//! sample; a node that is no member is clean.

use super::verdict::{Verdict, fact};
use crate::mysql::galera::{Component, GaleraStatus, MemberState};
use crate::store::NodeView;

fn known(n: Option<u64>) -> String {
    n.map_or_else(|| "unknown".to_owned(), |n| n.to_string())
}

/// Out of the primary component, or not ready: the member refuses table reads and writes.
pub fn not_primary(node: &NodeView) -> Verdict {
    let Some(view) = node.galera() else {
        return Verdict::Clean;
    };
    let g = &view.status;
    if g.component == Component::Primary && g.ready != Some(false) {
        return Verdict::Clean;
    }
    let component = match g.component {
        Component::Primary => "Primary",
        Component::NonPrimary => "non-Primary",
        Component::Disconnected => "Disconnected",
        Component::Other => "unknown",
    };
    let mut evidence = vec![
        fact("component", component),
        fact("cluster_size", known(g.cluster_size)),
        fact("ready", if g.ready == Some(true) { "ON" } else { "OFF" }),
        fact("state", g.state_comment.clone()),
    ];
    // How long it has applied nothing, where rwtop writes the cluster's heartbeat.
    let frozen = view.lag.text().map(|lag| {
        evidence.push(fact("lag", lag.clone()));
        format!("; its data is {lag} behind")
    });
    let cause = format!(
        "{}: out of the cluster's primary component ({component}, a component of {} member(s), \
         wsrep_ready {}): it refuses table reads and writes (error 1047) until it rejoins{}. \
         Fix: check the network between the members; a member that lost quorum rejoins by \
         itself once it reaches the others",
        node.name,
        known(g.cluster_size),
        if g.ready == Some(true) { "ON" } else { "OFF" },
        frozen.unwrap_or_default(),
    );
    Verdict::stated(evidence, cause)
}

/// In the primary component but not synced: a donor or desynced member falls behind without
/// holding the cluster back, so its reads are stale; a joining or joined one does not serve yet.
pub fn not_synced(node: &NodeView) -> Verdict {
    let Some(view) = node.galera() else {
        return Verdict::Clean;
    };
    let g = &view.status;
    if g.component != Component::Primary || g.state == MemberState::Synced {
        // Out of the component is `galera_not_primary`'s.
        return Verdict::Clean;
    }
    let mut evidence = vec![
        fact("state", g.state_comment.clone()),
        fact("recv_queue", known(g.recv_queue)),
        fact("desync_count", known(g.desync_count)),
    ];
    let sends = view.interval.and_then(|i| i.fc_sent);
    if let Some(sent) = sends {
        evidence.push(fact("flow_control_sent", sent.to_string()));
    }
    // Behind the cluster's writer, where rwtop writes one.
    let behind = view.lag.text().map(|lag| {
        evidence.push(fact("lag", lag.clone()));
        format!("{lag} behind, ")
    });
    let what = match g.state {
        MemberState::Donor => format!(
            "{} ({}: a backup's read lock, a state transfer it donates, or a desync by hand), \
             {}{} write-set(s) received and not applied, and it sends no flow control: reads \
             from it are stale, and it falls further behind while the cluster writes. Fix: let \
             the backup or transfer finish; route reads to a synced member meanwhile",
            g.state_comment,
            desyncs(g),
            behind.unwrap_or_default(),
            known(g.recv_queue)
        ),
        _ => format!(
            "{}: it does not serve yet (catching up on a state transfer). Fix: wait for Synced; \
             route reads to a synced member meanwhile",
            g.state_comment
        ),
    };
    Verdict::stated(evidence, format!("{}: {what}", node.name))
}

fn desyncs(g: &GaleraStatus) -> String {
    match g.desync_count {
        Some(1) => "desynced once".to_owned(),
        Some(n) => format!("desynced {n} times"),
        None => "desync count unknown".to_owned(),
    }
}

/// This member asked the cluster to pause in the last interval: its backlog stalls every
/// member's writes.
pub fn flow_control(node: &NodeView) -> Verdict {
    let Some(view) = node.galera() else {
        return Verdict::Clean;
    };
    let g = &view.status;
    let Some(i) = view.interval else {
        return Verdict::Unknown;
    };
    let Some(sent) = i.fc_sent else {
        return Verdict::Unknown;
    };
    if sent == 0 {
        return Verdict::Clean;
    }
    let paused = i.paused_share.map_or_else(
        || "an unknown share".to_owned(),
        |p| format!("{:.0} %", p * 100.0),
    );
    #[expect(
        clippy::cast_precision_loss,
        reason = "milliseconds of a poll interval are far below 2^52"
    )]
    let seconds = i.ms as f64 / 1000.0;
    let threads = known(g.applier_threads);
    let distance = g
        .cert_deps_distance
        .map_or_else(|| "unknown".to_owned(), |d| format!("{d:.1}"));
    let evidence = vec![
        fact("flow_control_sent", sent.to_string()),
        fact("paused", paused.clone()),
        fact("recv_queue", known(g.recv_queue)),
        fact("cert_deps_distance", distance.clone()),
        fact("applier_threads", threads.clone()),
    ];
    let cause = format!(
        "{}: {} sent {sent} flow-control pause request(s) in the last {seconds:.1} s (its \
         receive queue passed its limit; {} now), pausing every member's writes ({paused} of \
         the interval); cert deps distance {distance} against {threads} applier thread(s). Fix: \
         find what slows its applying (its disk, a long query, too few wsrep_slave_threads for \
         the distance, a desync it is catching up from), or raise gcs.fc_limit there",
        node.name,
        node.name,
        known(g.recv_queue),
    );
    Verdict::stated(evidence, cause)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::testkit::Judge;
    use crate::store::alert_view::AlertKind;
    use crate::store::galera::{GaleraInterval, GaleraView};
    use crate::store::testkit::{Topo, galera_member, live};

    fn member(state: MemberState, comment: &str) -> GaleraView {
        let mut g = galera_member();
        g.status.state = state;
        comment.clone_into(&mut g.status.state_comment);
        g
    }

    fn with(g: GaleraView) -> Topo {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| live(n).galera = Some(g));
        topo
    }

    #[test]
    fn a_synced_member_and_a_non_member_are_clean() {
        let topo = with(member(MemberState::Synced, "Synced"));
        for kind in [
            AlertKind::GaleraNotPrimary,
            AlertKind::GaleraNotSynced,
            AlertKind::GaleraFlowControl,
        ] {
            topo.assert_quiet(kind);
        }
        Topo::new().assert_quiet(AlertKind::GaleraNotSynced);
    }

    #[test]
    fn a_desynced_member_is_named_stale_and_a_joiner_not_serving() {
        let mut g = member(MemberState::Donor, "Donor/Desynced");
        g.status.recv_queue = Some(58);
        g.status.desync_count = Some(1);
        let topo = with(g);
        assert!(topo.raises_at_once(AlertKind::GaleraNotSynced, Some("db1")));
        let a = topo.raise(AlertKind::GaleraNotSynced, Some("db1"));
        assert!(
            a.cause.contains("Donor/Desynced (desynced once"),
            "{}",
            a.cause
        );
        assert!(a.cause.contains("58 write-set(s)"), "{}", a.cause);
        assert!(a.cause.contains("reads from it are stale"), "{}", a.cause);
        let joined = with(member(MemberState::Joined, "Joined"));
        let a = joined.raise(AlertKind::GaleraNotSynced, Some("db1"));
        assert!(a.cause.contains("does not serve yet"), "{}", a.cause);
        // Out of the component is the quorum rule's, not this one's.
        let mut cut = member(MemberState::Initialized, "Initialized");
        cut.status.component = Component::NonPrimary;
        cut.status.ready = Some(false);
        cut.status.cluster_size = Some(1);
        let cut = with(cut);
        cut.assert_quiet(AlertKind::GaleraNotSynced);
        let a = cut.raise(AlertKind::GaleraNotPrimary, Some("db1"));
        assert!(
            a.cause.contains("non-Primary, a component of 1 member(s)"),
            "{}",
            a.cause
        );
    }

    #[test]
    fn only_the_member_that_sent_flow_control_is_named() {
        // Every member reads the pause; only the sender's count moved.
        let paused = |sent| {
            let mut g = member(MemberState::Synced, "Synced");
            g.status.recv_queue = Some(120);
            g.interval = Some(GaleraInterval {
                ms: 1000,
                paused_share: Some(0.38),
                fc_sent: Some(sent),
                cert_failures: Some(0),
                bf_aborts: Some(0),
            });
            g
        };
        let receiver = with(paused(0));
        receiver.assert_quiet(AlertKind::GaleraFlowControl);
        let sender = with(paused(7));
        let a = sender.raise(AlertKind::GaleraFlowControl, Some("db1"));
        assert!(
            a.cause
                .contains("db1 sent 7 flow-control pause request(s) in the last 1.0 s"),
            "{}",
            a.cause
        );
        assert!(a.cause.contains("(38 % of the interval)"), "{}", a.cause);
        assert!(a.cause.contains("1.2 against 8 applier"), "{}", a.cause);
        // Before two readings nothing is known of the interval.
        let mut first = member(MemberState::Synced, "Synced");
        first.interval = None;
        with(first).assert_quiet(AlertKind::GaleraFlowControl);
    }
}
