//! A recording made before a node's facts were parts (format 1, rwtop at `4edd55a`) still
//! replays: every frame opens, every flat fact lands in its part with the same value, the
//! player plays it and the screen draws it. The recording is `rwtop demo --record` of the
//! demo's first four minutes (its rebuilding ALTER among them), gzipped.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rwtop::record::{Player, Recording, Speed};
use rwtop::store::{NodeView, Snapshot};
use rwtop::ui::{RenderCtx, Theme, UiState};
use serde_json::Value;

const FIXTURE: &str = "tests/fixtures/recordings/demo-4edd55a.jsonl.gz";

/// The fixture unpacked into `dir` (with Debian's gzip, which every system has).
fn unpacked(dir: &Path) -> PathBuf {
    let out = std::process::Command::new("gzip")
        .args(["-dc", FIXTURE])
        .output()
        .expect("running gzip -dc: install gzip");
    assert!(out.status.success(), "gzip -dc {FIXTURE}: {:?}", out.status);
    let path = dir.join("demo-4edd55a.jsonl");
    std::fs::write(&path, out.stdout).expect("writing the unpacked recording");
    path
}

/// Each frame's nodes as the file holds them (format 1's flat objects), by frame.
fn raw_nodes(path: &Path) -> Vec<Vec<Value>> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .expect("reading the recording");
    text.lines()
        .skip(1)
        .map(|line| {
            let frame: Value = serde_json::from_str(line).expect("a frame is JSON");
            frame["snapshot"]["nodes"]
                .as_array()
                .expect("a frame's nodes")
                .clone()
        })
        .collect()
}

fn json<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).expect("serializing")
}

/// `raw`'s key, absent as null.
fn field(raw: &Value, key: &str) -> Value {
    raw.get(key).cloned().unwrap_or(Value::Null)
}

/// An absent or empty list as format 1 wrote it (it left empty lists out).
fn list(raw: &Value, key: &str) -> Value {
    match raw.get(key) {
        None | Some(Value::Null) => Value::Array(Vec::new()),
        Some(v) => v.clone(),
    }
}

/// Every flat fact of `raw` against the part that holds it now.
fn same_facts(raw: &Value, node: &NodeView, frame: usize) {
    let at = format!("frame {frame}, {}", node.name);
    assert_eq!(
        field(raw, "flavor"),
        json(node.identity.flavor_name()),
        "{at}: flavor"
    );
    assert_eq!(
        field(raw, "version"),
        json(node.identity.version()),
        "{at}: version"
    );
    assert_eq!(
        field(raw, "server_id"),
        json(node.identity.server_id),
        "{at}: server id"
    );
    assert_eq!(
        field(raw, "clock_offset_ms"),
        json(node.clock.map(|c| c.offset_ms)),
        "{at}: clock"
    );
    assert_eq!(
        field(raw, "read_only"),
        json(node.read_only()),
        "{at}: read_only"
    );
    assert_eq!(field(raw, "gtid"), json(node.gtid()), "{at}: gtid");
    assert_eq!(
        field(raw, "processes"),
        json(node.scan().map(|s| s.value.summary)),
        "{at}: processes"
    );
    assert_eq!(list(raw, "ddl"), json(node.ddl()), "{at}: ddl");
    // Format 1 called a down node's scan fresh when its last sample carried one; a down node
    // has no live parts now, and no fresh scan to judge.
    assert_eq!(
        field(raw, "processes_fresh").as_bool().unwrap_or(false) && node.answers(),
        node.fresh_scan().is_some(),
        "{at}: the scan's freshness"
    );
    assert_eq!(list(raw, "osc"), json(node.osc()), "{at}: osc");
    assert_eq!(
        field(raw, "settings"),
        json(node.settings()),
        "{at}: settings"
    );
    assert_eq!(
        field(raw, "binlog_head"),
        json(&node.binlog().head),
        "{at}: binlog head"
    );
    assert_eq!(
        list(raw, "binlog_files"),
        json(&node.binlog().files),
        "{at}: binlog files"
    );
    assert_eq!(
        field(raw, "binlog_rate"),
        json(node.binlog().rate),
        "{at}: binlog rate"
    );
    assert_eq!(
        field(raw, "semisync"),
        json(node.semisync()),
        "{at}: semi-sync"
    );
    assert_eq!(field(raw, "disks"), json(node.disks()), "{at}: disks");
    assert_eq!(
        field(raw, "sample_seq"),
        json(node.sample_seq),
        "{at}: sample"
    );
    let channels = raw
        .get("channels")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    assert_eq!(channels, node.channels.len(), "{at}: channels");
}

