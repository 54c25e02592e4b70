//! One module per panel, each with one render function of the same shape:
//! `fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx)`.

pub mod alerts;
pub mod chart;
pub mod confirm;
pub mod detail;
pub mod exposure;
pub mod footer;
pub mod header;
pub mod help;
pub mod lint;
pub mod probes;
pub mod replicas;
pub mod status_marks;
pub mod topology;
pub mod whatif;

use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
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

/// A cell of a table's selected row, restyled so that the highlight wins over the cell's own
/// style and the whole row reads as one selected band in any theme. The cell's own background
/// gives way to the highlight's; under a reversed highlight (high contrast, `NO_COLOR`) its
/// colours go too, since reversing them would turn each into a background of its own. Its
/// emphasis (bold, dim, underline) stays.
#[must_use]
pub fn highlight(line: Line<'static>, highlight: Style) -> Line<'static> {
    let reversed = highlight.add_modifier.contains(Modifier::REVERSED);
    let restyle = |own: Style| {
        Style {
            fg: own.fg.filter(|_| !reversed),
            bg: None,
            ..own
        }
        .patch(highlight)
    };
    let style = restyle(line.style);
    let spans = line
        .spans
        .into_iter()
        .map(|span| {
            let own = span.style;
            span.style(restyle(own))
        })
        .collect();
    Line {
        spans,
        style,
        ..line
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Color;
    use ratatui::text::Span;

    use super::*;

    #[test]
    fn the_highlight_wins_over_a_cells_own_style() {
        let critical = Style::new()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD);
        let line = Line::from(vec![
            Span::styled("No", critical),
            Span::styled("/", Style::new().fg(Color::DarkGray)),
        ]);
        // A background highlight replaces the cell's background and keeps its colours.
        let band = Style::new().bg(Color::Blue).add_modifier(Modifier::BOLD);
        let got = highlight(line.clone(), band);
        assert_eq!(got.style, band);
        assert_eq!(got.spans[0].style, critical.bg(Color::Blue));
        assert_eq!(got.spans[1].style, band.fg(Color::DarkGray));
        // A reversed one takes the colours away, so the reversal is one band; emphasis stays.
        let reversed = Style::new().add_modifier(Modifier::REVERSED);
        let got = highlight(line, reversed);
        let bold_reversed = Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED);
        assert_eq!(got.spans[0].style, bold_reversed);
        assert_eq!(got.spans[1].style, reversed);
        assert_eq!(got.spans[0].content, "No");
    }
}
