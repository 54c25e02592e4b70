//! One module per panel, each with one render function of the same shape:
//! `fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx)`.

pub mod alerts;
pub mod chart;
pub mod confirm;
pub mod detail;
pub mod footer;
pub mod header;
pub mod help;
pub mod probes;
pub mod replicas;
pub mod topology;

use ratatui::widgets::{Block, BorderType, Borders};

use super::Theme;

/// The frame every bordered panel shares.
#[must_use]
pub fn block<'a>(title: &'a str, theme: &Theme) -> Block<'a> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title(title)
        .title_style(theme.title)
}
