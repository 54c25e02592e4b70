//! A replica whose applier applies nothing is scanned every 15th poll rather than every 3rd
//! (`PollParts::when_idle`): the servers' own `Com_show_processlist` counts say how often each
//! node was scanned while rwtop watched a quiet topology (its heartbeat writer replicating four
//! times a second). A schema change a DBA runs on such a replica by hand, outside replication,
//! is still seen, within the thinner cadence, and named as a client's statement.

mod common;

use std::time::{Duration, Instant};

use common::{TestSandbox, primary_and, until, until_healthy};
use rwtop::engine::Engine;
use rwtop::poll::node_poller::QUIET_SCAN_EVERY;
use rwtop::store::Snapshot;

const DEADLINE: Duration = Duration::from_secs(60);
/// How long the scans are counted: 30 polls of each node, 10 scans at the usual cadence and 2
/// at the quiet one.
const WATCH: Duration = Duration::from_secs(30);
/// The ALTER a DBA runs on r2 alone; it waits for the table's metadata lock, which the test
/// holds, so it stays in the processlist as long as the test needs.
const ALTER: &str = "ALTER TABLE rwtop.held ADD COLUMN note INT";

fn scans(t: &TestSandbox, node: &str) -> u64 {
    t.counter(node, "Com_show_processlist")
}

/// The DDL statements the snapshot shows on `node`: (statement, run by the applier).
fn ddl(s: &Snapshot, node: &str) -> Vec<(String, bool)> {
    s.nodes
        .iter()
        .filter(|n| n.name == node)
        .flat_map(|n| n.ddl().iter().map(|d| (d.statement.clone(), d.applier)))
        .collect()
}

/// The DBA's account (not rwtop's monitor user, which may not write).
const DBA: (&str, &str) = ("dba", "dba-test-only");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_an_idle_replica_is_scanned_less_and_a_ddl_run_on_it_is_still_seen() {
    let t = TestSandbox::start(2, false);
    t.admin(
        "primary",
        "CREATE TABLE rwtop.held (id INT PRIMARY KEY); INSERT INTO rwtop.held VALUES (1); \
         CREATE USER 'dba'@'127.0.0.1' IDENTIFIED BY 'dba-test-only'; \
         GRANT ALL ON *.* TO 'dba'@'127.0.0.1'",
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let engine = Engine::start(&primary_and(&t, &["r1", "r2"]));
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    let nodes = ["primary", "r1", "r2"];
    let before: Vec<u64> = nodes.iter().map(|n| scans(&t, n)).collect();
    let from = Instant::now();
    until(&engine, "30 polls of every node", DEADLINE, |_| {
        (from.elapsed() >= WATCH).then_some(())
    })
    .await;
    let counted: Vec<u64> = nodes
        .iter()
        .zip(&before)
        .map(|(n, b)| scans(&t, n) - b)
        .collect();
    eprintln!("scans in {WATCH:?}: primary, r1, r2 = {counted:?}");
    // The primary replicates from nothing: every 3rd poll (10), give or take a slow tick.
    assert!(counted[0] >= 8, "the primary's usual cadence: {counted:?}");
    // The replicas: every 15th (2), plus a scan at each edge should a poll land while a
    // heartbeat is being applied; at the usual cadence they would be 10.
    assert!(
        counted[1] <= 5 && counted[2] <= 5,
        "idle replicas scanned every {QUIET_SCAN_EVERY}th poll: {counted:?}"
    );
    assert!(
        counted[1] >= 1 && counted[2] >= 1,
        "idle replicas still scanned: {counted:?}"
    );

    // A DBA's ALTER on r2 alone, waiting on the lock the test holds (nothing replicated
    // touches the table, so r2's applier stays idle).
    let mut holder = t.connect_as("r2", DBA, Duration::from_secs(10)).await;
    holder.query_rows("START TRANSACTION").await.unwrap();
    holder
        .query_rows("SELECT id FROM rwtop.held")
        .await
        .unwrap();
    let mut dba = t.connect_as("r2", DBA, Duration::from_secs(600)).await;
    let alter = tokio::spawn(async move {
        dba.query_rows("SET SESSION sql_log_bin = 0").await.unwrap();
        dba.query_rows(ALTER).await.unwrap();
        dba.close().await;
    });
    let (seen, took) = until(&engine, "r2's ALTER shown", DEADLINE, |s| {
        let on_r2 = ddl(s, "r2");
        (!on_r2.is_empty()).then_some(on_r2)
    })
    .await;
    eprintln!("r2's hand-run ALTER shown after {took:?}: {seen:?}");
    assert!(
        seen.iter()
            .any(|(sql, applier)| sql.starts_with(ALTER) && !applier),
        "a client's ALTER on r2: {seen:?}"
    );
    // Within the quiet cadence: 15 polls, and a slow machine's slack.
    let within = Duration::from_secs(QUIET_SCAN_EVERY + 5);
    assert!(took <= within, "shown after {took:?}, more than {within:?}");
    let (again, _) = until(&engine, "r1 and the primary show no DDL", DEADLINE, |s| {
        Some(ddl(s, "r1").len() + ddl(s, "primary").len())
    })
    .await;
    assert_eq!(again, 0, "only r2 runs it");

    holder.query_rows("COMMIT").await.unwrap();
    alter.await.unwrap();
    until(&engine, "r2's ALTER gone", DEADLINE, |s| {
        ddl(s, "r2").is_empty().then_some(())
    })
    .await;
    holder.close().await;
    engine.shutdown().await;
}
