//! Scale: the real engine (a poller per node, the heartbeat writer, the store and its alert
//! engine) watching 10, 100 and 1,000 nodes at a 1 s interval, in-process on the tokio runtime
//! the binary builds (`engine::runtime`), against a real sandbox of a primary and 10 replicas: every
//! replica stands in for ~1/10 of the node names (`r3#042` is a node polled on r3's port).
//!
//! Per size: rwtop's CPU (getrusage delta) as % of one core and per node-poll, the status polls
//! and heartbeat reads the engine achieved, its RSS, the 11 servers' CPU over the same window
//! (`/proc/<pid>/stat`), the alert engine's cost on the live snapshot, and the TUI's frame time
//! drawing that snapshot, while the engine keeps polling beside it and again once it has stopped.
//!
//! Run with `cargo bench --bench scale`; prints `name value unit` lines. Needs MariaDB (or MySQL)
//! installed, as the sandbox does; exits non-zero when the sandbox cannot start or the nodes are
//! not all polled in time. Environment: `RWTOP_BENCH_SECS` (default 60) is the measured window,
//! `RWTOP_BENCH_WARMUP_SECS` (10) the warm-up, `RWTOP_BENCH_NODES` (`10,100,1000`) the sizes.
//! `RWTOP_BENCH_READ_MS` sets every heartbeat read interval, `RWTOP_BENCH_WORKERS` (the
//! binary's, `engine::WORKERS`) the runtime's worker threads.

#![allow(
    clippy::cast_precision_loss,
    reason = "counts, ticks and microseconds here are far below 2^52"
)]

#[path = "support/alloc.rs"]
mod alloc;
#[path = "support/env.rs"]
mod env;
#[path = "support/frames.rs"]
mod frames;
#[path = "support/procfs.rs"]
mod procfs;
#[path = "support/sandbox.rs"]
mod sandbox;

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use env::env_or;
use procfs::{clock_ticks_per_second, machine, own_cpu, process_ticks, row, rss_kib};
use rwtop::alerts::{AlertEngine, AlertSettings};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::Endpoint;
use rwtop::poll::ConnState;
use rwtop::sandbox::Sandbox;
use rwtop::store::lag::Lag;
use rwtop::store::windows::Window;
use rwtop::store::{Role, Snapshot};

/// Real replicas behind the node names.
const REPLICAS: usize = 10;
const INTERVAL: Duration = Duration::from_secs(1);
const WRITER_ID: &str = "rwtop-bench-scale";
/// Every node sampled and every replica with an exact lag within this, or the run fails.
const READY_DEADLINE: Duration = Duration::from_secs(180);
/// Connections a server needs beyond the pollers' (replication, admin, writer, prober, slack).
const SPARE_CONNECTIONS: usize = 30;
/// How long the servers' own background CPU is watched before any engine runs.
const IDLE_WATCH: Duration = Duration::from_secs(5);
const FRAME_SIZES: [(u16, u16); 2] = [(120, 40), (200, 60)];
const FRAME_WARMUP: u32 = 20;
const FRAMES: u32 = 200;
const ALERT_ROUNDS: u32 = 20;

struct Options {
    secs: u64,
    warmup: u64,
    sizes: Vec<usize>,
    /// Heartbeat read interval; the shipped default unless `RWTOP_BENCH_READ_MS` says otherwise.
    read_interval: Option<Duration>,
    /// The runtime's worker threads: the binary's unless `RWTOP_BENCH_WORKERS` says otherwise.
    workers: usize,
    /// Heartbeat readings from applied positions (the default) or, with
    /// `RWTOP_BENCH_BY_POSITION=false`, from the table on every reading.
    by_position: bool,
}

fn main() -> ExitCode {
    env::exit("scale", run())
}

