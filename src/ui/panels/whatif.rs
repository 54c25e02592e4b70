//! The what-if pane: which read-after-write setting would have held on the lag kept so far,
//! with no write (`ui/whatif.rs` works it out; `rwtop whatif` prints the whole grid).
//!
//! ```text
//! ╭ what-if · no writes · reads 0/50ms/500ms after each write ───────────────╮
//! │setting              stale   error  primary  peak/min  wait p99            │
//! │none                11.46%  ±33.29%   0.00%     0.00%        0s            │
//! │gtid-wait(500ms)     0.00%   ±0.00%  11.22%    12.99%     500ms  meets ★   │
//! │goal: stale ≤ 0.10%, primary ≤ 80.00% of reads in any minute               │
//! │recommended: gtid-wait(500ms): …why…                                       │
//! ╰────────────────────────────────────────────────────────────────────────────╯
//! ```
//! A setting that meets the goal reads as ok, the recommended one is starred, a stale share
//! above the goal is drawn critical.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::block;
use crate::ui::RenderCtx;
use crate::ui::whatif::{RowView, Summary};

const TITLE: &str = " what-if · no writes · reads 0/50ms/500ms after each write ";

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let t = ctx.theme;
    let pane = block(TITLE, t);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let lines = match ctx.state.whatif.as_ref().map(|v| &v.outcome) {
        None => vec![Line::styled("working it out…", t.muted)],
        Some(Err(why)) => vec![
            Line::styled("no what-if yet", t.warning),
            Line::styled(why.clone(), t.muted),
        ],
        Some(Ok(summary)) => summary_lines(summary, ctx),
    };
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn summary_lines(summary: &Summary, ctx: &RenderCtx<'_>) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let mut lines = vec![Line::styled(
        format!(
            "{:<22}{:>8}{:>9}{:>9}{:>10}{:>10}",
            "setting", "stale", "error", "primary", "peak/min", "wait p99"
        ),
        t.muted,
    )];
    lines.extend(summary.rows.iter().map(|r| row_line(r, ctx)));
    lines.push(Line::styled(format!("goal: {}", summary.goal), t.muted));
    let verdict = summary.recommended.as_ref().map_or_else(
        || Line::styled(summary.why.clone(), t.warning),
        |_| Line::styled(summary.why.clone(), t.text),
    );
    lines.push(verdict);
    lines.push(Line::styled(format!("read: {}", summary.read), t.muted));
    lines
}

fn row_line(r: &RowView, ctx: &RenderCtx<'_>) -> Line<'static> {
    let t = ctx.theme;
    let style = if r.meets_goal { t.ok } else { t.text };
    let stale_style = if r.meets_goal || r.stale == "0.00%" {
        style
    } else {
        t.critical
    };
    let mark = match (r.recommended, r.meets_goal) {
        (true, _) => "  meets ★",
        (false, true) => "  meets",
        (false, false) => "",
    };
    Line::from(vec![
        Span::styled(format!("{:<22}", r.setting), style),
        Span::styled(format!("{:>8}", r.stale), stale_style),
        Span::styled(format!("{:>9}", r.error), t.muted),
        Span::styled(format!("{:>9}", r.primary), style),
        Span::styled(format!("{:>10}", r.peak), style),
        Span::styled(format!("{:>10}", r.wait_p99), style),
        Span::styled(mark, style),
    ])
}
