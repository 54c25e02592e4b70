//! `--read-only`: rwtop writes nothing and measures lag from a real pt-heartbeat (percona-toolkit)
//! updating the primary, corrected by per-server clock offsets.

mod common;

use std::time::Duration;

use common::pt_heartbeat::PtHeartbeat;
use common::{TestSandbox, engine_spec, exact, until};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::poll::WriterState;
use rwtop::store::Role;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);

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

    // How exact each reading is during a stop: `live_lag_exact.rs`.
    let s = engine.latest();
    // Same machine: every server's clock agrees with ours to well under a tenth of a second.
    for name in ["primary", "r1"] {
        let offset = s
            .node(name)
            .unwrap()
            .clock
            .expect("clock offset estimated")
            .offset_ms;
        assert!(offset.abs() < 100, "{name}: offset {offset} ms");
    }
    assert!(matches!(s.heartbeat.writer, WriterState::Refused { .. }));
    assert!(!s.heartbeat.stale);

    // pt-heartbeat gone: lag can no longer be known, and says so.
    pt.kill();
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
