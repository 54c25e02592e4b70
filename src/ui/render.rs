//! The root render: one layout, each panel its own module.
//!
//! ```text
//! ┌ header: primary, flavor, replicas, heartbeat writer, DDL banner ───────────┐
//! ├ topology tree ─────────┬ replica table (selected row drives the detail) ───┤
//! ├ detail: lag vs SBM chart, percentiles, positions, GTID, errors ┬ alerts ──┤
//! │   (or, while toggled on, test reads: tallies per strategy, last result,  │
//! │    or the what-if: every setting judged on the lag kept, no writes)      │
//! └ footer: key bar from the key table, or the last key's answer ──────────────┘
//! ```
//! The test-reads pane takes the detail pane's place rather than squeezing the alerts: both the
//! tally table and the alerts need width, and an alert must never be pushed out of sight.
//! Below 80×24 only a "terminal too small" notice is drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::RenderCtx;
use super::panels;
use super::state::{Cover, Mode};

type Panel = fn(&mut Frame, Rect, &RenderCtx<'_>);

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

pub fn render(frame: &mut Frame, ctx: &RenderCtx<'_>) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area, ctx);
        return;
    }
    let [header, upper, lower, footer] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Percentage(40),
        Constraint::Min(8),
        Constraint::Length(1),
    ])
    .areas(area);
    panels::header::render(frame, header, ctx);
    let panes = ctx.state.panes;
    if panes.topology {
        let [tree, table] =
            Layout::horizontal([Constraint::Percentage(30), Constraint::Percentage(70)])
                .areas(upper);
        panels::topology::render(frame, tree, ctx);
        panels::replicas::render(frame, table, ctx);
    } else {
        panels::replicas::render(frame, upper, ctx);
    }
    let left: Option<Panel> = match panes.cover {
        Some(Cover::Whatif) => Some(panels::whatif::render),
        Some(Cover::TestReads) => Some(panels::probes::render),
        Some(Cover::Lint) => Some(panels::lint::render),
        Some(Cover::Exposure) => Some(panels::exposure::render),
        None if panes.detail => Some(panels::detail::render),
        None => None,
    };
    match (left, panes.alerts) {
        (Some(left), true) => {
            let [left_area, alerts] =
                Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                    .areas(lower);
            left(frame, left_area, ctx);
            panels::alerts::render(frame, alerts, ctx);
        }
        (Some(left), false) => left(frame, lower, ctx),
        (None, true) => panels::alerts::render(frame, lower, ctx),
        (None, false) => {}
    }
    panels::footer::render(frame, footer, ctx);
    match ctx.state.mode {
        Mode::Help => panels::help::render(frame, area, ctx),
        Mode::Confirm => panels::confirm::render(frame, area, ctx),
        Mode::Normal => {}
    }
}

fn too_small(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let text = vec![
        Line::styled("terminal too small", ctx.theme.warning),
        Line::styled(
            format!(
                "rwtop needs {MIN_WIDTH}×{MIN_HEIGHT}, this is {}×{}",
                area.width, area.height
            ),
            ctx.theme.text,
        ),
        Line::styled("enlarge it, or press q to quit", ctx.theme.muted),
    ];
    frame.render_widget(
        Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
        area,
    );
}
