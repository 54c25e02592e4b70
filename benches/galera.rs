//! Galera on real galera-4 members: each member's lag against ground truth, and the time to
//! alert for each Galera fault.
//!
//! Run with `cargo bench --bench galera`; prints `name value unit` lines and a table. Needs
//! MariaDB with galera-4, mariadb-backup and socat (the sandbox's `--galera`); exits non-zero
//! when the cluster cannot start or the truth cannot be measured.
//!
//! A three-member cluster from the sandbox; the real `Engine` at the shipped defaults, given n1
//! alone (it finds n2 and n3, and writes its heartbeat on n1 only). Beside it, a truth writer
//! inserts a row on n1 ten times a second and a watcher per member reads that member's newest
//! row every 20 ms (`support/truth.rs`): truth for a member at an instant is how long it has
//! been missing the oldest row acknowledged on n1 that it lacks. Every published snapshot's
//! exact member lag is compared with the truth at the instant it arrived, in three steady
//! phases (the first second of each skipped): healthy; n3 held by a backup's read lock (FLUSH
//! TABLES WITH READ LOCK: desynced, it falls behind); and flow control (`gcs.fc_limit=1` on n3
//! under eight writers on n1: every member pauses, n3 sends the pauses).
//!
//! Then the time to alert, from the moment the fault is made: `galera_not_synced` on n3 for the
//! read lock, `galera_flow_control` on n3, `galera_not_primary` on n2 cut off with
//! `gmcast.isolate=1` (also from the moment n2 itself first reports non-Primary, which Galera
//! takes its own seconds to decide: a watcher asks it every 50 ms), and `node_down` for n3
//! killed with SIGKILL.
//!
//! Environment: `RWTOP_BENCH_PHASE_SECS` (default 8).

#![allow(
    clippy::cast_precision_loss,
    reason = "counts and milliseconds here are far below 2^52"
)]

#[path = "support/env.rs"]
mod env;
#[path = "support/sandbox.rs"]
#[allow(dead_code, reason = "this bench starts its own Galera sandbox")]
mod sandbox;
#[path = "support/truth.rs"]
#[allow(
    dead_code,
    reason = "the truth shared with lag_truth, which reads more of it"
)]
mod truth;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use env::env_or;
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::sandbox::{Ports, Sandbox, SandboxSpec};
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};
use truth::quantile;

const MEMBERS: [&str; 3] = ["n1", "n2", "n3"];
const TRUTH_EVERY: Duration = Duration::from_millis(100);
const WATCH_EVERY: Duration = Duration::from_millis(20);
const SETTLE: Duration = Duration::from_secs(1);
const DEADLINE: Duration = Duration::from_secs(90);
const GOAL_S: f64 = 2.0;
const WRITERS: usize = 8;

/// What one published snapshot showed, and when it arrived.
struct Seen {
    at: Instant,
    lags: Vec<Option<Lag>>,
}

/// A steady span of one scenario.
struct Phase {
    name: &'static str,
    from: Instant,
    to: Instant,
}

fn main() -> ExitCode {
    env::exit("galera", run())
}

fn run() -> Result<()> {
    let phase = Duration::from_secs(env_or("RWTOP_BENCH_PHASE_SECS", 8)?);
    let dir = tempfile::Builder::new()
        .prefix("rwtop-bench-galera-")
        .tempdir()
        .context("creating a temp folder")?;
    let mut spec = SandboxSpec::new(dir.path().join("sb"));
    spec.galera = MEMBERS.len();
    spec.replicas = 0;
    spec.ports = Ports::Free;
    spec.ephemeral = true;
    let sandbox = Sandbox::up(&spec).context("cannot start a Galera sandbox of three members")?;
    println!(
        "# server: {}; load average {}",
        sandbox.binaries().flavor.version_string,
        sandbox::load_average()
    );
    let runtime = rwtop::engine::runtime(rwtop::engine::WORKERS).context("the tokio runtime")?;
    sandbox.admin(
        "n1",
        "CREATE TABLE rwtop.fc (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)",
    )?;
    let writer = runtime.block_on(truth::Writer::start(&sandbox.endpoint("n1")?, TRUTH_EVERY))?;
    let watchers = MEMBERS
        .iter()
        .map(|m| Ok(runtime.block_on(truth::Watcher::start(&sandbox.endpoint(m)?, WATCH_EVERY))?))
        .collect::<Result<Vec<_>>>()?;
    let mut spec = engine_spec(&sandbox)?;
    let engine = runtime.block_on(Engine::start_finding_roots(&mut spec));
    println!("# engine: {} nodes found from n1", spec.nodes.len());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let collector = runtime.spawn(collect(engine.snapshots(), Arc::clone(&seen)));

    wait(&engine, "three members caught up", healthy)?;
    let mut alerts = Vec::new();
    let phases = truth_phases(&sandbox, &engine, phase, &mut alerts)?;
    let truths: Vec<truth::Truth> = watchers.iter().map(|w| w.truth(&writer)).collect();
    if let Some(failure) = std::iter::once(writer.failure())
        .chain(watchers.iter().map(truth::Watcher::failure))
        .flatten()
        .next()
    {
        bail!("the truth could not be measured: {failure}");
    }
    // n2's watcher would fail on its refused reads from here.
    drop(watchers);
    faults(&sandbox, &runtime, &engine, &mut alerts)?;
    collector.abort();
    runtime.block_on(engine.shutdown());
    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(PoisonError::into_inner));
    report(&phases, &seen, &truths, &alerts);
    println!("# load average at the end: {}", sandbox::load_average());
    Ok(())
}

