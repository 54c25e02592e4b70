//! A schema change that waits for a lock says so, on the node where it waits: on the primary
//! behind an application's open transaction (and every later query on the table queues behind
//! it), on a replica whose applier waits behind a long read there, and behind a backup's lock.
//! Each wait is made by the test on real servers; rwtop has only its scans to go by.

mod common;

use std::time::Duration;

use common::{APP, TestSandbox, alert, eventually, evidence, primary_and, until, until_healthy};
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;

const DEADLINE: Duration = Duration::from_secs(60);
const KIND: AlertKind = AlertKind::DdlInFlight;
/// Small: the waits are what is watched, not the copy.
const ROWS: u32 = 2_000;

/// Waits for `node`'s `ddl_in_flight` alert to show the ALTER waiting for `lock`, and checks
/// that its cause starts with `starts` and says `ends` before naming who blocks it.
async fn waiting_alert(engine: &Engine, node: &str, lock: &str, (starts, ends): (&str, &str)) {
    let what = format!("{node}'s ddl_in_flight waiting for the {lock}");
    let (cause, _) = until(engine, &what, DEADLINE, |s| {
        let a = alert(s, KIND, Some(node))?;
        let shows = a
            .evidence
            .iter()
            .any(|(k, v)| k == "waiting_for" && v == lock);
        let banner = s.node(node).is_some_and(|n| {
            n.ddl()
                .iter()
                .any(|d| d.waiting_for.as_deref() == Some(lock))
        });
        (shows && banner).then(|| {
            assert_eq!(evidence(&a, "waiting_for"), lock);
            eprintln!("{node}: {}", a.cause);
            a.cause
        })
    })
    .await;
    // The holders follow, read in the poll that saw the wait (tests/live_blockers.rs).
    let (said, holders) = cause.split_once("; blocked by #").unwrap_or((&cause, ""));
    assert!(
        said.starts_with(starts) && said.ends_with(ends) && !holders.is_empty(),
        "{cause}"
    );
}

/// Waits until no node shows a DDL and no `ddl_in_flight` alert is active.
async fn no_ddl(engine: &Engine, what: &str) {
    until(engine, what, DEADLINE, |s| {
        let quiet = s.nodes.iter().all(|n| n.ddl().is_empty());
        (quiet && s.alerts.active.iter().all(|a| a.kind != KIND)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_ddl_waiting_for_a_lock_says_which_and_what_it_holds_up() {
    let t = TestSandbox::start(1, false);
    t.load_big_table(ROWS, DEADLINE);
    t.admin(
        "primary",
        "CREATE USER 'dba'@'127.0.0.1' IDENTIFIED BY 'dba-test-only'; \
         GRANT RELOAD ON *.* TO 'dba'@'127.0.0.1'",
    );
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;
    let app = async || t.connect_as("primary", APP, Duration::from_secs(120)).await;

    // 1. On the primary, behind an application's open transaction; a read of the table sent
    // after it queues behind the waiting ALTER.
    let mut primary_hold = t.hold_big_table("primary").await;
    // And on the replica a transaction that has read the table, for when the ALTER gets there.
    let mut replica_hold = t.hold_big_table("r1").await;
    let alter = common::in_background(
        app().await,
        "ALTER TABLE rwtop.big ADD COLUMN c INT, ALGORITHM=INPLACE",
    );
    waiting_alert(
        &engine,
        "primary",
        "table metadata lock",
        (
            "primary running ALTER for ",
            "waiting for table metadata lock: every later query on the table queues behind it",
        ),
    )
    .await;
    let read = common::in_background(app().await, "SELECT COUNT(*) FROM rwtop.big");
    let mut watch = t.connect("primary").await;
    eventually("the read queued behind the ALTER", DEADLINE, async || {
        let rows = watch
            .query_rows(
                "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST \
                 WHERE INFO = 'SELECT COUNT(*) FROM rwtop.big' \
                 AND STATE = 'Waiting for table metadata lock'",
            )
            .await
            .unwrap();
        (rows[0].optional_u64(&["n"]).unwrap() == Some(1)).then_some(())
    })
    .await;
    watch.close().await;

    // 2. Released on the primary, the ALTER runs there, then waits on the replica behind its
    // open transaction, and replication with it.
    primary_hold.query_rows("COMMIT").await.unwrap();
    alter.await.unwrap().close().await;
    read.await.unwrap().close().await;
    waiting_alert(
        &engine,
        "r1",
        "table metadata lock",
        (
            "r1 applying ALTER for ",
            "waiting for table metadata lock: replication waits behind it",
        ),
    )
    .await;
    replica_hold.query_rows("COMMIT").await.unwrap();
    no_ddl(&engine, "the ALTER done everywhere").await;

    // 3. Behind a backup's lock (what mariabackup takes): the ALTER waits, nothing else does.
    let mut dba = t
        .connect_as("primary", ("dba", "dba-test-only"), Duration::from_secs(10))
        .await;
    for sql in ["BACKUP STAGE START", "BACKUP STAGE BLOCK_DDL"] {
        dba.query_rows(sql).await.unwrap();
    }
    let alter = common::in_background(
        app().await,
        "ALTER TABLE rwtop.big ADD COLUMN d INT, ALGORITHM=INPLACE",
    );
    waiting_alert(
        &engine,
        "primary",
        "backup lock",
        ("primary running ALTER for ", ", waiting for backup lock"),
    )
    .await;
    dba.query_rows("BACKUP STAGE END").await.unwrap();
    alter.await.unwrap().close().await;
    no_ddl(&engine, "the second ALTER done").await;
    dba.close().await;
    primary_hold.close().await;
    replica_hold.close().await;
    engine.shutdown().await;
}
