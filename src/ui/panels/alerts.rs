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
use crate::ui::keys::Command;
use crate::ui::{RenderCtx, Theme};
use crate::units;

/// Alert bodies (cause, evidence) sit this far in under their header line.
const BODY_INDENT: usize = 2;
/// From this width a log entry's summary reads on one line.
const WIDE_LOG: usize = 60;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let view = &ctx.snapshot.alerts;
    let t = ctx.theme;
    let title = match (view.active.len(), view.incidents.len()) {
        (0, _) => " alerts ".to_owned(),
        (n, 0) => format!(" alerts · {n} active "),
        (n, i) => format!(" alerts · {n} in {} ", plural(i, "incident")),
    };
    let pane = block(&title, t);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    if width == 0 || height == 0 {
        return;
    }
    let mut lines = if view.active.is_empty() {
        vec![Line::styled("✓ no active alerts", t.ok)]
    } else {
        let items = if view.incidents.is_empty() {
            alert_items(&view.active, ctx.snapshot.taken_at, t, width)
        } else {
            incident_items(ctx, width)
        };
        active_lines(items, t, width, height)
    };
    let room = height.saturating_sub(lines.len());
    if room >= 2 {
        lines.push(rule(width, t));
        lines.extend(log_lines(&view.log, room.saturating_sub(1), width, t));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// One entry of the active part: its first line alone (when rows are short) and in full.
struct Item {
    head: Line<'static>,
    block: Vec<Line<'static>>,
}

/// Each alert on its own, critical first: a view without incidents (a recording made before
/// them).
fn alert_items(active: &[Alert], now: DateTime<Utc>, t: &Theme, width: usize) -> Vec<Item> {
    let mut active: Vec<&Alert> = active.iter().collect();
    // The engine already orders them; sorting again (stably) keeps the promise for any view.
    active.sort_by_key(|a| a.severity != Severity::Critical);
    active
        .into_iter()
        .map(|a| {
            let tokens = header(a, a.severity, now, t);
            Item {
                head: one_line(tokens.clone()),
                block: alert_block(tokens, a, BODY_INDENT, t, width),
            }
        })
        .collect()
}

/// Each incident as its root alert, tagged with the incident's severity, and its symptoms
/// folded into one line under it, or each shown under it when unfolded.
fn incident_items(ctx: &RenderCtx<'_>, width: usize) -> Vec<Item> {
    let (view, t, now) = (&ctx.snapshot.alerts, ctx.theme, ctx.snapshot.taken_at);
    let by_key = |key: &str| view.active.iter().find(|a| a.key() == key);
    let unfold = ctx.state.keys.key_for(Command::ExpandIncidents);
    view.incidents
        .iter()
        .filter_map(|incident| {
            let root = by_key(&incident.id)?;
            let members: Vec<&Alert> = incident
                .alerts
                .iter()
                .skip(1)
                .filter_map(|k| by_key(k))
                .collect();
            let mut tokens = header(root, incident.severity, now, t);
            if incident.recovering {
                tokens.insert(
                    tokens.len().saturating_sub(1),
                    Token::new("recovering", t.ok),
                );
            }
            let head = one_line(tokens.clone());
            let mut block = alert_block(tokens, root, BODY_INDENT, t, width);
            if members.is_empty() {
                return Some(Item { head, block });
            }
            if ctx.state.panes.expand_incidents {
                for member in members {
                    block.extend(member_block(member, now, t, width));
                }
            } else {
                block.extend(folded_line(&members, unfold.as_deref(), t, width));
            }
            Some(Item { head, block })
        })
        .collect()
}

/// `▸ 3 symptoms folded: lag_p99_high r1, sbm_understates_lag c1 (inherited), … (e unfolds)`.
fn folded_line(
    members: &[&Alert],
    unfold: Option<&str>,
    t: &Theme,
    width: usize,
) -> Vec<Line<'static>> {
    let mut tokens = vec![Token::new(
        format!("▸ {} folded:", plural(members.len(), "symptom")),
        t.muted,
    )];
    for (i, m) in members.iter().enumerate() {
        let comma = if i + 1 < members.len() { "," } else { "" };
        let place = m.place().map(|p| format!(" {p}")).unwrap_or_default();
        let inherited = if m.membership.inherited {
            " (inherited)"
        } else {
            ""
        };
        tokens.push(Token::new(
            format!("{}{place}{inherited}{comma}", m.kind.name()),
            t.text,
        ));
    }
    if let Some(key) = unfold {
        tokens.push(Token::new(format!("({key} unfolds)"), t.muted));
    }
    indented(
        wrap(tokens, width.saturating_sub(BODY_INDENT), BODY_INDENT),
        BODY_INDENT,
    )
}

