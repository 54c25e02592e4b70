//! How `rwtop probe` shows results: a progress line per probe, and the bake-off table.

use std::fmt::Write as _;
use std::time::Duration;

use rwtop::probe::{Outcome, ProbeResult, TallyView};
use rwtop::units;

/// The longest main cause a table row shows.
const CAUSE_WIDTH: usize = 48;

/// `[3/20] gtid-wait(1s) on r1: fresh, waited 400µs`
pub fn progress(done: usize, total: usize, r: &ProbeResult) -> String {
    let mut line = format!("[{done}/{total}] {} on {}: ", r.strategy, r.target);
    match (r.outcome, &r.cause) {
        (Outcome::Error, cause) => {
            let _ = write!(line, "error: {}", cause.as_deref().unwrap_or("unknown"));
        }
        (outcome, cause) => {
            line.push_str(outcome.label());
            if let Some(cause) = cause {
                let _ = write!(line, " ({cause})");
            }
            // `agg/p2` read on agg is read where it was aimed.
            let aimed =
                rwtop::probe::Target::parse(&r.target).map_or(r.target.as_str(), |t| t.node);
            if let Some(node) = r.served_by.as_deref().filter(|n| *n != aimed) {
                let _ = write!(line, ", read on {node}");
            }
            let _ = write!(line, ", waited {}", units::duration(r.waited));
        }
    }
    line
}

