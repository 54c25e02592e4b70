//! rwtop's heartbeat lag against ground truth, on a real sandbox (a primary and two replicas, each
//! replica's link through a relay that can be stalled).
//!
//! Run with `cargo bench --bench lag_truth`; prints `name value unit` lines and a table per
//! scenario. Needs a MariaDB (or MySQL) server installed, as the sandbox does; exits non-zero
//! when the sandbox cannot start or the truth cannot be measured.
//!
//! The real `Engine` runs at the shipped defaults (1 s polls, heartbeat written and read every
//! 250 ms, snapshots published by the store). Beside it, with connections of its own, a truth
//! writer inserts a row on the primary 10 times a second and remembers when each INSERT was
//! acknowledged, and a watcher per replica reads the newest row every 20 ms
//! (`support/truth.rs`). Truth for a replica at instant t is how long it has been missing the
//! oldest acknowledged row it lacks.
//!
//! Every snapshot the engine publishes is compared at the instant it was built and published —
//! the moment the display makes its claim: each replica's exact lag against the truth at that
//! instant. A second figure compares it with the truth just before the next snapshot replaces
//! it, the oldest the shown value gets. Only steady phases count: each scenario is held on `r1`
//! for a phase (6 s by default), skipping its first second (and the first 7 s of
//! `MASTER_DELAY=5`, while the delay builds up); `r2` stays healthy throughout and counts as
//! healthy, as does `r1` in the healthy phase.
//!
//! Where a reading falls between heartbeats, and between a read and a publication, is set by the
//! phases of rwtop's timers and of each stop: fixed for one engine and one stop. So the scenarios
//! run in rounds, each on a fresh engine; a figure over few rounds is a figure over few phases.
//!
//! Each scenario starts at a random moment (up to a second after the catch-up from the one
//! before), so that the stops fall anywhere between two heartbeats.
//!
//! Environment: `RWTOP_BENCH_PHASE_SECS` (default 6), `RWTOP_BENCH_ROUNDS` (default 6),
//! `RWTOP_BENCH_NODES` (default 3: the sandbox's own; more are extra names for `r2`, so the
//! engine polls that many while `r1` is judged), `RWTOP_BENCH_WORKERS` (the binary's runtime
//! workers, `engine::WORKERS`).

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
#[path = "support/lag_split.rs"]
mod split;
#[path = "support/truth.rs"]
mod truth;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use env::env_or;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::sandbox::Sandbox;
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};
use truth::quantile;

const REPLICAS: [&str; 2] = ["r1", "r2"];
/// The replica each disturbance is applied to; the other stays healthy.
const DISTURBED: &str = "r1";
const TRUTH_EVERY: Duration = Duration::from_millis(100);
const WATCH_EVERY: Duration = Duration::from_millis(20);
const SETTLE: Duration = Duration::from_secs(1);
const DELAY_SETTLE: Duration = Duration::from_secs(7);
const READY_DEADLINE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Healthy,
    IoStopped,
    SqlStopped,
    StalledLink,
    MasterDelay,
}

impl Scenario {
    const ALL: [Self; 5] = [
        Self::Healthy,
        Self::IoStopped,
        Self::SqlStopped,
        Self::StalledLink,
        Self::MasterDelay,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::IoStopped => "io_thread_stopped",
            Self::SqlStopped => "sql_thread_stopped",
            Self::StalledLink => "stalled_source_link",
            Self::MasterDelay => "master_delay_5",
        }
    }

    /// Its place in [`Self::ALL`], where the figures of each scenario are kept.
    fn slot(self) -> Option<usize> {
        Self::ALL.iter().position(|s| *s == self)
    }

    fn settle(self) -> Duration {
        if self == Self::MasterDelay {
            DELAY_SETTLE
        } else {
            SETTLE
        }
    }
}

/// A steady span of one scenario on `DISTURBED`.
struct Phase {
    scenario: Scenario,
    from: Instant,
    to: Instant,
}

impl Phase {
    /// The steady phase holding the instant `at`, if any.
    fn holding(phases: &[Self], at: Instant) -> Option<&Self> {
        phases.iter().find(|p| p.from <= at && at <= p.to)
    }

    /// The scenario replica `name` is in during this phase: the disturbed one's, any other
    /// replica healthy.
    fn scenario_of(&self, name: &str) -> Scenario {
        if name == DISTURBED {
            self.scenario
        } else {
            Scenario::Healthy
        }
    }
}

/// What one published snapshot said about each replica, and when it was built.
struct Seen {
    at: Instant,
    lags: Vec<Option<Lag>>,
    /// Each replica's lag split, transport and apply (`store/lag_split.rs`).
    splits: Vec<Option<(Lag, Lag)>>,
}

