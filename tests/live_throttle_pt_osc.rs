//! The throttle measured with the real pt-online-schema-change (percona-toolkit 3.2.1): a copy of
//! a 300,000-row table while the link to one replica is stalled for a few seconds (both threads
//! `Yes`, `Seconds_Behind_Master` 0), once with pt-osc alone and once with the shipped plugin
//! (`deploy/pt-online-schema-change/rwtop-throttle.pl`) asking rwtop's `/throttle`.
//!
//! pt-osc alone checks the stalled replica (`--recursion-method dsn=`), reads 0 and keeps copying
//! through the stall. With the plugin it copies only until rwtop's heartbeat lag passes the 1 s
//! limit, then nothing for the rest of the stall, and goes on once the link recovers. Rows copied
//! are read as `MAX(id)` of pt-osc's new table every 100 ms (it copies in primary-key order).
//! The copy is paced (`--chunk-size 2000 --chunk-time 0 --sleep 0.1`) so that the stall falls
//! inside it on any machine and the chunk in flight is a known size. The figures are printed;
//! `docs/throttle.md` and `docs/benchmarks.md` carry them.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::http::{http, serve_with_throttle};
use common::{TestSandbox, exact, primary_and, until};
use rwtop::engine::Engine;

const ROWS: u64 = 300_000;
/// pt-osc's fixed chunk: at most this many rows are in flight when it is told to wait.
const CHUNK: u64 = 2_000;
/// The stall begins once this many rows are copied.
const STALL_AT: u64 = 50_000;
const STALL: Duration = Duration::from_secs(8);
const DEADLINE: Duration = Duration::from_secs(120);
const USER: (&str, &str) = ("osc", "osc-test-only");

/// Rows copied as sampled: when, and `MAX(id)` of the new table (0 before it exists).
type Samples = Arc<Mutex<Vec<(Instant, u64)>>>;

/// What one run measured.
#[derive(Debug)]
struct Run {
    /// Rows per second in the 2 s before the stall.
    rate_before: f64,
    rows_in_stall: u64,
    /// Rows copied in the second half of the stall.
    rows_in_second_half: u64,
    /// From the stall to rwtop's first 503, and the rows copied after it until the stall ended.
    verdict_after: Option<Duration>,
    rows_after_verdict: Option<u64>,
    /// From the link's recovery to the next row copied (`None`: none was copied after it).
    resumed_after: Option<Duration>,
    took: Duration,
    output: String,
}

fn pt_osc() -> PathBuf {
    let path = PathBuf::from("/usr/bin/pt-online-schema-change");
    assert!(
        path.is_file(),
        "pt-online-schema-change not found: install the Debian package percona-toolkit \
         (scripts/test does)"
    );
    path
}

fn plugin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/pt-online-schema-change/rwtop-throttle.pl")
}

