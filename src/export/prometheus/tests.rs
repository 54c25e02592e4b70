//! The exposition of synthetic snapshots, checked line by line: what a scraper reads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use super::{ALERT_KINDS, CONTENT_TYPE, render};
use crate::alerts::{Alert, AlertKind};
use crate::mysql::{IoRunning, ThreadError};
use crate::poll::ConnState;
use crate::store::Snapshot;
use crate::store::lag::Lag;
use crate::store::testkit::{Topo, secs};

/// The exposition with the `cluster` label checked on every sample and then taken out, so the
/// lines below read as they did before it.
pub(super) fn text(s: &Snapshot) -> String {
    let raw = render(&Arc::new(s.clone()), "test");
    let mut out = String::with_capacity(raw.len());
    for line in raw.lines() {
        if !line.starts_with('#') {
            assert!(
                line.contains(r#"{cluster="test""#),
                "a sample without the cluster label first: {line}"
            );
        }
        out.push_str(&line.replacen(r#"{cluster="test"}"#, "", 1).replacen(
            r#"cluster="test","#,
            "",
            1,
        ));
        out.push('\n');
    }
    out
}

/// Asserts the exact line (name, labels in order, value) is there.
#[track_caller]
pub(super) fn has(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "missing line {line:?} in:\n{text}"
    );
}

/// Sample lines whose name is exactly `name` (labels not considered).
fn samples<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.split(['{', ' ']).next() == Some(name))
        .collect()
}

const R1: &str = r#"replica="r1",source="db1",channel="""#;
const R2: &str = r#"replica="r2",source="db1",channel="""#;

