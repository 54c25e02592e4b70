//! The candidate choice over synthetic topologies: exclusions, ties, and the picture after the
//! primary stopped answering.

use crate::store::testkit::{flavor, live};
use std::time::Duration;

use super::judge;
use crate::gtid::{GtidList, GtidSet};
use crate::mysql::{IoRunning, SafetySettings, ThreadError};
use crate::store::Snapshot;
use crate::store::alert_view::AlertKind;
use crate::store::exposure::{ClusterExposure, Held};
use crate::store::testkit::Topo;

fn one(snapshot: &Snapshot) -> ClusterExposure {
    let all = judge(snapshot);
    assert_eq!(all.len(), 1, "{all:#?}");
    all.into_iter().next().unwrap()
}

fn candidate(topo: &Topo) -> (Option<String>, ClusterExposure) {
    let c = one(&topo.at(1));
    (c.candidate.as_ref().map(|c| c.node.clone()), c)
}

fn lacking(topo: &mut Topo, node: &str, not_received: u64, relay: u64) {
    topo.replica_mut(node, |r| {
        r.gtid_backlog.not_received = Some(not_received);
        r.gtid_backlog.not_applied = Some(relay);
    });
}

fn excluded(c: &ClusterExposure, node: &str) -> String {
    c.replica(node)
        .and_then(|r| r.excluded.clone())
        .unwrap_or_else(|| panic!("{node} not excluded: {c:#?}"))
}

fn mariadb(text: &str) -> Held {
    Held::Mariadb {
        list: GtidList::parse(text).unwrap(),
    }
}

#[test]
fn the_replica_that_lacks_least_is_chosen_and_says_why() {
    let mut topo = Topo::new();
    lacking(&mut topo, "r1", 50, 0);
    let (chosen, c) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r2"));
    let cand = c.candidate.clone().unwrap();
    assert_eq!(cand.loses, Some(0));
    assert_eq!(cand.reason, "lacks least: 0 trx against 50 on r1");
    assert_eq!(c.replica("r1").unwrap().not_received, Some(50));
    assert!(c.root_answers);
    // r1 qualifies; it is only second.
    assert_eq!(c.replica("r1").unwrap().excluded, None);
}

#[test]
fn ties_are_broken_by_the_relay_log_then_the_drain_then_the_name() {
    let mut topo = Topo::new();
    let (chosen, c) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r1"));
    assert_eq!(
        c.candidate.clone().unwrap().reason,
        "tied with r2 on every figure: first by name"
    );
    lacking(&mut topo, "r1", 3, 400);
    lacking(&mut topo, "r2", 3, 100);
    let (chosen, c) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r2"));
    assert!(
        c.candidate
            .clone()
            .unwrap()
            .reason
            .contains("least to apply: 100 trx against 400")
    );
    // The same relay log, applied at 50 trx/s on r2 and 200 on r1: r1 drains in 0.5 s.
    lacking(&mut topo, "r1", 3, 100);
    topo.replica_mut("r1", |r| r.catch_up.apply_trx_per_s = Some(200.0));
    let (chosen, c) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r1"));
    let r1 = c.replica("r1").unwrap();
    assert_eq!(r1.drain, Some(Duration::from_millis(500)));
    assert_eq!(c.replica("r2").unwrap().drain, Some(Duration::from_secs(2)));
    assert!(
        c.candidate
            .clone()
            .unwrap()
            .reason
            .contains("drains sooner")
    );
}

#[test]
fn a_stopped_sql_thread_does_not_drain_and_an_unmeasured_rate_is_unknown() {
    let mut topo = Topo::new();
    lacking(&mut topo, "r1", 0, 300);
    topo.replica_mut("r1", |r| r.sql_running = false);
    topo.replica_mut("r2", |r| {
        r.gtid_backlog.not_applied = Some(10);
        r.catch_up.apply_trx_per_s = None;
    });
    let c = one(&topo.at(1));
    let r1 = c.replica("r1").unwrap();
    assert_eq!(r1.drain, None);
    assert!(
        r1.drain_unknown
            .as_deref()
            .unwrap()
            .contains("SQL thread is stopped")
    );
    let r2 = c.replica("r2").unwrap();
    assert_eq!(
        (r2.drain, r2.drain_unknown.as_deref()),
        (None, Some("no apply rate measured yet"))
    );
}

