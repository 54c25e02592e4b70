//! `Learned`'s decisions, with no server: what a status poll asks, what its answer changes, how
//! often the node is polled and read, and when the occasional reads are due.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::gtid::DomainGtid;
use crate::mysql::batch::Reported;
use crate::mysql::replica_status::from_fixture;
use crate::mysql::row::fixture_row;
use crate::mysql::{
    BinlogFile, BinlogPos, BinlogStatus, DdlStatement, Endpoint, NodeState, Processlist, Timeouts,
};
use crate::poll::beat_gtid::Marks;
use crate::poll::feeds::Feeds;
use crate::poll::start_up::StartUp;

fn spec(interval: Duration, heartbeat: HeartbeatTable) -> PollerSpec {
    PollerSpec {
        name: "r1".to_owned(),
        endpoint: Endpoint::default(),
        timeouts: Timeouts::default(),
        interval,
        pace: Arc::new(ReadPace::new(Duration::from_millis(250), None)),
        discovery: false,
        heartbeat,
        marks: Marks::new(1),
        feeds: Feeds::new(),
        nudge: Arc::default(),
        disks_every: None,
        start_up: StartUp::new(Vec::new()),
    }
}

fn own() -> HeartbeatTable {
    HeartbeatTable::Own {
        writer_ids: vec!["w".to_owned()],
    }
}

fn second() -> PollerSpec {
    spec(Duration::from_secs(1), own())
}

/// A `MariaDB` node's answer as recorded: a replica at `0-1-8` with one running channel that has
/// received `0-1-8`, or a writable primary that replicates from nothing.
fn sample(replica: bool) -> NodeSample {
    let (state, replication) = if replica {
        let channel = from_fixture("mariadb-10.11/show_all_slaves_status__running.txt");
        ("mariadb-10.11/state__replica.txt", vec![channel])
    } else {
        ("mariadb-10.11/state__primary.txt", Vec::new())
    };
    let state = NodeState::from_row(&fixture_row(state), Family::Mariadb).expect("a state");
    NodeSample {
        at: std::time::Instant::now(),
        reported: Reported::status_only(replication, state),
        resolving: BTreeSet::new(),
        took: Duration::ZERO,
    }
}

fn gtid(text: &str) -> DomainGtid {
    DomainGtid::parse(text).expect("a GTID")
}

/// Asks the next poll and answers it with `sample`.
fn poll(learned: &mut Learned<'_>, read_due: bool, mut sample: NodeSample) -> (Asked, Heard) {
    let asked = learned.ask(read_due);
    let heard = learned.heard(&asked, &mut sample, Instant::now());
    (asked, heard)
}

/// A connection's first poll reads the binlog list; its heartbeat reading waits for the poll to
/// say whether the node replicates. A primary of rwtop's own heartbeat reads none.
#[test]
fn a_first_poll_leaves_the_reading_to_the_tick_and_a_primary_reads_none() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    let (asked, heard) = poll(&mut learned, true, sample(false));
    assert_eq!(asked.poll, 0);
    assert!(asked.parts.binlog && asked.parts.binlog_files);
    assert!(!asked.reads && !asked.lead, "{asked:?}");
    assert_eq!(heard.applied, None);
    assert!(!learned.reads(), "a primary reads no row of its own");
    let asked = learned.ask(true);
    assert_eq!(asked.poll, 1);
    assert!(!asked.reads && !asked.lead, "{asked:?}");
}

/// In read-only mode pt-heartbeat's row is read on every node, the primary's included, and
/// always from the table.
#[test]
fn pt_heartbeat_is_read_on_every_node_from_the_table() {
    let spec = spec(
        Duration::from_secs(1),
        HeartbeatTable::Pt {
            table: "percona.heartbeat".to_owned(),
        },
    );
    let mut learned = Learned::new(&spec);
    let (asked, _) = poll(&mut learned, true, sample(false));
    assert!(asked.reads && asked.lead);
    assert!(learned.reads());
}

