//! The engine against real servers: heartbeat lag, GTID backlog and connection states must tell
//! the truth while replication is stopped, delayed, killed or frozen.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, engine_spec, exact, lag, until};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::NodeConn;
use rwtop::store::Role;
use rwtop::store::lag::Lag;
use rwtop::store::windows::Window;

const DEADLINE: Duration = Duration::from_secs(40);
const INTERVAL: Duration = Duration::from_secs(1);
const HEARTBEAT: Duration = Duration::from_millis(250);
/// The heartbeat read pace of the test that judges the windows' largest reading.
const READ_OFTEN: Duration = Duration::from_millis(50);
/// The longest a stop or a start on an open connection may take: longer would widen the
/// truth's span enough to hide part of a bias.
const STOP_WITHIN: Duration = Duration::from_millis(100);

fn spec(t: &TestSandbox, names: &[&str]) -> EngineSpec {
    let nodes: Vec<(&str, Role)> = names
        .iter()
        .map(|n| {
            (
                *n,
                if *n == "primary" {
                    Role::Primary
                } else {
                    Role::Replica
                },
            )
        })
        .collect();
    let spec = engine_spec(t, &nodes);
    assert_eq!(
        (spec.interval, spec.heartbeat_interval),
        (INTERVAL, HEARTBEAT)
    );
    spec
}

