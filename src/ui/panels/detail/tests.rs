//! The pane drawn whole: chart and text at the sizes it gets, unknown values, GTID lists and
//! errors.

use crate::store::testkit::live;
use std::sync::Arc;
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::*;
use crate::alerts::{Alert, AlertKind, Severity};
use crate::gtid::GtidList;
use crate::mysql::{GtidState, ThreadError};
use crate::poll::ConnState;
use crate::store::Snapshot;
use crate::store::lag::Lag;
use crate::store::series::Point;
use crate::store::testkit::{Topo, mariadb_gtid, mysql_gtid};
use crate::store::windows::Window;
use crate::ui::panels::header;
use crate::ui::{Theme, UiState};

const UUID_A: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const UUID_B: &str = "4e11fa47-71ca-11e1-9e33-c80aa9429562";

fn draw(snapshot: &Snapshot, state: &UiState, width: u16, height: u16) -> Buffer {
    header::tests::draw(render, snapshot, state, width, height)
}

use header::tests::{buffer_text as text, find, lines as rows};

fn is_braille(c: char) -> bool {
    ('\u{2801}'..='\u{28FF}').contains(&c)
}

/// One point a second over the last `n` seconds before the snapshot; `at(ago_s)` gives the
/// point's readings.
fn fill(topo: &mut Topo, n: u64, at: impl Fn(u64) -> (Option<u32>, Option<u32>)) -> Arc<[Point]> {
    let now_ms = u64::try_from(topo.snapshot.uptime.as_millis()).unwrap_or(0);
    let points: Vec<Point> = (0..=n)
        .rev()
        .map(|ago| {
            let (lag, sbm) = at(ago);
            Point {
                at_ms: now_ms.saturating_sub(ago * 1000),
                heartbeat_lag_ms: lag,
                sbm_s: sbm,
            }
        })
        .collect();
    let series: Arc<[Point]> = Arc::from(points);
    let shared = Arc::clone(&series);
    topo.replica_mut("r1", move |r| r.series = shared.into());
    series
}

/// The chart's x axis (the lowest `└─`, below the legend's box): its row and the columns
/// of the plot, right of the corner.
fn axis(buf: &Buffer) -> (u16, u16, u16) {
    let rows = rows(buf);
    let found = rows.iter().enumerate().rev().find_map(|(y, row)| {
        let col = row.find("└─")?;
        let x = row.get(..col)?.chars().count();
        Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
    });
    let (x, y) = found.unwrap_or_default();
    (y, x.saturating_add(1), buf.area.width.saturating_sub(1))
}

fn cells(buf: &Buffer, y: u16, xs: std::ops::Range<u16>) -> String {
    xs.map(|x| buf.cell((x, y)).map_or(" ", |c| c.symbol()))
        .collect()
}

fn sbm_alert(node: &str) -> Alert {
    Alert {
        kind: AlertKind::SbmUnderstatesLag,
        node: Some(node.to_owned()),
        channel: None,
        severity: Severity::Critical,
        since: chrono::DateTime::UNIX_EPOCH,
        last_seen: chrono::DateTime::UNIX_EPOCH,
        count: 2,
        evidence: Vec::new(),
        cause: String::new(),
        membership: crate::alerts::Membership::default(),
    }
}

