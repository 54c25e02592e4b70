//! The engine end to end: hysteresis over samples, the sample clock, and the simple rules.

use crate::store::testkit::{live, set_clock};
use std::time::Duration;

use crate::alerts::testkit::Judge;

use crate::alerts::{AlertEngine, AlertKind, AlertSettings, Severity};
use crate::gtid::GtidSet;
use crate::mysql::{IoRunning, ThreadError};
use crate::poll::ConnState;
use crate::store::backlog::GtidBacklog;
use crate::store::lag::Lag;
use crate::store::testkit::{Topo, find, secs};
use crate::store::windows::{Window, WindowStats};
use crate::store::{ClockView, LiveParts, Role};

fn error(errno: u32, message: &str) -> ThreadError {
    ThreadError {
        errno,
        message: message.to_owned(),
        timestamp: None,
    }
}

/// r1's IO thread caught reconnecting (`Connecting`), or running again: a state that may
/// flicker, so the hysteresis applies to it.
fn reconnecting(topo: &mut Topo, stopped: bool) {
    topo.replica_mut("r1", |r| {
        r.io_running = if stopped {
            IoRunning::Connecting
        } else {
            IoRunning::Yes
        };
    });
}

/// The alert `reconnecting`'s state raises.
const FLICKER: AlertKind = AlertKind::IoThreadStopped;

#[test]
fn healthy_topologies_raise_nothing() {
    for topo in [Topo::new(), Topo::mysql()] {
        let mut engine = AlertEngine::new(AlertSettings::default());
        for step in 1..=6 {
            let view = engine.evaluate(&topo.at(step));
            assert!(view.active.is_empty(), "{view:#?}");
            assert!(view.log.is_empty());
        }
    }
}

#[test]
fn a_single_bad_sample_raises_nothing() {
    let mut topo = Topo::new();
    let mut engine = AlertEngine::new(AlertSettings::default());
    reconnecting(&mut topo, true);
    assert!(engine.evaluate(&topo.at(1)).active.is_empty());
    reconnecting(&mut topo, false);
    for step in 2..6 {
        let view = engine.evaluate(&topo.at(step));
        assert!(view.active.is_empty() && view.log.is_empty(), "{view:#?}");
    }
}

#[test]
fn a_clean_sample_in_between_resets_the_raise_count() {
    let mut topo = Topo::new();
    let mut engine = AlertEngine::new(AlertSettings::default());
    for (step, stopped) in [(1, true), (2, false), (3, true)] {
        reconnecting(&mut topo, stopped);
        assert!(find(&engine.evaluate(&topo.at(step)), FLICKER, Some("r1")).is_none());
    }
    reconnecting(&mut topo, true);
    let view = engine.evaluate(&topo.at(4));
    let alert = find(&view, FLICKER, Some("r1")).cloned();
    let alert = alert.unwrap_or_else(|| panic!("{view:#?}"));
    assert_eq!((alert.since, alert.count), (topo.at(3).taken_at, 2));
}

#[test]
fn three_clean_samples_clear_and_the_log_keeps_both_events() {
    let mut topo = Topo::new();
    let mut engine = AlertEngine::new(AlertSettings::default());
    reconnecting(&mut topo, true);
    engine.evaluate(&topo.at(1));
    engine.evaluate(&topo.at(2));
    engine.evaluate(&topo.at(3));
    reconnecting(&mut topo, false);
    for step in 4..=5 {
        let view = engine.evaluate(&topo.at(step));
        let alert = find(&view, FLICKER, Some("r1")).cloned();
        assert_eq!(
            alert.map(|a| (a.count, a.last_seen)),
            Some((3, topo.at(3).taken_at))
        );
    }
    let view = engine.evaluate(&topo.at(6));
    assert!(view.active.is_empty());
    assert_eq!(view.log.len(), 2);
    assert!(!view.log[0].raised && view.log[1].raised);
    assert_eq!(
        (view.log[0].at, view.log[1].at),
        (topo.at(6).taken_at, topo.at(2).taken_at)
    );
    assert_eq!(view.log[0].node.as_deref(), Some("r1"));
    assert!(
        view.log[0]
            .summary
            .starts_with("io_thread_stopped on r1 cleared after 3 clean")
    );
}

#[test]
fn hysteresis_counts_are_configurable() {
    let mut topo = Topo::new();
    let settings = AlertSettings {
        raise_after: 3,
        clear_after: 1,
        ..AlertSettings::default()
    };
    let mut engine = AlertEngine::new(settings);
    reconnecting(&mut topo, true);
    assert!(engine.evaluate(&topo.at(1)).active.is_empty());
    assert!(engine.evaluate(&topo.at(2)).active.is_empty());
    assert_eq!(engine.evaluate(&topo.at(3)).active.len(), 1);
    reconnecting(&mut topo, false);
    assert!(engine.evaluate(&topo.at(4)).active.is_empty());
}

