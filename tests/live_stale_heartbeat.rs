//! A heartbeat row nobody updates is never read as lag, from the first reading: until the
//! primary's row has been seen to advance, a replica's lag is unknown and says why, so no
//! stale row's age reaches the percentiles and raises `lag_p99_high`. Both for pt-heartbeat's
//! table in `--read-only` mode and for rwtop's own row when this rwtop only observes it (another
//! holds the writer lock). The rows are written by hand here; no pt-heartbeat runs.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{TestSandbox, engine_spec, exact, lag, primary_and, until};
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::{Endpoint, NodeConn, Secret, Timeouts};
use rwtop::poll::WriterState;
use rwtop::store::Role;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);
/// How long a row that does not move is watched: several reads of every node, two windows of
/// the alert hysteresis, and past the 3 s after which an unmoving primary row counts as stale.
const WATCH: Duration = Duration::from_secs(8);
/// A small exact lag once the row moves every [`UPDATE_EVERY`] on a caught-up replica.
const SMALL: Duration = Duration::from_millis(600);
const UPDATE_EVERY: Duration = Duration::from_millis(250);

/// Watches every snapshot for [`WATCH`]: `r1`'s lag is never exact and `lag_p99_high` is never
/// raised. Returns the last reason `r1`'s lag gave.
async fn never_lag(engine: &Engine, what: &str) -> String {
    let start = Instant::now();
    let mut exact_seen = Vec::new();
    let mut reason = String::new();
    until(engine, what, WATCH + DEADLINE, |s| {
        if let Some(l) = exact(s, "r1") {
            exact_seen.push((start.elapsed(), l));
        }
        if let Some(Lag::Unknown { reason: why }) = lag(s, "r1") {
            reason = why;
        }
        let p99 = s
            .alerts
            .log
            .iter()
            .find(|e| e.kind == AlertKind::LagP99High);
        assert!(p99.is_none(), "{what}: {p99:?}");
        (start.elapsed() >= WATCH).then_some(())
    })
    .await;
    assert!(
        exact_seen.is_empty(),
        "{what}: r1 read an exact lag from a row nobody updates: {exact_seen:?}"
    );
    reason
}

/// Runs `sql` on the primary every [`UPDATE_EVERY`] until dropped (at most a minute), as `user`
/// (password `test-only`).
struct Updater(Arc<AtomicBool>);

impl Updater {
    async fn start(t: &TestSandbox, user: &str, sql: &'static str) -> Self {
        let endpoint = Endpoint {
            user: user.to_owned(),
            password: Some(Secret::new("test-only")),
            ..t.sandbox().endpoint("primary").unwrap()
        };
        let mut conn = NodeConn::connect(&endpoint, Timeouts::default())
            .await
            .expect("connecting the updater");
        let running = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&running);
        tokio::spawn(async move {
            for _ in 0..240 {
                if !flag.load(Ordering::Relaxed) {
                    break;
                }
                conn.query_rows(sql)
                    .await
                    .expect("updating the heartbeat row");
                tokio::time::sleep(UPDATE_EVERY).await;
            }
        });
        Self(running)
    }
}

