//! Catch-up from recorded status rows: apply and source rates from GTID and position deltas,
//! the lag trend and its ETA, a stopped SQL thread falling behind, a new binlog file, a
//! multi-source channel's own domains, and every figure that cannot be told left unknown.

use super::*;
use crate::gtid::GtidSet;
use crate::mysql::row::fixture_row as fixture;
use crate::mysql::{Family, ReplicaStatus};
use crate::store::lag::Lag;

fn list(text: &str) -> GtidList {
    GtidList::parse(text).unwrap()
}

fn pos(file: &str, at: u64) -> BinlogPos {
    BinlogPos {
        file: file.to_owned(),
        pos: at,
    }
}

/// A `MariaDB` channel that has applied `slave_pos`, up to `applied` in its source's binlog.
fn status(slave_pos: &str, applied: BinlogPos, sql_running: bool) -> ReplicaStatus {
    let row = fixture("mariadb-10.11/show_all_slaves_status__running.txt");
    let mut status = ReplicaStatus::from_row(&row).unwrap();
    status.gtid = ReplicaGtid::Mariadb {
        using_gtid: "Slave_Pos".to_owned(),
        io_pos: list(slave_pos),
        slave_pos: Some(list(slave_pos)),
    };
    status.applied = applied;
    status.sql_running = sql_running;
    status
}

fn replica_state() -> NodeState {
    NodeState::from_row(
        &fixture("mariadb-10.11/state__replica.txt"),
        Family::Mariadb,
    )
    .unwrap()
}

fn source_state(binlog_pos: &str) -> NodeState {
    NodeState {
        gtid: GtidState::Mariadb {
            binlog_pos: list(binlog_pos),
            slave_pos: GtidList::empty(),
            current_pos: list(binlog_pos),
        },
        read_only: false,
        super_read_only: None,
        parallel_workers: None,
    }
}

fn exact(lag: Duration) -> Lag {
    Lag::Exact { lag }
}

fn unknown() -> Lag {
    Lag::Unknown {
        reason: "no heartbeat read yet".to_owned(),
    }
}

const fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn close(got: Option<f64>, want: f64) -> bool {
    got.is_some_and(|g| (g - want).abs() < 1e-6)
}

/// Ten polls a second apart: the source writes 50 trx/s and 10 kB/s in domain 0, the channel
/// applies 80 trx/s and 16 kB/s, its lag falls from 30 s by 0.6 s/s.
fn catching_up() -> (ApplyHistory, WriteHistory, Vec<BinlogFile>) {
    let (mut applied, mut written) = (ApplyHistory::default(), WriteHistory::default());
    let replica = replica_state();
    for i in 0..10 {
        let at_ms = 100_000 + i * 1_000;
        let done = status(
            &format!("0-1-{}", 1_000 + 80 * i),
            pos("binlog.000001", 10_000 + 16_000 * i),
            true,
        );
        let lag = Duration::from_millis(30_000 - 600 * i);
        applied.record(at_ms, &done, &replica, Some(lag));
        let head = pos("binlog.000001", 200_000 + 10_000 * i);
        written.record(
            at_ms,
            &source_state(&format!("0-1-{}", 5_000 + 50 * i)),
            Some(&head),
        );
    }
    let files = vec![BinlogFile {
        name: "binlog.000001".to_owned(),
        size: 300_000,
    }];
    (applied, written, files)
}

