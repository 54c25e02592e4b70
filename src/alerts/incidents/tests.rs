//! Incidents over synthetic topologies shaped like the sandbox's faults: db1 → r1 → c1 and
//! db1 → r2, judged by a real engine over two samples.

use crate::store::testkit::scan;
use std::time::Duration;

use crate::alerts::{AlertEngine, AlertKind, AlertSettings, AlertsView, Severity};
use crate::mysql::IoRunning;
use crate::store::lag::Lag;
use crate::store::snapshot::LagBeyondDelay;
use crate::store::testkit::{Topo, ddl, find, secs};
use crate::store::windows::{Window, WindowStats};

/// The demo's shape: c1 replicates from r1.
fn cascade() -> Topo {
    let mut topo = Topo::new();
    topo.add_replica("c1", "r1", 4);
    topo
}

fn judged(topo: &Topo) -> AlertsView {
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    engine.evaluate(&topo.at(2))
}

fn critical_incidents(view: &AlertsView) -> usize {
    view.incidents
        .iter()
        .filter(|i| i.severity == Severity::Critical)
        .count()
}

fn minute(p50: f64, p99: f64) -> Option<WindowStats> {
    let stats = WindowStats {
        p50: secs(p50),
        p99: secs(p99),
        max: secs(p99 + 0.5),
        samples: 240,
    };
    (p99 >= p50).then_some(stats)
}

/// r1's IO thread stopped 12 s ago under writes: r1's SBM is NULL, its heartbeat lag grows;
/// c1 read everything r1 has (SBM 0) and is as far behind as r1, plus its own 0.1 s hop.
fn io_stopped_on_r1() -> Topo {
    let mut topo = cascade();
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::No;
        r.io_state = String::new();
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::Exact { lag: secs(12.0) };
        r.windows[0] = (Window::OneMinute, minute(6.0, 11.8));
    });
    topo.replica_mut("c1", |r| {
        r.seconds_behind_source = Some(0);
        r.heartbeat_lag = Lag::Exact { lag: secs(12.1) };
        r.hop_lag = Some(secs(0.1));
        r.windows[0] = (Window::OneMinute, minute(6.1, 11.9));
    });
    topo
}

#[test]
fn an_io_stop_is_one_critical_incident_with_the_cascade_inherited() {
    let view = judged(&io_stopped_on_r1());
    let critical: Vec<_> = view
        .incidents
        .iter()
        .filter(|i| i.severity == Severity::Critical)
        .collect();
    assert_eq!(critical.len(), 1, "{:#?}", view.incidents);
    assert_eq!(view.incidents.len(), 1, "{:#?}", view.incidents);
    let incident = critical[0];
    assert_eq!(incident.id, "io_thread_stopped:r1");
    assert!(!incident.recovering);
    assert_eq!(
        incident.summary,
        "r1 stopped receiving; behind because of it: c1"
    );
    for key in [
        "io_thread_stopped:r1",
        "lag_p99_high:r1",
        "sbm_understates_lag:c1",
        "lag_p99_high:c1",
    ] {
        assert!(
            incident.alerts.contains(&key.to_owned()),
            "{key}: {incident:#?}"
        );
    }
    assert_eq!(incident.alerts[0], "io_thread_stopped:r1", "the root first");
    // One critical alert among all, the root; the rest fold under it as warnings.
    let crit: Vec<_> = view
        .active
        .iter()
        .filter(|a| a.severity == Severity::Critical)
        .map(crate::alerts::Alert::key)
        .collect();
    assert_eq!(crit, ["io_thread_stopped:r1"]);

    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("c1's SBM alert");
    assert_eq!(sbm.membership.incident, "io_thread_stopped:r1");
    assert_eq!(
        sbm.membership.caused_by.as_deref(),
        Some("io_thread_stopped:r1")
    );
    assert!(sbm.membership.inherited);
    assert!(
        sbm.cause
            .starts_with("c1: behind because r1 stopped receiving"),
        "{}",
        sbm.cause
    );
    assert!(
        sbm.cause.ends_with("its own hop adds 0.10s"),
        "{}",
        sbm.cause
    );
    assert!(!sbm.cause.contains("event timestamps"), "{}", sbm.cause);
    // r1's own lag is behind because of its own stop: same place, not inherited, and never
    // "cannot keep up" (nothing arrives to keep up with).
    let p99 = find(&view, AlertKind::LagP99High, Some("r1")).expect("r1's P99 alert");
    assert!(!p99.membership.inherited);
    assert_eq!(
        p99.membership.caused_by.as_deref(),
        Some("io_thread_stopped:r1")
    );
    assert!(
        p99.cause
            .starts_with("r1: behind because it stopped receiving"),
        "{}",
        p99.cause
    );
    for a in &view.active {
        assert!(
            !a.cause.contains("cannot keep up"),
            "{}: {}",
            a.key(),
            a.cause
        );
    }
    // The log keeps the text every output shows, not the rule's first guess.
    let logged = view
        .log
        .iter()
        .find(|e| e.raised && e.kind == AlertKind::SbmUnderstatesLag)
        .expect("c1's raise logged");
    assert!(
        logged
            .summary
            .starts_with("sbm_understates_lag on c1: behind because r1 stopped receiving"),
        "{}",
        logged.summary
    );
    let root = find(&view, AlertKind::IoThreadStopped, Some("r1")).expect("root");
    assert_eq!(root.membership.caused_by, None);
    assert_eq!(root.severity, Severity::Critical);
}

