//! The replica table: one row per replica channel in [`UiState::rows`] order (a multi-source
//! replica has a row per channel, a named one reading `agg/p2`), the selected row highlighted,
//! every cell of it, because it drives the detail pane. Every value of a row is its channel's.
//!
//! Every value that is not known renders as `NULL`, `?` or `-` in the unknown or muted style and
//! never as 0: a replica nobody can measure must not look caught up. Narrow terminals drop the
//! least important columns first (bytes, `SQL_Delay`, max); wide ones split the combined columns
//! and add the address and the connection state in words. While a replica has several channels
//! a source column says where each row's channel replicates from. A replica that stops answering
//! keeps a row per channel it had, its lag `?` and nothing live shown.
//!
//! [`UiState::rows`]: crate::ui::UiState::rows

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

use super::status_marks::{conn_glyph, lag_span, lag_style, sbm_span};
use super::{block, highlight};
use crate::mysql::IoRunning;
use crate::store::windows::{Window, WindowStats};
use crate::store::{NodeView, ReplicaView};
use crate::ui::{RenderCtx, ReplicaRow, Theme};
use crate::units;

/// ` ⏸DRAIN` beside a replica the load balancer does not send reads to (or rwtop drained).
fn lb_marker(node: &NodeView) -> Option<String> {
    node.lb
        .as_deref()
        .filter(|l| *l != "READY")
        .map(|l| format!(" ⏸{l}"))
}

fn lb_style(node: &NodeView, theme: &Theme) -> ratatui::style::Style {
    match node.lb.as_deref() {
        Some("DRAIN") => theme.warning,
        _ => theme.critical,
    }
}

fn name_text(row: &ReplicaRow<'_>) -> String {
    format!("{}{}", row.label(), lb_marker(row.node).unwrap_or_default())
}

/// The channel's source by name, or where the replica says it is when rwtop does not poll it.
fn source_text(row: &ReplicaRow<'_>) -> Option<String> {
    row.source()
        .map(str::to_owned)
        .or_else(|| row.channel.map(|c| c.source_address.clone()))
        .filter(|s| !s.is_empty())
}

