//! `--read-only`: rwtop writes nothing and measures lag from a real pt-heartbeat (percona-toolkit)
//! updating the primary, corrected by per-server clock offsets.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestSandbox, engine_spec, exact, until};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::poll::WriterState;
use rwtop::store::Role;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);

/// pt-heartbeat --update against the primary, killed when dropped.
struct PtHeartbeat(Child);

impl PtHeartbeat {
    fn start(t: &TestSandbox) -> Self {
        t.admin(
            "primary",
            "CREATE DATABASE IF NOT EXISTS percona; \
             CREATE USER 'pt'@'127.0.0.1' IDENTIFIED BY 'pt-test-only'; \
             GRANT ALL ON percona.* TO 'pt'@'127.0.0.1'; \
             GRANT BINLOG MONITOR, SLAVE MONITOR ON *.* TO 'pt'@'127.0.0.1'; \
             GRANT SELECT ON percona.* TO 'rwtop'@'127.0.0.1'",
        );
        let port = t.sandbox().port("primary").unwrap();
        let child = Command::new("pt-heartbeat")
            .args([
                "--update",
                "--create-table",
                "--database",
                "percona",
                "--interval",
                "0.25",
            ])
            .arg(format!("h=127.0.0.1,P={port},u=pt,p=pt-test-only"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pt-heartbeat (percona-toolkit) must be installed: scripts/test installs it");
        Self(child)
    }
}

impl Drop for PtHeartbeat {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_read_only_mode_measures_pt_heartbeat_and_writes_nothing() {
    let t = TestSandbox::start(1, false);
    let mut pt = PtHeartbeat::start(&t);
    let spec = EngineSpec {
        read_only: true,
        ..engine_spec(&t, &[("primary", Role::Primary), ("r1", Role::Replica)])
    };
    let engine = Engine::start(&spec);
    until(
        &engine,
        "r1 reads a small exact lag from pt-heartbeat",
        DEADLINE,
        |s| {
            exact(s, "r1")
                .filter(|l| *l < Duration::from_millis(600))
                .map(|_| ())
        },
    )
    .await;

    // Stopped for 2 s: pt-heartbeat's ts stops advancing on r1 while the primary's moves on.
    let stop_done = Instant::now();
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    tokio::time::sleep(Duration::from_secs(2)).await; // the stop is the scenario
    let stopped_for = stop_done.elapsed();
    let mut max = Duration::ZERO;
    let (s, _) = until(&engine, "lag reading of the stop", DEADLINE, |s| {
        max = max.max(exact(s, "r1").unwrap_or_default());
        (max + Duration::from_millis(600) >= stopped_for).then(|| s.clone())
    })
    .await;
    t.admin("r1", "START SLAVE SQL_THREAD");
    eprintln!("pt-heartbeat: stopped {stopped_for:?}, lag read {max:?}");
    assert!(
        max <= stopped_for + Duration::from_millis(800),
        "lag {max:?} for a {stopped_for:?} stop"
    );

    // Same machine: every server's clock agrees with ours to well under a tenth of a second.
    for name in ["primary", "r1"] {
        let offset = s
            .node(name)
            .unwrap()
            .clock_offset_ms
            .expect("clock offset estimated");
        assert!(offset.abs() < 100, "{name}: offset {offset} ms");
    }
    assert!(matches!(s.heartbeat.writer, WriterState::Refused { .. }));
    assert!(!s.heartbeat.stale);

    // pt-heartbeat gone: lag can no longer be known, and says so.
    let _ = pt.0.kill();
    let _ = pt.0.wait();
    until(&engine, "stale heartbeat, unknown lag", DEADLINE, |s| {
        let unknown = matches!(s.node("r1")?.replica()?.heartbeat_lag, Lag::Unknown { .. });
        (s.heartbeat.stale && unknown).then_some(())
    })
    .await;
    engine.shutdown().await;

    // Read-only wrote nothing: no rwtop heartbeat table anywhere.
    let rows = t.admin(
        "primary",
        "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'rwtop' AND TABLE_NAME = 'heartbeat'",
    );
    assert_eq!(rows[0].text(&["n"]).unwrap(), Some("0"));
}
