//! The test-reads pane: how each read-after-write strategy fared on the selected replica, and
//! what the last test read there found.
//!
//! ```text
//! ╭ test reads · r1 · gtid-wait(1s) · running: bake-off 37/110 ──────────╮
//! │strategy           n fresh stale fell back err p99 wait primary       │
//! │none              10   40%   60%        0%   0       0s      0%       │
//! │gtid-wait(1s)     11   91%    0%        9%   0       1s      9%       │
//! │                                                                      │
//! │gtid-wait(1s): 1× timeout after 1s                                    │
//! │last fell back  gtid-wait(1s)  read on primary  waited 1s  5 queries  │
//! │cause: timeout after 1s                                               │
//! ╰──────────────────────────────────────────────────────────────────────╯
//! ```
//! A stale share is drawn critical: a stale read is what a strategy exists to prevent. When rows
//! are short the table gives way only to the last result's first line; the causes and the rest
//! fill what is left. Before any read, one line says which keys start one. Once a strategy held
//! a write (`gr-after`) a `p99 write` column appears, and once a fast mode routed on a monitored
//! position a `monitor` column says which monitor and how old its positions were.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

mod table;

use super::block;
use super::detail::{Token, ellipsize, words, wrap};
use crate::probe::{Outcome, ProbeResult, Strategy, TallyView};
use crate::ui::keys::Command;
use crate::ui::{RenderCtx, Theme};
use crate::units;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let t = ctx.theme;
    // The selected row's target: `agg/p2` for a named channel, as the reads on it are recorded.
    let target = ctx.state.selected_row(ctx.snapshot).map(|r| r.label());
    let replica = target.as_deref();
    let strategy = ctx.state.probe.current();
    let probes = &ctx.snapshot.probes;
    let title = title(replica, strategy, probes.running.as_deref(), area.width);
    let pane = block(&title, t);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    if width == 0 || height == 0 {
        return;
    }
    let Some(replica) = replica else {
        let none = words("no replica to test: none has been found yet", t.muted);
        frame.render_widget(Paragraph::new(wrap(none, width, 0)), inner);
        return;
    };
    let tallies: Vec<&TallyView> = probes.for_replica(replica).collect();
    let latest = probes.recent.iter().find(|r| r.target == replica);
    if tallies.is_empty() && latest.is_none() {
        frame.render_widget(Paragraph::new(hint(replica, ctx, width)), inner);
        return;
    }
    let mut result = cause_lines(&tallies, t, width);
    result.extend(
        latest
            .map(|r| result_lines(r, t, width))
            .unwrap_or_default(),
    );
    let wanted = if tallies.is_empty() {
        0
    } else {
        tallies.len() + 1
    };
    let mut table_rows = wanted.min(height.saturating_sub(usize::from(latest.is_some())));
    if table_rows < 2 {
        // A header alone says nothing: give its row to the result.
        table_rows = 0;
    }
    let bottom = pick(result, height - table_rows);
    let gap = usize::from(height > table_rows + bottom.len() && table_rows > 0);
    let [table_area, _, result_area] = Layout::vertical([
        Constraint::Length(to_u16(table_rows)),
        Constraint::Length(to_u16(gap)),
        Constraint::Fill(1),
    ])
    .areas(inner);
    if table_rows > 0 {
        table::render(frame, table_area, &tallies, strategy, t);
    }
    frame.render_widget(Paragraph::new(bottom), result_area);
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// `test reads · r1 · gtid-wait(1s) · running: …`, shortened to fit: the prefix goes first, then
/// the word `running`, then the end is cut.
fn title(replica: Option<&str>, strategy: Strategy, running: Option<&str>, width: u16) -> String {
    let room = usize::from(width).saturating_sub(4);
    let mut parts: Vec<String> = replica.map(str::to_owned).into_iter().collect();
    parts.push(strategy.to_string());
    let joined = |label: &str| {
        let mut all = parts.clone();
        all.extend(running.map(|what| format!("{label}{what}")));
        all.join(" · ")
    };
    let (full, plain, tight) = (
        format!("test reads · {}", joined("running: ")),
        joined("running: "),
        joined("▶ "),
    );
    let text = [full, plain]
        .into_iter()
        .find(|c| Span::raw(c.as_str()).width() <= room)
        .unwrap_or_else(|| ellipsize(&tight, room));
    format!(" {text} ")
}

