//! The header drawn whole, and the drawing helpers the other panels' tests share (`draw`,
//! `lines`, the synthetic topologies they start from).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Style;

use super::*;
use crate::store::Snapshot;
use crate::store::lag::Lag;
use crate::store::testkit::{Topo, blocked_ddl, ddl, scan, secs, set_osc};
use crate::ui::{Theme, UiState};

/// Renders one panel over the whole `width`×`height` test terminal.
pub(crate) fn draw(
    panel: fn(&mut Frame, Rect, &RenderCtx<'_>),
    snap: &Snapshot,
    state: &UiState,
    w: u16,
    h: u16,
) -> Buffer {
    let theme = Theme::builtin();
    let ctx = RenderCtx {
        snapshot: snap,
        state,
        theme: &theme,
    };
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| panel(f, f.area(), &ctx)).unwrap();
    terminal.backend().buffer().clone()
}

/// The whole buffer as text, one line per row.
pub(crate) fn buffer_text(buf: &Buffer) -> String {
    lines(buf).join("\n")
}

/// Column and row of the first cell where `needle` starts.
pub(crate) fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    lines(buf).iter().enumerate().find_map(|(y, row)| {
        let col = row.find(needle)?;
        let x = row.get(..col)?.chars().count();
        Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
    })
}

pub(crate) fn lines(buf: &Buffer) -> Vec<String> {
    let width = usize::from(buf.area.width).max(1);
    buf.content
        .chunks(width)
        .map(|row| row.iter().map(ratatui::buffer::Cell::symbol).collect())
        .collect()
}

/// The style where `needle` starts on the first line holding it, without the buffer's
/// explicit resets, so it compares equal to a theme style.
pub(crate) fn style_of(buf: &Buffer, needle: &str) -> Style {
    let all = lines(buf);
    let found = all
        .iter()
        .enumerate()
        .find_map(|(y, l)| Some((y, l, l.find(needle)?)));
    let (y, line, byte) = found.unwrap();
    let x = line.get(..byte).unwrap().chars().count();
    let cell = &buf[(u16::try_from(x).unwrap(), u16::try_from(y).unwrap())];
    let set = |c| Some(c).filter(|c| *c != ratatui::style::Color::Reset);
    Style {
        fg: set(cell.fg),
        bg: set(cell.bg),
        add_modifier: cell.modifier,
        ..Style::new()
    }
}

/// Every `|`-separated needle must be in `text`.
pub(crate) fn has_all(text: &str, needles: &str) {
    for n in needles.split('|') {
        assert!(text.contains(n), "{n} missing:\n{text}");
    }
}

/// The cases the panels must show: a down replica `r2`, a stopped SQL thread with NULL SBM
/// on `r3`, a lower-bound lag on `r4`, DDL on the primary and on `r1`.
pub(crate) fn troubled() -> Snapshot {
    let mut topo = Topo::new();
    topo.add_replica("r3", "r1", 4);
    topo.add_replica("r4", "db1", 5);
    let cause = "refused".to_owned();
    topo.node_mut("r2", |n| {
        n.conn = ConnState::Down {
            next: secs(5.0),
            cause,
        };
    });
    topo.replica_mut("r3", |r| {
        (r.sql_running, r.seconds_behind_source) = (false, None);
        r.gtid_backlog.not_received = None;
        r.bytes_behind.io = Some(6 * 1_024 * 1_024);
        r.catch_up = crate::store::testkit::falling_behind(0.0, 1.0);
    });
    let lag = Lag::AtLeast {
        lag: secs(3.2),
        upper: None,
    };
    topo.replica_mut("r4", |r| {
        r.heartbeat_lag = lag;
        r.catch_up = crate::store::apply_rate::CatchUp::default();
    });

    let alter = "ALTER TABLE big ENGINE=InnoDB";
    topo.node_mut("db1", |n| *scan(n) = vec![ddl(alter, 7, false)]);
    let mut applying = ddl(alter, 2, true);
    applying.progress = Some(92.0);
    topo.node_mut("r1", |n| *scan(n) = vec![applying]);
    topo.snapshot
}

