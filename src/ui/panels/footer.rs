//! The footer: the key bar, built from the key table, or the answer to the last key; in a
//! replay, led by where the replay stands (`REPLAY 12:03:05 (42s / 5m10s) ×2 paused`).
//!
//! When the bar is wider than the terminal, whole entries go from its end, help and quit last:
//! a key half cut off reads as a different word, and `?` leads to every other key.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::record::ReplayStatus;
use crate::ui::RenderCtx;
use crate::ui::keys::{Binding, Command, key_name};
use crate::units;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let mut width = usize::from(area.width);
    let mut spans = Vec::new();
    if let Some(replay) = &ctx.state.replay {
        let badge = format!(" {} ", replay_text(replay));
        width = width.saturating_sub(badge.chars().count() + 1);
        spans.extend([Span::styled(badge, ctx.theme.key), Span::raw(" ")]);
    }
    if let Some(status) = &ctx.state.status {
        spans.push(Span::styled(status.clone(), ctx.theme.warning));
    } else {
        spans.extend(key_bar(ctx, width).spans);
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `REPLAY 12:03:05 (42s / 5m10s) ×2 paused`: the frame's time (UTC, like the header's),
/// its place in the recording, the speed, and whether it is paused (or, paused there, at the
/// end).
#[must_use]
pub fn replay_text(replay: &ReplayStatus) -> String {
    let state = match (replay.paused, replay.at_end) {
        (true, true) => " end",
        (true, false) => " paused",
        (false, _) => "",
    };
    format!(
        "REPLAY {} ({} / {}) ×{}{state}",
        replay.taken_at.format("%H:%M:%S"),
        units::secs(replay.position.as_secs()),
        units::secs(replay.length.as_secs()),
        replay.speed
    )
}

fn key_bar(ctx: &RenderCtx<'_>, width: usize) -> Line<'static> {
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
            .rposition(|b| !matches!(b.action, Command::Help | Command::Quit))
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
