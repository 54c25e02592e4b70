//! A replica's heartbeat reading comes from its applied GTID position where that tells
//! (`src/poll/beat_gtid.rs`), so the heartbeat table is not read. Shown on a replica that
//! filters rwtop's schema out (`replicate_wild_ignore_table = 'rwtop.%'`): it has no heartbeat
//! table, yet applies everything, and its `gtid_slave_pos` moves past every heartbeat.
//! By position its lag is exact, small while it applies and growing while its SQL thread is
//! stopped; read from the table (`by_position = false`) it can only be bounded. The server's
//! own counters show that a normal replica read by position gets no heartbeat reads.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, eventually, exact, lag, primary_and, until};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::NodeConn;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);
/// A caught-up replica's exact lag, with room for a slow machine.
const SMALL: Duration = Duration::from_millis(600);
/// How far an exact lag may be from the time since a stop: the estimator's half heartbeat
/// interval (125 ms) and a busy machine's margin.
const MARGIN: Duration = Duration::from_millis(200);
/// The longest the stop may take: longer would widen the truth's span enough to hide a bias.
const STOP_WITHIN: Duration = Duration::from_millis(100);
/// How long the table-only engine is watched: many readings of every replica.
const WATCH: Duration = Duration::from_secs(5);
/// Longer than a status interval (1 s): a poller reading its table reads it every 250 ms.
const QUIET: Duration = Duration::from_millis(1500);

/// The server's global count of `EXECUTE` statements: the prepared heartbeat read is the only
/// one a replica gets here (`src/mysql/prepared.rs`).
fn executes(t: &TestSandbox, node: &str) -> u64 {
    t.counter(node, "Com_execute_sql")
}

/// Waits until `node`'s heartbeat reads stop: no `EXECUTE` for [`QUIET`]. Read from the table
/// they come every 250 ms, so a poller that never turns to the position never gets there.
async fn until_no_reads(t: &TestSandbox, node: &str) {
    let mut count = executes(t, node);
    let mut quiet_from = Instant::now();
    let what = format!("{node}'s heartbeat reads to stop after both replicas read exact");
    eventually(&what, DEADLINE, async || {
        let now = executes(t, node);
        if now != count {
            count = now;
            quiet_from = Instant::now();
        }
        (quiet_from.elapsed() >= QUIET).then_some(())
    })
    .await;
}

/// Stopped, r2 falls behind by the time since the stop, as its position says: when the
/// snapshot was built, within the estimator's half heartbeat interval and a busy machine's
/// margin either way. The stop is a statement on an open connection (milliseconds, bounded
/// here), so a bias of half a second fails. `started`: when the engine started.
async fn r2_falls_behind_by_the_stop(engine: &Engine, dba: &mut NodeConn, started: Instant) {
    let begin = Instant::now();
    dba.query_rows("STOP SLAVE SQL_THREAD").await.unwrap();
    let done = Instant::now();
    let ((behind, built), _) = until(engine, "r2 behind by 2 s", DEADLINE, |s| {
        let lag = exact(s, "r2").filter(|l| *l >= Duration::from_secs(2))?;
        Some((lag, started + s.uptime))
    })
    .await;
    let (low, high) = (built - done, built - begin);
    eprintln!("r2 read {behind:?} {low:?}..{high:?} after its SQL thread stopped");
    assert!(
        done - begin <= STOP_WITHIN,
        "the stop took {:?}",
        done - begin
    );
    assert!(
        behind + MARGIN >= low && behind <= high + MARGIN,
        "r2 read {behind:?} {low:?}..{high:?} after its SQL thread stopped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_replica_without_the_heartbeat_table_is_read_by_its_position() {
    let t = TestSandbox::start(2, false);
    t.admin(
        "r2",
        "STOP SLAVE; SET GLOBAL replicate_wild_ignore_table = 'rwtop.%'; START SLAVE",
    );
    let mut dba = common::dba(&t, "r2").await;
    let spec = primary_and(&t, &["r1", "r2"]);
    let started = Instant::now();
    let engine = Engine::start(&spec);
    let _load = Load::start(&t).await;
    until(
        &engine,
        "both replicas read exact and small",
        DEADLINE,
        |s| {
            let small = |r| exact(s, r).is_some_and(|l| l <= SMALL);
            (small("r1") && small("r2")).then_some(())
        },
    )
    .await;
    let tables = t.admin(
        "r2",
        "SELECT COUNT(*) AS n FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = 'rwtop' AND TABLE_NAME = 'heartbeat'",
    );
    assert_eq!(
        tables[0].optional_u64(&["n"]).unwrap(),
        Some(0),
        "r2 filters rwtop's schema: its lag can only have come from its position"
    );

    // Read by position, r1 gets no heartbeat reads. A replica turns to its position at its
    // first status poll that finds the writer's first heartbeat applied; r2 may have had its
    // poll first, so r1's table reads are waited out (more than a status interval of quiet).
    until_no_reads(&t, "r1").await;
    let before = executes(&t, "r1");
    let from = Instant::now();
    until(&engine, "a few seconds of readings", DEADLINE, |s| {
        (from.elapsed() >= WATCH && exact(s, "r1").is_some_and(|l| l <= SMALL)).then_some(())
    })
    .await;
    let read_by_position = executes(&t, "r1") - before;

    r2_falls_behind_by_the_stop(&engine, &mut dba, started).await;
    t.admin("r2", "START SLAVE SQL_THREAD");
    until(&engine, "r2 caught up again", DEADLINE, |s| {
        exact(s, "r2").filter(|l| *l <= SMALL)
    })
    .await;
    engine.shutdown().await;

    // The same replicas read from the table: r2 has none, so it is only ever bounded, and r1's
    // reads reach the server.
    let table_only = EngineSpec {
        by_position: false,
        ..spec
    };
    let engine = Engine::start(&table_only);
    until(&engine, "r1 exact from its row", DEADLINE, |s| {
        exact(s, "r1").filter(|l| *l <= SMALL)
    })
    .await;
    let before = executes(&t, "r1");
    let from = Instant::now();
    let mut r2_exact = Vec::new();
    let (last, _) = until(&engine, "table-only readings", DEADLINE + WATCH, |s| {
        r2_exact.extend(exact(s, "r2"));
        (from.elapsed() >= WATCH).then(|| lag(s, "r2"))
    })
    .await;
    let read_from_table = executes(&t, "r1") - before;
    engine.shutdown().await;
    eprintln!(
        "EXECUTEs on r1 in {WATCH:?}: {read_by_position} by position, {read_from_table} from \
         the table; r2 from the table ended at {last:?}"
    );
    assert!(
        r2_exact.is_empty(),
        "r2 has no heartbeat table, yet read exact lags from it: {r2_exact:?}"
    );
    assert!(
        matches!(last, Some(Lag::AtLeast { .. } | Lag::Unknown { .. })),
        "{last:?}"
    );
    assert_eq!(
        read_by_position, 0,
        "r1 was read by position, yet its heartbeat row was read {read_by_position} times"
    );
    // Four readings a second, less a slow machine's misses.
    assert!(
        read_from_table >= 10,
        "read from the table, r1 got only {read_from_table} heartbeat reads in {WATCH:?}"
    );
}