/// Two roots `db1` and `p2` feeding `agg`: its default channel from `db1` healthy, its
/// channel `p2` unable to connect (IO `Connecting`, error 2003), nothing measured on it.
pub(crate) fn multi_source() -> Snapshot {
    let mut topo = Topo::new();
    topo.add_primary("p2", 4);
    topo.add_replica("agg", "db1", 5);
    topo.add_channel("agg", "p2", "p2");
    topo.channel_mut("agg", "p2", |r| {
        r.io_running = crate::mysql::IoRunning::Connecting;
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::Unknown {
            reason: "the IO thread is not connected".to_owned(),
        };
        r.gtid_backlog.not_received = None;
        r.windows.iter_mut().for_each(|(_, stats)| *stats = None);
        r.last_io_error = Some(crate::mysql::ThreadError {
            errno: 2003,
            message: "error connecting to master 'rwtop@127.0.0.1:24002' - retry-time: 1  \
                      maximum-retries: 100000  message: Can't connect to server on \
                      '127.0.0.1' (111 \"Connection refused\")"
                .to_owned(),
            timestamp: None,
        });
        r.catch_up = crate::store::apply_rate::CatchUp::default();
    });
    topo.snapshot
}

fn text(snap: &Snapshot, w: u16) -> [String; 3] {
    let all = lines(&draw(render, snap, &UiState::default(), w, 3));
    [0, 1, 2].map(|i| all.get(i).cloned().unwrap_or_default())
}

#[test]
fn healthy_header_names_primary_replicas_and_writer() {
    let [first, second, rule] = text(&Topo::new().snapshot, 120);
    has_all(
        &first,
        "● db1|127.0.0.1:13306|MariaDB 10.11.19 (10.11.19-MariaDB)",
    );
    has_all(
        &first,
        "replicas 2/2 up|heartbeat 250ms writing|ack 100ms ago",
    );
    has_all(
        &second,
        "no DDL running · no alerts · snapshot 22:13:20 UTC",
    );
    assert!(rule.starts_with("───"), "{rule}");
    // At 80 columns the version goes first, the address next.
    let [narrow, ..] = text(&Topo::new().snapshot, 80);
    assert!(
        !narrow.contains("(10.11.19-MariaDB)") && narrow.contains("writing"),
        "{narrow}"
    );
}

#[test]
fn down_replica_and_stale_writer_are_flagged() {
    let mut snap = troubled();
    let hb = &mut snap.heartbeat;
    (hb.stale, hb.last_ack_age) = (true, Some(secs(12.0)));
    hb.writer = WriterState::Failing {
        cause: "lock wait".into(),
    };
    let buf = draw(render, &snap, &UiState::default(), 140, 3);
    let first = lines(&buf).join("\n");
    has_all(
        &first,
        "replicas 3/4 up|failing: lock wait STALE|ack 12s ago",
    );
    assert_eq!(style_of(&buf, "STALE"), Theme::builtin().critical);
    assert_eq!(style_of(&buf, "3/4 up"), Theme::builtin().warning);
}

#[test]
fn spread_reads_and_a_moved_writer_are_shown() {
    let mut snap = Topo::new().snapshot;
    let [line, ..] = text(&snap, 200);
    assert!(line.contains("heartbeat 250ms writing"), "{line}");
    snap.heartbeat.read_every = Some(secs(1.0));
    snap.heartbeat.node = Some("r1".to_owned());
    let [line, ..] = text(&snap, 200);
    assert!(
        line.contains("heartbeat 250ms (read 1s) writing on r1"),
        "{line}"
    );
}

