//! Cost of the poll path: CPU (rwtop's and the server's) and wall time per node-poll and per
//! heartbeat read against a real sandbox, and the store's memory per replica once its 15-minute
//! windows are full.
//!
//! Run with `cargo bench --bench poll_path`; prints `name value unit` lines. Needs a MariaDB (or
//! MySQL) server installed, as the sandbox does; exits non-zero when the sandbox cannot start.
//!
//! Server CPU is the `utime + stime` delta of the node's server process over the run, divided by
//! the calls made. That includes whatever the server does on its own meanwhile, so an idle rate
//! is measured first and a `_net` figure has it taken out. The `cold_*` cases poll each of many
//! connections once a second, as at 1,000 nodes, and read single polls' costs from the serving
//! thread's own CPU time (`support/cold.rs`).

#![allow(
    clippy::cast_precision_loss,
    reason = "counts, ticks and nanoseconds here are far below 2^52"
)]

#[path = "support/alloc.rs"]
mod alloc;
#[path = "support/cold.rs"]
mod cold;
#[path = "support/env.rs"]
mod env;
#[path = "support/procfs.rs"]
mod procfs;
#[path = "support/rng.rs"]
mod rng;
#[path = "support/store_memory.rs"]
mod store_memory;

use procfs::{clock_ticks_per_second, machine, own_cpu, process_ticks, row};

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use cold::cold_polls;
use rwtop::mysql::prepared::Lead;
use rwtop::mysql::{Endpoint, NodeConn, Timeouts};
use rwtop::poll::heartbeat::heartbeat_read_sql;
use rwtop::poll::node_poller::{PollParts, poll_status, read_heartbeat};
use rwtop::sandbox::{Ports, Sandbox, SandboxSpec};

/// Measured calls per case, after `WARMUP` unmeasured ones.
const CALLS: u32 = 2_000;
const WARMUP: u32 = 200;
/// How long the servers' own background CPU is watched before anything is measured.
const IDLE_WATCH: Duration = Duration::from_secs(5);
const WRITER_ID: &str = "bench";

fn main() -> ExitCode {
    env::exit("poll_path", run())
}

fn run() -> Result<()> {
    println!("# machine: {}", machine());
    // The store first, in a fresh process, so that memory freed by the live part cannot be
    // reused by the store and hide part of its size.
    store_memory::store_memory()?;
    live_poll_path()
}

// ---------------------------------------------------------------------------------------------
// The live poll path.

/// Which status polls read the occasional statements (binlog list, processlist, replica hosts).
#[derive(Clone, Copy)]
enum Mix {
    /// Those `PollParts::for_poll` picks for the nth poll, as the poller does on a node that
    /// feeds nobody rwtop watches (no binlog coordinate nor list; `poll/feeds.rs`).
    AsPoller,
    /// The same on a node that feeds a watched replica and holds its binlog list: the
    /// coordinate on every poll, the list every 60th (and after a rotation, which none here
    /// makes).
    AsSource,
    /// [`Self::AsSource`] with the list every 5th poll, with the clock, as the poller read it
    /// before it followed the rotations (docs/benchmarks.md, "Poll path"): that change's before,
    /// measured in turns with it.
    AsSourceListEvery5th,
    Fast,
    Slow,
}

/// One statement of a poll on its own, to see where a poll's cost goes.
#[derive(Clone, Copy)]
enum Stmt {
    ReplicaStatus,
    NodeState,
    BinlogStatus,
    BinlogFiles,
    ReplicaHosts,
    Processes,
}

#[derive(Clone, Copy)]
enum Op {
    Poll(Mix),
    /// The poller's status poll with the heartbeat read in front of it (one round trip).
    PollWithHeartbeat,
    Heartbeat,
    /// The heartbeat reading by position between polls (`Flavor::applied_position_sql`).
    Applied,
    Stmt(Stmt),
}