fn options() -> Result<Options> {
    let sizes: String = env_or("RWTOP_BENCH_NODES", "10,100,1000".to_owned())?;
    let sizes = sizes
        .split(',')
        .map(|n| match n.trim().parse::<usize>() {
            Ok(n) if n >= 2 => Ok(n),
            _ => Err(anyhow!(
                "RWTOP_BENCH_NODES: {n:?} is not a node count of 2 or more"
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Options {
        secs: env_or("RWTOP_BENCH_SECS", 60)?,
        warmup: env_or("RWTOP_BENCH_WARMUP_SECS", 10)?,
        sizes,
        read_interval: env_or("RWTOP_BENCH_READ_MS", 0u64)
            .map(|ms| (ms > 0).then(|| Duration::from_millis(ms)))?,
        workers: env_or("RWTOP_BENCH_WORKERS", rwtop::engine::WORKERS)?,
        by_position: env_or(
            "RWTOP_BENCH_BY_POSITION",
            rwtop::config::HeartbeatConfig::default().by_position,
        )?,
    })
}

fn run() -> Result<()> {
    let opts = options()?;
    println!("# machine: {}", machine());
    println!("# load average: {}", sandbox::load_average());
    println!("# heartbeat readings by position: {}", opts.by_position);
    let dir = tempfile::Builder::new()
        .prefix("rwtop-bench-scale-")
        .tempdir()
        .context("creating a temp folder")?;
    let started = Instant::now();
    // Ephemeral: dropping the handle kills the servers and deletes the folder, on every return.
    let sandbox = sandbox::start(dir.path(), REPLICAS, false, "scale")?;
    row("sandbox_up", started.elapsed().as_secs_f64(), "s");
    println!(
        "# server: {}",
        sandbox.binaries().flavor.version_string.clone()
    );
    let most = opts.sizes.iter().copied().max().unwrap_or(0);
    ensure_connections(&sandbox, most.div_ceil(REPLICAS) + SPARE_CONNECTIONS)?;
    let servers = Servers::of(&sandbox)?;

    let before = servers.ticks()?;
    std::thread::sleep(IDLE_WATCH);
    let idle = servers.cpu_since(&before, IDLE_WATCH)?;
    row("servers_idle_cpu", idle.all * 100.0, "% of one core");

    // The binary's runtime, of its worker count unless told otherwise; this thread draws frames.
    let runtime = rwtop::engine::runtime(opts.workers).context("building the tokio runtime")?;
    for &nodes in &opts.sizes {
        println!("# {nodes} nodes; load average {}", sandbox::load_average());
        runtime.block_on(scale_run(&sandbox, &servers, nodes, &opts))?;
    }
    drop(runtime);
    println!("# load average at the end: {}", sandbox::load_average());
    drop(sandbox);
    Ok(())
}

/// Every server must take `per_server` connections: raised at runtime where it is lower.
fn ensure_connections(sandbox: &Sandbox, per_server: usize) -> Result<()> {
    for node in &sandbox.state().nodes {
        let rows = sandbox.admin(&node.name, "SELECT @@max_connections AS max_connections")?;
        let have = rows
            .first()
            .and_then(|r| r.optional_u64(&["max_connections"]).ok().flatten())
            .ok_or_else(|| anyhow!("{}: no @@max_connections", node.name))?;
        if usize::try_from(have).unwrap_or(usize::MAX) < per_server {
            sandbox.admin(
                &node.name,
                &format!("SET GLOBAL max_connections = {per_server}"),
            )?;
            println!("# {}: max_connections {have} -> {per_server}", node.name);
        }
    }
    Ok(())
}

/// The sandbox's server processes, primary first.
struct Servers {
    pids: Vec<i32>,
    ticks_per_s: f64,
}

/// Server CPU as a share of one core.
struct ServerCpu {
    all: f64,
    primary: f64,
}

impl Servers {
    fn of(sandbox: &Sandbox) -> Result<Self> {
        let pids = sandbox
            .state()
            .nodes
            .iter()
            .map(|n| {
                sandbox
                    .pid(&n.name)
                    .ok_or_else(|| anyhow!("{}: no live server process", n.name))
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            pids,
            ticks_per_s: clock_ticks_per_second() as f64,
        })
    }

    fn ticks(&self) -> Result<Vec<u64>> {
        self.pids.iter().map(|p| process_ticks(*p)).collect()
    }

    fn cpu_since(&self, before: &[u64], over: Duration) -> Result<ServerCpu> {
        let deltas: Vec<u64> = self
            .ticks()?
            .iter()
            .zip(before)
            .map(|(now, then)| now.saturating_sub(*then))
            .collect();
        let share = |ticks: u64| ticks as f64 / self.ticks_per_s / over.as_secs_f64();
        Ok(ServerCpu {
            all: share(deltas.iter().sum()),
            primary: share(deltas.first().copied().unwrap_or(0)),
        })
    }
}

/// The primary once, then `nodes − 1` names spread round-robin over the real replicas; the
/// shipped defaults otherwise (config `Settings::default()`), discovery off, writer on.
fn engine_spec(sandbox: &Sandbox, nodes: usize, opts: &Options) -> Result<EngineSpec> {
    let defaults = rwtop::config::FileSettings::default();
    let replicas: Vec<Endpoint> = (1..=REPLICAS)
        .map(|r| sandbox.endpoint(&format!("r{r}")))
        .collect::<Result<_, _>>()?;
    let mut list = vec![(
        "primary".to_owned(),
        sandbox.endpoint("primary")?,
        Role::Primary,
    )];
    for i in 1..nodes {
        let r = (i - 1) % REPLICAS;
        list.push((
            format!("r{}#{i:03}", r + 1),
            replicas[r].clone(),
            Role::Replica,
        ));
    }
    Ok(EngineSpec {
        nodes: list,
        timeouts: defaults.timeouts,
        interval: INTERVAL,
        heartbeat_interval: defaults.heartbeat.interval,
        read_interval: opts
            .read_interval
            .unwrap_or(defaults.heartbeat.read_interval),
        // As the binary does: the read budget applies unless the read interval is set.
        read_budget: opts
            .read_interval
            .is_none()
            .then_some(rwtop::poll::READ_BUDGET),
        writer_id: WRITER_ID.to_owned(),
        discovery: false,
        read_only: false,
        pt_table: defaults.heartbeat.pt_table,
        by_position: opts.by_position,
        thresholds: defaults.thresholds,
        drain: None,
        found_roots: rwtop::engine::upward::FoundRoots::Write,
        found: Vec::new(),
        clusters: Vec::new(),
        test_reads: rwtop::engine::TestReads::Task,
        disks_every: None,
    })
}

async fn scale_run(
    sandbox: &Sandbox,
    servers: &Servers,
    nodes: usize,
    opts: &Options,
) -> Result<()> {
    let spec = engine_spec(sandbox, nodes, opts)?;
    let rss_before = rss_kib()?;
    let engine = Engine::start(&spec);
    let measured = measure(&engine, &spec, servers, opts, rss_before).await;
    engine.shutdown().await;
    // The same snapshot again with the engine stopped: what the frame costs by itself.
    let last = measured?;
    time_frames(&last, "quiet_", &|what| format!("n{nodes}_{what}"));
    Ok(())
}

async fn measure(
    engine: &Engine,
    spec: &EngineSpec,
    servers: &Servers,
    opts: &Options,
    rss_before: u64,
) -> Result<Arc<Snapshot>> {
    let n = spec.nodes.len();
    let name = |what: &str| format!("n{n}_{what}");
    let ready = wait_ready(engine, n).await?;
    row(&name("ready"), ready.as_secs_f64(), "s");
    println!("# ready at {}", chrono::Utc::now().format("%H:%M:%S%.3f"));
    tokio::time::sleep(Duration::from_secs(opts.warmup)).await;
    let window_from = chrono::Utc::now();
    println!("# window from {}", window_from.format("%H:%M:%S%.3f"));

    let first = engine.latest();
    let cpu_before = own_cpu()?;
    let ticks_before = servers.ticks()?;
    let began = Instant::now();
    tokio::time::sleep(Duration::from_secs(opts.secs)).await;
    let wall = began.elapsed();
    let cpu = own_cpu()?.saturating_sub(cpu_before);
    let server = servers.cpu_since(&ticks_before, wall)?;
    let last = engine.latest();
    let rss = rss_kib()?;

    let counts = Counts::between(&first, &last);
    let polls = counts.polls_per_s * wall.as_secs_f64();
    let cpu_share = cpu.as_secs_f64() / wall.as_secs_f64();
    row(&name("rwtop_cpu"), cpu_share * 100.0, "% of one core");
    row(
        &name("rwtop_cpu_per_node_poll"),
        cpu.as_secs_f64() * 1e6 / polls,
        "us",
    );
    row(&name("polls"), counts.polls_per_s, "/s");
    row(&name("polls_per_node_min"), counts.slowest_node, "/s");
    row(&name("heartbeat_reads"), counts.reads_per_s, "/s");
    row(&name("servers_cpu"), server.all * 100.0, "% of one core");
    row(
        &name("primary_cpu"),
        server.primary * 100.0,
        "% of one core",
    );
    row(
        &name("servers_cpu_per_node_poll"),
        server.all * wall.as_secs_f64() * 1e6 / polls,
        "us",
    );
    // The same polls cost rwtop this much of what they cost the servers: a figure of the code
    // that a slow or fast host moves less than either share alone.
    row(
        &name("rwtop_over_servers"),
        cpu.as_secs_f64() / (server.all * wall.as_secs_f64()),
        "x",
    );
    row(&name("rss"), rss as f64 / 1_024.0, "MiB");
    row(
        &name("rss_growth_per_node"),
        rss.saturating_sub(rss_before) as f64 / n as f64,
        "KiB",
    );
    report_state(&last, window_from, &name);
    time_alerts(&last, spec, &name);
    time_frames(&last, "", &name);
    Ok(last)
}

/// Waits until every node has been sampled and every replica shows an exact heartbeat lag.
async fn wait_ready(engine: &Engine, n: usize) -> Result<Duration> {
    let began = Instant::now();
    loop {
        let snap = engine.latest();
        let unsampled = snap
            .nodes
            .iter()
            .filter(|node| node.sample_seq == 0 || node.conn != ConnState::Up)
            .count();
        let inexact: Vec<_> = snap
            .nodes
            .iter()
            .filter(|node| node.role == Role::Replica)
            .filter(|node| {
                !matches!(
                    node.replica().map(|r| &r.heartbeat_lag),
                    Some(Lag::Exact { .. })
                )
            })
            .collect();
        if snap.nodes.len() == n && unsampled == 0 && inexact.is_empty() {
            return Ok(began.elapsed());
        }
        if began.elapsed() > READY_DEADLINE {
            let example = snap
                .nodes
                .iter()
                .find(|node| node.sample_seq == 0 || node.conn != ConnState::Up)
                .or(inexact.first().copied())
                .map(|node| format!("; e.g. {} is {:?}", node.name, node.conn))
                .unwrap_or_default();
            bail!(
                "{n} nodes: after {READY_DEADLINE:?}, {} nodes known, {unsampled} not up or never \
                 sampled, {} replicas without an exact heartbeat lag{example}",
                snap.nodes.len(),
                inexact.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What the engine did between two of its snapshots, by the store's own clock.
struct Counts {
    polls_per_s: f64,
    reads_per_s: f64,
    /// Status polls per second of the node that got the fewest.
    slowest_node: f64,
}

impl Counts {
    fn between(first: &Snapshot, last: &Snapshot) -> Self {
        let span = last.uptime.saturating_sub(first.uptime).as_secs_f64();
        let mut polls = 0;
        let mut reads = 0;
        let mut slowest = u64::MAX;
        for node in &last.nodes {
            let before = first.nodes.iter().find(|b| b.name == node.name);
            let seq = node
                .sample_seq
                .saturating_sub(before.map_or(0, |b| b.sample_seq));
            polls += seq;
            slowest = slowest.min(seq);
            let count = |v: Option<&rwtop::store::NodeView>| {
                v.and_then(|v| v.replica())
                    .map_or(0, |r| r.lag_histogram.count)
            };
            reads += count(Some(node)).saturating_sub(count(before));
        }
        Self {
            polls_per_s: polls as f64 / span,
            reads_per_s: reads as f64 / span,
            slowest_node: slowest as f64 / span,
        }
    }
}

/// Staleness, connection state, lag as measured and alerts at the end of the window, and the
/// alerts raised since the start.
fn report_state(
    snap: &Snapshot,
    window_from: chrono::DateTime<chrono::Utc>,
    name: &dyn Fn(&str) -> String,
) {
    let oldest = snap
        .nodes
        .iter()
        .filter_map(|n| n.sample_age)
        .max()
        .unwrap_or_default();
    row(&name("sample_age_max"), oldest.as_secs_f64() * 1e3, "ms");
    let down = snap
        .nodes
        .iter()
        .filter(|n| n.conn != ConnState::Up)
        .count();
    row(&name("nodes_not_up"), down as f64, "nodes");
    let p99 = snap
        .nodes
        .iter()
        .filter_map(|n| n.replica())
        .filter_map(|r| {
            r.windows
                .iter()
                .find(|(w, _)| *w == Window::OneMinute)
                .and_then(|(_, s)| *s)
        })
        .map(|s| s.p99)
        .max()
        .unwrap_or_default();
    row(&name("lag_p99_1min_worst"), p99.as_secs_f64() * 1e3, "ms");
    row(
        &name("alerts_active"),
        snap.alerts.active.len() as f64,
        "alerts",
    );
    // Raised at any time since the start (a healthy topology raises none): a node shown silent
    // for a moment, say, shows here though it is clear again by the end.
    let raised: Vec<_> = snap.alerts.log.iter().filter(|e| e.raised).collect();
    row(&name("alerts_raised"), raised.len() as f64, "alerts");
    let in_window = raised.iter().filter(|e| e.at >= window_from).count();
    row(&name("alerts_raised_in_window"), in_window as f64, "alerts");
    if !raised.is_empty() {
        let places: Vec<String> = raised
            .iter()
            .map(|e| format!("{:?} {}", e.kind, e.node.as_deref().unwrap_or("-")))
            .collect();
        println!("# raised: {}", places.join(", "));
        for e in raised.iter().take(3) {
            println!("# e.g. at {}: {}", e.at.format("%H:%M:%S%.3f"), e.summary);
        }
    }
}

/// The alert engine, run on every published snapshot (4 a second): with no node's sample new,
/// and with every node's new (about a quarter are new in each snapshot at a 1 s poll).
fn time_alerts(snap: &Snapshot, spec: &EngineSpec, name: &dyn Fn(&str) -> String) {
    let settings =
        AlertSettings::from_thresholds(&spec.thresholds, spec.interval, spec.heartbeat_interval);
    let mut alerts = AlertEngine::new(settings);
    let mut snap = snap.clone();
    black_box(alerts.evaluate(&snap));
    let began = Instant::now();
    for _ in 0..ALERT_ROUNDS {
        black_box(alerts.evaluate(black_box(&snap)));
    }
    let none_due = began.elapsed() / ALERT_ROUNDS;
    let began = Instant::now();
    for _ in 0..ALERT_ROUNDS {
        for node in &mut snap.nodes {
            node.sample_seq += 1;
        }
        snap.uptime += spec.interval;
        black_box(alerts.evaluate(black_box(&snap)));
    }
    let all_due = began.elapsed() / ALERT_ROUNDS;
    row(
        &name("alerts_evaluate_none_new"),
        none_due.as_secs_f64() * 1e3,
        "ms",
    );
    row(
        &name("alerts_evaluate_all_new"),
        all_due.as_secs_f64() * 1e3,
        "ms",
    );
}

/// Frame time of the live snapshot: while the engine keeps polling on its workers (no
/// `label`), or once it has stopped.
fn time_frames(snap: &Snapshot, label: &str, name: &dyn Fn(&str) -> String) {
    for (w, h) in FRAME_SIZES {
        let mut times = frames::frame_times(snap, (w, h), FRAME_WARMUP, FRAMES);
        times.sort_unstable();
        let at = |p: usize| times[(times.len() * p).div_ceil(100).max(1) - 1];
        let mean = times.iter().sum::<Duration>() / FRAMES;
        for (what, d) in [("p50", at(50)), ("p99", at(99)), ("mean", mean)] {
            row(
                &name(&format!("{label}frame_{w}x{h}_{what}")),
                d.as_secs_f64() * 1e3,
                "ms",
            );
        }
    }
}
