//! Failover exposure on real servers (docs/failover-exposure.md), one sandbox: a primary, r1 and
//! r2.
//!
//! * The drain: r2 sleeps 4 ms per row it applies of `rwtop.slow` (a trigger of its own, run
//!   for row events), so it applies at most ~250 rows a second whatever else the machine does.
//!   With its SQL thread stopped, 3,000 one-row transactions make a relay log that takes ~12 s
//!   to apply; rwtop's drain estimate, once its apply rate is measured after `START SLAVE
//!   SQL_THREAD`, is checked against when r2 really applied the last row.
//! * The crash: r1's IO thread stopped, exactly 50 transactions committed on the primary
//!   (counted on the primary's `gtid_binlog_pos`), rwtop must say r1 lacks 50 and pick r2; the
//!   primary is then killed with SIGKILL, rwtop keeps saying so as of its last sample, and once
//!   the primary restarts the GTID difference between it and r1 is 50.
//!
//! rwtop runs read-only here, over an empty pt-heartbeat table (its lag is unknown, which the
//! exposure does not need): its own heartbeat writes are transactions too, and would add 4 a
//! second to what r1 lacks.

mod common;

use std::time::{Duration, Instant};

use common::{TestSandbox, engine_spec, until};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::gtid::GtidList;
use rwtop::store::Role;
use rwtop::store::Snapshot;
use rwtop::store::exposure::{ClusterExposure, ReplicaExposure};

const DEADLINE: Duration = Duration::from_secs(40);
const BACKLOG: u64 = 3_000;
const LOST: u64 = 50;
/// How far r2's real drain may land from rwtop's first estimate. The estimate's rate comes from
/// the first 5–7 s of polls after the restart (1 s polls, the applied position read at each)
/// and is extrapolated over the 6–12 s still to go. The trigger's 4 ms sleep is most of each
/// row's apply, but on a busy two-core machine the rest moves the pace by a few percent (missed
/// by 0.03–0.11 s on a quiet machine, 0.35 s at a load average of 14): 5 % of 10 s, plus a
/// publication after the poll and the watcher's 50 ms step, is 0.6 s. An estimate a second
/// off fails, and so does one at a rate off by a tenth.
const ALLOWED: Duration = Duration::from_millis(600);

fn cluster(s: &Snapshot) -> Option<&ClusterExposure> {
    s.exposure.iter().find(|c| c.root == "primary")
}

fn row<'a>(s: &'a Snapshot, node: &str) -> Option<&'a ReplicaExposure> {
    cluster(s)?.replica(node)
}

fn gtid_binlog_pos(t: &TestSandbox, node: &str) -> GtidList {
    let rows = t.admin(node, "SELECT @@gtid_binlog_pos AS p");
    let text = rows[0].optional_text(&["p"]).unwrap_or_default().to_owned();
    GtidList::parse(&text).unwrap_or_else(|e| panic!("{node}: {e}"))
}

fn io_pos(t: &TestSandbox, node: &str) -> GtidList {
    let rows = t.admin(node, "SHOW SLAVE STATUS");
    let text = rows[0]
        .optional_text(&["Gtid_IO_Pos"])
        .unwrap_or_default()
        .to_owned();
    GtidList::parse(&text).unwrap_or_else(|e| panic!("{node}: {e}"))
}

