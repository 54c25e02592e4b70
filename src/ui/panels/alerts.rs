//! The alerts pane: what is wrong now, then what happened.
//!
//! Active alerts come first, critical before warning, each with its cause and the numbers behind
//! it; the log of raises and clears fills whatever rows are left. Severity is a coloured tag and a
//! glyph (filled ◆ critical, hollow ◇ warning), so it still reads under `NO_COLOR` or colour
//! blindness. When the active alerts do not fit, every one keeps at least its header line: an
//! alert scrolled out of sight is an alert missed.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::block;
use super::detail::{Token, ellipsize, words, wrap};
use crate::alerts::{Alert, LogEntry, Severity};
use crate::ui::{RenderCtx, Theme};
use crate::units;

/// Alert bodies (cause, evidence) sit this far in under their header line.
const BODY_INDENT: usize = 2;
/// From this width a log entry's summary reads on one line.
const WIDE_LOG: usize = 60;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let view = &ctx.snapshot.alerts;
    let t = ctx.theme;
    let mut active: Vec<&Alert> = view.active.iter().collect();
    // The engine already orders them; sorting again (stably) keeps the promise for any view.
    active.sort_by_key(|a| a.severity != Severity::Critical);
    let title = if active.is_empty() {
        " alerts ".to_owned()
    } else {
        format!(" alerts · {} active ", active.len())
    };
    let pane = block(&title, t);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    if width == 0 || height == 0 {
        return;
    }
    let mut lines = if active.is_empty() {
        vec![Line::styled("✓ no active alerts", t.ok)]
    } else {
        active_lines(&active, ctx.snapshot.taken_at, t, width, height)
    };
    let room = height.saturating_sub(lines.len());
    if room >= 2 {
        lines.push(rule(width, t));
        lines.extend(log_lines(&view.log, room.saturating_sub(1), width, t));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Full blocks when they all fit. Otherwise every alert keeps at least its first line and the
/// rows left go to the alerts in order, critical first, each cut short when the rest need the
/// room; with fewer rows than alerts, the first lines that fit and a count of the others.
fn active_lines(
    active: &[&Alert],
    now: DateTime<Utc>,
    t: &Theme,
    width: usize,
    height: usize,
) -> Vec<Line<'static>> {
    let blocks: Vec<Vec<Line<'static>>> = active
        .iter()
        .map(|a| alert_block(a, now, t, width))
        .collect();
    if blocks.iter().map(Vec::len).sum::<usize>() <= height {
        return blocks.concat();
    }
    if active.len() <= height {
        let mut out = Vec::new();
        let mut left = height;
        for (i, block) in blocks.into_iter().enumerate() {
            let after = active.len().saturating_sub(i.saturating_add(1));
            let take = block.len().min(left.saturating_sub(after)).max(1);
            left = left.saturating_sub(take);
            let cut = take < block.len();
            let mut shown: Vec<Line<'static>> = block.into_iter().take(take).collect();
            if cut && let Some(last) = shown.pop() {
                shown.push(ellipsize_line(last, width));
            }
            out.extend(shown);
        }
        return out;
    }
    let shown = height.saturating_sub(1);
    let mut out: Vec<Line<'static>> = active
        .iter()
        .take(shown)
        .map(|a| header_line(a, now, t))
        .collect();
    out.push(Line::styled(
        format!("+{} more active", active.len().saturating_sub(shown)),
        t.warning,
    ));
    out
}

fn severity_tag(severity: Severity, t: &Theme) -> Token {
    match severity {
        Severity::Critical => Token::new("◆ CRIT", t.critical),
        Severity::Warning => Token::new("◇ WARN", t.warning),
    }
}

/// Tag, kind (the JSON name, so it greps), place (`r1`, or `agg/p2` for a named channel), and
/// how long it has held.
fn header(a: &Alert, now: DateTime<Utc>, t: &Theme) -> Vec<Token> {
    let age = u64::try_from((now - a.since).num_seconds()).unwrap_or(0);
    let mut tokens = vec![
        severity_tag(a.severity, t),
        Token::new(a.kind.name(), t.text.add_modifier(Modifier::BOLD)),
    ];
    if let Some(place) = a.place() {
        tokens.push(Token::new(place, t.title));
    }
    tokens.push(Token::new(format!("for {}", units::secs(age)), t.muted));
    tokens
}