struct Options {
    phase: Duration,
    rounds: u32,
    nodes: usize,
    /// `RWTOP_BENCH_BY_POSITION=false`: every reading from the heartbeat table.
    by_position: bool,
}

fn main() -> ExitCode {
    env::exit("lag_truth", run())
}

fn run() -> Result<()> {
    let opts = Options {
        phase: Duration::from_secs(env_or("RWTOP_BENCH_PHASE_SECS", 6)?),
        rounds: env_or("RWTOP_BENCH_ROUNDS", 6)?,
        nodes: env_or("RWTOP_BENCH_NODES", 3)?,
        by_position: env_or(
            "RWTOP_BENCH_BY_POSITION",
            rwtop::config::HeartbeatConfig::default().by_position,
        )?,
    };
    let dir = tempfile::Builder::new()
        .prefix("rwtop-bench-lag-truth-")
        .tempdir()
        .context("creating a temp folder")?;
    // Ephemeral: dropping the handle kills the servers and deletes the folder, on every return.
    let sandbox = sandbox::start(dir.path(), REPLICAS.len(), true, "lag_truth")?;
    println!(
        "# server: {}; load average {}",
        sandbox.binaries().flavor.version_string,
        sandbox::load_average()
    );
    // The binary's runtime (`engine::runtime`), of its worker count unless `RWTOP_BENCH_WORKERS`
    // says otherwise. The scenarios are driven from this thread (admin SQL is a blocking child
    // process); everything timed runs on the runtime.
    let workers = env_or("RWTOP_BENCH_WORKERS", rwtop::engine::WORKERS)?;
    let runtime = rwtop::engine::runtime(workers).context("building the tokio runtime")?;
    let primary = sandbox.endpoint("primary")?;
    let writer = runtime.block_on(truth::Writer::start(&primary, TRUTH_EVERY))?;
    let watchers = REPLICAS
        .iter()
        .map(|r| {
            let endpoint = sandbox.endpoint(r)?;
            Ok(runtime.block_on(truth::Watcher::start(&endpoint, WATCH_EVERY))?)
        })
        .collect::<Result<Vec<_>>>()?;
    let spec = EngineSpec {
        by_position: opts.by_position,
        ..engine_spec(&sandbox, opts.nodes)?
    };
    println!(
        "# engine: {} nodes; heartbeat readings by position: {}",
        spec.nodes.len(),
        spec.by_position
    );
    let mut rounds = Vec::new();
    for round in 1..=opts.rounds {
        println!("# round {round} of {}: a fresh engine", opts.rounds);
        rounds.push(run_round(
            &runtime, &sandbox, &spec, &writer, &watchers, &opts,
        )?);
    }
    if let Some(failure) = std::iter::once(writer.failure())
        .chain(watchers.iter().map(truth::Watcher::failure))
        .flatten()
        .next()
    {
        bail!("the truth could not be measured: {failure}");
    }
    let truths: Vec<truth::Truth> = watchers.iter().map(|w| w.truth(&writer)).collect();
    dump(&rounds, &truths)?;
    report(&rounds, &truths);
    println!("# load average at the end: {}", sandbox::load_average());
    Ok(())
}

/// One engine, started fresh (so every timer of it starts at a new phase), through every
/// scenario; returns the scenarios' steady spans and every snapshot it published.
fn run_round(
    runtime: &tokio::runtime::Runtime,
    sandbox: &Sandbox,
    spec: &EngineSpec,
    writer: &truth::Writer,
    watchers: &[truth::Watcher],
    opts: &Options,
) -> Result<(Vec<Phase>, Vec<Seen>)> {
    let started = Instant::now();
    let engine = runtime.block_on(async { Engine::start(spec) });
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let collector = runtime.spawn(collect(engine.snapshots(), started, Arc::clone(&seen)));
    let driven = drive(sandbox, &engine, writer, watchers, opts);
    collector.abort();
    runtime.block_on(engine.shutdown());
    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(PoisonError::into_inner));
    Ok((driven?, seen))
}