fn truncated(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(width - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

const HEADER: [&str; 15] = [
    "STRATEGY",
    "REPLICA",
    "PROBES",
    "FRESH",
    "STALE",
    "FELL BACK",
    "ERRORS",
    "WAIT P50",
    "WAIT P99",
    "WRITE P50",
    "WRITE P99",
    "PRIMARY READS",
    "PRIMARY SHARE",
    "MONITOR",
    "MAIN CAUSE",
];

pub fn table(rows: &[TallyView]) -> String {
    let wait = |d: Option<Duration>| d.map_or_else(|| "-".to_owned(), units::duration);
    let percent = |t: &TallyView, n: u32| format!("{:.0}%", t.percent(n));
    let cells: Vec<[String; 15]> = rows
        .iter()
        .map(|t| {
            [
                t.strategy.to_string(),
                t.replica.clone(),
                t.probes.to_string(),
                percent(t, t.fresh),
                percent(t, t.stale),
                percent(t, t.fell_back),
                t.errors.to_string(),
                wait(t.wait_ms.map(|w| w.durations().p50)),
                wait(t.wait_ms.map(|w| w.durations().p99)),
                wait(t.cost.write_wait_ms.map(|w| w.durations().p50)),
                wait(t.cost.write_wait_ms.map(|w| w.durations().p99)),
                t.primary_reads.to_string(),
                t.cost
                    .primary_share
                    .map_or_else(|| "-".to_owned(), |p| format!("{p:.0}%")),
                t.monitor(),
                t.main_cause()
                    .map_or_else(|| "-".to_owned(), |c| truncated(c, CAUSE_WIDTH)),
            ]
        })
        .collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |row: &[&str]| {
        let mut out = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            let _ = match i {
                0 | 1 | 13 | 14 => write!(out, "{cell:<w$}  "),
                _ => write!(out, "{cell:>w$}  "),
            };
        }
        format!("{}\n", out.trim_end())
    };
    let mut out = line(&HEADER);
    for row in &cells {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use rwtop::probe::{Outcome, ProbeResult, Strategy, TallyCost, TallyView, WaitMs};

    use super::{progress, table};

    fn row(strategy: Strategy, fell_back: u32, cause: Option<&str>) -> TallyView {
        TallyView {
            strategy,
            replica: "r1".into(),
            probes: 4,
            fresh: 4 - fell_back,
            stale: 0,
            fell_back,
            errors: 0,
            wait_ms: Some(WaitMs {
                p50: 0.42,
                p99: 1500.0,
            }),
            primary_reads: fell_back,
            queries: 12,
            causes: cause
                .map(|c| (c.to_owned(), fell_back))
                .into_iter()
                .collect(),
            cost: TallyCost {
                reads: 4,
                primary_share: Some(f64::from(fell_back) * 25.0),
                ..TallyCost::default()
            },
        }
    }

    #[test]
    fn the_table_aligns_its_columns_and_cuts_long_causes() {
        let long = format!("timeout after 1s: {}", "x".repeat(80));
        let text = table(&[
            row(Strategy::None, 0, None),
            row(Strategy::GtidWait(Duration::from_secs(1)), 1, Some(&long)),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with("STRATEGY       REPLICA  PROBES  FRESH"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("none           r1            4   100%"),
            "{text}"
        );
        assert!(
            lines[2].contains("gtid-wait(1s)  r1            4    75%"),
            "{text}"
        );
        assert!(lines[2].contains("420µs      1.5s"), "{text}");
        assert!(lines[2].ends_with('…') && lines[2].contains("timeout after 1s: xx"));
        assert!(lines[1].ends_with("  -"), "{text}");
        // The column after the cause-free rows still lines up under its header.
        let at = |line: &str, what: &str| line.find(what).unwrap();
        assert_eq!(at(lines[0], "WAIT P50") + 8, at(lines[1], "420µs") + 5);
        let none = TallyView {
            wait_ms: None,
            causes: BTreeMap::new(),
            ..row(Strategy::Primary, 0, None)
        };
        assert!(
            table(&[none])
                .lines()
                .nth(1)
                .unwrap()
                .contains("   -         -")
        );
    }

    #[test]
    fn the_table_shows_what_the_proxies_modes_cost() {
        let mut after = row(Strategy::GrAfter(Duration::from_secs(2)), 0, None);
        after.cost.write_wait_ms = Some(WaitMs {
            p50: 0.8,
            p99: 2000.0,
        });
        let mut fast = row(Strategy::MaxscaleFast(rwtop::probe::Fast::POLLED), 3, None);
        fast.cost.position_age_ms = Some(WaitMs {
            p50: 300.0,
            p99: 950.0,
        });
        let mut own = fast.clone();
        own.strategy = Strategy::MaxscaleFast(rwtop::probe::Fast {
            monitor: rwtop::probe::Monitor::Every(Duration::from_millis(100)),
            after: Duration::ZERO,
        });
        own.cost.monitor_ms = Some(100.0);
        let text = table(&[after, fast, own]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0]
                .contains("WAIT P99  WRITE P50  WRITE P99  PRIMARY READS  PRIMARY SHARE  MONITOR"),
            "{text}"
        );
        assert!(lines[1].contains("800µs         2s"), "{text}");
        assert!(lines[2].contains("75%  poll, aged 950ms"), "{text}");
        assert!(lines[3].contains("100ms, aged 950ms"), "{text}");
    }

    #[test]
    fn a_progress_line_says_outcome_cause_node_and_wait() {
        let mut r = ProbeResult {
            at: chrono::Utc::now(),
            strategy: Strategy::GtidWait(Duration::from_secs(1)),
            target: "r1".into(),
            served_by: Some("r1".into()),
            outcome: Outcome::Fresh,
            cause: None,
            note: None,
            waited: Duration::from_micros(400),
            total: Duration::from_millis(2),
            queries: 4,
            primary_reads: 0,
            cost: rwtop::probe::ProbeCost::default(),
        };
        assert_eq!(
            progress(3, 20, &r),
            "[3/20] gtid-wait(1s) on r1: fresh, waited 400µs"
        );
        r.outcome = Outcome::FellBack;
        r.cause = Some("timeout after 1s".into());
        r.served_by = Some("primary".into());
        r.waited = Duration::from_millis(1001);
        assert_eq!(
            progress(4, 20, &r),
            "[4/20] gtid-wait(1s) on r1: fell back (timeout after 1s), read on primary, waited 1s"
        );
        r.target = "agg/p2".into();
        r.served_by = Some("agg".into());
        r.cause = None;
        r.outcome = Outcome::Stale;
        assert_eq!(
            progress(5, 20, &r),
            "[5/20] gtid-wait(1s) on agg/p2: stale, waited 1s",
            "a channel read on its own node"
        );
        r.target = "r1".into();
        r.outcome = Outcome::Error;
        r.cause = Some("refused: read-only mode".into());
        assert_eq!(
            progress(5, 20, &r),
            "[5/20] gtid-wait(1s) on r1: error: refused: read-only mode"
        );
    }
}