/// A replica's heartbeat reading rides in front of its poll, until its applied position tells
/// which heartbeats it has applied: from then the poll's own position is the reading (when one
/// is due), and the table is read again once it no longer tells.
#[test]
fn a_replica_reads_the_table_in_front_of_its_poll_until_its_position_tells() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    poll(&mut learned, true, sample(true));
    assert!(learned.reads());
    let (asked, heard) = poll(&mut learned, true, sample(true));
    assert!(asked.reads && asked.lead, "no writer's mark yet: {asked:?}");
    assert_eq!(heard.applied, None);
    assert!(!learned.by_position());

    // The writer's run starts at 0-1-5; the replica is at 0-1-8.
    spec.marks.set(0, Some(gtid("0-1-5")));
    let (asked, heard) = poll(&mut learned, true, sample(true));
    assert!(asked.lead, "known only from this poll's answer");
    assert_eq!(heard.applied, None, "the table was this poll's reading");
    assert!(learned.by_position());
    let (asked, heard) = poll(&mut learned, true, sample(true));
    assert!(asked.reads && !asked.lead, "{asked:?}");
    let applied = heard.applied.expect("the position is the reading");
    assert_eq!(applied.applied.to_string(), "0-1-8");
    let (asked, heard) = poll(&mut learned, false, sample(true));
    assert!(!asked.reads && !asked.lead);
    assert_eq!(heard.applied, None, "no reading due");

    // A new run the replica has not reached: the table again.
    spec.marks.set(0, Some(gtid("0-1-20")));
    poll(&mut learned, false, sample(true));
    assert!(!learned.by_position());
    assert!(learned.ask(true).lead);
}

/// The node is up at the first poll answered, and its earlier failures are forgiven only at
/// the second: a node that refuses every poll after connecting keeps backing off.
#[test]
fn a_node_is_up_at_its_first_answer_and_forgiven_at_its_second() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    let said: Vec<(bool, bool)> = (0..3)
        .map(|_| {
            let (_, heard) = poll(&mut learned, false, sample(false));
            (heard.up, heard.steady)
        })
        .collect();
    assert_eq!(said, [(true, false), (false, true), (false, false)]);
}

/// The binlog list is asked until one is held, and its newest file kept to see a rotation by;
/// a node that stops feeding a watched replica drops its list and its coordinate, and asks the
/// list again once it feeds one.
#[test]
fn the_binlog_list_is_asked_until_held_and_dropped_with_the_coordinate() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    let mut first = sample(false);
    first.reported.binlog = Some(BinlogStatus {
        position: BinlogPos::new("bin.000002", 400),
        executed_gtid_set: None,
    });
    first.reported.binlog_files = Some(vec![
        BinlogFile {
            name: "bin.000001".to_owned(),
            size: 4_000,
        },
        BinlogFile {
            name: "bin.000002".to_owned(),
            size: 400,
        },
    ]);
    let (asked, _) = poll(&mut learned, false, first);
    assert!(asked.parts.binlog_files);
    assert_eq!(learned.list_tail(), Some("bin.000002"));
    let (asked, _) = poll(&mut learned, false, sample(false));
    assert!(asked.parts.binlog && !asked.parts.binlog_files, "held");
    assert_eq!(learned.list_tail(), Some("bin.000002"));

    spec.feeds.set(Some(vec!["db9"]));
    let asked = learned.ask(false);
    assert!(
        !asked.parts.binlog && !asked.parts.binlog_files,
        "feeds none"
    );
    assert_eq!(learned.list_tail(), None, "the list is dropped with it");
    spec.feeds.set(Some(vec!["r1"]));
    let asked = learned.ask(false);
    assert!(asked.parts.binlog && asked.parts.binlog_files, "read again");
}