#[test]
fn stall_shows_sbm_flat_at_zero_under_a_climbing_lag() {
    let mut topo = Topo::new();
    // Caught up until 30 s ago, then stalled: lag climbs a second a second, SBM stays 0.
    fill(&mut topo, 60, |ago| {
        (
            Some(u32::try_from(30_u64.saturating_sub(ago) * 1000).unwrap_or(0)),
            Some(0),
        )
    });
    topo.replica_mut("r1", |r| {
        r.heartbeat_lag = Lag::Exact {
            lag: Duration::from_secs(30),
        }
    });
    topo.snapshot.alerts.active.push(sbm_alert("r1"));
    let buf = draw(&topo.snapshot, &UiState::default(), 100, 30);
    let all = text(&buf);
    assert!(all.contains("r1 ← db1"), "{all}");
    assert!(
        all.contains("lag 30.00s  SBM 0s  ◆ SBM understates lag"),
        "{all}"
    );
    assert!(
        all.contains("⣀ lag") && all.contains("• SBM"),
        "legend: {all}"
    );
    assert!(all.contains("-60s") && all.contains("now"), "x axis: {all}");
    let (axis_row, left, right) = axis(&buf);
    assert!(axis_row > 10, "the chart gets most of the rows: {all}");
    let mid = left + (right - left) / 2;
    // SBM: dots along the bottom while the lag is high.
    let bottom = cells(&buf, axis_row - 1, mid + 2..right);
    assert!(bottom.chars().filter(|c| *c == '•').count() >= 10, "{all}");
    // Lag: the top rows hold Braille on the right (the climb) and none on the left.
    let top = cells(&buf, axis_row - 3, left..right);
    let (old, new) = top.split_at(
        top.char_indices()
            .nth(usize::from(mid - left))
            .map_or(0, |(i, _)| i),
    );
    assert!(new.chars().any(is_braille), "{all}");
    assert!(!old.chars().any(is_braille), "{all}");
    // Lag is drawn in its colour, SBM in its own.
    let theme = Theme::builtin();
    let colour = |c: char, y: u16| {
        (left..right).find_map(|x| {
            let cell = buf.cell((x, y))?;
            cell.symbol().starts_with(c).then_some(cell.fg)
        })
    };
    assert_eq!(colour('•', axis_row - 1), Some(theme.sbm));
    let lag_cell = (left..right).find_map(|x| {
        let cell = buf.cell((x, axis_row - 3))?;
        cell.symbol().chars().any(is_braille).then_some(cell.fg)
    });
    assert_eq!(lag_cell, Some(theme.lag));
}

#[test]
fn null_sbm_is_a_gap_not_a_zero() {
    let mut topo = Topo::new();
    // SBM 2 s, then NULL for the middle 20 s, then 2 s again; lag steady at the top.
    fill(&mut topo, 60, |ago| {
        let sbm = (!(20..40).contains(&ago)).then_some(2);
        (Some(10_000), sbm)
    });
    topo.replica_mut("r1", |r| r.seconds_behind_source = None);
    let buf = draw(&topo.snapshot, &UiState::default(), 100, 30);
    let all = text(&buf);
    assert!(all.contains("SBM NULL"), "{all}");
    let (axis_row, left, right) = axis(&buf);
    let third = (right - left) / 3;
    let dots = |xs: std::ops::Range<u16>| {
        (axis_row.saturating_sub(8)..axis_row)
            .map(|y| {
                cells(&buf, y, xs.clone())
                    .chars()
                    .filter(|c| *c == '•')
                    .count()
            })
            .sum::<usize>()
    };
    assert!(dots(left..left + third - 1) > 0, "{all}");
    assert!(dots(right - third + 1..right) > 0, "{all}");
    assert_eq!(dots(left + third + 2..right - third - 2), 0, "{all}");
    // NULL everywhere: no SBM drawn at all, not even on the zero line.
    fill(&mut topo, 60, |_| (Some(10_000), None));
    let buf = draw(&topo.snapshot, &UiState::default(), 100, 30);
    let (axis_row, left, right) = axis(&buf);
    assert_eq!(
        (axis_row.saturating_sub(8)..axis_row)
            .map(|y| cells(&buf, y, left..right).matches('•').count())
            .sum::<usize>(),
        0,
        "{}",
        text(&buf)
    );
}

