//! `rwtop report` over a recording made here with the recorder (a DDL on the primary, then each
//! replica applying it and falling behind): the window is found by itself, both formats say the
//! same facts, the HTML's charts are drawn (headless Chromium), and bad input is refused with
//! what to do, nothing half-written left behind.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::chromium;
use rwtop::record::{RecordedThresholds, Recorder};
use rwtop::store::lag::Lag;
use rwtop::store::series::Point;
use rwtop::store::testkit::{Topo, ddl, scan};

const ALTER: &str = "ALTER TABLE shop.orders ADD COLUMN note TEXT";

/// r1's lag at second `s` in milliseconds: calm, then up to 7 s while it applies the ALTER
/// (16–22), back down by 27. r2 half as far behind (`halve`).
fn lag_ms(s: u64, halve: bool) -> u32 {
    let s = u32::try_from(s).unwrap();
    let ms = match s {
        16..=22 => (s - 15) * 1000,
        23..=26 => (27 - s) * 1500,
        _ => 100,
    };
    if halve { (ms / 2).max(100) } else { ms }
}

/// A 50-frame recording, one frame a second, with the DDL at 10–15 on db1 and applied at 16–22
/// on each replica; without thresholds in its header, as recordings were made before them.
fn recording(path: &Path) {
    recording_with(path, None);
}

