//! The pane's text, in order of what an operator needs first: lag against SBM, the threads'
//! errors, a waiting DDL's blocker, the node's other channels, window percentiles, binlog positions and bytes behind, GTID
//! backlog, delay, parallel appliers (when there are several), GTID state; the table row events
//! are applied on, after the catch-up.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::wrap::{Token, abbreviate, words, wrap};
use crate::alerts::AlertKind;
use crate::gtid::GtidList;
use crate::mysql::{BinlogPos, GtidState, IoRunning, ThreadError};
use crate::poll::ConnState;
use crate::store::ReplicaView;
use crate::store::windows::Window;
use crate::ui::panels::chart;
use crate::ui::panels::status_marks::{lag_span, sbm_span};
use crate::ui::{RenderCtx, ReplicaRow, Theme};
use crate::units;

/// Abbreviated GTID sets keep this many characters: a UUID and the start of its intervals, or
/// the first few MariaDB domains, enough to recognise a set without it wrapping.
const GTID_CHARS: usize = 40;
/// Continuation lines of wrapped text are indented, so an entry's start stays visible.
const INDENT: usize = 2;

/// The text of the pane, in order of what an operator needs first, wrapped to `width`; with
/// `brief`, a caught-up channel's catch-up line (nothing to close) gives its row to the rest.
pub(super) fn lines(
    row: &ReplicaRow<'_>,
    r: &ReplicaView,
    ctx: &RenderCtx<'_>,
    width: usize,
    brief: bool,
) -> Vec<Line<'static>> {
    let (t, node) = (ctx.theme, row.node);
    let mut lines = vec![summary(row, r, ctx)];
    // An unknown lag says why, and what would make it known: never a bare "unknown".
    if let crate::store::lag::Lag::Unknown { reason } = &r.heartbeat_lag {
        let mut tokens = vec![Token::new("why:".to_owned(), t.muted)];
        tokens.extend(words(reason, t.unknown));
        lines.extend(wrap(tokens, width, INDENT));
    }
    if !node.answers() {
        // Nothing live is known of a channel whose node does not answer: its lag (unknown), the
        // node's other channels, and the readings taken while it answered.
        lines.extend(others(row, r, t, width));
        lines.push(window_line(&r.windows, ctx.state.window, t));
        return lines;
    }
    // A delayed replica's window comes first: when it matters, it matters at once.
    lines.extend(super::headroom::protection_lines(r, ctx.snapshot, t, width));
    lines.extend(split_lines(r, t, width));
    let errors = [("IO", &r.last_io_error), ("SQL", &r.last_sql_error)];
    for (thread, error) in errors {
        if let Some(error) = error {
            lines.extend(error_lines(thread, error, t, width));
        }
    }
    lines.extend(super::blockers::lines(node, t, width, INDENT));
    lines.extend(others(row, r, t, width));
    lines.push(window_line(&r.windows, ctx.state.window, t));
    lines.extend(super::semisync::lines(row, r, ctx, width, INDENT));
    if !(brief && r.catch_up.state == crate::store::apply_rate::CatchUpState::CaughtUp) {
        lines.extend(super::catch_up::lines(r, t, width, INDENT));
    }
    lines.extend(super::appliers::row_event_lines(&r.appliers, t, width));
    let io = r.bytes_behind.io;
    lines.push(position_line("recv ", &r.received, "io", io, t, width));
    let sql = r.bytes_behind.sql;
    lines.push(position_line("appl ", &r.applied, "sql", sql, t, width));
    lines.push(backlog_line(r, t));
    let source = row.source();
    let snapshot = ctx.snapshot;
    lines.extend(super::headroom::relay_lines(
        r, source, snapshot, t, width, brief,
    ));
    lines.extend(super::headroom::disk_lines(node, t, width, brief));
    lines.extend(delay_line(r, t));
    lines.extend(super::appliers::lines(&r.appliers, t, width));
    match &node.gtid() {
        Some(gtid) => lines.extend(gtid_lines(gtid, ctx.state.panes.expand_gtid, t, width)),
        None => lines.push(Line::from(vec![
            Span::styled("gtid ", t.muted),
            Span::styled("unknown", t.unknown),
        ])),
    }
    lines
}

/// `transport 41.00s  apply 0.00s  all of it is transport: …`: the lag in its two parts, and
/// which holds it; an unknown part says why. Only once the lag is worth a word (a second): a
/// caught-up channel's pane keeps its rows for the rest, and an unknown lag says why above.
fn split_lines(r: &ReplicaView, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let split = &r.lag_split;
    if r.heartbeat_lag.value() < Some(crate::store::lag_split::WORTH_A_WORD) {
        return Vec::new();
    }
    let part = |name: &str, lag| {
        let value = lag_span(lag, t);
        Token::new(format!("{name} "), t.muted).and(value.content.into_owned(), value.style)
    };
    let mut tokens = vec![
        part("transport", &split.transport),
        part(" apply", &split.apply),
    ];
    if let Some(holder) = split.holder() {
        tokens.push(Token::new(" ", t.muted));
        tokens.extend(words(holder.words(), t.text));
    } else if let crate::store::lag::Lag::Unknown { reason } = &split.transport {
        tokens.extend(words(reason, t.unknown));
    }
    wrap(tokens, width, INDENT)
}

