//! The throttle verdict over synthetic topologies: go only when every covered replica is shown
//! under the limit; a bound, an unknown lag, a silent node, an empty cover or a stale snapshot
//! throttle with a reason naming the worst replica.

use std::time::Duration;

use super::{DEFAULT_MAX_LAG, STALE_SNAPSHOT, ThrottleSettings, judge};
use crate::store::Role;
use crate::store::lag::Lag;
use crate::store::testkit::{Topo, secs};

const FRESH: Duration = Duration::from_millis(300);

fn exact(s: f64) -> Lag {
    Lag::Exact { lag: secs(s) }
}

fn topo(r1: Lag, r2: Lag) -> Topo {
    let mut t = Topo::new();
    t.replica_mut("r1", |r| r.heartbeat_lag = r1);
    t.replica_mut("r2", |r| r.heartbeat_lag = r2);
    t
}

fn settings() -> ThrottleSettings {
    ThrottleSettings::default()
}

#[test]
fn every_replica_under_the_limit_is_go() {
    let t = topo(exact(0.12), exact(1.0));
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert!(v.go, "{v:?}");
    assert_eq!(v.max_lag, DEFAULT_MAX_LAG);
    assert_eq!(
        v.reason,
        "2 replicas at or under 1.00s heartbeat lag (worst r2 1.00s)"
    );
    assert_eq!(v.judged.len(), 2);
    assert!(v.judged.iter().all(|j| j.go));
}

#[test]
fn one_replica_over_throttles_naming_it_and_never_reads_sbm() {
    // SBM says 0 on both: the stalled link's lie. The heartbeat says r2 is 4.2 s behind.
    let mut t = topo(exact(0.1), exact(4.2));
    for r in ["r1", "r2"] {
        t.replica_mut(r, |c| c.seconds_behind_source = Some(0));
    }
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert!(!v.go);
    assert_eq!(v.reason, "r2 lag 4.20s > 1.00s (heartbeat)");
    assert_eq!(v.judged[0].place, "r2");
    // And the reverse: a large SBM with a small heartbeat lag is go.
    let mut t = topo(exact(0.1), exact(0.2));
    t.replica_mut("r1", |c| c.seconds_behind_source = Some(600));
    assert!(judge(&t.snapshot, &settings(), FRESH).go);
}

#[test]
fn the_worst_is_named_first_and_the_others_counted() {
    let mut t = topo(exact(2.0), exact(9.5));
    t.add_replica("r3", "db1", 4);
    t.replica_mut("r3", |r| r.heartbeat_lag = exact(0.1));
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert_eq!(v.reason, "r2 lag 9.50s > 1.00s (heartbeat) (and 1 more)");
    let order: Vec<&str> = v.judged.iter().map(|j| j.place.as_str()).collect();
    assert_eq!(order, ["r2", "r1", "r3"]);
}

#[test]
fn the_limit_is_inclusive_and_per_request() {
    let t = topo(exact(0.5), exact(0.7));
    let strict = ThrottleSettings {
        max_lag: Duration::from_millis(600),
        ..settings()
    };
    let v = judge(&t.snapshot, &strict, FRESH);
    assert_eq!(v.reason, "r2 lag 0.70s > 0.60s (heartbeat)");
    let exactly = ThrottleSettings {
        max_lag: Duration::from_millis(700),
        ..settings()
    };
    assert!(judge(&t.snapshot, &exactly, FRESH).go);
}

#[test]
fn an_unknown_lag_throttles_with_its_reason() {
    let unknown = Lag::Unknown {
        reason: "the heartbeat writer stopped advancing".to_owned(),
    };
    let t = topo(exact(0.0), unknown);
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert!(!v.go);
    assert_eq!(
        v.reason,
        "r2 lag unknown: the heartbeat writer stopped advancing"
    );
}

#[test]
fn an_unknown_lag_is_worse_than_any_figure() {
    let unknown = Lag::Unknown {
        reason: "node is down".to_owned(),
    };
    let v = judge(&topo(exact(300.0), unknown).snapshot, &settings(), FRESH);
    assert!(v.reason.starts_with("r2 lag unknown"), "{}", v.reason);
}

#[test]
fn a_lower_bound_throttles_unless_its_upper_bound_is_under() {
    let over = Lag::AtLeast {
        lag: secs(3.0),
        upper: None,
    };
    let v = judge(&topo(exact(0.0), over).snapshot, &settings(), FRESH);
    assert_eq!(v.reason, "r2 lag ≥3.00s > 1.00s (heartbeat, a lower bound)");

    let maybe = Lag::AtLeast {
        lag: secs(0.4),
        upper: Some(secs(3.1)),
    };
    let v = judge(&topo(exact(0.0), maybe).snapshot, &settings(), FRESH);
    assert!(!v.go);
    assert_eq!(
        v.reason,
        "r2 lag ≥0.40s at most 3.10s: cannot show it is under 1.00s (heartbeat)"
    );

    let open = Lag::AtLeast {
        lag: secs(0.4),
        upper: None,
    };
    let v = judge(&topo(exact(0.0), open).snapshot, &settings(), FRESH);
    assert!(v.reason.contains("with no upper bound"), "{}", v.reason);

    let under = Lag::AtLeast {
        lag: secs(0.4),
        upper: Some(secs(0.9)),
    };
    let v = judge(&topo(exact(0.0), under).snapshot, &settings(), FRESH);
    assert!(v.go, "{v:?}");
}