fn recording_with(path: &Path, thresholds: Option<RecordedThresholds>) {
    let mut recorder = Recorder::create_with(path, thresholds).unwrap();
    let mut points: [Vec<Point>; 2] = [Vec::new(), Vec::new()];
    for step in 0..50 {
        let mut topo = Topo::new();
        let uptime = topo.at(step).uptime;
        for (i, (name, halve)) in [("r1", false), ("r2", true)].into_iter().enumerate() {
            let lag = lag_ms(step, halve);
            points[i].push(Point {
                at_ms: u64::try_from(uptime.as_millis()).unwrap(),
                heartbeat_lag_ms: Some(lag),
                sbm_s: Some(lag / 1000),
            });
            let series: Arc<[Point]> = Arc::from(points[i].clone());
            topo.replica_mut(name, |c| {
                c.heartbeat_lag = Lag::Exact {
                    lag: Duration::from_millis(lag.into()),
                };
                c.series = series.into();
            });
            if (16..=22).contains(&step) {
                topo.node_mut(name, |n| *scan(n) = vec![ddl(ALTER, step - 16, true)]);
            }
        }
        if (10..=15).contains(&step) {
            topo.node_mut("db1", |n| {
                let mut running = ddl(ALTER, step - 10, false);
                running.progress = Some(f64::from(u32::try_from(step - 10).unwrap()) * 20.0);
                *scan(n) = vec![running];
            });
        }
        recorder.write(&topo.at(step)).unwrap();
    }
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = common::rwtop(args, &[]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_recordings_ddl_window_in_markdown_and_html_with_its_charts_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.jsonl");
    recording(&rec);
    let rec_s = rec.to_str().unwrap();

    let (ok, md, err) = run(&["report", rec_s]);
    assert!(ok, "{err}");
    // A recording without thresholds says what the report assumed.
    assert!(
        err.contains("carries no thresholds") && err.contains("at 1.00s (the default)"),
        "{err}"
    );
    eprintln!("{md}");
    assert_eq!(md.matches("## Window").count(), 0, "one window: {md}");
    assert!(md.contains(&format!("`{ALTER}`")), "{md}");
    assert!(md.contains("| db1 | client on the primary |"), "{md}");
    assert!(md.contains("| r1 | replication applier |"), "{md}");
    assert!(md.contains("Worst lag: **7.00s on r1**"), "{md}");
    // r1 above 1 s from second 17 (+7 s; 1 s exactly is not above), back under at 27 (+17 s).
    let r1 = md.lines().find(|l| l.starts_with("| r1 | 7.00s")).unwrap();
    assert!(
        r1.contains("(+7s) →") && r1.contains("(+17s), peak 7.00s"),
        "{r1}"
    );
    // The primary was last seen at 15: r1 back under at 27, 12 s later.
    assert!(r1.contains("| 12s after the primary finished |"), "{r1}");
    let r2 = md.lines().find(|l| l.starts_with("| r2 | 3.50s")).unwrap();
    assert!(r2.contains("peak 3.50s"), "{r2}");

    let html = dir.path().join("report.html");
    let (ok, _, err) = run(&["report", rec_s, "--output", html.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(err.contains("wrote the report of 1 window(s)"), "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    for forbidden in ["<script", "http://", "https://", "<link", "@import", "url("] {
        let found = page.replace("http://www.w3.org/2000/svg", "");
        assert!(!found.contains(forbidden), "the page has {forbidden}");
    }
    assert!(page.contains("prefers-color-scheme: dark"));
    assert_eq!(page.matches("<svg").count(), 2);
    chromium::assert_charts_drawn(&html, 2);

    // The check can fail: the same page with its lag lines broken is caught.
    let broken = dir.path().join("broken.html");
    std::fs::write(&broken, page.replace("<polyline", "<polyline-broken")).unwrap();
    let caught = std::panic::catch_unwind(|| chromium::assert_charts_drawn(&broken, 2));
    assert!(
        caught.is_err(),
        "a page without lag lines passed the pixel check"
    );

    // A window given by hand, in either form of time.
    let (ok, md, err) = run(&[
        "report", rec_s, "--from", "15s", "--to", "30s", "--format", "md",
    ]);
    assert!(ok, "{err}");
    assert!(
        md.contains("marked by hand") && md.contains("(15s)"),
        "{md}"
    );
}

#[test]
fn bad_input_is_refused_with_what_to_do_and_nothing_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.jsonl");
    recording(&rec);
    let rec_s = rec.to_str().unwrap();
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();

    let not_one = dir.path().join("rwtop.toml");
    std::fs::write(&not_one, "[report]\nquiet = \"10s\"\n").unwrap();
    let before_toml = listing();
    let (ok, _, err) = run(&["report", not_one.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("not an rwtop recording") && err.contains("rwtop --record FILE"),
        "{err}"
    );

    let (ok, _, err) = run(&["report", rec_s, "--from", "10m"]);
    assert!(!ok);
    assert!(
        err.contains("holds no lag reading") && err.contains("give --from and --to inside it"),
        "{err}"
    );
    let (ok, _, err) = run(&["report", rec_s, "--from", "soon"]);
    assert!(!ok);
    assert!(err.contains("--from \"soon\": expected an offset"), "{err}");

    // A folder that is a file: the report cannot be written, and no temporary file stays.
    let blocked = dir.path().join("rwtop.toml").join("report.md");
    let (ok, _, err) = run(&["report", rec_s, "--output", blocked.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("cannot write the report to") && err.contains("give another path (--output)"),
        "{err}"
    );
    let (ok, _, err) = run(&["report", rec_s, "--output", dir.path().to_str().unwrap()]);
    assert!(!ok && err.contains("it is a folder"), "{err}");
    let (ok, _, err) = run(&["report", rec_s, "--format", "pdf"]);
    assert!(!ok && err.contains("expected md or html"), "{err}");
    assert_eq!(listing(), before_toml, "nothing written beside the inputs");
    assert_eq!(before.len() + 1, before_toml.len());

    // A recording with no DDL: no window opens by itself, and the message says how to give one.
    let calm = dir.path().join("calm.jsonl");
    let mut recorder = Recorder::create(&calm).unwrap();
    for step in 0..5 {
        recorder.write(&Topo::new().at(step)).unwrap();
    }
    drop(recorder);
    let (ok, _, err) = run(&["report", calm.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("no DDL was seen running") && err.contains("give one with --from T --to T"),
        "{err}"
    );
}

/// The r1 row of a report: `| r1 | 7.00s …`.
fn r1_row(md: &str) -> &str {
    md.lines()
        .find(|l| l.starts_with("| r1 | 7.00s"))
        .unwrap_or_else(|| panic!("no r1 row: {md}"))
}

/// A recording made with a 3 s routing threshold marks r1's crossings at 3 s without
/// `--threshold` (above from second 19, +9 s; back under at 25, +15 s); `--threshold 1` still
/// overrides it, and so the crossings move to 1 s.
#[test]
fn a_recording_carries_its_thresholds_and_the_flag_still_overrides_them() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.jsonl");
    recording_with(
        &rec,
        Some(RecordedThresholds {
            routing_max_lag_seconds: 3.0,
            report_quiet_seconds: 10.0,
        }),
    );
    let header = std::fs::read_to_string(&rec).unwrap();
    let header = header.lines().next().unwrap();
    assert!(
        header.contains(
            r#""thresholds":{"routing_max_lag_seconds":3.0,"report_quiet_seconds":10.0}"#
        ),
        "{header}"
    );
    let rec_s = rec.to_str().unwrap();

    let (ok, md, err) = run(&["report", rec_s]);
    assert!(ok, "{err}");
    assert!(!err.contains("carries no thresholds"), "{err}");
    let r1 = r1_row(&md);
    assert!(
        r1.contains("(+9s) →") && r1.contains("(+15s), peak 7.00s"),
        "{r1}"
    );

    let (ok, md, err) = run(&["report", rec_s, "--threshold", "1"]);
    assert!(ok, "{err}");
    let r1 = r1_row(&md);
    assert!(
        r1.contains("(+7s) →") && r1.contains("(+17s), peak 7.00s"),
        "{r1}"
    );

    // A config's threshold does not override the recording's (only the flag does).
    let config = dir.path().join("rwtop.toml");
    std::fs::write(&config, "[thresholds]\nrouting_max_lag_seconds = 1.0\n").unwrap();
    let (ok, md, err) = run(&["--config", config.to_str().unwrap(), "report", rec_s]);
    assert!(ok, "{err}");
    assert!(r1_row(&md).contains("(+9s) →"), "{md}");

    // A hand-edited header's numbers that are no threshold are not used, and nothing panics.
    let text = std::fs::read_to_string(&rec).unwrap();
    let edited = text.replacen(
        r#""thresholds":{"routing_max_lag_seconds":3.0,"report_quiet_seconds":10.0}"#,
        r#""thresholds":{"routing_max_lag_seconds":-5,"report_quiet_seconds":1e300}"#,
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&rec, edited).unwrap();
    let (ok, md, err) = run(&["report", rec_s]);
    assert!(ok, "{err}");
    assert!(r1_row(&md).contains("(+7s) →"), "the default 1 s: {md}");
}
