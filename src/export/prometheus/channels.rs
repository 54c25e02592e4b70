//! A replica with two channels: every replica series once per channel, each with that channel's
//! own source, and the same three labels on all of them so they join; a replica that stops
//! answering keeps a series per channel, each unknown.

use std::collections::BTreeSet;
use std::time::Duration;

use super::{has, samples, text};
use crate::poll::{ConnState, PollEvent};
use crate::store::lag::Lag;
use crate::store::lag_split::LagSplit;
use crate::store::testkit::{Topo, multi_source_store, secs};

/// r2's default channel (from db1) and its channel `p2` (from a second root, db2).
const DEFAULT: &str = r#"replica="r2",source="db1",channel="""#;
const P2: &str = r#"replica="r2",source="db2",channel="p2""#;

/// r2 replicating from db1 on `''` and from db2 on `p2`, whose SQL thread has stopped.
fn two_channels() -> Topo {
    let mut topo = Topo::new();
    topo.add_primary("db2", 4);
    topo.add_channel("r2", "p2", "db2");
    topo.channel_mut("r2", "p2", |r| {
        r.sql_running = false;
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::Exact { lag: secs(7.5) };
        r.lag_split = LagSplit::of(&r.heartbeat_lag, &Lag::Exact { lag: secs(0.0) });
        r.gtid_backlog.not_applied = Some(42);
        r.bytes_behind.sql = Some(9_000);
        r.sql_delay = Some(0);
        r.lag_histogram.observe(Duration::from_secs(7));
    });
    topo
}

/// The `replica`, `source`, `channel` of one sample line, as written.
fn place(line: &str) -> Option<&str> {
    let start = line.find("replica=")?;
    let channel = line[start..].find("channel=\"")? + start + "channel=\"".len();
    let close = line[channel..].find('"')? + channel;
    Some(&line[start..=close])
}