/// `n` transactions on the primary, one row each (autocommit), in one round trip.
async fn commit_each(t: &TestSandbox, table: &str, n: u64) {
    let sql =
        format!("BEGIN NOT ATOMIC FOR i IN 1..{n} DO INSERT INTO {table} VALUES (i); END FOR; END");
    let mut conn = t.connect("primary").await;
    conn.query_rows(&sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_exposure_drain_estimate_and_what_a_crash_loses() {
    let mut t = sandbox();
    let spec = EngineSpec {
        read_only: true,
        ..engine_spec(
            &t,
            &[
                ("primary", Role::Primary),
                ("r1", Role::Replica),
                ("r2", Role::Replica),
            ],
        )
    };
    let engine = Engine::start(&spec);
    drain_estimate(&t, &engine).await;
    what_a_crash_loses(&mut t, engine).await;
}

/// The primary, r1 and r2, r2 applying `rwtop.slow` slowly with its SQL thread stopped, and
/// an empty pt-heartbeat table rwtop may read.
fn sandbox() -> TestSandbox {
    let t = TestSandbox::start(2, false);
    t.admin(
        "primary",
        "CREATE TABLE rwtop.slow (id BIGINT PRIMARY KEY); \
         CREATE TABLE rwtop.lost (id BIGINT PRIMARY KEY); \
         CREATE DATABASE percona; \
         CREATE TABLE percona.heartbeat (ts VARCHAR(26) NOT NULL, \
         server_id INT UNSIGNED NOT NULL PRIMARY KEY)",
    );
    let monitor = &t.sandbox().state().monitor_user;
    t.admin(
        "primary",
        &format!("GRANT SELECT ON percona.* TO '{monitor}'@'127.0.0.1'"),
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    t.slow_applier("r2", "rwtop.slow");
    t
}

/// r2's relay log of 3,000 transactions, its SQL thread started again: the first drain
/// estimate against when it applied the last row.
async fn drain_estimate(t: &TestSandbox, engine: &Engine) {
    // The drain. r2's SQL thread is already stopped: the backlog waits in its relay log.
    commit_each(t, "rwtop.slow", BACKLOG).await;
    let (stopped, _) = until(engine, "r2's relay log of 3,000 trx", DEADLINE, |s| {
        let r2 = row(s, "r2");
        let r2 = r2?;
        // Once the primary's own state is in too (a first poll may come before it).
        (r2.relay_trx == Some(BACKLOG) && r2.not_received.is_some()).then(|| r2.clone())
    })
    .await;
    eprintln!("SQL thread stopped: {stopped:?}");
    assert_eq!(stopped.drain, None);
    assert_eq!(
        stopped.drain_unknown.as_deref(),
        Some("the SQL thread is stopped: nothing drains")
    );
    assert_eq!(stopped.not_received, Some(0));
    t.admin("r2", "START SLAVE SQL_THREAD");
    let restarted = Instant::now();
    let watcher = tokio::spawn({
        let mut conn = t.connect("r2").await;
        async move {
            loop {
                let asked = Instant::now();
                let rows = conn
                    .query_rows("SELECT COUNT(*) AS n FROM rwtop.slow")
                    .await
                    .unwrap();
                if rows[0].optional_u64(&["n"]).unwrap() == Some(BACKLOG) {
                    return asked;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    let ((seen_at, first), _) = until(engine, "a drain estimate on r2", DEADLINE, |s| {
        let r2 = row(s, "r2")?;
        (r2.drain.is_some() && r2.relay_trx > Some(0)).then(|| (Instant::now(), r2.clone()))
    })
    .await;
    let drained = watcher.await.unwrap();
    let eta = first.drain.unwrap();
    let predicted = seen_at + eta;
    let missed = if drained > predicted {
        drained - predicted
    } else {
        predicted - drained
    };
    eprintln!(
        "first estimate {:.2} s after START SLAVE: {} trx at {:.1} trx/s → {:.2} s to go, done at \
         {:.2} s; r2 applied its last row at {:.2} s: missed by {missed:?} (allowed {ALLOWED:?})",
        (seen_at - restarted).as_secs_f64(),
        first.relay_trx.unwrap(),
        first.apply_trx_per_s.unwrap(),
        eta.as_secs_f64(),
        (predicted - restarted).as_secs_f64(),
        (drained - restarted).as_secs_f64(),
    );
    assert!(
        drained > seen_at + Duration::from_secs(3),
        "the relay log drained {:?} after the estimate: too soon to judge it",
        drained - seen_at
    );
    assert!(missed <= ALLOWED, "missed by {missed:?}");
}

/// r1 stops receiving, 50 transactions on the primary, the primary killed.
async fn what_a_crash_loses(t: &mut TestSandbox, engine: Engine) {
    // The crash. Both replicas have everything; r1 stops receiving.
    until(&engine, "both replicas caught up", DEADLINE, |s| {
        let caught_up =
            |n| row(s, n).is_some_and(|r| r.not_received == Some(0) && r.relay_trx == Some(0));
        (caught_up("r1") && caught_up("r2")).then_some(())
    })
    .await;
    t.admin("r1", "STOP SLAVE IO_THREAD");
    let before = gtid_binlog_pos(t, "primary");
    commit_each(t, "rwtop.lost", LOST).await;
    let after = gtid_binlog_pos(t, "primary");
    assert_eq!(
        after.total_distance(&before),
        LOST,
        "the primary took {before} → {after}"
    );
    until(
        &engine,
        "r1 lacks 50 and r2 is the candidate",
        DEADLINE,
        |s| {
            let c = cluster(s)?;
            (c.replica("r1")?.not_received == Some(LOST) && c.candidate.as_ref()?.node == "r2")
                .then_some(())
        },
    )
    .await;
    let last = engine.latest();
    let pid = t.sandbox().pid("primary").expect("the primary's pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let killed = Instant::now();
    let c = cluster(&last).expect("exposure before the kill");
    eprintln!("the last snapshot before the kill: {c:#?}");
    assert!(c.root_answers);
    assert_eq!(c.replica("r1").unwrap().not_received, Some(LOST));
    assert_eq!(c.replica("r2").unwrap().not_received, Some(0));
    let candidate = c.candidate.as_ref().unwrap();
    assert_eq!((candidate.node.as_str(), candidate.loses), ("r2", Some(0)));
    assert_eq!(candidate.reason, "lacks least: 0 trx against 50 on r1");

    // After the crash, the same from rwtop's last picture of the primary.
    let (dead, _) = until(&engine, "the primary no longer answers", DEADLINE, |s| {
        let c = cluster(s)?;
        (!c.root_answers && c.root_sample_age? > Duration::from_secs(2)).then(|| c.clone())
    })
    .await;
    eprintln!(
        "{:.1} s after the kill: {dead:#?}",
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(dead.replica("r1").unwrap().not_received, Some(LOST));
    assert_eq!(dead.replica("r2").unwrap().not_received, Some(0));
    let candidate = dead.candidate.as_ref().unwrap();
    assert_eq!((candidate.node.as_str(), candidate.loses), ("r2", Some(0)));
    engine.shutdown().await;

    // The truth, once the primary is back: r1 has received none of the 50.
    t.restart_stopped();
    let primary = gtid_binlog_pos(t, "primary");
    let r1 = io_pos(t, "r1");
    let lacks = primary.total_distance(&r1);
    eprintln!("after the restart: primary {primary}, r1 received {r1}: r1 lacks {lacks}");
    assert_eq!(primary, after, "the primary lost nothing it had committed");
    assert_eq!(lacks, LOST);
}
