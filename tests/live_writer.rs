//! The heartbeat writer's edges against real servers: a replica that has not applied this
//! process's first heartbeat is only bounded, a read-only node is refused, and a second rwtop on
//! the same primary watches the row instead of writing it twice.

mod common;

use std::time::Duration;

use common::{TestSandbox, engine_spec, eventually};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::poll::WriterState;
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};

const DEADLINE: Duration = Duration::from_secs(40);

fn spec(t: &TestSandbox, nodes: &[(&str, Role)]) -> EngineSpec {
    EngineSpec {
        writer_id: "rwtop-writer-test".to_owned(),
        ..engine_spec(t, nodes)
    }
}

const TOPOLOGY: &[(&str, Role)] = &[("primary", Role::Primary), ("r1", Role::Replica)];

fn lag(s: &Snapshot, node: &str) -> Option<Lag> {
    Some(s.node(node)?.replica.as_ref()?.heartbeat_lag.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_replica_behind_this_process_history_is_bounded_both_ways() {
    let t = TestSandbox::start(1, false);
    // A first rwtop writes the row and the replica applies it.
    let first = Engine::start(&spec(&t, TOPOLOGY));
    let mut rx = first.snapshots();
    eventually("caught up under the first rwtop", DEADLINE, async || {
        let _ = rx.changed().await;
        matches!(lag(&rx.borrow(), "r1"), Some(Lag::Exact { lag }) if lag.is_zero()).then_some(())
    })
    .await;
    // The replica stops applying while the first rwtop still writes, so it misses heartbeats
    // that the next rwtop never saw written.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    tokio::time::sleep(Duration::from_secs(2)).await; // the row on r1 ages: that is the scenario
    first.shutdown().await;
    let second = Engine::start(&spec(&t, TOPOLOGY));
    let mut rx = second.snapshots();
    let (lower, upper) = eventually("a bounded lag", DEADLINE, async || {
        let _ = rx.changed().await;
        match lag(&rx.borrow(), "r1")? {
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
    eventually("exact again once applied", DEADLINE, async || {
        let _ = rx.changed().await;
        matches!(lag(&rx.borrow(), "r1"), Some(Lag::Exact { .. })).then_some(())
    })
    .await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_writer_refuses_a_read_only_primary_and_says_why() {
    let t = TestSandbox::start(1, false);
    // Point rwtop at the replica as if it were the primary: it is read_only=ON.
    let engine = Engine::start(&spec(&t, &[("r1", Role::Primary)]));
    let mut rx = engine.snapshots();
    let reason = eventually("the writer refuses", DEADLINE, async || {
        let _ = rx.changed().await;
        match &rx.borrow().heartbeat.writer {
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
    let mut first_rx = first.snapshots();
    eventually("first writes", DEADLINE, async || {
        let _ = first_rx.changed().await;
        (first_rx.borrow().heartbeat.writer == WriterState::Writing).then_some(())
    })
    .await;
    let second = Engine::start(&spec(&t, TOPOLOGY));
    let mut rx = second.snapshots();
    let s = eventually(
        "second observes and still measures lag",
        DEADLINE,
        async || {
            let _ = rx.changed().await;
            let s = rx.borrow().clone();
            let observing = s.heartbeat.writer == WriterState::Observing;
            (observing && matches!(lag(&s, "r1"), Some(Lag::Exact { .. }))).then_some(s)
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
