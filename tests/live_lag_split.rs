//! The heartbeat lag split into transport and apply (`src/store/lag_split.rs`) on real servers,
//! under steady writes: a replica whose IO thread is stopped carries its whole lag as transport
//! (it applied everything it received), and one whose SQL thread is stopped the reverse (it
//! keeps receiving; everything waits in its relay log). Each part is checked on every snapshot
//! from 1.5 s of lag to 4 s, so a split that lags behind the stop, or swaps the parts, fails.

mod common;

use std::time::Duration;

use common::{Load, TestSandbox, exact, primary_and, until};
use rwtop::engine::Engine;
use rwtop::store::Snapshot;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);
/// A caught-up replica's exact lag, with room for a slow machine.
const SMALL: Duration = Duration::from_millis(600);
/// How far the part that holds nothing may read above 0, and the other part below the whole:
/// a heartbeat interval and a busy machine's margin.
const NEAR_ZERO: Duration = Duration::from_millis(400);

/// r1's transport and apply, when both are exact.
fn parts(s: &Snapshot) -> Option<(Duration, Duration)> {
    let split = &s.node("r1")?.replica()?.lag_split;
    match (&split.transport, &split.apply) {
        (Lag::Exact { lag: t }, Lag::Exact { lag: a }) => Some((*t, *a)),
        _ => None,
    }
}

/// Runs `stop` on r1 under writes and checks every snapshot from 1.5 s of lag to 4 s:
/// `holds(transport, apply)` names the part that must carry the lag. Returns the last parts.
async fn split_while_stopped(stop: &str, start: &str, carried_by_transport: bool) {
    let t = TestSandbox::start(1, false);
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    let _load = Load::start(&t).await;
    until(&engine, "r1 caught up, its split exact", DEADLINE, |s| {
        let (transport, apply) = parts(s)?;
        (exact(s, "r1")? <= SMALL && transport + apply <= SMALL).then_some(())
    })
    .await;
    t.admin("r1", stop);
    let mut seen = 0;
    let (last, _) = until(&engine, "r1 4 s behind", DEADLINE, |s| {
        let total = exact(s, "r1").filter(|l| *l >= Duration::from_millis(1500))?;
        let (transport, apply) = parts(s).unwrap_or_else(|| {
            panic!(
                "r1 is {total:?} behind with its split not exact: {:?}",
                s.node("r1").and_then(|n| n.replica()).map(|r| &r.lag_split)
            )
        });
        assert_eq!(transport + apply, total, "the parts add up to the whole");
        let (holds, other) = if carried_by_transport {
            (transport, apply)
        } else {
            (apply, transport)
        };
        assert!(
            other <= NEAR_ZERO && holds + NEAR_ZERO >= total,
            "after `{stop}`, r1 {total:?} behind read transport {transport:?}, apply {apply:?}"
        );
        seen += 1;
        (total >= Duration::from_secs(4)).then_some((transport, apply))
    })
    .await;
    eprintln!("after `{stop}`: {seen} snapshots checked, last transport/apply {last:?}");
    assert!(
        seen >= 5,
        "only {seen} snapshots between 1.5 s and 4 s of lag"
    );
    t.admin("r1", start);
    until(
        &engine,
        "r1 caught up again, its split with it",
        DEADLINE,
        |s| {
            let (transport, apply) = parts(s)?;
            (transport + apply <= SMALL).then_some(())
        },
    )
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_an_io_stop_under_writes_is_all_transport() {
    split_while_stopped("STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_sql_stop_under_writes_is_all_apply() {
    split_while_stopped("STOP SLAVE SQL_THREAD", "START SLAVE SQL_THREAD", false).await;
}
