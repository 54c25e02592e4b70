//! The alerts pane drawn into a test backend: order, wrapping, crowding, incidents.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::*;
use crate::alerts::{AlertEngine, AlertKind, AlertSettings, AlertsView};
use crate::store::Snapshot;
use crate::store::testkit::Topo;
use crate::ui::UiState;

fn draw(snapshot: &Snapshot, width: u16, height: u16) -> Buffer {
    super::super::header::tests::draw(render, snapshot, &UiState::default(), width, height)
}

use super::super::header::tests::buffer_text as text;

/// Row, then column, of the first cell where `needle` starts: compares in reading order.
fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    super::super::header::tests::find(buf, needle).map(|(x, y)| (y, x))
}

fn fg_at(buf: &Buffer, needle: &str) -> Option<Color> {
    let (y, x) = find(buf, needle)?;
    buf.cell((x, y)).map(|c| c.fg)
}

fn alert(kind: AlertKind, node: &str, age_s: i64, snapshot: &Snapshot) -> Alert {
    Alert {
        kind,
        node: Some(node.to_owned()),
        channel: None,
        severity: kind.severity(),
        since: snapshot.taken_at - chrono::Duration::seconds(age_s),
        last_seen: snapshot.taken_at,
        count: 5,
        evidence: Vec::new(),
        cause: String::new(),
        membership: crate::alerts::Membership::default(),
    }
}

fn entry(
    snapshot: &Snapshot,
    ago_s: i64,
    raised: bool,
    kind: AlertKind,
    summary: &str,
) -> LogEntry {
    LogEntry {
        at: snapshot.taken_at - chrono::Duration::seconds(ago_s),
        raised,
        kind,
        node: Some("r1".to_owned()),
        channel: None,
        summary: summary.to_owned(),
    }
}

/// A warning listed before a critical (the pane must not trust the order), and a log.
fn busy() -> Snapshot {
    let mut snapshot = Topo::new().snapshot;
    let mut backlog = alert(AlertKind::GtidBacklogHigh, "r2", 40, &snapshot);
    backlog.cause = "the applier is slower than the primary's write rate".to_owned();
    backlog.evidence = vec![("backlog".to_owned(), "1200 trx".to_owned())];
    let mut sbm = alert(AlertKind::SbmUnderstatesLag, "r1", 125, &snapshot);
    sbm.cause = "the IO thread is stalled: SBM only counts relay-log events".to_owned();
    sbm.evidence = vec![
        ("sbm".to_owned(), "0s".to_owned()),
        ("heartbeat_lag".to_owned(), "12.40s".to_owned()),
        (
            "io_state".to_owned(),
            "Waiting for source to send event".to_owned(),
        ),
    ];
    let log = vec![
        entry(
            &snapshot,
            40,
            true,
            AlertKind::GtidBacklogHigh,
            "gtid_backlog_high on r2: slow applier",
        ),
        entry(
            &snapshot,
            125,
            true,
            AlertKind::SbmUnderstatesLag,
            "sbm_understates_lag on r1: IO stalled",
        ),
        entry(
            &snapshot,
            600,
            false,
            AlertKind::NodeDown,
            "node_down on r1 cleared after 3 clean samples",
        ),
    ];
    snapshot.alerts = AlertsView {
        active: vec![backlog, sbm],
        incidents: Vec::new(),
        log: log.into(),
    };
    snapshot
}

#[test]
fn critical_comes_first_with_age_cause_and_evidence_then_the_log() {
    let buf = draw(&busy(), 80, 20);
    let all = text(&buf);
    assert!(all.contains(" alerts · 2 active "), "{all}");
    assert!(
        all.contains("◆ CRIT sbm_understates_lag r1 for 2m05s"),
        "{all}"
    );
    assert!(all.contains("◇ WARN gtid_backlog_high r2 for 40s"), "{all}");
    assert!(find(&buf, "◆ CRIT") < find(&buf, "◇ WARN"), "{all}");
    assert!(
        all.contains("  the IO thread is stalled: SBM only counts relay-log events"),
        "{all}"
    );
    assert!(
        all.contains("  sbm=0s heartbeat_lag=12.40s io_state=Waiting for source to send event"),
        "{all}"
    );
    assert!(all.contains("── log, newest first (UTC) ──"), "{all}");
    // 1_700_000_000 is 22:13:20 UTC.
    let raised = find(
        &buf,
        "22:12:40 ▲ raised  gtid_backlog_high on r2: slow applier",
    );
    let older = find(&buf, "22:11:15 ▲ raised  sbm_understates_lag on r1");
    let cleared = find(&buf, "22:03:20 ▼ cleared node_down on r1");
    assert!(
        raised.is_some() && older.is_some() && cleared.is_some(),
        "{all}"
    );
    assert!(raised < older && older < cleared, "newest first: {all}");
    // Colour backs up the glyphs, never replaces them.
    let theme = Theme::builtin();
    assert_eq!(fg_at(&buf, "◆ CRIT"), theme.critical.fg);
    assert_eq!(fg_at(&buf, "◇ WARN"), theme.warning.fg);
    assert_eq!(fg_at(&buf, "▼ cleared"), theme.ok.fg);
}

