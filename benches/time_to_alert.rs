//! Time to alert: from a fault on a real sandbox to the first snapshot on the engine's stream that
//! carries its alert, at the shipped defaults (1 s polls, 250 ms heartbeat, 2 s query and 3 s
//! connect timeouts, the default thresholds).
//!
//! The faults, each on `r1` unless named: its SQL thread stopped by hand and on an error (a row
//! the replica already has), its IO thread stopped by hand, its server frozen (SIGSTOP), its server
//! killed (SIGKILL), the primary killed, and `r1`'s source link stalled (the relay holds every
//! byte; the alert is due within its threshold, 1 s, plus 1 s). Each is held until its alert is
//! on the stream, then undone, and the next waits until everything is healthy again. Each starts
//! at a random offset within the poll interval after the snapshot that found everything healthy,
//! so that faults fall anywhere in the poll, read and publication cycles; the offsets are drawn
//! from a seed taken from the clock (printed, `RWTOP_BENCH_SEED` repeats a run's), so that two
//! runs put their faults at different phases, and each round prints its offset.
//!
//! Two sizes: the 3 nodes of a primary and two replicas, and 1,000 names over the scale bench's
//! servers (a primary and 10 replicas, every replica standing in for ~1/10 of the names:
//! `r1#011` is a node polled on r1's port). At 1,000 names a fault on r1 is a fault on each of
//! its ~100 names: the figures are to the first of them and to the last.
//!
//! Run with `cargo bench --bench time_to_alert`; prints `name value unit` lines and a table.
//! Needs MariaDB (or MySQL) installed, as the sandbox does; exits non-zero when the sandbox
//! cannot start or an alert does not come within 30 s. Environment: `RWTOP_BENCH_ROUNDS`
//! (default 5) rounds per fault, `RWTOP_BENCH_NODES` (`3,1000`) the sizes, `RWTOP_BENCH_WORKERS`
//! (the binary's, `engine::WORKERS`) the runtime's worker threads, `RWTOP_BENCH_SEED` the
//! offsets' seed (from the clock by default).

#![allow(
    clippy::cast_precision_loss,
    reason = "counts and milliseconds here are far below 2^52"
)]

#[path = "support/env.rs"]
mod env;
#[path = "support/rng.rs"]
#[allow(
    dead_code,
    reason = "the shared generator; this bench draws only uniforms"
)]
mod rng;
#[path = "support/sandbox.rs"]
mod sandbox;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use env::env_or;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::{Endpoint, NodeConn, Secret, Timeouts};
use rwtop::poll::ConnState;
use rwtop::sandbox::Sandbox;
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};

/// Real replicas behind the names, as in the scale bench.
const REPLICAS: usize = 10;
/// The replica every replica fault is made on.
const FAULTED: &str = "r1";
/// The goal for every fault: the stalled link's is its threshold (1 s) plus 1 s, the same.
const GOAL: Duration = Duration::from_secs(2);
/// An alert that has not come by then is a failure of the run.
const ALERT_DEADLINE: Duration = Duration::from_secs(30);
/// Healthy again after a fault is undone (a killed server restarts and catches up).
const HEALTHY_DEADLINE: Duration = Duration::from_secs(120);
const DBA: (&str, &str) = ("rwtop_tta", "tta-bench-only");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    SqlStopped,
    SqlError,
    IoStopped,
    StalledLink,
    Frozen,
    Killed,
    PrimaryKilled,
}

const FAULTS: [Fault; 7] = [
    Fault::SqlStopped,
    Fault::SqlError,
    Fault::IoStopped,
    Fault::StalledLink,
    Fault::Frozen,
    Fault::Killed,
    Fault::PrimaryKilled,
];

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Self::SqlStopped => "sql_thread_stopped",
            Self::SqlError => "sql_thread_error",
            Self::IoStopped => "io_thread_stopped",
            Self::StalledLink => "stalled_link",
            Self::Frozen => "server_frozen",
            Self::Killed => "server_killed",
            Self::PrimaryKilled => "primary_killed",
        }
    }

    fn alert(self) -> AlertKind {
        match self {
            Self::SqlStopped | Self::SqlError => AlertKind::SqlThreadStopped,
            Self::IoStopped => AlertKind::IoThreadStopped,
            Self::StalledLink => AlertKind::SbmUnderstatesLag,
            Self::Frozen | Self::Killed | Self::PrimaryKilled => AlertKind::NodeDown,
        }
    }

    fn on_primary(self) -> bool {
        self == Self::PrimaryKilled
    }
}