fn screen(snapshot: &Snapshot) -> String {
    let theme = Theme::plain();
    let state = UiState::default();
    let mut terminal = Terminal::new(TestBackend::new(160, 45)).expect("test terminal");
    terminal
        .draw(|f| {
            rwtop::ui::render::render(
                f,
                &RenderCtx {
                    snapshot,
                    state: &state,
                    theme: &theme,
                },
            );
        })
        .expect("drawing");
    let buffer = terminal.backend().buffer().clone();
    let width = usize::from(buffer.area.width);
    buffer
        .content
        .chunks(width)
        .map(|row| {
            row.iter()
                .map(ratatui::buffer::Cell::symbol)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_format_1_recording_replays_with_every_fact_in_its_part() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = unpacked(dir.path());
    let raw = raw_nodes(&path);
    let recording = Recording::open(&path).expect("opening the format 1 recording");
    assert_eq!(
        recording.header().rwtop_recording,
        1,
        "the fixture's format"
    );
    assert_eq!(recording.len(), raw.len(), "every frame read");
    assert!(recording.cut_short().is_none(), "no frame damaged");

    // What the demo's first minutes hold, so that each comparison below compares something.
    let (mut ddl_frames, mut stale_scans, mut binlogs, mut down) = (0, 0, 0, 0);
    for (i, raw_nodes) in raw.iter().enumerate() {
        let snapshot = recording.frame(i).expect("every frame rebuilt");
        assert_eq!(snapshot.nodes.len(), raw_nodes.len(), "frame {i}: nodes");
        for (raw_node, node) in raw_nodes.iter().zip(&snapshot.nodes) {
            same_facts(raw_node, node, i);
            ddl_frames += usize::from(!node.ddl().is_empty());
            stale_scans += usize::from(node.scan().is_some() && node.fresh_scan().is_none());
            binlogs += usize::from(!node.binlog().files.is_empty());
            down += usize::from(!node.answers());
        }
    }
    assert!(ddl_frames > 20, "the ALTER's scans: {ddl_frames}");
    assert!(
        stale_scans > 20,
        "scans older than their sample: {stale_scans}"
    );
    assert!(binlogs > 100, "binlog lists: {binlogs}");
    println!(
        "{} frames: {ddl_frames} node-frames with a DDL, {stale_scans} stale scans, {binlogs} binlog lists, {down} down",
        raw.len()
    );

    // The player plays it, and the screen draws what it shows: the flavor, the replicas.
    let t0 = Instant::now();
    let mut player = Player::new(recording, Speed::NORMAL, t0);
    player.update(t0 + Duration::from_secs(200));
    assert!(player.index() > 150, "played to frame {}", player.index());
    let text = screen(player.current());
    assert!(text.contains("MariaDB 10.11"), "{text}");
    for name in ["r1", "r2", "c1", "agg"] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
}

#[test]
fn todays_format_reads_back_as_written() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = unpacked(dir.path());
    let recording = Recording::open(&path).expect("opening");
    // A frame with a DDL running: every part is populated somewhere in it.
    let snapshot = (0..recording.len())
        .filter_map(|i| recording.frame(i))
        .find(|s| s.nodes.iter().any(|n| !n.ddl().is_empty()))
        .expect("a frame with a DDL");
    let written = json(&snapshot.nodes);
    let read: Vec<NodeView> = serde_json::from_value(written.clone()).expect("reading back");
    assert_eq!(json(&read), written);
    // Written in parts, not flat.
    assert!(written[0].get("live").is_some(), "{:?}", written[0]);
    assert!(written[0].get("gtid").is_none(), "{:?}", written[0]);
}
