//! The detail pane: the selected replica channel in full (named in the title, `agg/p2 ← p2`, when
//! it is a named one). A chart of that channel's heartbeat lag against SBM over the chosen window,
//! then the numbers an operator acts on: window percentiles, the catch-up (rate and ETA), binlog
//! positions and bytes behind, GTID backlog, delay, parallel appliers, GTID state, and the
//! threads' last errors, and semi-sync (this replica's ACKs, its source's state and ACK wait). A multi-source replica's other channels get a line each (source,
//! threads, lag), so none is out of sight. A Galera member gets its own text (`galera.rs`).
//!
//! The text has priority over the chart: at 80×24 the pane is 48 columns by about ten rows and
//! the numbers must all be there, so the chart is drawn only where it gets a useful size. It goes
//! on top when the pane is tall, beside the text when the pane is wide and short.

mod appliers;
mod blockers;
pub(super) mod catch_up;
mod galera;
mod headroom;
mod semisync;
#[cfg(test)]
mod tests;
mod text;
mod wrap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{block, chart};
use crate::ui::RenderCtx;
pub(super) use wrap::{Token, ellipsize, words, wrap};

/// Width of the text column beside the chart: the widest fixed line (positions) fits.
const SIDE_TEXT_WIDTH: u16 = 46;
/// Below this a chart is axes and labels with a few dots: not worth the rows it takes.
const CHART_MIN_WIDTH: u16 = 24;
const CHART_MIN_HEIGHT: u16 = 6;

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let row = ctx.state.selected_row(ctx.snapshot);
    let title = match row {
        Some(row) => match row.source() {
            Some(source) => format!(" {} ← {source} ", row.label()),
            None => format!(" {} ", row.label()),
        },
        None => " detail ".to_owned(),
    };
    let pane = block(&title, ctx.theme);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    let Some(row) = row else {
        let calm = Line::styled("no replicas to show", ctx.theme.muted);
        frame.render_widget(Paragraph::new(calm), inner);
        return;
    };
    if let (None, Some(g)) = (row.channel, row.node.galera()) {
        let text = galera::lines(&row, g, ctx, usize::from(inner.width));
        frame.render_widget(Paragraph::new(text), inner);
        return;
    }
    let Some(replica) = row.channel else {
        let line = Line::from(vec![
            Span::styled("no replication status yet", ctx.theme.unknown),
            Span::styled(format!(" · node {}", row.node.conn.name()), ctx.theme.muted),
        ]);
        frame.render_widget(Paragraph::new(line), inner);
        return;
    };
    let text_at = |width: u16| {
        let all = text::lines(&row, replica, ctx, usize::from(width), false);
        if all.len() > usize::from(inner.height) {
            text::lines(&row, replica, ctx, usize::from(width), true)
        } else {
            all
        }
    };
    let full = text_at(inner.width);
    let side = text_at(SIDE_TEXT_WIDTH);
    let chart_at = |frame: &mut Frame, area: Rect| {
        chart::render(
            frame,
            area,
            replica,
            ctx.snapshot.uptime,
            ctx.state.window,
            ctx.theme,
        );
    };
    match arrange(inner, full.len(), side.len()) {
        Arrangement::Text => frame.render_widget(Paragraph::new(full), inner),
        Arrangement::Stacked { chart, text } => {
            chart_at(frame, chart);
            frame.render_widget(Paragraph::new(full), text);
        }
        Arrangement::Side { chart, text } => {
            chart_at(frame, chart);
            frame.render_widget(Paragraph::new(side), text);
        }
    }
}

/// Where the chart goes, if anywhere.
#[derive(Debug, PartialEq, Eq)]
enum Arrangement {
    Text,
    /// Chart above, text below at full width.
    Stacked {
        chart: Rect,
        text: Rect,
    },
    /// Chart left, text right in a [`SIDE_TEXT_WIDTH`] column.
    Side {
        chart: Rect,
        text: Rect,
    },
}

/// Picks the arrangement that gives the chart the larger area, never at the cost of text rows:
/// stacked needs the full-width text (`full_rows`) to fit below the chart, side by side needs the
/// column's text (`side_rows`) to fit the height.
fn arrange(inner: Rect, full_rows: usize, side_rows: usize) -> Arrangement {
    let rows = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    let chart_rows = inner.height.saturating_sub(rows(full_rows));
    let stacked = (chart_rows >= CHART_MIN_HEIGHT && inner.width >= CHART_MIN_WIDTH).then(|| {
        Arrangement::Stacked {
            chart: Rect {
                height: chart_rows,
                ..inner
            },
            text: Rect {
                y: inner.y.saturating_add(chart_rows),
                height: inner.height.saturating_sub(chart_rows),
                ..inner
            },
        }
    });
    let chart_cols = inner
        .width
        .saturating_sub(SIDE_TEXT_WIDTH.saturating_add(1));
    let side = (chart_cols >= CHART_MIN_WIDTH
        && inner.height >= CHART_MIN_HEIGHT
        && rows(side_rows) <= inner.height)
        .then(|| Arrangement::Side {
            chart: Rect {
                width: chart_cols,
                ..inner
            },
            text: Rect {
                x: inner
                    .x
                    .saturating_add(inner.width.saturating_sub(SIDE_TEXT_WIDTH)),
                width: SIDE_TEXT_WIDTH.min(inner.width),
                ..inner
            },
        });
    let area = |a: &Arrangement| match a {
        Arrangement::Stacked { chart, .. } | Arrangement::Side { chart, .. } => chart.area(),
        Arrangement::Text => 0,
    };
    match (stacked, side) {
        (Some(s), Some(d)) if area(&d) > area(&s) => d,
        (Some(s), _) => s,
        (None, Some(d)) => d,
        (None, None) => Arrangement::Text,
    }
}