#[test]
fn text_fits_the_pane_of_an_80x24_terminal_without_a_chart() {
    let mut topo = Topo::new();
    fill(&mut topo, 60, |_| (Some(100), Some(0)));
    let buf = draw(&topo.snapshot, &UiState::default(), 48, 11);
    let all = text(&buf);
    for want in [
        "lag 0.12s  SBM 0s",
        "1m  p50 0.08s  p99 0.24s  max 0.26s  n 240",
        "recv mysql-bin.000003:4096  io 0 B behind",
        "appl mysql-bin.000003:4096  sql 0 B behind",
        "backlog 0 trx to receive · 0 to apply",
        "gtid slave=binlog=current 0-1-100",
    ] {
        assert!(all.contains(want), "{want:?} in\n{all}");
    }
    assert!(
        !all.contains("└─") && !all.contains("now"),
        "no chart:\n{all}"
    );
}

/// A replica with parallel appliers gets their two lines, and at 80×24 every other line stays.
#[test]
fn appliers_take_two_rows_of_an_80x24_pane_and_nothing_is_lost() {
    let mut topo = Topo::new();
    fill(&mut topo, 60, |_| (Some(100), Some(0)));
    topo.replica_mut("r1", |r| {
        r.appliers = crate::store::ApplierView {
            workers: Some(4),
            mode: Some("optimistic".to_owned()),
            busy: Some(crate::store::BusyWorkers {
                workers: 4,
                busy: 2,
                commit_order_waits: Some(1),
                age: Duration::from_millis(2_400),
                shared: false,
            }),
            retries_per_second: Some(0.0),
            groups: crate::store::ApplierGroups {
                ddl: Some(3),
                transactional: Some(1_204),
                non_transactional: Some(0),
            },
            ..crate::store::ApplierView::default()
        };
    });
    let all = text(&draw(&topo.snapshot, &UiState::default(), 48, 11));
    for want in [
        "lag 0.12s  SBM 0s",
        "backlog 0 trx to receive · 0 to apply",
        "workers 4: 2 busy, 1 commit wait (2.4s ago)",
        "retries 0/s · groups ddl 3 trx 1.2k non-trx 0",
        "gtid slave=binlog=current 0-1-100",
    ] {
        assert!(all.contains(want), "{want:?} in\n{all}");
    }
    let wide = text(&draw(&topo.snapshot, &UiState::default(), 120, 30));
    assert!(
        wide.contains("workers 4 (optimistic): 2 busy, 1 waiting on commit order (2.4s ago)"),
        "{wide}"
    );
}

#[test]
fn window_selects_the_percentiles_and_the_chart_span() {
    let mut topo = Topo::new();
    fill(&mut topo, 900, |_| (Some(100), Some(0)));
    let state = UiState {
        window: Window::FifteenMinutes,
        ..UiState::default()
    };
    let all = text(&draw(&topo.snapshot, &state, 100, 30));
    assert!(all.contains("15m no lag samples"), "{all}");
    assert!(all.contains("-15m") && all.contains("-7.5m"), "{all}");
}

#[test]
fn positions_backlog_and_delay_say_unknown_as_unknown() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.bytes_behind.io = Some(5_000_000);
        r.bytes_behind.sql = None;
        r.gtid_backlog.not_received = None;
        r.gtid_backlog.not_applied = Some(17);
        r.sql_delay = Some(3600);
        r.sql_remaining_delay = Some(1200);
    });
    let all = text(&draw(&topo.snapshot, &UiState::default(), 60, 14));
    assert!(all.contains("io 4.7 MiB behind"), "{all}");
    assert!(all.contains("sql ? behind"), "{all}");
    assert!(
        all.contains("backlog ? trx to receive · 17 to apply"),
        "{all}"
    );
    assert!(all.contains("SQL_Delay 1h00m · 20m00s left"), "{all}");
    // The delay beside the true lag it is part of.
    topo.replica_mut("r1", |r| {
        r.heartbeat_lag = Lag::Exact {
            lag: Duration::from_millis(3_600_250),
        }
    });
    let all = text(&draw(&topo.snapshot, &UiState::default(), 60, 14));
    assert!(all.contains("lag 1h00m (delay 1h00m)  SBM"), "{all}");
    // In the 80×24 pane a long figure drops the word, never the number.
    topo.replica_mut("r1", |r| r.bytes_behind.io = Some(123_456_789));
    let all = text(&draw(&topo.snapshot, &UiState::default(), 48, 12));
    let recv = all.lines().find(|l| l.contains("recv")).unwrap_or_default();
    assert!(
        recv.contains("io 117.7 MiB") && !recv.contains("beh"),
        "{all}"
    );
}