/// What the rule says of c1 alone is what an operator read before incidents: the test above
/// would fail on it.
#[test]
fn c1s_rule_alone_blames_event_timestamps() {
    use crate::alerts::testkit::Judge;
    let mut topo = io_stopped_on_r1();
    // Without r1's alert there is nothing to fold under.
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::Yes;
        r.seconds_behind_source = Some(12);
        r.windows[0] = (Window::OneMinute, minute(0.1, 0.2));
    });
    let alert = topo.raise(AlertKind::SbmUnderstatesLag, Some("c1"));
    assert!(alert.cause.contains("event timestamps"), "{}", alert.cause);
}

#[test]
fn a_replica_behind_on_its_own_hop_is_its_own_incident() {
    let mut topo = io_stopped_on_r1();
    // c1 is 9 s behind r1 on its own: its applier is slow too.
    topo.replica_mut("c1", |r| {
        r.heartbeat_lag = Lag::Exact { lag: secs(21.0) };
        r.hop_lag = Some(secs(9.0));
    });
    let view = judged(&topo);
    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("c1's SBM alert");
    assert_eq!(sbm.membership.caused_by, None);
    assert_eq!(sbm.severity, Severity::Critical);
    assert_eq!(view.incidents.len(), 2, "{:#?}", view.incidents);
}

/// r1's IO thread runs again and r1 caught up within a second, before its next status poll
/// clears its alert; c1 is still as far behind as r1 was. Its whole lag reads as its own hop for
/// that moment, yet it is only what r1 could not pass on: it stays under r1's incident. A lag
/// older than r1's stop is c1's own.
#[test]
fn a_replica_catching_up_after_its_source_restarted_stays_inherited() {
    let mut topo = io_stopped_on_r1();
    let mut engine = AlertEngine::new(AlertSettings::default());
    for step in 1..=6_u32 {
        topo.replica_mut("r1", |r| {
            r.heartbeat_lag = Lag::Exact {
                lag: secs(f64::from(step)),
            }
        });
        topo.replica_mut("c1", |r| {
            r.heartbeat_lag = Lag::Exact {
                lag: secs(f64::from(step) + 0.1),
            };
        });
        engine.evaluate(&topo.at(u64::from(step)));
    }
    let catching_up = |topo: &mut Topo, c1_lag: f64| {
        topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(0.05) });
        topo.replica_mut("c1", |r| {
            r.heartbeat_lag = Lag::Exact { lag: secs(c1_lag) };
            r.hop_lag = Some(secs(c1_lag - 0.05));
        });
    };
    catching_up(&mut topo, 6.2);
    let view = engine.evaluate(&topo.at(7));
    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("c1's SBM alert");
    assert_eq!(
        sbm.membership.caused_by.as_deref(),
        Some("io_thread_stopped:r1"),
        "{:#?}",
        view.incidents
    );
    let critical = critical_incidents(&view);
    assert_eq!(critical, 1, "{:#?}", view.incidents);

    // 40 s behind: c1 was behind long before r1 stopped.
    catching_up(&mut topo, 40.0);
    let view = engine.evaluate(&topo.at(8));
    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("c1's SBM alert");
    assert_eq!(sbm.membership.caused_by, None, "{:#?}", view.incidents);
}

