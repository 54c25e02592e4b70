//! A replica fed by two roots, one channel broken: the tree, the table and the detail pane show
//! each channel on its own. No recording holds this shape yet, so the snapshot is built with
//! `rwtop::store::testkit` and judged by the alert engine.

use insta::assert_snapshot;
use rwtop::alerts::{AlertEngine, AlertSettings};
use rwtop::mysql::{IoRunning, ThreadError};
use rwtop::store::Snapshot;
use rwtop::store::lag::Lag;
use rwtop::store::testkit::Topo;

use super::{assert_has, draw, full_screen, pane_words, row_in_pane, rows, screen_text, selecting};

/// Two roots, `db1` and `p2`, feeding `agg`: the default channel from `db1` healthy, channel `p2`
/// unable to connect (IO `Connecting`, error 2003) as a stopped second source leaves it; the
/// alerts as the engine judges five such samples.
fn multi_source_broken_channel() -> Snapshot {
    let mut topo = Topo::new();
    topo.add_primary("p2", 4);
    topo.add_replica("agg", "db1", 5);
    topo.add_channel("agg", "p2", "p2");
    topo.channel_mut("agg", "p2", |r| {
        r.io_running = IoRunning::Connecting;
        r.io_state = "Reconnecting after a failed master event read".into();
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::Unknown {
            reason: "the IO thread is not connected".into(),
        };
        r.gtid_backlog.not_received = None;
        r.windows.iter_mut().for_each(|(_, stats)| *stats = None);
        r.catch_up = rwtop::store::apply_rate::CatchUp::default();
        r.last_io_error = Some(ThreadError {
            errno: 2003,
            message: "error reconnecting to master 'rwtop@127.0.0.1:24002' - retry-time: 1  \
                      maximum-retries: 100000  message: Can't connect to server on '127.0.0.1' \
                      (111 \"Connection refused\")"
                .into(),
            timestamp: None,
        });
    });
    let mut engine = AlertEngine::new(AlertSettings::default());
    for step in 1..5 {
        engine.evaluate(&topo.at(step));
    }
    let mut snapshot = topo.at(5);
    snapshot.alerts = engine.evaluate(&snapshot);
    snapshot
}

#[test]
fn multi_source_replica_shows_every_channel_with_the_broken_one_named() {
    // Beside the other screens, in `tests/snapshots/`.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    let _beside = settings.bind_to_scope();
    let snapshot = multi_source_broken_channel();
    for (w, h) in [(120, 40), (80, 24)] {
        for (focus, other) in [("agg/p2", "agg"), ("agg", "agg/p2")] {
            let state = selecting(&snapshot, focus);
            let backend = draw(&snapshot, &state, full_screen, w, h);
            let name = focus.replace('/', "_");
            assert_snapshot!(format!("multi_source_{name}_{w}x{h}"), &backend);
            // The tree: both roots, agg under db1 and again, by its channel, under p2.
            let tree = pane_words(&backend, " topology");
            assert_has(&tree, &["● db1", "● p2", "└──● agg", "└╌╳● agg/p2"]);
            // The table: a row per channel, each with its own threads and lag.
            let (y, _) = row_in_pane(&backend, " replicas", "● agg/p2");
            let p2_row = rows(&backend)[usize::from(y)].clone();
            assert_has(&p2_row, &["Conn/Yes", "NULL"]);
            let (y, _) = row_in_pane(&backend, " replicas", "● agg ");
            let agg_row = rows(&backend)[usize::from(y)].clone();
            assert_has(&agg_row, &["Yes/Yes", "0.12s"]);
            // The detail: the selected channel by name, and a line for the other one.
            let source = if focus == "agg" { "db1" } else { "p2" };
            let detail = pane_words(&backend, &format!(" {focus} ← {source} "));
            assert_has(&detail, &[&format!("also {other} ←")]);
            assert_has(&screen_text(&backend), &["agg/p2"]);
        }
    }
    // The alert names the channel, and agg's default channel raises nothing.
    let active: Vec<String> = snapshot
        .alerts
        .active
        .iter()
        .filter_map(rwtop::alerts::Alert::place)
        .collect();
    assert!(active.iter().any(|p| p == "agg/p2"), "{active:?}");
    assert!(!active.iter().any(|p| p == "agg"), "{active:?}");
    let backend = draw(
        &snapshot,
        &selecting(&snapshot, "agg"),
        full_screen,
        120,
        40,
    );
    assert_has(
        &pane_words(&backend, " alerts"),
        &["io_thread_stopped agg/p2"],
    );
}