impl Op {
    async fn call(self, conn: &mut NodeConn, i: u32) -> Result<()> {
        match self {
            Self::Poll(mix) => {
                let parts = match mix {
                    Mix::AsPoller => PollParts::for_poll(u64::from(i), 0, true).as_source(false),
                    Mix::AsSource => PollParts::for_poll(u64::from(i), 0, true),
                    Mix::AsSourceListEvery5th => {
                        let parts = PollParts::for_poll(u64::from(i), 0, true);
                        PollParts {
                            binlog_files: parts.clock,
                            ..parts
                        }
                    }
                    Mix::Fast => PollParts::default(),
                    Mix::Slow => PollParts::ALL,
                };
                black_box(poll_status(conn, parts, None, None).await?);
            }
            Self::PollWithHeartbeat => {
                let parts = PollParts::for_poll(u64::from(i), 0, true).as_source(false);
                let read = heartbeat_read_sql(&[WRITER_ID.to_owned()]);
                let (sample, ahead) = poll_status(conn, parts, Some(&read), None).await?;
                black_box(sample);
                if ahead.lead.transpose()?.is_none_or(|rows| rows.is_empty()) {
                    bail!("the heartbeat row vanished from {}", conn.address());
                }
            }
            Self::Heartbeat => {
                let read = read_heartbeat(conn, &[WRITER_ID.to_owned()]).await?;
                if read.row(0).seq.is_none() {
                    bail!("the heartbeat row vanished from {}", conn.address());
                }
            }
            Self::Applied => {
                let sql = conn.flavor().applied_position_sql().unwrap_or_default();
                let rows = conn.query_rows(sql).await?;
                if rows.is_empty() {
                    bail!("no gtid_slave_pos from {}", conn.address());
                }
            }
            Self::Stmt(stmt) => match stmt {
                Stmt::ReplicaStatus => drop(black_box(conn.replica_status().await?)),
                Stmt::NodeState => drop(black_box(conn.node_state().await?)),
                Stmt::BinlogStatus => drop(black_box(conn.binlog_status().await?)),
                Stmt::BinlogFiles => drop(black_box(conn.binlog_files().await?)),
                Stmt::ReplicaHosts => drop(black_box(conn.replica_hosts().await?)),
                Stmt::Processes => drop(black_box(conn.processes().await?)),
            },
        }
        Ok(())
    }
}

struct Server {
    pid: i32,
    /// Seconds of CPU per second the server spends on its own while nobody queries it.
    idle_rate: f64,
}

struct Bench {
    ticks_per_s: f64,
}

impl Bench {
    async fn measure(
        &self,
        name: &str,
        conn: &mut NodeConn,
        op: Op,
        server: &Server,
    ) -> Result<()> {
        for i in 0..WARMUP {
            op.call(conn, i).await?;
        }
        let mut walls = Vec::with_capacity(CALLS as usize);
        let own_before = own_cpu()?;
        let ticks_before = process_ticks(server.pid)?;
        let began = Instant::now();
        for i in 0..CALLS {
            let call = Instant::now();
            op.call(conn, i).await?;
            walls.push(call.elapsed());
        }
        let elapsed = began.elapsed();
        let ticks = process_ticks(server.pid)?.saturating_sub(ticks_before);
        let own = own_cpu()?.saturating_sub(own_before);

        let calls = f64::from(CALLS);
        walls.sort_unstable();
        let p99 = walls[(walls.len() * 99).div_ceil(100) - 1];
        let mean = elapsed.as_secs_f64() / calls;
        let server_s = ticks as f64 / self.ticks_per_s;
        let server_net = (server_s - server.idle_rate * elapsed.as_secs_f64()).max(0.0);
        let us = 1e6;
        row(
            &format!("{name}_rwtop_cpu"),
            own.as_secs_f64() * us / calls,
            "us/call",
        );
        row(&format!("{name}_wall_mean"), mean * us, "us/call");
        row(
            &format!("{name}_wall_p99"),
            p99.as_secs_f64() * us,
            "us/call",
        );
        row(
            &format!("{name}_server_cpu"),
            server_s * us / calls,
            "us/call",
        );
        row(
            &format!("{name}_server_cpu_net"),
            server_net * us / calls,
            "us/call",
        );
        Ok(())
    }
}

