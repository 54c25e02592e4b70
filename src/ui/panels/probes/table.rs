//! The tally table of the test-reads pane: one row per strategy tried on the replica.
//!
//! Shares never round a stale read away; narrow panes keep the strategy, fresh and stale and add
//! the other columns, most telling first, while they fit; short panes keep the current
//! strategy's row and the stale ones and count the rest.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};

use super::to_u16;
use crate::probe::outcome::WaitPercentiles;
use crate::probe::{Strategy, TallyView};
use crate::ui::Theme;
use crate::ui::panels::highlight;
use crate::units;

/// A share that never rounds a stale read away: one in 300 is `<1%`, not `0%`.
fn percent(count: u32, total: u32) -> String {
    if count == 0 || total == 0 {
        return "0%".to_owned();
    }
    if count >= total {
        return "100%".to_owned();
    }
    let p = f64::from(count) * 100.0 / f64::from(total);
    if p < 1.0 {
        "<1%".to_owned()
    } else if p > 99.0 {
        ">99%".to_owned()
    } else {
        format!("{p:.0}%")
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Col {
    Name,
    N,
    Fresh,
    Stale,
    FellBack,
    Err,
    P50,
    P99,
    /// What `gr-after` added to the commit: shown only once a strategy held a write.
    WriteP99,
    /// The monitor a fast mode routed on and how old its positions were: shown only for those.
    Monitor,
    /// The primary's share of the marker reads.
    PrimaryReads,
}

const ALL: [Col; 11] = [
    Col::Name,
    Col::N,
    Col::Fresh,
    Col::Stale,
    Col::FellBack,
    Col::Err,
    Col::P50,
    Col::P99,
    Col::WriteP99,
    Col::Monitor,
    Col::PrimaryReads,
];
/// Most telling first, after the strategy, fresh and stale that are always shown.
const ADD_ORDER: [Col; 8] = [
    Col::FellBack,
    Col::N,
    Col::P99,
    Col::PrimaryReads,
    Col::WriteP99,
    Col::Monitor,
    Col::Err,
    Col::P50,
];

impl Col {
    fn header(self) -> &'static str {
        match self {
            Self::Name => "strategy",
            Self::N => "n",
            Self::Fresh => "fresh",
            Self::Stale => "stale",
            Self::FellBack => "fell back",
            Self::Err => "err",
            Self::P50 => "p50 wait",
            Self::P99 => "p99 wait",
            Self::WriteP99 => "p99 write",
            Self::Monitor => "monitor",
            Self::PrimaryReads => "primary",
        }
    }

    fn cell(self, v: &TallyView, t: &Theme) -> Span<'static> {
        let share = |count: u32, style: Style| {
            Span::styled(
                percent(count, v.probes),
                if count == 0 { t.muted } else { style },
            )
        };
        let count = |n: u32, style: Style| {
            Span::styled(n.to_string(), if n == 0 { t.muted } else { style })
        };
        let wait = |p: fn(WaitPercentiles) -> Duration| {
            v.wait_ms.map_or_else(
                || Span::styled("-", t.muted),
                |w| Span::styled(units::duration(p(w.durations())), t.text),
            )
        };
        match self {
            Self::Name => Span::styled(v.strategy.to_string(), t.text),
            Self::N => Span::styled(v.probes.to_string(), t.text),
            Self::Fresh => share(v.fresh, t.ok),
            Self::Stale => share(v.stale, t.critical),
            Self::FellBack => share(v.fell_back, t.warning),
            Self::Err => count(v.errors, t.warning),
            Self::P50 => wait(|w| w.p50),
            Self::P99 => wait(|w| w.p99),
            Self::WriteP99 => v.cost.write_wait_ms.map_or_else(
                || Span::styled("-", t.muted),
                |w| Span::styled(units::duration(w.durations().p99), t.text),
            ),
            Self::Monitor => {
                let text = v.monitor();
                Span::styled(text.clone(), if text == "-" { t.muted } else { t.text })
            }
            Self::PrimaryReads => Span::styled(
                percent(
                    v.primary_reads,
                    // Tallies from before the cost was kept count a read per probe.
                    if v.cost.reads == 0 {
                        v.probes
                    } else {
                        v.cost.reads
                    },
                ),
                if v.primary_reads == 0 {
                    t.muted
                } else {
                    t.text
                },
            ),
        }
    }

    fn width(self, rows: &[&TallyView], t: &Theme) -> usize {
        rows.iter()
            .map(|v| self.cell(v, t).width())
            .chain([Span::raw(self.header()).width()])
            .max()
            .unwrap_or(0)
    }
}

/// The columns that fit `width`, in table order: the essential ones, then each of the others
/// that still fits, most telling first.
fn columns(rows: &[&TallyView], width: usize, t: &Theme) -> Vec<(Col, usize)> {
    let mut chosen = vec![Col::Name, Col::Fresh, Col::Stale];
    let total = |cols: &[Col]| {
        cols.iter().map(|c| c.width(rows, t)).sum::<usize>() + cols.len().saturating_sub(1)
    };
    let held = rows.iter().any(|v| v.cost.write_wait_ms.is_some());
    let monitored = rows
        .iter()
        .any(|v| v.cost.position_age_ms.is_some() || v.cost.monitor_ms.is_some());
    for col in ADD_ORDER.into_iter().filter(|c| match c {
        Col::WriteP99 => held,
        Col::Monitor => monitored,
        _ => true,
    }) {
        chosen.push(col);
        if total(&chosen) > width {
            chosen.pop();
        }
    }
    ALL.iter()
        .filter(|c| chosen.contains(c))
        .map(|c| (*c, c.width(rows, t)))
        .collect()
}