/// The three steady phases the lag is judged in, timing the alerts their faults raise.
fn truth_phases(
    sandbox: &Sandbox,
    engine: &Engine,
    phase: Duration,
    alerts: &mut Vec<(&'static str, f64)>,
) -> Result<Vec<Phase>> {
    let mut phases = Vec::new();
    let from = Instant::now();
    std::thread::sleep(phase);
    phases.push(Phase {
        name: "healthy",
        from: from + SETTLE,
        to: Instant::now(),
    });

    // A backup's read lock on n3.
    let hold = phase + Duration::from_secs(2);
    let lock = in_thread(
        sandbox,
        "n3",
        format!(
            "FLUSH TABLES WITH READ LOCK; SELECT SLEEP({}); UNLOCK TABLES",
            hold.as_secs()
        ),
    )?;
    let fault = Instant::now();
    alerts.push((
        "read lock on n3: galera_not_synced",
        time_to(engine, fault, AlertKind::GaleraNotSynced, "n3")?,
    ));
    std::thread::sleep((fault + phase).saturating_duration_since(Instant::now()));
    phases.push(Phase {
        name: "desynced",
        from: fault + SETTLE,
        to: Instant::now(),
    });
    let _ = lock.join();
    wait(engine, "n3 caught up after the lock", healthy)?;

    // Flow control from n3.
    sandbox.admin("n3", "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=1'")?;
    let stop = Arc::new(AtomicBool::new(false));
    let load = (0..WRITERS)
        .map(|_| writer_thread(sandbox, &stop))
        .collect::<Result<Vec<_>>>()?;
    let fault = Instant::now();
    alerts.push((
        "gcs.fc_limit=1 on n3: galera_flow_control",
        time_to(engine, fault, AlertKind::GaleraFlowControl, "n3")?,
    ));
    std::thread::sleep((fault + phase).saturating_duration_since(Instant::now()));
    phases.push(Phase {
        name: "flow control",
        from: fault + SETTLE,
        to: Instant::now(),
    });
    stop.store(true, Ordering::Relaxed);
    for t in load {
        let _ = t.join();
    }
    sandbox.admin(
        "n3",
        "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=16'",
    )?;
    wait(engine, "caught up after flow control", healthy)?;
    Ok(phases)
}

/// The faults no lag is judged in: a member cut off, then one killed.
fn faults(
    sandbox: &Sandbox,
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    alerts: &mut Vec<(&'static str, f64)>,
) -> Result<()> {
    // n2 cut off: from the fault, and from n2's own first word of it.
    let said = runtime.spawn(first_non_primary(sandbox.endpoint("n2")?));
    sandbox.admin(
        "n2",
        "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'",
    )?;
    let fault = Instant::now();
    let took = time_to(engine, fault, AlertKind::GaleraNotPrimary, "n2")?;
    let server = runtime.block_on(said)?;
    alerts.push(("gmcast.isolate=1 on n2: galera_not_primary", took));
    if let Some(server) = server {
        let after = (fault + Duration::from_secs_f64(took)).saturating_duration_since(server);
        println!(
            "# n2 said non-Primary {:.2}s after the isolation",
            (server - fault).as_secs_f64()
        );
        alerts.push(("  … from n2's own non-Primary", after.as_secs_f64()));
    }
    sandbox.admin(
        "n2",
        "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'",
    )?;
    wait(engine, "n2 back", healthy)?;

    // n3 killed.
    let pid = sandbox.pid("n3").context("n3's pid")?;
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()?;
    let fault = Instant::now();
    alerts.push((
        "n3 killed: node_down",
        time_to(engine, fault, AlertKind::NodeDown, "n3")?,
    ));

    Ok(())
}

/// n1 alone at the shipped defaults, discovery on: the engine finds the other members.
fn engine_spec(sandbox: &Sandbox) -> Result<EngineSpec> {
    let defaults = rwtop::config::FileSettings::default();
    Ok(EngineSpec {
        writer_id: "galera-bench".to_owned(),
        discovery: true,
        ..EngineSpec::from_settings(
            vec![("n1".to_owned(), sandbox.endpoint("n1")?, Role::Primary)],
            &defaults,
        )
    })
}

async fn collect(mut rx: tokio::sync::watch::Receiver<Arc<Snapshot>>, into: Arc<Mutex<Vec<Seen>>>) {
    while rx.changed().await.is_ok() {
        let s = rx.borrow_and_update().clone();
        let lags = MEMBERS
            .iter()
            .map(|m| Some(s.node(m)?.galera()?.lag.clone()))
            .collect();
        into.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                at: Instant::now(),
                lags,
            });
    }
}

