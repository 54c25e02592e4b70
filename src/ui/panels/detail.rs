//! The detail pane: the selected replica in full. A chart of heartbeat lag against SBM over the
//! chosen window, then the numbers an operator acts on: window percentiles, binlog positions and
//! bytes behind, GTID backlog, delay, GTID state, and the threads' last errors.
//!
//! The text has priority over the chart: at 80×24 the pane is 48 columns by about ten rows and
//! the numbers must all be there, so the chart is drawn only where it gets a useful size. It goes
//! on top when the pane is tall, beside the text when the pane is wide and short.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{block, chart};
use crate::alerts::AlertKind;
use crate::gtid::GtidList;
use crate::mysql::{BinlogPos, GtidState, ThreadError};
use crate::poll::ConnState;
use crate::store::windows::Window;
use crate::store::{NodeView, ReplicaView};
use crate::ui::{Ctx, Theme};
use crate::units;

/// Abbreviated GTID sets keep this many characters: a UUID and the start of its intervals, or
/// the first few MariaDB domains, enough to recognise a set without it wrapping.
const GTID_CHARS: usize = 40;
/// Width of the text column beside the chart: the widest fixed line (positions) fits.
const SIDE_TEXT_WIDTH: u16 = 46;
/// Below this a chart is axes and labels with a few dots: not worth the rows it takes.
const CHART_MIN_WIDTH: u16 = 24;
const CHART_MIN_HEIGHT: u16 = 6;
/// Continuation lines of wrapped text are indented, so an entry's start stays visible.
const INDENT: usize = 2;

pub fn render(frame: &mut Frame, area: Rect, ctx: &Ctx<'_>) {
    let node = ctx.state.selected_node(ctx.snapshot);
    let title = match node {
        Some(n) => match &n.source {
            Some(source) => format!(" {} ← {source} ", n.name),
            None => format!(" {} ", n.name),
        },
        None => " detail ".to_owned(),
    };
    let pane = block(&title, ctx.theme);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    let Some(node) = node else {
        let calm = Line::styled("no replicas to show", ctx.theme.muted);
        frame.render_widget(Paragraph::new(calm), inner);
        return;
    };
    let Some(replica) = &node.replica else {
        let line = Line::from(vec![
            Span::styled("no replication status yet", ctx.theme.unknown),
            Span::styled(format!(" · node {}", node.conn.name()), ctx.theme.muted),
        ]);
        frame.render_widget(Paragraph::new(line), inner);
        return;
    };
    let text_at = |width: u16| text_lines(node, replica, ctx, usize::from(width));
    let full = text_at(inner.width);
    let side = text_at(SIDE_TEXT_WIDTH);
    let chart_at = |frame: &mut Frame, area: Rect| {
        chart::render(
            frame,
            area,
            replica,
            ctx.snapshot.uptime,
            ctx.state.window,
            ctx.theme,
        );
    };
    match arrange(inner, full.len(), side.len()) {
        Arrangement::Text => frame.render_widget(Paragraph::new(full), inner),
        Arrangement::Stacked { chart, text } => {
            chart_at(frame, chart);
            frame.render_widget(Paragraph::new(full), text);
        }
        Arrangement::Side { chart, text } => {
            chart_at(frame, chart);
            frame.render_widget(Paragraph::new(side), text);
        }
    }
}

/// Where the chart goes, if anywhere.
#[derive(Debug, PartialEq, Eq)]
enum Arrangement {
    Text,
    /// Chart above, text below at full width.
    Stacked {
        chart: Rect,
        text: Rect,
    },
    /// Chart left, text right in a [`SIDE_TEXT_WIDTH`] column.
    Side {
        chart: Rect,
        text: Rect,
    },
}

