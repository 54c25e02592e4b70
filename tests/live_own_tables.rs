//! rwtop never harms what it watches (`docs/own-tables.md`), on real servers set up differently:
//! its own tables are defined with every property spelled out, so two roots with different
//! defaults feed one aggregator without stopping it; a copy of its table that is not rwtop's — on
//! a root, or on a replica below one — gets no write, a message naming what differs and the fix,
//! and no replication error anywhere; and the fix it prints makes it write again.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, engine_spec, until};
use rwtop::alerts::AlertKind;
use rwtop::alerts::lint::lint;
use rwtop::engine::Engine;
use rwtop::poll::WriterState;
use rwtop::sandbox::{AGGREGATOR, SECOND_CHANNEL, SECOND_PRIMARY};
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};

const DEADLINE: Duration = Duration::from_secs(60);

/// The run: a minute of heartbeats and writes on both roots.
const RUN: Duration = Duration::from_secs(60);

/// Each channel of `node` as the server prints it: name, IO and SQL running, and any error.
fn channels(t: &TestSandbox, node: &str) -> Vec<(String, String, String, String)> {
    let text = |row: &rwtop::mysql::RawRow, column: &str| {
        row.optional_text(&[column]).unwrap_or_default().to_owned()
    };
    t.admin(node, "SHOW ALL SLAVES STATUS")
        .iter()
        .map(|row| {
            (
                text(row, "Connection_name"),
                text(row, "Slave_IO_Running"),
                text(row, "Slave_SQL_Running"),
                format!(
                    "{} {}",
                    text(row, "Last_SQL_Error"),
                    text(row, "Last_IO_Error")
                )
                .trim()
                .to_owned(),
            )
        })
        .collect()
}

/// Panics naming the channel when any channel of `nodes` is stopped or has an error.
fn assert_all_applying(t: &TestSandbox, nodes: &[&str]) {
    for node in nodes {
        let found = channels(t, node);
        assert!(!found.is_empty(), "{node} shows no channel");
        for (name, io, sql, error) in found {
            assert!(
                io == "Yes" && sql == "Yes" && error.is_empty(),
                "{node} channel '{name}': IO {io}, SQL {sql}: {error}"
            );
        }
    }
}

fn one(t: &TestSandbox, node: &str, sql: &str, column: &str) -> String {
    t.admin(node, sql)
        .first()
        .and_then(|r| r.optional_text(&[column]).map(str::to_owned))
        .unwrap_or_default()
}

fn show_create(t: &TestSandbox, node: &str, table: &str) -> String {
    one(
        t,
        node,
        &format!("SHOW CREATE TABLE {table}"),
        "Create Table",
    )
}

fn root_writer<'a>(s: &'a Snapshot, node: &str) -> Option<&'a WriterState> {
    s.heartbeat
        .roots
        .iter()
        .find(|r| r.node.as_deref() == Some(node))
        .map(|r| &r.writer)
}

fn channel_lag(s: &Snapshot, node: &str, channel: &str) -> Option<Lag> {
    Some(s.node(node)?.channel(channel)?.heartbeat_lag.clone())
}

fn exact_on(s: &Snapshot, node: &str, channel: &str) -> bool {
    matches!(channel_lag(s, node, channel), Some(Lag::Exact { .. }))
}