fn healthy(s: &Snapshot) -> bool {
    MEMBERS.iter().all(|m| {
        s.node(m)
            .and_then(|n| n.galera())
            .and_then(|g| g.lag.exact())
            .is_some_and(|l| l < Duration::from_millis(500))
    }) && s.alerts.active.is_empty()
}

/// Waits until `done` holds on the newest snapshot.
fn wait(engine: &Engine, what: &str, done: fn(&Snapshot) -> bool) -> Result<()> {
    let end = Instant::now() + DEADLINE;
    while !done(&engine.latest()) {
        if Instant::now() > end {
            bail!("no {what} within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Seconds from `fault` to the first snapshot with `kind` active on `node`.
fn time_to(engine: &Engine, fault: Instant, kind: AlertKind, node: &str) -> Result<f64> {
    let end = fault + DEADLINE;
    loop {
        let s = engine.latest();
        if s.alerts
            .active
            .iter()
            .any(|a| a.kind == kind && a.node.as_deref() == Some(node))
        {
            return Ok(fault.elapsed().as_secs_f64());
        }
        if Instant::now() > end {
            bail!("no {} on {node} within {DEADLINE:?}", kind.name());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn in_thread(sandbox: &Sandbox, node: &str, sql: String) -> Result<std::thread::JoinHandle<()>> {
    let sandbox = Sandbox::open(sandbox.dir())?;
    let node = node.to_owned();
    Ok(std::thread::spawn(move || {
        if let Err(err) = sandbox.admin(&node, &sql) {
            eprintln!("galera: {node}: {err}");
        }
    }))
}

/// Inserts rows on n1 in batches until `stop`.
fn writer_thread(sandbox: &Sandbox, stop: &Arc<AtomicBool>) -> Result<std::thread::JoinHandle<()>> {
    let sandbox = Sandbox::open(sandbox.dir())?;
    let stop = Arc::clone(stop);
    Ok(std::thread::spawn(move || {
        let batch = "INSERT INTO rwtop.fc (v) VALUES (1);".repeat(50);
        while !stop.load(Ordering::Relaxed) {
            if sandbox.admin("n1", &batch).is_err() {
                return;
            }
        }
    }))
}

/// The first instant the member reports itself outside a primary component.
async fn first_non_primary(endpoint: rwtop::mysql::Endpoint) -> Option<Instant> {
    let mut conn = rwtop::mysql::NodeConn::connect(&endpoint, rwtop::mysql::Timeouts::default())
        .await
        .ok()?;
    let end = Instant::now() + DEADLINE;
    while Instant::now() < end {
        let rows = conn
            .query_rows("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status'")
            .await
            .ok()?;
        let status = rows
            .first()
            .and_then(|r| r.optional_text(&["Value"]).map(str::to_owned));
        if status.as_deref().is_some_and(|s| s != "Primary") {
            return Some(Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

fn report(phases: &[Phase], seen: &[Seen], truths: &[truth::Truth], alerts: &[(&str, f64)]) {
    println!("# |lag − truth| per member and phase (exact readings of published snapshots)");
    println!(
        "{:<14} {:<4} {:>6} {:>8} {:>8} {:>8}",
        "phase", "node", "n", "p50", "p95", "max"
    );
    for phase in phases {
        for (i, member) in MEMBERS.iter().enumerate() {
            let errors: Vec<f64> = seen
                .iter()
                .filter(|s| s.at >= phase.from && s.at <= phase.to)
                .filter_map(|s| {
                    let lag = s.lags.get(i)?.as_ref()?.exact()?;
                    let truth = truths.get(i)?.at(s.at)?;
                    Some((lag.as_secs_f64() - truth.as_secs_f64()).abs())
                })
                .collect();
            let q = |p: f64| quantile(&errors, p).map_or("-".to_owned(), |v| format!("{v:.3}s"));
            println!(
                "{:<14} {:<4} {:>6} {:>8} {:>8} {:>8}",
                phase.name,
                member,
                errors.len(),
                q(0.5),
                q(0.95),
                q(1.0)
            );
            if let Some(p95) = quantile(&errors, 0.95) {
                let name = phase.name.replace(' ', "_");
                println!("galera_lag_error_p95_{name}_{member} {p95:.3} s");
            }
        }
    }
    println!("# time to alert (goal ≤ {GOAL_S} s)");
    for (what, seconds) in alerts {
        let verdict = if *seconds <= GOAL_S { "met" } else { "missed" };
        println!("{what:<46} {seconds:>6.2}s {verdict}");
    }
}
