//! A real pt-online-schema-change (percona-toolkit 3.2.1) copies a 400k-row table on the
//! sandbox's primary while rwtop watches: the run opens a DDL window named for the tool and the
//! table, with its phase, a progress that follows the rows the tool really copied and an ETA
//! that lands near the copy's real end; the alert names it, the window closes after the swap,
//! and the report names the run. The copy is slowed with small chunks and a pause after each,
//! so that it runs for tens of seconds on a busy two-core machine.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestSandbox, primary_and, until, until_healthy};
use rwtop::alerts::AlertKind;
use rwtop::mysql::{OscPhase, OscRun, OscTool};
use rwtop::report::{self, Live, ReportSettings};
use rwtop::store::Snapshot;

const DEADLINE: Duration = Duration::from_secs(180);
const ROWS: u32 = 400_000;
/// How far rwtop's progress may be from the share of rows the tool really copied, in points.
/// Both of rwtop's counts are `InnoDB`'s row estimates (`TABLE_ROWS` of the new table and of the
/// original), and its reading comes from a poll up to a second before the test's count, while
/// the copy moves ~2 points a second: a right progress lands within a few points (within 2
/// here), one that reads half (or double) the copy is off by 25 points and more past 50 %.
const PROGRESS_WITHIN: f64 = 10.0;
/// The share of rows the test's counts must reach, so that a progress off by a factor shows.
const PROGRESS_COUNTED_PAST: f64 = 50.0;
/// How far an ETA may land from the copy's real end (pt-osc's `Copied rows OK.`): a fixed part
/// for the snapshot's poll (up to a second old), the ETA's whole seconds and the row estimates'
/// point or two of a copy that moves ~2 points a second, and a share of the time still to go
/// for a busy machine's pace, which the ETA extrapolates from the pace since it first saw the
/// run: its first ETAs landed within 2 s of the end from 32 s out in a quiet run, and 7 s late
/// from 36 s out in a busy one (the first seconds' pace 20 % slower than the rest). An ETA
/// that counts the rows left at half or double the pace misses by half the time to go and more.
const ETA_FIXED: Duration = Duration::from_secs(3);
const ETA_SHARE: f64 = 0.35;

fn settings() -> ReportSettings {
    ReportSettings {
        quiet: Duration::from_secs(4),
        ..ReportSettings::default()
    }
}