fn window_label(window: Window) -> &'static str {
    match window {
        Window::OneMinute => "1m",
        Window::FiveMinutes => "5m",
        Window::FifteenMinutes => "15m",
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[rustfmt::skip]
enum Col {
    State, StateWord, Name, Address, Source, Threads, Sbm, Now, Split, CatchUp, P50, P99, Max,
    Backlog, NotReceived, NotApplied, Bytes, BytesIo, BytesSql, Delay, DelayLeft,
}

use Col::{
    Address, Backlog, Bytes, BytesIo, BytesSql, CatchUp, Delay, DelayLeft, Max, Name, NotApplied,
    NotReceived, Now, P50, P99, Sbm, Source, Split, State, StateWord, Threads,
};

/// `Source` only while some replica has several channels: otherwise the tree says it.
const COMPACT: [Col; 14] = [
    State, Name, Source, Threads, Sbm, Now, Split, CatchUp, P50, P99, Max, Backlog, Bytes, Delay,
];
/// Least important first; state, name and lag now are never dropped. The catch-up and the
/// lag's split go first: both are about the lag beside them, and the detail pane says them in
/// full.
const DROP_ORDER: [Col; 11] = [
    CatchUp, Split, Bytes, Delay, Max, Source, P50, Backlog, P99, Sbm, Threads,
];

impl Col {
    /// Header, content width (0: the widest value's), and whether it is a right-aligned number.
    #[rustfmt::skip]
    fn spec(self) -> (&'static str, usize, bool) {
        match self {
            State => ("", 1, false),
            StateWord => ("state", 12, false),
            Name => ("name", 0, false),
            Address => ("address", 0, false),
            Source => ("source", 0, false),
            Threads => ("IO/SQL", 8, false),
            Sbm => ("SBM", 6, true),
            Now => ("lag", 7, true),
            Split => ("xport/apply", 13, true),
            CatchUp => ("catch-up", 16, false),
            P50 => ("P50", 7, true),
            P99 => ("P99", 7, true),
            Max => ("max", 7, true),
            Backlog => ("GTID rcv/app", 12, true),
            NotReceived => ("GTID not rcvd", 13, true),
            NotApplied => ("GTID not appl", 13, true),
            Bytes => ("behind", 10, true),
            BytesIo => ("IO behind", 10, true),
            BytesSql => ("SQL behind", 10, true),
            Delay => ("SQL_Delay", 9, true),
            DelayLeft => ("SQL_Delay (left)", 16, true),
        }
    }

    fn width(self, widest: Widest) -> u16 {
        let content = match self {
            Name => widest.name.clamp(4, 32),
            Address => widest.address.max(self.spec().0.len()).min(28),
            Source => widest.source.unwrap_or(0).max(self.spec().0.len()).min(24),
            _ => self.spec().1,
        };
        u16::try_from(content).unwrap_or(u16::MAX)
    }

    fn cell(self, row: &ReplicaRow<'_>, window: Window, theme: &Theme) -> Line<'static> {
        let node = row.node;
        let line = match self {
            State => Line::from(conn_glyph(&node.conn, theme)),
            StateWord => Line::from(vec![
                conn_glyph(&node.conn, theme),
                Span::styled(format!(" {}", node.conn.name()), theme.text),
            ]),
            Name => match lb_marker(node) {
                Some(marker) => Line::from(vec![
                    Span::styled(row.label(), theme.text),
                    Span::styled(marker, lb_style(node, theme)),
                ]),
                None => Line::styled(row.label(), theme.text),
            },
            Address => Line::styled(node.address.clone(), theme.muted),
            Source => match (row.source(), source_text(row)) {
                (Some(name), _) => Line::styled(name.to_owned(), theme.text),
                (None, Some(address)) => Line::styled(address, theme.muted),
                (None, None) => Line::styled("?", theme.unknown),
            },
            _ => match row.channel {
                Some(r) if node.answers() => self.replica_cell(r, window, theme),
                None if node.answers() && node.galera().is_some() => {
                    self.member_cell(row, window, theme)
                }
                // A node that does not answer keeps a row per channel it had, with nothing live
                // on it: its lag reads unknown, the rest is not known.
                Some(r) if self == Now => Line::from(lag_span(&r.heartbeat_lag, theme)),
                _ => Line::styled("-", theme.muted),
            },
        };
        if self.spec().2 {
            line.right_aligned()
        } else {
            line
        }
    }

    /// A Galera member's row: its state where a replica shows its threads, its lag behind the
    /// cluster's writer, and its receive queue as what waits to be applied.
    fn member_cell(self, row: &ReplicaRow<'_>, window: Window, theme: &Theme) -> Line<'static> {
        let Some(g) = row.node.galera() else {
            return Line::default();
        };
        match self {
            Threads => {
                let (word, style) = super::status_marks::member_state(&g.status, theme);
                Line::styled(word, style)
            }
            Now => Line::from(row.lag().map_or_else(
                || Span::styled("?", theme.unknown),
                |lag| lag_span(lag, theme),
            )),
            P50 => window_stat(row.windows(), window, |s| s.p50, theme),
            P99 => window_stat(row.windows(), window, |s| s.p99, theme),
            Max => window_stat(row.windows(), window, |s| s.max, theme),
            Backlog | NotApplied => {
                let queue = match g.status.recv_queue {
                    Some(0) => Span::styled("0", theme.muted),
                    Some(n) => Span::styled(n.to_string(), theme.warning),
                    None => Span::styled("?", theme.unknown),
                };
                Line::from(vec![Span::styled("q ", theme.muted), queue])
            }
            _ => Line::styled("-", theme.muted),
        }
    }

    fn replica_cell(self, r: &ReplicaView, window: Window, theme: &Theme) -> Line<'static> {
        let stat =
            |pick: fn(&WindowStats) -> Duration| window_stat(&r.windows, window, pick, theme);
        let count = |n: Option<u64>, text: fn(u64) -> String| match n {
            Some(0) => Span::styled(text(0), theme.muted),
            Some(n) => Span::styled(text(n), theme.text),
            None => Span::styled("?", theme.unknown),
        };
        let yes_no = |yes| {
            Span::styled(
                if yes { "Yes" } else { "No" },
                if yes { theme.ok } else { theme.critical },
            )
        };
        let slash = || Span::styled("/", theme.muted);
        let (rcv, app) = (r.gtid_backlog.not_received, r.gtid_backlog.not_applied);
        let (io, sql) = (r.bytes_behind.io, r.bytes_behind.sql);
        let digits = |n: u64| n.to_string();
        match self {
            Threads => Line::from(vec![
                match r.io_running {
                    IoRunning::Connecting => Span::styled("Conn", theme.warning),
                    io => yes_no(io == IoRunning::Yes),
                },
                slash(),
                yes_no(r.sql_running),
            ]),
            Sbm => Line::from(sbm_span(r.seconds_behind_source, theme)),
            Now => Line::from(lag_span(&r.heartbeat_lag, theme)),
            Split => Line::from(vec![
                lag_span(&r.lag_split.transport, theme),
                slash(),
                lag_span(&r.lag_split.apply, theme),
            ]),
            CatchUp => Line::styled(
                super::detail::catch_up::cell(&r.catch_up),
                super::detail::catch_up::style(&r.catch_up, theme),
            ),
            P50 => stat(|s| s.p50),
            P99 => stat(|s| s.p99),
            Max => stat(|s| s.max),
            Backlog => Line::from(vec![count(rcv, digits), slash(), count(app, digits)]),
            NotReceived => Line::from(count(rcv, digits)),
            NotApplied => Line::from(count(app, digits)),
            Bytes => Line::from(count(
                io.zip(sql).map(|(a, b)| a.saturating_add(b)),
                units::bytes,
            )),
            BytesIo => Line::from(count(io, units::bytes)),
            BytesSql => Line::from(count(sql, units::bytes)),
            Delay | DelayLeft => match (r.sql_delay, r.sql_remaining_delay) {
                (None | Some(0), _) => Line::styled("-", theme.muted),
                (Some(d), Some(left)) if self == DelayLeft => Line::styled(
                    format!("{} ({})", units::secs(d), units::secs(left)),
                    theme.text,
                ),
                (Some(d), _) => Line::styled(units::secs(d), theme.text),
            },
            State | StateWord | Name | Address | Source => Line::default(),
        }
    }
}

/// One figure of `window`'s lag statistics, or `-` before there are any.
fn window_stat(
    windows: &[(Window, Option<WindowStats>)],
    window: Window,
    pick: fn(&WindowStats) -> Duration,
    theme: &Theme,
) -> Line<'static> {
    let stats = windows
        .iter()
        .find(|(w, _)| *w == window)
        .and_then(|(_, s)| *s);
    match stats.as_ref().map(pick) {
        Some(d) => Line::styled(units::lag(d), lag_style(d.as_millis(), theme)),
        None => Line::styled("-", theme.muted),
    }
}

/// The longest name, address and source among all rows, measured once a frame: columns keep
/// their width while the operator scrolls.
#[derive(Clone, Copy)]
struct Widest {
    name: usize,
    address: usize,
    /// `None` while no replica has several channels: no source column then.
    source: Option<usize>,
}

impl Widest {
    fn of(rows: &[ReplicaRow<'_>]) -> Self {
        let most = |text: &dyn Fn(&ReplicaRow<'_>) -> usize| rows.iter().map(text).max();
        let chars = |text: Option<String>| text.map_or(1, |t| t.chars().count());
        Self {
            name: most(&|r| name_text(r).chars().count()).unwrap_or(0),
            address: most(&|r| r.node.address.chars().count()).unwrap_or(0),
            source: rows
                .iter()
                .any(|r| r.node.is_multi_source())
                .then(|| most(&|r| chars(source_text(r))).unwrap_or(0)),
        }
    }
}

fn total_width(cols: &[Col], widest: Widest) -> u16 {
    let spacing = u16::try_from(cols.len().saturating_sub(1)).unwrap_or(u16::MAX);
    cols.iter()
        .fold(spacing, |sum, c| sum.saturating_add(c.width(widest)))
}

/// Wider tables trade a combined column for a more detailed one, most useful first.
const UPGRADES: [(Col, &[Col]); 5] = [
    (Backlog, &[NotReceived, NotApplied]),
    (Bytes, &[BytesIo, BytesSql]),
    (Name, &[Name, Address]),
    (Delay, &[DelayLeft]),
    (State, &[StateWord]),
];

/// The compact set minus the least important columns when narrow; upgraded while it fits when
/// wide.
fn columns(width: u16, widest: Widest) -> Vec<Col> {
    let mut cols = COMPACT.to_vec();
    if widest.source.is_none() {
        cols.retain(|c| *c != Source);
    }
    if total_width(&cols, widest) > width {
        for drop in DROP_ORDER {
            if total_width(&cols, widest) <= width {
                break;
            }
            cols.retain(|c| *c != drop);
        }
        return cols;
    }
    for (from, to) in UPGRADES {
        let candidate: Vec<Col> = cols
            .iter()
            .flat_map(|c| if *c == from { to.to_vec() } else { vec![*c] })
            .collect();
        if total_width(&candidate, widest) <= width {
            cols = candidate;
        }
    }
    cols
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let (theme, state) = (ctx.theme, ctx.state);
    let rows = state.rows(ctx.snapshot);
    let title = format!(
        " replicas {} · sort {} · window {} ",
        rows.len(),
        state.sort.label(),
        window_label(state.window)
    );
    let frame_block = block(&title, theme);
    if rows.is_empty() {
        let note = Line::styled("no replicas configured or discovered yet", theme.muted);
        frame.render_widget(Paragraph::new(note).block(frame_block), area);
        return;
    }
    let widest = Widest::of(&rows);
    let cols = columns(area.width.saturating_sub(2), widest);
    let header = Row::new(cols.iter().map(|c| {
        let (text, _, right) = c.spec();
        let line = Line::styled(text, theme.muted);
        Cell::from(if right { line.right_aligned() } else { line })
    }));
    // Only the rows that fit are built (a thousand replicas cost what a screenful does), scrolled
    // so that the selected one is on screen.
    let selected = state.selected.min(rows.len().saturating_sub(1));
    let fits = usize::from(area.height.saturating_sub(3)).max(1);
    let first = (selected + 1).saturating_sub(fits);
    let body = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(fits)
        .map(|(i, row)| {
            Row::new(cols.iter().map(|c| {
                let line = c.cell(row, state.window, theme);
                Cell::from(if i == selected {
                    highlight(line, theme.selected)
                } else {
                    line
                })
            }))
        });
    let widths = cols.iter().map(|c| Constraint::Length(c.width(widest)));
    let table = Table::new(body, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(theme.selected)
        .block(frame_block);
    let mut table_state = TableState::new().with_selected(Some(selected - first));
    frame.render_stateful_widget(table, area, &mut table_state);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Snapshot;
    use crate::store::testkit::Topo;
    use crate::ui::UiState;
    use crate::ui::panels::header::tests::{
        draw, has_all, lines, multi_source, style_of, troubled,
    };
    use crate::ui::panels::{header, topology};
    use crate::ui::state::SortKey;

    fn text(snap: &Snapshot, state: &UiState, w: u16) -> String {
        lines(&draw(render, snap, state, w, 10)).join("\n")
    }

    #[test]
    fn narrow_tables_drop_bytes_then_delay_then_max() {
        let at80 = text(&troubled(), &UiState::default(), 80);
        assert!(!at80.contains("behind"), "{at80}");
        has_all(&at80, "SQL_Delay|max|P50");
        // An 80-column terminal with the tree shown gives the table 56.
        let buf = draw(render, &troubled(), &UiState::default(), 56, 10);
        let at56 = lines(&buf).join("\n");
        has_all(&at56, "IO/SQL|SBM|lag|P99|GTID rcv/app|sort topology");
        has_all(&at56, "window 1m|≥3.20s|Yes/No|?/0");
        assert!(!at80.contains("xport/apply"), "dropped first:\n{at80}");
        for dropped in ["behind", "SQL_Delay", "max", "P50", "xport/apply"] {
            assert!(!at56.contains(dropped), "{dropped} shown:\n{at56}");
        }
        assert_eq!(style_of(&buf, "NULL"), Theme::builtin().unknown);
        assert_eq!(style_of(&buf, "✖").fg, Theme::builtin().critical.fg);
    }

    #[test]
    fn wide_tables_split_columns_and_add_detail() {
        let mut topo = Topo {
            snapshot: troubled(),
        };
        topo.replica_mut("r1", |r| {
            (r.sql_delay, r.sql_remaining_delay) = (Some(3_600), Some(1_200));
        });
        topo.replica_mut("r4", |r| {
            r.heartbeat_lag = crate::store::lag::Lag::Exact {
                lag: Duration::from_millis(12_100),
            };
            r.catch_up = crate::store::testkit::catching_up(1.1, Duration::from_secs(11));
            // Received all but the last 2.1 s: 10 s wait in its relay log.
            r.lag_split = crate::store::lag_split::LagSplit::of(
                &r.heartbeat_lag,
                &crate::store::lag::Lag::Exact {
                    lag: Duration::from_millis(2_100),
                },
            );
        });
        // The lag's split comes with the compact set, before any column splits.
        let at120 = text(&topo.snapshot, &UiState::default(), 120);
        has_all(&at120, "xport/apply|2.10s/10.00s");
        assert!(!at120.contains("catch-up"), "dropped first:\n{at120}");
        let at134 = text(&topo.snapshot, &UiState::default(), 134);
        has_all(&at134, "xport/apply|0.12s/0.00s|2.10s/10.00s|GTID rcv/app");
        // 154 columns: the counts and bytes split.
        let at154 = text(&topo.snapshot, &UiState::default(), 154);
        assert!(!at154.contains("✖ down"), "{at154}");
        has_all(&at154, "GTID not rcvd|IO behind|6.0 MiB|catch-up|▲50 trx/s");
        has_all(&at154, "▼1.1 s/s ~11s|caught up|max|0.26s|xport/apply");
        // 174: the address and the delay left too.
        let at174 = text(&topo.snapshot, &UiState::default(), 174);
        has_all(&at174, "127.0.0.1:13307|1h00m (20m00s)");
        has_all(
            &text(&topo.snapshot, &UiState::default(), 214),
            "state|✖ down",
        );
    }

    #[test]
    fn selected_row_follows_the_sort_order() {
        let state = UiState {
            sort: SortKey::Lag,
            ..UiState::default()
        };
        let buf = draw(render, &troubled(), &state, 120, 10);
        has_all(&lines(&buf).join("\n"), "sort lag");
        // Worst lag first: r4 at ≥3.2 s is row 0.
        assert_eq!(style_of(&buf, "r4").bg, Theme::builtin().selected.bg);
        assert_ne!(style_of(&buf, "r1").bg, Theme::builtin().selected.bg);
    }

    #[test]
    fn a_multi_source_replica_has_a_row_per_channel_each_with_its_own_values() {
        let snap = multi_source();
        let all = lines(&draw(render, &snap, &UiState::default(), 84, 10));
        let row = |name: &str| {
            let cell = format!(" {name} ");
            all.iter()
                .find(|l| l.contains(&cell))
                .cloned()
                .unwrap_or_default()
        };
        has_all(&all.join("\n"), "replicas 4|source");
        has_all(&row("agg"), "db1|Yes/Yes|0s|0.12s|0/0");
        has_all(&row("agg/p2"), "p2|Conn/Yes|NULL|?/0");
        assert!(!row("agg/p2").contains("0.12s"), "{}", row("agg/p2"));
        // Without a multi-source replica there is no source column.
        assert!(!text(&troubled(), &UiState::default(), 84).contains("source"));
        // Sorted by lag, the channel nobody can measure comes first and is the one selected.
        let state = UiState {
            sort: SortKey::Lag,
            ..UiState::default()
        };
        let buf = draw(render, &snap, &state, 84, 10);
        assert_eq!(style_of(&buf, "agg/p2").bg, Theme::builtin().selected.bg);
        let first = lines(&buf)[2].clone();
        assert!(first.contains("agg/p2"), "{}", lines(&buf).join("\n"));
    }

    #[test]
    fn a_multi_source_replica_that_stops_answering_keeps_a_row_per_channel() {
        let mut topo = Topo {
            snapshot: multi_source(),
        };
        topo.stop_answering("agg");
        let all = lines(&draw(render, &topo.snapshot, &UiState::default(), 84, 10));
        let row = |name: &str| {
            let cell = format!(" {name} ");
            all.iter().find(|l| l.contains(&cell)).cloned()
        };
        for (name, source) in [("agg", "db1"), ("agg/p2", "p2")] {
            let shown = row(name).unwrap_or_else(|| panic!("no row {name}:\n{}", all.join("\n")));
            has_all(&shown, &format!("✖|{source}|?"));
            // Not its last values, and nothing that reads as a state the server reported.
            for live in ["Yes", "No", "Conn", "NULL", "0.12s", "0/0"] {
                assert!(!shown.contains(live), "{live} in {shown}");
            }
        }
    }

    #[test]
    fn a_long_list_scrolls_to_the_selected_replica_and_keeps_its_widths() {
        let mut topo = Topo::new();
        for i in 0..200 {
            topo.add_replica(&format!("x{i:03}"), "db1", 10 + i);
        }
        topo.add_replica("a-rather-long-replica-name", "db1", 9);
        let state = UiState {
            selected: 150,
            ..UiState::default()
        };
        // 10 rows: borders and header leave 7, so rows 144..=150 (r1, r2 and x000.. come first).
        let buf = draw(render, &topo.snapshot, &state, 120, 10);
        let shown = lines(&buf).join("\n");
        has_all(&shown, "replicas 203|x146|x148");
        assert!(
            !shown.contains("x141") && !shown.contains("x149"),
            "{shown}"
        );
        assert_eq!(style_of(&buf, "x148").bg, Theme::builtin().selected.bg);
        // The name column fits the longest name although it is off screen.
        let header = lines(&buf)[1].clone();
        let lag = header.find("IO/SQL").unwrap_or(0);
        assert!(lag > "a-rather-long-replica-name".len(), "{header}");
    }

    #[test]
    fn zero_replicas_says_so() {
        let mut snap = Topo::new().snapshot;
        snap.nodes.retain(|n| n.name == "db1");
        has_all(
            &text(&snap, &UiState::default(), 80),
            "no replicas|replicas 0",
        );
    }

    #[test]
    fn every_panel_survives_tiny_areas() {
        let (snap, state) = (
            troubled(),
            UiState {
                selected: 99,
                ..UiState::default()
            },
        );
        let panels: [fn(&mut Frame, Rect, &RenderCtx<'_>); 3] =
            [header::render, topology::render, render];
        for (w, h) in (1..=30).flat_map(|w| (1..=5).map(move |h| (w, h))) {
            for panel in panels {
                draw(panel, &snap, &state, w, h);
            }
        }
    }
}
