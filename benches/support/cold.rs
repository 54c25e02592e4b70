//! Polls as a server meets them at 1,000 nodes: each connection is polled once a `period`, its
//! server thread asleep in between, so every poll starts on cold caches. Back-to-back calls
//! (the other `poll_path` cases) keep the thread and its data hot and read a fraction of that.
//! A poll's cost is the serving thread's own time on a CPU across it (`schedstat`, to the
//! nanosecond): single polls are seen, not only an average. The thread's time leaves out what
//! the kernel does for the connection on other threads' time (loopback delivery runs on the
//! sender's), so the server process spends a little more than this.

use std::fs;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use rwtop::mysql::{Endpoint, NodeConn, Timeouts};

use super::procfs::row;

/// Polls' costs.
#[derive(Default)]
pub struct Costs(Vec<Duration>);

impl Costs {
    /// `{name}_mean`, `_p50`, `_p99` and `_max` lines, in µs a poll.
    pub fn print(mut self, name: &str) {
        self.0.sort_unstable();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let at = |q: usize| self.0[(self.0.len() * q).div_ceil(100).max(1) - 1];
        let total: Duration = self.0.iter().sum();
        let n = u32::try_from(self.0.len()).unwrap_or(u32::MAX).max(1);
        row(&format!("{name}_mean"), us(total / n), "us/call");
        row(&format!("{name}_p50"), us(at(50)), "us/call");
        row(&format!("{name}_p99"), us(at(99)), "us/call");
        row(&format!("{name}_max"), us(at(100)), "us/call");
    }
}

/// A connection with the server thread that serves it.
pub struct Watched {
    pub conn: NodeConn,
    tid: u64,
}

/// Opens `n` connections to `endpoint` and finds their server threads (`MariaDB`'s processlist
/// names them).
pub async fn open(endpoint: &Endpoint, n: usize) -> Result<Vec<Watched>> {
    let sql = "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()";
    let mut opened = Vec::with_capacity(n);
    for _ in 0..n {
        let mut conn = NodeConn::connect(endpoint, Timeouts::default()).await?;
        let rows = conn
            .query_rows(sql)
            .await
            .context("finding the serving thread")?;
        let tid = rows
            .first()
            .and_then(|r| r.optional_u64(&["TID"]).ok().flatten())
            .ok_or_else(|| anyhow!("{}: no TID in the processlist", conn.address()))?;
        opened.push(Watched { conn, tid });
    }
    Ok(opened)
}

/// Closes the connections politely.
pub async fn close(conns: Vec<Watched>) {
    for watched in conns {
        watched.conn.close().await;
    }
}

/// Runs `warmup` unmeasured rounds and then `rounds` measured ones, each connection polled
/// once a round at its own offset within `period` (`poll` gets the connection's index and the
/// round); returns each connection's costs.
pub async fn cold_polls(
    conns: &mut [Watched],
    server_pid: i32,
    (warmup, rounds): (u32, u32),
    period: Duration,
    mut poll: impl AsyncFnMut(usize, &mut NodeConn, u32) -> Result<()>,
) -> Result<Vec<Costs>> {
    let step = period / u32::try_from(conns.len().max(1))?;
    let mut costs: Vec<Costs> = conns.iter().map(|_| Costs::default()).collect();
    let mut last = vec![Duration::ZERO; conns.len()];
    let mut next = Instant::now();
    // A poll's cost is the thread's time from just before it to just before the connection's
    // next poll, so the work the server does after its last answer is counted too; a last
    // round only reads.
    let polled = warmup + rounds;
    for round in 0..=polled {
        for (i, watched) in conns.iter_mut().enumerate() {
            tokio::time::sleep_until(next.into()).await;
            next += step;
            let now = thread_cpu(server_pid, watched.tid)?;
            if round > warmup {
                costs[i].0.push(now.saturating_sub(last[i]));
            }
            last[i] = now;
            if round < polled {
                poll(i, &mut watched.conn, round).await?;
            }
        }
    }
    Ok(costs)
}

/// The costs of the polls of the connections `pick` chooses in the measured rounds `round`
/// chooses (counted as `cold_polls` hands them to its poll, warm-up rounds included), together.
pub fn of_rounds(
    costs: &[Costs],
    warmup: u32,
    pick: impl Fn(usize) -> bool,
    round: impl Fn(u32) -> bool,
) -> Costs {
    Costs(
        costs
            .iter()
            .enumerate()
            .filter(|(i, _)| pick(*i))
            .flat_map(|(_, c)| c.0.iter().zip(warmup..))
            .filter(|(_, r)| round(*r))
            .map(|(cost, _)| *cost)
            .collect(),
    )
}

/// The costs of the connections `pick` chooses, together.
pub fn of(costs: &mut [Costs], pick: impl Fn(usize) -> bool) -> Costs {
    Costs(
        costs
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| pick(*i))
            .flat_map(|(_, c)| std::mem::take(&mut c.0))
            .collect(),
    )
}

/// One thread's time on a CPU so far, to the nanosecond (the first field of
/// `/proc/<pid>/task/<tid>/schedstat`).
fn thread_cpu(pid: i32, tid: u64) -> Result<Duration> {
    let path = format!("/proc/{pid}/task/{tid}/schedstat");
    let stat = fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let nanos = stat
        .split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| anyhow!("{path}: no run time"))?;
    Ok(Duration::from_nanos(nanos))
}
