//! The confirmation of an operator action: a drain (the replica, the action and the load
//! balancer) or the kill of a waiting DDL's blocker (the node, the exact statement, who it ends
//! and what it blocks). Waits for `y`; any other key cancels.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::block;
use super::help::centered;
use crate::ui::RenderCtx;
use crate::ui::actions::confirm_question;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let question: Vec<String> = if let Some(kill) = ctx.state.pending_kill.as_ref() {
        kill.lines.clone()
    } else if let Some(request) = ctx.state.pending_drain.as_ref() {
        vec![confirm_question(request, ctx.snapshot)]
    } else {
        return;
    };
    let widest = question
        .iter()
        .map(|q| q.chars().count())
        .max()
        .unwrap_or(0);
    let width = u16::try_from(widest + 4).unwrap_or(u16::MAX);
    let mut lines: Vec<Line> = question
        .into_iter()
        .enumerate()
        .map(|(i, q)| {
            let style = if i == 0 {
                ctx.theme.warning
            } else {
                ctx.theme.text
            };
            Line::styled(q, style)
        })
        .collect();
    lines.push(Line::from(vec![
        Span::styled(" y ", ctx.theme.key),
        Span::styled(" yes   ", ctx.theme.text),
        Span::styled(" any other key ", ctx.theme.key),
        Span::styled(" no", ctx.theme.text),
    ]));
    // Wide enough for each line where the terminal allows; else they wrap, with a row more
    // for each line that will.
    let width = width.max(40);
    let inner = usize::from(width.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let popup = centered(area, rows, width);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block(" confirm ", ctx.theme)),
        popup,
    );
}
