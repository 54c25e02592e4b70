//! Headroom and a delayed replica's protection window on real servers, one sandbox (a primary,
//! r1 and r2) for all of it:
//!
//! * r1's SQL thread is stopped under a steady write load: the relay log growth rwtop shows is
//!   checked against `du -b` of r1's relay log files over the same span, and the primary's
//!   binlog rate against its own `SHOW BINARY LOGS` over the same span, across a rotation and a
//!   purge.
//! * r1's disks, read with `--read-disks`: first without the `disks` plugin, then with it
//!   installed (by the test, setting up its server) but rwtop's user without `FILE`, then with
//!   the grant. Each time rwtop must say exactly what is missing and the fix; at the end the disk
//!   holding r1's relay log must show the free space `df` shows and a "full in" figure.
//! * r2 is delayed by 10 s (`MASTER_DELAY`): marker rows are committed on the primary, and the
//!   window rwtop showed at each commit is checked against when the row appeared on r2.

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{TestSandbox, primary_and, until, until_healthy};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::DisksUnavailable;
use rwtop::store::Snapshot;
use rwtop::store::protection::ProtectionState;

const DEADLINE: Duration = Duration::from_secs(60);
const DELAY_S: u32 = 10;
/// Rows a second the load writes, each with a 200-byte value: tens of kB/s of relay log.
const ROWS_PER_S: u64 = 100;
/// How far rwtop's rates may land from the test's own over the same span. Both measure one
/// steady load over ~30 s; the spans' ends are known to within a poll (1 s) on each side, which
/// on a load that a busy machine makes uneven is a few per cent. A wrong rate (per poll instead
/// of per second, gross instead of net, a rotation counted twice or not at all) misses by far
/// more.
const RATE_TOLERANCE: f64 = 0.12;
/// The protection window promises at least the time it shows: a row may appear later than the
/// window, never sooner. It may appear sooner by what the commit, the marker's read (every 50
/// ms) and the test's own timing add: at most this.
const WINDOW_SOONER: Duration = Duration::from_millis(300);
/// How much later than the window a row may appear. The server holds an event until its
/// whole-second timestamp, plus the whole-second clock difference it measured to its source,
/// plus the delay has passed on its own whole-second clock: one clock here, so a row appears
/// between one second before the delay is up and one second after, where the window (the delay
/// less two seconds, for two clocks) sits a second to three below it; plus the same timing as
/// above. A window that ignored the delay would be seconds short, one taken from the lag or
/// from the whole delay would promise time that is not there.
const WINDOW_LATER: Duration = Duration::from_millis(3_600);
const MARKERS: u64 = 3;

/// `(when, bytes)` samples the test takes itself.
type Samples = Arc<Mutex<Vec<(Instant, f64)>>>;

/// Linear interpolation of `samples` at `at`; `None` outside them.
fn at(samples: &[(Instant, f64)], at: Instant) -> Option<f64> {
    let after = samples.iter().position(|(t, _)| *t >= at)?;
    if after == 0 {
        return (samples[0].0 == at).then_some(samples[0].1);
    }
    let ((t0, v0), (t1, v1)) = (samples[after - 1], samples[after]);
    let share = at.duration_since(t0).as_secs_f64() / t1.duration_since(t0).as_secs_f64();
    Some(v0 + (v1 - v0) * share)
}

/// Bytes per second of `samples` from `from` to `to`.
fn rate(samples: &Samples, from: Instant, to: Instant) -> f64 {
    let samples = samples.lock().unwrap();
    let (a, b) = (at(&samples, from), at(&samples, to));
    let (a, b) = (
        a.expect("a sample before the span"),
        b.expect("a sample after it"),
    );
    (b - a) / to.duration_since(from).as_secs_f64()
}

/// `du -b` of r1's relay log files (not the index), as a shell runs it.
fn du_relay(data: &std::path::Path) -> f64 {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "du -bc {}/*relay-bin.[0-9]* | tail -1 | cut -f1",
            data.display()
        ))
        .output()
        .expect("running du");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("du said {text:?}"))
}