/// A scan that shows a DDL has the table keys forgotten and every poll scan for
/// [`DDL_SCAN_LINGER`] polls after it; then the usual cadence again, which skips some.
#[test]
fn a_ddl_seen_keeps_every_poll_scanning_for_a_while() {
    use super::super::cadence::DDL_SCAN_LINGER;
    let spec = second();
    let mut learned = Learned::new(&spec);
    let mut with_ddl = sample(false);
    with_ddl.reported.processes = Some(Processlist {
        ddl: vec![DdlStatement {
            id: 7,
            statement: "ALTER TABLE t ADD COLUMN c INT".to_owned(),
            elapsed_s: 3,
            progress: None,
            applier: false,
            waiting_for: None,
            blockers: None,
        }],
        ..Processlist::default()
    });
    let (asked, heard) = poll(&mut learned, false, with_ddl);
    assert!(heard.ddl);
    let seen = asked.poll;
    for _ in 0..DDL_SCAN_LINGER {
        let (asked, heard) = poll(&mut learned, false, sample(false));
        assert!(asked.parts.processes, "poll {} scans", asked.poll - seen);
        assert!(!heard.ddl);
    }
    let after: Vec<bool> = (0..3)
        .map(|_| poll(&mut learned, false, sample(false)).0.parts.processes)
        .collect();
    assert!(after.contains(&false), "the cadence again: {after:?}");
}

/// The settings are read at connect and every few minutes; every few seconds while a copy of
/// rwtop's tables is not rwtop's; and at once after a poll that shows the configured applier
/// workers changed (not after the first poll that shows them).
#[test]
fn settings_are_due_at_connect_every_few_minutes_and_when_the_workers_change() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    let start = Instant::now();
    let at = |s: u64| start + Duration::from_secs(s);
    assert!(learned.settings_due(at(0)));
    learned.settings_read(at(0), false);
    assert!(!learned.settings_due(at(1)));
    assert!(!learned.settings_due(at(299)));
    assert!(learned.settings_due(at(300)));
    learned.settings_read(at(300), true);
    assert!(!learned.settings_due(at(304)));
    assert!(learned.settings_due(at(305)), "mismatched: every 5 s");
    learned.settings_read(at(305), false);

    let workers = |n| {
        let mut s = sample(true);
        s.reported.state.parallel_workers = Some(n);
        s
    };
    poll(&mut learned, false, workers(4));
    poll(&mut learned, false, workers(4));
    assert!(
        !learned.settings_due(at(306)),
        "the first value seen, then the same"
    );
    poll(&mut learned, false, workers(8));
    assert!(learned.settings_due(at(307)), "changed: at once");
    assert!(!learned.settings_due(at(308)));
}

/// The grants are read at connect and every ten seconds: the first read says what the account
/// lacks, a read that lists the same says nothing, and one that differs ends the connection.
#[test]
fn grants_say_what_is_missing_and_a_change_ends_the_connection() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    let start = Instant::now();
    assert!(learned.grants_due(start));
    assert!(!learned.grants_due(start + Duration::from_millis(9_999)));
    assert!(learned.grants_due(start + Duration::from_secs(10)));

    let usage = || AccountGrants::parse(["GRANT USAGE ON *.* TO `rwtop`@`%`"]);
    let all = || AccountGrants::parse(["GRANT ALL PRIVILEGES ON *.* TO `rwtop`@`%`"]);
    let missing = learned
        .grants_read(usage(), Family::Mariadb)
        .expect("the first read")
        .expect("said");
    assert!(
        missing.iter().any(|m| m.privilege == "PROCESS"),
        "{missing:?}"
    );
    assert!(matches!(
        learned.grants_read(usage(), Family::Mariadb),
        Ok(None)
    ));
    assert!(matches!(
        learned.grants_read(all(), Family::Mariadb),
        Err(Ended::Regranted)
    ));
    let mut other = Learned::new(&spec);
    let none = other.grants_read(all(), Family::Mariadb).expect("read");
    assert_eq!(none, Some(Vec::new()), "everything held");
}

/// The disks are read only where the operator opted in, at connect and at their interval.
#[test]
fn disks_are_read_where_opted_in_at_their_interval() {
    let start = Instant::now();
    let spec = second();
    let mut learned = Learned::new(&spec);
    assert!(!learned.disks_due(start), "not opted in");
    let mut opted = second();
    opted.disks_every = Some(Duration::from_secs(10));
    let mut learned = Learned::new(&opted);
    assert!(learned.disks_due(start));
    assert!(!learned.disks_due(start + Duration::from_secs(5)));
    assert!(learned.disks_due(start + Duration::from_secs(10)));
}

