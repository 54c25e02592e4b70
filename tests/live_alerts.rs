//! Alerts against real servers, each scenario driven by SQL (or a stalled link) on a sandbox:
//! raised within three poll intervals with the evidence, cleared after recovery.

mod common;

use std::time::{Duration, Instant};

use common::{
    BIG_TABLE_ALTER, BIG_TABLE_ROWS, Load, TestSandbox, alert, evidence, primary_and, until,
    until_healthy,
};
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(60);
/// Three poll intervals, plus the store's publication period and a scheduling margin for a busy
/// two-core CI machine.
const RAISE_WITHIN: Duration = Duration::from_secs(4);

fn spec(t: &TestSandbox, replicas: &[&str]) -> EngineSpec {
    primary_and(t, replicas)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_io_thread_stopped_raises_with_evidence_and_clears() {
    let t = TestSandbox::start(1, false);
    // The stop is a statement on a connection already open (an account of the test's own,
    // unlogged): it takes milliseconds, where a spawned client takes what the machine allows.
    t.admin(
        "r1",
        "SET sql_log_bin = 0; \
         CREATE USER 'dba'@'127.0.0.1' IDENTIFIED BY 'dba-test-only'; \
         GRANT ALL ON *.* TO 'dba'@'127.0.0.1'",
    );
    let mut dba = t
        .connect_as("r1", ("dba", "dba-test-only"), Duration::from_secs(10))
        .await;
    let started = Instant::now();
    let engine = Engine::start(&spec(&t, &["r1"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1"], DEADLINE).await;
    let begin = Instant::now();
    dba.query_rows("STOP SLAVE IO_THREAD").await.unwrap();
    let done = Instant::now();
    let (_, took) = until(&engine, "io_thread_stopped", DEADLINE, |s| {
        alert(s, AlertKind::IoThreadStopped, Some("r1"))
    })
    .await;
    assert!(took <= RAISE_WITHIN, "raised after {took:?}");
    // Raised on the first sample that saw the thread stopped (the server's word); its lag
    // evidence is judged from the second, when the heartbeats' absence is measurable.
    let ((a, built), _) = until(&engine, "io_thread_stopped, second sample", DEADLINE, |s| {
        let a = alert(s, AlertKind::IoThreadStopped, Some("r1")).filter(|a| a.count >= 2)?;
        Some((a, started + s.uptime))
    })
    .await;
    // Both numbers: what the server says, and what the heartbeat says: the time since the
    // stop when the alert's snapshot was built, within the estimator's half heartbeat interval
    // and a busy machine's margin. The stop took milliseconds (bounded here), so a bias of half
    // a second lands outside.
    assert!(
        done - begin <= Duration::from_millis(100),
        "the stop took {:?}, too long to tell a bias by",
        done - begin
    );
    assert_eq!(evidence(&a, "seconds_behind_source"), "NULL");
    let shown = evidence(&a, "heartbeat_lag");
    let secs: f64 = shown
        .strip_suffix('s')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("heartbeat_lag evidence {shown:?} is not seconds"));
    let (low, high) = ((built - done).as_secs_f64(), (built - begin).as_secs_f64());
    eprintln!("evidence {shown} for a stop {low:.3}..{high:.3} s before the snapshot");
    assert!(
        secs >= low - 0.2 && secs <= high + 0.2,
        "evidence {shown} for a stop {low:.3}..{high:.3} s before the snapshot"
    );
    t.admin("r1", "START SLAVE IO_THREAD");
    until(&engine, "cleared after catch-up", DEADLINE, |s| {
        alert(s, AlertKind::IoThreadStopped, Some("r1"))
            .is_none()
            .then_some(())
    })
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_sql_thread_stopped_raises_within_three_intervals() {
    let t = TestSandbox::start(1, false);
    let engine = Engine::start(&spec(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    let (a, took) = until(&engine, "sql_thread_stopped", DEADLINE, |s| {
        alert(s, AlertKind::SqlThreadStopped, Some("r1"))
    })
    .await;
    assert!(took <= RAISE_WITHIN, "raised after {took:?}");
    assert_eq!(format!("{:?}", a.severity), "Critical");
    engine.shutdown().await;
}

/// A stopped thread is the server's word, not a reading that may flicker: one sample of it is
/// raised at once, and the alert clears when the thread runs again. (What can flicker, a lag
/// reading or a reconnecting IO thread, still needs a second sample: `live_flapping`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_thread_stopped_for_one_sample_is_raised_at_once_and_clears() {
    let t = TestSandbox::start(1, false);
    let engine = Engine::start(&spec(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    // The first sample that sees it stopped carries the alert.
    let (seq, _) = until(&engine, "one sample of the stopped thread", DEADLINE, |s| {
        let n = s.node("r1")?;
        (!n.replica()?.sql_running).then_some((
            n.sample_seq,
            alert(s, AlertKind::SqlThreadStopped, Some("r1")).is_some(),
        ))
    })
    .await;
    assert!(seq.1, "the first sample of a stopped thread raised nothing");
    t.admin("r1", "START SLAVE SQL_THREAD");
    let (s, _) = until(
        &engine,
        "the thread running again, alert cleared",
        DEADLINE,
        |s| {
            let n = s.node("r1")?;
            (n.sample_seq > seq.0
                && n.replica()?.sql_running
                && alert(s, AlertKind::SqlThreadStopped, Some("r1")).is_none())
            .then(|| s.clone())
        },
    )
    .await;
    let logged: Vec<bool> = s
        .alerts
        .log
        .iter()
        .filter(|e| e.kind == AlertKind::SqlThreadStopped)
        .map(|e| e.raised)
        .collect();
    // Newest first: the clear, then the raise.
    assert_eq!(
        logged,
        [false, true],
        "a raise, then a clear: {:?}",
        s.alerts.log
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_stalled_source_link_is_caught_while_sbm_says_zero() {
    let t = TestSandbox::start_with_relay(1);
    let engine = Engine::start(&spec(&t, &["r1"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1"], DEADLINE).await;
    t.relay("r1").stall();
    let (a, took) = until(&engine, "sbm_understates_lag", DEADLINE, |s| {
        alert(s, AlertKind::SbmUnderstatesLag, Some("r1"))
    })
    .await;
    // The lie itself, as the server tells it: both threads Yes, SBM 0.
    let server = t.admin("r1", "SHOW ALL SLAVES STATUS");
    assert_eq!(server[0].text(&["Slave_IO_Running"]).unwrap(), Some("Yes"));
    assert_eq!(
        server[0].text(&["Seconds_Behind_Master"]).unwrap(),
        Some("0")
    );
    eprintln!("stall caught after {took:?}: {a:?}");
    assert!(
        took <= RAISE_WITHIN + Duration::from_secs(1),
        "raised after {took:?}"
    );
    assert_eq!(evidence(&a, "seconds_behind_source"), "0s");
    assert!(a.cause.contains("source link stalled"), "{}", a.cause);
    t.relay("r1").resume();
    until(&engine, "cleared after the link resumes", DEADLINE, |s| {
        alert(s, AlertKind::SbmUnderstatesLag, Some("r1"))
            .is_none()
            .then_some(())
    })
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_idle_primary_keeps_lag_at_zero_without_alerts() {
    let t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["r1", "r2"]));
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;
    // 30 s with no application writes: only rwtop's heartbeat moves.
    let start = Instant::now();
    let mut rx = engine.snapshots();
    let mut worst = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(30) {
        let _ = rx.changed().await;
        let s = rx.borrow().clone();
        assert!(
            s.alerts.active.is_empty(),
            "alerts on an idle topology: {:?}",
            s.alerts.active
        );
        for r in ["r1", "r2"] {
            match &s.node(r).unwrap().replica().unwrap().heartbeat_lag {
                Lag::Exact { lag } => worst = worst.max(*lag),
                other => panic!("{r}: {other:?} on an idle, healthy topology"),
            }
        }
    }
    assert!(
        worst < Duration::from_millis(500),
        "idle lag reached {worst:?}"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_stopped_heartbeat_writer_is_stale_and_shows_no_current_lag() {
    let t = TestSandbox::start(1, false);
    let engine = Engine::start(&spec(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;
    // The primary made read_only: the writer must stop writing (and says why).
    t.admin("primary", "SET GLOBAL read_only = ON");
    let (s, _) = until(&engine, "heartbeat_stale", DEADLINE, |s| {
        alert(s, AlertKind::HeartbeatStale, None).map(|_| s.clone())
    })
    .await;
    let lag = &s.node("r1").unwrap().replica().unwrap().heartbeat_lag;
    assert!(
        matches!(lag, Lag::Unknown { .. }),
        "a stale heartbeat is not a current lag: {lag:?}"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_write_on_a_replica_is_errant_and_writable() {
    let t = TestSandbox::start(1, false);
    let engine = Engine::start(&spec(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;
    t.admin("r1", "SET GLOBAL read_only = OFF; CREATE TABLE rwtop.errant (id INT PRIMARY KEY); INSERT INTO rwtop.errant VALUES (1)");
    let gtid = t.admin("r1", "SELECT @@global.gtid_binlog_pos AS pos")[0]
        .text(&["pos"])
        .unwrap()
        .unwrap()
        .to_owned();
    let (s, _) = until(
        &engine,
        "errant_transactions and writable_replica",
        DEADLINE,
        |s| {
            (alert(s, AlertKind::ErrantTransactions, Some("r1")).is_some()
                && alert(s, AlertKind::WritableReplica, Some("r1")).is_some())
            .then(|| s.clone())
        },
    )
    .await;
    let errant = alert(&s, AlertKind::ErrantTransactions, Some("r1")).unwrap();
    let listed: String = errant
        .evidence
        .iter()
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(listed.contains(&gtid), "names {gtid}: {listed}");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_rebuilding_alter_is_in_flight_on_primary_then_replicas_and_clears() {
    let t = TestSandbox::start(2, false);
    // A small table (a few MB: the suite runs on machines with little disk to spare) whose
    // rebuild is held on its metadata lock on every node until it has run for seconds there
    // (`alter_big_table`), longer than the processlist cadence; replicated before rwtop starts.
    t.load_big_table(BIG_TABLE_ROWS, DEADLINE);
    let engine = Engine::start(&spec(&t, &["r1", "r2"]));
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;
    // The application runs the ALTER, not rwtop (whose user may not); the primary's alert is
    // watched while it runs there.
    let ((on_primary, _), _) = tokio::join!(
        until(&engine, "ddl_in_flight on the primary", DEADLINE, |s| {
            alert(s, AlertKind::DdlInFlight, Some("primary"))
        }),
        t.alter_big_table(&["r1", "r2"]),
    );
    assert!(
        evidence(&on_primary, "statement").contains(BIG_TABLE_ALTER),
        "{on_primary:?}"
    );
    for r in ["r1", "r2"] {
        let (a, _) = until(&engine, "ddl_in_flight on a replica", DEADLINE, |s| {
            alert(s, AlertKind::DdlInFlight, Some(r))
        })
        .await;
        eprintln!("{r}: {a:?}");
        assert!(a.cause.contains("ALTER"), "{a:?}");
    }
    let (s, _) = until(&engine, "a lagging replica with an ETA", DEADLINE, |s| {
        ["r1", "r2"].iter().find_map(|r| {
            alert(s, AlertKind::DdlInFlight, Some(r))
                .filter(|a| {
                    let eta = format!("eta_{r}");
                    a.evidence
                        .iter()
                        .any(|(k, v)| *k == eta && v.starts_with('~'))
                })
                .map(|_| s.clone())
        })
    })
    .await;
    assert!(s.nodes.iter().any(|n| {
        n.replica()
            .and_then(|r| r.heartbeat_lag.value())
            .is_some_and(|l| l > Duration::from_secs(1))
    }));
    until(&engine, "all clear after catch-up", DEADLINE, |s| {
        s.alerts
            .active
            .iter()
            .all(|a| a.kind != AlertKind::DdlInFlight)
            .then_some(())
    })
    .await;
    engine.shutdown().await;
}
