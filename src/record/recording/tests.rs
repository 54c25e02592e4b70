//! The recording's own tests: frames, charts per channel, older recordings, damaged files.
use std::fmt::Write as _;
use std::io::Write;

use super::*;
use crate::record::Recorder;
use crate::store::testkit::Topo;

fn point(at_ms: u64, lag: u32) -> Point {
    Point {
        at_ms,
        heartbeat_lag_ms: Some(lag),
        sbm_s: Some(lag / 1000),
    }
}

/// `n` frames of a healthy topology one second apart, r1's chart a sliding window of the
/// last three points, r2's growing.
pub(crate) fn frames(n: u64) -> Vec<Snapshot> {
    let topo = Topo::new();
    (0..n)
        .map(|step| {
            let mut s = topo.at(step);
            let all: Vec<Point> = (0..=step)
                .map(|i| point(i * 1000, 10 * u32::try_from(i).unwrap()))
                .collect();
            let window = all.len().saturating_sub(3);
            for node in &mut s.nodes {
                let is_r1 = node.name == "r1";
                if let Some(r) = node.replica_mut() {
                    r.series = if is_r1 {
                        (&all[window..]).into()
                    } else {
                        all.as_slice().into()
                    };
                }
            }
            s
        })
        .collect()
}

fn record(dir: &Path, snapshots: &[Snapshot]) -> PathBuf {
    let path = dir.join("r.jsonl");
    let mut recorder = Recorder::create(&path).unwrap();
    for s in snapshots {
        recorder.write(s).unwrap();
    }
    path
}

fn json(s: &Snapshot) -> serde_json::Value {
    serde_json::to_value(s).unwrap()
}

#[test]
fn frames_come_back_whole_with_their_series_and_by_time() {
    let dir = tempfile::tempdir().unwrap();
    let live = frames(6);
    let path = record(dir.path(), &live);
    let recording = Recording::open(&path).unwrap();
    assert_eq!(recording.len(), 6);
    assert_eq!(recording.cut_short(), None);
    assert_eq!(recording.header().rwtop_recording, FORMAT_VERSION);
    for (i, s) in live.iter().enumerate() {
        assert_eq!(json(&recording.frame(i).unwrap()), json(s), "frame {i}");
    }
    assert_eq!(recording.duration(), Duration::from_secs(5));
    assert_eq!(recording.index_at(Duration::from_millis(2_999)), 2);
    assert_eq!(recording.index_at(Duration::from_secs(3)), 3);
    assert_eq!(recording.index_at(Duration::from_secs(60)), 5);
    assert!(recording.frame(6).is_none());
    // Only new points are written: the sixth frame carries one point per replica.
    let text = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["charts"]["r1"]["len"], 3);
    assert_eq!(last["charts"]["r2"]["len"], 6);
    assert_eq!(
        last["charts"]["r2"]["new_points"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        last["snapshot"]["nodes"][1]["channels"][0]["series"],
        serde_json::json!([])
    );
}

/// [`frames`] with a second channel `p2` on r2, its chart the first one's lags doubled.
fn two_channel_frames(n: u64) -> Vec<Snapshot> {
    frames(n)
        .into_iter()
        .map(|mut s| {
            let r2 = s.nodes.iter_mut().find(|n| n.name == "r2").unwrap();
            let mut second = r2.channels[0].clone();
            second.channel = "p2".to_owned();
            let doubled: Vec<Point> = second
                .series
                .iter()
                .map(|p| point(p.at_ms, 2 * p.heartbeat_lag_ms.unwrap()))
                .collect();
            second.series = doubled.into();
            r2.channels.push(second);
            s
        })
        .collect()
}

#[test]
fn every_channel_keeps_its_own_chart() {
    let dir = tempfile::tempdir().unwrap();
    let live = two_channel_frames(4);
    let path = record(dir.path(), &live);
    let recording = Recording::open(&path).unwrap();
    for (i, s) in live.iter().enumerate() {
        assert_eq!(json(&recording.frame(i).unwrap()), json(s), "frame {i}");
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["charts"]["r2/p2"]["len"], 4);
    assert_eq!(
        last["charts"]["r2/p2"]["new_points"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        last["snapshot"]["nodes"][2]["channels"][1]["series"],
        serde_json::json!([])
    );
}

#[test]
fn a_second_channel_recorded_inline_still_replays() {
    // As rwtop recorded before every channel had a chart: the second channel's whole series
    // in the snapshot, no chart for it.
    let dir = tempfile::tempdir().unwrap();
    let live = two_channel_frames(3);
    let path = record(dir.path(), &live);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for (line, s) in lines.zip(&live) {
        let mut frame: serde_json::Value = serde_json::from_str(line).unwrap();
        frame["charts"].as_object_mut().unwrap().remove("r2/p2");
        frame["snapshot"]["nodes"][2]["channels"][1]["series"] =
            json(s)["nodes"][2]["channels"][1]["series"].clone();
        writeln!(out, "{frame}").unwrap();
    }
    std::fs::write(&path, out).unwrap();
    let recording = Recording::open(&path).unwrap();
    for (i, s) in live.iter().enumerate() {
        assert_eq!(json(&recording.frame(i).unwrap()), json(s), "frame {i}");
    }
}

#[test]
fn a_last_line_cut_short_is_left_out_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = record(dir.path(), &frames(3));
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = &text[..text.len() - 200];
    std::fs::write(&path, cut).unwrap();
    let recording = Recording::open(&path).unwrap();
    assert_eq!((recording.len(), recording.cut_short()), (2, Some(4)));
    let warning = recording.warning().unwrap();
    assert!(
        warning.contains("r.jsonl line 4 was cut short") && warning.contains("2 frames"),
        "{warning}"
    );
}

#[test]
fn a_damaged_line_in_the_middle_names_file_line_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = record(dir.path(), &frames(4));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = &lines[2][..100];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let err = Recording::open(&path).unwrap_err().to_string();
    assert!(
        err.contains("r.jsonl line 3: damaged frame") && err.contains("head -n 2"),
        "{err}"
    );
}

#[test]
fn files_that_are_not_recordings_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    let open = |content: &[u8]| {
        std::fs::File::create(&path)
            .unwrap()
            .write_all(content)
            .unwrap();
        Recording::open(&path).unwrap_err().to_string()
    };
    let err = open(b"");
    assert!(
        err.contains("x.jsonl is empty: not an rwtop recording"),
        "{err}"
    );
    let err = open(b"{\"version\": \"1.2\", \"nodes\": []}\n");
    assert!(
        err.contains("line 1: not an rwtop recording") && err.contains("--record"),
        "{err}"
    );
    let err = open(b"\x89PNG\r\n\x1a\n\0\0");
    assert!(err.contains("line 1: not an rwtop recording"), "{err}");
    let err = open(b"{\"rwtop_recording\": 9, \"rwtop_version\": \"9.0.0\"}\n");
    assert!(
        err.contains("recording format 9, made by rwtop 9.0.0")
            && err.contains("replay it with rwtop 9.0.0"),
        "{err}"
    );
    let header = serde_json::to_string(&Header::new(chrono::Utc::now())).unwrap();
    let err = open(format!("{header}\n").as_bytes());
    assert!(err.contains("holds a header but no frame"), "{err}");
    let err = Recording::open(&dir.path().join("missing.jsonl"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot read") && err.contains("missing.jsonl"),
        "{err}"
    );
}