/// A replica with a `SQL_Delay` is read five times as often as the pace.
#[test]
fn a_delayed_replica_is_read_more_often() {
    let spec = second();
    let pace = ReadPace::new(Duration::from_millis(250), None);
    let mut learned = Learned::new(&spec);
    let now = Instant::now();
    poll(&mut learned, false, sample(true));
    assert_eq!(learned.every(&pace, now).1, Duration::from_millis(250));
    let mut delayed = sample(true);
    delayed.reported.replication[0].sql_delay = Some(30);
    poll(&mut learned, false, delayed);
    assert_eq!(learned.every(&pace, now).1, Duration::from_millis(50));
}

/// A running link lacking a heartbeat its writer had acknowledged before the poll is polled and
/// read at the pace's base for two poll intervals from the first poll that found it, at any
/// interval: 250 ms, the shipped 1 s, 5 s. A link that has it again is let go at once.
#[test]
fn a_link_lacking_a_heartbeat_is_watched_closely_for_two_poll_intervals() {
    let ms = Duration::from_millis;
    // A large topology's pace: each node read once a second, the base 100 ms.
    let pace = ReadPace::new(ms(100), Some(1));
    pace.add_node();
    for interval in [ms(250), ms(1_000), ms(5_000)] {
        let spec = spec(interval, own());
        let mut learned = Learned::new(&spec);
        let lacking = || {
            let sample = sample(true);
            let acked = sample.at.checked_sub(ms(1)).expect("an earlier instant");
            spec.marks
                .acknowledged(0, None, Some((gtid("0-1-9"), acked)));
            sample
        };
        let start = Instant::now();
        let asked = learned.ask(false);
        learned.heard(&asked, &mut sample(true), start);
        assert_eq!(learned.every(&pace, start), (interval, ms(1_000)));

        let asked = learned.ask(false);
        learned.heard(&asked, &mut lacking(), start);
        let close = (ms(100), ms(100));
        assert_eq!(learned.every(&pace, start), close, "{interval:?}");
        // Still lacking a poll later: the watch counts from the first poll that found it.
        let asked = learned.ask(false);
        learned.heard(&asked, &mut lacking(), start + interval);
        let watch = interval * 2;
        assert_eq!(
            learned.every(&pace, start + watch - ms(1)),
            close,
            "{interval:?}"
        );
        assert_eq!(
            learned.every(&pace, start + watch),
            (interval, ms(1_000)),
            "{interval:?}"
        );

        // Found lacking again, then received: let go at once.
        let mut learned = Learned::new(&spec);
        let asked = learned.ask(false);
        learned.heard(&asked, &mut lacking(), start);
        assert_eq!(learned.every(&pace, start), close);
        spec.marks
            .acknowledged(0, None, Some((gtid("0-1-8"), start.into_std())));
        let asked = learned.ask(false);
        learned.heard(&asked, &mut sample(true), start);
        assert_eq!(learned.every(&pace, start), (interval, ms(1_000)));
    }
}

/// A poll that leaves semi-sync out reports the last reading; one that reads its settings
/// alone keeps the last state and counters.
#[test]
fn semisync_is_carried_into_the_polls_that_leave_it_out() {
    let spec = second();
    let mut learned = Learned::new(&spec);
    let mut parts = learned.ask(false).parts;
    let read = SemiSync {
        source_enabled: Some(true),
        source_active: Some(true),
        source_clients: Some(2),
        ..SemiSync::default()
    };
    let mut answer = |parts: PollParts, semisync: Option<SemiSync>| {
        let asked = Asked {
            poll: 1,
            parts,
            reads: false,
            lead: false,
        };
        let mut sample = sample(false);
        sample.reported.semisync = semisync;
        learned.heard(&asked, &mut sample, Instant::now());
        sample.reported.semisync
    };
    parts.semisync = true;
    parts.semisync_status = true;
    assert_eq!(answer(parts, Some(read.clone())), Some(read.clone()));
    parts.semisync = false;
    assert_eq!(answer(parts, None), Some(read.clone()), "carried");
    parts.semisync = true;
    parts.semisync_status = false;
    let settings_only = SemiSync {
        source_enabled: Some(true),
        ..SemiSync::default()
    };
    let kept = answer(parts, Some(settings_only)).expect("read");
    assert_eq!(kept.source_active, Some(true), "the last state kept");
    assert_eq!(kept.source_clients, Some(2), "and its counters");
}