#[test]
fn a_healthy_topology_reads_as_the_snapshot_says() {
    let t = text(&Topo::new().snapshot);
    assert_eq!(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
    has(&t, "# TYPE rwtop_replica_heartbeat_lag_seconds gauge");
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_seconds{{{R1}}} 0.12"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R1},state=\"exact\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R1},state=\"at_least\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R1},state=\"unknown\"}} 0"),
    );
    has(&t, &format!("rwtop_replica_sbm_seconds{{{R2}}} 0"));
    has(&t, &format!("rwtop_replica_sbm_null{{{R2}}} 0"));
    has(
        &t,
        &format!("rwtop_replica_io_thread_state{{{R1},state=\"yes\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_io_thread_state{{{R1},state=\"no\"}} 0"),
    );
    has(&t, &format!("rwtop_replica_sql_thread_running{{{R1}}} 1"));
    has(
        &t,
        &format!("rwtop_replica_last_error_number{{{R1},thread=\"sql\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_replica_gtid_backlog_transactions{{{R1},stage=\"not_received\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_replica_binlog_backlog_bytes{{{R2},stage=\"not_applied\"}} 0"),
    );
    has(&t, &format!("rwtop_replica_drained{{{R1}}} 0"));
    has(&t, r#"rwtop_node_up{node="db1"} 1"#);
    has(&t, r#"rwtop_node_read_only{node="r1"} 1"#);
    has(
        &t,
        r#"rwtop_node_connection_state{node="db1",state="up"} 1"#,
    );
    has(&t, r#"rwtop_node_sample_age_seconds{node="db1"} 0.1"#);
    has(&t, r#"rwtop_heartbeat_writer_state{state="writing"} 1"#);
    has(&t, r#"rwtop_heartbeat_writer_state{state="failing"} 0"#);
    has(&t, "rwtop_heartbeat_stale 0");
    has(&t, "rwtop_heartbeat_sequence 4000");
    has(&t, "rwtop_snapshot_timestamp_seconds 1700000000.0");
    has(&t, "rwtop_start_time_seconds 1699999900.0");
    // Only replicas have replica series; the primary has node series.
    assert!(!t.contains(r#"replica="db1""#), "{t}");
    // No alert raised: every kind is there at 0.
    for kind in ALERT_KINDS {
        let sev = super::severity(kind);
        has(
            &t,
            &format!(
                "rwtop_alerts_active{{kind=\"{}\",severity=\"{sev}\"}} 0",
                kind.name()
            ),
        );
    }
    assert!(samples(&t, "rwtop_alert_active_since_timestamp_seconds").is_empty());
}

#[test]
fn a_null_sbm_is_a_series_of_its_own_and_keeps_the_replica() {
    let mut topo = Topo::new();
    topo.replica_mut("r2", |r| {
        r.sql_running = false;
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::Exact { lag: secs(7.5) };
        r.gtid_backlog.not_applied = Some(42);
        r.last_sql_error = Some(ThreadError {
            errno: 1062,
            message: "Duplicate entry".to_owned(),
            timestamp: None,
        });
    });
    let t = text(&topo.snapshot);
    has(&t, &format!("rwtop_replica_sbm_null{{{R2}}} 1"));
    has(&t, &format!("rwtop_replica_sbm_null{{{R1}}} 0"));
    assert_eq!(
        samples(&t, "rwtop_replica_sbm_seconds"),
        [format!("rwtop_replica_sbm_seconds{{{R1}}} 0")],
        "only the NULL one goes"
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_seconds{{{R2}}} 7.5"),
    );
    has(&t, &format!("rwtop_replica_sql_thread_running{{{R2}}} 0"));
    has(
        &t,
        &format!("rwtop_replica_gtid_backlog_transactions{{{R2},stage=\"not_applied\"}} 42"),
    );
    has(
        &t,
        &format!("rwtop_replica_last_error_number{{{R2},thread=\"sql\"}} 1062"),
    );
}

#[test]
fn lag_is_never_a_stale_number() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.heartbeat_lag = Lag::Unknown {
            reason: "the heartbeat is not advancing on the primary".to_owned(),
        };
    });
    topo.replica_mut("r2", |r| {
        r.heartbeat_lag = Lag::AtLeast {
            lag: secs(3.0),
            upper: Some(secs(9.25)),
        };
        r.io_running = IoRunning::Connecting;
    });
    let t = text(&topo.snapshot);
    assert_eq!(
        samples(&t, "rwtop_replica_heartbeat_lag_seconds"),
        [format!("rwtop_replica_heartbeat_lag_seconds{{{R2}}} 3.0")]
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R1},state=\"unknown\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R1},state=\"exact\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R2},state=\"at_least\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_upper_bound_seconds{{{R2}}} 9.25"),
    );
    has(
        &t,
        &format!("rwtop_replica_io_thread_state{{{R2},state=\"connecting\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_io_thread_state{{{R2},state=\"yes\"}} 0"),
    );
}

/// A replica that never answered shows no channel: its state series are written once, on the
/// default channel, so they never go missing. (One that answered before keeps its channels:
/// `channels.rs`.)
#[test]
fn a_replica_that_does_not_answer_keeps_its_state_series() {
    let mut topo = Topo::new();
    topo.node_mut("r2", |n| {
        n.conn = ConnState::Down {
            next: Duration::from_secs(4),
            cause: "connection refused".to_owned(),
        };
        n.channels.clear();
        n.live = None;
    });
    let t = text(&topo.snapshot);
    has(&t, r#"rwtop_node_up{node="r2"} 0"#);
    has(
        &t,
        r#"rwtop_node_connection_state{node="r2",state="down"} 1"#,
    );
    has(
        &t,
        &format!("rwtop_replica_heartbeat_lag_state{{{R2},state=\"unknown\"}} 1"),
    );
    has(&t, &format!("rwtop_replica_drained{{{R2}}} 0"));
    // Its live values are unknown, so absent, not their last values.
    for name in [
        "rwtop_replica_heartbeat_lag_seconds",
        "rwtop_replica_sbm_seconds",
        "rwtop_replica_sbm_null",
        "rwtop_replica_sql_thread_running",
    ] {
        assert!(
            samples(&t, name).iter().all(|l| !l.contains(R2)),
            "{name} of a node that does not answer"
        );
    }
    assert!(
        samples(&t, "rwtop_node_read_only")
            .iter()
            .all(|l| !l.contains("r2"))
    );
}

#[test]
fn the_lag_histogram_is_cumulative_and_ends_at_its_count() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        for ms in [1, 5, 6, 400, 1_000, 400_000] {
            r.lag_histogram.observe(Duration::from_millis(ms));
        }
    });
    let t = text(&topo.snapshot);
    has(
        &t,
        "# TYPE rwtop_replica_heartbeat_lag_distribution_seconds histogram",
    );
    let name = "rwtop_replica_heartbeat_lag_distribution_seconds";
    has(&t, &format!("{name}_bucket{{{R1},le=\"0.005\"}} 2"));
    has(&t, &format!("{name}_bucket{{{R1},le=\"0.01\"}} 3"));
    has(&t, &format!("{name}_bucket{{{R1},le=\"1\"}} 5"));
    has(&t, &format!("{name}_bucket{{{R1},le=\"300\"}} 5"));
    has(&t, &format!("{name}_bucket{{{R1},le=\"+Inf\"}} 6"));
    has(&t, &format!("{name}_count{{{R1}}} 6"));
    has(&t, &format!("{name}_sum{{{R1}}} 401.412"));
    // A replica without readings yet still has a well-formed, empty histogram.
    has(&t, &format!("{name}_bucket{{{R2},le=\"0.005\"}} 0"));
    has(&t, &format!("{name}_bucket{{{R2},le=\"+Inf\"}} 0"));
    has(&t, &format!("{name}_count{{{R2}}} 0"));
    let buckets = samples(&t, &format!("{name}_bucket"));
    assert_eq!(
        buckets.len(),
        2 * (crate::store::histogram::BUCKETS.len() + 1)
    );
}