/// Samples every 250 ms until the flag drops: r1's relay logs by `du`, and the primary's binlogs
/// by `SHOW BINARY LOGS` (the sum of their sizes, a purged file's last size kept).
fn start_sampling(
    t: &TestSandbox,
    relay: Samples,
    binlog: Samples,
) -> Arc<std::sync::atomic::AtomicBool> {
    use std::sync::atomic::Ordering;
    let data: PathBuf = t.sandbox().dir().join("r1").join("data");
    let endpoint = t.sandbox().endpoint("primary").unwrap();
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = Arc::clone(&running);
    tokio::spawn(async move {
        let mut conn =
            rwtop::mysql::NodeConn::connect(&endpoint, rwtop::mysql::Timeouts::default())
                .await
                .unwrap();
        let mut sizes = std::collections::BTreeMap::new();
        while flag.load(Ordering::Relaxed) {
            let asked = Instant::now();
            if let Ok(rows) = conn.query_rows("SHOW BINARY LOGS").await {
                for row in rows {
                    let name = row.string(&["Log_name"]).unwrap();
                    let size = row.u64(&["File_size"]).unwrap();
                    let seen = sizes.entry(name).or_insert(0_u64);
                    *seen = size.max(*seen);
                }
                let total: u64 = sizes.values().sum();
                #[expect(clippy::cast_precision_loss, reason = "bytes of a test's binlogs")]
                binlog
                    .lock()
                    .unwrap()
                    .push((asked + asked.elapsed() / 2, total as f64));
            }
            let data = data.clone();
            let when = Instant::now();
            let size = tokio::task::spawn_blocking(move || du_relay(&data))
                .await
                .unwrap();
            relay.lock().unwrap().push((when, size));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    running
}

/// Inserts [`ROWS_PER_S`] rows a second of 200 bytes each on the primary until the flag drops.
fn start_writer(t: &TestSandbox) -> Arc<std::sync::atomic::AtomicBool> {
    use std::sync::atomic::Ordering;
    let endpoint = t.sandbox().endpoint("primary").unwrap();
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = Arc::clone(&running);
    tokio::spawn(async move {
        let mut conn =
            rwtop::mysql::NodeConn::connect(&endpoint, rwtop::mysql::Timeouts::default())
                .await
                .unwrap();
        let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / ROWS_PER_S));
        while flag.load(Ordering::Relaxed) {
            tick.tick().await;
            let sql = "INSERT INTO rwtop.hr (pad) VALUES (REPEAT('x', 200))";
            if conn.query_rows(sql).await.is_err() {
                return;
            }
        }
    });
    running
}

/// Whether `node`'s disks were read: `Ok` when readable, why not otherwise; `None` before the
/// first read.
fn disks_state(s: &Snapshot, node: &str) -> Option<Result<(), DisksUnavailable>> {
    let disks = s.node(node)?.disks()?;
    Some(disks.unavailable.clone().map_or(Ok(()), Err))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_relay_growth_binlog_rate_disks_and_the_protection_window() {
    let t = TestSandbox::start(2, false);
    t.admin(
        "primary",
        "CREATE TABLE rwtop.hr (id BIGINT AUTO_INCREMENT PRIMARY KEY, pad VARCHAR(255)); \
         CREATE TABLE rwtop.marker (id BIGINT PRIMARY KEY)",
    );
    // Sampled from before rwtop starts: its binlog window reaches back to its first poll.
    let (relay, binlog): (Samples, Samples) = Default::default();
    let sampling = start_sampling(&t, Arc::clone(&relay), Arc::clone(&binlog));
    common::eventually("the first samples", DEADLINE, async || {
        (!binlog.lock().unwrap().is_empty()).then_some(())
    })
    .await;
    let engine = Engine::start(&EngineSpec {
        disks_every: Some(rwtop::poll::DISKS_EVERY),
        ..primary_and(&t, &["r1", "r2"])
    });
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    // Without the plugin: said, with the fix.
    let (missing, _) = until(
        &engine,
        "r1's disks read without the plugin",
        DEADLINE,
        |s| disks_state(s, "r1"),
    )
    .await;
    let missing = missing.expect_err("no disks plugin on a fresh sandbox");
    assert_eq!(missing, DisksUnavailable::NoPlugin);
    assert!(
        missing.text().contains("INSTALL SONAME 'disks'"),
        "{}",
        missing.text()
    );

    // r1 applies nothing from now; r2 is delayed by DELAY_S.
    let flavor = &t.sandbox().binaries().flavor;
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    let delay = format!(
        "{}; {}; {}",
        flavor.stop_replica_sql(),
        flavor.source_delay_sql(DELAY_S),
        flavor.start_replica_sql()
    );
    t.admin("r2", &delay);
    let writing = start_writer(&t);
    let load_began = Instant::now();

    // The plugin, installed by the test on its own server: rwtop's user still lacks FILE.
    t.admin("r1", "SET SESSION sql_log_bin = 0; INSTALL SONAME 'disks'");
    let (no_grant, _) = until(&engine, "r1's disks: no grant", DEADLINE, |s| {
        disks_state(s, "r1")?
            .err()
            .filter(|u| *u != DisksUnavailable::NoPlugin)
    })
    .await;
    assert!(
        matches!(&no_grant, DisksUnavailable::NoGrant { user } if user == "rwtop"),
        "{no_grant:?}"
    );
    assert!(
        no_grant.text().contains("GRANT FILE ON *.* TO rwtop"),
        "{}",
        no_grant.text()
    );
    println!("without the plugin: {}", missing.text());
    println!("without FILE: {}", no_grant.text());
    t.admin(
        "r1",
        "SET SESSION sql_log_bin = 0; GRANT FILE ON *.* TO 'rwtop'@'127.0.0.1'",
    );
    until(&engine, "r1's disks read", DEADLINE, |s| {
        disks_state(s, "r1")?.ok()
    })
    .await;

    // A rotation and a purge inside the span the rates are compared over.
    tokio::time::sleep(Duration::from_secs(8)).await;
    t.admin("primary", "FLUSH BINARY LOGS");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let newest = t.admin("primary", "SHOW MASTER STATUS")[0]
        .string(&["File"])
        .unwrap();
    t.admin("primary", &format!("PURGE BINARY LOGS TO '{newest}'"));

    // The relay log window (30 s) full of the load, r2's delay in force.
    let (s, _) = until(&engine, "30 s of relay growth", DEADLINE, |s| {
        let r1 = s.node("r1")?;
        let g = r1.replica()?.relay_growth;
        (g.window? >= Duration::from_secs(28) && load_began.elapsed() > Duration::from_secs(33))
            .then(|| s.clone())
    })
    .await;
    let shown = check_rates(&t, &s, &relay, &binlog).await;
    check_disk(&t, s.node("r1").unwrap(), shown);
    check_protection(&t, &engine).await;
    writing.store(false, std::sync::atomic::Ordering::Relaxed);
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
}

/// rwtop's relay growth of r1 and binlog rate of the primary in `s`, against the test's own
/// samples over the same spans; returns the relay growth.
async fn check_rates(t: &TestSandbox, s: &Snapshot, relay: &Samples, binlog: &Samples) -> f64 {
    let seen = Instant::now();
    common::eventually("samples past the snapshot", DEADLINE, async || {
        let newest = |x: &Samples| x.lock().unwrap().last().map(|(t, _)| *t);
        (newest(relay)? > seen && newest(binlog)? > seen).then_some(())
    })
    .await;
    let r1 = s.node("r1").unwrap();
    let growth = r1.replica().unwrap().relay_growth;
    // The span rwtop measured: its window, ending at the newest poll.
    let end = seen.checked_sub(r1.sample_age.unwrap()).unwrap();
    let begin = end.checked_sub(growth.window.unwrap()).unwrap();
    let shown = growth.bytes_per_s.unwrap();
    let by_du = rate(relay, begin, end);
    println!(
        "relay growth: rwtop {shown:.0} B/s over {:.1} s, du -b {by_du:.0} B/s over the same span",
        growth.window.unwrap().as_secs_f64()
    );
    assert!(
        (shown - by_du).abs() <= by_du * RATE_TOLERANCE,
        "relay growth {shown:.0} B/s, du says {by_du:.0} B/s"
    );

    let primary = s.node("primary").unwrap();
    let binlog_rate = primary.binlog().rate.expect("the primary's binlog rate");
    let end = seen.checked_sub(primary.sample_age.unwrap()).unwrap();
    let begin = end.checked_sub(binlog_rate.window.unwrap()).unwrap();
    let shown_binlog = binlog_rate.bytes_per_s.unwrap();
    let by_list = rate(binlog, begin, end);
    println!(
        "binlog rate: rwtop {shown_binlog:.0} B/s ({:.1} MiB/h) over {:.1} s, SHOW BINARY LOGS \
         {by_list:.0} B/s over the same span, {} files",
        shown_binlog * 3600.0 / 1_048_576.0,
        binlog_rate.window.unwrap().as_secs_f64(),
        binlog_rate.files
    );
    // The purge happened; rwtop's list shows it once read again (within a minute).
    assert_eq!(t.admin("primary", "SHOW BINARY LOGS").len(), 1, "purged");
    assert!(
        (shown_binlog - by_list).abs() <= by_list * RATE_TOLERANCE,
        "binlog rate {shown_binlog:.0} B/s, the list says {by_list:.0} B/s"
    );

    shown
}

/// The disk holding r1's relay log, while it grows by `growth` bytes a second.
fn check_disk(t: &TestSandbox, r1: &rwtop::store::NodeView, growth: f64) {
    // The disk holding r1's relay log: df's free space, and a "full in" while it grows.
    let disks = r1.disks().unwrap();
    let relay_disk = disks
        .disks
        .iter()
        .find(|d| d.holds.iter().any(|h| h == "relay log"))
        .expect("a disk holds r1's relay log");
    let df = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(t.sandbox().dir().join("r1").join("data"))
        .output()
        .unwrap();
    let df: f64 = String::from_utf8_lossy(&df.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    #[expect(clippy::cast_precision_loss, reason = "bytes, compared loosely")]
    let available = relay_disk.available as f64;
    println!(
        "disk {} ({}): DISKS {} free, df {} free; {} (read took {:?})",
        relay_disk.path,
        relay_disk.holds.join(", "),
        available,
        df,
        relay_disk.outlook(),
        disks.took
    );
    // Other programs write to this disk between the two reads: 1 % of its free space.
    assert!(
        (available - df).abs() <= df * 0.01,
        "DISKS {available}, df {df}"
    );
    let eta = relay_disk
        .full_in
        .expect("full in while the relay log grows");
    let rate_used = relay_disk.fill_bytes_per_s.unwrap();
    assert!(
        rate_used >= growth * 0.99,
        "at least the relay log's growth: {rate_used}"
    );
    assert!(
        (eta.as_secs_f64() - available / rate_used).abs() <= 1.0 + available / rate_used * 0.01,
        "{eta:?} at {rate_used} B/s"
    );
    assert!(
        relay_disk.why.contains("relay log grows"),
        "{}",
        relay_disk.why
    );
}

/// Markers committed on the primary, each with the window r2 showed then, against when each
/// appeared on r2.
async fn check_protection(t: &TestSandbox, engine: &Engine) {
    // The protection window: markers committed on the primary, each with the window shown then.
    let (s, _) = until(engine, "r2 counting at its delay", DEADLINE, |s| {
        let p = s.node("r2")?.replica()?.protection?;
        (p.state == ProtectionState::Counting
            && p.behind? + Duration::from_millis(1_500) >= Duration::from_secs(u64::from(DELAY_S)))
        .then(|| s.clone())
    })
    .await;
    let p = s.node("r2").unwrap().replica().unwrap().protection.unwrap();
    assert_eq!(p.delay, Duration::from_secs(u64::from(DELAY_S)));
    let mut commits = Vec::new();
    let mut primary = t.connect("primary").await;
    for id in 1..=MARKERS {
        let window = engine
            .latest()
            .node("r2")
            .and_then(|n| n.replica()?.protection?.window)
            .expect("a window while counting");
        primary
            .query_rows(&format!("INSERT INTO rwtop.marker VALUES ({id})"))
            .await
            .unwrap();
        commits.push((id, Instant::now(), window));
        tokio::time::sleep(Duration::from_millis(730)).await;
    }
    let mut r2 = t.connect("r2").await;
    let mut appeared = vec![None; commits.len()];
    let watch_began = Instant::now();
    while appeared.iter().any(Option::is_none) {
        assert!(
            watch_began.elapsed() < Duration::from_secs(30),
            "markers never reached r2"
        );
        let rows = r2.query_rows("SELECT id FROM rwtop.marker").await.unwrap();
        let now = Instant::now();
        for row in rows {
            let id = row.u64(&["id"]).unwrap();
            let slot = usize::try_from(id - 1).unwrap();
            appeared[slot].get_or_insert(now);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut misses = Vec::new();
    for ((id, committed, window), seen) in commits.iter().zip(&appeared) {
        let actual = seen.unwrap().duration_since(*committed);
        let miss = window.as_secs_f64() - actual.as_secs_f64();
        println!(
            "marker {id}: window shown {:.2} s, applied on r2 after {:.2} s (miss {miss:+.2} s)",
            window.as_secs_f64(),
            actual.as_secs_f64()
        );
        misses.push(miss);
    }
    for miss in &misses {
        assert!(
            *miss <= WINDOW_SOONER.as_secs_f64() && -miss <= WINDOW_LATER.as_secs_f64(),
            "window misses by {miss:+.2} s: {misses:?}"
        );
    }
}