/// r1's IO thread ran again and both caught up: r1's alert cleared, its minute still holds the
/// spike, and c1's SBM alert waits out its clean polls. Nothing is wrong now, and the incident
/// says so: every alert in it is an after-effect.
#[test]
fn an_sbm_alert_waiting_out_its_clean_polls_is_an_after_effect() {
    let mut topo = io_stopped_on_r1();
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    engine.evaluate(&topo.at(2));
    // r1 receives again and is caught up; c1 still works through what r1 passes on.
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::Yes;
        r.seconds_behind_source = Some(0);
        r.heartbeat_lag = Lag::Exact { lag: secs(0.05) };
    });
    topo.replica_mut("c1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(6.1) });
    let mut view = engine.evaluate(&topo.at(3));
    for step in 4..=5 {
        view = engine.evaluate(&topo.at(step));
    }
    assert!(find(&view, AlertKind::IoThreadStopped, Some("r1")).is_none());
    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("c1 still behind");
    assert!(!sbm.membership.recovering, "{sbm:#?}");

    topo.replica_mut("c1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(0.1) });
    let view = engine.evaluate(&topo.at(6));
    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("not cleared yet");
    assert!(sbm.membership.recovering, "{sbm:#?}");
    assert!(
        sbm.cause.starts_with("c1: caught up again"),
        "{}",
        sbm.cause
    );
    assert!(view.incidents.iter().all(|i| i.recovering), "{view:#?}");
    assert_eq!(critical_incidents(&view), 0);

    // Alone at its place, the rule's text stays and says why it no longer holds.
    let mut alone = AlertEngine::new(AlertSettings::default());
    let mut topo = io_stopped_on_r1();
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::Yes;
        r.seconds_behind_source = Some(12);
        r.windows[0] = (Window::OneMinute, minute(0.1, 0.2));
    });
    alone.evaluate(&topo.at(1));
    alone.evaluate(&topo.at(2));
    topo.replica_mut("c1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(0.1) });
    topo.replica_mut("r1", |r| r.seconds_behind_source = Some(0));
    let view = alone.evaluate(&topo.at(3));
    let sbm = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("not cleared yet");
    assert_eq!(sbm.membership.caused_by, None, "{view:#?}");
    assert!(sbm.membership.recovering);
    assert_eq!(
        sbm.severity,
        Severity::Warning,
        "a clearing alert pages no more"
    );
    assert!(sbm.cause.contains("event timestamps"), "{}", sbm.cause);
    assert!(
        sbm.cause.ends_with(
            "caught up again at 0.10s now: this clears after 3 clean polls (recovering)"
        ),
        "{}",
        sbm.cause
    );
}

/// After a schema change the replicas read 0.00 s, but the minute still holds the spike.
#[test]
fn a_p99_after_the_replica_caught_up_is_recovering_never_cannot_keep_up() {
    let mut topo = cascade();
    for name in ["r1", "r2", "c1"] {
        topo.replica_mut(name, |r| {
            r.heartbeat_lag = Lag::Exact {
                lag: Duration::ZERO,
            };
            r.hop_lag = (name == "c1").then_some(Duration::ZERO);
            // 40 s of a minute at 20–45 s behind, the rest at 0: P50 above the threshold too.
            r.windows[0] = (Window::OneMinute, minute(21.0, 44.0));
        });
    }
    let view = judged(&topo);
    assert_eq!(view.active.len(), 3, "{:#?}", view.active);
    for a in &view.active {
        assert_eq!(a.kind, AlertKind::LagP99High);
        assert!(a.membership.recovering, "{a:#?}");
        assert!(!a.cause.contains("cannot keep up"), "{}", a.cause);
        assert!(a.cause.contains("caught up"), "{}", a.cause);
        assert_eq!(a.severity, Severity::Warning);
    }
    let raw = find(&view, AlertKind::LagP99High, Some("r2")).expect("r2");
    assert!(
        raw.cause
            .starts_with("lag was high in the last minute but is 0.00s now: the replica caught up"),
        "{}",
        raw.cause
    );
    assert!(
        raw.evidence
            .contains(&("lag_now".to_owned(), "0.00s".to_owned()))
    );
    // c1 spiked because r1 did: folded under r1's.
    let c1 = find(&view, AlertKind::LagP99High, Some("c1")).expect("c1");
    assert_eq!(c1.membership.caused_by.as_deref(), Some("lag_p99_high:r1"));
    assert!(c1.cause.starts_with("c1: caught up again"), "{}", c1.cause);
    assert_eq!(view.incidents.len(), 2);
    assert!(view.incidents.iter().all(|i| i.recovering));

    // Still behind now: then the minute is the truth.
    topo.replica_mut("r2", |r| r.heartbeat_lag = Lag::Exact { lag: secs(30.0) });
    let view = judged(&topo);
    let r2 = find(&view, AlertKind::LagP99High, Some("r2")).expect("r2");
    assert!(!r2.membership.recovering);
    assert!(r2.cause.contains("cannot keep up"), "{}", r2.cause);
    assert!(
        !view.incidents[0].recovering,
        "active first: {:#?}",
        view.incidents
    );
}