#[test]
fn a_sample_is_counted_once_however_many_snapshots_show_it() {
    let mut topo = Topo::new();
    let mut engine = AlertEngine::new(AlertSettings::default());
    reconnecting(&mut topo, true);
    let sample = topo.at(1);
    for quarter in 0..8 {
        let mut snapshot = sample.clone();
        snapshot.uptime += Duration::from_millis(250 * quarter);
        assert!(find(&engine.evaluate(&snapshot), FLICKER, Some("r1")).is_none());
    }
    assert!(find(&engine.evaluate(&topo.at(2)), FLICKER, Some("r1")).is_some());
}

#[test]
fn a_node_that_goes_down_is_raised_on_the_first_snapshot_that_shows_it() {
    let mut topo = Topo::new();
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    topo.node_mut("r2", |n| {
        n.conn = ConnState::Down {
            next: secs(1.0),
            cause: "no answer for 1s".to_owned(),
        };
    });
    // A quarter of a poll interval after the last sample: the state changed, that is news now.
    let mut snapshot = topo.at(1);
    snapshot.uptime += Duration::from_millis(250);
    let view = engine.evaluate(&snapshot);
    let alert = find(&view, AlertKind::NodeDown, Some("r2")).cloned();
    let alert = alert.unwrap_or_else(|| panic!("{view:#?}"));
    assert_eq!(alert.count, 1);
    assert_eq!(alert.cause, "rwtop cannot poll r2: no answer for 1s");
    // Up again: the old sample is not judged again; three new samples clear it.
    topo.node_mut("r2", |n| n.conn = ConnState::Up);
    let mut back = topo.at(1);
    back.uptime += Duration::from_millis(500);
    assert!(find(&engine.evaluate(&back), AlertKind::NodeDown, Some("r2")).is_some());
    for step in 2..=3 {
        assert!(
            find(
                &engine.evaluate(&topo.at(step)),
                AlertKind::NodeDown,
                Some("r2")
            )
            .is_some()
        );
    }
    assert!(
        find(
            &engine.evaluate(&topo.at(4)),
            AlertKind::NodeDown,
            Some("r2")
        )
        .is_none()
    );
}

#[test]
fn stopped_threads_raise_at_once_and_a_reconnecting_one_does_not() {
    let stop = |io: IoRunning, io_error: bool, sql_error: bool| {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.io_running = io;
            r.seconds_behind_source = None;
            r.last_io_error = io_error.then(|| error(1236, "binlog purged"));
        });
        topo.replica_mut("r2", |r| {
            r.sql_running = false;
            r.seconds_behind_source = None;
            r.last_sql_error = sql_error.then(|| error(1062, "Duplicate entry '7'"));
        });
        topo
    };
    let io = AlertKind::IoThreadStopped;
    let sql = AlertKind::SqlThreadStopped;
    // On an error or by hand, the server says the thread is stopped: a fact, raised at once.
    for error in [true, false] {
        let topo = stop(IoRunning::No, error, error);
        assert!(topo.raises_at_once(io, Some("r1")), "error {error}");
        assert!(topo.raises_at_once(sql, Some("r2")), "error {error}");
    }
    // The error alone is a reading: it may be an old one the server still shows.
    let topo = stop(IoRunning::No, true, true);
    assert!(!topo.raises_at_once(AlertKind::ReplicationError, Some("r2")));
    // Caught reconnecting: may be running again at the next poll, so a second sample raises.
    let topo = stop(IoRunning::Connecting, true, false);
    assert!(!topo.raises_at_once(io, Some("r1")));
    topo.raise(io, Some("r1"));
}

#[test]
fn a_node_that_does_not_answer_counts_one_sample_per_poll_interval() {
    let mut topo = Topo::new();
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    topo.node_mut("r2", |n| {
        n.conn = ConnState::Down {
            next: secs(4.0),
            cause: "Connection refused (os error 111)".to_owned(),
        };
        n.channels.clear();
    });
    let down = |half_seconds: u64| {
        let mut snapshot = topo.at(1);
        snapshot.uptime += Duration::from_millis(500 * half_seconds);
        snapshot
    };
    // Raised on the first snapshot that shows it down, then one sample per poll interval.
    let counts: Vec<u64> = [1, 2, 3, 4, 5]
        .into_iter()
        .map(|half| {
            let view = engine.evaluate(&down(half));
            find(&view, AlertKind::NodeDown, Some("r2")).map_or(0, |a| a.count)
        })
        .collect();
    assert_eq!(counts, [1, 1, 2, 2, 3]);
    let view = engine.evaluate(&down(5));
    let alert = find(&view, AlertKind::NodeDown, Some("r2")).cloned();
    let alert = alert.unwrap_or_else(|| panic!("{view:#?}"));
    assert_eq!(
        alert.cause,
        "rwtop cannot poll r2: Connection refused (os error 111)"
    );
    assert_eq!(alert.severity, Severity::Critical);
    // Nothing else is judged on a node that does not answer.
    assert_eq!(view.active.len(), 1, "{view:#?}");
}

