//! The what-if model on hand-made lag series: lag between samples and across gaps, when a wait
//! ends, what each setting reads during a stall, the recommendation within the goal, and what a
//! too-short or lagless input says it needs.

#![expect(
    clippy::float_cmp,
    reason = "on these series the shares are exact fractions"
)]

use std::time::Duration;

use super::*;
use crate::store::series::Point;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One point a second for `secs` seconds, lag from `lag(second)` (ms), SBM from `sbm`.
fn series(secs: u64, lag: impl Fn(u64) -> Option<u32>, sbm: impl Fn(u64) -> u32) -> Vec<Point> {
    (0..secs)
        .map(|s| Point {
            at_ms: s * 1_000,
            heartbeat_lag_ms: lag(s),
            sbm_s: Some(sbm(s)),
        })
        .collect()
}

/// 100 s: healthy (lag 0), then a stalled link from 40 s to 60 s (lag grows 1 s/s, SBM stays 0
/// as on a frozen relay), then caught up at once.
fn stalled() -> Vec<Point> {
    series(
        100,
        |s| {
            Some(if (40..60).contains(&s) {
                u32::try_from((s - 40) * 1_000).unwrap()
            } else {
                0
            })
        },
        |_| 0,
    )
}

fn channel(points: Vec<Point>) -> ChannelSeries {
    ChannelSeries {
        node: "r1".to_owned(),
        channel: String::new(),
        points,
    }
}

fn judge(points: &[Point], setting: &str, after: u64) -> Judged {
    let workload = Workload {
        reads_per_write: 1,
        read_after: vec![ms(after)],
    };
    let line = LagLine::new(points);
    simulate(
        &[line],
        Setting::parse(setting).unwrap(),
        &workload,
        1_250.0,
    )
}

#[test]
fn the_lag_between_samples_is_linear_and_a_gap_is_unknown() {
    let mut points = series(10, |s| Some(u32::try_from(s * 100).unwrap()), |_| 0);
    points.push(Point {
        at_ms: 20_000,
        heartbeat_lag_ms: Some(0),
        sbm_s: None,
    });
    let line = LagLine::new(&points);
    assert_eq!(line.spacing(), 1_000.0);
    assert_eq!(line.lag_at(2_500.0), Some(250.0));
    assert_eq!(line.lag_at(15_000.0), None, "a 11 s gap is not bridged");
    assert_eq!(line.measured_at(2_900.0), Some(200.0));
    assert_eq!(line.known_ms(), 9_000.0);
}

