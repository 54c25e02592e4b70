//! The footer: the key bar, built from the key table, or the answer to the last key.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::Ctx;
use crate::ui::keys::BINDINGS;

pub fn render(frame: &mut Frame, area: Rect, ctx: &Ctx<'_>) {
    let line = match &ctx.state.status {
        Some(status) => Line::styled(status.clone(), ctx.theme.warning),
        None => Line::from(
            BINDINGS
                .iter()
                .filter(|b| !b.short.is_empty())
                .flat_map(|b| {
                    let (key, label) = b.short.split_once(' ').unwrap_or((b.short, ""));
                    [
                        Span::styled(format!(" {key} "), ctx.theme.key),
                        Span::styled(format!(" {label}  "), ctx.theme.muted),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    };
    frame.render_widget(Paragraph::new(line), area);
}