#[test]
fn evidence_wraps_by_pairs_in_a_narrow_pane() {
    let buf = draw(&busy(), 32, 24);
    let all = text(&buf);
    // Each pair stays on one line; the pane is 30 wide inside.
    assert!(all.contains("  sbm=0s heartbeat_lag=12.40s"), "{all}");
    assert!(all.contains("  io_state=Waiting"), "{all}");
    assert!(all.contains("◆ CRIT sbm_understates_lag r1"), "{all}");
    assert!(all.contains("  for 2m05s"), "header wraps, indented: {all}");
}

#[test]
fn nothing_active_is_calm_and_the_log_follows() {
    let mut snapshot = busy();
    snapshot.alerts.active.clear();
    let buf = draw(&snapshot, 48, 8);
    let all = text(&buf);
    assert!(all.contains(" alerts ─"), "{all}");
    assert!(all.contains("✓ no active alerts"), "{all}");
    assert_eq!(fg_at(&buf, "✓ no active"), Theme::builtin().ok.fg);
    assert!(all.contains("22:12:40 ▲ raised"), "{all}");
    snapshot.alerts.log = std::sync::Arc::default();
    let all = text(&draw(&snapshot, 48, 8));
    assert!(
        all.contains("✓ no active alerts") && all.contains("no alerts raised yet"),
        "{all}"
    );
}

#[test]
fn crowded_pane_keeps_a_line_for_every_active_alert() {
    let mut snapshot = busy();
    // 6 rows inside: both alerts cannot have their full blocks, both keep their header.
    let buf = draw(&snapshot, 40, 8);
    let all = text(&buf);
    assert!(all.contains("◆ CRIT") && all.contains("◇ WARN"), "{all}");
    assert!(
        !all.contains("log, newest"),
        "active alerts before the log: {all}"
    );
    // More alerts than rows: the headers that fit and a count of the rest.
    let extra = alert(AlertKind::NodeDown, "r3", 5, &snapshot);
    snapshot.alerts.active.extend(std::iter::repeat_n(extra, 6));
    let all = text(&draw(&snapshot, 40, 6));
    assert!(all.contains("+5 more active"), "{all}");
}

#[test]
fn alerts_from_the_engine_render() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| r.sql_running = false);
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    let mut snapshot = topo.at(2);
    snapshot.alerts = engine.evaluate(&snapshot);
    let all = text(&draw(&snapshot, 60, 14));
    assert!(all.contains("◆ CRIT sql_thread_stopped r1 for 1s"), "{all}");
    assert!(all.contains("▲ raised  sql_thread_stopped on r1"), "{all}");
}

#[test]
fn any_size_renders_without_panicking() {
    let snapshot = busy();
    for width in 1..=30 {
        for height in 1..=8 {
            draw(&snapshot, width, height);
        }
    }
    for (width, height) in [(48, 12), (32, 11), (120, 30)] {
        let all = text(&draw(&snapshot, width, height));
        assert!(all.contains("◆ CRIT"), "{width}×{height}: {all}");
    }
}

pub(crate) use crate::alerts::testkit::io_stop_incident;

#[test]
fn an_incident_shows_its_cause_with_the_symptoms_folded_and_e_unfolds_them() {
    let snapshot = io_stop_incident();
    let all = text(&draw(&snapshot, 80, 16));
    assert!(all.contains(" alerts · 2 in 1 incident "), "{all}");
    assert!(all.contains("◆ CRIT io_thread_stopped r1 for 1s"), "{all}");
    assert!(
        all.contains("  ▸ 1 symptom folded: sbm_understates_lag c1 (inherited) (e unfolds)"),
        "{all}"
    );
    assert!(!all.contains("CRIT sbm_understates_lag"), "{all}");
    assert!(!all.contains("event timestamps"), "{all}");

    let mut state = UiState::default();
    state.panes.expand_incidents = true;
    let buf = super::super::header::tests::draw(render, &snapshot, &state, 80, 16);
    let all = text(&buf);
    assert!(
        all.contains("  ▾ ◇ WARN sbm_understates_lag c1 inherited for 1s"),
        "{all}"
    );
    assert!(
        all.contains("    c1: behind because r1 stopped receiving"),
        "{all}"
    );
    assert!(!all.contains("▸ 1 symptom"), "{all}");
}

#[test]
fn a_recovering_incident_says_so() {
    let mut snapshot = io_stop_incident();
    snapshot.alerts.incidents[0].recovering = true;
    let all = text(&draw(&snapshot, 80, 16));
    assert!(
        all.contains("◆ CRIT io_thread_stopped r1 recovering for 1s"),
        "{all}"
    );
}
