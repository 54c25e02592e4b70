//! The what-if pane's content (`docs/whatif.md`): every read-after-write setting judged on the lag
//! the view has kept (the snapshot's per-channel charts, up to 15 minutes), with no write. The
//! judgement is `whatif::run`'s, the same as `rwtop whatif`'s; it is worked out again every
//! [`REFRESH`] of snapshot time while the pane is shown, never per frame.

use std::time::Duration;

use crate::store::Snapshot;
use crate::units;
use crate::whatif::{self, Collector, Goal, Row, Setting, Workload};

/// How often the pane is worked out again, in snapshot time.
pub const REFRESH: Duration = Duration::from_secs(5);

/// The pane's workload: a read at once, 50 ms and 500 ms after each write, one read a write (as
/// `rwtop whatif --read-after 0,50ms,500ms`).
fn workload() -> Workload {
    Workload {
        reads_per_write: 1,
        read_after: vec![
            Duration::ZERO,
            Duration::from_millis(50),
            Duration::from_millis(500),
        ],
    }
}

/// What the pane shows, worked out at snapshot time `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhatifView {
    pub at: Duration,
    /// The summary, or why there is none yet (too little lag kept, no replica).
    pub outcome: Result<Summary, String>,
}

/// Per family of settings (none, sleep, sticky, …) its best value, and the recommendation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// What was read: the channels and how much lag each had.
    pub read: String,
    pub goal: String,
    pub rows: Vec<RowView>,
    pub recommended: Option<String>,
    pub why: String,
}

/// One setting as the pane prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowView {
    pub setting: String,
    pub stale: String,
    pub error: String,
    pub primary: String,
    pub peak: String,
    pub wait_p99: String,
    pub meets_goal: bool,
    pub recommended: bool,
}

/// Works the pane out again when it is older than [`REFRESH`] (or from another recording
/// position: a replay may seek back).
pub fn refresh(view: &mut Option<WhatifView>, snapshot: &Snapshot) {
    let fresh = view
        .as_ref()
        .is_some_and(|v| v.at <= snapshot.uptime && snapshot.uptime.saturating_sub(v.at) < REFRESH);
    if !fresh {
        *view = Some(WhatifView {
            at: snapshot.uptime,
            outcome: summarize(snapshot),
        });
    }
}

