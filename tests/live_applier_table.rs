//! Where a lagging replica's appliers are stuck, on real servers (`binlog_format=ROW`, 2 parallel
//! workers): one `UPDATE` of every row of a 50,000-row table without a primary key makes the
//! replica lag (each row event scans the table), and rwtop names the table and the missing key
//! in the replica's appliers, the JSON snapshot and the lag alert's cause. The same `UPDATE` of a
//! table with a primary key names no such cause. The lint lists the keyless table on the nodes
//! that replicate it, with the fix.
//!
//! The keyed table's apply is held on the replica by a row lock the test takes there, so that it
//! lags too and a scan is sure to see the table: named, with its key, and no cause. The test
//! prints how long each step took.

mod common;

use std::time::{Duration, Instant};

use common::{TestSandbox, alert, evidence, exact, primary_and, until, until_healthy};
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;
use rwtop::mysql::RowApply;
use rwtop::store::Snapshot;

const DEADLINE: Duration = Duration::from_secs(90);
/// The keyless table: each of its 50,000 row events scans up to 50,000 rows on the replica.
const KEYLESS_ROWS: u32 = 50_000;
/// The keyed table: four times as many rows, each found by its key.
const KEYED_ROWS: u32 = 200_000;

fn row_events(s: &Snapshot, node: &str) -> Vec<RowApply> {
    s.node(node)
        .and_then(|n| n.replica())
        .map(|r| r.appliers.row_events.clone())
        .unwrap_or_default()
}

fn on_table<'a>(events: &'a [RowApply], table: &str) -> Option<&'a RowApply> {
    events
        .iter()
        .find(|r| r.schema.as_deref() == Some("shop") && r.table.as_deref() == Some(table))
}