async fn sql(conn: &mut NodeConn, sql: &str) {
    conn.query_rows(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Waits until every replica reads an exact lag of 0: the writer runs and they caught up.
async fn settled(engine: &Engine, replicas: &[&str]) {
    until(
        engine,
        "replicas caught up on the heartbeat",
        DEADLINE,
        |s| {
            replicas
                .iter()
                .all(|r| exact(s, r) == Some(Duration::ZERO))
                .then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_caught_up_replicas_read_lag_below_one_heartbeat() {
    let t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["primary", "r1", "r2"]));
    let _load = Load::start(&t).await;
    settled(&engine, &["r1", "r2"]).await;
    let (s, _) = until(
        &engine,
        "20 exact lag readings per replica",
        DEADLINE,
        |s| {
            let enough = ["r1", "r2"].iter().all(|r| {
                s.node(r)
                    .and_then(|n| n.replica())
                    .and_then(|r| r.windows[0].1)
                    .is_some_and(|w| w.samples >= 20)
            });
            enough.then(|| s.clone())
        },
    )
    .await;
    for name in ["r1", "r2"] {
        let node = s.node(name).unwrap();
        assert_eq!(
            node.source.as_deref(),
            Some("primary"),
            "topology from the replica's own status"
        );
        let r = node.replica().unwrap();
        let (window, stats) = r.windows[0];
        assert_eq!(window, Window::OneMinute);
        let stats = stats.unwrap();
        eprintln!("{name}: {stats:?}");
        // The truth is a few milliseconds: most readings find the newest heartbeat applied
        // (exactly 0), the rest catch one in flight. A median a fifth of an interval up is a
        // bias, not the replica.
        assert!(
            stats.p50 <= HEARTBEAT / 5,
            "{name}: P50 {:?} under steady writes",
            stats.p50
        );
        assert_eq!(
            r.gtid_backlog.not_received.map(|n| n <= 2),
            Some(true),
            "{name}"
        );
    }
    assert!(!s.heartbeat.stale);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_sql_thread_stopped_for_3s_reads_3s_of_lag() {
    let t = TestSandbox::start(1, false);
    let mut dba = common::dba(&t, "r1").await;
    // The windows keep readings as read: read often, so the last one before the restart is
    // at most a short read interval old.
    let engine = Engine::start(&EngineSpec {
        read_interval: READ_OFTEN,
        ..spec(&t, &["primary", "r1"])
    });
    let _load = Load::start(&t).await;
    settled(&engine, &["r1"]).await;

    let stop_begin = Instant::now();
    sql(&mut dba, "STOP SLAVE SQL_THREAD").await;
    let stop_done = Instant::now();
    // While stopped: transactions are received but not applied, and SBM is NULL.
    let (during, _) = until(
        &engine,
        "backlog of received, unapplied transactions",
        DEADLINE,
        |s| {
            let r = s.node("r1")?.replica().cloned()?;
            (r.gtid_backlog.not_applied? > 0 && !r.sql_running).then_some(r)
        },
    )
    .await;
    assert!(
        during.gtid_backlog.not_received.unwrap() <= 2,
        "{:?}",
        during.gtid_backlog
    );
    assert_eq!(during.seconds_behind_source, None);
    let hold = Duration::from_secs(3).saturating_sub(stop_done.elapsed());
    tokio::time::sleep(hold).await; // the stop itself is the scenario, not a wait for a condition
    let start_sent = Instant::now();
    sql(&mut dba, "START SLAVE SQL_THREAD").await;
    let stopped_min = start_sent - stop_done;
    let stopped_max = stop_begin.elapsed();
    // The largest exact lag seen while the thread was stopped is the stop's length.
    let (max, _) = until(&engine, "caught up again", DEADLINE, |s| {
        let r = s.node("r1")?.replica().cloned()?;
        let caught_up = exact(s, "r1") == Some(Duration::ZERO) && r.sql_running;
        caught_up.then(|| r.windows[0].1.map(|w| w.max))?
    })
    .await;
    // The last reading before the restart can be a read interval old, and each is off by at
    // most half a heartbeat interval either way (`store/lag.rs`), plus a busy machine's
    // jitter. The stop and the start are statements on an open connection (milliseconds), so
    // a bias of half a second lands at least 0.5 − 0.05 − 0.125 = 0.325 s from the stop's
    // length, beyond either margin.
    let jitter = Duration::from_millis(75);
    let (below, above) = (READ_OFTEN + HEARTBEAT / 2 + jitter, HEARTBEAT / 2 + jitter);
    eprintln!("stopped {stopped_min:?}..{stopped_max:?}, max heartbeat lag {max:?}");
    let took = stopped_max.saturating_sub(stopped_min);
    assert!(
        took <= STOP_WITHIN,
        "stop and start took {took:?}, too long to tell a bias by"
    );
    assert!(
        max + below >= stopped_min && max <= stopped_max + above,
        "max lag {max:?}, stopped {stopped_min:?}..{stopped_max:?}"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_io_thread_stopped_grows_not_received_and_lag() {
    let t = TestSandbox::start(1, false);
    let mut dba = common::dba(&t, "r1").await;
    let started = Instant::now();
    let engine = Engine::start(&spec(&t, &["primary", "r1"]));
    let _load = Load::start(&t).await;
    settled(&engine, &["r1"]).await;
    let begin = Instant::now();
    sql(&mut dba, "STOP SLAVE IO_THREAD").await;
    let done = Instant::now();
    let mut seen = Vec::new();
    let ((r, lag, built), _) = until(
        &engine,
        "not_received growing and lag over 1.5 s",
        DEADLINE,
        |s| {
            let r = s.node("r1")?.replica().cloned()?;
            seen.push(r.gtid_backlog.not_received?);
            let growing = seen.len() > 3 && seen.last() > seen.first();
            let lag = exact(s, "r1")?;
            (growing && lag > Duration::from_millis(1500)).then_some((r, lag, started + s.uptime))
        },
    )
    .await;
    // The lag is the time since the stop when the snapshot was built, within the estimator's
    // half interval and a busy machine's margin either way: a bias of half a second fails.
    let (low, high) = (built - done, built - begin);
    eprintln!("IO thread stopped {low:?}..{high:?} before the snapshot: lag {lag:?}");
    assert!(
        done - begin <= STOP_WITHIN,
        "the stop took {:?}",
        done - begin
    );
    let margin = HEARTBEAT / 2 + Duration::from_millis(75);
    assert!(
        lag + margin >= low && lag <= high + margin,
        "lag {lag:?} for a stop {low:?}..{high:?} before the snapshot"
    );
    // SBM exactly as the server reports it: NULL with the IO thread stopped.
    let server = t.admin("r1", "SHOW ALL SLAVES STATUS");
    assert_eq!(server[0].text(&["Seconds_Behind_Master"]).unwrap(), None);
    assert_eq!(r.seconds_behind_source, None);
    assert!(r.gtid_backlog.not_received.unwrap() > 0);
    assert_eq!(
        r.bytes_behind.io.map(|b| b > 0),
        Some(true),
        "{:?}",
        r.bytes_behind
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_master_delay_2s_reads_about_2s() {
    let t = TestSandbox::start(1, false);
    t.admin(
        "r1",
        "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY=2; START SLAVE",
    );
    let engine = Engine::start(&spec(&t, &["primary", "r1"]));
    let _load = Load::start(&t).await;
    // MariaDB holds each event until its whole-second timestamp plus the delay plus a clock
    // difference to the source it took in whole seconds (0 or 1 on one host) has passed, so it
    // applies a second's worth of commits at once, at a phase of its own: a model of the truth
    // is a second off on either side of that phase. The truth is watched instead: the age of
    // the newest stamp r1 applied, which is what the rule did. Every reading is judged against
    // it, with no whole second allowed (`lag_truth::judge_delayed`).
    let truth = common::lag_truth::LagTruth::watch(&t, "r1").await;
    let mut errors_ms = Vec::new();
    let mut readings = Vec::new();
    until(
        &engine,
        "40 exact readings from the delayed replica",
        DEADLINE,
        |s| {
            // Skip the start, before the delay shows in the heartbeat.
            if let Some(lag) = exact(s, "r1").filter(|l| *l > Duration::from_millis(500))
                && let Some(truth) = truth.lag_at(s.taken_at)
            {
                let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
                errors_ms.push(ms(lag) - ms(truth));
                readings.push((lag, truth));
            }
            (readings.len() >= 40).then_some(())
        },
    )
    .await;
    eprintln!("MASTER_DELAY=2: (reading, truth) {readings:?}");
    common::lag_truth::judge_delayed("MASTER_DELAY=2", &errors_ms);
    let s = engine.latest();
    assert_eq!(s.node("r1").unwrap().replica().unwrap().sql_delay, Some(2));
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_killed_replica_goes_down_fast_and_comes_back() {
    let mut t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["primary", "r1", "r2"]));
    let _load = Load::start(&t).await;
    settled(&engine, &["r1", "r2"]).await;
    let pid = t.sandbox().pid("r1").unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let killed = Instant::now();
    let (s, _) = until(&engine, "r1 down", DEADLINE, |s| {
        (s.node("r1")?.conn.name() == "down").then(|| s.clone())
    })
    .await;
    let took = killed.elapsed();
    assert!(took <= 2 * INTERVAL, "down after {took:?}");
    let r1 = s.node("r1").unwrap();
    // Its channel stays, with no last values: the lag unknown, nothing live.
    let kept = r1.replica().expect("a dead replica keeps its channel");
    assert!(
        matches!(kept.heartbeat_lag, Lag::Unknown { .. })
            && kept.seconds_behind_source.is_none()
            && !kept.sql_running,
        "last values shown for a dead node: {kept:?}"
    );
    assert_eq!(
        r1.role,
        Role::Replica,
        "a dead replica stays a replica in the tree"
    );
    // The other replica keeps flowing meanwhile.
    let r2 = s.node("r2").unwrap();
    assert!(
        r2.sample_age.unwrap() <= 2 * INTERVAL,
        "{:?}",
        r2.sample_age
    );
    assert!(matches!(lag(&s, "r2"), Some(Lag::Exact { .. })));

    t.restart_stopped();
    until(&engine, "r1 up again with an exact lag", DEADLINE, |s| {
        (s.node("r1")?.conn.name() == "up" && exact(s, "r1").is_some()).then_some(())
    })
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_frozen_replica_times_out_without_delaying_others() {
    let t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["primary", "r1", "r2"]));
    settled(&engine, &["r1", "r2"]).await;
    let pid = nix::unistd::Pid::from_raw(t.sandbox().pid("r1").unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let mut worst_r2_age = Duration::ZERO;
    let (s, _) = until(&engine, "r1 retrying or down", DEADLINE, |s| {
        worst_r2_age = worst_r2_age.max(s.node("r2")?.sample_age?);
        matches!(s.node("r1")?.conn.name(), "retrying" | "down").then(|| s.clone())
    })
    .await;
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    let detail = format!("{:?}", s.node("r1").unwrap().conn);
    assert!(
        detail.contains("no answer for")
            || detail.contains("within")
            || detail.contains("handshake"),
        "timeout named: {detail}"
    );
    assert!(
        worst_r2_age <= 2 * INTERVAL,
        "r2 delayed: sample age {worst_r2_age:?}"
    );
    until(&engine, "r1 back up", DEADLINE, |s| {
        (s.node("r1")?.conn.name() == "up").then_some(())
    })
    .await;
    engine.shutdown().await;
}