fn summarize(snapshot: &Snapshot) -> Result<Summary, String> {
    let mut collector = Collector::default();
    collector.add(snapshot);
    let heartbeat = collector.heartbeat();
    let channels = collector.into_channels();
    let goal = Goal::default();
    let report = whatif::run(
        "the lag kept so far",
        &channels,
        heartbeat,
        &Setting::grid(),
        &workload(),
        goal,
    )
    .map_err(|e| match e {
        // The live view's own advice: what the CLI says (record longer) does not apply here.
        whatif::InputError::TooShort {
            best, have, need, ..
        } => format!(
            "the what-if needs {need} of heartbeat lag on one channel; {best} has {have} so far. \
             It fills in while rwtop runs: this pane is worked out again every {}.",
            units::duration(REFRESH)
        ),
        other => other.to_string(),
    })?;
    let read = report
        .channels
        .iter()
        .map(|c| {
            let known = Duration::try_from_secs_f64(c.known_s).unwrap_or_default();
            format!("{} {}", c.target, units::duration(known))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let recommended = report.recommended.as_ref();
    let rows = families(&report.rows)
        .into_iter()
        .map(|row| row_view(row, recommended))
        .collect();
    Ok(Summary {
        read,
        goal: format!(
            "stale ≤ {}, primary ≤ {} of reads in any minute",
            whatif::pct(goal.max_stale),
            whatif::pct(goal.primary_budget)
        ),
        rows,
        recommended: recommended.map(ToString::to_string),
        why: report.why,
    })
}

/// One row per family, in the grid's order: the recommended setting where it is of that
/// family, else the family's cheapest value that meets the goal (fewest primary reads, then the
/// shortest p99 wait), else its least stale value.
fn families(rows: &[Row]) -> Vec<&Row> {
    let mut names: Vec<&str> = Vec::new();
    for row in rows {
        let name = row.judged.setting.name();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let family = rows.iter().filter(|r| r.judged.setting.name() == name);
            let cheapest = family.clone().filter(|r| r.meets_goal).min_by(|a, b| {
                (a.judged.primary, a.judged.wait_p99_ms)
                    .partial_cmp(&(b.judged.primary, b.judged.wait_p99_ms))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            cheapest.or_else(|| family.min_by(|a, b| a.judged.stale.total_cmp(&b.judged.stale)))
        })
        .collect()
}

fn row_view(row: &Row, recommended: Option<&Setting>) -> RowView {
    let j = &row.judged;
    RowView {
        setting: j.setting.to_string(),
        stale: whatif::pct(j.stale),
        error: format!("±{}", whatif::pct(j.stale_error)),
        primary: whatif::pct(j.primary),
        peak: whatif::pct(j.primary_peak_minute),
        wait_p99: whatif::wait(j.wait_p99_ms),
        meets_goal: row.meets_goal,
        recommended: recommended == Some(&j.setting),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{REFRESH, WhatifView, refresh};
    use crate::store::series::Point;
    use crate::store::testkit::Topo;
    use crate::ui::UiState;
    use crate::ui::panels::header::tests::{draw, lines};

    /// r1 caught up for a minute, then its link stalled for 20 s (lag climbing with the
    /// clock), then caught up again; r2 caught up throughout: one point a second, as polled.
    fn stalled_r1() -> crate::store::Snapshot {
        let mut topo = Topo::new();
        let point = |s: u64, lag_ms: u32| Point {
            at_ms: s * 1000,
            heartbeat_lag_ms: Some(lag_ms),
            sbm_s: Some(0),
        };
        let r1: Vec<Point> = (0..100)
            .map(|s| match s {
                60..80 => point(s, u32::try_from((s - 59) * 1000).unwrap()),
                _ => point(s, 0),
            })
            .collect();
        let r2: Vec<Point> = (0..100).map(|s| point(s, 0)).collect();
        topo.replica_mut("r1", |r| r.series = r1.into());
        topo.replica_mut("r2", |r| r.series = r2.into());
        let mut s = topo.at(100);
        s.uptime = Duration::from_secs(100);
        s
    }

    #[test]
    fn a_stall_makes_none_stale_and_a_wait_meet_the_goal() {
        let snapshot = stalled_r1();
        let mut view = None;
        refresh(&mut view, &snapshot);
        let summary = view.as_ref().unwrap().outcome.clone().unwrap();
        let row = |name: &str| {
            summary
                .rows
                .iter()
                .find(|r| r.setting.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} row in {summary:#?}"))
                .clone()
        };
        let none = row("none");
        assert!(!none.meets_goal && none.stale != "0.00%", "{none:?}");
        let wait = row("gtid-wait");
        assert!(wait.meets_goal && wait.stale == "0.00%", "{wait:?}");
        assert!(summary.recommended.is_some(), "{summary:#?}");
        assert!(summary.read.contains("r1") && summary.read.contains("r2"));
    }

    #[test]
    fn it_is_worked_out_again_only_every_refresh() {
        let mut snapshot = stalled_r1();
        let mut view = Some(WhatifView {
            at: snapshot.uptime,
            outcome: Err("placeholder".to_owned()),
        });
        refresh(&mut view, &snapshot);
        assert_eq!(
            view.as_ref().unwrap().outcome,
            Err("placeholder".to_owned())
        );
        snapshot.uptime += REFRESH;
        refresh(&mut view, &snapshot);
        assert!(view.as_ref().unwrap().outcome.is_ok());
    }

    #[test]
    fn too_little_lag_says_what_it_needs() {
        let mut view = None;
        refresh(&mut view, &Topo::new().snapshot);
        let why = view.unwrap().outcome.unwrap_err();
        assert!(why.contains("lag"), "{why}");
    }

    #[test]
    fn the_pane_shows_each_family_and_the_recommendation() {
        let snapshot = stalled_r1();
        let mut state = UiState::default();
        refresh(&mut state.whatif, &snapshot);
        let text = lines(&draw(
            crate::ui::panels::whatif::render,
            &snapshot,
            &state,
            100,
            20,
        ))
        .join("\n");
        for want in [
            "what-if",
            "none",
            "sleep(",
            "gtid-wait(",
            "fast(",
            "meets ★",
            "goal:",
        ] {
            assert!(text.contains(want), "{want} missing in\n{text}");
        }
    }
}