#[test]
fn every_replica_series_is_written_per_channel_with_its_own_source() {
    let t = text(&two_channels().snapshot);
    // The stopped channel reads as stopped, the default one as healthy, side by side.
    has(&t, &format!("rwtop_replica_sql_thread_running{{{P2}}} 0"));
    has(
        &t,
        &format!("rwtop_replica_sql_thread_running{{{DEFAULT}}} 1"),
    );
    has(&t, &format!("rwtop_replica_sbm_null{{{P2}}} 1"));
    has(&t, &format!("rwtop_replica_sbm_null{{{DEFAULT}}} 0"));
    has(&t, &format!("rwtop_replica_sbm_seconds{{{DEFAULT}}} 0"));
    assert!(
        samples(&t, "rwtop_replica_sbm_seconds")
            .iter()
            .all(|l| !l.contains(P2)),
        "a NULL SBM has no sample"
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_seconds{{{P2}}} 7.5"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_seconds{{{DEFAULT}}} 0.12"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{P2},state=\"exact\"}} 1"),
    );
    // The stopped applier holds all of p2's lag; the default channel's is all on the way.
    has(
        &t,
        &format!("rwtop_replica_lag_transport_seconds{{{P2}}} 0.0"),
    );
    has(&t, &format!("rwtop_replica_lag_apply_seconds{{{P2}}} 7.5"));
    has(
        &t,
        &format!("rwtop_replica_lag_transport_seconds{{{DEFAULT}}} 0.12"),
    );
    has(
        &t,
        &format!("rwtop_replica_lag_apply_seconds{{{DEFAULT}}} 0.0"),
    );
    has(
        &t,
        &format!("rwtop_replica_io_thread_state{{{P2},state=\"yes\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_gtid_backlog_transactions{{{P2},stage=\"not_applied\"}} 42"),
    );
    has(
        &t,
        &format!("rwtop_replica_gtid_backlog_transactions{{{DEFAULT},stage=\"not_applied\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_replica_binlog_backlog_bytes{{{P2},stage=\"not_applied\"}} 9000"),
    );
    has(&t, &format!("rwtop_replica_sql_delay_seconds{{{P2}}} 0"));
    has(
        &t,
        &format!("rwtop_replica_last_error_number{{{P2},thread=\"io\"}} 0"),
    );
    has(&t, &format!("rwtop_replica_drained{{{P2}}} 0"));
    has(&t, &format!("rwtop_replica_drained{{{DEFAULT}}} 0"));
    // db2 is a root: no replica series of its own.
    assert!(!t.contains(r#"replica="db2""#), "{t}");
}

/// Series join on (`replica`, `source`, `channel`): every replica family that writes r1 writes
/// each of r2's two channels under exactly the same three labels, and r2 under no other.
#[test]
fn each_channel_has_one_label_set_across_every_family() {
    let t = text(&two_channels().snapshot);
    let want: BTreeSet<String> = [DEFAULT, P2].iter().map(|p| (*p).to_owned()).collect();
    let families: BTreeSet<&str> = t
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE rwtop_replica_"))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert!(families.len() >= 14, "{families:?}");
    for family in families {
        let lines: Vec<&str> = t
            .lines()
            .filter(|l| l.starts_with(&format!("rwtop_replica_{family}")))
            .collect();
        let of = |replica: &str| -> BTreeSet<String> {
            lines
                .iter()
                .filter_map(|l| place(l))
                .filter(|p| p.starts_with(&format!("replica=\"{replica}\"")))
                .map(str::to_owned)
                .collect()
        };
        if of("r1").is_empty() {
            continue; // absent while unknown (an upper bound) or unset (the balancer's word)
        }
        let r2 = of("r2");
        let expected = if family == "sbm_seconds" {
            // NULL on p2: the only family a channel may be missing from.
            [DEFAULT.to_owned()].into_iter().collect()
        } else {
            want.clone()
        };
        assert_eq!(r2, expected, "rwtop_replica_{family}");
    }
}

#[test]
fn each_channel_has_its_own_histogram() {
    let t = text(&two_channels().snapshot);
    let name = "rwtop_replica_heartbeat_lag_distribution_seconds";
    has(&t, &format!("{name}_count{{{P2}}} 1"));
    has(&t, &format!("{name}_sum{{{P2}}} 7.0"));
    has(&t, &format!("{name}_bucket{{{P2},le=\"5\"}} 0"));
    has(&t, &format!("{name}_bucket{{{P2},le=\"10\"}} 1"));
    has(&t, &format!("{name}_count{{{DEFAULT}}} 0"));
    // r1, and each of r2's channels.
    assert_eq!(
        samples(&t, &format!("{name}_bucket")).len(),
        3 * (crate::store::histogram::BUCKETS.len() + 1)
    );
}

#[test]
fn a_drain_is_shown_on_each_channel_and_alerts_are_told_apart_by_channel() {
    let mut snapshot = two_channels().snapshot;
    snapshot.drain.drained.insert("r2".to_owned());
    let alert = crate::store::testkit::sql_stopped_alert;
    snapshot.alerts.active = vec![alert(Some("p2")), alert(None)];
    let t = text(&snapshot);
    has(&t, &format!("rwtop_replica_drained{{{P2}}} 1"));
    has(
        &t,
        &format!("rwtop_replica_drained_by_rwtop{{{DEFAULT}}} 1"),
    );
    has(
        &t,
        r#"rwtop_alerts_active{kind="sql_thread_stopped",severity="critical"} 2"#,
    );
    let since_lines = samples(&t, "rwtop_alert_active_since_timestamp_seconds");
    assert_eq!(
        since_lines,
        [
            r#"rwtop_alert_active_since_timestamp_seconds{kind="sql_thread_stopped",severity="critical",node="r2",channel="p2"} 1699999990.0"#,
            r#"rwtop_alert_active_since_timestamp_seconds{kind="sql_thread_stopped",severity="critical",node="r2",channel=""} 1699999990.0"#,
        ]
    );
}

/// The families of live values: none may write a channel of a node that does not answer.
const LIVE: [&str; 10] = [
    "rwtop_replica_heartbeat_lag_seconds",
    "rwtop_replica_sbm_seconds",
    "rwtop_replica_sbm_null",
    "rwtop_replica_io_thread_state",
    "rwtop_replica_sql_thread_running",
    "rwtop_replica_last_error_number",
    "rwtop_replica_gtid_backlog_transactions",
    "rwtop_replica_binlog_backlog_bytes",
    "rwtop_replica_sql_delay_seconds",
    "rwtop_replica_catch_up_state",
];

/// What a scraper reads of r2 once it stopped answering: one lag state per channel, unknown,
/// and nothing live.
fn assert_each_channel_unknown(t: &str) {
    for place in [DEFAULT, P2] {
        has(
            t,
            &format!("rwtop_replica_heartbeat_lag_state{{{place},state=\"unknown\"}} 1"),
        );
        has(
            t,
            &format!("rwtop_replica_heartbeat_lag_state{{{place},state=\"exact\"}} 0"),
        );
        has(t, &format!("rwtop_replica_drained{{{place}}} 0"));
    }
    // Exactly these two places: no series fall back to one `channel=""` for the node.
    let r2: BTreeSet<&str> = t
        .lines()
        .filter(|l| l.starts_with("rwtop_replica_"))
        .filter_map(place)
        .filter(|p| p.starts_with(r#"replica="r2""#))
        .collect();
    assert_eq!(r2, [DEFAULT, P2].into_iter().collect(), "{t}");
    for name in LIVE {
        let of_r2: Vec<&str> = samples(t, name)
            .into_iter()
            .filter(|l| l.contains(r#"replica="r2""#))
            .collect();
        assert!(
            of_r2.is_empty(),
            "{name} of a node that does not answer: {of_r2:?}"
        );
    }
}

#[test]
fn a_two_channel_replica_that_stops_answering_keeps_a_series_per_channel() {
    let mut topo = two_channels();
    topo.stop_answering("r2");
    let t = text(&topo.snapshot);
    assert_each_channel_unknown(&t);
    // Its histogram is a history: kept, per channel.
    let name = "rwtop_replica_heartbeat_lag_distribution_seconds";
    has(&t, &format!("{name}_count{{{P2}}} 1"));
    has(&t, &format!("{name}_count{{{DEFAULT}}} 0"));
    has(&t, r#"rwtop_node_up{node="r2"} 0"#);
}

/// The same from the store's own events: r2, lagging on both channels by its roots'
/// heartbeats, stops answering.
#[test]
fn a_replica_the_store_sees_stop_answering_keeps_a_series_per_channel() {
    let mut store = multi_source_store();
    let now = std::time::Instant::now() + Duration::from_secs(1);
    let t = text(&store.snapshot(now));
    for place in [DEFAULT, P2] {
        has(
            &t,
            &format!("rwtop_replica_heartbeat_lag_state{{{place},state=\"exact\"}} 1"),
        );
    }
    store.apply(PollEvent::Conn {
        node: "r2".to_owned(),
        state: ConnState::Down {
            next: Duration::from_secs(1),
            cause: "cannot connect to 127.0.0.1:3307: Connection refused".to_owned(),
        },
    });
    assert_each_channel_unknown(&text(&store.snapshot(now)));
}
