//! The store's own tests: pt-heartbeat lag, lag read by position, and the channels of a node
//! that stops answering, from the events pollers send.

use super::*;
use crate::poll::PtRead;

fn store(with_primary: bool) -> Store {
    let endpoint = testkit::local_endpoint;
    let mut nodes = vec![("r1".to_owned(), endpoint(3307), Role::Replica)];
    if with_primary {
        nodes.push(("db1".to_owned(), endpoint(3306), Role::Primary));
    }
    let settings = StoreSettings {
        pt_table: Some("percona.heartbeat".to_owned()),
        ..testkit::store_settings()
    };
    let mut store = Store::new(settings, &nodes);
    // r1 replicates on one channel, from db1.
    let status = testkit::running_status("", 3306);
    store.apply(PollEvent::Sample {
        node: "r1".to_owned(),
        sample: Box::new(testkit::replica_sample(Instant::now(), vec![status])),
    });
    store
}

/// A read of a row written at `written_s` (seconds past a base instant) that is `age_ms` old.
fn read(store: &mut Store, node: &str, written_s: i64, age_ms: i64) -> lag::Lag {
    let base = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default();
    let ts = (base + chrono::Duration::seconds(written_s)).naive_utc();
    let read = PtRead {
        sent_at: Instant::now(),
        local_ms: Some(age_ms),
        utc_ms: Some(age_ms),
        ts: Some(ts),
    };
    store.apply(PollEvent::PtHeartbeat {
        node: node.to_owned(),
        read,
    });
    let unknown = || lag::Lag::Unknown {
        reason: "no channel".to_owned(),
    };
    store
        .nodes
        .get(node)
        .and_then(|n| n.channels.first())
        .map_or_else(unknown, |c| c.last_read().clone())
}

const NOT_MOVED: &str =
    "pt-heartbeat's row on db1 has not advanced since rwtop started: is pt-heartbeat running?";

#[test]
fn pt_lag_is_unknown_until_the_primarys_row_moves() {
    let mut store = store(true);
    let unknown = |reason: &str| lag::Lag::Unknown {
        reason: reason.to_owned(),
    };
    // The replica read before the primary: its stale row's age is not its lag.
    assert_eq!(read(&mut store, "r1", 0, 19_570), unknown(NOT_MOVED));
    // A primary row that looks fresh but has not moved proves nothing yet.
    read(&mut store, "db1", 0, 800);
    assert_eq!(read(&mut store, "r1", 0, 900), unknown(NOT_MOVED));
    read(&mut store, "db1", 0, 1_800);
    assert_eq!(read(&mut store, "r1", 0, 1_900), unknown(NOT_MOVED));
    // It moved: lag is exact from then on.
    read(&mut store, "db1", 2, 100);
    assert_eq!(
        read(&mut store, "r1", 1, 1_300),
        lag::Lag::Exact {
            lag: Duration::from_millis(1_300)
        }
    );
}

#[test]
fn without_a_primary_the_replicas_own_row_must_move() {
    let mut store = store(false);
    let first = read(&mut store, "r1", 0, 19_570);
    assert!(
        matches!(&first, lag::Lag::Unknown { reason } if reason.starts_with("pt-heartbeat's row on r1 has not advanced")),
        "{first:?}"
    );
    assert_eq!(
        read(&mut store, "r1", 1, 250),
        lag::Lag::Exact {
            lag: Duration::from_millis(250)
        }
    );
}

/// The lag `r1`'s first channel shows.
fn channel_lag(store: &Store) -> lag::Lag {
    store.nodes["r1"].channels[0].last_read().clone()
}

#[test]
fn a_position_reads_as_the_row_of_the_newest_heartbeat_it_passed() {
    use crate::gtid::{DomainGtid, GtidList};
    use crate::poll::AppliedRead;
    let mut store = store(true);
    let t0 = Instant::now();
    // Heartbeats 1..=8 every 250 ms, written as 0-1-11, 0-1-13, ... (other writes between).
    for seq in 1..=8_u64 {
        store.apply(PollEvent::Ack {
            writer: 0,
            seq,
            at: t0 + Duration::from_millis(250 * seq),
            gtid: Some(DomainGtid::parse(&format!("0-1-{}", 9 + 2 * seq)).unwrap()),
        });
    }
    let sent_at = t0 + Duration::from_secs(3);
    for (position, seq) in [("0-1-14", 2), ("0-1-15", 3), ("0-1-25", 8), ("0-1-11", 1)] {
        holds(&mut store, "r1", seq, sent_at);
        let by_row = channel_lag(&store);
        store.apply(PollEvent::Applied {
            node: "r1".to_owned(),
            read: AppliedRead {
                sent_at,
                applied: GtidList::parse(position).unwrap(),
            },
        });
        assert_eq!(channel_lag(&store), by_row, "{position} is heartbeat {seq}");
        assert!(matches!(by_row, lag::Lag::Exact { .. }), "{by_row:?}");
    }
    // Short of the first heartbeat: at least since it was acknowledged.
    store.apply(PollEvent::Applied {
        node: "r1".to_owned(),
        read: AppliedRead {
            sent_at,
            applied: GtidList::parse("0-1-10").unwrap(),
        },
    });
    assert_eq!(
        channel_lag(&store),
        lag::Lag::AtLeast {
            lag: Duration::from_millis(2_750),
            upper: None
        }
    );
}