/// The primary and both replicas at the shipped defaults (`config::Settings::default()`), as
/// the binary builds them with no flag and no file; discovery off. With `nodes` above 3, as many
/// more replicas as it takes, each another name for `r2` (as the scale bench does): the engine
/// then polls and reads that many, and `r1`'s figures are judged under that load.
fn engine_spec(sandbox: &Sandbox, nodes_wanted: usize) -> Result<EngineSpec> {
    let defaults = rwtop::config::FileSettings::default();
    let mut nodes = vec![(
        "primary".to_owned(),
        sandbox.endpoint("primary")?,
        Role::Primary,
    )];
    for r in REPLICAS {
        nodes.push((r.to_owned(), sandbox.endpoint(r)?, Role::Replica));
    }
    let extra = nodes_wanted.saturating_sub(nodes.len());
    if extra > 0 {
        // Each extra name is a connection to r2 (and the truth watcher has its own).
        sandbox.admin(
            "r2",
            &format!("SET GLOBAL max_connections = {}", extra + 100),
        )?;
    }
    for i in 0..extra {
        nodes.push((format!("pad{i}"), sandbox.endpoint("r2")?, Role::Replica));
    }
    Ok(EngineSpec {
        writer_id: "lag-truth".to_owned(),
        discovery: false,
        ..EngineSpec::from_settings(nodes, &defaults)
    })
}

/// Every snapshot as it is published, with the instant the store built it (its uptime counts
/// from the store's start, which is a hair after `started`).
async fn collect(
    mut rx: tokio::sync::watch::Receiver<Arc<Snapshot>>,
    started: Instant,
    into: Arc<Mutex<Vec<Seen>>>,
) {
    while rx.changed().await.is_ok() {
        let s = rx.borrow_and_update().clone();
        let lags = REPLICAS
            .iter()
            .map(|r| Some(s.node(r)?.replica()?.heartbeat_lag.clone()))
            .collect();
        let splits = REPLICAS
            .iter()
            .map(|r| {
                let split = &s.node(r)?.replica()?.lag_split;
                Some((split.transport.clone(), split.apply.clone()))
            })
            .collect();
        into.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Seen {
                at: started + s.uptime,
                lags,
                splits,
            });
    }
}

/// Runs the scenarios on `DISTURBED`, each held for a phase and undone, waiting for a full
/// catch-up between them; returns their steady spans.
fn drive(
    sandbox: &Sandbox,
    engine: &Engine,
    writer: &truth::Writer,
    watchers: &[truth::Watcher],
    opts: &Options,
) -> Result<Vec<Phase>> {
    let ready = caught_up(engine, writer, watchers).context("before the first phase")?;
    println!("# caught up {:.1} s after start", ready.as_secs_f64());
    let mut phases = Vec::new();
    // Where a stop falls between two heartbeats sets its error for the whole phase: each starts
    // at a random moment, not at the phase the catch-up left it in (which follows rwtop's own
    // timers).
    let mut rng = rng::Rng(u64::from(std::process::id()));
    for scenario in Scenario::ALL {
        std::thread::sleep(Duration::from_secs_f64(rng.uniform()));
        apply(sandbox, scenario, true)?;
        let began = Instant::now();
        std::thread::sleep(scenario.settle() + opts.phase);
        phases.push(Phase {
            scenario,
            from: began + scenario.settle(),
            to: Instant::now(),
        });
        apply(sandbox, scenario, false)?;
        let took = caught_up(engine, writer, watchers)
            .with_context(|| format!("after {}", scenario.name()))?;
        println!(
            "# {}: held {:.1} s, caught up {:.1} s after",
            scenario.name(),
            (scenario.settle() + opts.phase).as_secs_f64(),
            took.as_secs_f64()
        );
    }
    Ok(phases)
}

/// Starts (`on`) or ends a scenario on `DISTURBED`.
fn apply(sandbox: &Sandbox, scenario: Scenario, on: bool) -> Result<()> {
    let sql = match (scenario, on) {
        (Scenario::Healthy | Scenario::StalledLink, _) => None,
        (Scenario::IoStopped, true) => Some("STOP SLAVE IO_THREAD"),
        (Scenario::IoStopped, false) => Some("START SLAVE IO_THREAD"),
        (Scenario::SqlStopped, true) => Some("STOP SLAVE SQL_THREAD"),
        (Scenario::SqlStopped, false) => Some("START SLAVE SQL_THREAD"),
        (Scenario::MasterDelay, true) => {
            Some("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY=5; START SLAVE")
        }
        (Scenario::MasterDelay, false) => {
            Some("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY=0; START SLAVE")
        }
    };
    if let Some(sql) = sql {
        sandbox.admin(DISTURBED, sql)?;
    }
    if scenario == Scenario::StalledLink {
        let relay = sandbox
            .relay(DISTURBED)
            .ok_or_else(|| anyhow!("{DISTURBED} has no relay"))?;
        if on {
            relay.stall();
        } else {
            relay.resume();
        }
    }
    Ok(())
}