#[test]
fn stopped_threads_show_sbm_null_and_the_error() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::Connecting;
        r.seconds_behind_source = None;
        r.last_io_error = Some(error(2003, "error connecting to master 'repl@db1:3306'"));
    });
    topo.replica_mut("r2", |r| {
        r.sql_running = false;
        r.seconds_behind_source = None;
        r.last_sql_error = Some(error(1062, "Duplicate entry '7' for key 'PRIMARY'"));
    });
    let io = topo.raise(AlertKind::IoThreadStopped, Some("r1"));
    assert_eq!(
        io.evidence[0],
        ("seconds_behind_source".to_owned(), "NULL".to_owned())
    );
    assert!(
        io.cause
            .starts_with("IO thread cannot connect to the source: error 2003")
    );
    let sql = topo.raise(AlertKind::SqlThreadStopped, Some("r2"));
    assert_eq!(sql.evidence[0].1, "NULL");
    assert_eq!(
        sql.cause,
        "SQL thread stopped on error 1062: Duplicate entry '7' for key 'PRIMARY'"
    );
    let err = topo.raise(AlertKind::ReplicationError, Some("r2"));
    assert_eq!(
        err.evidence[0].1,
        "1062: Duplicate entry '7' for key 'PRIMARY'"
    );
    assert!(
        topo.raise(AlertKind::ReplicationError, Some("r1"))
            .cause
            .starts_with("IO error 2003")
    );
}

#[test]
fn an_error_on_rwtops_own_table_is_attributed_to_rwtop_with_a_safe_repair() {
    let mut topo = Topo::new();
    let message = "Column 0 of table 'rwtop.heartbeat' cannot be converted from type \
                   'varchar(64 octets)' to type 'varchar(256 octets) character set utf8mb4'";
    topo.replica_mut("r1", |r| {
        r.sql_running = false;
        r.seconds_behind_source = None;
        r.last_sql_error = Some(error(1677, message));
    });
    for kind in [AlertKind::SqlThreadStopped, AlertKind::ReplicationError] {
        let alert = topo.raise(kind, Some("r1"));
        assert!(
            alert.cause.contains("rwtop caused this")
                && alert.cause.contains("only rwtop's own rwtop.heartbeat")
                && alert.cause.contains("sql_log_bin = 0")
                && alert.cause.contains("skip nothing"),
            "{kind:?}: {}",
            alert.cause
        );
        assert!(
            alert
                .evidence
                .contains(&("caused_by".to_owned(), "rwtop (rwtop.heartbeat)".to_owned())),
            "{:?}",
            alert.evidence
        );
    }
    // Another table's error is not rwtop's.
    topo.replica_mut("r2", |r| {
        r.sql_running = false;
        r.last_sql_error = Some(error(1146, "Table 'shop.orders' doesn't exist"));
    });
    assert!(
        !topo
            .raise(AlertKind::SqlThreadStopped, Some("r2"))
            .cause
            .contains("rwtop")
    );
}

#[test]
fn lag_percentile_and_backlog_thresholds() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.windows[0] = (
            Window::OneMinute,
            Some(WindowStats {
                p50: secs(0.2),
                p99: secs(3.5),
                max: secs(4.0),
                samples: 240,
            }),
        ); // Still 2 s behind: the spike is not over.
        r.heartbeat_lag = Lag::Exact { lag: secs(2.0) };
    });
    topo.replica_mut("r2", |r| {
        r.gtid_backlog = GtidBacklog {
            not_received: Some(30),
            not_applied: Some(1_500),
        };
    });
    let p99 = topo.raise(AlertKind::LagP99High, Some("r1"));
    assert_eq!(
        p99.evidence[0],
        ("lag_p99_1m".to_owned(), "3.50s".to_owned())
    );
    assert!(p99.cause.starts_with("lag spiked"));
    let backlog = topo.raise(AlertKind::GtidBacklogHigh, Some("r2"));
    assert_eq!(backlog.evidence[0].1, "1530 trx");
    assert!(backlog.cause.contains("SQL thread cannot keep up"));
    // A missing half is not a reason to stay quiet when the known half is already too much,
    // nor to raise when it is not.
    topo.replica_mut("r2", |r| r.gtid_backlog.not_received = None);
    topo.raise(AlertKind::GtidBacklogHigh, Some("r2"));
    topo.replica_mut("r2", |r| r.gtid_backlog.not_applied = Some(3));
    topo.assert_quiet(AlertKind::GtidBacklogHigh);
}