#[test]
fn rates_from_gtid_and_position_deltas_and_an_eta_from_the_lag_trend() {
    let (applied, written, files) = catching_up();
    let source = SourceInput {
        writes: &written,
        files: &files,
    };
    let lag = &exact(Duration::from_millis(24_600));
    let got = catch_up(&applied, Some(source), true, lag, Duration::ZERO);
    assert_eq!(got.state, CatchUpState::CatchingUp);
    assert!(close(got.apply_trx_per_s, 80.0), "{got:?}");
    assert!(close(got.source_trx_per_s, 50.0), "{got:?}");
    assert!(close(got.apply_bytes_per_s, 16_000.0), "{got:?}");
    assert!(close(got.source_bytes_per_s, 10_000.0), "{got:?}");
    assert!(close(got.lag_change_s_per_s, -0.6), "{got:?}");
    assert!(close(got.deficit_trx_per_s(), -30.0), "{got:?}");
    // 24.6 s of lag shrinking 0.6 s/s: 41 s.
    assert_eq!(got.eta.map(|d| d.as_millis()), Some(41_000));
    assert_eq!(got.window, Some(secs(9)));
    assert_eq!(got.text(), "catching up 0.60 s/s, ~41s");
    // A deliberate delay is not lag to catch up on: 20 s of it leaves 4.6 s, 7.7 s away.
    let source = SourceInput {
        writes: &written,
        files: &files,
    };
    let delayed = catch_up(&applied, Some(source), true, lag, secs(20));
    assert_eq!(delayed.eta.map(|d| d.as_secs()), Some(7));
}

#[test]
fn one_polls_jitter_does_not_flip_the_trend() {
    let (mut applied, _, _) = catching_up();
    let replica = replica_state();
    // The newest poll reads a lag a whole second higher than the trend (a late heartbeat).
    let done = status("0-1-1800", pos("binlog.000001", 170_000), true);
    applied.record(110_000, &done, &replica, Some(secs(25)));
    let got = catch_up(&applied, None, true, &exact(secs(25)), Duration::ZERO);
    assert_eq!(got.state, CatchUpState::CatchingUp, "{got:?}");
    assert!(got.lag_change_s_per_s.is_some_and(|s| s < -0.4), "{got:?}");
}

#[test]
fn a_stopped_sql_thread_falls_behind_by_the_sources_rate() {
    let (mut applied, mut written) = (ApplyHistory::default(), WriteHistory::default());
    let replica = replica_state();
    for i in 0..8 {
        let at_ms = i * 1_000;
        let stopped = status("0-1-1000", pos("binlog.000001", 10_000), false);
        applied.record(at_ms, &stopped, &replica, Some(secs(5 + i)));
        let head = pos("binlog.000001", 20_000 + 4_000 * i);
        written.record(
            at_ms,
            &source_state(&format!("0-1-{}", 1_000 + 40 * i)),
            Some(&head),
        );
    }
    let source = SourceInput {
        writes: &written,
        files: &[],
    };
    let got = catch_up(
        &applied,
        Some(source),
        true,
        &exact(secs(12)),
        Duration::ZERO,
    );
    assert_eq!(got.state, CatchUpState::FallingBehind);
    assert!(close(got.apply_trx_per_s, 0.0) && close(got.source_trx_per_s, 40.0));
    assert!(close(got.lag_change_s_per_s, 1.0), "{got:?}");
    assert_eq!(got.text(), "falling behind 40 trx/s");
    assert_eq!(got.eta, None);
    assert_eq!(got.eta_text(), "at this rate never");
    // No binlog list yet: the source's head names its current file, which is enough here.
    assert!(close(got.apply_bytes_per_s, 0.0), "{got:?}");
    assert!(close(got.source_bytes_per_s, 4_000.0), "{got:?}");
}