/// One line naming the keys that start a test read, from the key table in force.
fn hint(replica: &str, ctx: &RenderCtx<'_>, width: usize) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let keys = &ctx.state.keys;
    let mut tokens: Vec<Token> =
        words(&format!("no test reads on {replica} yet:"), t.muted).collect();
    let mut say = |actions: &[Command], text: &str| {
        let names: Vec<String> = actions.iter().filter_map(|a| keys.key_for(*a)).collect();
        if names.is_empty() {
            return;
        }
        tokens.extend(names.into_iter().map(|k| Token::new(k, t.key)));
        tokens.extend(words(text, t.muted));
    };
    say(&[Command::TestRead], "runs one,");
    say(&[Command::Bakeoff], "bakes off every strategy,");
    say(
        &[Command::PrevStrategy, Command::NextStrategy],
        "change the strategy",
    );
    wrap(tokens, width, 2)
}

/// The last result's lines, each with its priority (0 first) for when rows are short.
fn result_lines(r: &ProbeResult, t: &Theme, width: usize) -> Vec<(u8, Line<'static>)> {
    // One token per fact, so a wrap never parts a label from its value; facts sit two spaces
    // apart, as in the detail pane.
    let mut tokens = vec![
        Token::new("last ", t.muted).and(r.outcome.label(), outcome_style(r.outcome, t)),
        Token::new(r.strategy.to_string(), t.text),
    ];
    if let Some(node) = &r.served_by {
        tokens.push(Token::new("read on ", t.muted).and(node.clone(), t.text));
    }
    let waited = units::duration(r.waited);
    tokens.push(Token::new("waited ", t.muted).and(waited, t.text));
    tokens.push(Token::new(r.queries.to_string(), t.text).and(" queries", t.muted));
    let last = tokens.len() - 1;
    let tokens = tokens.into_iter().enumerate().map(|(i, token)| {
        if i == last {
            token
        } else {
            token.and(" ", Style::new())
        }
    });
    let mut out: Vec<(u8, Line<'static>)> = wrap(tokens, width, 2)
        .into_iter()
        .take(2)
        .enumerate()
        .map(|(i, line)| (if i == 0 { 0 } else { 3 }, line))
        .collect();
    let style = match r.outcome {
        Outcome::Error => t.critical,
        _ => t.warning,
    };
    for (priority, label, text, style) in [
        (1, "cause: ", &r.cause, style),
        (2, "note: ", &r.note, t.muted),
    ] {
        if let Some(text) = text {
            let text = ellipsize(&format!("{label}{text}"), width);
            out.push((priority, Line::styled(text, style)));
        }
    }
    out
}

/// Why strategies fell back or failed, one line each, after everything else.
fn cause_lines(tallies: &[&TallyView], t: &Theme, width: usize) -> Vec<(u8, Line<'static>)> {
    tallies
        .iter()
        .filter_map(|v| {
            let cause = v.main_cause()?;
            let n = v.causes.get(cause).copied().unwrap_or(0);
            let text = ellipsize(&format!("{}: {n}× {cause}", v.strategy), width);
            Some((4, Line::styled(text, t.warning)))
        })
        .collect()
}

/// The `room` most important lines, in their order.
fn pick(lines: Vec<(u8, Line<'static>)>, room: usize) -> Vec<Line<'static>> {
    let mut ranks: Vec<(u8, usize)> = lines
        .iter()
        .enumerate()
        .map(|(i, (p, _))| (*p, i))
        .collect();
    ranks.sort_unstable();
    ranks.truncate(room);
    lines
        .into_iter()
        .enumerate()
        .filter(|(i, _)| ranks.iter().any(|(_, kept)| kept == i))
        .map(|(_, (_, line))| line)
        .collect()
}

fn outcome_style(outcome: Outcome, t: &Theme) -> Style {
    match outcome {
        Outcome::Fresh => t.ok,
        Outcome::Stale | Outcome::Error => t.critical,
        Outcome::FellBack => t.warning,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::probe::{ProbeBook, ProbeDefaults};
    use crate::store::testkit::Topo;
    use crate::ui::UiState;
    use crate::ui::panels::header::tests::{buffer_text, draw, has_all, lines, style_of};

    fn result(strategy: Strategy, outcome: Outcome, cause: Option<&str>) -> ProbeResult {
        ProbeResult {
            at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
            strategy,
            target: "r1".into(),
            served_by: Some("r1".into()),
            outcome,
            cause: cause.map(str::to_owned),
            note: None,
            waited: Duration::from_micros(3_200),
            total: Duration::from_millis(5),
            queries: 4,
            primary_reads: 0,
            cost: crate::probe::ProbeCost::default(),
        }
    }

    #[test]
    fn short_panes_keep_the_current_and_stale_rows() {
        let mut book = ProbeBook::default();
        let all = Strategy::all(&ProbeDefaults::default());
        for s in all.iter().filter(|s| !s.is_proxy_mode()) {
            let outcome = if *s == Strategy::None {
                Outcome::Stale
            } else {
                Outcome::Fresh
            };
            book.record(result(*s, outcome, None));
        }
        let mut snap = Topo::new().at(1);
        snap.probes = book.view();
        let mut state = UiState::default();
        state.probe.step(false); // pos-wait(1s)
        let buf = draw(render, &snap, &state, 60, 7);
        let text = buffer_text(&buf);
        // Header, none (stale), pos-wait (current), +9 more; then the last result.
        has_all(&text, "none|pos-wait(1s)|+9 more|last fresh");
        assert!(!text.contains("primary "), "{text}");
        // Stale is critical (none's 100% comes first), fresh ok, the current row stands out.
        let builtin = Theme::builtin();
        assert_eq!(style_of(&buf, "100%").fg, builtin.critical.fg);
        let rows = lines(&buf);
        let (y, row) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.starts_with("│pos-wait"))
            .unwrap();
        assert_eq!(buf[(1, to_u16(y))].bg, builtin.selected.bg.unwrap());
        let x = row[..row.find("100%").unwrap()].chars().count();
        assert_eq!(buf[(to_u16(x), to_u16(y))].fg, builtin.ok.fg.unwrap());
    }

    #[test]
    fn the_hint_names_the_keys_in_force() {
        let keys = crate::ui::keys::KeyMap::with_overrides([("test_read", "x")], "k").unwrap();
        let state = UiState {
            keys,
            ..UiState::default()
        };
        let text = buffer_text(&draw(render, &Topo::new().at(1), &state, 90, 5));
        has_all(
            &text,
            "no test reads on r1 yet: x runs one, b bakes off|[ ] change",
        );
        has_all(&text, "test reads · r1 · gtid-wait(1s)");
    }

    #[test]
    fn survives_tiny_areas() {
        let mut book = ProbeBook::default();
        book.record(result(Strategy::None, Outcome::Stale, None));
        book.record(result(
            Strategy::Primary,
            Outcome::FellBack,
            Some("timeout after 1s"),
        ));
        book.set_running(Some("bake-off 3/110".into()));
        let mut snap = Topo::new().at(1);
        snap.probes = book.view();
        for (w, h) in (1..=40).flat_map(|w| (1..=8).map(move |h| (w, h))) {
            draw(render, &snap, &UiState::default(), w, h);
        }
    }
}
