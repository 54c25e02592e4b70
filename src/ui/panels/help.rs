//! The `?` screen, built from the same key table that dispatches keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::block;
use crate::ui::RenderCtx;
use crate::ui::keys::{Command, key_name};

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    // Keys bound to the same action share a line (`↑ k`), so the list fits 80×24.
    let mut entries: Vec<(String, &str, Command)> = Vec::new();
    for b in &ctx.state.keys.bindings {
        match entries.last_mut() {
            Some((keys, _, action)) if *action == b.action => {
                keys.push(' ');
                keys.push_str(&key_name(b.key));
            }
            _ => entries.push((key_name(b.key), b.help, b.action)),
        }
    }
    let lines: Vec<Line> = entries
        .iter()
        .map(|(keys, help, _)| {
            Line::from(vec![
                Span::styled(format!(" {keys:>5} "), ctx.theme.key),
                Span::styled(format!("  {help}"), ctx.theme.text),
            ])
        })
        .collect();
    let popup = centered(area, lines.len(), 72);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(block(" keys — any key closes ", ctx.theme)),
        popup,
    );
}

/// A box of `rows` lines of text (plus borders) and at most `width` columns, centred in `area`.
#[must_use]
pub fn centered(area: Rect, rows: usize, width: u16) -> Rect {
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let [_, middle, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(height),
        Constraint::Fill(1),
    ])
    .areas(area);
    let [_, popup, _] = Layout::horizontal([
        Constraint::Fill(1),
        Constraint::Length(width.min(area.width)),
        Constraint::Fill(1),
    ])
    .areas(middle);
    popup
}