#[test]
fn delayed_errant_silent_and_unanswering_replicas_are_excluded_with_their_reason() {
    let mut topo = Topo::new();
    topo.add_replica("r3", "db1", 4);
    topo.add_replica("r4", "db1", 5);
    topo.add_replica("r5", "db1", 6);
    // The best by the figures is each of these in turn; every one is excluded.
    lacking(&mut topo, "r1", 9, 0);
    topo.replica_mut("r2", |r| r.sql_delay = Some(3600));
    topo.snapshot
        .alerts
        .active
        .push(crate::store::alert_view::Alert {
            kind: AlertKind::ErrantTransactions,
            node: Some("r3".to_owned()),
            evidence: vec![("errant_gtids".to_owned(), "0-4-7".to_owned())],
            ..crate::store::testkit::sql_stopped_alert(None)
        });
    topo.node_mut("r4", |n| {
        live(n).settings = Some(SafetySettings {
            log_replica_updates: Some(false),
            ..SafetySettings::default()
        });
    });
    topo.stop_answering("r5");
    let (chosen, c) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r1"), "{c:#?}");
    assert_eq!(
        c.candidate.as_ref().unwrap().reason,
        "the only replica that qualifies"
    );
    assert_eq!(c.candidate.clone().unwrap().loses, Some(9));
    assert!(excluded(&c, "r2").starts_with("delayed replica (SQL_Delay"));
    assert!(excluded(&c, "r3").starts_with("errant GTIDs 0-4-7"));
    assert_eq!(
        excluded(&c, "r4"),
        "log_slave_updates is OFF: the other replicas could not replicate from it"
    );
    assert!(excluded(&c, "r5").starts_with("not answering"));
    assert_eq!(c.replica("r2").unwrap().sql_delay, Some(3600));
    assert_eq!(c.replica("r3").unwrap().errant, "0-4-7");
    assert_eq!(c.replica("r4").unwrap().log_replica_updates, Some(false));
}

#[test]
fn no_log_slave_updates_matters_only_when_others_would_replicate_from_it() {
    let mut topo = Topo::new();
    topo.snapshot.nodes.retain(|n| n.name != "r2");
    topo.node_mut("r1", |n| {
        live(n).settings = Some(SafetySettings {
            log_replica_updates: Some(false),
            ..SafetySettings::default()
        });
    });
    let (chosen, _) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r1"));
}

#[test]
fn a_broken_io_thread_a_failed_sql_thread_and_another_major_version_exclude() {
    let mut topo = Topo::new();
    topo.add_replica("r3", "db1", 4);
    let error = ThreadError {
        errno: 1236,
        message: "Got fatal error 1236 from master".to_owned(),
        timestamp: None,
    };
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::No;
        r.last_io_error = Some(error.clone());
    });
    topo.replica_mut("r2", |r| {
        r.sql_running = false;
        r.last_sql_error = Some(ThreadError {
            errno: 1062,
            ..error.clone()
        });
    });
    topo.node_mut("r3", |n| n.identity.flavor = Some(flavor("11.4.2-MariaDB")));
    let (chosen, c) = candidate(&topo);
    assert_eq!(chosen, None, "{c:#?}");
    assert!(excluded(&c, "r1").starts_with("IO thread broken: Got fatal error 1236"));
    assert!(excluded(&c, "r2").starts_with("SQL thread stopped on error 1062"));
    assert_eq!(
        excluded(&c, "r3"),
        "runs MariaDB 11.4, the primary MariaDB 10.11"
    );
}

#[test]
fn a_cascaded_replica_is_shown_against_the_root_but_not_promoted() {
    let mut topo = Topo::new();
    topo.add_replica("c1", "r1", 4);
    topo.replica_mut("c1", |r| r.received_gtid = Some(mariadb("0-1-93")));
    let c = one(&topo.at(1));
    let c1 = c.replica("c1").unwrap();
    assert_eq!(c1.not_received, Some(7));
    assert_eq!(c1.source.as_deref(), Some("r1"));
    assert_eq!(
        excluded(&c, "c1"),
        "replicates from r1, not from db1: cascaded"
    );
}

