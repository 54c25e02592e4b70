//! A real pt-online-schema-change (percona-toolkit 3.2.1) copies a 400k-row table on the
//! sandbox's primary while rwtop watches: the run opens a DDL window named for the tool and the
//! table, with its phase and a progress that moves, the alert names it, the window closes after
//! the swap, and the report names the run. The copy is slowed with small chunks and a pause
//! after each, so that it runs for tens of seconds on a busy two-core machine.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestSandbox, primary_and, until, until_healthy};
use rwtop::alerts::AlertKind;
use rwtop::mysql::{OscPhase, OscRun, OscTool};
use rwtop::report::{self, Live, ReportSettings};
use rwtop::store::Snapshot;

const DEADLINE: Duration = Duration::from_secs(180);
const ROWS: u32 = 400_000;

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
    let child = pt_osc(&t);
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
    let progress = first.progress().unwrap();
    let (later, _) = until(&engine, "the progress moving", DEADLINE, |s| {
        run_on_primary(s).filter(|r| r.progress().is_some_and(|p| p > progress + 5.0))
    })
    .await;
    eprintln!("later: {later:?} ({})", later.summary());

    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let ended = Instant::now();
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!(
        "pt-osc ran {:?}:\n{stdout}\n{}",
        ended - started,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "pt-osc failed");
    assert!(
        stdout.contains("Swapped original and new tables OK"),
        "{stdout}"
    );

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
    judge(&notes, &seen, &reports);
    // The change landed: the new column is there, on the replicas too.
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let rows = t.admin("r2", "SHOW COLUMNS FROM shop.orders LIKE 'shipped'");
    assert_eq!(rows.len(), 1, "the swap replicated");
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
    // Once the copy's pace is measured, an ETA.
    let etas: Vec<u64> = seen
        .iter()
        .filter_map(|(_, r, _)| r.as_ref()?.eta_s)
        .collect();
    eprintln!("ETAs: {etas:?}");
    assert!(!etas.is_empty(), "no ETA while copying");
    let progresses: Vec<f64> = seen
        .iter()
        .filter_map(|(_, r, _)| r.as_ref()?.progress())
        .collect();
    eprintln!(
        "{} snapshots with a progress, from {:.1} to {:.1} %",
        progresses.len(),
        progresses.first().unwrap_or(&0.0),
        progresses.last().unwrap_or(&0.0)
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
