//! Record and replay against a real sandbox: a scenario recorded from a live engine replays to
//! the same snapshots and the same panels; bad files and flags fail with clear messages.
//!
//! The live scenario's times and lags differ from run to run, so its check compares the live
//! screen with the replayed one rather than an insta file; the insta snapshot below is of a
//! recording made from a fixed, recorded snapshot (`tests/ui_snapshots/sql_stopped.json`), with
//! the replay's footer.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Load, TestSandbox, engine_spec, exact, rwtop, until};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;
use rwtop::record::{FORMAT_VERSION, Player, Recorder, Recording, Speed, Summary};
use rwtop::store::{Role, Snapshot};
use rwtop::ui::keys::KeyMap;
use rwtop::ui::{RenderCtx, Theme, UiState};

const DEADLINE: Duration = Duration::from_secs(90);
const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

fn sql_alert(s: &Snapshot) -> bool {
    s.alerts
        .active
        .iter()
        .any(|a| a.kind == AlertKind::SqlThreadStopped && a.node.as_deref() == Some("r1"))
}

fn json(s: &Snapshot) -> serde_json::Value {
    serde_json::to_value(s).expect("a snapshot serializes")
}

/// The UI state with `r1` selected (its chart and detail in view).
fn on_r1(snapshot: &Snapshot) -> UiState {
    let selected = UiState::default()
        .rows(snapshot)
        .iter()
        .position(|r| r.node.name == "r1")
        .expect("r1 in the snapshot");
    UiState {
        selected,
        ..UiState::default()
    }
}

fn draw(snapshot: &Snapshot, state: &UiState, (w, h): (u16, u16)) -> Buffer {
    let theme = Theme::plain();
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    terminal
        .draw(|f| {
            rwtop::ui::render::render(
                f,
                &RenderCtx {
                    snapshot,
                    state,
                    theme: &theme,
                },
            );
        })
        .expect("drawing");
    terminal.backend().buffer().clone()
}

fn rows(buffer: &Buffer) -> Vec<String> {
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer.cell((x, y)).map_or(" ", |c| c.symbol()))
                .collect()
        })
        .collect()
}