/// The header on one line, cut at the pane's edge.
fn header_line(a: &Alert, now: DateTime<Utc>, t: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for token in header(a, now, t) {
        if !spans.is_empty() {
            spans.push(Span::raw(" "));
        }
        spans.extend(token.into_spans());
    }
    Line::from(spans)
}

fn alert_block(a: &Alert, now: DateTime<Utc>, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut lines = wrap(header(a, now, t), width, BODY_INDENT);
    let body_width = width.saturating_sub(BODY_INDENT);
    let mut body = wrap(words(&a.cause, t.text), body_width, 0);
    let evidence = a
        .evidence
        .iter()
        .map(|(name, value)| Token::new(format!("{name}="), t.muted).and(value.clone(), t.text));
    body.extend(wrap(evidence, body_width, 0));
    lines.extend(body.into_iter().map(|line| {
        let mut spans = vec![Span::raw(" ".repeat(BODY_INDENT))];
        spans.extend(line.spans);
        Line::from(spans)
    }));
    lines
}

fn rule(width: usize, t: &Theme) -> Line<'static> {
    let head = "── log, newest first (UTC) ";
    let fill = width.saturating_sub(Span::raw(head).width());
    Line::styled(
        ellipsize(&format!("{head}{}", "─".repeat(fill)), width),
        t.muted,
    )
}

/// Newest first, as many as fit. A wide pane gives each entry one line; a narrow one (the 80×24
/// layout leaves 30 columns) two, or the summary would be cut to a dozen characters.
fn log_lines(log: &[LogEntry], rows: usize, width: usize, t: &Theme) -> Vec<Line<'static>> {
    if log.is_empty() {
        return vec![Line::styled("no alerts raised yet", t.muted)];
    }
    let per_entry = if width >= WIDE_LOG { 1 } else { 2 };
    let mut out = Vec::new();
    for e in log {
        let left = rows.saturating_sub(out.len());
        if left == 0 {
            break;
        }
        let (mark, style) = if e.raised {
            let style = match e.kind.severity() {
                Severity::Critical => t.critical,
                Severity::Warning => t.warning,
            };
            ("▲ raised ", style)
        } else {
            ("▼ cleared", t.ok)
        };
        let head = Token::new(e.at.format("%H:%M:%S").to_string(), t.muted);
        let tokens = [head, Token::new(mark, style)]
            .into_iter()
            .chain(words(&e.summary, t.text));
        let lines = wrap(tokens, width, BODY_INDENT);
        let take = lines.len().min(per_entry).min(left);
        let cut = take < lines.len();
        let mut shown: Vec<Line<'static>> = lines.into_iter().take(take).collect();
        if cut && let Some(last) = shown.pop() {
            shown.push(ellipsize_line(last, width));
        }
        out.extend(shown);
    }
    out
}

/// Ends `line` in `…` within `width` columns: it marks text that goes on but is not shown.
fn ellipsize_line(line: Line<'static>, width: usize) -> Line<'static> {
    let mut parts: Vec<(String, Style)> = line
        .spans
        .into_iter()
        .map(|s| (s.content.into_owned(), s.style))
        .collect();
    let used = |parts: &[(String, Style)]| -> usize {
        parts
            .iter()
            .map(|(text, _)| Span::raw(text.as_str()).width())
            .sum()
    };
    while used(&parts).saturating_add(1) > width {
        let Some((text, _)) = parts.last_mut() else {
            break;
        };
        if text.pop().is_none() {
            parts.pop();
        }
    }
    let style = parts.last().map_or_else(Style::new, |(_, s)| *s);
    if width > 0 {
        parts.push(("…".to_owned(), style));
    }
    Line::from(
        parts
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
            .collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
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
}
