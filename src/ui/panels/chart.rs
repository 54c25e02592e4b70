//! The detail pane's chart: heartbeat lag against `Seconds_Behind_Master` over the selected
//! window, x in seconds before the snapshot.
//!
//! The chart exists to make one lie obvious: SBM flat at 0 while the true lag climbs. So both
//! series share one axis in seconds, lag is drawn last (on top) in Braille and SBM in cell dots,
//! which tells them apart without colour too, and an unknown reading is a gap, never a 0: a NULL
//! SBM drawn on the zero line would look exactly like the lie it hides.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::Span;
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, LegendPosition};

use crate::store::ReplicaView;
use crate::store::windows::Window;
use crate::ui::Theme;

/// Legend names carry the marker, so the legend still reads when `NO_COLOR` makes both series
/// the same colour.
const LAG_NAME: &str = "⣀ lag";
const SBM_NAME: &str = "• SBM";

/// Smallest top of the y axis: the heartbeat resolves fractions of a second, so a healthy replica
/// sits low on a 1 s scale instead of filling the chart with noise.
const NICE_TOPS_S: [f64; 13] = [
    1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0,
];

/// Polyline pieces of one series: a new piece starts after every unknown reading, so gaps stay
/// gaps instead of being bridged by a line.
type Segments = Vec<Vec<(f64, f64)>>;

/// What the chart plots, in seconds: x is minus the age of the point, y the reading.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Plot {
    pub lag: Segments,
    pub sbm: Segments,
    /// The largest reading, lag or SBM (0 with none).
    pub max_s: f64,
}

/// Short label for the chart's window.
#[must_use]
pub(super) fn window_label(window: Window) -> &'static str {
    match window {
        Window::OneMinute => "1m",
        Window::FiveMinutes => "5m",
        Window::FifteenMinutes => "15m",
    }
}

fn millis_u64(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Cuts the series to the last `window` before `now` (the snapshot's uptime, on the series'
/// clock) and splits each reading into segments at its unknown values.
#[must_use]
pub(super) fn plot(series: &crate::store::series::Chart, now: Duration, window: Window) -> Plot {
    let now_ms = millis_u64(now);
    let from_ms = now_ms.saturating_sub(millis_u64(window.duration()));
    let mut out = Plot::default();
    let mut lag_open = false;
    let mut sbm_open = false;
    for point in series.since(from_ms) {
        // The window is at most 15 minutes, so the age always fits; a point stamped after the
        // snapshot counts as "now".
        let ago_ms = u32::try_from(now_ms.saturating_sub(point.at_ms)).unwrap_or(u32::MAX);
        let x = -f64::from(ago_ms) / 1000.0;
        let lag = point.heartbeat_lag_ms.map(|ms| f64::from(ms) / 1000.0);
        let sbm = point.sbm_s.map(f64::from);
        extend(&mut out.lag, &mut lag_open, x, lag);
        extend(&mut out.sbm, &mut sbm_open, x, sbm);
        out.max_s = out.max_s.max(lag.unwrap_or(0.0)).max(sbm.unwrap_or(0.0));
    }
    out
}

fn extend(segments: &mut Segments, open: &mut bool, x: f64, y: Option<f64>) {
    match (y, segments.last_mut()) {
        (Some(y), Some(last)) if *open => last.push((x, y)),
        (Some(y), _) => {
            segments.push(vec![(x, y)]);
            *open = true;
        }
        (None, _) => *open = false,
    }
}

/// A round top for the y axis at or above `max_s`, so the labels read as whole numbers.
#[must_use]
pub(super) fn nice_top(max_s: f64) -> f64 {
    if !max_s.is_finite() {
        return NICE_TOPS_S[0];
    }
    if let Some(top) = NICE_TOPS_S.iter().copied().find(|top| max_s <= *top) {
        return top;
    }
    // Beyond an hour: double. Readings are at most u32::MAX seconds, so this ends in ~21 steps.
    let mut top = 3600.0_f64;
    while top < max_s {
        top *= 2.0;
    }
    top
}

fn datasets<'a>(plot: &'a Plot, theme: &Theme) -> Vec<Dataset<'a>> {
    let lag_style = Style::new().fg(theme.lag);
    let sbm_style = Style::new().fg(theme.sbm);
    let line = |data: &'a [(f64, f64)], marker: Marker, style: Style| {
        Dataset::default()
            .data(data)
            .marker(marker)
            .graph_type(GraphType::Line)
            .style(style)
    };
    // Empty named sets only feed the legend, in the order the text reads: lag, then SBM. The
    // data sets follow unnamed, SBM first so that lag is drawn over it.
    let mut sets = vec![
        line(&[], Marker::Braille, lag_style).name(LAG_NAME),
        line(&[], Marker::Dot, sbm_style).name(SBM_NAME),
    ];
    sets.extend(plot.sbm.iter().map(|s| line(s, Marker::Dot, sbm_style)));
    sets.extend(plot.lag.iter().map(|s| line(s, Marker::Braille, lag_style)));
    sets
}

