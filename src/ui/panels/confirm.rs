//! The drain confirmation: names the replica, the action and the load balancer, and waits for
//! `y`; any other key cancels.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::block;
use super::help::centered;
use crate::ui::RenderCtx;
use crate::ui::actions::confirm_question;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let Some(request) = ctx.state.pending_drain.as_ref() else {
        return;
    };
    let question = confirm_question(request, ctx.snapshot);
    let width = u16::try_from(question.chars().count() + 4).unwrap_or(u16::MAX);
    let lines = vec![
        Line::styled(question, ctx.theme.warning),
        Line::from(vec![
            Span::styled(" y ", ctx.theme.key),
            Span::styled(" yes   ", ctx.theme.text),
            Span::styled(" any other key ", ctx.theme.key),
            Span::styled(" no", ctx.theme.text),
        ]),
    ];
    // Wide enough for the question on one line where the terminal allows; else it wraps.
    let popup = centered(area, lines.len(), width.max(40));
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block(" confirm ", ctx.theme)),
        popup,
    );
}