#[test]
fn alerts_are_counted_by_kind_and_listed_with_their_start() {
    let mut snapshot = Topo::new().snapshot;
    let since = chrono::DateTime::from_timestamp(1_699_999_990, 500_000_000).unwrap_or_default();
    let alert = |kind: AlertKind, node: Option<&str>| Alert {
        kind,
        node: node.map(str::to_owned),
        channel: None,
        severity: kind.severity(),
        since,
        last_seen: since,
        count: 3,
        evidence: Vec::new(),
        cause: "test".to_owned(),
        membership: crate::alerts::Membership::default(),
    };
    snapshot.alerts.active = vec![
        alert(AlertKind::SqlThreadStopped, Some("r1")),
        alert(AlertKind::SqlThreadStopped, Some("r2")),
        alert(AlertKind::ClockSkew, None),
    ];
    let t = text(&snapshot);
    has(
        &t,
        r#"rwtop_alerts_active{kind="sql_thread_stopped",severity="critical"} 2"#,
    );
    has(
        &t,
        r#"rwtop_alerts_active{kind="clock_skew",severity="warning"} 1"#,
    );
    has(
        &t,
        r#"rwtop_alerts_active{kind="node_down",severity="critical"} 0"#,
    );
    has(
        &t,
        r#"rwtop_alert_active_since_timestamp_seconds{kind="sql_thread_stopped",severity="critical",node="r2",channel=""} 1699999990.5"#,
    );
    has(
        &t,
        r#"rwtop_alert_active_since_timestamp_seconds{kind="clock_skew",severity="warning",node="",channel=""} 1699999990.5"#,
    );
}

#[test]
fn every_alert_kind_is_listed() {
    // A new kind stops this compiling until it is added here and to ALERT_KINDS.
    let listed = |kind: AlertKind| match kind {
        AlertKind::SbmUnderstatesLag
        | AlertKind::SbmOverstatesLag
        | AlertKind::IoThreadStopped
        | AlertKind::SqlThreadStopped
        | AlertKind::ReplicationError
        | AlertKind::HeartbeatStale
        | AlertKind::LagP99High
        | AlertKind::GtidBacklogHigh
        | AlertKind::ErrantTransactions
        | AlertKind::NodeDown
        | AlertKind::ClockSkew
        | AlertKind::TopologyChanged
        | AlertKind::WritableReplica
        | AlertKind::AllReplicasLagging
        | AlertKind::DdlInFlight
        | AlertKind::ReplicaNotRecovering
        | AlertKind::SemisyncFellBack
        | AlertKind::SemisyncAcksShort
        | AlertKind::SemisyncUnackedCommits
        | AlertKind::DiskFilling
        | AlertKind::GaleraNotPrimary
        | AlertKind::GaleraNotSynced
        | AlertKind::GaleraFlowControl => ALERT_KINDS.contains(&kind),
    };
    assert!(ALERT_KINDS.iter().all(|k| listed(*k)));
    let unique: BTreeSet<_> = ALERT_KINDS.iter().collect();
    assert_eq!(unique.len(), ALERT_KINDS.len());
}

