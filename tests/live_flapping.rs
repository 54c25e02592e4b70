//! A replica that is slow but healthy, against real servers: it stalls for a good part of every
//! poll interval (frozen with SIGSTOP, then let go), so its polls answer late but within the
//! interval and its lag rises and falls below the thresholds. For a minute of that, nothing is
//! raised and the node is never shown down. An engine that calls a node silent before a whole
//! interval has passed, or that raises a reading on its first bad sample, fails here.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::{Load, TestSandbox, lag, primary_and, until, until_healthy};
use rwtop::engine::Engine;
use rwtop::poll::ConnState;
use rwtop::store::lag::Lag;

const DEADLINE: Duration = Duration::from_secs(60);
/// How long the replica is watched while it stalls.
const WATCH: Duration = Duration::from_secs(40);
/// Each stall: over half the 1 s poll interval (an engine that calls a node silent after half
/// an interval sees it), yet with room to answer within the interval on a busy machine.
const STALL: Duration = Duration::from_millis(700);
/// Running between two stalls: long enough to apply what piled up while stalled. The cycle is
/// no multiple of the poll, read or publication periods, so the stalls fall at every phase of
/// them rather than at the same one each time.
const RUN: Duration = Duration::from_millis(830);

/// Freezes and thaws a server in turns on its own thread until dropped; counts the stalls.
struct Stutter {
    stop: Arc<AtomicBool>,
    stalls: Arc<AtomicU32>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Stutter {
    fn start(t: &Arc<TestSandbox>, node: &'static str) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stalls = Arc::new(AtomicU32::new(0));
        let thread = {
            let (t, stop, stalls) = (Arc::clone(t), Arc::clone(&stop), Arc::clone(&stalls));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    {
                        // Thawed when the guard drops, whatever happens.
                        let _frozen = t.freeze(node);
                        std::thread::sleep(STALL);
                    }
                    stalls.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(RUN);
                }
            })
        };
        Self {
            stop,
            stalls,
            thread: Some(thread),
        }
    }

    fn stalls(&self) -> u32 {
        self.stalls.load(Ordering::Relaxed)
    }
}

impl Drop for Stutter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_slow_but_healthy_replica_raises_nothing() {
    let t = Arc::new(TestSandbox::start(1, false));
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1"], DEADLINE).await;
    let before = engine.latest().node("r1").map_or(0, |n| n.sample_seq);

    let stutter = Stutter::start(&t, "r1");
    let began = Instant::now();
    let mut worst_lag = Duration::ZERO;
    let mut worst_age = Duration::ZERO;
    let mut snapshots = 0u32;
    let ((), _) = until(&engine, "the watch to end", WATCH + DEADLINE, |s| {
        snapshots += 1;
        let r1 = s.node("r1").expect("r1");
        assert_eq!(
            r1.conn,
            ConnState::Up,
            "a slow r1 shown {} after {:?}",
            r1.conn.name(),
            began.elapsed()
        );
        if let Some(Lag::Exact { lag }) = lag(s, "r1") {
            worst_lag = worst_lag.max(lag);
        }
        worst_age = worst_age.max(r1.sample_age.unwrap_or_default());
        assert!(
            s.alerts.log.is_empty(),
            "raised on a slow but healthy replica after {:?}: {:#?}",
            began.elapsed(),
            s.alerts.log
        );
        (began.elapsed() >= WATCH).then_some(())
    })
    .await;
    let stalls = stutter.stalls();
    drop(stutter);
    let after = engine.latest().node("r1").map_or(0, |n| n.sample_seq);
    eprintln!(
        "{stalls} stalls of {STALL:?} in {WATCH:?}: {} samples, {snapshots} snapshots, worst lag \
         {worst_lag:?}, worst sample age {worst_age:?}",
        after - before
    );
    // The stalls happened and were felt: polls waited on them, and the lag rose with them.
    assert!(u64::from(stalls) * 2 >= WATCH.as_secs(), "{stalls} stalls");
    assert!(worst_lag >= STALL / 2, "the stalls did not show in the lag");
    // Polled all along, late but never skipped for long.
    assert!(
        after - before >= WATCH.as_secs() / 2,
        "{} samples",
        after - before
    );
    engine.shutdown().await;
}