/// A symptom under its incident: `▾` and its own header, cause and evidence, one step in.
fn member_block(a: &Alert, now: DateTime<Utc>, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut tokens = vec![Token::new("▾", t.muted)];
    tokens.extend(header(a, a.severity, now, t));
    if a.membership.inherited {
        tokens.insert(
            tokens.len().saturating_sub(1),
            Token::new("inherited", t.muted),
        );
    }
    indented(
        alert_block(tokens, a, BODY_INDENT, t, width.saturating_sub(BODY_INDENT)),
        BODY_INDENT,
    )
}

fn indented(lines: Vec<Line<'static>>, by: usize) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .map(|line| {
            let mut spans = vec![Span::raw(" ".repeat(by))];
            spans.extend(line.spans);
            Line::from(spans)
        })
        .collect()
}

/// Full blocks when they all fit. Otherwise every entry keeps at least its first line and the
/// rows left go to the entries in order, critical first, each cut short when the rest need the
/// room; with fewer rows than entries, the first lines that fit and a count of the others.
fn active_lines(items: Vec<Item>, t: &Theme, width: usize, height: usize) -> Vec<Line<'static>> {
    if items.iter().map(|i| i.block.len()).sum::<usize>() <= height {
        return items.into_iter().flat_map(|i| i.block).collect();
    }
    let count = items.len();
    if count <= height {
        let mut out = Vec::new();
        let mut left = height;
        for (i, item) in items.into_iter().enumerate() {
            let block = item.block;
            let after = count.saturating_sub(i.saturating_add(1));
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
    let mut out: Vec<Line<'static>> = items.into_iter().take(shown).map(|i| i.head).collect();
    out.push(Line::styled(
        format!("+{} more active", count.saturating_sub(shown)),
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

/// Tag (the severity given: an incident's for its root), kind (the JSON name, so it greps),
/// place (`r1`, or `agg/p2` for a named channel), and how long it has held.
fn header(a: &Alert, severity: Severity, now: DateTime<Utc>, t: &Theme) -> Vec<Token> {
    let age = u64::try_from((now - a.since).num_seconds()).unwrap_or(0);
    let mut tokens = vec![
        severity_tag(severity, t),
        Token::new(a.kind.name(), t.text.add_modifier(Modifier::BOLD)),
    ];
    if let Some(place) = a.place() {
        tokens.push(Token::new(place, t.title));
    }
    tokens.push(Token::new(format!("for {}", units::secs(age)), t.muted));
    tokens
}

/// Tokens on one line, cut at the pane's edge.
fn one_line(tokens: Vec<Token>) -> Line<'static> {
    let mut spans = Vec::new();
    for token in tokens {
        if !spans.is_empty() {
            spans.push(Span::raw(" "));
        }
        spans.extend(token.into_spans());
    }
    Line::from(spans)
}

/// The header wrapped, then the cause and the evidence `indent` columns in.
fn alert_block(
    header: Vec<Token>,
    a: &Alert,
    indent: usize,
    t: &Theme,
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines = wrap(header, width, indent);
    let body_width = width.saturating_sub(indent);
    let mut body = wrap(words(&a.cause, t.text), body_width, 0);
    let evidence = a
        .evidence
        .iter()
        .map(|(name, value)| Token::new(format!("{name}="), t.muted).and(value.clone(), t.text));
    body.extend(wrap(evidence, body_width, 0));
    lines.extend(indented(body, indent));
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
pub(crate) mod tests;