#[test]
fn positions_across_a_new_binlog_file_count_the_rest_of_the_old_one() {
    let (mut applied, mut written) = (ApplyHistory::default(), WriteHistory::default());
    let replica = replica_state();
    // Applied from 900 kB into binlog.000007 (1 MB) to 100 kB into binlog.000008 in 5 s;
    // the source from 950 kB to 350 kB of binlog.000008, which its list does not hold yet.
    let polls = [
        (pos("binlog.000007", 900_000), pos("binlog.000007", 950_000)),
        (
            pos("binlog.000007", 950_000),
            pos("binlog.000007", 1_000_000),
        ),
        (
            pos("binlog.000007", 1_000_000),
            pos("binlog.000008", 100_000),
        ),
        (pos("binlog.000008", 20_000), pos("binlog.000008", 200_000)),
        (pos("binlog.000008", 60_000), pos("binlog.000008", 270_000)),
        (pos("binlog.000008", 100_000), pos("binlog.000008", 350_000)),
    ];
    for (i, (done, head)) in (0_u64..).zip(polls) {
        let at_ms = i * 1_000;
        applied.record(at_ms, &status("0-1-5", done, true), &replica, Some(secs(9)));
        written.record(at_ms, &source_state("0-1-5"), Some(&head));
    }
    let files = vec![BinlogFile {
        name: "binlog.000007".to_owned(),
        size: 1_000_000,
    }];
    let source = SourceInput {
        writes: &written,
        files: &files,
    };
    let got = catch_up(
        &applied,
        Some(source),
        true,
        &exact(secs(9)),
        Duration::ZERO,
    );
    // 100 kB left of the old file and 100 kB of the new one over 5 s.
    assert!(close(got.apply_bytes_per_s, 40_000.0), "{got:?}");
    // 50 kB left of the old file and 350 kB of the new, listed or not.
    assert!(close(got.source_bytes_per_s, 80_000.0), "{got:?}");
    // A file the list does not hold between the two ends: unknown, not a guess.
    let source = SourceInput {
        writes: &written,
        files: &[],
    };
    let got = catch_up(
        &applied,
        Some(source),
        true,
        &exact(secs(9)),
        Duration::ZERO,
    );
    assert_eq!(got.apply_bytes_per_s, None);
    assert_eq!(got.source_bytes_per_s, None);
}

#[test]
fn a_replica_with_no_source_data_is_unknown_not_a_guess() {
    let (applied, _, _) = catching_up();
    // The source is not polled: its rate is unknown, and so is the lag (no root heartbeat).
    let got = catch_up(&applied, None, true, &unknown(), Duration::ZERO);
    assert_eq!(got.state, CatchUpState::Unknown);
    assert_eq!((got.source_trx_per_s, got.source_bytes_per_s), (None, None));
    assert_eq!(got.apply_bytes_per_s, None);
    assert_eq!(
        (got.text().as_str(), got.eta_text().as_str()),
        ("?", "unknown")
    );
    // On a multi-source replica the channel's share of Gtid_Slave_Pos cannot be told either.
    let got = catch_up(&applied, None, false, &unknown(), Duration::ZERO);
    assert_eq!(got.apply_trx_per_s, None);
    // One channel: every domain applied is that channel's; the rate is measured, not guessed.
    let got = catch_up(&applied, None, true, &unknown(), Duration::ZERO);
    assert!(close(got.apply_trx_per_s, 80.0), "{got:?}");
    // Nothing recorded at all.
    let none = catch_up(
        &ApplyHistory::default(),
        None,
        true,
        &exact(secs(3)),
        Duration::ZERO,
    );
    assert_eq!(none, CatchUp::default());
}

#[test]
fn a_multi_source_channel_counts_only_its_sources_domains() {
    let (mut applied, mut written) = (ApplyHistory::default(), WriteHistory::default());
    let replica = replica_state();
    for i in 0..6 {
        let at_ms = i * 1_000;
        // Domain 0 (the other channel's) races ahead; domain 1 moves 10 trx/s.
        let done = status(
            &format!("0-1-{},1-2-{}", 500 * i, 100 + 10 * i),
            pos("binlog.000001", 4),
            true,
        );
        applied.record(at_ms, &done, &replica, Some(secs(3)));
        written.record(at_ms, &source_state(&format!("1-2-{}", 200 + 10 * i)), None);
    }
    let source = SourceInput {
        writes: &written,
        files: &[],
    };
    let got = catch_up(
        &applied,
        Some(source),
        false,
        &exact(secs(3)),
        Duration::ZERO,
    );
    assert!(close(got.apply_trx_per_s, 10.0), "{got:?}");
    assert!(close(got.source_trx_per_s, 10.0), "{got:?}");
    assert_eq!(got.state, CatchUpState::NotShrinking);
    assert_eq!(got.text(), "not shrinking");
}