/// Picks the arrangement that gives the chart the larger area, never at the cost of text rows:
/// stacked needs the full-width text (`full_rows`) to fit below the chart, side by side needs the
/// column's text (`side_rows`) to fit the height.
fn arrange(inner: Rect, full_rows: usize, side_rows: usize) -> Arrangement {
    let rows = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    let chart_rows = inner.height.saturating_sub(rows(full_rows));
    let stacked = (chart_rows >= CHART_MIN_HEIGHT && inner.width >= CHART_MIN_WIDTH).then(|| {
        Arrangement::Stacked {
            chart: Rect {
                height: chart_rows,
                ..inner
            },
            text: Rect {
                y: inner.y.saturating_add(chart_rows),
                height: inner.height.saturating_sub(chart_rows),
                ..inner
            },
        }
    });
    let chart_cols = inner
        .width
        .saturating_sub(SIDE_TEXT_WIDTH.saturating_add(1));
    let side = (chart_cols >= CHART_MIN_WIDTH
        && inner.height >= CHART_MIN_HEIGHT
        && rows(side_rows) <= inner.height)
        .then(|| Arrangement::Side {
            chart: Rect {
                width: chart_cols,
                ..inner
            },
            text: Rect {
                x: inner
                    .x
                    .saturating_add(inner.width.saturating_sub(SIDE_TEXT_WIDTH)),
                width: SIDE_TEXT_WIDTH.min(inner.width),
                ..inner
            },
        });
    let area = |a: &Arrangement| match a {
        Arrangement::Stacked { chart, .. } | Arrangement::Side { chart, .. } => chart.area(),
        Arrangement::Text => 0,
    };
    match (stacked, side) {
        (Some(s), Some(d)) if area(&d) > area(&s) => d,
        (Some(s), _) => s,
        (None, Some(d)) => d,
        (None, None) => Arrangement::Text,
    }
}

/// The text of the pane, in order of what an operator needs first, wrapped to `width`.
fn text_lines(node: &NodeView, r: &ReplicaView, ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let mut lines = vec![summary(node, r, ctx)];
    let errors = [("IO", &r.last_io_error), ("SQL", &r.last_sql_error)];
    for (thread, error) in errors {
        if let Some(error) = error {
            lines.extend(error_lines(thread, error, t, width));
        }
    }
    lines.push(window_line(r, ctx.state.window, t));
    let io = r.bytes_behind.io;
    lines.push(position_line("recv ", &r.received, "io", io, t, width));
    let sql = r.bytes_behind.sql;
    lines.push(position_line("appl ", &r.applied, "sql", sql, t, width));
    lines.push(backlog_line(r, t));
    lines.extend(delay_line(r, t));
    match &node.gtid {
        Some(gtid) => lines.extend(gtid_lines(gtid, ctx.state.panes.expand_gtid, t, width)),
        None => lines.push(Line::from(vec![
            Span::styled("gtid ", t.muted),
            Span::styled("unknown", t.unknown),
        ])),
    }
    lines
}

/// Lag and SBM side by side, in the chart's colours, flagged when the alert engine holds that
/// they disagree: the one thing this pane exists to show.
fn summary(node: &NodeView, r: &ReplicaView, ctx: &Ctx<'_>) -> Line<'static> {
    let t = ctx.theme;
    let lag_style = Style::new().fg(t.lag).add_modifier(Modifier::BOLD);
    let sbm_style = Style::new().fg(t.sbm).add_modifier(Modifier::BOLD);
    let mut spans = vec![Span::styled("lag ", t.muted)];
    spans.push(match r.heartbeat_lag.text() {
        Some(lag) => Span::styled(lag, lag_style),
        None => Span::styled("unknown", t.unknown),
    });
    spans.push(Span::styled("  SBM ", t.muted));
    spans.push(match r.seconds_behind_source {
        Some(s) => Span::styled(units::secs(s), sbm_style),
        None => Span::styled("NULL", t.unknown),
    });
    let lie = ctx.snapshot.alerts.active.iter().find(|a| {
        matches!(
            a.kind,
            AlertKind::SbmUnderstatesLag | AlertKind::SbmOverstatesLag
        ) && a.node.as_deref() == Some(node.name.as_str())
    });
    match lie.map(|a| a.kind) {
        Some(AlertKind::SbmUnderstatesLag) => {
            spans.push(Span::styled("  ◆ SBM understates lag", t.critical));
        }
        Some(_) => spans.push(Span::styled("  ◇ SBM overstates lag", t.warning)),
        None => {}
    }
    if node.conn != ConnState::Up {
        spans.push(Span::styled(
            format!("  node {}", node.conn.name()),
            t.warning,
        ));
        if let Some(age) = node.sample_age {
            spans.push(Span::styled(
                format!(", values {} old", units::duration(age)),
                t.muted,
            ));
        }
    }
    Line::from(spans)
}

fn error_lines(thread: &str, e: &ThreadError, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut tokens = vec![Token::new(
        format!("{thread} error {}:", e.errno),
        t.critical,
    )];
    tokens.extend(words(&e.message, t.critical));
    if let Some(at) = &e.timestamp {
        // One token: a timestamp split over two lines reads as two values.
        tokens.push(Token::new(format!("(at {at})"), t.muted));
    }
    wrap(tokens, width, INDENT)
}

fn window_line(r: &ReplicaView, window: Window, t: &Theme) -> Line<'static> {
    let label = Span::styled(format!("{:<4}", chart::window_label(window)), t.title);
    let stats = r
        .windows
        .iter()
        .find(|(w, _)| *w == window)
        .and_then(|(_, s)| s.as_ref());
    let Some(s) = stats else {
        return Line::from(vec![label, Span::styled("no lag samples", t.unknown)]);
    };
    let pair = |name: &str, value: String| {
        [
            Span::styled(format!("{name} "), t.muted),
            Span::styled(format!("{value}  "), t.text),
        ]
    };
    let mut spans = vec![label];
    spans.extend(pair("p50", units::lag(s.p50)));
    spans.extend(pair("p99", units::lag(s.p99)));
    spans.extend(pair("max", units::lag(s.max)));
    spans.extend(pair("n", s.samples.to_string()));
    Line::from(spans)
}