/// r2's channels as the snapshot at `now` shows them: name, source and lag.
fn channels_of(store: &Store, now: Instant) -> Vec<(String, Option<String>, lag::Lag)> {
    let s = store.snapshot(now);
    let r2 = s.node("r2").expect("r2");
    r2.channels
        .iter()
        .map(|c| (c.channel.clone(), c.source.clone(), c.heartbeat_lag.clone()))
        .collect()
}

/// A multi-source replica that stops answering keeps every channel it showed, by name and
/// source, each unknown (never its last reading, nothing live on it) with its history; when it
/// answers again the same channels are live again, that history still theirs.
#[test]
fn a_node_that_stops_answering_keeps_its_channels_unknown() {
    use crate::mysql::{BinlogPos, IoRunning};
    use crate::topology::Topology;
    let mut store = testkit::multi_source_store();
    let now = Instant::now() + Duration::from_secs(1);
    let exact = lag::Lag::Exact {
        lag: Duration::from_millis(50),
    };
    let named = |lag: &lag::Lag| {
        vec![
            (String::new(), Some("db1".to_owned()), lag.clone()),
            ("p2".to_owned(), Some("db2".to_owned()), lag.clone()),
        ]
    };
    assert_eq!(channels_of(&store, now), named(&exact));

    for state in [
        crate::poll::ConnState::Retrying {
            next: Duration::from_millis(250),
            cause: "Lost connection to server during query".to_owned(),
        },
        crate::poll::ConnState::Down {
            next: Duration::from_millis(500),
            cause: "cannot connect to 127.0.0.1:3307: Connection refused".to_owned(),
        },
    ] {
        let name = state.name();
        store.apply(PollEvent::Conn {
            node: "r2".to_owned(),
            state,
        });
        let unknown = lag::Lag::Unknown {
            reason: format!("node is {name}"),
        };
        assert_eq!(channels_of(&store, now), named(&unknown), "{name}");
    }
    let s = store.snapshot(now);
    let r2 = s.node("r2").expect("r2");
    assert!(!r2.answers());
    assert!(matches!(r2.lag(), Some(lag::Lag::Unknown { .. })));
    for (c, port) in r2.channels.iter().zip([3306, 3308]) {
        // Where its source is stays; nothing live is shown as if it were...
        assert_eq!(c.source_address, format!("127.0.0.1:{port}"));
        assert_eq!((c.io_running, c.sql_running), (IoRunning::No, false));
        assert_eq!(c.seconds_behind_source, None);
        assert_eq!(c.gtid_backlog.total(), None);
        assert_eq!(c.received, BinlogPos::default());
        assert_eq!(c.last_io_error, None);
        // ...and what was measured while it answered stays.
        let minute = c.windows.first().and_then(|(_, w)| *w);
        assert_eq!(minute.map(|w| w.samples), Some(1), "{:?}", c.channel);
        assert_eq!(c.lag_histogram.count, 1);
        assert_eq!(c.series.len(), 1);
    }
    // The tasks route, read and feed through none of them until it answers.
    assert!(s.channels("r2").is_empty());
    assert_eq!(s.health("r2"), None);

    // It answers again: the same channels, live, their history carried on.
    store.apply(PollEvent::Conn {
        node: "r2".to_owned(),
        state: crate::poll::ConnState::Up,
    });
    let statuses = vec![
        testkit::running_status("", 3306),
        testkit::running_status("p2", 3308),
    ];
    store.apply(PollEvent::Sample {
        node: "r2".to_owned(),
        sample: Box::new(testkit::replica_sample(Instant::now(), statuses)),
    });
    let s = store.snapshot(now);
    let r2 = s.node("r2").expect("r2");
    for c in &r2.channels {
        assert_eq!(c.io_running, IoRunning::Yes, "{:?}", c.channel);
        assert_eq!(c.series.len(), 2, "{:?}", c.channel);
    }
    assert_eq!(s.channels("r2").len(), 2);
}