#[test]
fn a_thread_restart_starts_the_window_again_and_too_little_is_unknown() {
    let (mut applied, _, _) = catching_up();
    let replica = replica_state();
    // The SQL thread stops: the polls before it say nothing about the stop.
    let stopped = status("0-1-1720", pos("binlog.000001", 154_000), false);
    applied.record(110_000, &stopped, &replica, Some(secs(25)));
    applied.record(111_000, &stopped, &replica, Some(secs(26)));
    let got = catch_up(&applied, None, true, &exact(secs(26)), Duration::ZERO);
    assert_eq!(got.state, CatchUpState::Unknown);
    assert_eq!(
        (got.apply_trx_per_s, got.lag_change_s_per_s, got.window),
        (None, None, None)
    );
    // Caught up needs no trend.
    let got = catch_up(
        &applied,
        None,
        true,
        &exact(Duration::from_millis(400)),
        Duration::ZERO,
    );
    assert_eq!(
        (got.state, got.eta_text().as_str()),
        (CatchUpState::CaughtUp, "now")
    );
}

#[test]
fn a_count_that_goes_backwards_is_unknown_and_mysql_counts_its_set() {
    let a = Progress::Domains(list("0-1-50,1-2-7"));
    let b = Progress::Domains(list("0-1-40,1-2-9"));
    assert_eq!(b.since(&a, None), None);
    assert_eq!(a.since(&b, Some(&list("0-1-1"))), Some(10));
    // A domain that was not there yet counts from 0.
    assert_eq!(
        Progress::Domains(list("0-1-3,5-1-4")).since(&Progress::Domains(list("0-1-1")), None),
        Some(6)
    );
    let set = |text: &str| GtidSet::parse(text).unwrap();
    let uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    let before = Progress::of_source(&GtidState::Mysql {
        executed: set(&format!("{uuid}:1-100")),
    });
    let after = Progress::of_source(&GtidState::Mysql {
        executed: set(&format!("{uuid}:1-130:140")),
    });
    assert_eq!(
        after.zip(before).and_then(|(a, b)| a.since(&b, None)),
        Some(31)
    );
    // GTIDs off: no count at all rather than a count that never moves.
    let off = GtidState::Mysql {
        executed: GtidSet::empty(),
    };
    assert_eq!(Progress::of_source(&off), None);
    assert_eq!(a.since(&Progress::Count(3), None), None);
}

/// A fresh rwtop (or a replica that has not applied its first heartbeat) only bounds the lag:
/// no trend is read from a bound, but the rates alone say the source outruns the channel.
#[test]
fn a_bounded_lag_falls_behind_on_the_rates_alone() {
    let (mut applied, mut written) = (ApplyHistory::default(), WriteHistory::default());
    let replica = replica_state();
    for i in 0..8 {
        let at_ms = i * 1_000;
        let stopped = status("0-1-1000", pos("binlog.000001", 10_000), false);
        applied.record(at_ms, &stopped, &replica, None);
        written.record(
            at_ms,
            &source_state(&format!("0-1-{}", 1_000 + 23 * i)),
            None,
        );
    }
    let bound = Lag::AtLeast {
        lag: secs(7),
        upper: None,
    };
    let source = SourceInput {
        writes: &written,
        files: &[],
    };
    let got = catch_up(&applied, Some(source), true, &bound, Duration::ZERO);
    assert_eq!(got.lag_change_s_per_s, None);
    assert_eq!(
        (got.state, got.text().as_str()),
        (CatchUpState::FallingBehind, "falling behind 23 trx/s")
    );
    // Keeping pace, the bound says nothing either way; nor does a small bound.
    let got = catch_up(&applied, None, true, &bound, Duration::ZERO);
    assert_eq!(got.state, CatchUpState::Unknown);
    let small = Lag::AtLeast {
        lag: Duration::from_millis(300),
        upper: None,
    };
    let source = SourceInput {
        writes: &written,
        files: &[],
    };
    let got = catch_up(&applied, Some(source), true, &small, Duration::ZERO);
    assert_eq!(got.state, CatchUpState::FallingBehind);
}