#[test]
fn clock_skew_and_writable_replica() {
    let mut topo = Topo::new();
    topo.node_mut("r1", |n| set_clock(n, -620));
    topo.node_mut("r2", |n| live(n).read_only = false);
    let skew = topo.raise(AlertKind::ClockSkew, Some("r1"));
    assert_eq!(
        skew.evidence[2],
        ("difference".to_owned(), "620ms".to_owned())
    );
    assert!(skew.cause.starts_with("r1's clock is 620ms behind db1's"));
    let writable = topo.raise(AlertKind::WritableReplica, Some("r2"));
    assert_eq!(
        writable.evidence[1],
        ("read_only".to_owned(), "OFF".to_owned())
    );
    // The primary being writable is the point of a primary.
    topo.node_mut("r2", |n| live(n).read_only = true);
    topo.assert_quiet(AlertKind::WritableReplica);
    let mut topo = Topo::new();
    topo.node_mut("r1", |n| set_clock(n, 480));
    topo.assert_quiet(AlertKind::ClockSkew);
    // An estimate read over a long round trip may be off by half of it: 620 ms within 200 ms of
    // error is no skew beyond 500 ms; beyond both errors it is.
    topo.node_mut("r1", |n| {
        n.clock = Some(ClockView {
            offset_ms: -620,
            error_ms: 150,
        });
    });
    topo.node_mut("db1", |n| {
        n.clock = Some(ClockView {
            offset_ms: 0,
            error_ms: 50,
        });
    });
    topo.assert_quiet(AlertKind::ClockSkew);
    topo.node_mut("r1", |n| set_clock(n, -720));
    let skew = topo.raise(AlertKind::ClockSkew, Some("r1"));
    assert!(
        skew.evidence
            .contains(&("estimate_error".to_owned(), "200ms".to_owned())),
        "{:?}",
        skew.evidence
    );
}

#[test]
fn critical_alerts_come_first() {
    let mut topo = Topo::new();
    topo.node_mut("r2", |n| live(n).read_only = false);
    topo.replica_mut("r1", |r| {
        r.last_sql_error = Some(error(1146, "Table 'x' doesn't exist"));
    });
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    let view = engine.evaluate(&topo.at(2));
    let order: Vec<_> = view.active.iter().map(|a| a.severity).collect();
    assert_eq!(order, vec![Severity::Critical, Severity::Warning]);
}

#[test]
fn a_node_that_leaves_takes_its_alerts_with_it() {
    let mut topo = Topo::new();
    topo.node_mut("r2", |n| live(n).read_only = false);
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    assert_eq!(engine.evaluate(&topo.at(2)).active.len(), 1);
    topo.snapshot.nodes.retain(|n| n.name != "r2");
    let view = engine.evaluate(&topo.at(3));
    assert!(view.active.is_empty());
    assert!(
        view.log[0]
            .summary
            .ends_with("(held 2 samples since 22:13:21)"),
        "{:?}",
        view.log
    );
}

#[test]
fn a_configured_replica_without_replication_is_stopped() {
    let mut topo = Topo::new();
    topo.node_mut("r1", |n| n.channels.clear());
    let alert = topo.raise(AlertKind::IoThreadStopped, Some("r1"));
    assert!(alert.cause.starts_with("no replication configured"));
    topo.node_mut("r1", |n| n.role = Role::Primary);
    topo.assert_quiet(AlertKind::IoThreadStopped);
}

#[test]
fn mysql_family_is_judged_too() {
    let mut topo = Topo::mysql();
    let uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    let ahead = GtidSet::parse(&format!(
        "{uuid}:1-100,9e11fa47-71ca-11e1-9e33-c80aa9429562:5"
    ));
    topo.node_mut("r2", |n| {
        n.live = ahead.ok().map(|executed| LiveParts {
            gtid: crate::mysql::GtidState::Mysql { executed },
            ..live(n).clone()
        });
    });
    topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(0.5) });
    let alert = topo.raise(AlertKind::ErrantTransactions, Some("r2"));
    assert_eq!(
        alert.evidence[0].1,
        "9e11fa47-71ca-11e1-9e33-c80aa9429562:5"
    );
}

#[test]
fn sample_clocks_step_by_the_interval_without_drift_or_bursts() {
    let s = Duration::from_millis;
    let every = s(1000);
    assert_eq!(super::tick(None, s(500), every), Some(s(500)));
    assert_eq!(super::tick(Some(s(0)), s(990), every), None);
    assert_eq!(super::tick(Some(s(0)), s(1240), every), Some(s(1000)));
    assert_eq!(super::tick(Some(s(0)), s(7000), every), Some(s(7000)));
}

#[path = "channels.rs"]
mod channels;