fn live_poll_path() -> Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("rwtop-bench-")
        .tempdir()
        .context("creating a temp folder")?;
    let mut spec = SandboxSpec::new(dir.path().join("sb"));
    spec.replicas = 2;
    spec.ports = Ports::Free;
    spec.ephemeral = true;
    let started = Instant::now();
    let sandbox = Sandbox::up(&spec).context("starting the sandbox")?;
    row("sandbox_up", started.elapsed().as_secs_f64(), "s");
    let version = sandbox.binaries().flavor.version_string.clone();
    println!("# server: {version}");

    // The heartbeat row the replicas read, written as the writer would.
    sandbox.admin("primary", &rwtop::mysql::own_tables::HEARTBEAT.create_sql())?;
    sandbox.admin(
        "primary",
        &format!(
            "INSERT INTO rwtop.heartbeat (writer_id, seq, ts) VALUES ('{WRITER_ID}', 1, NOW(6)) \
             ON DUPLICATE KEY UPDATE seq = seq + 1, ts = NOW(6)"
        ),
    )?;

    let pid = |name: &str| {
        sandbox
            .pid(name)
            .ok_or_else(|| anyhow!("{name}: no live server process"))
    };
    let (primary_pid, replica_pid) = (pid("primary")?, pid("r1")?);
    let primary_ep = sandbox.endpoint("primary")?;
    let replica_ep = sandbox.endpoint("r1")?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("building the tokio runtime")?;
    runtime.block_on(async {
        let timeouts = Timeouts::default();
        let mut replica = NodeConn::connect(&replica_ep, timeouts).await?;
        let mut primary = NodeConn::connect(&primary_ep, timeouts).await?;
        wait_for_row(&mut replica).await?;

        // What the servers burn on their own, watched together while nobody queries them.
        let ticks_per_s = clock_ticks_per_second() as f64;
        let (p0, r0) = (process_ticks(primary_pid)?, process_ticks(replica_pid)?);
        let began = Instant::now();
        tokio::time::sleep(IDLE_WATCH).await;
        let secs = began.elapsed().as_secs_f64();
        let rate = |t0: u64, pid: i32| -> Result<f64> {
            Ok(process_ticks(pid)?.saturating_sub(t0) as f64 / ticks_per_s / secs)
        };
        let primary_srv = Server {
            pid: primary_pid,
            idle_rate: rate(p0, primary_pid)?,
        };
        let replica_srv = Server {
            pid: replica_pid,
            idle_rate: rate(r0, replica_pid)?,
        };
        row("server_idle_primary", primary_srv.idle_rate * 1e3, "ms/s");
        row("server_idle_replica", replica_srv.idle_rate * 1e3, "ms/s");

        let bench = Bench { ticks_per_s };
        let cases = [
            ("poll_replica", Op::Poll(Mix::AsPoller), true),
            ("poll_replica_as_source", Op::Poll(Mix::AsSource), true),
            ("poll_replica_fast", Op::Poll(Mix::Fast), true),
            ("poll_replica_slow", Op::Poll(Mix::Slow), true),
            ("poll_primary", Op::Poll(Mix::AsSource), false),
            ("poll_primary_fast", Op::Poll(Mix::Fast), false),
            ("poll_primary_slow", Op::Poll(Mix::Slow), false),
            ("heartbeat_read_replica", Op::Heartbeat, true),
            ("applied_read_replica", Op::Applied, true),
            ("poll_replica_with_heartbeat", Op::PollWithHeartbeat, true),
            ("stmt_replica_status", Op::Stmt(Stmt::ReplicaStatus), true),
            ("stmt_node_state", Op::Stmt(Stmt::NodeState), true),
            ("stmt_binlog_status", Op::Stmt(Stmt::BinlogStatus), true),
            ("stmt_binlog_files", Op::Stmt(Stmt::BinlogFiles), true),
            ("stmt_replica_hosts", Op::Stmt(Stmt::ReplicaHosts), true),
            ("stmt_processes", Op::Stmt(Stmt::Processes), true),
        ];
        for (name, op, on_replica) in cases {
            let (conn, server) = if on_replica {
                (&mut replica, &replica_srv)
            } else {
                (&mut primary, &primary_srv)
            };
            bench.measure(name, conn, op, server).await?;
        }
        cold_cases(&sandbox, &replica_ep, replica_pid).await?;
        replica.close().await;
        primary.close().await;
        Ok::<(), anyhow::Error>(())
    })?;
    println!(
        "# {CALLS} calls per case after {WARMUP} warm-up calls; poll mix as the poller's ({})",
        poll_mix()
    );
    drop(sandbox);
    Ok(())
}