fn main() -> ExitCode {
    env::exit("time_to_alert", run())
}

fn run() -> Result<()> {
    let rounds: usize = env_or("RWTOP_BENCH_ROUNDS", 5)?;
    let sizes: String = env_or("RWTOP_BENCH_NODES", "3,1000".to_owned())?;
    let sizes = sizes
        .split(',')
        .map(|n| match n.trim().parse::<usize>() {
            Ok(n) if n >= 3 => Ok(n),
            _ => Err(anyhow!(
                "RWTOP_BENCH_NODES: {n:?} is not a node count of 3 or more"
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    let dir = tempfile::Builder::new()
        .prefix("rwtop-bench-tta-")
        .tempdir()
        .context("creating a temp folder")?;
    // Ephemeral: dropping the handle kills the servers and deletes the folder, on every return.
    let mut sandbox = sandbox::start(dir.path(), REPLICAS, true, "time_to_alert")?;
    println!(
        "# server: {}; load average {}",
        sandbox.binaries().flavor.version_string,
        sandbox::load_average()
    );
    prepare(&sandbox, sizes.iter().copied().max().unwrap_or(3))?;
    let workers = env_or("RWTOP_BENCH_WORKERS", rwtop::engine::WORKERS)?;
    let runtime = rwtop::engine::runtime(workers).context("building the tokio runtime")?;
    let seed = env_or("RWTOP_BENCH_SEED", clock_seed())?;
    println!("# offsets seed {seed} (RWTOP_BENCH_SEED={seed} repeats them)");
    let mut rng = rng::Rng(seed);
    let mut table = Vec::new();
    // The SQL error's rows stay on the servers from one size to the next: each fault its own.
    let mut conflict_row = 1001;
    for &nodes in &sizes {
        let spec = engine_spec(&sandbox, nodes)?;
        println!("# {nodes} nodes; load average {}", sandbox::load_average());
        let engine = runtime.block_on(async { Engine::start(&spec) });
        let mut rig = Rig {
            runtime: &runtime,
            engine: &engine,
            names: faulted_names(&spec),
            dba: Dba::default(),
            conflict_row,
        };
        let measured = measure(&mut rig, &mut sandbox, rounds, spec.interval, &mut rng);
        conflict_row = rig.conflict_row;
        runtime.block_on(engine.shutdown());
        for (fault, times) in measured? {
            table.push((nodes, fault, times));
        }
    }
    print_table(&table);
    println!("# load average at the end: {}", sandbox::load_average());
    Ok(())
}

/// A seed that differs from run to run: the clock's nanoseconds, mixed with the process id.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the low bits vary the most"
    )]
    let low = nanos as u64;
    low ^ (u64::from(std::process::id()) << 32)
}

/// The bench's own account (replicated from the primary) and the table the SQL error is made
/// on; room for the pollers of the largest size.
fn prepare(sandbox: &Sandbox, most: usize) -> Result<()> {
    let (user, password) = DBA;
    sandbox.admin(
        "primary",
        &format!(
            "CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'; \
             GRANT ALL ON *.* TO '{user}'@'127.0.0.1'; \
             CREATE DATABASE tta; CREATE TABLE tta.conflict (id INT PRIMARY KEY)"
        ),
    )?;
    let per_server = most.div_ceil(REPLICAS) + 60;
    for node in &sandbox.state().nodes {
        sandbox.admin(
            &node.name,
            &format!("SET GLOBAL max_connections = {}", per_server.max(200)),
        )?;
    }
    sandbox.wait_replicating(Duration::from_secs(60))?;
    Ok(())
}

/// The primary, then `nodes − 1` names over the replicas: at 3 the sandbox's own `r1` and `r2`,
/// above that round-robin over all of them as the scale bench does. The shipped defaults
/// otherwise, discovery off, writer on.
fn engine_spec(sandbox: &Sandbox, nodes: usize) -> Result<EngineSpec> {
    let defaults = rwtop::config::FileSettings::default();
    let mut list = vec![(
        "primary".to_owned(),
        sandbox.endpoint("primary")?,
        Role::Primary,
    )];
    if nodes == 3 {
        for r in ["r1", "r2"] {
            list.push((r.to_owned(), sandbox.endpoint(r)?, Role::Replica));
        }
    } else {
        for i in 1..nodes {
            let r = (i - 1) % REPLICAS + 1;
            list.push((
                format!("r{r}#{i:03}"),
                sandbox.endpoint(&format!("r{r}"))?,
                Role::Replica,
            ));
        }
    }
    Ok(EngineSpec {
        writer_id: "rwtop-bench-tta".to_owned(),
        discovery: false,
        ..EngineSpec::from_settings(list, &defaults)
    })
}

/// The names that stand for [`FAULTED`].
fn faulted_names(spec: &EngineSpec) -> Vec<String> {
    spec.nodes
        .iter()
        .map(|(name, _, _)| name.clone())
        .filter(|name| name == FAULTED || name.starts_with(&format!("{FAULTED}#")))
        .collect()
}

/// Connections of the bench's own account, opened when first needed and again after a kill.
#[derive(Default)]
struct Dba {
    conns: Vec<(String, NodeConn)>,
}

impl Dba {
    async fn sql(&mut self, sandbox: &Sandbox, node: &str, sql: &str) -> Result<()> {
        self.conns.retain(|(_, c)| c.is_open());
        if !self.conns.iter().any(|(n, _)| n == node) {
            let (user, password) = DBA;
            let endpoint = Endpoint {
                user: user.to_owned(),
                password: Some(Secret::new(password)),
                ..sandbox.endpoint(node)?
            };
            let mut conn = NodeConn::connect(&endpoint, Timeouts::default())
                .await
                .with_context(|| format!("connecting to {node} as {user}"))?;
            // Nothing the bench writes on a replica is logged or replicated.
            if node != "primary" {
                conn.query_rows("SET SESSION sql_log_bin = 0").await?;
            }
            self.conns.push((node.to_owned(), conn));
        }
        let conn = self
            .conns
            .iter_mut()
            .find(|(n, _)| n == node)
            .map(|(_, c)| c)
            .ok_or_else(|| anyhow!("no connection to {node}"))?;
        conn.query_rows(sql)
            .await
            .with_context(|| format!("{node}: {sql}"))?;
        Ok(())
    }

    /// [`Self::sql`], once more on a new connection when the old one broke (its server was
    /// killed and restarted since).
    async fn run(&mut self, sandbox: &Sandbox, node: &str, sql: &str) -> Result<()> {
        if self.sql(sandbox, node, sql).await.is_ok() {
            return Ok(());
        }
        self.conns.retain(|(n, _)| n != node);
        self.sql(sandbox, node, sql).await
    }
}

struct Rig<'a> {
    runtime: &'a tokio::runtime::Runtime,
    engine: &'a Engine,
    names: Vec<String>,
    dba: Dba,
    /// The row the next fault may make its SQL error on (the replica has it first, then the
    /// primary writes it): a new one for every fault.
    conflict_row: i32,
}

