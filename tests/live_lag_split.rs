//! The heartbeat lag split into transport and apply (`src/store/lag_split.rs`) on real servers,
//! each part held against the truth as the `lag_truth` bench measures it (`support/truth.rs`:
//! rows committed on the primary ten times a second against the newest one the replica shows,
//! read every 20 ms). A replica whose IO thread is stopped receives nothing more and applies all
//! it received: its whole truth is transport, and apply's truth is 0. One whose SQL thread is
//! stopped keeps receiving: its whole truth is apply, transport's 0. The parts add up to the
//! whole by construction, so each is checked against its own truth, on every snapshot from a
//! second after the stop until rwtop reads 4 s; snapshots whose parts are not exact are counted.

mod common;
#[path = "../benches/support/truth.rs"]
#[allow(
    dead_code,
    reason = "the bench's truth, of which these tests need the measuring only"
)]
mod truth;

use std::time::{Duration, Instant};

use common::{TestSandbox, dba, primary_and, record_snapshots, until};
use rwtop::engine::Engine;
use rwtop::store::Snapshot;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(40);
/// A caught-up replica's exact lag, with room for a slow machine.
const SMALL: Duration = Duration::from_millis(600);
/// The truth writer's pace and the watcher's, as the bench has them.
const TRUTH_EVERY: Duration = Duration::from_millis(100);
const WATCH_EVERY: Duration = Duration::from_millis(20);
/// From the stop until the phase is steady: the applier finishes what it had received, and the
/// first reading after the stop is published.
const SETTLE: Duration = Duration::from_secs(1);
/// How far a part may read from its truth. A position tells which heartbeat (every 250 ms) the
/// replica has, and the lag counts from the middle of the gap to the next: ±125 ms. The truth
/// is up to one row interval (100 ms) low. The rest is the age of the reading when the snapshot
/// is built, on a busy two-core machine. The bench's p95 is 0.18–0.22 s in release builds.
const PART_WITHIN: Duration = Duration::from_millis(400);
/// How far above 0 the part holding nothing may read: a heartbeat in flight when the status
/// was read is a few milliseconds behind, and rwtop reads the same missing heartbeat for both
/// parts of a replica that received nothing more. A part read from the wrong heartbeat is off by
/// a quarter second or more.
const EMPTY_WITHIN: Duration = Duration::from_millis(100);
/// Snapshots of a steady phase whose lag or either part is not exact (a bound or unknown): a
/// position read in the middle of a heartbeat's commit may be placed before the run and read as
/// a bound once, no more.
const NOT_EXACT_AT_MOST: usize = 1;

/// r1's whole lag and its two parts, when the snapshot has them: `None` for each that is a
/// bound or unknown.
fn r1_lags(s: &Snapshot) -> (Option<Duration>, Option<(Duration, Duration)>) {
    let Some(r) = s.node("r1").and_then(|n| n.replica()) else {
        return (None, None);
    };
    let parts = match (&r.lag_split.transport, &r.lag_split.apply) {
        (Lag::Exact { lag: t }, Lag::Exact { lag: a }) => Some((*t, *a)),
        _ => None,
    };
    (r.heartbeat_lag.exact(), parts)
}

/// One published snapshot: when it was built, the whole lag and the parts.
type Seen = (Instant, Option<Duration>, Option<(Duration, Duration)>);