#[test]
fn ddl_banner_shows_each_node_with_elapsed_and_progress() {
    let buf = draw(render, &troubled(), &UiState::default(), 120, 3);
    let banner = lines(&buf).get(1).cloned().unwrap_or_default();
    let want = "DDL ALTER TABLE big ENGINE=InnoDB — db1 running 7s · r1 applying 2s (92 %)";
    assert!(banner.contains(want), "{banner}");
    assert_eq!(style_of(&buf, "DDL"), Theme::builtin().warning);
    assert_eq!(one_line("ALTER TABLE\n  t\tFORCE", 10), "ALTER TAB…");
}

#[test]
fn ddl_banner_says_what_lock_a_waiting_statement_waits_for() {
    let mut snap = troubled();
    let db1 = snap.nodes.iter_mut().find(|n| n.name == "db1").unwrap();
    scan(db1)[0].waiting_for = Some("table metadata lock".to_owned());
    scan(db1)[0].progress = Some(0.0);
    let buf = draw(render, &snap, &UiState::default(), 160, 3);
    let banner = lines(&buf).get(1).cloned().unwrap_or_default();
    let want = "— db1 running 7s, waiting for table metadata lock · r1 applying 2s (92 %)";
    assert!(banner.contains(want), "{banner}");
    // At 80 columns the statement gives way, not the wait.
    snap.nodes.iter_mut().for_each(|n| {
        let keep = usize::from(n.name == "db1");
        scan(n).truncate(keep);
    });
    let buf = draw(render, &snap, &UiState::default(), 80, 3);
    let banner = lines(&buf).get(1).cloned().unwrap_or_default();
    assert!(
        banner.starts_with(
            "DDL ALTER TABLE big ENGINE=In… — db1 running 7s, waiting for table metadata lock"
        ),
        "{banner}"
    );
}

#[test]
fn ddl_banner_names_who_blocks_a_waiting_statement_and_the_kill() {
    let mut snap = troubled();
    let db1 = snap.nodes.iter_mut().find(|n| n.name == "db1").unwrap();
    *scan(db1) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, false)];
    let buf = draw(render, &snap, &UiState::default(), 220, 3);
    let banner = lines(&buf).get(1).cloned().unwrap_or_default();
    let want = "db1 running 1m35s, waiting for table metadata lock, blocked by #1234 \
                app@10.0.0.5, idle 1m35s in a transaction open 1m37s: KILL 1234";
    assert!(banner.contains(want), "{banner}");
}

#[test]
fn ddl_banner_names_an_online_schema_change_run_by_tool_and_table() {
    let mut topo = Topo::new();
    topo.node_mut("db1", |n| {
        let mut run = crate::store::testkit::osc_run(180_000, 252);
        run.eta_s = Some(310);
        set_osc(n, vec![run]);
    });
    let buf = draw(render, &topo.snapshot, &UiState::default(), 120, 3);
    let banner = lines(&buf).get(1).cloned().unwrap_or_default();
    let want = "DDL pt-osc on shop.orders — db1 copy 4m12s · ~45 % · ETA ~5m00s";
    assert!(banner.contains(want), "{banner}");
}

#[test]
fn no_replicas_and_no_primary_read_as_such() {
    let mut snap = Topo::new().snapshot;
    snap.nodes.retain(|n| n.role == Role::Primary);
    snap.heartbeat.last_ack_age = None;
    has_all(&text(&snap, 100)[0], "replicas 0/0 up|no ack yet");
    snap.nodes.clear();
    has_all(&text(&snap, 100)[0], "no primary");
}

#[test]
fn the_header_counts_incidents_not_alerts() {
    let mut snapshot = super::super::alerts::tests::io_stop_incident();
    assert_eq!(snapshot.alerts.active.len(), 2);
    let all = buffer_text(&draw(render, &snapshot, &UiState::default(), 100, 3));
    assert!(
        all.contains("no DDL running · 1 incident, 1 critical · snapshot"),
        "{all}"
    );
    snapshot.alerts.incidents[0].recovering = true;
    let all = buffer_text(&draw(render, &snapshot, &UiState::default(), 100, 3));
    assert!(
        all.contains("no DDL running · no incidents · 1 recovering"),
        "{all}"
    );
}