/// The primary stopped answering: its last sample is the reference, and a replica that
/// received more than that sample showed counts too.
#[test]
fn after_the_primary_died_the_candidate_loses_what_it_or_another_replica_had() {
    let mut topo = Topo::new();
    topo.stop_answering("db1");
    // The primary's last sample: 0-1-100. r1 received 3 more before it died, and has 5 to
    // apply; r2 received exactly the sample's.
    topo.replica_mut("r1", |r| {
        r.received_gtid = Some(mariadb("0-1-103"));
        r.gtid_backlog.not_applied = Some(5);
    });
    let (chosen, c) = candidate(&topo);
    assert!(!c.root_answers);
    assert_eq!(c.root_sample_age, Some(Duration::from_millis(100)));
    assert_eq!(chosen.as_deref(), Some("r2"));
    let cand = c.candidate.clone().unwrap();
    assert_eq!(cand.loses, Some(3), "what r1 has and r2 never received");
    // Every IO thread fails once its source is gone: not a reason to exclude then.
    topo.replica_mut("r2", |r| {
        r.io_running = IoRunning::Connecting;
        r.last_io_error = Some(ThreadError {
            errno: 2003,
            message: "error reconnecting to master".to_owned(),
            timestamp: None,
        });
    });
    let (chosen, _) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r2"));
}

#[test]
fn no_primary_replicas_no_exposure() {
    let mut topo = Topo::new();
    topo.snapshot.nodes.retain(|n| n.name == "db1");
    assert!(judge(&topo.at(1)).is_empty());
}

/// `MySQL`: sets, counted by subtraction; what a channel received is its retrieved set with
/// what it executed.
#[test]
fn mysql_sets_count_the_transactions_missing() {
    let uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    let set = |t: &str| Held::Mysql {
        set: GtidSet::parse(t).unwrap(),
    };
    let mine = set(&format!("{uuid}:1-90"));
    let theirs = set(&format!("{uuid}:1-100:105"));
    assert_eq!(mine.lacks(&theirs), Some(11));
    assert_eq!(theirs.lacks(&mine), Some(0));
    let merged = mine.merged(&set(&format!("{uuid}:95-120"))).unwrap();
    assert_eq!(merged, set(&format!("{uuid}:1-90:95-120")));
    assert_eq!(mine.lacks(&mariadb("0-1-5")), None);
    let gtid = crate::mysql::ReplicaGtid::Mysql {
        auto_position: true,
        retrieved: GtidSet::parse(&format!("{uuid}:50-100")).unwrap(),
        executed: GtidSet::parse(&format!("{uuid}:1-80")).unwrap(),
    };
    assert_eq!(Held::received(&gtid), Some(set(&format!("{uuid}:1-100"))));
    let mut topo = Topo::mysql();
    lacking(&mut topo, "r2", 4, 0);
    let (chosen, _) = candidate(&topo);
    assert_eq!(chosen.as_deref(), Some("r1"));
}

/// The root's semi-sync state says what the figures mean: active, what no replica has is at most
/// the commits waiting for an ACK; fallen back, commits go out unprotected; without semi-sync,
/// nothing is added.
#[test]
fn the_commit_path_says_what_semi_sync_protects() {
    use crate::store::semisync::SemiSyncState;
    let mut topo = Topo::new();
    assert_eq!(one(&topo.at(1)).commit_path, None);
    let with = |state: SemiSyncState, waiting: u64| crate::store::semisync::SemiSyncView {
        state: Some(state),
        clients: Some(1),
        required_acks: Some(1),
        timeout: Some(Duration::from_secs(10)),
        wait_point: Some("AFTER_COMMIT".to_owned()),
        wait_sessions: Some(waiting),
        interval: None,
        ack_wait: Vec::new(),
        totals: crate::mysql::semisync::Counters::default(),
        replica_enabled: None,
        replica_active: None,
    };
    topo.node_mut("db1", |n| {
        live(n).semisync = Some(with(SemiSyncState::Active, 2));
    });
    let path = one(&topo.at(1)).commit_path.unwrap_or_default();
    assert!(path.starts_with("semi-sync active"), "{path}");
    assert!(path.contains("at most the 2 commit(s) waiting"), "{path}");
    topo.node_mut("db1", |n| {
        live(n).semisync = Some(with(SemiSyncState::FellBack, 0));
    });
    let path = one(&topo.at(1)).commit_path.unwrap_or_default();
    assert!(path.starts_with("semi-sync FELL BACK"), "{path}");
    topo.node_mut("db1", |n| {
        live(n).semisync = Some(with(SemiSyncState::Off, 0));
    });
    assert_eq!(one(&topo.at(1)).commit_path, None);
}
