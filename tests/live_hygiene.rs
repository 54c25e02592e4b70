//! Replication-link hygiene against real servers, on one TLS sandbox whose replica keeps its
//! relay logs under a 1 MiB `relay_log_space_limit`: each finding raised by `rwtop lint` where it
//! holds and absent where it does not, the error ones making it exit 1, every setting restored
//! after its phase. Then a change of the configured applier workers, seen by a running engine
//! within a few polls rather than at the settings' five-minute turn.

mod common;

use std::time::{Duration, Instant};

use common::TestSandbox;
use common::lint::{finding, lint};
use rwtop::engine::Engine;
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(30);
/// 1 MiB: a few hundred kilobytes of writes with the applier stopped fill it.
const RELAY_LIMIT: &str = "relay_log_space_limit=1048576";

/// Lints until `id` is on r1 (`present`) or gone from it; returns the finding and the exit code
/// of the run that showed it.
fn until_r1(t: &TestSandbox, id: &str, present: bool) -> (Value, i32) {
    let start = Instant::now();
    loop {
        let (code, doc) = lint(t);
        match finding(&doc, id, "r1") {
            Some(f) if present => return (f.clone(), code),
            None if !present => return (Value::Null, code),
            _ => {}
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{id} {} on r1 not within {DEADLINE:?}; last (exit {code}): {doc:#}",
            if present { "raised" } else { "cleared" }
        );
    }
}

fn status(t: &TestSandbox, column: &str) -> String {
    let rows = t.admin("r1", "SHOW ALL SLAVES STATUS");
    rows[0]
        .optional_text(&[column])
        .unwrap_or_default()
        .to_owned()
}

/// Waits for r1's status row to show `column` = `value`.
fn until_status(t: &TestSandbox, column: &str, value: &str) {
    let start = Instant::now();
    while status(t, column) != value {
        assert!(
            start.elapsed() < DEADLINE,
            "r1's {column} is {:?}, not {value:?}, after {DEADLINE:?}",
            status(t, column)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn text<'a>(f: &'a Value, field: &str) -> &'a str {
    f[field].as_str().unwrap_or_default()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one sandbox, one phase after another"
)]
fn live_link_hygiene_findings_rise_where_they_hold_and_errors_exit_1() {
    let started = Instant::now();
    let t = TestSandbox::start_with_tls_options(1, &[("r1", RELAY_LIMIT)]);

    // A fresh sandbox: its channel runs in clear to a server that offers TLS, and nothing else
    // of the link is wrong; warnings only, exit 0.
    let (f, code) = until_r1(&t, "channel_tls", true);
    assert_eq!(code, 0, "a warning alone exits 0");
    assert_eq!(
        (&f["severity"], &f["channel"]),
        (&"warning".into(), &"".into())
    );
    assert!(text(&f, "fix").contains("MASTER_SSL = 1"), "{f:#}");
    let (_, doc) = lint(&t);
    for id in [
        "heartbeat_period",
        "channel_tls_unverified",
        "replication_filter",
        "until_condition",
        "skip_counter",
        "exec_mode_idempotent",
        "skip_errors",
        "relay_log_space",
        "mixed_versions",
    ] {
        assert!(
            finding(&doc, id, "r1").is_none(),
            "{id} on a fresh r1: {doc:#}"
        );
    }
    assert!(
        finding(&doc, "channel_tls", "primary").is_none(),
        "no channel on the primary"
    );

    // TLS with the sandbox's CA, verified: no finding. Without verification: its own.
    let ca = rwtop::sandbox::tls::ca(t.sandbox().dir());
    let tls = |verify: u8| {
        t.admin("r1", "STOP SLAVE");
        t.admin(
            "r1",
            &format!(
                "CHANGE MASTER TO MASTER_SSL = 1, MASTER_SSL_CA = '{}', \
                 MASTER_SSL_VERIFY_SERVER_CERT = {verify}",
                ca.display()
            ),
        );
        t.admin("r1", "START SLAVE");
        until_status(&t, "Slave_IO_Running", "Yes");
    };
    tls(1);
    assert_eq!(status(&t, "Master_SSL_Allowed"), "Yes");
    until_r1(&t, "channel_tls", false);
    assert!(finding(&lint(&t).1, "channel_tls_unverified", "r1").is_none());
    tls(0);
    let (f, _) = until_r1(&t, "channel_tls_unverified", true);
    assert!(
        text(&f, "fix").contains("MASTER_SSL_VERIFY_SERVER_CERT = 1"),
        "{f:#}"
    );
    t.admin("r1", "STOP SLAVE");
    t.admin(
        "r1",
        "CHANGE MASTER TO MASTER_SSL = 0, MASTER_SSL_CA = '', MASTER_SSL_VERIFY_SERVER_CERT = 0",
    );
    t.admin("r1", "START SLAVE");
    until_r1(&t, "channel_tls", true);

    // Heartbeat: the 10.11 defaults (30 s against 60 s) are two per timeout. A 50 s timeout is
    // fewer than two (a warning); a period as long as the timeout is an error, and exit 1.
    assert_eq!(status(&t, "Slave_heartbeat_period"), "30.000");
    t.admin("r1", "SET GLOBAL slave_net_timeout = 50");
    let (f, code) = until_r1(&t, "heartbeat_period", true);
    assert_eq!(
        (f["severity"].as_str(), code),
        (Some("warning"), 0),
        "{f:#}"
    );
    assert!(text(&f, "summary").contains("every 30 s"), "{f:#}");
    assert!(
        text(&f, "fix").contains("CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 25"),
        "{f:#}"
    );
    t.admin("r1", "STOP SLAVE");
    t.admin("r1", "CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 50");
    t.admin("r1", "START SLAVE");
    let (f, code) = until_r1(&t, "heartbeat_period", true);
    assert_eq!((f["severity"].as_str(), code), (Some("error"), 1), "{f:#}");
    // The fix as printed clears it.
    t.admin("r1", "STOP SLAVE");
    t.admin("r1", "CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 25");
    t.admin("r1", "START SLAVE");
    let (_, code) = until_r1(&t, "heartbeat_period", false);
    assert_eq!(code, 0);
    t.admin("r1", "SET GLOBAL slave_net_timeout = 60");
    t.admin("r1", "STOP SLAVE");
    t.admin("r1", "CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 30");
    t.admin("r1", "START SLAVE");

    // A filter (set with the applier stopped), cleared by its printed fix.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    t.admin("r1", "SET GLOBAL replicate_do_db = 'app'");
    t.admin("r1", "START SLAVE SQL_THREAD");
    let (f, _) = until_r1(&t, "replication_filter", true);
    assert!(
        text(&f, "summary").contains("Replicate_Do_DB = app"),
        "{f:#}"
    );
    let fix = text(&f, "fix");
    let statements: Vec<&str> = fix.split("; ").take(3).collect();
    assert_eq!(
        statements,
        [
            "STOP SLAVE SQL_THREAD",
            "SET GLOBAL replicate_do_db = ''",
            "START SLAVE SQL_THREAD"
        ],
        "{fix}"
    );
    for sql in statements {
        t.admin("r1", sql);
    }
    until_r1(&t, "replication_filter", false);

    // A pending skip and an UNTIL: warnings while they hold.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    t.admin("r1", "SET GLOBAL sql_slave_skip_counter = 1");
    let (f, _) = until_r1(&t, "skip_counter", true);
    assert!(text(&f, "summary").contains("next 1 event"), "{f:#}");
    t.admin("r1", "SET GLOBAL sql_slave_skip_counter = 0");
    // MariaDB takes a GTID UNTIL only with both threads stopped.
    t.admin("r1", "STOP SLAVE");
    t.admin("r1", "START SLAVE UNTIL master_gtid_pos = '0-1-999999'");
    let (f, _) = until_r1(&t, "until_condition", true);
    assert!(text(&f, "summary").contains("Gtid"), "{f:#}");
    assert!(finding(&lint(&t).1, "skip_counter", "r1").is_none());
    t.admin("r1", "STOP SLAVE");
    t.admin("r1", "START SLAVE");
    until_r1(&t, "until_condition", false);

    // IDEMPOTENT: silent drift, an error and exit 1; STRICT again, gone and exit 0.
    t.admin("r1", "SET GLOBAL slave_exec_mode = 'IDEMPOTENT'");
    let (f, code) = until_r1(&t, "exec_mode_idempotent", true);
    assert_eq!((f["severity"].as_str(), code), (Some("error"), 1), "{f:#}");
    t.admin("r1", "SET GLOBAL slave_exec_mode = 'STRICT'");
    let (_, code) = until_r1(&t, "exec_mode_idempotent", false);
    assert_eq!(code, 0);

    // The relay log limit: the applier stopped under writes, the IO thread waits for space.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    t.admin("primary", "CREATE DATABASE hygiene");
    t.admin(
        "primary",
        "CREATE TABLE hygiene.pad (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(1000))",
    );
    for _ in 0..4 {
        t.admin(
            "primary",
            "INSERT INTO hygiene.pad (v) SELECT REPEAT('x', 1000) FROM hygiene.seq_1_to_500",
        );
    }
    until_status(
        &t,
        "Slave_IO_State",
        "Waiting for the slave SQL thread to free enough relay log space",
    );
    let (f, code) = until_r1(&t, "relay_log_space", true);
    assert_eq!(
        (f["severity"].as_str(), code),
        (Some("warning"), 0),
        "{f:#}"
    );
    assert!(
        text(&f, "summary").contains("waits for the applier"),
        "{f:#}"
    );
    assert!(text(&f, "summary").contains("1.0 MiB"), "{f:#}");
    // Applied and caught up, the relay logs may still hold more than the limit (the server
    // lets a caught-up applier's IO thread past it): no finding.
    t.admin("r1", "START SLAVE SQL_THREAD");
    until_r1(&t, "relay_log_space", false);
    t.admin("primary", "DROP DATABASE hygiene");

    workers_change_is_seen_within_a_few_polls(&t);
    eprintln!("live hygiene took {:?}", started.elapsed());
}

/// `slave_parallel_threads` changed under a running engine: the snapshot's configured workers
/// follow within a few polls (they came with the settings, read every five minutes).
fn workers_change_is_seen_within_a_few_polls(t: &TestSandbox) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let engine = Engine::start(&common::primary_and(t, &["r1"]));
        let workers = |s: &rwtop::store::Snapshot| s.node("r1")?.replica()?.appliers.workers;
        common::until(&engine, "r1's workers read", DEADLINE, |s| {
            (workers(s) == Some(0)).then_some(())
        })
        .await;
        t.admin("r1", "STOP SLAVE");
        t.admin("r1", "SET GLOBAL slave_parallel_threads = 4");
        t.admin("r1", "START SLAVE");
        let changed = Instant::now();
        common::until(&engine, "r1's 4 workers", DEADLINE, |s| {
            (workers(s) == Some(4)).then_some(())
        })
        .await;
        let took = changed.elapsed();
        eprintln!("configured workers 0 -> 4 seen after {took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        engine.shutdown().await;
    });
    t.admin("r1", "STOP SLAVE");
    t.admin("r1", "SET GLOBAL slave_parallel_threads = 0");
    t.admin("r1", "START SLAVE");
}
