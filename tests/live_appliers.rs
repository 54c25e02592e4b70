//! Parallel appliers on a real replica (`docs/design.md`, "Parallel appliers and catch-up"): a
//! sandbox replica with 4 workers (`slave_parallel_threads=4`, optimistic) under a write load on
//! four tables at once shows more than one busy worker at some processlist scan, read through
//! rwtop's own engine and store — and, before the load, the same 4 workers all idle. Along the
//! way: the configured workers and mode come from the settings, the scan's age stays within its
//! cadence, and the transactional groups counted by the replica grow with the load. A
//! multi-source aggregator shows its one pool on both channels, marked shared.
//!
//! Every scan under the load is recorded, and every one must count the whole pool. In optimistic
//! mode a worker whose transaction conflicts is killed to be rolled back and retried, and for
//! that moment `SHOW PROCESSLIST` shows its `Command` as `Killed`, not `Slave_worker` (in 2–4 %
//! of the test's own scans here; rwtop's count once left it out of one of six scans): it is
//! still one of the pool's workers, and busy. The test's own scans of the server show it: the
//! `Slave_worker` rows and the `Killed` ones always add up to the pool.

mod common;

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{TestSandbox, primary_and, until, until_healthy};
use rwtop::engine::Engine;
use rwtop::mysql::{Endpoint, NodeConn, Secret, Timeouts};
use rwtop::store::{ApplierView, BusyWorkers, Snapshot};
use tokio::sync::oneshot;

const DEADLINE: Duration = Duration::from_secs(90);
const WORKERS: u16 = 4;
const TABLES: usize = 4;
/// Rows each writer's UPDATE changes: a few milliseconds of row events for a worker to apply, so
/// that several of them are caught holding a transaction at once.
const ROWS: u32 = 2_000;
/// The scan runs every 3rd poll (1 s) while r1 applies; a shown sample older than this is not
/// the newest one.
const SAMPLE_AGE_MAX: Duration = Duration::from_secs(8);

/// Scans of r1 recorded under the load (one every 3 s or so): a count that leaves out a worker
/// on some scans is caught on one of them.
const SCANS: usize = 12;

/// From the snapshot that shows r1 caught up to one whose scan shows no busy worker: the poll
/// that sees the applier idle, the scan on the next, a publication, and a slow machine's slack
/// (a scan at the idle cadence could be 15 polls away).
const IDLE_SHOWN_WITHIN: Duration = Duration::from_secs(6);

fn appliers(s: &Snapshot, node: &str) -> Option<ApplierView> {
    Some(s.node(node)?.replica()?.appliers.clone())
}

/// One writer on its own connection: an UPDATE of every row of its own table, again and again,
/// until told to stop.
async fn writer(endpoint: Endpoint, table: usize, stop: Arc<AtomicBool>) -> u64 {
    let timeouts = Timeouts {
        connect: Duration::from_secs(3),
        query: Duration::from_secs(60),
    };
    let mut conn = NodeConn::connect(&endpoint, timeouts)
        .await
        .unwrap_or_else(|e| panic!("writer {table}: {e}"));
    let sql = format!("UPDATE work.t{table} SET n = n + 1");
    let mut done = 0;
    while !stop.load(Ordering::Relaxed) {
        conn.query_rows(&sql)
            .await
            .unwrap_or_else(|e| panic!("writer {table}: {e}"));
        done += 1;
    }
    done
}