/// Time to the alert on the first and on the last of the faulted names.
#[derive(Debug, Clone, Copy)]
struct Took {
    first: Duration,
    all: Duration,
}

/// Every fault `rounds` times, each at a random offset within `interval` (the poll's) after
/// the snapshot that found everything healthy.
fn measure(
    rig: &mut Rig<'_>,
    sandbox: &mut Sandbox,
    rounds: usize,
    interval: Duration,
    rng: &mut rng::Rng,
) -> Result<Vec<(Fault, Vec<Took>)>> {
    let ready = wait_healthy(rig).context("before the first fault")?;
    println!("# healthy {:.1} s after start", ready.as_secs_f64());
    let mut out: Vec<(Fault, Vec<Took>)> = FAULTS.iter().map(|f| (*f, Vec::new())).collect();
    for round in 1..=rounds {
        for (fault, times) in &mut out {
            // Anywhere in the poll, read and publication cycles.
            let offset = interval.mul_f64(rng.uniform());
            std::thread::sleep(offset);
            let took = one_fault(rig, sandbox, *fault, round)?;
            println!(
                "{} round {round}: at +{:.3} s, first {:.3} s, all {:.3} s",
                fault.name(),
                offset.as_secs_f64(),
                took.first.as_secs_f64(),
                took.all.as_secs_f64()
            );
            times.push(took);
            wait_healthy(rig).with_context(|| format!("after {}", fault.name()))?;
        }
    }
    Ok(out)
}

