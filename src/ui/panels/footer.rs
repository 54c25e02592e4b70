//! The footer: the key bar, built from the key table, or the answer to the last key.
//!
//! When the bar is wider than the terminal, whole entries go from its end, help and quit last:
//! a key half cut off reads as a different word, and `?` leads to every other key.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::Ctx;
use crate::ui::keys::{Action, Binding, key_name};

pub fn render(frame: &mut Frame, area: Rect, ctx: &Ctx<'_>) {
    let line = if let Some(status) = &ctx.state.status {
        Line::styled(status.clone(), ctx.theme.warning)
    } else {
        key_bar(ctx, usize::from(area.width))
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn key_bar(ctx: &Ctx<'_>, width: usize) -> Line<'static> {
    let mut shown: Vec<&Binding> = ctx
        .state
        .keys
        .bindings
        .iter()
        .filter(|b| !b.short.is_empty())
        .collect();
    let entry = |b: &Binding| key_name(b.key).chars().count() + b.short.chars().count() + 5;
    // The last entry's trailing spaces may fall off the edge.
    let total = |shown: &[&Binding]| {
        shown
            .iter()
            .map(|b| entry(b))
            .sum::<usize>()
            .saturating_sub(2)
    };
    while total(&shown) > width {
        let Some(last) = shown
            .iter()
            .rposition(|b| !matches!(b.action, Action::Help | Action::Quit))
        else {
            break;
        };
        shown.remove(last);
    }
    Line::from(
        shown
            .iter()
            .flat_map(|b| {
                [
                    Span::styled(format!(" {} ", key_name(b.key)), ctx.theme.key),
                    Span::styled(format!(" {}  ", b.short), ctx.theme.muted),
                ]
            })
            .collect::<Vec<_>>(),
    )
}