/// The test's own scans of `r1`'s processlist every 50 ms until told to stop: for each, the
/// replication threads (`system user`) whose `Command` is `Slave_worker`, those shown `Killed`
/// (while replication runs, only a worker being retried), and any other but the IO and SQL
/// threads (printed: none was seen in a dozen runs, yet one scan in one of them came out a
/// worker short).
fn watch_pool(
    mut conn: NodeConn,
) -> (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<Vec<(u32, u32)>>,
) {
    let (stop, mut stopped) = oneshot::channel();
    let task = tokio::spawn(async move {
        let mut out = Vec::new();
        loop {
            let rows = conn.query_rows("SHOW PROCESSLIST").await.unwrap();
            let count = |command: &str| {
                let n = rows
                    .iter()
                    .filter(|r| {
                        r.optional_text(&["User"]) == Some("system user")
                            && r.optional_text(&["Command"]) == Some(command)
                    })
                    .count();
                u32::try_from(n).unwrap_or(u32::MAX)
            };
            let others: Vec<_> = rows
                .iter()
                .filter(|r| r.optional_text(&["User"]) == Some("system user"))
                .filter(|r| {
                    let command = r.optional_text(&["Command"]).unwrap_or_default();
                    !["Slave_IO", "Slave_SQL", "Slave_worker", "Killed"].contains(&command)
                })
                .collect();
            if !others.is_empty() {
                eprintln!("replication threads of another command: {others:?}");
            }
            let others = u32::try_from(others.len()).unwrap_or(u32::MAX);
            out.push((count("Slave_worker") + others, count("Killed")));
            tokio::select! {
                _ = &mut stopped => return out,
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    });
    (stop, task)
}

/// A primary and r1 with [`WORKERS`] workers; [`TABLES`] tables of [`ROWS`] rows in `work`,
/// written by an application account `app`, replicated.
fn four_tables_on_a_parallel_replica() -> TestSandbox {
    let t = TestSandbox::start_parallel(1, WORKERS);
    let mut setup = String::from(
        "CREATE DATABASE work; CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-test-only'; \
         GRANT ALL ON work.* TO 'app'@'127.0.0.1';",
    );
    for i in 0..TABLES {
        let _ = write!(
            setup,
            " CREATE TABLE work.t{i} (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB; \
             INSERT INTO work.t{i} SELECT seq, 0 FROM rwtop.seq_1_to_{ROWS};"
        );
    }
    t.admin("primary", &setup);
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    t
}

/// Every scan of r1 under the load (`scans`) against the test's own scans of the server
/// (`server`: `Slave_worker` and `Killed` rows): each prints, the odd ones too.
fn judge_scans(scans: &[BusyWorkers], server: &[(u32, u32)]) {
    let odd: Vec<&BusyWorkers> = scans
        .iter()
        .filter(|b| b.workers != u32::from(WORKERS))
        .collect();
    let killed = server.iter().filter(|(_, killed)| *killed > 0).count();
    eprintln!(
        "{} scans of r1 under the load, {} not of the whole pool: {odd:?}; the test's own {} \
         scans of the server showed a worker `Killed` in {killed}",
        scans.len(),
        odd.len(),
        server.len()
    );
    // A worker is `Killed` only for the moment of its retry, and is counted then too: every
    // scan shows the whole pool.
    assert!(
        odd.is_empty(),
        "{} of {} scans under the load did not count the whole pool: {odd:?}",
        odd.len(),
        scans.len()
    );
    for (workers, killed) in server {
        assert_eq!(
            workers + killed,
            u32::from(WORKERS),
            "the server showed {workers} Slave_worker (or other worker) and {killed} Killed rows"
        );
    }
    for b in scans {
        assert!(
            b.busy <= b.workers && b.workers <= u32::from(WORKERS),
            "{b:?}"
        );
        assert!(b.commit_order_waits.is_some_and(|w| w <= b.busy), "{b:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_replica_with_four_workers_shows_several_busy_under_a_multi_table_load() {
    let t = four_tables_on_a_parallel_replica();
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;

    // Idle first: the settings' 4 workers in optimistic mode, and a scan that saw all four idle.
    // A scan may catch a heartbeat being applied (one worker busy), the more so as a replica
    // seen applying is scanned at once: wait for one that shows none.
    let (idle, _) = until(&engine, "an idle scan of r1's workers", DEADLINE, |s| {
        let a = appliers(s, "r1")?;
        a.busy.is_some_and(|b| b.busy == 0).then_some(a)
    })
    .await;
    assert_eq!(idle.workers, Some(u64::from(WORKERS)), "{idle:?}");
    assert_eq!(idle.mode.as_deref(), Some("optimistic"), "{idle:?}");
    let busy = idle.busy.unwrap();
    assert_eq!(
        (busy.workers, busy.busy),
        (u32::from(WORKERS), 0),
        "{idle:?}"
    );
    assert!(!busy.shared, "one channel: the pool is its own");
    assert_eq!(idle.retried_transactions, Some(0), "{idle:?}");
    let groups_before = idle.groups.transactional.expect("transactional groups");

    let app = Endpoint {
        user: "app".to_owned(),
        password: Some(Secret::new("app-test-only")),
        ..t.sandbox().endpoint("primary").unwrap()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..TABLES)
        .map(|i| tokio::spawn(writer(app.clone(), i, Arc::clone(&stop))))
        .collect();

    let (stop_watch, watch) = watch_pool(t.connect("r1").await);
    let mut scans: Vec<BusyWorkers> = Vec::new();
    let (seen, took) = until(
        &engine,
        "12 scans of r1 under the load, one with more than one busy worker",
        DEADLINE,
        |s| {
            let a = appliers(s, "r1")?;
            let b = a.busy?;
            // A snapshot whose sample is younger than the one before carries a new scan.
            if scans.last().is_none_or(|last| b.age < last.age) {
                scans.push(b);
            } else if let Some(last) = scans.last_mut() {
                last.age = b.age;
            }
            let several = scans.iter().find(|b| b.busy > 1).copied();
            several
                .filter(|_| scans.len() >= SCANS)
                .map(|b| (a.clone(), b))
        },
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    let mut updates = 0;
    for w in writers {
        updates += w.await.unwrap();
    }
    let _ = stop_watch.send(());
    let server = watch.await.unwrap();
    let (view, busy) = seen;
    eprintln!(
        "busy {} of {} (commit-order waits {:?}, sample {:?} old) after {took:?}; \
         {updates} updates written; retries {:?} ({:?}/s)",
        busy.busy,
        busy.workers,
        busy.commit_order_waits,
        busy.age,
        view.retried_transactions,
        view.retries_per_second
    );
    judge_scans(&scans, &server);
    assert!(busy.age <= SAMPLE_AGE_MAX, "{busy:?}");
    // The replica counts what it applied: the writers' UPDATEs are transactional groups.
    let (groups, _) = until(&engine, "r1's transactional groups grow", DEADLINE, |s| {
        appliers(s, "r1")?
            .groups
            .transactional
            .filter(|g| *g > groups_before)
    })
    .await;
    assert!(groups > groups_before);
    assert!(view.retries_per_second.is_some(), "{view:?}");

    // Once r1 has applied everything, a scan shows its workers done within a few polls: the
    // end of its applying is scanned at once, not at the idle replica's every-15th-poll cadence.
    let ((), caught_up) = until(&engine, "r1 caught up", DEADLINE, |s| {
        (common::exact(s, "r1") == Some(Duration::ZERO)).then_some(())
    })
    .await;
    let (done, took) = until(&engine, "a scan of r1 with no busy worker", DEADLINE, |s| {
        appliers(s, "r1")?.busy.filter(|b| b.busy == 0)
    })
    .await;
    eprintln!("caught up after {caught_up:?}; no busy worker shown {took:?} later: {done:?}");
    assert!(
        took <= IDLE_SHOWN_WITHIN,
        "the workers shown idle {took:?} after r1 caught up: {done:?}"
    );
    engine.shutdown().await;
}

/// `MariaDB`'s workers are one pool per server, shared by every connection: a multi-source
/// aggregator with 2 workers shows the same pool on both its channels, marked as shared, while
/// each channel keeps its own mode and counters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_multi_source_pool_is_shown_on_each_channel_as_shared() {
    use rwtop::sandbox::{AGGREGATOR, SECOND_PRIMARY};
    let t = TestSandbox::start_multi_source_parallel(1, 2);
    let mut spec = primary_and(&t, &[AGGREGATOR]);
    spec.nodes.push((
        SECOND_PRIMARY.to_owned(),
        t.sandbox().endpoint(SECOND_PRIMARY).unwrap(),
        rwtop::store::Role::Primary,
    ));
    let engine = Engine::start(&spec);
    let (channels, _) = until(&engine, "agg's two channels with a scan", DEADLINE, |s| {
        let agg = s.node(AGGREGATOR)?;
        let all: Vec<ApplierView> = agg.channels.iter().map(|c| c.appliers.clone()).collect();
        (all.len() == 2 && all.iter().all(|a| a.busy.is_some())).then_some(all)
    })
    .await;
    for a in &channels {
        let busy = a.busy.unwrap();
        assert_eq!(
            (a.workers, busy.workers, busy.shared),
            (Some(2), 2, true),
            "{a:?}"
        );
        assert_eq!(a.mode.as_deref(), Some("optimistic"), "{a:?}");
        assert!(a.groups.transactional.is_some(), "{a:?}");
    }
    engine.shutdown().await;
}