/// The rows that fit `room`: all, or the current strategy's and the stale ones first, the rest
/// in order, and a last row counting what was left out.
fn fitting<'a>(
    rows: &[&'a TallyView],
    current: Strategy,
    room: usize,
) -> (Vec<&'a TallyView>, usize) {
    if rows.len() <= room {
        return (rows.to_vec(), 0);
    }
    let keep = room.saturating_sub(1);
    let mut ranked: Vec<(usize, &TallyView)> = rows.iter().copied().enumerate().collect();
    ranked.sort_by_key(|(i, v)| (v.strategy != current, v.stale == 0, *i));
    ranked.truncate(keep);
    ranked.sort_by_key(|(i, _)| *i);
    (
        ranked.into_iter().map(|(_, v)| v).collect(),
        rows.len() - keep,
    )
}

pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    rows: &[&TallyView],
    current: Strategy,
    t: &Theme,
) {
    let (shown, hidden) = fitting(rows, current, usize::from(area.height).saturating_sub(1));
    let cols = columns(rows, usize::from(area.width), t);
    let aligned = |col: Col, span: Span<'static>| {
        let line = Line::from(span);
        if col == Col::Name {
            line
        } else {
            line.right_aligned()
        }
    };
    let header = Row::new(
        cols.iter()
            .map(|(c, _)| Cell::from(aligned(*c, Span::styled(c.header(), t.muted)))),
    );
    let mut body: Vec<Row> = shown
        .iter()
        .map(|v| {
            let current = v.strategy == current;
            let row = Row::new(cols.iter().map(|(c, _)| {
                let line = aligned(*c, c.cell(v, t));
                Cell::from(if current {
                    highlight(line, t.selected)
                } else {
                    line
                })
            }));
            if current { row.style(t.selected) } else { row }
        })
        .collect();
    if hidden > 0 {
        body.push(Row::new([Cell::from(Span::styled(
            format!("+{hidden} more"),
            t.muted,
        ))]));
    }
    let widths = cols.iter().map(|(_, w)| Constraint::Length(to_u16(*w)));
    frame.render_widget(
        Table::new(body, widths).header(header).column_spacing(1),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::outcome::{TallyCost, WaitMs};

    #[test]
    fn shares_never_round_a_stale_read_away() {
        let cases = [(0, 10), (1, 300), (299, 300), (3, 10), (10, 10), (1, 0)];
        let got = cases.map(|(c, n)| percent(c, n));
        assert_eq!(got, ["0%", "<1%", ">99%", "30%", "100%", "0%"]);
    }

    fn tally(strategy: &str, cost: TallyCost) -> TallyView {
        TallyView {
            strategy: Strategy::parse(strategy, &crate::probe::ProbeDefaults::default()).unwrap(),
            replica: "r1".to_owned(),
            probes: 10,
            fresh: 10,
            stale: 0,
            fell_back: 0,
            errors: 0,
            wait_ms: None,
            primary_reads: 3,
            queries: 30,
            causes: std::collections::BTreeMap::new(),
            cost,
        }
    }

    fn cols(rows: &[&TallyView]) -> Vec<Col> {
        columns(rows, 200, &Theme::builtin())
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    }

    #[test]
    fn the_write_wait_shows_once_a_strategy_held_a_write() {
        let t = Theme::builtin();
        let none = tally("none", TallyCost::default());
        assert!(!cols(&[&none]).contains(&Col::WriteP99));
        let after = tally(
            "gr-after(2s)",
            TallyCost {
                write_wait_ms: Some(WaitMs {
                    p50: 1.0,
                    p99: 870.0,
                }),
                ..Default::default()
            },
        );
        assert!(cols(&[&none, &after]).contains(&Col::WriteP99));
        assert_eq!(Col::WriteP99.cell(&after, &t).content, "870ms");
        assert_eq!(Col::WriteP99.cell(&none, &t).content, "-");
    }

    #[test]
    fn the_monitor_shows_for_the_fast_modes_and_the_primary_share_is_of_reads() {
        let t = Theme::builtin();
        let none = tally(
            "none",
            TallyCost {
                reads: 12,
                ..Default::default()
            },
        );
        assert!(!cols(&[&none]).contains(&Col::Monitor));
        assert_eq!(Col::PrimaryReads.cell(&none, &t).content, "25%");
        let fast = tally(
            "maxscale-fast(monitor=100ms)",
            TallyCost {
                reads: 10,
                monitor_ms: Some(100.0),
                position_age_ms: Some(WaitMs {
                    p50: 40.0,
                    p99: 95.0,
                }),
                ..Default::default()
            },
        );
        assert!(cols(&[&none, &fast]).contains(&Col::Monitor));
        assert_eq!(Col::Monitor.cell(&fast, &t).content, "100ms, aged 95ms");
        assert_eq!(Col::Monitor.cell(&none, &t).content, "-");
        assert_eq!(Col::PrimaryReads.cell(&fast, &t).content, "30%");
    }
}
