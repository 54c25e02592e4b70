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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{acks_short, fell_back, unacked_commits};
    use crate::alerts::AlertKind;
    use crate::alerts::testkit::Judge;
    use crate::alerts::verdict::{Standing, Verdict};
    use crate::mysql::semisync::Counters;
    use crate::store::semisync::{SemiSyncInterval, SemiSyncState, SemiSyncView};
    use crate::store::testkit::Topo;

    const KINDS: [AlertKind; 3] = [
        AlertKind::SemisyncFellBack,
        AlertKind::SemisyncAcksShort,
        AlertKind::SemisyncUnackedCommits,
    ];

    /// The primary's semi-sync in `state`, `clients` of `required` acking replicas connected,
    /// and a poll interval of one second in which `no_ack` commits went out without an ACK.
    fn semi(state: SemiSyncState, clients: u64, required: u64, no_ack: u64) -> SemiSyncView {
        SemiSyncView {
            state: Some(state),
            clients: Some(clients),
            required_acks: Some(required),
            timeout: Some(Duration::from_secs(10)),
            wait_point: Some("AFTER_COMMIT".to_owned()),
            wait_sessions: Some(0),
            interval: Some(SemiSyncInterval {
                span: Duration::from_secs(1),
                commits_waited: Some(20),
                avg_wait: Some(Duration::from_micros(400)),
                no_ack_commits: Some(no_ack),
                fallbacks: Some(0),
                acks_sent: None,
            }),
            ack_wait: Vec::new(),
            totals: Counters {
                no_tx: Some(no_ack),
                ..Counters::default()
            },
            replica_enabled: None,
            replica_active: None,
        }
    }

    /// A topology whose primary `db1` has `view` as its semi-sync.
    fn primary_with(view: Option<SemiSyncView>) -> Topo {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| crate::store::testkit::live(n).semisync = view);
        topo
    }

    type Rule = fn(&crate::store::NodeView) -> Verdict;

    fn judged(topo: &Topo, rule: Rule) -> Verdict {
        let snapshot = topo.at(1);
        let db1 = snapshot.node("db1").unwrap_or_else(|| panic!("no db1"));
        rule(db1)
    }

    fn standing(verdict: &Verdict) -> Option<Standing> {
        match verdict {
            Verdict::Bad(d) => Some(d.standing),
            _ => None,
        }
    }

    #[test]
    fn a_fall_back_is_stated_and_raised_on_its_first_sample() {
        let topo = primary_with(Some(semi(SemiSyncState::FellBack, 0, 1, 0)));
        let verdict = judged(&topo, fell_back);
        assert_eq!(standing(&verdict), Some(Standing::Stated), "{verdict:?}");
        assert!(topo.raises_at_once(AlertKind::SemisyncFellBack, Some("db1")));
        let alert = topo.raise(AlertKind::SemisyncFellBack, Some("db1"));
        assert!(
            alert.cause.starts_with("db1: semi-sync fell back")
                && alert.cause.contains("0 of 1 required"),
            "{}",
            alert.cause
        );
        let evidence = |name: &str| {
            alert
                .evidence
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(evidence("status").as_deref(), Some("OFF"));
        assert_eq!(evidence("acking_replicas").as_deref(), Some("0"));
        assert_eq!(evidence("timeout").as_deref(), Some("10s"));
        assert_eq!(evidence("commits_without_ack_total").as_deref(), Some("0"));
    }

    #[test]
    fn a_fall_back_with_unknown_figures_still_says_so() {
        let mut view = semi(SemiSyncState::FellBack, 0, 1, 0);
        view.clients = None;
        view.required_acks = None;
        view.timeout = None;
        let topo = primary_with(Some(view));
        let alert = topo.raise(AlertKind::SemisyncFellBack, Some("db1"));
        assert!(
            alert.cause.contains("unknown of ? required"),
            "{}",
            alert.cause
        );
    }

    #[test]
    fn active_off_or_absent_semi_sync_is_clean_and_an_unknown_state_is_not_judged() {
        for view in [
            None,
            Some(semi(SemiSyncState::Active, 2, 1, 0)),
            Some(semi(SemiSyncState::Off, 0, 1, 0)),
        ] {
            let topo = primary_with(view.clone());
            for rule in [fell_back, acks_short, unacked_commits] {
                assert_eq!(judged(&topo, rule), Verdict::Clean, "{view:?}");
            }
            for kind in KINDS {
                topo.assert_quiet(kind);
            }
        }
        // The source side not loaded at all: nothing to judge there.
        let mut not_loaded = semi(SemiSyncState::Active, 0, 1, 3);
        not_loaded.state = None;
        let topo = primary_with(Some(not_loaded));
        for rule in [fell_back, acks_short, unacked_commits] {
            assert_eq!(judged(&topo, rule), Verdict::Clean);
        }
        // A switch missing from the server's answer: no judgement, neither raise nor clear.
        let topo = primary_with(Some(semi(SemiSyncState::Unknown, 0, 1, 3)));
        assert_eq!(judged(&topo, fell_back), Verdict::Unknown);
        assert_eq!(judged(&topo, acks_short), Verdict::Clean, "not enabled");
    }

    #[test]
    fn just_enough_acking_replicas_is_clean_one_fewer_is_short() {
        // Exactly as many semi-sync replicas connected as a commit needs ACKs from.
        for (clients, required) in [(1, 1), (2, 2), (3, 2)] {
            let topo = primary_with(Some(semi(SemiSyncState::Active, clients, required, 0)));
            assert_eq!(
                judged(&topo, acks_short),
                Verdict::Clean,
                "{clients}/{required}"
            );
            topo.assert_quiet(AlertKind::SemisyncAcksShort);
        }
        for (clients, required) in [(0, 1), (1, 2)] {
            let topo = primary_with(Some(semi(SemiSyncState::Active, clients, required, 0)));
            let verdict = judged(&topo, acks_short);
            assert_eq!(standing(&verdict), Some(Standing::Reading), "{verdict:?}");
            // A count of connections can flicker (a replica reconnecting): a run raises it.
            assert!(!topo.raises_at_once(AlertKind::SemisyncAcksShort, Some("db1")));
            let alert = topo.raise(AlertKind::SemisyncAcksShort, Some("db1"));
            assert!(
                alert.cause.starts_with(&format!(
                    "db1: {clients} semi-sync replica(s) connected, {required} required"
                )),
                "{}",
                alert.cause
            );
        }
        // Fallen back with none connected: short too, its status OFF.
        let topo = primary_with(Some(semi(SemiSyncState::FellBack, 0, 1, 0)));
        let alert = topo.raise(AlertKind::SemisyncAcksShort, Some("db1"));
        assert!(
            alert
                .evidence
                .contains(&("status".to_owned(), "OFF".to_owned()))
        );
    }

    #[test]
    fn unacked_commits_are_a_reading_with_their_rate() {
        let topo = primary_with(Some(semi(SemiSyncState::Active, 1, 1, 0)));
        assert_eq!(judged(&topo, unacked_commits), Verdict::Clean);
        let mut view = semi(SemiSyncState::FellBack, 0, 1, 4);
        if let Some(i) = view.interval.as_mut() {
            i.span = Duration::from_secs(2);
            i.fallbacks = Some(1);
        }
        let topo = primary_with(Some(view));
        let verdict = judged(&topo, unacked_commits);
        assert_eq!(standing(&verdict), Some(Standing::Reading), "{verdict:?}");
        assert!(!topo.raises_at_once(AlertKind::SemisyncUnackedCommits, Some("db1")));
        let alert = topo.raise(AlertKind::SemisyncUnackedCommits, Some("db1"));
        let has = |k: &str, v: &str| alert.evidence.contains(&(k.to_owned(), v.to_owned()));
        assert!(has("commits_without_ack", "4"), "{:?}", alert.evidence);
        assert!(
            has("over", "2s") && has("fallbacks", "1"),
            "{:?}",
            alert.evidence
        );
        assert!(
            alert
                .cause
                .starts_with("db1: 4 commit(s) in the last 2s got no replica's ACK"),
            "{}",
            alert.cause
        );
        // No fallback in the interval: none is listed.
        let topo = primary_with(Some(semi(SemiSyncState::Active, 1, 1, 2)));
        let alert = topo.raise(AlertKind::SemisyncUnackedCommits, Some("db1"));
        assert!(
            !alert.evidence.iter().any(|(k, _)| k == "fallbacks"),
            "{:?}",
            alert.evidence
        );
    }

    /// A figure a rule needs, missing from the server's answer (or no interval yet: the first
    /// poll, or totals that went down): no judgement, so a gap neither raises nor clears.
    #[test]
    fn a_figure_missing_leaves_its_rule_unjudged() {
        type Change = fn(&mut SemiSyncView);
        let cases: [(Rule, Change, &str); 4] = [
            (acks_short, |v| v.clients = None, "clients"),
            (acks_short, |v| v.required_acks = None, "required"),
            (unacked_commits, |v| v.interval = None, "interval"),
            (
                unacked_commits,
                |v| {
                    if let Some(i) = v.interval.as_mut() {
                        i.no_ack_commits = None;
                    }
                },
                "no_ack_commits",
            ),
        ];
        for (rule, change, missing) in cases {
            let mut view = semi(SemiSyncState::Active, 1, 1, 0);
            change(&mut view);
            let verdict = judged(&primary_with(Some(view)), rule);
            assert_eq!(verdict, Verdict::Unknown, "without {missing}");
        }
    }
}