/// The cold cases' run, from the environment: `RWTOP_BENCH_COLD_CONNECTIONS` (default 40; the
/// first cases poll twice that many, in five kinds), `RWTOP_BENCH_COLD_ROUNDS` (20 measured
/// rounds, a second each), `RWTOP_BENCH_IDLE_CONNECTIONS` (none): idle connections held open
/// to `r1` meanwhile, as an application's pool would, since a processlist scan walks every
/// thread of its server; and `RWTOP_BENCH_BINLOGS` (none): `r1`'s binlogs rotated up to that
/// many files first, since `SHOW BINARY LOGS` opens every one.
struct Cold {
    connections: usize,
    /// Unmeasured rounds (the first poll finds the heartbeat table and prepares its read), then
    /// measured ones.
    rounds: (u32, u32),
    idle: usize,
    binlogs: usize,
}

impl Cold {
    fn from_env() -> Result<Self> {
        Ok(Self {
            connections: env::env_or("RWTOP_BENCH_COLD_CONNECTIONS", 40)?.max(2),
            rounds: (2, env::env_or("RWTOP_BENCH_COLD_ROUNDS", 20)?.max(1)),
            idle: env::env_or("RWTOP_BENCH_IDLE_CONNECTIONS", 0)?,
            binlogs: env::env_or("RWTOP_BENCH_BINLOGS", 0)?,
        })
    }
}

/// The kinds of poll the first cold cases take turns at ([`cold_cases`]).
const COLD_KINDS: usize = 5;

/// Which measured rounds of a kind of poll to count.
type Rounds = fn(u32) -> bool;

