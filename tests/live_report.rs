//! A DDL-window report from a live ALTER: a real primary rebuilds a table, each replica falls
//! behind while it applies it, and the reports' task (the TUI's, the demo's and `rwtop
//! serve`'s: every published snapshot handed to `report::Live`) opens a window by itself, closes it once both replicas are back
//! under the routing threshold for the quiet time, and writes the report. The recording of the
//! same run gives the same window through `rwtop report`.

mod common;

use std::time::{Duration, Instant};

use common::{
    BIG_TABLE_ALTER, BIG_TABLE_ROWS, TestSandbox, chromium, primary_and, until, until_healthy,
};
use rwtop::engine::Engine;
use rwtop::record::{Recorder, Recording};
use rwtop::report::{self, CaughtUp, Live, ReportSettings};

const DEADLINE: Duration = Duration::from_secs(120);

fn settings() -> ReportSettings {
    ReportSettings {
        // Shorter than the shipped 10 s, to keep the test short; long enough to see the calm.
        quiet: Duration::from_secs(4),
        ..ReportSettings::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_ddl_opens_and_closes_a_window_and_its_report_is_written() {
    let t = TestSandbox::start(2, false);
    t.load_big_table(BIG_TABLE_ROWS, DEADLINE);
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.jsonl");
    let reports = dir.path().join("reports");

    let engine = Engine::start(&primary_and(&t, &["r1", "r2"]));
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;
    let recorder = tokio::spawn(Recorder::create(&rec).unwrap().run(engine.snapshots()));

    // The live path: the reports' task over the published snapshots, as the TUI, the demo and
    // `rwtop serve` start it; its lines are what the footer shows.
    let live = Live::new(settings(), reports.clone(), "the live test".to_owned());
    let (notes_tx, mut lines) = tokio::sync::mpsc::channel(8);
    let task = report::spawn_task(live, engine.snapshots(), notes_tx);
    let watcher = tokio::spawn(async move {
        let mut notes = Vec::new();
        let started = Instant::now();
        while started.elapsed() < DEADLINE {
            let Ok(Some(note)) = tokio::time::timeout(DEADLINE, lines.recv()).await else {
                break;
            };
            let done = note.starts_with("DDL window report written");
            notes.push(note);
            if done {
                break;
            }
        }
        notes
    });

    let (conn, started, ended) = t.alter_big_table(&["r1", "r2"]).await;
    conn.close().await;
    eprintln!("the ALTER ran {:?} on the primary", ended - started);

    let notes = watcher.await.unwrap();
    eprintln!("footer lines: {notes:#?}");
    // The recorder writes a frame a second at most: a few more seconds so that its last frames
    // hold the calm that closed the window.
    let closed = Instant::now();
    until(&engine, "3 s more of snapshots", DEADLINE, |_| {
        (closed.elapsed() >= Duration::from_secs(3)).then_some(())
    })
    .await;
    engine.shutdown().await;
    task.finish().await;
    recorder.await.unwrap().unwrap();
    assert!(
        notes
            .first()
            .is_some_and(|n| n.starts_with("DDL seen: report window open")),
        "the window did not open by itself: {notes:?}"
    );
    let written = notes.last().unwrap();
    assert!(
        written.starts_with("DDL window report written:") && written.contains(".html"),
        "no report within {DEADLINE:?}: {notes:?}"
    );

    // The files: the statement, both replicas with a lag above zero, and the charts.
    let mut files: Vec<_> = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    let html = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .unwrap();
    let md = std::fs::read_to_string(
        files
            .iter()
            .find(|p| p.extension().is_some_and(|e| e == "md"))
            .unwrap(),
    )
    .unwrap();
    eprintln!("{md}");
    assert!(md.contains(BIG_TABLE_ALTER), "{md}");
    assert!(md.contains("| primary | client on the primary |"), "{md}");
    let page = std::fs::read_to_string(html).unwrap();
    assert_eq!(page.matches("<svg").count(), 2, "a chart per replica");
    chromium::assert_charts_drawn(html, 2);
    let keep = std::env::var_os("RWTOP_KEEP_REPORT");
    if let Some(to) = keep {
        std::fs::copy(html, to).unwrap();
    }

    same_window_offline(&rec, &md);
}

/// The recording of the same run, through the offline path (`rwtop report`'s): the same window
/// and the facts behind the live report's text.
fn same_window_offline(rec: &std::path::Path, md: &str) {
    let recording = Recording::open(rec).unwrap();
    let windows = report::from_recording(&recording, None, &settings()).unwrap();
    assert_eq!(windows.len(), 1, "one DDL, one window");
    let facts = &windows[0];
    assert!(!facts.bounds.cut_short);
    let on = |node: &str| facts.statements.iter().find(|s| s.node == node);
    let primary = on("primary").expect("the ALTER on the primary");
    assert!(!primary.applier && primary.text.starts_with(BIG_TABLE_ALTER));
    // It ran seconds (held, see below); the scan sees whole seconds.
    assert!(primary.elapsed_s >= 1, "{primary:?}");
    // Held on its metadata lock until it had run 8 s (`alter_big_table`), the copy taking well
    // under a second: on every node the scans saw it wait for seconds, and the report says so.
    for s in &facts.statements {
        eprintln!(
            "{}: waited {}s of {}s",
            s.node, s.wait.waited_s, s.elapsed_s
        );
        assert_eq!(s.wait.lock.as_deref(), Some("table metadata lock"), "{s:?}");
        assert!(
            s.wait.waited_s >= 1 && s.wait.waited_s <= s.elapsed_s,
            "{s:?}"
        );
    }
    assert!(md.contains("for the table metadata lock |"), "{md}");
    let primary_done = facts.primary_done.expect("the primary's end");
    for name in ["r1", "r2"] {
        let applied = on(name).unwrap_or_else(|| panic!("{name} never seen applying it"));
        assert!(applied.applier, "{applied:?}");
        let r = facts.replicas.iter().find(|r| r.name == name).unwrap();
        let (at, max) = r.max.unwrap();
        eprintln!(
            "{name}: max lag {max:.2}s at +{at:.1}s, {:?}, {:?}",
            r.crossings, r.catch_up
        );
        // Blocked for seconds behind a statement that ran seconds on the primary.
        assert!(max > 1.0, "{name}: max lag {max}");
        assert!(
            at > primary_done,
            "{name} peaked before the primary finished"
        );
        assert!(
            !r.crossings.is_empty(),
            "{name} never crossed the threshold"
        );
        assert!(
            matches!(r.catch_up, CaughtUp::After(s) if s > 0.5),
            "{name}: {:?}",
            r.catch_up
        );
        assert!(
            md.lines()
                .any(|l| l.starts_with(&format!("| {name} | ")) && !l.contains("unknown")),
            "{md}"
        );
    }
}