/// Runs `stop` on r1 under the truth writer's rows and checks every snapshot of the steady
/// phase (from [`SETTLE`] after the stop until rwtop reads 4 s) against the truth: the part
/// `transport_holds` names carries the whole truth, the other reads 0.
async fn split_while_stopped(stop: &str, start: &str, transport_holds: bool) {
    let t = TestSandbox::start(1, false);
    let primary = t.sandbox().endpoint("primary").expect("endpoint");
    let writer = truth::Writer::start(&primary, TRUTH_EVERY)
        .await
        .expect("the truth writer");
    let r1_endpoint = t.sandbox().endpoint("r1").expect("endpoint");
    let watcher = truth::Watcher::start(&r1_endpoint, WATCH_EVERY)
        .await
        .expect("the truth watcher");
    let mut r1 = dba(&t, "r1").await;
    // The store's instants count from its start, a hair after this.
    let started = Instant::now();
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    until(&engine, "r1 caught up, its split exact", DEADLINE, |s| {
        let (whole, parts) = r1_lags(s);
        let (transport, apply) = parts?;
        (whole? <= SMALL && transport + apply <= SMALL).then_some(())
    })
    .await;
    let (done, recorded) = record_snapshots(&engine, move |s| {
        let (whole, parts) = r1_lags(s);
        Some((started + s.uptime, whole, parts))
    });
    r1.query_rows(stop)
        .await
        .unwrap_or_else(|e| panic!("{stop}: {e}"));
    let stopped = Instant::now();
    until(&engine, "r1 4 s behind", DEADLINE, |s| {
        r1_lags(s)
            .0
            .filter(|l| *l >= Duration::from_secs(4))
            .map(|_| ())
    })
    .await;
    let held_to = Instant::now();
    let _ = done.send(());
    let seen: Vec<Seen> = recorded.await.unwrap();
    r1.query_rows(start)
        .await
        .unwrap_or_else(|e| panic!("{start}: {e}"));
    until(
        &engine,
        "r1 caught up again, its split with it",
        DEADLINE,
        |s| {
            let (transport, apply) = r1_lags(s).1?;
            (transport + apply <= SMALL).then_some(())
        },
    )
    .await;
    engine.shutdown().await;
    // The watcher has read r1 well past the phase by now: the truth covers all of it.
    if let Some(failure) = writer.failure().or_else(|| watcher.failure()) {
        panic!("the truth could not be measured: {failure}");
    }
    let truth = watcher.truth(&writer);

    let steady: Vec<&Seen> = seen
        .iter()
        .filter(|(at, ..)| *at >= stopped + SETTLE && *at <= held_to)
        .collect();
    judge(&steady, &truth, stopped, stop, transport_holds);
}

/// Holds each snapshot of the steady phase after `stop` (sent at `stopped`) against the truth:
/// the part `transport_holds` names carries it all, the other reads 0; counts those not exact.
fn judge(
    steady: &[&Seen],
    truth: &truth::Truth,
    stopped: Instant,
    stop: &str,
    transport_holds: bool,
) {
    let mut not_exact = 0;
    let mut worst = (Duration::ZERO, Duration::ZERO);
    for (at, whole, parts) in steady {
        // The truth as the watcher's reads on either side of the instant bound it: one value
        // while r1 stands still, a span for the last snapshot if the next read came after the
        // restart (where `Truth::at` would spread the catch-up back over the gap).
        let (low, high) = truth
            .range(*at)
            .unwrap_or_else(|| panic!("no truth {:?} after the stop", *at - stopped));
        let (Some(whole), Some((transport, apply))) = (whole, parts) else {
            not_exact += 1;
            continue;
        };
        let (holds, empty) = if transport_holds {
            (*transport, *apply)
        } else {
            (*apply, *transport)
        };
        let off = low.saturating_sub(holds).max(holds.saturating_sub(high));
        worst = (worst.0.max(off), worst.1.max(empty));
        assert!(
            off <= PART_WITHIN && empty <= EMPTY_WITHIN,
            "after `{stop}`, {:?} in: truth {low:?}..{high:?}, rwtop {whole:?} as transport \
             {transport:?} + apply {apply:?}",
            *at - stopped
        );
    }
    eprintln!(
        "after `{stop}`: {} steady snapshots, {not_exact} not exact; worst |part − truth| of the \
         part holding the lag {:?}, of the other {:?}",
        steady.len(),
        worst.0,
        worst.1
    );
    assert!(
        steady.len() >= 8,
        "only {} snapshots from {SETTLE:?} after the stop to 4 s of lag",
        steady.len()
    );
    assert!(
        not_exact <= NOT_EXACT_AT_MOST,
        "{not_exact} of {} steady snapshots without an exact split",
        steady.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_an_io_stop_is_all_transport_against_the_truth() {
    split_while_stopped("STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_sql_stop_is_all_apply_against_the_truth() {
    split_while_stopped("STOP SLAVE SQL_THREAD", "START SLAVE SQL_THREAD", false).await;
}