#[test]
fn a_wait_ends_when_the_lag_falls_below_the_time_since_the_write() {
    let line = LagLine::new(&stalled());
    // Written at 50 s, 10 s into the stall: visible once the replica catches up at 60 s,
    // linear from lag 19 s at 59 s to 0 at 60 s: t − 50 000 = 19 (60 000 − t), t = 59.5 s.
    match line.first_visible(50_000.0, 50_000.0, 65_000.0) {
        Visible::At(t) => assert!((t - 59_500.0).abs() < 1.0, "{t}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        line.first_visible(50_000.0, 50_000.0, 52_000.0),
        Visible::NotBy
    );
    assert_eq!(
        line.first_visible(10_000.0, 10_000.0, 11_000.0),
        Visible::At(10_000.0)
    );
    assert_eq!(
        line.first_visible(98_000.0, 98_500.0, 120_000.0),
        Visible::At(98_500.0)
    );
}

#[test]
fn none_is_stale_for_the_stall_and_the_waits_fall_back_there() {
    let points = stalled();
    let none = judge(&points, "none", 0);
    // Writes at 41..=59 s are stale (at 40 s the lag is still 0): 19 of 100.
    assert!((none.stale - 0.19).abs() < 1e-9, "{none:?}");
    // The 81 healthy reads come at once on a replica that shows lag 0: a race it cannot call.
    assert!((none.race - 0.81).abs() < 1e-9, "{none:?}");
    assert!(
        (none.stale_error - none.race - 0.045).abs() < 1e-9,
        "{none:?}"
    );
    let later = judge(&points, "none", 50);
    assert!(
        later.race < 0.02,
        "50 ms after the write, a caught-up replica has it: {later:?}"
    );
    assert!(later.stale_error <= 0.06, "{later:?}");
    assert_eq!(none.primary, 0.0);

    let wait = judge(&points, "gtid-wait(500ms)", 0);
    assert_eq!(wait.stale, 0.0, "a wait function never reads stale");
    assert!((wait.primary - 0.19).abs() < 0.011, "{wait:?}");
    assert_eq!(wait.wait_p99_ms, 500.0);

    let long = judge(&points, "gtid-wait(30s)", 0);
    assert_eq!(long.primary, 0.0, "a timeout past the stall waits it out");
    assert!(long.wait_p99_ms > 15_000.0, "{long:?}");

    // SBM stays 0 on a frozen relay: sbm-zero reads at once and as stale as none.
    let sbm = judge(&points, "sbm-zero(1s)", 0);
    assert_eq!((sbm.stale, sbm.primary), (none.stale, 0.0));

    let threshold = judge(&points, "lag-threshold(1s)", 0);
    assert!(
        threshold.stale > 0.0 && threshold.stale < 0.03,
        "{threshold:?}"
    );
    assert!((threshold.primary - 0.18).abs() < 0.011, "{threshold:?}");
    assert!(threshold.primary_peak_minute > 0.29, "{threshold:?}");
}

#[test]
fn a_read_after_its_delay_sees_a_lag_below_it() {
    let steady = series(60, |_| Some(300), |_| 0);
    assert_eq!(judge(&steady, "none", 0).stale, 1.0);
    assert_eq!(judge(&steady, "none", 500).stale, 0.0);
    assert_eq!(judge(&steady, "sleep(250ms)", 0).stale, 1.0);
    let slept = judge(&steady, "sleep(500ms)", 0);
    assert_eq!((slept.stale, slept.wait_p50_ms), (0.0, 500.0));
    assert_eq!(judge(&steady, "sticky(1s)", 500).primary, 1.0);
    assert_eq!(judge(&steady, "sticky(1s)", 1_000).stale, 0.0);
    let wait = judge(&steady, "pos-wait(1s)", 0);
    assert_eq!((wait.stale, wait.primary), (0.0, 0.0));
    assert!((wait.wait_p50_ms - 300.0).abs() < 1e-6, "{wait:?}");
    assert_eq!(judge(&steady, "lag-threshold(250ms)", 0).primary, 1.0);
}

#[test]
fn fast_reads_the_replica_once_the_monitor_saw_the_write() {
    let healthy = series(60, |_| Some(0), |_| 0);
    assert_eq!(judge(&healthy, "fast(1s)", 0).primary, 1.0);
    let half = judge(&healthy, "fast(1s)", 500);
    assert!((half.primary - 0.5).abs() < 1e-9, "{half:?}");
    let late = judge(&healthy, "fast(1s)", 2_000);
    assert_eq!((late.primary, late.stale), (0.0, 0.0));
    assert_eq!(judge(&stalled(), "fast(100ms)", 200).stale, 0.0);
}

fn whatif(points: Vec<Point>, settings: &str) -> Result<WhatifReport, InputError> {
    run(
        "rec.jsonl",
        &[channel(points)],
        ms(250),
        &Setting::parse_list(settings).unwrap(),
        &Workload::default(),
        Goal::default(),
    )
}

#[test]
fn the_cheapest_setting_within_the_goal_is_recommended() {
    let report = whatif(
        stalled(),
        "none,primary,lag-threshold(1s),gtid-wait(500ms),gtid-wait(2s)",
    )
    .unwrap();
    assert_eq!(
        report.recommended,
        Some(Setting::parse("gtid-wait(2s)").unwrap()),
        "{report:#?}"
    );
    assert!(
        report.why.starts_with("gtid-wait(2s) is the cheapest of 2"),
        "{}",
        report.why
    );
    let none = &report.rows[0];
    assert!(!none.meets_goal && none.judged.stale > 0.1);

    let tight = run(
        "rec.jsonl",
        &[channel(stalled())],
        ms(250),
        &Setting::parse_list("none,gtid-wait(500ms)").unwrap(),
        &Workload::default(),
        Goal {
            max_stale: 0.001,
            primary_budget: 0.2,
        },
    )
    .unwrap();
    assert_eq!(tight.recommended, None);
    assert!(
        tight.why.contains("raise --max-stale or --primary-budget"),
        "{}",
        tight.why
    );
}

#[test]
fn too_little_or_no_lag_says_what_it_needs() {
    let short = whatif(series(20, |_| Some(0), |_| 0), "none,gtid-wait(5s)").unwrap_err();
    let text = short.to_string();
    assert!(text.contains("holds 19s of known heartbeat lag"), "{text}");
    assert!(text.contains("needs at least 35s"), "{text}");

    let none = run(
        "rec.jsonl",
        &[channel(series(100, |_| None, |_| 0))],
        ms(250),
        &[Setting::None],
        &Workload::default(),
        Goal::default(),
    )
    .unwrap_err();
    assert!(
        matches!(none, InputError::NoLag { ref without, .. } if without == "r1"),
        "{none}"
    );

    let nothing = run(
        "x",
        &[],
        ms(250),
        &[Setting::None],
        &Workload::default(),
        Goal::default(),
    );
    assert!(matches!(nothing, Err(InputError::NoReplica { .. })));
}

#[test]
fn settings_parse_and_name_the_fix() {
    assert_eq!(
        Setting::parse("fast(monitor=100ms)"),
        Ok(Setting::Fast(ms(100)))
    );
    assert_eq!(
        Setting::parse("gtid-wait(1s)").unwrap().to_string(),
        "gtid-wait(1s)"
    );
    let bare = Setting::parse("sleep").unwrap_err();
    assert!(bare.contains("write e.g. sleep(500ms)"), "{bare}");
    let unknown = Setting::parse("causal").unwrap_err();
    assert!(
        unknown.contains("expected one of none, primary"),
        "{unknown}"
    );
    assert!(
        Setting::parse("none(1s)")
            .unwrap_err()
            .contains("takes no duration")
    );
    assert!(Setting::grid().len() > 30);
}