impl Drop for Updater {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Starts updating the row with `sql` as `user` and waits for `r1`'s lag to become exact and
/// small; the row keeps moving while the returned updater lives.
async fn small_lag_once_updated(
    engine: &Engine,
    t: &TestSandbox,
    user: &str,
    sql: &'static str,
) -> Updater {
    let updater = Updater::start(t, user, sql).await;
    until(
        engine,
        "a small exact lag once the row moves",
        DEADLINE,
        |s| exact(s, "r1").filter(|l| *l < SMALL),
    )
    .await;
    updater
}

/// pt-heartbeat's table and its row as pt-heartbeat writes it (local time, `T` between date and
/// time), `age` seconds old.
fn pt_row(age: f64) -> String {
    format!(
        "REPLACE INTO percona.heartbeat (ts, server_id) VALUES \
         (DATE_FORMAT(NOW(6) - INTERVAL {age} SECOND, '%Y-%m-%dT%H:%i:%s.%f'), @@server_id)"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_read_only_lag_is_unknown_until_pt_heartbeats_row_advances() {
    let t = TestSandbox::start(1, false);
    t.admin(
        "primary",
        &format!(
            "CREATE DATABASE percona; \
             CREATE TABLE percona.heartbeat (ts VARCHAR(26) NOT NULL, \
             server_id INT UNSIGNED NOT NULL PRIMARY KEY, file VARCHAR(255) DEFAULT NULL, \
             position BIGINT UNSIGNED DEFAULT NULL, relay_master_log_file VARCHAR(255) DEFAULT NULL, \
             exec_master_log_pos BIGINT UNSIGNED DEFAULT NULL); \
             GRANT SELECT ON percona.* TO 'rwtop'@'127.0.0.1'; \
             CREATE USER 'pt'@'127.0.0.1' IDENTIFIED BY 'test-only'; \
             GRANT ALL ON percona.* TO 'pt'@'127.0.0.1'; {}",
            pt_row(20.0)
        ),
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let spec = EngineSpec {
        read_only: true,
        ..engine_spec(&t, &[("primary", Role::Primary), ("r1", Role::Replica)])
    };

    // The case seen in the field: pt-heartbeat stopped long ago, its row 20 s old.
    let engine = Engine::start(&spec);
    let reason = never_lag(&engine, "a pt-heartbeat row 20 s old").await;
    assert_eq!(
        reason,
        "pt-heartbeat's row on primary has not advanced since rwtop started: \
         is pt-heartbeat running?"
    );
    engine.shutdown().await;

    // Stopped a second ago: the row still looks fresh, and is just as dead.
    t.admin("primary", &pt_row(1.0));
    let engine = Engine::start(&spec);
    never_lag(&engine, "a pt-heartbeat row 1 s old").await;

    // Now something updates it, as pt-heartbeat would: lag becomes exact and small.
    let _pt = small_lag_once_updated(
        &engine,
        &t,
        "pt",
        "UPDATE percona.heartbeat SET ts = DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f')",
    )
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_observed_heartbeat_lag_is_unknown_until_the_row_advances() {
    let t = TestSandbox::start(1, false);
    // A row of this writer id, 20 s old, as a writer that stopped writing left it.
    t.admin(
        "primary",
        &format!(
            "{}; \
             INSERT INTO rwtop.heartbeat VALUES ('rwtop-test', 41, UTC_TIMESTAMP(6) - INTERVAL 20 SECOND); \
             CREATE USER 'other'@'127.0.0.1' IDENTIFIED BY 'test-only'; \
             GRANT ALL ON rwtop.* TO 'other'@'127.0.0.1'",
            rwtop::mysql::own_tables::HEARTBEAT.create_sql()
        ),
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    // ... and still holds the writer lock: this rwtop observes instead of writing.
    let mut holder = t.connect("primary").await;
    let got = holder
        .query_rows("SELECT GET_LOCK('rwtop-hb-rwtop-test', 0) AS got")
        .await
        .unwrap();
    assert_eq!(got[0].text(&["got"]).unwrap(), Some("1"));

    let engine = Engine::start(&primary_and(&t, &["r1"]));
    until(&engine, "the writer observing", DEADLINE, |s| {
        (s.heartbeat.writer == WriterState::Observing).then_some(())
    })
    .await;
    let reason = never_lag(&engine, "an observed row 20 s old").await;
    assert_eq!(
        reason,
        "rwtop's heartbeat row on primary has not advanced since rwtop started: \
         is the rwtop that holds its writer lock running?"
    );

    // The other rwtop writes again.
    let _writer = small_lag_once_updated(
        &engine,
        &t,
        "other",
        "UPDATE rwtop.heartbeat SET seq = seq + 1, ts = UTC_TIMESTAMP(6) \
         WHERE writer_id = 'rwtop-test'",
    )
    .await;
    engine.shutdown().await;
    drop(holder);
}