fn sandbox_with_two_tables() -> TestSandbox {
    let t = TestSandbox::start_parallel(1, 2);
    t.admin(
        "primary",
        &format!(
            "CREATE DATABASE shop; \
             CREATE TABLE shop.events (id INT NOT NULL, n INT NOT NULL, pad CHAR(40)) \
             ENGINE=InnoDB; \
             INSERT INTO shop.events SELECT seq, 0, 'x' FROM rwtop.seq_1_to_{KEYLESS_ROWS}; \
             CREATE TABLE shop.keyed (id INT PRIMARY KEY, n INT NOT NULL, pad CHAR(40)) \
             ENGINE=InnoDB; \
             INSERT INTO shop.keyed SELECT seq, 0, 'x' FROM rwtop.seq_1_to_{KEYED_ROWS};"
        ),
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_keyless_table_is_named_as_the_cause_of_lag_and_a_keyed_one_is_not() {
    let t = sandbox_with_two_tables();
    let format = t.admin("primary", "SELECT @@global.binlog_format AS f");
    assert_eq!(format[0].optional_text(&["f"]), Some("ROW"));
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;

    lint_lists_the_keyless_table(&engine).await;
    keyed_table_is_no_cause(&t, &engine).await;
    keyless_table_is_the_cause(&t, &engine).await;
    engine.shutdown().await;
}

/// The lint, from the settings read at connect: the keyless table on both nodes (the primary
/// logs ROW, the replica applies it), the keyed one on neither.
async fn lint_lists_the_keyless_table(engine: &Engine) {
    let (findings, _) = until(
        engine,
        "the keyless-table lint on both nodes",
        DEADLINE,
        |s| {
            let found = rwtop::alerts::lint::lint(s);
            let on = |node: &str| {
                found
                    .iter()
                    .any(|f| f.id == "table_without_key" && f.node == node)
            };
            (on("primary") && on("r1")).then_some(found)
        },
    )
    .await;
    for f in findings.iter().filter(|f| f.id == "table_without_key") {
        assert!(f.summary.contains("shop.events"), "{f:?}");
        assert!(!f.summary.contains("shop.keyed"), "{f:?}");
        assert!(
            f.fix.contains("ALTER TABLE shop.events ADD PRIMARY KEY"),
            "{f:?}"
        );
    }
}

/// The keyed table, its apply held on r1 by a row lock the test takes there: the replica lags,
/// the lag alert is raised, and the table is named with its key, as no cause.
async fn keyed_table_is_no_cause(t: &TestSandbox, engine: &Engine) {
    let mut hold = common::dba(t, "r1").await;
    hold.query_rows("BEGIN").await.unwrap();
    hold.query_rows(&format!(
        "SELECT id FROM shop.keyed WHERE id = {KEYED_ROWS} FOR UPDATE"
    ))
    .await
    .unwrap();
    t.admin("primary", "UPDATE shop.keyed SET n = n + 1");
    let (seen, _) = until(
        engine,
        "r1's lag alert while the keyed table is held",
        DEADLINE,
        |s| {
            let events = row_events(s, "r1");
            assert!(
                events.iter().all(|r| !r.scans_table()),
                "a keyed table named as keyless: {events:?}"
            );
            let apply = on_table(&events, "keyed")?.clone();
            alert(s, AlertKind::LagP99High, Some("r1")).map(|a| (apply, a))
        },
    )
    .await;
    let (apply, keyed_alert) = seen;
    assert_eq!(apply.has_key, Some(true), "{apply:?}");
    assert!(
        keyed_alert
            .evidence
            .iter()
            .all(|(k, _)| k != "applying_row_events_on" && k != "table_key"),
        "{keyed_alert:?}"
    );
    assert!(!keyed_alert.cause.contains("key"), "{}", keyed_alert.cause);
    hold.query_rows("ROLLBACK").await.unwrap();
    let released = Instant::now();
    until(
        engine,
        "r1 caught up after the keyed UPDATE",
        DEADLINE,
        |s| (exact(s, "r1") == Some(Duration::ZERO)).then_some(()),
    )
    .await;
    eprintln!(
        "the keyed {KEYED_ROWS}-row UPDATE was applied {:?} after its row lock was released",
        released.elapsed()
    );
}

/// The keyless table: the replica falls behind, and the table and its missing key are named in
/// the snapshot, the JSON document and the lag alert.
async fn keyless_table_is_the_cause(t: &TestSandbox, engine: &Engine) {
    let started = Instant::now();
    t.admin("primary", "UPDATE shop.events SET n = n + 1");
    let (s, named_after) = until(
        engine,
        "r1 applying row events on shop.events",
        DEADLINE,
        |s| {
            let events = row_events(s, "r1");
            on_table(&events, "events")
                .is_some_and(|a| a.has_key.is_some())
                .then(|| s.clone())
        },
    )
    .await;
    let events = row_events(&s, "r1");
    let apply = on_table(&events, "events").unwrap();
    assert_eq!(apply.has_key, Some(false), "{apply:?}");
    assert!(apply.scans_table(), "{apply:?}");
    eprintln!("shop.events named {named_after:?} after the UPDATE: {apply:?}");

    let doc = serde_json::to_value(rwtop::export::json::from_snapshot(&s)).unwrap();
    let json = &common::json_node(&doc, "r1")["channels"][0]["appliers"]["row_events"];
    let named = json
        .as_array()
        .and_then(|list| list.iter().find(|e| e["table"] == "events"))
        .unwrap_or_else(|| panic!("no shop.events in {json:#}"));
    assert_eq!(
        (&named["schema"], &named["has_key"], &named["event"]),
        (
            &serde_json::json!("shop"),
            &serde_json::json!(false),
            &serde_json::json!("update")
        ),
        "{named:#}"
    );

    let (lagging, raised_after) = until(engine, "r1's lag alert names the table", DEADLINE, |s| {
        alert(s, AlertKind::LagP99High, Some("r1")).filter(|a| {
            a.evidence
                .iter()
                .any(|(k, _)| k == "applying_row_events_on")
        })
    })
    .await;
    assert_eq!(evidence(&lagging, "applying_row_events_on"), "shop.events");
    assert_eq!(evidence(&lagging, "table_key"), "none");
    assert!(
        lagging
            .cause
            .contains("shop.events, which has no primary or unique key: each row event scans"),
        "{}",
        lagging.cause
    );
    eprintln!(
        "the lag alert named shop.events {raised_after:?} later ({:?} after the UPDATE): {}",
        started.elapsed(),
        lagging.cause
    );
}