fn pid(sandbox: &Sandbox, node: &str) -> Result<Pid> {
    sandbox
        .pid(node)
        .map(Pid::from_raw)
        .ok_or_else(|| anyhow!("{node}: no live server process"))
}

/// SIGCONT when dropped: the bench never leaves a server frozen.
struct Frozen(Pid);

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

/// Makes `fault`, waits for its alert, undoes it.
fn one_fault(rig: &mut Rig<'_>, sandbox: &mut Sandbox, fault: Fault, round: usize) -> Result<Took> {
    let targets: Vec<String> = if fault.on_primary() {
        vec!["primary".to_owned()]
    } else {
        rig.names.clone()
    };
    let mut rx = rig.engine.snapshots();
    rx.borrow_and_update();
    let row = rig.conflict_row;
    rig.conflict_row += 1;
    let runtime = rig.runtime;
    let mut frozen = None;
    if fault == Fault::SqlError {
        // The replica has the row already: the primary's insert stops its SQL thread.
        runtime.block_on(rig.dba.run(
            sandbox,
            FAULTED,
            &format!("INSERT INTO tta.conflict VALUES ({row})"),
        ))?;
    }
    let at = Instant::now();
    match fault {
        Fault::SqlStopped => {
            runtime.block_on(rig.dba.run(sandbox, FAULTED, "STOP SLAVE SQL_THREAD"))?;
        }
        Fault::SqlError => runtime.block_on(rig.dba.run(
            sandbox,
            "primary",
            &format!("INSERT INTO tta.conflict VALUES ({row})"),
        ))?,
        Fault::IoStopped => {
            runtime.block_on(rig.dba.run(sandbox, FAULTED, "STOP SLAVE IO_THREAD"))?;
        }
        Fault::StalledLink => sandbox
            .relay(FAULTED)
            .ok_or_else(|| anyhow!("{FAULTED} has no relay"))?
            .stall(),
        Fault::Frozen => {
            let pid = pid(sandbox, FAULTED)?;
            kill(pid, Signal::SIGSTOP).context("SIGSTOP")?;
            frozen = Some(Frozen(pid));
        }
        Fault::Killed => kill(pid(sandbox, FAULTED)?, Signal::SIGKILL).context("SIGKILL")?,
        Fault::PrimaryKilled => {
            kill(pid(sandbox, "primary")?, Signal::SIGKILL).context("SIGKILL")?;
        }
    }
    let took = runtime.block_on(until_alert(&mut rx, at, fault.alert(), &targets));
    // Undone whatever the wait found.
    drop(frozen);
    match fault {
        Fault::SqlStopped => {
            runtime.block_on(rig.dba.run(sandbox, FAULTED, "START SLAVE SQL_THREAD"))?;
        }
        Fault::SqlError => runtime.block_on(rig.dba.run(
            sandbox,
            FAULTED,
            &format!("DELETE FROM tta.conflict WHERE id = {row}; START SLAVE SQL_THREAD"),
        ))?,
        Fault::IoStopped => {
            runtime.block_on(rig.dba.run(sandbox, FAULTED, "START SLAVE IO_THREAD"))?;
        }
        Fault::StalledLink => {
            if let Some(relay) = sandbox.relay(FAULTED) {
                relay.resume();
            }
        }
        Fault::Frozen => {}
        Fault::Killed | Fault::PrimaryKilled => sandbox.start_stopped()?,
    }
    took.with_context(|| format!("{} round {round}", fault.name()))
}