#[test]
fn mysql_gtid_is_abbreviated_unless_expanded() {
    let mut topo = Topo::mysql();
    let set = format!("{UUID_A}:1-100,{UUID_B}:1-5");
    topo.node_mut("r1", |n| live(n).gtid = mysql_gtid(&set));
    let short = text(&draw(&topo.snapshot, &UiState::default(), 60, 12));
    assert!(
        short.contains(&format!("gtid executed {UUID_A}:1-1…")),
        "{short}"
    );
    assert!(!short.contains(UUID_B), "{short}");
    let mut state = UiState::default();
    state.panes.expand_gtid = true;
    let full = text(&draw(&topo.snapshot, &state, 60, 12));
    assert!(
        full.contains(&format!("gtid executed {UUID_A}:1-100,")),
        "{full}"
    );
    assert!(full.contains(&format!("  {UUID_B}:1-5")), "{full}");
}

#[test]
fn mariadb_lists_merge_when_equal_and_split_when_not() {
    let mut topo = Topo::new();
    let all = text(&draw(&topo.snapshot, &UiState::default(), 60, 12));
    assert!(all.contains("gtid slave=binlog=current 0-1-100"), "{all}");
    let applied = GtidList::parse("0-1-100").unwrap_or_else(|e| panic!("{e}"));
    let own = GtidList::parse("0-1-100,1-2-5").unwrap_or_else(|e| panic!("{e}"));
    topo.node_mut("r1", |n| {
        live(n).gtid = GtidState::Mariadb {
            binlog_pos: own.clone(),
            slave_pos: applied,
            current_pos: own,
        };
    });
    let all = text(&draw(&topo.snapshot, &UiState::default(), 60, 12));
    assert!(all.contains("gtid slave 0-1-100"), "{all}");
    assert!(all.contains("gtid binlog=current 0-1-100,1-2-5"), "{all}");
}

#[test]
fn thread_errors_wrap_in_the_critical_style() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.sql_running = false;
        r.last_sql_error = Some(ThreadError {
            errno: 1062,
            message: "Could not execute Write_rows_v1 event on table shop.orders; Duplicate \
                      entry '42' for key 'PRIMARY'"
                .to_owned(),
            timestamp: Some("240315 10:22:31".to_owned()),
        });
    });
    let buf = draw(&topo.snapshot, &UiState::default(), 48, 12);
    let all = text(&buf);
    assert!(all.contains("SQL error 1062: Could not execute"), "{all}");
    assert!(
        all.contains("  Duplicate entry '42'"),
        "wrapped, indented: {all}"
    );
    assert!(all.contains("(at 240315 10:22:31)"), "{all}");
    let (x, y) = find(&buf, "SQL error").unwrap_or_default();
    assert_eq!(buf.cell((x, y)).map(|c| c.fg), Some(Color::Red));
    // The error comes before the numbers: it is what the operator acts on.
    assert!(find(&buf, "SQL error").map(|p| p.1) < find(&buf, "recv").map(|p| p.1));
}

#[test]
fn no_replica_and_no_status_read_calmly() {
    let mut topo = Topo::new();
    topo.node_mut("r1", |n| {
        n.channels.clear();
        n.conn = ConnState::Connecting;
    });
    let all = text(&draw(&topo.snapshot, &UiState::default(), 48, 12));
    assert!(
        all.contains("no replication status yet · node connecting"),
        "{all}"
    );
    topo.snapshot
        .nodes
        .retain(|n| n.replica().is_none() && n.source.is_none());
    let all = text(&draw(&topo.snapshot, &UiState::default(), 48, 12));
    assert!(all.contains("no replicas to show"), "{all}");
}

