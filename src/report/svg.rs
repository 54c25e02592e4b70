//! A replica's lag over the window as inline SVG: the lag line over a filled area, the routing
//! threshold dashed across, the DDL's start and the primary's end as vertical marks. Colours
//! come from the page's classes (`lag`, `area`, `threshold`, `ddl`, `grid`, `label`), so the
//! same drawing reads in a light and a dark page.

use std::fmt::Write;

use super::facts::Facts;
use super::html::escape;
use super::replica::ReplicaLag;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 18.0;
const BOTTOM: f64 = 30.0;

/// A step of 1, 2 or 5 times a power of ten that cuts `span` into four to ten parts.
fn step(span: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| span / s <= 10.0)
        .unwrap_or(10.0 * power)
}

struct Scale {
    t0: f64,
    t1: f64,
    top: f64,
}

impl Scale {
    fn x(&self, t: f64) -> f64 {
        LEFT + (t - self.t0) / (self.t1 - self.t0) * (WIDTH - LEFT - RIGHT)
    }

    fn y(&self, lag: f64) -> f64 {
        HEIGHT - BOTTOM - lag.min(self.top) / self.top * (HEIGHT - TOP - BOTTOM)
    }
}

/// The chart of `replica` in `facts`' window, as an `<svg>` element.
#[must_use]
pub fn chart(facts: &Facts, replica: &ReplicaLag) -> String {
    let threshold = facts.threshold.as_secs_f64();
    let first = replica.points.first().map_or(0.0, |p| p.0);
    let t0 = first.min(0.0);
    let t1 = facts.length.max(t0 + 1.0);
    let worst = replica.max.map_or(0.0, |m| m.1);
    let y_step = step(worst.max(threshold) * 1.15);
    let top = ((worst.max(threshold) * 1.15) / y_step).ceil().max(1.0) * y_step;
    let scale = Scale { t0, t1, top };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="lag of {name} over the window">"#,
        name = escape(&replica.name)
    );
    let _ = write!(
        svg,
        r#"<rect class="plot" x="{LEFT}" y="{TOP}" width="{w:.1}" height="{h:.1}"/>"#,
        w = WIDTH - LEFT - RIGHT,
        h = HEIGHT - TOP - BOTTOM
    );
    grid(&mut svg, &scale, y_step);
    area_and_line(&mut svg, &scale, &replica.points);
    let ty = scale.y(threshold);
    let _ = write!(
        svg,
        r#"<line class="threshold" x1="{LEFT}" y1="{ty:.1}" x2="{x2:.1}" y2="{ty:.1}"/><text class="label threshold-label" x="{x2:.1}" y="{ly:.1}" text-anchor="end">routing threshold {thr}</text>"#,
        x2 = WIDTH - RIGHT,
        ly = ty - 4.0,
        thr = crate::units::lag(facts.threshold),
    );
    let marks = [
        (facts.ddl_start, "DDL start"),
        (facts.primary_done, "primary done"),
    ];
    for (at, label) in marks.iter().filter_map(|(t, l)| Some((t.as_ref()?, l))) {
        let x = scale.x(*at);
        let _ = write!(
            svg,
            r#"<line class="ddl" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text class="label ddl-label" x="{lx:.1}" y="{ly:.1}">{label}</text>"#,
            y2 = HEIGHT - BOTTOM,
            lx = x + 3.0,
            ly = TOP + 11.0,
        );
    }
    if let Some((at, lag)) = replica.max {
        let _ = write!(
            svg,
            r#"<circle class="peak" cx="{:.1}" cy="{:.1}" r="3.5"/>"#,
            scale.x(at),
            scale.y(lag)
        );
    }
    svg.push_str("</svg>");
    svg
}

fn grid(svg: &mut String, scale: &Scale, y_step: f64) {
    let mut lag = 0.0;
    while lag <= scale.top + 1e-9 {
        let y = scale.y(lag);
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{LEFT}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}"/><text class="label" x="{lx:.1}" y="{ty:.1}" text-anchor="end">{text}</text>"#,
            x2 = WIDTH - RIGHT,
            lx = LEFT - 6.0,
            ty = y + 4.0,
            text = crate::units::axis_seconds(lag),
        );
        lag += y_step;
    }
    let t_step = step(scale.t1 - scale.t0);
    let mut t = (scale.t0 / t_step).ceil() * t_step;
    while t <= scale.t1 + 1e-9 {
        let x = scale.x(t);
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y2:.1}"/><text class="label" x="{x:.1}" y="{ty:.1}" text-anchor="middle">{text}</text>"#,
            y2 = HEIGHT - BOTTOM,
            ty = HEIGHT - BOTTOM + 16.0,
            text = crate::units::axis_seconds(t),
        );
        t += t_step;
    }
}

/// The lag as one polyline per run of readable points, each over its filled area.
fn area_and_line(svg: &mut String, scale: &Scale, points: &[(f64, Option<f64>)]) {
    let base = scale.y(0.0);
    for run in points.split(|p| p.1.is_none()).filter(|r| !r.is_empty()) {
        let line: Vec<String> = run
            .iter()
            .filter_map(|&(t, lag)| Some(format!("{:.1},{:.1}", scale.x(t), scale.y(lag?))))
            .collect();
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            continue;
        };
        let _ = write!(
            svg,
            r#"<polygon class="area" points="{:.1},{base:.1} {} {:.1},{base:.1}"/><polyline class="lag" points="{}"/>"#,
            scale.x(first.0),
            line.join(" "),
            scale.x(last.0),
            line.join(" "),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round_and_cut_the_span_in_a_few_parts() {
        for (span, expected) in [(1.15, 0.2), (12.0, 2.0), (60.0, 10.0), (300.0, 50.0)] {
            let s = step(span);
            assert!((s - expected).abs() < 1e-9, "{span}: {s}");
        }
        assert_eq!(crate::units::axis_seconds(90.0), "90s");
        assert_eq!(crate::units::axis_seconds(150.0), "2.5m");
        assert_eq!(crate::units::axis_seconds(2.5), "2.5s");
        assert_eq!(crate::units::axis_seconds(-5.0), "-5s");
    }
}
