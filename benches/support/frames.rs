//! Timing full TUI frames: `ui::render::render` into ratatui's `TestBackend` (no terminal I/O),
//! with the default UI state (first replica selected, its chart in the detail pane) and the
//! built-in theme. Shared by `render` and `scale`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rwtop::store::Snapshot;
use rwtop::ui::render::render;
use rwtop::ui::{RenderCtx, Theme, UiState};

/// Draws `snapshot` `warmup` times untimed, then `frames` times; returns each timed frame's
/// duration, in drawing order.
pub fn frame_times(
    snapshot: &Snapshot,
    (w, h): (u16, u16),
    warmup: u32,
    frames: u32,
) -> Vec<Duration> {
    let theme = Theme::builtin();
    let state = UiState::default();
    let ctx = RenderCtx {
        snapshot,
        state: &state,
        theme: &theme,
    };
    let Ok(mut terminal) = Terminal::new(TestBackend::new(w, h));
    let mut draw = || {
        let _ = black_box(terminal.draw(|f| render(f, &ctx)));
    };
    for _ in 0..warmup {
        draw();
    }
    (0..frames)
        .map(|_| {
            let start = Instant::now();
            draw();
            start.elapsed()
        })
        .collect()
}