/// Samples `MAX(id)` of the new table every 100 ms until `stop` is set.
fn sample(
    t: &TestSandbox,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> (Samples, tokio::task::JoinHandle<()>) {
    let samples: Samples = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::clone(&samples);
    let endpoint = rwtop::mysql::Endpoint {
        user: USER.0.to_owned(),
        password: Some(rwtop::mysql::Secret::new(USER.1)),
        ..t.sandbox().endpoint("primary").expect("endpoint")
    };
    let task = tokio::spawn(async move {
        let mut conn =
            rwtop::mysql::NodeConn::connect(&endpoint, rwtop::mysql::Timeouts::default())
                .await
                .expect("the sampler's connection");
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let at = Instant::now();
            let rows = conn
                .query_rows("SELECT COALESCE(MAX(id), 0) AS n FROM rwtop._osc_new")
                .await
                .ok()
                .and_then(|rows| rows.first()?.optional_u64(&["n"]).ok().flatten())
                .unwrap_or(0);
            if !conn.is_open() {
                conn =
                    rwtop::mysql::NodeConn::connect(&endpoint, rwtop::mysql::Timeouts::default())
                        .await
                        .expect("the sampler's connection, again");
            }
            out.lock().unwrap().push((at, rows));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    (samples, task)
}

fn copied(samples: &Samples) -> u64 {
    samples
        .lock()
        .unwrap()
        .iter()
        .map(|(_, n)| *n)
        .max()
        .unwrap_or(0)
}

/// Copied rows at `at`: the newest sample taken at or before it.
fn copied_at(samples: &Samples, at: Instant) -> u64 {
    samples
        .lock()
        .unwrap()
        .iter()
        .filter(|(when, _)| *when <= at)
        .map(|(_, n)| *n)
        .max()
        .unwrap_or(0)
}

/// pt-osc's command line: the paced copy of `rwtop.osc`, checking the replicas the DSN table
/// names, its output to `log` and `log` with `.err`.
fn command(t: &TestSandbox, dir: &Path, log: &Path) -> tokio::process::Command {
    let primary = t.sandbox().port("primary").expect("a port");
    let mut cmd = tokio::process::Command::new(pt_osc());
    cmd.args([
        "--alter",
        "ENGINE=InnoDB",
        "--execute",
        "--progress",
        "time,5",
    ])
    .args([
        "--chunk-size",
        &CHUNK.to_string(),
        "--chunk-time",
        "0",
        "--sleep",
        "0.1",
    ])
    .arg("--recursion-method")
    .arg(format!("dsn=h=127.0.0.1,P={primary},D=percona,t=dsns"))
    .arg(format!(
        "h=127.0.0.1,P={primary},F={},D=rwtop,t=osc",
        dir.join("osc.cnf").display()
    ))
    .stdout(std::fs::File::create(log).unwrap())
    .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
    .kill_on_drop(true);
    cmd
}

/// With rwtop out of reach, or a request rwtop refuses, pt-osc stops when it loads the plugin,
/// with the reason, before it creates anything.
async fn plugin_refuses_before_anything_changes(t: &TestSandbox, dir: &Path, addr: SocketAddr) {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let cases = [
        (
            vec![("RWTOP_URL", closed.to_string())],
            format!("rwtop-throttle: cannot reach rwtop at http://{closed}/throttle"),
        ),
        (
            vec![
                ("RWTOP_URL", format!("http://{addr}/")),
                ("RWTOP_REPLICAS", "r1,nope".to_owned()),
            ],
            "rwtop-throttle: rwtop refused".to_owned(),
        ),
        (vec![], "rwtop-throttle: RWTOP_URL is not set".to_owned()),
    ];
    for (env, expected) in cases {
        let log = dir.join("refused.log");
        let mut cmd = command(t, dir, &log);
        cmd.arg("--plugin").arg(plugin()).env_remove("RWTOP_URL");
        for (name, value) in &env {
            cmd.env(name, value);
        }
        let exit = cmd.status().await.expect("running pt-osc");
        let output = format!("{}{}", read(&log), read(&log.with_extension("err")));
        eprintln!("{env:?}: {exit}: {}", output.trim());
        assert!(!exit.success(), "{env:?}: pt-osc went on:\n{output}");
        assert!(output.contains(&expected), "{env:?}:\n{output}");
        assert!(!output.contains("Creating new table"), "{env:?}:\n{output}");
    }
    let left = t.admin("primary", "SHOW TABLES FROM rwtop LIKE '\\_osc\\_new'");
    assert!(left.is_empty(), "{left:?}");
}

/// One pt-osc run (with the plugin when `rwtop` is given) with r1's link stalled for [`STALL`]
/// once [`STALL_AT`] rows are copied.
async fn run(t: &TestSandbox, dir: &Path, addr: SocketAddr, with_plugin: bool) -> Run {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (samples, sampling) = sample(t, Arc::clone(&stop));
    let log = dir.join(if with_plugin {
        "with-plugin.log"
    } else {
        "alone.log"
    });
    let mut cmd = command(t, dir, &log);
    if with_plugin {
        cmd.arg("--plugin").arg(plugin());
        cmd.env("RWTOP_URL", format!("http://{addr}"));
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("starting pt-online-schema-change");

    let waited = Instant::now();
    while copied(&samples) < STALL_AT {
        assert!(
            waited.elapsed() < DEADLINE,
            "pt-osc copied only {} rows in {DEADLINE:?}",
            copied(&samples)
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "pt-osc ended early: {}",
            read(&log)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stalled = Instant::now();
    t.relay("r1").stall();
    let mut verdict = None;
    while stalled.elapsed() < STALL {
        if verdict.is_none() && http(addr, "GET", "/throttle").await.status == 503 {
            verdict = Some(Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let recovered = Instant::now();
    t.relay("r1").resume();
    let exit = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .expect("pt-osc ends")
        .unwrap();
    let took = started.elapsed();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    sampling.await.unwrap();
    let output = format!("{}{}", read(&log), read(&log.with_extension("err")));
    assert!(exit.success(), "pt-osc failed ({exit}):\n{output}");

    let before = copied_at(&samples, stalled);
    let two_s_before = copied_at(
        &samples,
        stalled
            .checked_sub(Duration::from_secs(2))
            .unwrap_or(stalled),
    );
    let at_end = copied_at(&samples, recovered);
    let half = copied_at(&samples, stalled + STALL / 2);
    let resumed_after = samples
        .lock()
        .unwrap()
        .iter()
        .find(|(when, n)| *when > recovered && *n > at_end)
        .map(|(when, _)| *when - recovered);
    #[expect(clippy::cast_precision_loss, reason = "row counts far below 2^52")]
    let rate_before = (before - two_s_before) as f64 / 2.0;
    Run {
        rate_before,
        rows_in_stall: at_end - before,
        rows_in_second_half: at_end - half,
        verdict_after: verdict.map(|v| v - stalled),
        rows_after_verdict: verdict.map(|v| at_end - copied_at(&samples, v)),
        resumed_after,
        took,
        output,
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The copy's account (its password in an option file, never on pt-osc's command line), the
/// table, and the DSN table that points pt-osc at both replicas; returns r1's port.
fn prepare(t: &TestSandbox, dir: &Path) -> u16 {
    std::fs::write(
        dir.join("osc.cnf"),
        format!("[client]\nuser={}\npassword={}\n", USER.0, USER.1),
    )
    .unwrap();
    let (r1, r2) = (
        t.sandbox().port("r1").expect("a port"),
        t.sandbox().port("r2").expect("a port"),
    );
    t.admin(
        "primary",
        &format!(
            "CREATE USER '{0}'@'127.0.0.1' IDENTIFIED BY '{1}'; \
             GRANT ALL ON *.* TO '{0}'@'127.0.0.1'; \
             CREATE TABLE rwtop.osc (id INT PRIMARY KEY, a VARCHAR(100) NOT NULL, \
             b INT NOT NULL); \
             INSERT INTO rwtop.osc SELECT seq, REPEAT('x', 100), seq FROM rwtop.seq_1_to_{ROWS}; \
             CREATE DATABASE percona; \
             CREATE TABLE percona.dsns (id INT AUTO_INCREMENT PRIMARY KEY, parent_id INT, \
             dsn VARCHAR(255) NOT NULL); \
             INSERT INTO percona.dsns (dsn) VALUES ('h=127.0.0.1,P={r1}'), ('h=127.0.0.1,P={r2}')",
            USER.0, USER.1
        ),
    );
    r1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pt_osc_keeps_copying_through_a_stall_and_the_plugin_pauses_it() {
    let t = TestSandbox::start_with_relay(2);
    let dir = tempfile::tempdir().unwrap();
    let r1 = prepare(&t, dir.path());
    t.sandbox().wait_replicating(DEADLINE).unwrap();

    let engine = Engine::start(&primary_and(&t, &["r1", "r2"]));
    let (addr, server) = serve_with_throttle(&engine).await;
    let caught_up = async || {
        until(&engine, "both replicas caught up", DEADLINE, |s| {
            ["r1", "r2"]
                .iter()
                .all(|r| exact(s, r) == Some(Duration::ZERO))
                .then_some(())
        })
        .await;
    };
    caught_up().await;
    plugin_refuses_before_anything_changes(&t, dir.path(), addr).await;

    let alone = run(&t, dir.path(), addr, false).await;
    eprintln!("pt-osc alone: {alone:#?}");
    caught_up().await;
    let with = run(&t, dir.path(), addr, true).await;
    eprintln!("pt-osc with rwtop's plugin: {with:#?}");
    eprintln!(
        "FIGURES stall {}s: alone {} rows copied during the stall ({:.0} rows/s before it); \
         with the plugin {} rows ({} after rwtop's verdict {:?} into the stall, {} in its second \
         half), copying again {:?} after the link recovered; runs took {:?} and {:?}",
        STALL.as_secs(),
        alone.rows_in_stall,
        alone.rate_before,
        with.rows_in_stall,
        with.rows_after_verdict.unwrap_or(u64::MAX),
        with.verdict_after,
        with.rows_in_second_half,
        with.resumed_after,
        alone.took,
        with.took,
    );

    judge(&alone, &with, r1);
    let rows = t.admin("primary", "SELECT COUNT(*) AS n FROM rwtop.osc");
    assert_eq!(rows[0].optional_u64(&["n"]).unwrap(), Some(ROWS));

    server.shutdown().await;
    engine.shutdown().await;
}

/// What the two runs must show, with tolerances a throttle that did not pause (or a pt-osc
/// that was not fooled) fails.
fn judge(alone: &Run, with: &Run, r1: u16) {
    // pt-osc alone is fooled: it checks the stalled replica, reads SBM 0 and copies on.
    let checks = alone
        .output
        .split_once("Will check slave lag on:")
        .map_or("", |(_, rest)| rest);
    assert!(
        checks.contains(&format!("127.0.0.1:{r1}\n")),
        "pt-osc must check the stalled replica:\n{}",
        alone.output
    );
    #[expect(clippy::cast_precision_loss, reason = "row counts far below 2^52")]
    let kept_copying = alone.rows_in_stall as f64 >= 0.4 * alone.rate_before * STALL.as_secs_f64();
    assert!(
        kept_copying && alone.rows_in_stall >= 10 * CHUNK,
        "pt-osc alone should copy through the stall: {alone:#?}"
    );
    assert!(
        alone.rows_in_second_half >= 5 * CHUNK,
        "pt-osc alone should still copy late in the stall: {alone:#?}"
    );

    // With the plugin: a verdict once the lag passed 1 s; after it, the chunk in flight and one
    // more the 100 ms sampling can have missed before the verdict; nothing in the second half;
    // copying again soon after the recovery.
    let verdict = with
        .verdict_after
        .expect("rwtop said throttle during the stall");
    assert!(
        verdict <= Duration::from_secs(4),
        "verdict after {verdict:?}"
    );
    let after = with.rows_after_verdict.unwrap_or(u64::MAX);
    assert!(
        after <= 3 * CHUNK,
        "{after} rows copied after the verdict: {with:#?}"
    );
    assert_eq!(with.rows_in_second_half, 0, "{with:#?}");
    assert!(
        with.rows_in_stall * 3 <= alone.rows_in_stall,
        "the plugin should hold the copy back: {with:#?} against {alone:#?}"
    );
    let resumed = with
        .resumed_after
        .expect("copying went on after the recovery");
    assert!(
        resumed <= Duration::from_secs(10),
        "resumed after {resumed:?}"
    );
    assert!(
        with.output.contains("rwtop-throttle: throttle: r1 lag "),
        "the plugin says why:\n{}",
        with.output
    );
    assert!(
        with.output.contains("rwtop-throttle: go after "),
        "{}",
        with.output
    );
}