/// The server thread's cost of single polls spaced a second apart (`support/cold.rs`), on
/// connections taking turns so that each case meets the same machine: the floor (`SELECT 1`),
/// the status poll without a heartbeat read as the poller sends it to a node that feeds nobody
/// (no binlog coordinate) and to one that feeds a watched replica (with it; and with the binlog
/// list every 5th poll, as before), and the poll with every part; then a replica's poll with its
/// heartbeat read as the poller sends it beside the same with the read unprepared (connections
/// opened while the server was at `max_prepared_stmt_count = 0` keep the plain read).
async fn cold_cases(sandbox: &Sandbox, replica: &Endpoint, pid: i32) -> Result<()> {
    let cold = Cold::from_env()?;
    let second = Duration::from_secs(1);
    let even = |i: usize| i.is_multiple_of(2);
    sandbox.admin("r1", "SET GLOBAL max_connections = 5000")?;
    let files = sandbox.admin("r1", "SHOW BINARY LOGS")?.len();
    if cold.binlogs > files {
        sandbox.admin("r1", &"FLUSH BINARY LOGS;".repeat(cold.binlogs - files))?;
    }
    let files = sandbox.admin("r1", "SHOW BINARY LOGS")?.len();
    row("cold_binlog_files", files as f64, "files");
    let idle = cold::open(replica, cold.idle).await?;
    let mut conns = cold::open(replica, cold.connections * 2).await?;
    let threads = conns[0].conn.query_rows("SHOW PROCESSLIST").await?.len();
    row("cold_server_threads", threads as f64, "threads");
    let kinds = async |i, conn: &mut NodeConn, round| -> Result<()> {
        match i % COLD_KINDS {
            0 => {
                black_box(conn.query_rows("SELECT 1").await?);
                Ok(())
            }
            1 => Op::Poll(Mix::AsPoller).call(conn, round).await,
            2 => Op::Poll(Mix::AsSource).call(conn, round).await,
            3 => Op::Poll(Mix::AsSourceListEvery5th).call(conn, round).await,
            _ => Op::Poll(Mix::Slow).call(conn, round).await,
        }
    };
    let mut costs = cold_polls(&mut conns, pid, cold.rounds, second, kinds).await?;
    // The leaf's and the source's polls apart by whether they scanned the processlist (the
    // mix's costliest part), and the source's before apart by whether they read the list.
    let scans: Rounds = |round| PollParts::for_poll(u64::from(round), 0, true).processes;
    let lists: Rounds = |round| PollParts::for_poll(u64::from(round), 0, true).clock;
    let apart: [(usize, &str, Rounds); 4] = [
        (1, "replica_scanning", scans),
        (2, "as_source_scanning", scans),
        (3, "as_source_list_every_5th_listing", lists),
        (3, "as_source_list_every_5th_not_listing", |round| {
            !PollParts::for_poll(u64::from(round), 0, true).clock
        }),
    ];
    for (kind, name, picked) in apart {
        let of_kind = |i: usize| i % COLD_KINDS == kind;
        cold::of_rounds(&costs, cold.rounds.0, of_kind, picked)
            .print(&format!("cold_poll_{name}_server_thread"));
    }
    for (kind, name) in [(1, "replica"), (2, "as_source")] {
        let of_kind = |i: usize| i % COLD_KINDS == kind;
        cold::of_rounds(&costs, cold.rounds.0, of_kind, |r| !scans(r))
            .print(&format!("cold_poll_{name}_not_scanning_server_thread"));
    }
    let names = [
        "cold_select_1_server_thread",
        "cold_poll_replica_server_thread",
        "cold_poll_replica_as_source_server_thread",
        "cold_poll_replica_as_source_list_every_5th_server_thread",
        "cold_poll_replica_slow_server_thread",
    ];
    for (kind, name) in names.into_iter().enumerate() {
        cold::of(&mut costs, |i| i % COLD_KINDS == kind).print(name);
    }
    cold::close(conns).await;

    // Every other connection opened while the server refuses to prepare, and polled once then.
    sandbox.admin("r1", "SET GLOBAL max_prepared_stmt_count = 0")?;
    let refused = async {
        let mut conns = cold::open(replica, cold.connections / 2).await?;
        let first =
            async |_, conn: &mut NodeConn, round| Op::PollWithHeartbeat.call(conn, round).await;
        cold_polls(&mut conns, pid, (1, 0), second / 10, first).await?;
        Ok::<_, anyhow::Error>(conns)
    }
    .await;
    sandbox.admin("r1", "SET GLOBAL max_prepared_stmt_count = DEFAULT")?;
    let mut refused = refused?;
    let mut conns = Vec::with_capacity(cold.connections);
    for prepared in cold::open(replica, cold.connections / 2).await? {
        conns.push(prepared);
        conns.extend(refused.pop());
    }
    let with_read = async |i, conn: &mut NodeConn, round| -> Result<()> {
        Op::PollWithHeartbeat.call(conn, round).await?;
        let lead = conn.lead_state();
        let right = if even(i) {
            matches!(lead, Lead::Ready(_))
        } else {
            *lead == Lead::Refused
        };
        if round > 0 && !right {
            bail!("{}: the heartbeat read is {lead:?}", conn.address());
        }
        Ok(())
    };
    let mut costs = cold_polls(&mut conns, pid, cold.rounds, second, with_read).await?;
    cold::of(&mut costs, even).print("cold_poll_replica_with_heartbeat_server_thread");
    cold::of(&mut costs, |i| !even(i))
        .print("cold_poll_replica_with_heartbeat_unprepared_server_thread");
    cold::close(conns).await;
    cold::close(idle).await;
    Ok(())
}

/// The poller's cadence as `PollParts::for_poll` has it, counted over many polls rather than
/// restated here: how many status polls there are per read of each occasional part.
fn poll_mix() -> String {
    const POLLS: u64 = 10_000;
    let one_in = |part: fn(PollParts) -> bool| {
        let hits = (0..POLLS)
            .filter(|&n| part(PollParts::for_poll(n, 0, true)))
            .count();
        (POLLS as f64 / hits.max(1) as f64).round()
    };
    format!(
        "PollParts::for_poll, 1 poll in N: binlog list {}, clock sample {}, discovery {}, \
         processlist {}",
        one_in(|p| p.binlog_files),
        one_in(|p| p.clock),
        one_in(|p| p.replica_hosts),
        one_in(|p| p.processes)
    )
}

/// Waits until the heartbeat row has replicated to the replica.
async fn wait_for_row(conn: &mut NodeConn) -> Result<()> {
    let began = Instant::now();
    loop {
        if read_heartbeat(conn, &[WRITER_ID.to_owned()])
            .await?
            .row(0)
            .seq
            .is_some()
        {
            return Ok(());
        }
        if began.elapsed() > Duration::from_secs(30) {
            bail!("the heartbeat row did not reach {} in 30 s", conn.address());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
