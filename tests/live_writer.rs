//! The heartbeat writer's edges against real servers: a replica that has not applied this
//! process's first heartbeat is only bounded, a read-only node is refused, and a second rwtop on
//! the same primary watches the row instead of writing it twice.

mod common;

use std::time::Duration;

use common::{TestSandbox, engine_spec, lag, until};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::poll::WriterState;
use rwtop::store::Role;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);

fn spec(t: &TestSandbox, nodes: &[(&str, Role)]) -> EngineSpec {
    EngineSpec {
        writer_id: "rwtop-writer-test".to_owned(),
        ..engine_spec(t, nodes)
    }
}

const TOPOLOGY: &[(&str, Role)] = &[("primary", Role::Primary), ("r1", Role::Replica)];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_replica_behind_this_process_history_is_bounded_both_ways() {
    let t = TestSandbox::start(1, false);
    // A first rwtop writes the row and the replica applies it.
    let first = Engine::start(&spec(&t, TOPOLOGY));
    until(&first, "caught up under the first rwtop", DEADLINE, |s| {
        matches!(lag(s, "r1"), Some(Lag::Exact { lag }) if lag.is_zero()).then_some(())
    })
    .await;
    // The replica stops applying while the first rwtop still writes, so it misses heartbeats
    // that the next rwtop never saw written.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    tokio::time::sleep(Duration::from_secs(2)).await; // the row on r1 ages: that is the scenario
    first.shutdown().await;
    let second = Engine::start(&spec(&t, TOPOLOGY));
    let ((lower, upper), _) = until(&second, "a bounded lag", DEADLINE, |s| {
        match lag(s, "r1")? {
            Lag::AtLeast {
                lag,
                upper: Some(upper),
            } => Some((lag, upper)),
            _ => None,
        }
    })
    .await;
    assert!(
        upper >= Duration::from_secs(2),
        "the shown row is over 2 s old: {upper:?}"
    );
    assert!(lower < upper, "{lower:?} < {upper:?}");
    t.admin("r1", "START SLAVE SQL_THREAD");
    until(&second, "exact again once applied", DEADLINE, |s| {
        matches!(lag(s, "r1"), Some(Lag::Exact { .. })).then_some(())
    })
    .await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_writer_refuses_a_read_only_primary_and_says_why() {
    let t = TestSandbox::start(1, false);
    // Point rwtop at the replica as if it were the primary: it is read_only=ON.
    let engine = Engine::start(&spec(&t, &[("r1", Role::Primary)]));
    let (reason, _) = until(&engine, "the writer refuses", DEADLINE, |s| {
        match &s.heartbeat.writer {
            WriterState::Refused { reason } => Some(reason.clone()),
            _ => None,
        }
    })
    .await;
    assert!(reason.contains("read_only=ON"), "{reason}");
    engine.shutdown().await;
    let rows = t.admin(
        "r1",
        "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_NAME = 'heartbeat'",
    );
    assert_eq!(
        rows[0].text(&["n"]).unwrap(),
        Some("0"),
        "nothing written to a read-only node"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_second_rwtop_observes_instead_of_writing_twice() {
    let t = TestSandbox::start(1, false);
    let first = Engine::start(&spec(&t, TOPOLOGY));
    until(&first, "first writes", DEADLINE, |s| {
        (s.heartbeat.writer == WriterState::Writing).then_some(())
    })
    .await;
    let second = Engine::start(&spec(&t, TOPOLOGY));
    let (s, _) = until(
        &second,
        "second observes and still measures lag",
        DEADLINE,
        |s| {
            let observing = s.heartbeat.writer == WriterState::Observing;
            (observing && matches!(lag(s, "r1"), Some(Lag::Exact { .. }))).then(|| s.clone())
        },
    )
    .await;
    assert!(s.heartbeat.last_seq.is_some());
    // One row for the writer id, however many rwtops watch it.
    let rows = t.admin("primary", "SELECT COUNT(*) AS n FROM rwtop.heartbeat");
    assert_eq!(rows[0].text(&["n"]).unwrap(), Some("1"));
    second.shutdown().await;
    first.shutdown().await;
}
