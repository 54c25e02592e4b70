//! The footer: the key bar, built from the key table, or the answer to the last key.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::Ctx;
use crate::ui::keys::key_name;

pub fn render(frame: &mut Frame, area: Rect, ctx: &Ctx<'_>) {
    let line = match &ctx.state.status {
        Some(status) => Line::styled(status.clone(), ctx.theme.warning),
        None => Line::from(
            ctx.state
                .keys
                .bindings
                .iter()
                .filter(|b| !b.short.is_empty())
                .flat_map(|b| {
                    [
                        Span::styled(format!(" {} ", key_name(b.key)), ctx.theme.key),
                        Span::styled(format!(" {}  ", b.short), ctx.theme.muted),
                    ]
                })
                .collect::<Vec<_>>(),
        ),
    };
    frame.render_widget(Paragraph::new(line), area);
}