#[test]
fn probe_tallies_are_counters_by_strategy_replica_and_outcome() {
    let mut snapshot = Topo::new().snapshot;
    let strategy: crate::probe::Strategy =
        "gtid-wait(1s)".parse().unwrap_or_else(|e| panic!("{e}"));
    snapshot.probes.tallies = vec![crate::probe::TallyView {
        strategy,
        replica: "r1".to_owned(),
        probes: 10,
        fresh: 7,
        stale: 1,
        fell_back: 2,
        errors: 0,
        wait_ms: None,
        primary_reads: 2,
        queries: 31,
        causes: BTreeMap::new(),
        cost: crate::probe::TallyCost::default(),
    }];
    let t = text(&snapshot);
    has(&t, "# TYPE rwtop_probe_outcomes_total counter");
    let labels = r#"replica="r1",strategy="gtid-wait(1s)""#;
    has(
        &t,
        &format!("rwtop_probe_outcomes_total{{{labels},outcome=\"fresh\"}} 7"),
    );
    has(
        &t,
        &format!("rwtop_probe_outcomes_total{{{labels},outcome=\"fell_back\"}} 2"),
    );
    has(
        &t,
        &format!("rwtop_probe_outcomes_total{{{labels},outcome=\"error\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_probe_primary_reads_total{{{labels}}} 2"),
    );
    has(&t, &format!("rwtop_probe_queries_total{{{labels}}} 31"));
}

#[test]
fn drains_show_rwtops_intent_and_the_balancers_word() {
    let mut snapshot = Topo::new().snapshot;
    snapshot.drain.backend = Some("haproxy".to_owned());
    snapshot.drain.drained.insert("r1".to_owned());
    snapshot
        .drain
        .states
        .insert("r1".to_owned(), crate::drain::ServerState::Drain);
    snapshot
        .drain
        .states
        .insert("r2".to_owned(), crate::drain::ServerState::Ready);
    let t = text(&snapshot);
    has(&t, &format!("rwtop_replica_drained{{{R1}}} 1"));
    has(&t, &format!("rwtop_replica_drained_by_rwtop{{{R1}}} 1"));
    has(&t, &format!("rwtop_replica_drained{{{R2}}} 0"));
    has(
        &t,
        &format!("rwtop_replica_load_balancer_state{{{R1},state=\"DRAIN\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_load_balancer_state{{{R2},state=\"READY\"}} 1"),
    );
}

#[test]
fn label_values_are_escaped() {
    let mut topo = Topo::new();
    topo.node_mut("r1", |n| n.name = "odd\"name\\x\ny".to_owned());
    let t = text(&topo.snapshot);
    has(&t, r#"rwtop_node_up{node="odd\"name\\x\ny"} 1"#);
}

/// Prometheus' naming rules, on every family: `rwtop_` prefix, one TYPE and HELP each, counters
/// ending in `_total`, no unit other than seconds and bytes spelled out, and each sample under
/// the family declared just before it.
#[test]
fn every_family_follows_the_naming_conventions() {
    let mut topo = Topo::new();
    topo.replica_mut("r2", |r| r.seconds_behind_source = None);
    let t = text(&topo.snapshot);
    let mut declared = BTreeSet::new();
    let mut current: Option<(String, String)> = None;
    for line in t.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or_default();
            assert!(rest.len() > name.len() + 10, "no help for {name}");
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or_default();
            assert!(name.starts_with("rwtop_"), "{name}");
            assert!(declared.insert(name.to_owned()), "{name} declared twice");
            assert_eq!(kind == "counter", name.ends_with("_total"), "{name} {kind}");
            for bad in ["_ms", "_milliseconds", "_kb", "_percent", "_count"] {
                assert!(!name.ends_with(bad), "{name}: base units");
            }
            current = Some((name.to_owned(), kind.to_owned()));
        } else {
            let (family, kind) = current.clone().unwrap_or_default();
            let name = line.split(['{', ' ']).next().unwrap_or_default();
            let ok = name == family
                || (kind == "histogram"
                    && ["_bucket", "_sum", "_count"]
                        .iter()
                        .any(|s| name == format!("{family}{s}")));
            assert!(ok, "sample {line:?} under family {family}");
            let value = line.rsplit(' ').next().unwrap_or_default();
            assert!(value.parse::<f64>().is_ok(), "{line:?}");
        }
    }
    assert!(declared.len() >= 30, "{declared:?}");
}