/// Frame count and times: one a second at most, every second something changed.
fn check_frames(recording: &Recording, summary: &Summary, path: &Path, elapsed: Duration) {
    assert_eq!(recording.header().rwtop_recording, FORMAT_VERSION);
    assert_eq!(recording.cut_short(), None);
    assert_eq!(
        u64::try_from(recording.len()).unwrap(),
        summary.frames,
        "{summary:?}"
    );
    assert_eq!(std::fs::metadata(path).unwrap().len(), summary.bytes);
    let frames = recording.len();
    assert!(frames >= 6, "{frames} frames in {elapsed:?}");
    assert!(
        frames <= usize::try_from(elapsed.as_secs()).unwrap() + 2,
        "{frames} frames in {elapsed:?}: more than one a second"
    );
    for i in 1..frames {
        // Frames are written a second apart at least (counted above); the snapshots in them
        // carry the store's own times, which only move forward.
        assert!(recording.offset(i) > recording.offset(i - 1), "frame {i}");
        assert_eq!(recording.index_at(recording.offset(i)), i);
    }
    let per_frame = summary.bytes / summary.frames;
    eprintln!(
        "{} frames, {} bytes, {per_frame} bytes a frame, {} KiB an hour at one frame a second",
        summary.frames,
        summary.bytes,
        per_frame * 3_600 / 1_024
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_scenario_replays_to_the_same_snapshots_and_panels() {
    let t = TestSandbox::start(2, false);
    let engine = Engine::start(&engine_spec(
        &t,
        &[
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ],
    ));
    let _load = Load::start(&t).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sql_stopped.jsonl");
    let recorder = Recorder::create(&path).expect("creating the recording");
    let recording = tokio::spawn(recorder.run(engine.snapshots()));
    let started = Instant::now();
    // What the engine publishes last is what the recording must end with.
    let last_published = engine.snapshots();

    until(&engine, "both replicas caught up", DEADLINE, |s| {
        ["r1", "r2"]
            .iter()
            .all(|r| exact(s, r).is_some_and(|l| l < Duration::from_secs(1)))
            .then_some(())
    })
    .await;
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    until(
        &engine,
        "r1's alert raised and its lag past 5 s",
        DEADLINE,
        |s| {
            (sql_alert(s) && exact(s, "r1").is_some_and(|l| l >= Duration::from_secs(5)))
                .then_some(())
        },
    )
    .await;
    engine.shutdown().await;
    let summary = recording
        .await
        .expect("the recorder task")
        .expect("recording without error");
    let elapsed = started.elapsed();
    let live = last_published.borrow().clone();

    let recording = Recording::open(&path).expect("opening the recording");
    check_frames(&recording, &summary, &path, elapsed);
    let frames = recording.len();

    // The scenario is in the recording: healthy first, then the alert.
    let first = recording.frame(0).unwrap();
    assert!(!sql_alert(&first));
    let raised = (0..frames)
        .find(|i| sql_alert(&recording.frame(*i).unwrap()))
        .expect("a frame with r1's sql_thread_stopped alert");
    assert!(raised > 0);

    // The last frame is the last live snapshot, series and all.
    let replayed = recording.frame(frames - 1).unwrap();
    assert_eq!(json(&replayed), json(&live));
    let series = |s: &Snapshot| s.node("r1").unwrap().replica().unwrap().series.clone();
    assert!(series(&live).len() >= frames / 2, "a chart worth checking");
    assert_eq!(series(&replayed), series(&live));

    // And draws the same panels, at every size.
    let state = on_r1(&live);
    for size in SIZES {
        assert_eq!(
            draw(&replayed, &state, size),
            draw(&live, &state, size),
            "{size:?}"
        );
    }
    // As the player shows it: played to the end, paused there, the replay in the footer.
    let t0 = Instant::now();
    let mut player = Player::new(recording, Speed::NORMAL, t0);
    player.update(t0 + elapsed + Duration::from_secs(60));
    let status = player.status();
    assert!(status.paused && status.at_end, "{status:?}");
    let state = UiState {
        keys: KeyMap::default().for_replay(),
        replay: Some(status),
        ..on_r1(&live)
    };
    let screen = rows(&draw(player.current(), &state, (120, 40)));
    let live_screen = rows(&draw(&live, &on_r1(&live), (120, 40)));
    assert_eq!(screen[..39], live_screen[..39], "all but the footer");
    let footer = &screen[39];
    assert!(
        footer.starts_with(" REPLAY ") && footer.contains("×1 end"),
        "{footer}"
    );
}

/// A recording made from a fixed snapshot: `n` frames a second apart.
fn fixed_recording(dir: &Path, n: u32) -> PathBuf {
    let path = dir.join("fixed.jsonl");
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ui_snapshots/sql_stopped.json"),
    )
    .expect("tests/ui_snapshots/sql_stopped.json");
    let base: Snapshot = serde_json::from_str(&text).expect("a recorded snapshot");
    let mut recorder = Recorder::create(&path).expect("creating the recording");
    for i in 0..n {
        let mut s = base.clone();
        s.uptime += Duration::from_secs(i.into());
        s.taken_at += chrono::Duration::seconds(i.into());
        recorder.write(&s).expect("writing a frame");
    }
    path
}

#[test]
fn a_replayed_frame_with_its_footer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let recording = Recording::open(&fixed_recording(dir.path(), 300)).expect("opening");
    let t0 = Instant::now();
    let mut player = Player::new(recording, "2".parse().unwrap(), t0);
    player.update(t0 + Duration::from_secs(21));
    player.toggle_pause(t0 + Duration::from_secs(21));
    assert_eq!(player.index(), 42);
    let state = UiState {
        keys: KeyMap::default().for_replay(),
        replay: Some(player.status()),
        ..on_r1(player.current())
    };
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("test terminal");
    let theme = Theme::plain();
    terminal
        .draw(|f| {
            rwtop::ui::render::render(
                f,
                &RenderCtx {
                    snapshot: player.current(),
                    state: &state,
                    theme: &theme,
                },
            );
        })
        .expect("drawing");
    insta::assert_snapshot!("replay_sql_stopped_120x40", terminal.backend());
    let footer = rows(terminal.backend().buffer()).pop().unwrap();
    assert!(
        footer.contains("(42s / 4m59s) ×2 paused") && footer.contains("space  pause"),
        "{footer}"
    );
}

/// rwtop's exit code and standard error, run with a password and no terminal.
fn run(args: &[&str]) -> (i32, String) {
    let out = rwtop(args, &[("RWTOP_PASSWORD", Some("x")), ("TERM", None)]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_recordings_and_flags_say_what_and_how_to_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.jsonl");
    let (code, err) = run(&["replay", missing.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cannot read") && err.contains("missing.jsonl") && !err.contains("panicked"),
        "{err}"
    );
    let json = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ui_snapshots/healthy.json");
    let (code, err) = run(&["replay", json.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("healthy.json line 1: not an rwtop recording")
            && err.contains("rwtop --record FILE"),
        "{err}"
    );
    let (code, err) = run(&["replay", "x.jsonl", "--speed", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("from 0.1 to 100"), "{err}");
    let (code, err) = run(&["snapshot", "--record", "x.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--record works with the live view"), "{err}");
    // A path that cannot be written stops rwtop before it connects or takes the terminal.
    let (code, err) = run(&[
        "--primary",
        "mysql://u@127.0.0.1:1",
        "--record",
        "/nonexistent-folder/x.jsonl",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cannot create the recording /nonexistent-folder/x.jsonl")
            && err.contains("give --record another path"),
        "{err}"
    );
}