/// `shop.orders` with `ROWS` rows on the primary, replicated; the monitor user may see the
/// schema's tables and triggers (the grant docs/osc.md asks for), and an unlogged `dba` account
/// on the primary runs pt-osc.
fn prepare(t: &TestSandbox) {
    let monitor = t.sandbox().endpoint("primary").expect("endpoint").user;
    t.admin(
        "primary",
        &format!(
            "CREATE DATABASE shop; \
             CREATE TABLE shop.orders (id INT PRIMARY KEY, customer INT NOT NULL, \
             note CHAR(200) NOT NULL) ; \
             INSERT INTO shop.orders SELECT seq, seq % 977, REPEAT('n', 200) \
             FROM rwtop.seq_1_to_{ROWS}; \
             ANALYZE TABLE shop.orders; \
             GRANT SELECT, TRIGGER ON shop.* TO '{monitor}'@'127.0.0.1'"
        ),
    );
    t.admin(
        "primary",
        "SET sql_log_bin = 0; \
         CREATE USER 'dba'@'127.0.0.1' IDENTIFIED BY 'dba-test-only'; \
         GRANT ALL ON *.* TO 'dba'@'127.0.0.1'",
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
}

/// pt-osc on `shop.orders`, as a DBA would start it: 2,000-row chunks with 0.2 s after each
/// (200 chunks: 40 s of pauses at least, so that a look every 15th poll finds it copying with
/// time to spare), replicas not consulted (the test's `dba` account
/// exists on the primary only).
fn pt_osc(t: &TestSandbox) -> std::process::Child {
    let port = t.sandbox().endpoint("primary").expect("endpoint").port;
    Command::new("pt-online-schema-change")
        .args([
            "--alter",
            "ADD COLUMN shipped TINYINT NOT NULL DEFAULT 0",
            "--execute",
            "--chunk-size",
            "2000",
            "--chunk-time",
            "0",
            "--sleep",
            "0.2",
            "--recursion-method",
            "none",
            "--no-check-replication-filters",
            "--progress",
            "time,5",
            &format!("h=127.0.0.1,P={port},u=dba,p=dba-test-only,D=shop,t=orders"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pt-online-schema-change runs (apt-get install percona-toolkit)")
}

fn run_on_primary(s: &Snapshot) -> Option<OscRun> {
    s.node("primary")?
        .osc()
        .iter()
        .find(|r| r.tool == OscTool::PtOsc)
        .cloned()
}

/// The lines a child writes to a pipe, each with when the test read it (pt-osc flushes every
/// line, so that is when it was written, within a read).
fn timestamped_lines(
    pipe: impl std::io::Read + Send + 'static,
) -> std::thread::JoinHandle<Vec<(Instant, String)>> {
    std::thread::spawn(move || {
        BufReader::new(pipe)
            .lines()
            .map_while(Result::ok)
            .map(|line| (Instant::now(), line))
            .collect()
    })
}

/// One comparison of rwtop's progress with the rows the tool had copied.
#[derive(Debug)]
struct Counted {
    /// The share of the table in the tool's new table, by the test's `COUNT(*)`.
    copied: f64,
    /// rwtop's progress in the newest snapshot once the count had answered.
    shown: f64,
}

/// Every 2 s until the copy ends: the rows in `shop._orders_new` against rwtop's progress right
/// after the count. The count failing ends it too (the swap renames the table); one that
/// failed early leaves too few counts for [`judge_progress`].
async fn count_copied(t: &TestSandbox, engine: &rwtop::engine::Engine) -> Vec<Counted> {
    let mut dba = t
        .connect_as("primary", ("dba", "dba-test-only"), Duration::from_secs(30))
        .await;
    let mut out = Vec::new();
    let began = Instant::now();
    while began.elapsed() < DEADLINE {
        let Ok(rows) = dba
            .query_rows("SELECT COUNT(*) AS n FROM shop._orders_new")
            .await
        else {
            return out;
        };
        let n = rows[0].optional_u64(&["n"]).unwrap().unwrap_or(0);
        let shown = run_on_primary(&engine.latest())
            .filter(|r| r.phase == OscPhase::Copy)
            .and_then(|r| r.progress());
        #[expect(clippy::cast_precision_loss, reason = "row counts far below 2^52")]
        let copied = n as f64 * 100.0 / f64::from(ROWS);
        match shown {
            Some(shown) if n < u64::from(ROWS) => out.push(Counted { copied, shown }),
            // Copied in full: the copy phase is over, nothing left to compare.
            _ if n >= u64::from(ROWS) => return out,
            _ => {}
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pt_osc_run_is_a_ddl_window_named_for_tool_and_table() {
    let t = TestSandbox::start(2, false);
    prepare(&t);
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    let engine = rwtop::engine::Engine::start(&primary_and(&t, &["r1", "r2"]));
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    let live = Live::new(settings(), reports.clone(), "the live test".to_owned());
    let (notes_tx, mut lines) = tokio::sync::mpsc::channel(8);
    let task = report::spawn_task(live, engine.snapshots(), notes_tx);
    let notes = tokio::spawn(async move {
        let mut notes = Vec::new();
        while let Ok(Some(note)) = tokio::time::timeout(DEADLINE, lines.recv()).await {
            let done = note.starts_with("DDL window report written");
            notes.push(note);
            if done {
                break;
            }
        }
        notes
    });
    let (stop, seen) = common::record_snapshots(&engine, |s| {
        let alert = s
            .alerts
            .active
            .iter()
            .find(|a| a.kind == AlertKind::DdlInFlight && a.node.as_deref() == Some("primary"))
            .map(|a| a.cause.clone());
        Some((Instant::now(), run_on_primary(s), alert))
    });

    let started = Instant::now();
    let mut child = pt_osc(&t);
    let stdout = timestamped_lines(child.stdout.take().expect("piped"));
    let stderr = timestamped_lines(child.stderr.take().expect("piped"));
    let (first, took) = until(&engine, "pt-osc seen copying", DEADLINE, |s| {
        run_on_primary(s).filter(|r| r.phase == OscPhase::Copy && r.progress().is_some())
    })
    .await;
    eprintln!("seen after {took:?}: {first:?}");
    assert_eq!(first.title(), "pt-osc on shop.orders");
    assert!(first.unreadable.is_none(), "{first:?}");
    assert_eq!(
        first.rows_estimate.map(|r| r > 300_000),
        Some(true),
        "{first:?}"
    );
    let counted = count_copied(&t, &engine).await;

    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    let ended = Instant::now();
    let stdout = stdout.join().unwrap();
    let stderr = stderr.join().unwrap();
    let text = |lines: &[(Instant, String)]| {
        lines
            .iter()
            .map(|(at, l)| format!("{:7.2} {l}", (*at - started).as_secs_f64()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    eprintln!(
        "pt-osc ran {:?}:\n{}\n{}",
        ended - started,
        text(&stdout),
        text(&stderr)
    );
    assert!(status.success(), "pt-osc failed");
    assert!(
        stdout
            .iter()
            .any(|(_, l)| l.contains("Swapped original and new tables OK")),
        "{}",
        text(&stdout)
    );
    let copy_ended = stdout
        .iter()
        .find(|(_, l)| l.ends_with("Copied rows OK."))
        .map(|(at, _)| *at)
        .expect("pt-osc says when it copied the last rows");
    judge_progress(&counted);

    // The swap ends the run: within a few polls the primary shows none.
    let ((), gone_after) = until(&engine, "the run gone after the swap", DEADLINE, |s| {
        run_on_primary(s).is_none().then_some(())
    })
    .await;
    eprintln!("run gone {gone_after:?} after pt-osc exited");
    assert!(gone_after < Duration::from_secs(10), "{gone_after:?}");

    let notes = notes.await.unwrap();
    let _ = stop.send(());
    let seen = seen.await.unwrap();
    engine.shutdown().await;
    task.finish().await;
    judge_etas(&seen, copy_ended);
    judge(&notes, &seen, &reports);
    // The change landed: the new column is there, on the replicas too.
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let rows = t.admin("r2", "SHOW COLUMNS FROM shop.orders LIKE 'shipped'");
    assert_eq!(rows.len(), 1, "the swap replicated");
}

/// rwtop's progress against the rows really copied, at every count, one of them past
/// [`PROGRESS_COUNTED_PAST`].
fn judge_progress(counted: &[Counted]) {
    eprintln!("copied (counted) against shown, in %: {counted:?}");
    assert!(
        counted.iter().any(|c| c.copied >= PROGRESS_COUNTED_PAST),
        "no count past {PROGRESS_COUNTED_PAST} % while copying: {counted:?}"
    );
    for c in counted {
        assert!(
            (c.shown - c.copied).abs() <= PROGRESS_WITHIN,
            "progress {:.1} % shown with {:.1} % of the rows copied: {counted:?}",
            c.shown,
            c.copied
        );
    }
    // It moves with the copy, not only within the bound.
    let first = counted.first().map_or(0.0, |c| c.shown);
    let last = counted.last().map_or(0.0, |c| c.shown);
    assert!(last > first + 20.0, "{counted:?}");
}

/// Every ETA shown while copying against the copy's real end: within [`ETA_FIXED`] and
/// [`ETA_SHARE`] of the time that was still to go.
fn judge_etas(seen: &Seen, copy_ended: Instant) {
    let etas: Vec<(f64, f64)> = seen
        .iter()
        .filter_map(|(at, r, _)| {
            let r = r.as_ref().filter(|r| r.phase == OscPhase::Copy)?;
            let eta = Duration::from_secs(r.eta_s?);
            let to_go = copy_ended.checked_duration_since(*at)?;
            Some((eta.as_secs_f64(), to_go.as_secs_f64()))
        })
        .collect();
    let shown: Vec<String> = etas
        .iter()
        .map(|(eta, to_go)| format!("{eta:.0}/{to_go:.1}"))
        .collect();
    eprintln!("ETA shown / real time to the copy's end, s: {shown:?}");
    assert!(etas.len() >= 5, "too few ETAs while copying: {shown:?}");
    for (eta, to_go) in &etas {
        let allowed = ETA_FIXED.as_secs_f64() + ETA_SHARE * to_go;
        assert!(
            (eta - to_go).abs() <= allowed,
            "an ETA of {eta:.0} s with {to_go:.1} s to go (allowed ±{allowed:.1} s): {shown:?}"
        );
    }
}

/// Snapshots as recorded: when, the primary's pt-osc run, its `ddl_in_flight` cause.
type Seen = Vec<(Instant, Option<OscRun>, Option<String>)>;

/// The footer's lines, the alert and the report written when the window closed.
fn judge(notes: &[String], seen: &Seen, reports: &std::path::Path) {
    eprintln!("footer lines: {notes:#?}");
    assert!(
        notes
            .first()
            .is_some_and(|n| n.starts_with("DDL seen: report window open")),
        "{notes:?}"
    );
    assert!(
        notes
            .last()
            .is_some_and(|n| n.starts_with("DDL window report written")),
        "{notes:?}"
    );
    let alert = seen
        .iter()
        .find_map(|(_, _, a)| a.clone())
        .expect("ddl_in_flight raised on the primary");
    eprintln!("alert: {alert}");
    assert!(
        alert.starts_with("primary: pt-osc on shop.orders, copy"),
        "{alert}"
    );

    let md = std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .expect("a Markdown report");
    let md = std::fs::read_to_string(md).unwrap();
    eprintln!("{md}");
    assert!(
        md.contains("Online schema change: **pt-osc on shop.orders, "),
        "{md}"
    );
    assert!(md.contains("| online schema change tool |"), "{md}");
}
