//! The `?` screen, built from the same key table that dispatches keys.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::block;
use crate::ui::RenderCtx;
use crate::ui::keys::{Command, key_name};

/// One column's width: the longest key and text fit.
const COLUMN: u16 = 72;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    // Keys bound to the same action share a line (`↑ k`).
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
    // A list taller than the terminal takes two columns where they fit, else it scrolls.
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let columns: u16 = if lines.len() > rows && area.width >= 2 * COLUMN {
        2
    } else {
        1
    };
    let per_column = lines.len().div_ceil(usize::from(columns));
    let shown = per_column.min(rows);
    let last = per_column - shown;
    ctx.state.help.room.set((last, shown.saturating_sub(1)));
    let first = ctx.state.help.first.min(last);
    let title = if last == 0 {
        " keys — any key closes ".to_owned()
    } else {
        format!(
            " keys {}–{} of {} — ↑ ↓ PgUp PgDn move, any other key closes ",
            first + 1,
            first + shown,
            lines.len()
        )
    };
    let popup = centered(area, shown, COLUMN * columns);
    frame.render_widget(Clear, popup);
    let frame_block = block(&title, ctx.theme);
    let inner = frame_block.inner(popup);
    frame.render_widget(frame_block, popup);
    let halves = Layout::horizontal(vec![Constraint::Fill(1); usize::from(columns)]).split(inner);
    for (column, half) in lines.chunks(per_column.max(1)).zip(halves.iter()) {
        let visible: Vec<Line> = column.iter().skip(first).take(shown).cloned().collect();
        frame.render_widget(Paragraph::new(visible), *half);
    }
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

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::store::testkit::Topo;
    use crate::ui::keys::{BINDINGS, Command};
    use crate::ui::state::Mode;
    use crate::ui::{RenderCtx, Theme, UiState};

    fn screen(state: &UiState, width: u16, height: u16) -> String {
        let snapshot = Topo::new().at(1);
        let theme = Theme::plain();
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|f| {
                // The screen alone: the whole view asks for 80×24 at least.
                super::render(
                    f,
                    f.area(),
                    &RenderCtx {
                        snapshot: &snapshot,
                        state,
                        theme: &theme,
                    },
                );
            })
            .unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    }

    fn press(state: &mut UiState, code: KeyCode) {
        let snapshot = Topo::new().at(1);
        let action = state
            .keys
            .action_for(KeyEvent::new(code, KeyModifiers::NONE), state.mode)
            .unwrap();
        crate::ui::actions::apply(state, action, &snapshot);
    }

    /// Every line of the key table, as the screen writes its text.
    fn texts() -> Vec<&'static str> {
        let mut texts: Vec<&str> = BINDINGS.iter().map(|b| b.help).collect();
        texts.dedup();
        texts
    }

    #[test]
    fn a_list_taller_than_the_terminal_scrolls_or_takes_two_columns() {
        let mut state = UiState::default();
        press(&mut state, KeyCode::Char('?'));
        assert_eq!(state.mode, Mode::Help);
        let all = texts();
        // Tall enough: all of it, and any key closes.
        let tall = screen(&state, 80, 40);
        assert!(all.iter().all(|t| tall.contains(t)), "{tall}");
        assert!(tall.contains("any key closes"), "{tall}");
        // Too short: the first lines, a title that says which, and the arrows move it.
        let short = screen(&state, 80, 12);
        assert!(
            short.contains(&format!("keys 1–10 of {}", all.len())),
            "{short}"
        );
        assert!(short.contains(all[0]) && !short.contains(all[all.len() - 1]));
        press(&mut state, KeyCode::End);
        assert_eq!(state.mode, Mode::Help, "End moves, it does not close");
        let end = screen(&state, 80, 12);
        assert!(
            end.contains(all[all.len() - 1]) && !end.contains(all[0]),
            "{end}"
        );
        press(&mut state, KeyCode::PageUp);
        press(&mut state, KeyCode::Up);
        let back = screen(&state, 80, 12);
        let from = all.len() - 10 - 9 - 1;
        assert!(back.contains(&format!("keys {}–", from + 1)), "{back}");
        // Wide enough for two columns: all of it again, on the same short terminal.
        let wide = screen(&state, 160, 20);
        assert!(all.iter().all(|t| wide.contains(t)), "{wide}");
        // Any other key closes it, and it opens at the top again.
        press(&mut state, KeyCode::Char('x'));
        assert_eq!(state.mode, Mode::Normal);
        press(&mut state, KeyCode::Char('?'));
        assert!(screen(&state, 80, 12).contains("keys 1–10"));
        // Where it all fits, an arrow closes it like any key.
        screen(&state, 80, 40);
        press(&mut state, KeyCode::Down);
        assert_eq!(state.mode, Mode::Normal);
        assert!(matches!(
            state
                .keys
                .action_for(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE), Mode::Help),
            Some(Command::HelpScroll(_))
        ));
    }
}