#[test]
fn arrangement_gives_the_chart_room_only_where_it_is_useful() {
    let inner = |w, h| Rect::new(1, 1, w, h);
    assert_eq!(arrange(inner(46, 9), 6, 6), Arrangement::Text);
    assert!(matches!(
        arrange(inner(118, 28), 6, 6),
        Arrangement::Stacked { chart, text } if chart.height == 22 && text.height == 6
    ));
    assert!(matches!(
        arrange(inner(100, 10), 6, 6),
        Arrangement::Side { chart, text } if chart.width == 53 && text.width == 46
    ));
    assert_eq!(arrange(inner(100, 10), 6, 11), Arrangement::Text);
    assert_eq!(arrange(inner(0, 0), 0, 0), Arrangement::Text);
}

#[test]
fn any_size_renders_without_panicking() {
    let mut topo = Topo::mysql();
    fill(&mut topo, 120, |ago| {
        (
            Some(u32::try_from(ago * 97).unwrap_or(0)),
            (ago % 7 > 0).then_some(1),
        )
    });
    topo.replica_mut("r1", |r| {
        r.last_io_error = Some(ThreadError {
            errno: 2003,
            message: "error connecting to master 'repl@db1:3306' - retry-time: 60".to_owned(),
            timestamp: None,
        });
        r.sql_delay = Some(30);
        r.received.file.clear();
    });
    topo.node_mut("r1", |n| live(n).gtid = mariadb_gtid("0-1-100,1-2-5,2-3-7"));
    let mut state = UiState::default();
    for expand in [false, true] {
        state.panes.expand_gtid = expand;
        for width in 1..=30 {
            for height in 1..=8 {
                draw(&topo.snapshot, &state, width, height);
            }
        }
        for (width, height) in [(48, 12), (72, 14), (120, 30), (200, 60)] {
            let all = text(&draw(&topo.snapshot, &state, width, height));
            assert!(all.contains("IO error 2003"), "{width}×{height}: {all}");
        }
    }
}

#[test]
fn a_multi_source_replica_shows_the_selected_channel_and_a_line_per_other() {
    let mut topo = Topo {
        snapshot: header::tests::multi_source(),
    };
    // Each channel its own chart: the default one near zero, channel p2 40 s behind.
    let now_ms = u64::try_from(topo.snapshot.uptime.as_millis()).unwrap_or(0);
    let series = |lag_ms: u32| -> Arc<[Point]> {
        (0..=60)
            .map(|ago: u64| Point {
                at_ms: now_ms - ago * 1000,
                heartbeat_lag_ms: Some(lag_ms),
                sbm_s: None,
            })
            .collect()
    };
    topo.channel_mut("agg", "", |r| r.series = series(100).into());
    topo.channel_mut("agg", "p2", |r| r.series = series(40_000).into());
    // Rows: r1, r2, agg, agg/p2.
    let on = |selected| UiState {
        selected,
        ..UiState::default()
    };
    let p2 = text(&draw(&topo.snapshot, &on(3), 100, 30));
    assert!(p2.contains(" agg/p2 ← p2 "), "{p2}");
    assert!(p2.contains("lag unknown  SBM NULL"), "{p2}");
    assert!(
        p2.contains("IO error 2003: error connecting to master"),
        "{p2}"
    );
    assert!(
        p2.contains("also agg ← db1 Yes/Yes lag 0.12s SBM 0s"),
        "{p2}"
    );
    assert!(p2.contains("40s") || p2.contains("1m"), "p2's chart: {p2}");
    let default = text(&draw(&topo.snapshot, &on(2), 100, 30));
    assert!(default.contains(" agg ← db1 "), "{default}");
    assert!(default.contains("lag 0.12s  SBM 0s"), "{default}");
    assert!(
        default.contains("also agg/p2 ← p2 Conn/Yes lag ? SBM NULL IO error 2003"),
        "{default}"
    );
    assert!(!default.contains("40s"), "agg's chart: {default}");
    // At 80×24 the pane is 48 columns: the other channel still has its line.
    let small = text(&draw(&topo.snapshot, &on(2), 48, 11));
    assert!(small.contains("also agg/p2 ← p2"), "{small}");
    assert!(small.contains("IO error 2003"), "{small}");
}

