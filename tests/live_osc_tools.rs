//! gh-ost's and Spirit's runs, made by hand: their tables and rows created on the sandbox's
//! primary as each tool's source defines them (gh-ost's `_<t>_gho` and changelog `_<t>_ghc`
//! with its `heartbeat`, `state` and `throttle` rows; Spirit's `_<t>_new` and checkpoint
//! `_<t>_chkpnt` with `rows_copied`). Neither tool runs here: these are not real runs, only
//! what a real one leaves on the server, read through the real engine. Also a changelog whose
//! columns are not gh-ost's: the run is shown unreadable, with the table and what was expected.

mod common;

use std::time::Duration;

use common::{TestSandbox, primary_and, until};
use rwtop::alerts::AlertKind;
use rwtop::mysql::{OscPhase, OscRun, OscTool};
use rwtop::store::Snapshot;

const DEADLINE: Duration = Duration::from_secs(60);

fn run(s: &Snapshot, tool: OscTool, table: &str) -> Option<OscRun> {
    s.node("primary")?
        .osc()
        .iter()
        .find(|r| r.tool == tool && r.table == table)
        .cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gh_ost_and_spirit_runs_made_by_hand_are_read_and_a_foreign_changelog_is_named() {
    let t = TestSandbox::start(1, false);
    make_tables(&t);
    let engine = rwtop::engine::Engine::start(&primary_and(&t, &["r1"]));

    let (gh, took) = until(&engine, "gh-ost's run read", DEADLINE, |s| {
        run(s, OscTool::GhOst, "orders").filter(|r| r.throttled.is_some())
    })
    .await;
    eprintln!("after {took:?}: {gh:?} — {}", gh.summary());
    assert_eq!(gh.title(), "gh-ost on shop.orders");
    assert_eq!(gh.phase, OscPhase::Copy);
    assert_eq!(gh.throttled.as_deref(), Some("lag=2.500000s"));
    assert!(gh.throttle_published && gh.unreadable.is_none());
    let pct = gh.progress().expect("a progress against the estimate");
    assert!((15.0..=35.0).contains(&pct), "~25 % expected: {gh:?}");

    let (spirit, _) = until(&engine, "Spirit's run read", DEADLINE, |s| {
        run(s, OscTool::Spirit, "users").filter(|r| r.copied_counted)
    })
    .await;
    eprintln!("{spirit:?} — {}", spirit.summary());
    assert_eq!(spirit.title(), "Spirit on shop.users");
    assert_eq!(spirit.rows_copied, Some(6000));
    let pct = spirit.progress().unwrap();
    assert!((60.0..=90.0).contains(&pct), "6000 of ~8000: {spirit:?}");
    assert_eq!(spirit.phase, OscPhase::Copy);
    // Spirit's `_users_new` is not taken for pt-osc's.
    let snapshot = engine.snapshots().borrow().clone();
    assert!(run(&snapshot, OscTool::PtOsc, "users").is_none());

    let (foreign, _) = until(&engine, "the foreign changelog named", DEADLINE, |s| {
        run(s, OscTool::GhOst, "items").filter(|r| r.unreadable.is_some())
    })
    .await;
    let why = foreign.unreadable.clone().unwrap();
    eprintln!("{why}");
    assert!(
        why.contains("gh-ost on shop.items is recognised but cannot be read"),
        "{why}"
    );
    assert!(why.contains("shop._items_ghc"), "{why}");
    assert!(why.contains("id, last_update, hint, value"), "{why}");

    // The alert names a tool and its table.
    let (cause, _) = until(&engine, "ddl_in_flight on the primary", DEADLINE, |s| {
        s.alerts
            .active
            .iter()
            .find(|a| a.kind == AlertKind::DdlInFlight && a.node.as_deref() == Some("primary"))
            .map(|a| a.cause.clone())
    })
    .await;
    eprintln!("{cause}");
    assert!(cause.starts_with("primary: "), "{cause}");
    assert!(cause.contains(" on shop."), "{cause}");

    // The cut-over: gh-ost's state row says so; its sentry table appears.
    t.admin(
        "primary",
        "UPDATE shop._orders_ghc SET value = 'AllEventsUpToLockProcessed:1765036800000000000' \
         WHERE hint = 'state'; \
         UPDATE shop._orders_ghc SET value = 'done throttling' WHERE hint = 'throttle'; \
         CREATE TABLE shop._orders_del (id INT)",
    );
    let (cut, _) = until(&engine, "gh-ost's cut-over", DEADLINE, |s| {
        run(s, OscTool::GhOst, "orders").filter(|r| r.phase == OscPhase::CutOver)
    })
    .await;
    assert_eq!(cut.throttled, None, "{cut:?}");
    // The run ends with its tables: every run gone, the window's source gone.
    t.admin(
        "primary",
        "DROP TABLE shop._orders_gho, shop._orders_ghc, shop._orders_del, shop._users_new, \
         shop._users_chkpnt, shop._items_gho, shop._items_ghc",
    );
    until(&engine, "no run left", DEADLINE, |s| {
        s.node("primary")?.osc().is_empty().then_some(())
    })
    .await;
    engine.shutdown().await;
}

/// The tables each tool would be changing, and each tool's own tables and rows, on the primary.
fn make_tables(t: &TestSandbox) {
    let monitor = t.sandbox().endpoint("primary").expect("endpoint").user;
    // The tables each tool would be changing, with statistics to estimate from.
    t.admin(
        "primary",
        &format!(
            "CREATE DATABASE shop; \
             CREATE TABLE shop.orders (id INT PRIMARY KEY, v INT); \
             INSERT INTO shop.orders SELECT seq, seq FROM rwtop.seq_1_to_20000; \
             CREATE TABLE shop.users (id INT PRIMARY KEY, v INT); \
             INSERT INTO shop.users SELECT seq, seq FROM rwtop.seq_1_to_8000; \
             CREATE TABLE shop.items (id INT PRIMARY KEY); \
             ANALYZE TABLE shop.orders, shop.users; \
             GRANT SELECT, TRIGGER ON shop.* TO '{monitor}'@'127.0.0.1'"
        ),
    );
    // gh-ost on shop.orders: a ghost table a quarter copied, its changelog as it creates it
    // (ids 1-3 for the heartbeat, state and throttle hints), copying and throttled.
    t.admin(
        "primary",
        "CREATE TABLE shop._orders_gho LIKE shop.orders; \
         INSERT INTO shop._orders_gho SELECT * FROM shop.orders WHERE id <= 5000; \
         CREATE TABLE shop._orders_ghc (id BIGINT UNSIGNED AUTO_INCREMENT, \
           last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, \
           hint VARCHAR(64) CHARSET ascii NOT NULL, value VARCHAR(4096) CHARSET ascii NOT NULL, \
           PRIMARY KEY (id), UNIQUE KEY hint_uidx (hint)) AUTO_INCREMENT=256; \
         INSERT INTO shop._orders_ghc (id, hint, value) VALUES \
           (1, 'heartbeat', '2026-12-06T16:00:00.000000000Z'), \
           (2, 'state', 'GhostTableMigrated'), \
           (3, 'throttle', 'lag=2.500000s'); \
         ANALYZE TABLE shop._orders_gho",
    );
    // Spirit on shop.users: a new table and its checkpoint table, one checkpoint written.
    t.admin(
        "primary",
        "CREATE TABLE shop._users_new LIKE shop.users; \
         CREATE TABLE shop._users_chkpnt (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
           copier_watermark TEXT, checksum_watermark TEXT, binlog_name VARCHAR(255), \
           binlog_pos INT, rows_copied BIGINT, rows_copied_logical BIGINT, alter_statement TEXT); \
         INSERT INTO shop._users_chkpnt (copier_watermark, checksum_watermark, binlog_name, \
           binlog_pos, rows_copied, rows_copied_logical, alter_statement) VALUES \
           ('{\"Key\":[\"id\"],\"ChunkSize\":1000,\"LowerBound\":{\"Value\":[\"6000\"]}}', '', \
            'mysql-bin.000001', 4, 6000, 6000, 'ADD COLUMN w INT')",
    );
    // A `_items_ghc` that is not gh-ost's changelog (other columns), beside a ghost table.
    t.admin(
        "primary",
        "CREATE TABLE shop._items_gho LIKE shop.items; \
         CREATE TABLE shop._items_ghc (id INT PRIMARY KEY, note TEXT)",
    );
}