/// `recv file:pos  io 12.3 MiB behind`; the trailing word goes first when the line is too wide
/// (a 46-column pane with a long file name), the numbers never.
fn position_line(
    label: &'static str,
    pos: &BinlogPos,
    thread: &str,
    behind: Option<u64>,
    t: &Theme,
    width: usize,
) -> Line<'static> {
    let at = if pos.file.is_empty() {
        Span::styled("—", t.unknown)
    } else {
        Span::styled(format!("{}:{}", pos.file, pos.pos), t.text)
    };
    let mut line = Line::from(vec![
        Span::styled(label, t.muted),
        at,
        Span::styled(format!("  {thread} "), t.muted),
        known(behind.map(units::bytes), t),
    ]);
    let suffix = " behind";
    if line.width().saturating_add(suffix.len()) <= width {
        line.push_span(Span::styled(suffix, t.muted));
    }
    line
}

fn backlog_line(r: &ReplicaView, t: &Theme) -> Line<'static> {
    let b = r.gtid_backlog;
    Line::from(vec![
        Span::styled("backlog ", t.muted),
        known(b.not_received.map(|n| n.to_string()), t),
        Span::styled(" trx to receive · ", t.muted),
        known(b.not_applied.map(|n| n.to_string()), t),
        Span::styled(" to apply", t.muted),
    ])
}

/// Only for a delayed replica: an undelayed one would spend a row saying so.
fn delay_line(r: &ReplicaView, t: &Theme) -> Option<Line<'static>> {
    let delay = r.sql_delay.filter(|d| *d > 0)?;
    let remaining = match r.sql_remaining_delay {
        Some(left) => Span::styled(format!("{} left", units::secs(left)), t.text),
        None => Span::styled("not waiting", t.muted),
    };
    Some(Line::from(vec![
        Span::styled("SQL_Delay ", t.muted),
        Span::styled(units::secs(delay), t.text),
        Span::styled(" · ", t.muted),
        remaining,
    ]))
}

/// `MySQL`'s executed set, or `MariaDB`'s three lists with equal ones merged under one label
/// (`slave=binlog=current`): a list that differs is then the one that stands out.
fn gtid_lines(gtid: &GtidState, expand: bool, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let entries: Vec<(String, String)> = match gtid {
        GtidState::Mysql { executed } => vec![("executed".to_owned(), executed.to_string())],
        GtidState::Mariadb {
            binlog_pos,
            slave_pos,
            current_pos,
        } => merge_equal(&[
            ("slave", slave_pos),
            ("binlog", binlog_pos),
            ("current", current_pos),
        ]),
    };
    let mut lines = Vec::new();
    for (label, value) in entries {
        let head = Token::new("gtid ", t.muted).and(format!("{label} "), t.muted);
        if value.is_empty() {
            lines.push(Line::from(
                head.spans_with(Span::styled("(empty)", t.muted)),
            ));
        } else if expand {
            // Break after the commas of the set, glued, so a copied line pastes back whole.
            let parts = value
                .split_inclusive(',')
                .map(|p| Token::new(p, t.text).glued());
            lines.extend(wrap(std::iter::once(head).chain(parts), width, INDENT));
        } else {
            let value = Span::styled(abbreviate(&value, GTID_CHARS), t.text);
            lines.push(Line::from(head.spans_with(value)));
        }
    }
    lines
}