fn roots_engine(t: &TestSandbox) -> Engine {
    Engine::start(&engine_spec(
        t,
        &[
            ("primary", Role::Primary),
            (SECOND_PRIMARY, Role::Primary),
            ("r1", Role::Replica),
            (AGGREGATOR, Role::Replica),
        ],
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_roots_set_up_differently_keep_every_channel_of_the_aggregator_applying() {
    // As two people would set up two primaries: one with utf8mb4 and MyISAM as defaults, one
    // with the server's own (latin1, InnoDB). The sandbox makes the schema `rwtop` with each
    // server's defaults, as a DBA's plain CREATE DATABASE would.
    let t = TestSandbox::start_multi_source_with(
        1,
        &[
            ("primary", "character_set_server=utf8mb4"),
            ("primary", "collation_server=utf8mb4_unicode_ci"),
            ("primary", "default_storage_engine=MyISAM"),
            (SECOND_PRIMARY, "character_set_server=latin1"),
            (SECOND_PRIMARY, "collation_server=latin1_swedish_ci"),
        ],
    );
    let schema_charset = |node| {
        one(
            &t,
            node,
            "SELECT DEFAULT_CHARACTER_SET_NAME AS c FROM information_schema.SCHEMATA \
             WHERE SCHEMA_NAME = 'rwtop'",
            "c",
        )
    };
    assert_eq!(
        schema_charset("primary"),
        "utf8mb4",
        "the setup must differ"
    );
    assert_eq!(
        schema_charset(SECOND_PRIMARY),
        "latin1",
        "the setup must differ"
    );

    let engine = roots_engine(&t);
    let _loads = (
        Load::start(&t).await,
        Load::start_on(&t, SECOND_PRIMARY).await,
    );
    until(&engine, "both roots writing", DEADLINE, |s| {
        [("primary"), (SECOND_PRIMARY)]
            .iter()
            .all(|n| root_writer(s, n) == Some(&WriterState::Writing))
            .then_some(())
    })
    .await;
    // A minute of heartbeats on both roots; every channel of the aggregator must keep applying.
    let started = Instant::now();
    let mut rx = engine.snapshots();
    while started.elapsed() < RUN {
        let _ = tokio::time::timeout(Duration::from_secs(1), rx.changed()).await;
        let s = rx.borrow_and_update().clone();
        let stopped = s.alerts.active.iter().find(|a| {
            matches!(
                a.kind,
                AlertKind::SqlThreadStopped | AlertKind::ReplicationError
            )
        });
        if let Some(a) = stopped {
            panic!(
                "after {:?}: {:?} on {:?} channel {:?}: {}",
                started.elapsed(),
                a.kind,
                a.node,
                a.channel,
                a.cause
            );
        }
    }
    assert_all_applying(&t, &[AGGREGATOR, "r1"]);
    let s = engine.latest();
    for channel in ["", SECOND_CHANNEL] {
        assert!(
            exact_on(&s, AGGREGATOR, channel),
            "agg '{channel}': {:?}",
            channel_lag(&s, AGGREGATOR, channel)
        );
    }
    // One definition everywhere, whatever each server's defaults.
    let mine = show_create(&t, "primary", "rwtop.heartbeat");
    assert!(
        mine.contains("utf8mb4_bin") && mine.contains("ENGINE=InnoDB"),
        "{mine}"
    );
    for node in [SECOND_PRIMARY, AGGREGATOR, "r1"] {
        assert_eq!(show_create(&t, node, "rwtop.heartbeat"), mine, "{node}");
    }
    engine.shutdown().await;
}

/// The old, server-default definition, made by hand as an older rwtop or a DBA would have.
const LATIN1_HEARTBEAT: &str = "CREATE TABLE rwtop.heartbeat (writer_id VARCHAR(64) \
     CHARACTER SET latin1 NOT NULL PRIMARY KEY, seq BIGINT UNSIGNED NOT NULL, \
     ts DATETIME(6) NOT NULL) ENGINE=InnoDB";

fn rows(t: &TestSandbox, node: &str) -> u64 {
    one(t, node, "SELECT COUNT(*) AS n FROM rwtop.heartbeat", "n")
        .parse()
        .unwrap_or(u64::MAX)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_mismatched_table_on_one_root_gets_no_write_names_the_fix_and_breaks_nothing() {
    let t = TestSandbox::start_multi_source(1);
    // Made on p2 and logged: the aggregator gets the same copy through channel 'p2'.
    t.admin(SECOND_PRIMARY, LATIN1_HEARTBEAT);
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    assert!(show_create(&t, AGGREGATOR, "rwtop.heartbeat").contains("latin1"));

    let engine = roots_engine(&t);
    let _loads = (
        Load::start(&t).await,
        Load::start_on(&t, SECOND_PRIMARY).await,
    );
    // p2 refuses its own copy; the primary refuses too, since the aggregator below it holds
    // p2's copy, which the primary's rows would stop.
    let (s, _) = until(&engine, "both roots refusing", DEADLINE, |s| {
        let p2 = matches!(
            root_writer(s, SECOND_PRIMARY),
            Some(WriterState::Unsafe { .. })
        );
        let primary = matches!(
            root_writer(s, "primary"),
            Some(WriterState::Refused { reason }) if reason.contains(AGGREGATOR)
        );
        (p2 && primary).then(|| s.clone())
    })
    .await;
    let Some(WriterState::Unsafe { mismatch }) = root_writer(&s, SECOND_PRIMARY) else {
        unreachable!()
    };
    assert_eq!(
        mismatch.differences,
        [
            "column writer_id is varchar(64) latin1 latin1_swedish_ci, rwtop's is varchar(64) \
          utf8mb4 utf8mb4_bin"
        ]
    );
    assert!(mismatch.fix.starts_with("ALTER TABLE rwtop.heartbeat "));
    // The lint says it as errors, on p2 and on the aggregator, each with its fix.
    let (findings, _) = until(&engine, "the lint's own_table findings", DEADLINE, |s| {
        let found: Vec<_> = lint(s)
            .into_iter()
            .filter(|f| f.id == "own_table")
            .collect();
        (found.len() >= 2).then_some(found)
    })
    .await;
    for node in [SECOND_PRIMARY, AGGREGATOR] {
        let f = findings
            .iter()
            .find(|f| f.node == node)
            .unwrap_or_else(|| panic!("no own_table finding on {node}: {findings:?}"));
        assert_eq!(f.severity, rwtop::alerts::lint::LintSeverity::Error);
        assert!(f.fix.contains("ALTER TABLE rwtop.heartbeat"), "{}", f.fix);
    }
    // Every channel below p2 reads unknown, and says why.
    let (reason, _) =
        until(
            &engine,
            "agg/p2 unknown with the reason",
            DEADLINE,
            |s| match channel_lag(s, AGGREGATOR, SECOND_CHANNEL) {
                Some(Lag::Unknown { reason })
                    if reason.contains("rwtop writes no heartbeat on p2") =>
                {
                    Some(reason)
                }
                _ => None,
            },
        )
        .await;
    assert!(
        reason.contains("differs from rwtop's definition"),
        "{reason}"
    );
    // Nothing was written on either root's table, and every channel still applies.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(rows(&t, SECOND_PRIMARY), 0, "a row was written on p2");
    assert_eq!(rows(&t, "primary"), 0, "a row was written on primary");
    assert_all_applying(&t, &[AGGREGATOR, "r1"]);

    // The fix rwtop printed, run as printed on p2: it reaches the aggregator, and both roots
    // write again with exact lag everywhere and no error.
    t.admin(SECOND_PRIMARY, &mismatch.fix);
    until(&engine, "both roots writing after the fix", DEADLINE, |s| {
        let writing = |n| root_writer(s, n) == Some(&WriterState::Writing);
        let exact = exact_on(s, AGGREGATOR, "") && exact_on(s, AGGREGATOR, SECOND_CHANNEL);
        (writing("primary") && writing(SECOND_PRIMARY) && exact).then_some(())
    })
    .await;
    assert_all_applying(&t, &[AGGREGATOR, "r1"]);
    assert!(rows(&t, AGGREGATOR) >= 2, "both roots' rows reach agg");
    engine.shutdown().await;
}

/// Each hostile copy of `rwtop.heartbeat` on a root: a clear word, no write, nothing broken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_hostile_copies_of_rwtops_tables_get_a_clear_message_and_no_write() {
    let t = TestSandbox::start(1, false);
    let canonical = rwtop::mysql::own_tables::HEARTBEAT.create_sql();
    let cases = [
        (
            "an extra column",
            format!("{canonical}; ALTER TABLE rwtop.heartbeat ADD note VARCHAR(10) NULL"),
            "column note is not rwtop's",
        ),
        (
            "another engine",
            format!("{canonical}; ALTER TABLE rwtop.heartbeat ENGINE=MyISAM"),
            "its engine is MyISAM, rwtop's is InnoDB",
        ),
        (
            "a view",
            "CREATE VIEW rwtop.heartbeat AS SELECT 'x' AS writer_id, 1 AS seq, \
             NOW(6) AS ts"
                .to_owned(),
            "it is a view, where rwtop keeps a table",
        ),
    ];
    for (what, make, expected) in cases {
        t.admin("primary", &make);
        t.sandbox().wait_replicating(DEADLINE).unwrap();
        let engine = Engine::start(&common::primary_and(&t, &["r1"]));
        let (detail, _) = until(&engine, what, DEADLINE, |s| match &s.heartbeat.writer {
            WriterState::Unsafe { .. } => s.heartbeat.writer.detail(),
            _ => None,
        })
        .await;
        assert!(detail.contains(expected), "{what}: {detail}");
        assert!(
            detail.contains("rwtop writes nothing there"),
            "{what}: {detail}"
        );
        until(
            &engine,
            "r1's lag unknown with the reason",
            DEADLINE,
            |s| match common::lag(s, "r1") {
                Some(Lag::Unknown { reason }) => reason
                    .contains("rwtop writes no heartbeat on primary")
                    .then_some(()),
                _ => None,
            },
        )
        .await;
        engine.shutdown().await;
        if what != "a view" {
            assert_eq!(rows(&t, "primary"), 0, "{what}: a row was written");
        }
        assert_all_applying(&t, &["r1"]);
        t.admin(
            "primary",
            "DROP VIEW IF EXISTS rwtop.heartbeat; DROP TABLE IF EXISTS rwtop.heartbeat",
        );
    }
    // The probe's table too: a test read refuses to write its marker into a copy not rwtop's.
    t.admin(
        "primary",
        "CREATE TABLE rwtop.probe (token VARCHAR(128) CHARACTER SET latin1 NOT NULL PRIMARY KEY, \
         created DATETIME(6) NOT NULL) ENGINE=InnoDB",
    );
    let spec = common::primary_and(&t, &["r1"]);
    let engine = Engine::start(&spec);
    let mut prober = rwtop::probe::Prober::new(spec.probe_spec().expect("a primary"));
    let (view, _) = until(&engine, "r1 polled", DEADLINE, |s| {
        common::lag(s, "r1").is_some().then(|| s.clone())
    })
    .await;
    let result = prober
        .run("none".parse().expect("a strategy"), "r1", &view)
        .await;
    let cause = result.cause.clone().unwrap_or_default();
    assert!(
        cause.contains("rwtop.probe differs from rwtop's definition")
            && cause.contains("ALTER TABLE rwtop.probe"),
        "{result:?}"
    );
    assert_eq!(
        one(&t, "primary", "SELECT COUNT(*) AS n FROM rwtop.probe", "n"),
        "0"
    );
    prober.close().await;
    engine.shutdown().await;
    assert_all_applying(&t, &["r1"]);
}