/// A line each for the node's channels other than `r`.
fn others(row: &ReplicaRow<'_>, r: &ReplicaView, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let node = row.node;
    let others = node.channels.iter().filter(|c| !std::ptr::eq(*c, r));
    others
        .flat_map(|other| {
            let other = ReplicaRow {
                node,
                channel: Some(other),
            };
            other_channel(&other, t, width)
        })
        .collect()
}

/// Lag and SBM side by side, in the chart's colours, flagged when the alert engine holds that
/// they disagree: the one thing this pane exists to show.
fn summary(row: &ReplicaRow<'_>, r: &ReplicaView, ctx: &RenderCtx<'_>) -> Line<'static> {
    let (t, node) = (ctx.theme, row.node);
    let lag_style = Style::new().fg(t.lag).add_modifier(Modifier::BOLD);
    let sbm_style = Style::new().fg(t.sbm).add_modifier(Modifier::BOLD);
    let mut spans = vec![Span::styled("lag ", t.muted)];
    spans.push(match r.heartbeat_lag.text() {
        Some(lag) => Span::styled(lag, lag_style),
        None => Span::styled("unknown", t.unknown),
    });
    // The true lag includes a deliberate delay; the alerts judge what lies beyond it.
    if let Some(delay) = r.sql_delay.filter(|d| *d > 0) {
        spans.push(Span::styled(
            format!(" (delay {})", units::secs(delay)),
            t.muted,
        ));
    }
    // A node that does not answer reports no SBM, not even NULL.
    if node.answers() {
        spans.push(Span::styled("  SBM ", t.muted));
        spans.push(match r.seconds_behind_source {
            Some(s) => Span::styled(units::secs(s), sbm_style),
            None => Span::styled("NULL", t.unknown),
        });
    }
    let lie = ctx.snapshot.alerts.active.iter().find(|a| {
        matches!(
            a.kind,
            AlertKind::SbmUnderstatesLag | AlertKind::SbmOverstatesLag
        ) && a.node.as_deref() == Some(node.name.as_str())
            && a.channel.as_deref() == row.channel_name()
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
                format!(", last answer {} ago", units::duration(age)),
                t.muted,
            ));
        }
    }
    Line::from(spans)
}

/// `also agg/p2 ← p2  Conn/Yes  lag ?  SBM NULL  IO error 2003`: another channel of the node, so
/// a broken one shows whichever is selected.
fn other_channel(row: &ReplicaRow<'_>, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let Some(r) = row.channel else {
        return Vec::new();
    };
    let source = row.source().map_or_else(
        || Token::new(r.source_address.clone(), t.muted),
        |s| Token::new(s.to_owned(), t.text),
    );
    let io = match r.io_running {
        IoRunning::Yes => ("Yes", t.ok),
        IoRunning::Connecting => ("Conn", t.warning),
        IoRunning::No => ("No", t.critical),
    };
    let sql = if r.sql_running {
        ("Yes", t.ok)
    } else {
        ("No", t.critical)
    };
    let value = |label: &str, span: Span<'static>| {
        Token::new(label, t.muted).and(span.content.into_owned(), span.style)
    };
    let mut tokens = vec![
        Token::new("also", t.muted),
        Token::new(row.label(), t.title),
        Token::new("←", t.muted),
        source,
    ];
    if !row.node.answers() {
        // Its node does not answer: only that the lag is unknown.
        tokens.push(value("lag ", lag_span(&r.heartbeat_lag, t)));
        return wrap(tokens, width, INDENT);
    }
    tokens.extend([
        Token::new(io.0, io.1).and("/", t.muted).and(sql.0, sql.1),
        value("lag ", lag_span(&r.heartbeat_lag, t)),
        value("SBM ", sbm_span(r.seconds_behind_source, t)),
    ]);
    let errors = [("IO", &r.last_io_error), ("SQL", &r.last_sql_error)];
    for (thread, error) in errors {
        if let Some(e) = error {
            tokens.push(Token::new(
                format!("{thread} error {}", e.errno),
                t.critical,
            ));
        }
    }
    wrap(tokens, width, INDENT)
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

pub(super) fn window_line(
    windows: &[(Window, Option<crate::store::windows::WindowStats>)],
    window: Window,
    t: &Theme,
) -> Line<'static> {
    let label = Span::styled(format!("{:<4}", chart::window_label(window)), t.title);
    let stats = windows
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