fn merge_equal(lists: &[(&str, &GtidList)]) -> Vec<(String, String)> {
    let mut merged: Vec<(String, String)> = Vec::new();
    for (name, list) in lists {
        let value = list.to_string();
        match merged.iter_mut().find(|(_, v)| *v == value) {
            Some((label, _)) => {
                label.push('=');
                label.push_str(name);
            }
            None => merged.push(((*name).to_owned(), value)),
        }
    }
    merged
}

/// A value the server did not give (or rwtop could not work out) reads `?`, never 0.
fn known(value: Option<String>, t: &Theme) -> Span<'static> {
    match value {
        Some(v) => Span::styled(v, t.text),
        None => Span::styled("?", t.unknown),
    }
}

/// The first `max` characters and `…` when there were more.
pub(super) fn abbreviate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_owned(),
    }
}

fn char_width(c: char) -> usize {
    let mut buf = [0_u8; 4];
    Span::raw(&*c.encode_utf8(&mut buf)).width()
}

/// `text` cut to `width` columns, ending in `…` when cut: for one-line entries whose end is
/// less important than the rows below them.
pub(super) fn ellipsize(text: &str, width: usize) -> String {
    if Span::raw(text).width() <= width {
        return text.to_owned();
    }
    let mut used = 0_usize;
    let mut out = String::new();
    for c in text.chars() {
        let w = char_width(c);
        if used.saturating_add(w) > width.saturating_sub(1) {
            break;
        }
        used = used.saturating_add(w);
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// A unit of wrapped text, kept on one line unless longer than a whole line: a word, or an
/// alert's `name=value` pair in two styles.
pub(super) struct Token {
    parts: Vec<(String, Style)>,
    /// Joined to the previous token without a space (pieces of a GTID set).
    glued: bool,
}

impl Token {
    pub(super) fn new(text: impl Into<String>, style: Style) -> Self {
        Self {
            parts: vec![(text.into(), style)],
            glued: false,
        }
    }

    #[must_use]
    pub(super) fn and(mut self, text: impl Into<String>, style: Style) -> Self {
        self.parts.push((text.into(), style));
        self
    }

    #[must_use]
    pub(super) fn glued(mut self) -> Self {
        self.glued = true;
        self
    }

    fn width(&self) -> usize {
        self.parts
            .iter()
            .map(|(text, _)| Span::raw(text.as_str()).width())
            .sum()
    }

    pub(super) fn into_spans(self) -> impl Iterator<Item = Span<'static>> {
        self.parts
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
    }

    fn spans_with(self, last: Span<'static>) -> Vec<Span<'static>> {
        self.into_spans().chain(std::iter::once(last)).collect()
    }
}

/// The words of `text`, each a token in `style`.
pub(super) fn words(text: &str, style: Style) -> impl Iterator<Item = Token> + '_ {
    text.split_whitespace().map(move |w| Token::new(w, style))
}

/// Greedy word wrap to `width` columns; continuation lines start `indent` columns in, and a
/// token longer than a line is broken wherever the line ends.
pub(super) fn wrap(
    tokens: impl IntoIterator<Item = Token>,
    width: usize,
    indent: usize,
) -> Vec<Line<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let mut w = Wrapper {
        width,
        // Continuation lines must keep at least one column for text.
        indent: if indent < width { indent } else { 0 },
        lines: Vec::new(),
        line: Vec::new(),
        used: 0,
        empty: true,
    };
    for token in tokens {
        let space = usize::from(!token.glued && !w.empty);
        if !w.empty && w.used.saturating_add(space).saturating_add(token.width()) > width {
            w.newline();
        } else if space == 1 {
            w.push(' ', Style::new());
        }
        for (text, style) in &token.parts {
            for c in text.chars() {
                w.push(c, *style);
            }
        }
    }
    if !w.empty {
        w.newline();
    }
    w.lines
}

