//! `rwtop whatif` on bad input, through the binary: a recording too short or without lag says
//! what it needs and which replicas had none; a bad flag names the flag and the fix; never a
//! panic.

mod common;

use std::path::{Path, PathBuf};

use common::rwtop;
use rwtop::record::Recorder;
use rwtop::store::Snapshot;

/// A recording of one frame: a recorded snapshot (30 s of series on r1 and r2), changed by
/// `edit`.
fn recording(dir: &Path, name: &str, edit: impl Fn(&mut Snapshot)) -> PathBuf {
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ui_snapshots/sql_stopped.json");
    let text = std::fs::read_to_string(fixture).expect("the fixture");
    let mut snapshot: Snapshot = serde_json::from_str(&text).expect("a snapshot");
    edit(&mut snapshot);
    let path = dir.join(name);
    let mut recorder = Recorder::create(&path).expect("creating the recording");
    recorder.write(&snapshot).expect("writing a frame");
    drop(recorder);
    path
}

fn run(args: &[&str]) -> (bool, String) {
    let out = rwtop(args, &[("RWTOP_PASSWORD", None)]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.success(), stderr)
}

#[test]
fn a_short_or_lagless_recording_says_what_it_needs() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let short = recording(dir.path(), "short.jsonl", |_| {});
    let file = short.to_str().expect("utf-8");
    let (ok, err) = run(&["whatif", "--recording", file]);
    assert!(!ok, "{err}");
    for needle in [
        "of known heartbeat lag on its best channel (r",
        "needs at least 35s on one channel",
        "record longer",
    ] {
        assert!(err.contains(needle), "{needle:?} in {err}");
    }
    // The shortest horizon needs less: 30 s and a 100 ms setting.
    let (ok, err) = run(&[
        "whatif",
        "--recording",
        file,
        "--settings",
        "none,sleep(100ms)",
    ]);
    assert!(!ok && err.contains("needs at least 30s"), "{err}");

    let lagless = recording(dir.path(), "lagless.jsonl", |s| {
        for node in &mut s.nodes {
            for channel in &mut node.channels {
                let points: Vec<_> = channel
                    .series
                    .iter()
                    .map(|p| rwtop::store::series::Point {
                        heartbeat_lag_ms: None,
                        ..*p
                    })
                    .collect();
                channel.series = points.into();
            }
        }
    });
    let (ok, err) = run(&["whatif", "--recording", lagless.to_str().expect("utf-8")]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("no heartbeat lag on any replica (r1, r2)"),
        "{err}"
    );
    assert!(err.contains("run rwtop with writes allowed"), "{err}");

    let (ok, err) = run(&["whatif", "--recording", "/nonexistent/rec.jsonl"]);
    assert!(!ok && err.contains("/nonexistent/rec.jsonl"), "{err}");
}

#[test]
fn bad_flags_name_the_flag_and_the_fix() {
    for (args, needles) in [
        (
            &["--read-after", "0,soon"][..],
            &["--read-after", "write the delays as e.g. 0,50ms,500ms"][..],
        ),
        (
            &["--max-stale", "0.1"],
            &["--max-stale", "e.g. 0.1% or 80%"],
        ),
        (
            &["--primary-budget", "120%"],
            &["--primary-budget", "0% to 100%"],
        ),
        (
            &["--settings", "causal(1s)"],
            &[
                "--settings",
                "unknown setting \"causal\"",
                "gtid-wait(timeout)",
            ],
        ),
        (
            &["--settings", "sleep"],
            &["--settings", "write e.g. sleep(500ms)"],
        ),
        (&["--reads-per-write", "0"], &["--reads-per-write"]),
        (&["--duration", "forever"], &["--duration"]),
    ] {
        let mut argv = vec!["whatif"];
        argv.extend_from_slice(args);
        let (ok, err) = run(&argv);
        assert!(!ok, "{args:?} was accepted");
        for needle in needles {
            assert!(err.contains(needle), "{args:?}: {needle:?} in {err}");
        }
    }
}