/// Waits until every replica has every truth row written so far and rwtop reads an exact 0 for
/// each; returns how long that took.
fn caught_up(
    engine: &Engine,
    writer: &truth::Writer,
    watchers: &[truth::Watcher],
) -> Result<Duration> {
    let began = Instant::now();
    loop {
        let written = writer.written();
        let rows = watchers.iter().all(|w| w.newest() >= Some(written));
        let s = engine.latest();
        let zero = REPLICAS.iter().all(|r| {
            matches!(
                s.node(r).and_then(|n| n.replica()).map(|r| &r.heartbeat_lag),
                Some(Lag::Exact { lag }) if lag.is_zero()
            )
        });
        if written > 0 && rows && zero {
            return Ok(began.elapsed());
        }
        if let Some(failure) = writer.failure() {
            bail!("truth writer: {failure}");
        }
        if began.elapsed() > READY_DEADLINE {
            bail!(
                "replicas not caught up after {READY_DEADLINE:?}: {written} truth rows written, \
                 newest seen {:?}, lags {:?}",
                watchers
                    .iter()
                    .map(truth::Watcher::newest)
                    .collect::<Vec<_>>(),
                REPLICAS
                    .iter()
                    .map(|r| s
                        .node(r)
                        .and_then(|n| n.replica())
                        .map(|r| r.heartbeat_lag.clone()))
                    .collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reported − truth, in seconds, per scenario.
#[derive(Default, Clone)]
struct Errors {
    /// At the instant each snapshot was published.
    at_publish: Vec<f64>,
    /// Just before the next snapshot replaced it.
    before_next: Vec<f64>,
    /// How far outside the truth's range (`Truth::range`) it was at publication: 0 within.
    outside: Vec<f64>,
    truth: Vec<f64>,
    reported: Vec<f64>,
    not_exact: usize,
}

impl Errors {
    fn extend(&mut self, other: Self) {
        self.at_publish.extend(other.at_publish);
        self.before_next.extend(other.before_next);
        self.outside.extend(other.outside);
        self.truth.extend(other.truth);
        self.reported.extend(other.reported);
        self.not_exact += other.not_exact;
    }
}

/// With `RWTOP_BENCH_DUMP=FILE`: every compared reading as CSV (round, scenario, replica,
/// seconds into the phase, reported, truth), to plot.
fn dump(rounds: &[(Vec<Phase>, Vec<Seen>)], truths: &[truth::Truth]) -> Result<()> {
    let Some(path) = std::env::var_os("RWTOP_BENCH_DUMP") else {
        return Ok(());
    };
    let mut out = String::from("round,scenario,replica,t,reported,truth\n");
    for (k, (phases, seen)) in rounds.iter().enumerate() {
        for snap in seen {
            let Some(phase) = Phase::holding(phases, snap.at) else {
                continue;
            };
            for (r, name) in REPLICAS.iter().enumerate() {
                let (Some(Lag::Exact { lag }), Some(truth)) =
                    (&snap.lags[r], truths[r].at(snap.at))
                else {
                    continue;
                };
                let _ = writeln!(
                    out,
                    "{},{},{name},{:.4},{:.4},{:.4}",
                    k + 1,
                    phase.scenario.name(),
                    (snap.at - phase.from).as_secs_f64(),
                    lag.as_secs_f64(),
                    truth.as_secs_f64()
                );
            }
        }
    }
    std::fs::write(&path, out).with_context(|| format!("writing {}", path.to_string_lossy()))
}

fn report(rounds: &[(Vec<Phase>, Vec<Seen>)], truths: &[truth::Truth]) {
    let fresh = || -> Vec<Errors> { Scenario::ALL.iter().map(|_| Errors::default()).collect() };
    let mut by = fresh();
    for (k, (phases, seen)) in rounds.iter().enumerate() {
        let mut this = fresh();
        compare(phases, seen, truths, &mut this);
        // One engine and one stop each: the error barely moves within a round, and where the
        // phases of one round fall can make or spoil a figure pooled over few rounds, so each
        // round's P95 is printed on its own.
        for (scenario, e) in Scenario::ALL.iter().zip(&this) {
            let abs: Vec<f64> = e.at_publish.iter().map(|x| x.abs()).collect();
            for (what, value) in [
                ("err_median", quantile(&e.at_publish, 0.5)),
                ("abs_err_p95", quantile(&abs, 0.95)),
                ("outside_truth_range_p95", quantile(&e.outside, 0.95)),
            ] {
                if let Some(v) = value {
                    row(
                        &format!("{}_round{}_{what}", scenario.name(), k + 1),
                        v * 1000.0,
                        "ms",
                    );
                }
            }
        }
        for (all, e) in by.iter_mut().zip(this) {
            all.extend(e);
        }
    }
    // The three stops are one situation (a replica that applies nothing) through three causes.
    let mut stops = Errors::default();
    for (scenario, e) in Scenario::ALL.iter().zip(&by) {
        if matches!(
            scenario,
            Scenario::IoStopped | Scenario::SqlStopped | Scenario::StalledLink
        ) {
            stops.extend(e.clone());
        }
    }
    print_table(&by, &stops);
    split::report(rounds, truths);
}

/// Adds each snapshot's exact lags, against the truth, to its scenario's errors.
fn compare(phases: &[Phase], seen: &[Seen], truths: &[truth::Truth], by: &mut [Errors]) {
    let just_before = Duration::from_micros(1);
    for (i, snap) in seen.iter().enumerate() {
        let Some(phase) = Phase::holding(phases, snap.at) else {
            continue;
        };
        let next_at = seen.get(i + 1).and_then(|n| n.at.checked_sub(just_before));
        for (r, name) in REPLICAS.iter().enumerate() {
            let scenario = phase.scenario_of(name);
            let Some(errors) = scenario.slot().and_then(|i| by.get_mut(i)) else {
                continue;
            };
            let Some(Lag::Exact { lag }) = &snap.lags[r] else {
                errors.not_exact += 1;
                continue;
            };
            let reported = lag.as_secs_f64();
            let Some(truth) = truths[r].at(snap.at) else {
                continue;
            };
            errors.at_publish.push(reported - truth.as_secs_f64());
            if let Some((low, high)) = truths[r].range(snap.at) {
                let (low, high) = (low.as_secs_f64(), high.as_secs_f64());
                errors
                    .outside
                    .push((low - reported).max(reported - high).max(0.0));
            }
            errors.truth.push(truth.as_secs_f64());
            errors.reported.push(reported);
            if let Some(later) = next_at
                .filter(|t| *t <= phase.to)
                .and_then(|t| truths[r].at(t))
            {
                errors.before_next.push(reported - later.as_secs_f64());
            }
        }
    }
}

fn print_table(by: &[Errors], stops: &Errors) {
    let names = Scenario::ALL.iter().map(|s| s.name());
    let rows: Vec<(&str, &Errors)> = names
        .zip(by)
        .chain(std::iter::once(("all three stops", stops)))
        .collect();
    println!();
    println!(
        "| scenario | n | not exact | median truth | median reported − truth | p95 reported − truth \
         | **p95 \\|reported − truth\\|** | max \\|…\\| | p95 \\|…\\| just before the next snapshot \
         | p95 outside the truth's range |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, e) in &rows {
        let abs: Vec<f64> = e.at_publish.iter().map(|x| x.abs()).collect();
        let abs_next: Vec<f64> = e.before_next.iter().map(|x| x.abs()).collect();
        println!(
            "| {name} | {} | {} | {} | {} | {} | **{}** | {} | {} | {} |",
            e.at_publish.len(),
            e.not_exact,
            quantile(&e.truth, 0.5).map_or_else(|| "–".to_owned(), |v| format!("{v:.3} s")),
            secs(quantile(&e.at_publish, 0.5)),
            secs(quantile(&e.at_publish, 0.95)),
            secs(quantile(&abs, 0.95)),
            secs(quantile(&abs, 1.0)),
            secs(quantile(&abs_next, 0.95)),
            secs(quantile(&e.outside, 0.95)),
        );
    }
    println!();
    for (name, e) in &rows {
        let name = name.replace(' ', "_");
        let abs: Vec<f64> = e.at_publish.iter().map(|x| x.abs()).collect();
        row(&format!("{name}_n"), e.at_publish.len() as f64, "snapshots");
        row(
            &format!("{name}_not_exact"),
            e.not_exact as f64,
            "snapshots",
        );
        let ms = |q: Option<f64>| q.map(|v| v * 1000.0);
        for (what, value) in [
            ("err_median", ms(quantile(&e.at_publish, 0.5))),
            ("err_p95", ms(quantile(&e.at_publish, 0.95))),
            ("abs_err_p95", ms(quantile(&abs, 0.95))),
            ("outside_truth_range_p95", ms(quantile(&e.outside, 0.95))),
            ("reported_max", ms(quantile(&e.reported, 1.0))),
        ] {
            if let Some(v) = value {
                row(&format!("{name}_{what}"), v, "ms");
            }
        }
    }
}

fn row(name: &str, value: f64, unit: &str) {
    println!("{name:<40} {value:>12.3} {unit}");
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:+.3} s"))
}