/// A cascade db1 → r1 → c1 whose heartbeats 1..=12 were acknowledged every 250 ms from `t0`,
/// each replica up and sampled once.
fn cascade(t0: Instant) -> Store {
    let nodes = [("db1", 3306, Role::Primary), ("r1", 3307, Role::Replica)];
    let mut nodes: Vec<_> = nodes
        .iter()
        .map(|(name, port, role)| ((*name).to_owned(), testkit::local_endpoint(*port), *role))
        .collect();
    nodes.push((
        "c1".to_owned(),
        testkit::local_endpoint(3308),
        Role::Replica,
    ));
    let settings = StoreSettings {
        writers: vec![("w@db1".to_owned(), "db1".to_owned())],
        ..testkit::store_settings()
    };
    let mut store = Store::new(settings, &nodes);
    for (node, source_port) in [("r1", 3306), ("c1", 3307)] {
        store.apply(PollEvent::Conn {
            node: node.to_owned(),
            state: crate::poll::ConnState::Up,
        });
        let status = testkit::running_status("", source_port);
        store.apply(PollEvent::Sample {
            node: node.to_owned(),
            sample: Box::new(testkit::replica_sample(t0, vec![status])),
        });
    }
    for seq in 1..=12_u64 {
        store.apply(PollEvent::Ack {
            writer: 0,
            seq,
            at: t0 + Duration::from_millis(250 * seq),
            gtid: None,
        });
    }
    store
}

/// `node` read at `sent_at` holding heartbeat `seq` and none later.
fn holds(store: &mut Store, node: &str, seq: u64, sent_at: Instant) {
    use crate::poll::{BeatRow, HeartbeatRead};
    store.apply(PollEvent::Heartbeat {
        node: node.to_owned(),
        read: HeartbeatRead {
            sent_at,
            rtt: Duration::from_millis(1),
            rows: vec![BeatRow {
                seq: Some(seq),
                row_age_ms: None,
            }],
        },
    });
}

fn hop(store: &Store, now: Instant) -> Option<Duration> {
    let s = store.snapshot(now);
    s.node("c1")
        .and_then(|c1| c1.replica())
        .and_then(|r| r.hop_lag)
}

/// r1 stopped receiving after heartbeat 4 and c1 applied all of it. c1, read twice, is carried
/// forward to the snapshot; r1, read once so far, shows its reading. c1's hop is nothing all the
/// same: it misses no heartbeat r1 has. Missing one r1 has, its hop is its own share.
#[test]
fn a_replica_missing_what_its_source_misses_adds_no_hop() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut store = cascade(t0);
    holds(&mut store, "r1", 4, at(2_000));
    holds(&mut store, "c1", 4, at(2_000));
    holds(&mut store, "c1", 4, at(3_500));
    let lag = |name: &str| {
        store
            .snapshot(at(3_500))
            .node(name)
            .and_then(NodeView::lag)
            .and_then(|l| l.value())
    };
    // The readings alone would make c1's own hop the 1.5 s between them.
    let (c1, r1) = (lag("c1"), lag("r1"));
    let by_readings = c1.zip(r1).map(|(c1, r1)| c1.saturating_sub(r1));
    assert_eq!(
        by_readings,
        Some(Duration::from_millis(1_500)),
        "{c1:?} {r1:?}"
    );
    assert_eq!(hop(&store, at(3_500)), Some(Duration::ZERO));

    // c1 misses heartbeat 4, which r1 has: its hop is its lag less r1's.
    holds(&mut store, "r1", 4, at(3_700));
    holds(&mut store, "c1", 3, at(3_600));
    holds(&mut store, "c1", 3, at(3_700));
    let hop = hop(&store, at(3_700));
    assert!(
        hop.is_some_and(|h| h >= Duration::from_millis(200)),
        "{hop:?}"
    );
}

/// A commit time on the root's clock lands on this host's clock less the root's lead.
#[test]
fn a_root_commit_time_is_placed_on_this_hosts_clock() {
    let t0 = Instant::now();
    let mut store = cascade(t0);
    let beat = Beat::new("w@db1".to_owned(), Some("db1".to_owned()), 10);
    let one_second_ago_on_root =
        |lead_ms: i64| chrono::Utc::now().timestamp_micros() + lead_ms * 1_000 - 1_000_000;
    assert_eq!(store.received_by(&beat, one_second_ago_on_root(0)), None);
    for lead_ms in [0, 2_000, -3_000] {
        store.apply(PollEvent::Clock {
            node: "db1".to_owned(),
            offset_ms: lead_ms,
            rtt: Duration::from_millis(1),
        });
        let by = store
            .received_by(&beat, one_second_ago_on_root(lead_ms))
            .expect("clocked");
        // One second ago, plus a quarter of the 250 ms interval.
        let expected = Instant::now()
            .checked_sub(Duration::from_millis(1_000 - 62))
            .expect("a second of uptime");
        let off = if by > expected {
            by - expected
        } else {
            expected - by
        };
        assert!(
            off < Duration::from_millis(30),
            "lead {lead_ms} ms: {off:?}"
        );
    }
}