/// Draws the chart of `replica` over `window` ending at `now` (the snapshot's uptime).
pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    replica: &ReplicaView,
    now: Duration,
    window: Window,
    theme: &Theme,
) {
    let plot = plot(&replica.series, now, window);
    let top = nice_top(plot.max_s);
    let span_s = window.duration().as_secs_f64();
    let label = |text: String| Span::styled(text, theme.muted);
    let x_axis = Axis::default()
        .bounds([-span_s, 0.0])
        .style(theme.border)
        .labels([
            label(format!("-{}", crate::units::axis_seconds(span_s))),
            label(format!("-{}", crate::units::axis_seconds(span_s / 2.0))),
            label("now".to_owned()),
        ]);
    let y_axis = Axis::default()
        .bounds([0.0, top])
        .style(theme.border)
        .labels([
            label("0".to_owned()),
            label(crate::units::axis_seconds(top / 2.0)),
            label(crate::units::axis_seconds(top)),
        ]);
    // The newest readings are on the right, so the legend sits top left, over the oldest.
    let chart = Chart::new(datasets(&plot, theme))
        .x_axis(x_axis)
        .y_axis(y_axis)
        .legend_position(Some(LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)));
    frame.render_widget(chart, area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::series::{Chart, Point};

    fn point(at_ms: u64, lag_ms: Option<u32>, sbm_s: Option<u32>) -> Point {
        Point {
            at_ms,
            heartbeat_lag_ms: lag_ms,
            sbm_s,
        }
    }

    #[test]
    fn plot_keeps_the_window_and_splits_at_unknown_readings() {
        let series = [
            point(5_000, Some(1), Some(1)), // older than the minute: dropped
            point(50_000, Some(2_000), Some(0)),
            point(51_000, Some(3_000), None),
            point(52_000, None, None),
            point(53_000, Some(4_500), Some(2)),
            point(54_000, Some(5_000), Some(3)),
        ];
        let got = plot(
            &series[..].into(),
            Duration::from_secs(70),
            Window::OneMinute,
        );
        assert_eq!(
            got.lag,
            vec![
                vec![(-20.0, 2.0), (-19.0, 3.0)],
                vec![(-17.0, 4.5), (-16.0, 5.0)]
            ]
        );
        assert_eq!(
            got.sbm,
            vec![vec![(-20.0, 0.0)], vec![(-17.0, 2.0), (-16.0, 3.0)]]
        );
        assert!((got.max_s - 5.0).abs() < f64::EPSILON);
    }

    #[test]
    fn plot_of_nothing_or_all_null_has_no_segments() {
        let empty = plot(&Chart::default(), Duration::ZERO, Window::FifteenMinutes);
        assert_eq!(empty, Plot::default());
        let null = [point(1_000, None, None), point(2_000, None, None)];
        let got = plot(&null[..].into(), Duration::from_secs(3), Window::OneMinute);
        assert!(got.lag.is_empty() && got.sbm.is_empty());
    }

    #[test]
    fn axis_tops_and_labels_are_round() {
        assert!((nice_top(0.0) - 1.0).abs() < f64::EPSILON);
        assert!((nice_top(12.4) - 20.0).abs() < f64::EPSILON);
        assert!((nice_top(4_000.0) - 7_200.0).abs() < f64::EPSILON);
        assert!(nice_top(f64::from(u32::MAX)) >= f64::from(u32::MAX));
        assert!((nice_top(f64::NAN) - 1.0).abs() < f64::EPSILON);
        let labels: Vec<String> = [0.5, 30.0, 60.0, 150.0, 450.0, 900.0, 7_200.0]
            .into_iter()
            .map(crate::units::axis_seconds)
            .collect();
        assert_eq!(labels, ["0.5s", "30s", "60s", "2.5m", "7.5m", "15m", "2h"]);
    }
}