#[test]
fn a_source_that_does_not_answer_heads_its_replicas_connection_errors() {
    let mut topo = cascade();
    topo.stop_answering("r1");
    topo.replica_mut("c1", |r| {
        r.io_running = IoRunning::Connecting;
        r.seconds_behind_source = None;
    });
    let view = judged(&topo);
    let io = find(&view, AlertKind::IoThreadStopped, Some("c1")).expect("c1's IO alert");
    assert_eq!(io.membership.caused_by.as_deref(), Some("node_down:r1"));
    assert!(io.membership.inherited);
    assert_eq!(io.severity, Severity::Warning);
    assert!(
        io.cause
            .starts_with("c1: cannot reach its source because r1 does not answer"),
        "{}",
        io.cause
    );
    let critical = critical_incidents(&view);
    assert_eq!(critical, 1, "{:#?}", view.incidents);
}

#[test]
fn a_stalled_link_heads_the_lag_it_causes_downstream() {
    let mut topo = cascade();
    topo.replica_mut("r1", |r| {
        r.seconds_behind_source = Some(0);
        r.heartbeat_lag = Lag::Exact { lag: secs(8.0) };
        r.bytes_behind.io = Some(40_000);
    });
    topo.replica_mut("c1", |r| {
        r.seconds_behind_source = Some(0);
        r.heartbeat_lag = Lag::Exact { lag: secs(8.2) };
        r.hop_lag = Some(secs(0.2));
    });
    let view = judged(&topo);
    assert_eq!(view.incidents.len(), 1, "{:#?}", view.incidents);
    let incident = &view.incidents[0];
    assert_eq!(incident.id, "sbm_understates_lag:r1");
    let root = find(&view, AlertKind::SbmUnderstatesLag, Some("r1")).expect("root");
    assert!(
        root.cause.starts_with("source link stalled"),
        "{}",
        root.cause
    );
    let c1 = find(&view, AlertKind::SbmUnderstatesLag, Some("c1")).expect("c1");
    assert!(
        c1.cause
            .starts_with("c1: behind because r1 is behind its source"),
        "{}",
        c1.cause
    );
}

#[test]
fn a_ddl_applying_heads_the_replicas_lag() {
    let mut topo = cascade();
    topo.node_mut("r1", |n| {
        *scan(n) = vec![ddl("ALTER TABLE shop.t ADD COLUMN x INT", 30, true)];
    });
    topo.replica_mut("r1", |r| {
        r.heartbeat_lag = Lag::Exact { lag: secs(30.0) };
        r.seconds_behind_source = Some(30);
        r.windows[0] = (Window::OneMinute, minute(15.0, 29.0));
    });
    topo.replica_mut("c1", |r| {
        r.heartbeat_lag = Lag::Exact { lag: secs(30.1) };
        r.seconds_behind_source = Some(30);
        r.hop_lag = Some(secs(0.1));
        r.windows[0] = (Window::OneMinute, minute(15.0, 29.0));
    });
    let view = judged(&topo);
    let ids: Vec<&str> = view.incidents.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["ddl_in_flight:r1"], "{:#?}", view.incidents);
    let c1 = find(&view, AlertKind::LagP99High, Some("c1")).expect("c1");
    assert!(
        c1.cause
            .starts_with("c1: behind because r1 is in a schema change"),
        "{}",
        c1.cause
    );
}

#[test]
fn circular_replication_ends_the_walk() {
    let mut topo = Topo::new();
    topo.add_replica("db2", "r2", 9);
    topo.set_source("r2", "db2");
    for name in ["r2", "db2"] {
        topo.replica_mut(name, |r| {
            r.heartbeat_lag = Lag::Exact { lag: secs(9.0) };
            r.hop_lag = Some(secs(0.0));
            r.windows[0] = (Window::OneMinute, minute(9.0, 9.0));
        });
    }
    let view = judged(&topo);
    assert!(view.active.len() >= 2, "{:#?}", view.active);
    // Each inherits from the other at most once; neither loops.
    assert!(!view.incidents.is_empty());
    for a in &view.active {
        assert!(
            view.incidents.iter().any(|i| i.id == a.membership.incident),
            "{a:#?}"
        );
    }
}

#[test]
fn a_delayed_replicas_folded_lag_keeps_its_delay() {
    // r1 holds 5 s on purpose and its SQL thread stopped on top of it: the lag rule judged the
    // lag beyond the delay, and the text under the stopped thread still says so.
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.sql_delay = Some(5);
        r.sql_running = false;
        r.heartbeat_lag = Lag::Exact { lag: secs(9.0) };
        r.windows[0] = (Window::OneMinute, minute(5.2, 8.9));
        r.beyond_delay = Some(LagBeyondDelay {
            one_minute: minute(0.2, 3.9),
        });
    });
    let view = judged(&topo);
    let lag = find(&view, AlertKind::LagP99High, Some("r1")).expect("lag_p99_high on r1");
    assert_eq!(
        lag.membership.caused_by.as_deref(),
        Some("sql_thread_stopped:r1")
    );
    assert_eq!(
        lag.cause,
        "r1: behind because it stopped applying (lag high beyond the 5s SQL_Delay)"
    );
}