/// A multi-source replica that stops answering: the selected channel says its lag is unknown
/// and its node is down, the other channel has its line, and nothing live (threads, SBM,
/// positions, backlog) is shown as if it were known.
#[test]
fn a_channel_of_a_node_that_does_not_answer_shows_nothing_live() {
    let mut topo = Topo {
        snapshot: header::tests::multi_source(),
    };
    topo.stop_answering("agg");
    topo.node_mut("agg", |n| n.sample_age = Some(Duration::from_secs(4)));
    // Rows: r1, r2, agg, agg/p2.
    let state = UiState {
        selected: 3,
        ..UiState::default()
    };
    let p2 = text(&draw(&topo.snapshot, &state, 100, 30));
    assert!(p2.contains(" agg/p2 ← p2 "), "{p2}");
    assert!(
        p2.contains("lag unknown  node down, last answer 4s ago"),
        "{p2}"
    );
    assert!(p2.contains("also agg ← db1 lag ?"), "{p2}");
    for live in [
        "SBM NULL", "SBM 0", "Yes", "Conn", "recv", "appl", "gtid", "IO error",
    ] {
        assert!(!p2.contains(live), "{live} shown:\n{p2}");
    }
}

/// A Galera member selected: what its state means for reads, its lag behind the writer, the
/// cluster as it sees it, its queue and distance, and flow control that names it the sender;
/// its row in the replica table shows its state, lag and queue.
#[test]
fn a_galera_member_shows_what_it_means_for_reads_and_who_stalls_the_writes() {
    use crate::mysql::galera::MemberState;
    let mut topo = Topo::new();
    topo.add_cluster("c", &["g1", "g2"]);
    topo.node_mut("g2", |n| {
        let g = n.live.as_mut().unwrap().galera.as_mut().unwrap();
        g.status.state = MemberState::Donor;
        g.status.state_comment = "Donor/Desynced".to_owned();
        g.status.recv_queue = Some(185);
        g.status.last_committed = Some(1);
        g.lag = Lag::Exact {
            lag: Duration::from_millis(12_400),
        };
        let i = g.interval.as_mut().unwrap();
        (i.fc_sent, i.paused_share) = (Some(12), Some(0.38));
    });
    topo.recount_clusters("c", &["g1", "g2"]);
    // The replicas (r1, r2) come first; the members after them.
    let state = UiState {
        selected: 3,
        ..UiState::default()
    };
    let shown = rows(&draw(&topo.snapshot, &state, 100, 14)).join("\n");
    for part in [
        " g2 ",
        "lag 12.40s · donor (Donor/Desynced) · behind g1",
        "reads here are stale",
        "size 3 of 2 · c",
        "recv 185 send 0 · 9 write-set(s) behind the newest",
        "paused 38% of 1s",
        "sent 12: its backlog pauses every member's writes",
    ] {
        assert!(shown.contains(part), "{part:?} missing:\n{shown}");
    }
    let table = header::tests::draw(
        crate::ui::panels::replicas::render,
        &topo.snapshot,
        &state,
        100,
        8,
    );
    let table = rows(&table).join("\n");
    let g2 = table
        .lines()
        .find(|l| l.contains(" g2 "))
        .unwrap_or_default();
    for part in ["donor", "12.40s", "q 185"] {
        assert!(g2.contains(part), "{part:?} missing from {g2:?}:\n{table}");
    }
}