struct Wrapper {
    width: usize,
    indent: usize,
    lines: Vec<Line<'static>>,
    line: Vec<(String, Style)>,
    /// Columns taken on the current line, indent included.
    used: usize,
    /// Nothing but the indent on the current line yet.
    empty: bool,
}

impl Wrapper {
    fn push(&mut self, c: char, style: Style) {
        let w = char_width(c);
        if !self.empty && self.used.saturating_add(w) > self.width {
            self.newline();
        }
        match self.line.last_mut() {
            Some((text, s)) if *s == style => text.push(c),
            _ => self.line.push((c.to_string(), style)),
        }
        self.used = self.used.saturating_add(w);
        self.empty = false;
    }

    fn newline(&mut self) {
        let spans: Vec<Span<'static>> = std::mem::take(&mut self.line)
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
            .collect();
        self.lines.push(Line::from(spans));
        if self.indent > 0 {
            self.line.push((" ".repeat(self.indent), Style::new()));
        }
        self.used = self.indent;
        self.empty = true;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use ratatui::buffer::Buffer;
    use ratatui::style::Color;

    use super::*;
    use crate::alerts::testkit::{Topo, mariadb_gtid, mysql_gtid};
    use crate::alerts::{Alert, Severity};
    use crate::store::Snapshot;
    use crate::store::lag::Lag;
    use crate::store::series::Point;
    use crate::ui::UiState;

    const UUID_A: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    const UUID_B: &str = "4e11fa47-71ca-11e1-9e33-c80aa9429562";

    fn draw(snapshot: &Snapshot, state: &UiState, width: u16, height: u16) -> Buffer {
        super::super::header::tests::draw(render, snapshot, state, width, height)
    }

    use super::super::header::tests::{buffer_text as text, find, lines as rows};

    fn is_braille(c: char) -> bool {
        ('\u{2801}'..='\u{28FF}').contains(&c)
    }

    /// One point a second over the last `n` seconds before the snapshot; `at(ago_s)` gives the
    /// point's readings.
    fn fill(
        topo: &mut Topo,
        n: u64,
        at: impl Fn(u64) -> (Option<u32>, Option<u32>),
    ) -> Arc<[Point]> {
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
        topo.replica_mut("r1", move |r| r.series = shared);
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
            severity: Severity::Critical,
            since: chrono::DateTime::UNIX_EPOCH,
            last_seen: chrono::DateTime::UNIX_EPOCH,
            count: 2,
            evidence: Vec::new(),
            cause: String::new(),
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
        topo.node_mut("r1", |n| n.gtid = Some(mysql_gtid(&set)));
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
            n.gtid = Some(GtidState::Mariadb {
                binlog_pos: own.clone(),
                slave_pos: applied,
                current_pos: own,
            });
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
            n.replica = None;
            n.conn = ConnState::Connecting;
        });
        let all = text(&draw(&topo.snapshot, &UiState::default(), 48, 12));
        assert!(
            all.contains("no replication status yet · node connecting"),
            "{all}"
        );
        topo.snapshot
            .nodes
            .retain(|n| n.replica.is_none() && n.source.is_none());
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
    fn wrap_keeps_tokens_whole_and_breaks_only_overlong_ones() {
        let s = Style::new();
        let lines = wrap(words("aa bbb cc dddddddddd", s), 6, 2);
        let got: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert_eq!(got, ["aa bbb", "  cc", "  dddd", "  dddd", "  dd"]);
        assert!(wrap(words("x", s), 0, 2).is_empty());
        let glued = [Token::new("a,", s), Token::new("b", s).glued()];
        assert_eq!(
            wrap(glued, 5, 0)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["a,b"]
        );
        assert_eq!(abbreviate("abcdef", 3), "abc…");
        assert_eq!(abbreviate("abc", 3), "abc");
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(ellipsize("abcdef", 0), "");
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
        topo.node_mut("r1", |n| n.gtid = Some(mariadb_gtid("0-1-100,1-2-5,2-3-7")));
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
}