#[path = "channels.rs"]
mod channels;

/// The catch-up families: figures as the snapshot has them, absent when unknown, the state one
/// gauge per state.
#[test]
fn catch_up_figures_are_per_channel_and_absent_when_unknown() {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.catch_up = crate::store::testkit::catching_up(0.5, Duration::from_secs(18));
    });
    topo.replica_mut("r2", |r| {
        r.catch_up = crate::store::apply_rate::CatchUp::default();
    });
    let t = text(&topo.snapshot);
    has(
        &t,
        &format!("rwtop_replica_apply_transactions_per_second{{{R1}}} 75.0"),
    );
    has(
        &t,
        &format!("rwtop_replica_source_transactions_per_second{{{R1}}} 50.0"),
    );
    has(
        &t,
        &format!("rwtop_replica_lag_change_seconds_per_second{{{R1}}} -0.5"),
    );
    has(
        &t,
        &format!("rwtop_replica_catch_up_eta_seconds{{{R1}}} 18.0"),
    );
    has(
        &t,
        &format!("rwtop_replica_catch_up_state{{{R1},state=\"catching_up\"}} 1"),
    );
    has(
        &t,
        &format!("rwtop_replica_catch_up_state{{{R1},state=\"caught_up\"}} 0"),
    );
    has(
        &t,
        &format!("rwtop_replica_catch_up_state{{{R2},state=\"unknown\"}} 1"),
    );
    for name in [
        "rwtop_replica_apply_transactions_per_second",
        "rwtop_replica_source_transactions_per_second",
        "rwtop_replica_apply_bytes_per_second",
        "rwtop_replica_lag_change_seconds_per_second",
        "rwtop_replica_catch_up_eta_seconds",
    ] {
        assert!(
            samples(&t, name).iter().all(|l| !l.contains(R2)),
            "{name} has a sample for r2, whose catch-up is unknown"
        );
    }
    assert!(samples(&t, "rwtop_replica_apply_bytes_per_second").is_empty());
}

/// r1's IO thread stopped and c1 below it inherits: one critical incident, c1's alert a symptom
/// of it.
#[test]
fn incidents_are_listed_counted_and_named_on_every_alert() {
    let snapshot = crate::alerts::testkit::io_stop_incident();
    let t = text(&snapshot);
    has(
        &t,
        r#"rwtop_incidents_active{severity="critical",state="active"} 1"#,
    );
    has(
        &t,
        r#"rwtop_incidents_active{severity="warning",state="active"} 0"#,
    );
    has(
        &t,
        r#"rwtop_incidents_active{severity="warning",state="recovering"} 0"#,
    );
    has(
        &t,
        r#"rwtop_incident{incident="io_thread_stopped:r1",cause="io_thread_stopped",node="r1",channel="",severity="critical",state="active",alerts="2"} 1"#,
    );
    has(
        &t,
        r#"rwtop_alert_incident{kind="io_thread_stopped",node="r1",channel="",incident="io_thread_stopped:r1",role="cause",caused_by="",inherited="false"} 1"#,
    );
    has(
        &t,
        r#"rwtop_alert_incident{kind="sbm_understates_lag",node="c1",channel="",incident="io_thread_stopped:r1",role="symptom",caused_by="io_thread_stopped:r1",inherited="true"} 1"#,
    );
    // The per-kind series stay as they were.
    has(
        &t,
        r#"rwtop_alerts_active{kind="sbm_understates_lag",severity="critical"} 1"#,
    );
    assert_eq!(samples(&t, "rwtop_incident").len(), 1);
}