/// The snapshots after `at` until every target carries `kind`.
async fn until_alert(
    rx: &mut tokio::sync::watch::Receiver<std::sync::Arc<Snapshot>>,
    at: Instant,
    kind: AlertKind,
    targets: &[String],
) -> Result<Took> {
    let mut first = None;
    loop {
        let left = ALERT_DEADLINE.saturating_sub(at.elapsed());
        if tokio::time::timeout(left, rx.changed()).await.is_err() {
            bail!(
                "{kind:?} not on all of {} names within {ALERT_DEADLINE:?}",
                targets.len()
            );
        }
        let seen = at.elapsed();
        let s = rx.borrow_and_update().clone();
        let raised = targets
            .iter()
            .filter(|t| {
                s.alerts
                    .active
                    .iter()
                    .any(|a| a.kind == kind && a.node.as_deref() == Some(t.as_str()))
            })
            .count();
        if raised > 0 && first.is_none() {
            first = Some(seen);
        }
        if raised == targets.len() {
            return Ok(Took {
                first: first.unwrap_or(seen),
                all: seen,
            });
        }
    }
}

/// Every node up, the faulted names caught up, and no alert active but a lag P99 still holding
/// an earlier fault's lag (a minute's window).
fn healthy(s: &Snapshot, names: &[String]) -> bool {
    let up = s.nodes.iter().all(|n| n.conn == ConnState::Up);
    let caught_up = names.iter().all(|name| {
        s.node(name).and_then(|n| n.replica()).is_some_and(
            |r| matches!(r.heartbeat_lag, Lag::Exact { lag } if lag < Duration::from_millis(500)),
        )
    });
    let quiet = s
        .alerts
        .active
        .iter()
        .all(|a| a.kind == AlertKind::LagP99High);
    up && caught_up && quiet && !s.heartbeat.stale
}

fn wait_healthy(rig: &Rig<'_>) -> Result<Duration> {
    let began = Instant::now();
    let names = &rig.names;
    rig.runtime.block_on(async {
        let mut rx = rig.engine.snapshots();
        loop {
            if healthy(&rx.borrow_and_update(), names) {
                return Ok(began.elapsed());
            }
            let left = HEALTHY_DEADLINE.saturating_sub(began.elapsed());
            if tokio::time::timeout(left, rx.changed()).await.is_err() {
                let s = rx.borrow().clone();
                let active: Vec<String> = s
                    .alerts
                    .active
                    .iter()
                    .map(|a| format!("{:?} {:?}", a.kind, a.node))
                    .take(10)
                    .collect();
                bail!("not healthy within {HEALTHY_DEADLINE:?}; active: {active:?}");
            }
        }
    })
}

fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = ((sorted.len() as f64 - 1.0) * q).round();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "an index within the slice"
    )]
    sorted.get(at as usize).copied().unwrap_or(f64::NAN)
}

fn print_table(table: &[(usize, Fault, Vec<Took>)]) {
    let goal = GOAL.as_secs_f64();
    let mark = |v: f64| {
        if v > goal {
            format!("{v:.2} missed")
        } else {
            format!("{v:.2}")
        }
    };
    let figures: Vec<(usize, Fault, usize, [f64; 4])> = table
        .iter()
        .map(|(nodes, fault, times)| {
            let first: Vec<f64> = times.iter().map(|t| t.first.as_secs_f64()).collect();
            let all: Vec<f64> = times.iter().map(|t| t.all.as_secs_f64()).collect();
            let figures = [
                quantile(&first, 0.5),
                quantile(&first, 1.0),
                quantile(&all, 0.5),
                quantile(&all, 1.0),
            ];
            (*nodes, *fault, times.len(), figures)
        })
        .collect();
    for (nodes, fault, _, figures) in &figures {
        for (what, v) in ["first_p50", "first_max", "all_p50", "all_max"]
            .iter()
            .zip(figures)
        {
            println!("n{nodes}_{}_{what} {v:.3} s", fault.name());
        }
    }
    println!();
    println!(
        "{:>5}  {:<20} {:>6}  {:>12} {:>12}  {:>12} {:>12}",
        "nodes", "fault", "rounds", "first p50", "first max", "all p50", "all max"
    );
    for (nodes, fault, rounds, [fp50, fmax, ap50, amax]) in figures {
        println!(
            "{nodes:>5}  {:<20} {:>6}  {:>12} {:>12}  {:>12} {:>12}",
            fault.name(),
            rounds,
            mark(fp50),
            mark(fmax),
            mark(ap50),
            mark(amax)
        );
    }
}