#[test]
fn a_node_that_stopped_answering_throttles() {
    let mut t = topo(exact(0.0), exact(0.0));
    t.stop_answering("r1");
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert!(!v.go);
    assert_eq!(v.reason, "r1 lag unknown: node is down");
}

#[test]
fn a_replica_never_heard_from_throttles_and_one_that_replicates_from_nobody_is_not_covered() {
    let mut t = topo(exact(0.0), exact(0.0));
    t.add_replica("r3", "db1", 4);
    t.node_mut("r3", |n| {
        n.channels.clear();
        n.conn = crate::poll::ConnState::Connecting;
    });
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert_eq!(
        v.reason,
        "r3 has not answered (connection connecting): its lag is unknown"
    );
    // Answering without a channel: not a replica now, unless named.
    t.node_mut("r3", |n| n.conn = crate::poll::ConnState::Up);
    assert!(judge(&t.snapshot, &settings(), FRESH).go);
    let named = ThrottleSettings {
        replicas: vec!["r3".to_owned()],
        ..settings()
    };
    let v = judge(&t.snapshot, &named, FRESH);
    assert_eq!(v.reason, "r3 replicates from nobody: no lag to judge");
}

#[test]
fn every_channel_of_a_multi_source_replica_is_judged() {
    let mut t = topo(exact(0.0), exact(0.0));
    t.add_primary("p2", 9);
    t.add_replica("agg", "db1", 10);
    t.add_channel("agg", "p2", "p2");
    t.channel_mut("agg", "p2", |c| c.heartbeat_lag = exact(2.5));
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert_eq!(v.reason, "agg/p2 lag 2.50s > 1.00s (heartbeat)");
    // The second primary has no channel and is no replica: not judged.
    assert!(v.judged.iter().all(|j| !j.place.starts_with("p2")));
    assert!(v.judged.iter().any(|j| j.place == "agg"));
}

#[test]
fn replicas_and_skip_choose_the_cover() {
    let t = topo(exact(0.0), exact(5.0));
    let only_r1 = ThrottleSettings {
        replicas: vec!["r1".to_owned()],
        ..settings()
    };
    let v = judge(&t.snapshot, &only_r1, FRESH);
    assert!(v.go, "{v:?}");
    assert_eq!(v.judged.len(), 1);
    let skip_r2 = ThrottleSettings {
        skip: vec!["r2".to_owned()],
        ..settings()
    };
    assert!(judge(&t.snapshot, &skip_r2, FRESH).go);
    // A named node rwtop does not watch cannot be shown under the limit.
    let ghost = ThrottleSettings {
        replicas: vec!["r1".to_owned(), "r9".to_owned()],
        ..settings()
    };
    let v = judge(&t.snapshot, &ghost, FRESH);
    assert_eq!(v.reason, "r9 is not watched: no node of that name (yet)");
}

#[test]
fn no_replica_to_judge_throttles() {
    let mut t = Topo::new();
    t.snapshot.nodes.retain(|n| n.role == Role::Primary);
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert!(!v.go);
    assert!(v.reason.starts_with("no replica to judge"), "{}", v.reason);
    let everything_skipped = ThrottleSettings {
        skip: vec!["r1".to_owned(), "r2".to_owned()],
        ..settings()
    };
    assert!(
        !judge(
            &topo(exact(0.0), exact(0.0)).snapshot,
            &everything_skipped,
            FRESH
        )
        .go
    );
}

#[test]
fn a_stale_snapshot_throttles() {
    let t = topo(exact(0.0), exact(0.0));
    assert!(judge(&t.snapshot, &settings(), STALE_SNAPSHOT).go);
    let v = judge(&t.snapshot, &settings(), STALE_SNAPSHOT + secs(2.0));
    assert!(!v.go);
    assert_eq!(
        v.reason,
        "rwtop's newest snapshot is 12s old: the engine is not publishing, so no lag is current"
    );
}

#[test]
fn a_delayed_replica_is_judged_beyond_its_delay() {
    let mut t = topo(exact(0.0), exact(64.0));
    t.replica_mut("r2", |c| c.sql_delay = Some(60));
    let v = judge(&t.snapshot, &settings(), FRESH);
    assert_eq!(
        v.reason,
        "r2 lag 1m04s less its 1m00s SQL_Delay and the second held past it = 3.00s > 1.00s \
         (heartbeat)"
    );
    // On time: within the delay and the second the server may hold an event past it.
    t.replica_mut("r2", |c| c.heartbeat_lag = exact(61.9));
    assert!(judge(&t.snapshot, &settings(), FRESH).go);
    t.replica_mut("r2", |c| c.heartbeat_lag = exact(62.1));
    assert!(!judge(&t.snapshot, &settings(), FRESH).go);
}
