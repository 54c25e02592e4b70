//! Rules about the whole topology rather than one node: the heartbeat that every lag figure
//! rests on, and whether reads still have a replica to go to.

use super::format;
use super::verdict::{RuleInputs, Verdict, fact};
use crate::poll::{ConnState, WriterState};
use crate::store::Role;
use crate::units;

/// The heartbeat is stale: one verdict for the topology with one root, or one per root (keyed
/// by the root's node) when several primaries each have a writer.
pub fn heartbeat_stale(inputs: &RuleInputs<'_>) -> Vec<(Option<String>, Verdict)> {
    let s = inputs.snapshot;
    let hb = &s.heartbeat;
    // A root that is a Galera cluster's writer: its commits wait for the whole cluster.
    let cluster = |node: Option<&str>| {
        s.clusters
            .iter()
            .find(|c| node.is_some() && c.writer.as_deref() == node)
    };
    if hb.roots.len() <= 1 {
        let writer = (&hb.writer, hb.last_seq, hb.last_ack_age, hb.stale);
        let cluster = cluster(hb.node.as_deref());
        return vec![(None, stale_verdict(writer, hb.node.as_deref(), cluster))];
    }
    hb.roots
        .iter()
        .map(|root| {
            let writer = (&root.writer, root.last_seq, root.last_ack_age, root.stale);
            let node = root.node.as_deref();
            (
                root.node.clone(),
                stale_verdict(writer, node, cluster(node)),
            )
        })
        .collect()
}

fn stale_verdict(
    (writer, last_seq, last_ack_age, stale): (
        &WriterState,
        Option<u64>,
        Option<std::time::Duration>,
        bool,
    ),
    node: Option<&str>,
    cluster: Option<&crate::store::cluster::ClusterView>,
) -> Verdict {
    if !stale {
        return Verdict::Clean;
    }
    let mut evidence = vec![fact("writer", writer.name())];
    if let Some(seq) = last_seq {
        evidence.push(fact("last_seq", seq.to_string()));
    }
    if let Some(age) = last_ack_age {
        evidence.push(fact("last_ack_age", units::duration(age)));
    }
    let cause = match (writer, cluster) {
        (WriterState::Refused { .. } | WriterState::Unsafe { .. }, _) => format!(
            "heartbeat writer refused: {}",
            format::quote(&writer.detail().unwrap_or_default())
        ),
        // A cluster's writer waits on the whole cluster: that is the cause, whatever the
        // writer's own session says.
        (_, Some(c)) => {
            evidence.push(fact("cluster", c.name.clone()));
            let writer_says = match writer {
                WriterState::Failing { cause } => {
                    format!(" (the writer: {})", format::quote(cause))
                }
                _ => String::new(),
            };
            format!(
                "heartbeat not committing on {}: the Galera cluster {}'s commits are stalled (a \
                 member that went silent and is not evicted yet, for evs.suspect_timeout, 5 s by \
                 default; flow control; or a DDL run as TOI), so every member's lag is unknown \
                 meanwhile{writer_says}",
                node.unwrap_or("its writer"),
                c.name
            )
        }
        (WriterState::Failing { cause }, None) => {
            format!("heartbeat writer failing: {}", format::quote(cause))
        }
        (_, None) => "heartbeat not advancing on the primary: lag of caught-up replicas is unknown"
            .to_owned(),
    };
    Verdict::bad(evidence, cause)
}

/// Every replica that answers is beyond the routing threshold, so a router that honours it
/// sends every read to the primary. A replica whose lag is unknown is not counted as lagging:
/// this alert claims a fact, so it needs the numbers. A delayed replica is judged on its true
/// lag, delay included: its reads are that stale, and routers that bound lag (ProxySQL's
/// `max_replication_lag` reads SBM, which includes the delay) keep reads off it. The evidence
/// names the delay, so the alert is not mistaken for a replica falling behind.
pub fn all_replicas_lagging(inputs: &RuleInputs<'_>) -> Verdict {
    let limit = inputs.settings.routing_max_lag_seconds;
    let mut lags = Vec::new();
    let mut unknown = false;
    for node in &inputs.snapshot.nodes {
        if node.role != Role::Replica || node.conn != ConnState::Up {
            continue;
        }
        match node.lag().and_then(|lag| lag.value()) {
            Some(lag) if lag.as_secs_f64() <= limit => return Verdict::Clean,
            Some(_) => lags.push(node),
            None => unknown = true,
        }
    }
    if unknown {
        return Verdict::Unknown;
    }
    if lags.is_empty() {
        return Verdict::Clean;
    }
    let mut evidence = vec![fact("threshold", format::lag_secs(limit))];
    for node in &lags {
        if let (Some(r), Some(lag)) = (node.replica(), node.lag()) {
            let lag = format::lag(&lag);
            let lag = match r.sql_delay.filter(|d| *d > 0) {
                Some(delay) => format!("{lag} (SQL_Delay {})", crate::units::secs(delay)),
                None => lag,
            };
            evidence.push(fact(&format!("lag_{}", node.name), lag));
        }
    }
    let cause = format!(
        "all {} replicas lag beyond {}: reads would all fall back to the primary",
        lags.len(),
        format::lag_secs(limit)
    );
    Verdict::bad(evidence, cause)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::testkit::Judge;
    use crate::alerts::{AlertEngine, AlertKind, AlertSettings};
    use crate::store::lag::Lag;
    use crate::store::testkit::{Topo, find, secs};

    #[test]
    fn stale_heartbeat_is_global_and_names_the_writer_failure() {
        let mut topo = Topo::new();
        topo.snapshot.heartbeat.stale = true;
        topo.snapshot.heartbeat.writer = WriterState::Failing {
            cause: "ERROR 1290: read-only".to_owned(),
        };
        let alert = topo.raise(AlertKind::HeartbeatStale, None);
        assert_eq!(
            alert.cause,
            "heartbeat writer failing: ERROR 1290: read-only"
        );
        assert_eq!(alert.evidence[0], fact("writer", "failing"));
    }

    /// The writer of a Galera cluster stalls with the cluster: the cause is the cluster's
    /// stalled commits, with what the writer's own session says beside it.
    #[test]
    fn a_galera_writers_stale_heartbeat_names_the_clusters_stall() {
        let mut topo = Topo::new();
        topo.add_cluster("gc", &["g1", "g2"]);
        topo.snapshot.heartbeat.node = Some("g1".to_owned());
        topo.snapshot.heartbeat.stale = true;
        topo.snapshot.heartbeat.writer = WriterState::Failing {
            cause: "its previous session still holds its lock".to_owned(),
        };
        let alert = topo.raise(AlertKind::HeartbeatStale, None);
        assert!(
            alert
                .cause
                .starts_with("heartbeat not committing on g1: the Galera cluster gc's commits"),
            "{}",
            alert.cause
        );
        assert!(
            alert
                .cause
                .ends_with("(the writer: its previous session still holds its lock)"),
            "{}",
            alert.cause
        );
        assert!(alert.evidence.contains(&fact("cluster", "gc")));
    }

    /// Two roots: the one whose writer stopped is named; the other root's heartbeat is fine.
    #[test]
    fn each_root_has_its_own_stale_heartbeat() {
        use crate::store::RootBeat;
        let root = |node: &str, writer, stale| RootBeat {
            writer_id: format!("rwtop-test@{node}"),
            node: Some(node.to_owned()),
            writer,
            last_seq: Some(40),
            last_ack_age: Some(secs(if stale { 9.0 } else { 0.1 })),
            stale,
        };
        let mut topo = Topo::new();
        topo.add_primary("p2", 9);
        let failing = WriterState::Failing {
            cause: "connection refused".to_owned(),
        };
        topo.snapshot.heartbeat.roots = vec![
            root("db1", WriterState::Writing, false),
            root("p2", failing, true),
        ];
        let alert = topo.raise(AlertKind::HeartbeatStale, Some("p2"));
        assert_eq!(alert.cause, "heartbeat writer failing: connection refused");
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&topo.at(1));
        let view = engine.evaluate(&topo.at(2));
        let stale: Vec<_> = view
            .active
            .iter()
            .filter(|a| a.kind == AlertKind::HeartbeatStale)
            .map(|a| a.node.clone())
            .collect();
        assert_eq!(stale, [Some("p2".to_owned())]);
    }

    #[test]
    fn all_replicas_lagging_needs_every_up_replica_behind() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(3.0) });
        topo.assert_quiet(AlertKind::AllReplicasLagging);
        topo.replica_mut("r2", |r| {
            r.heartbeat_lag = Lag::AtLeast {
                lag: secs(5.0),
                upper: None,
            };
        });
        let alert = topo.raise(AlertKind::AllReplicasLagging, None);
        assert!(
            alert
                .cause
                .ends_with("reads would all fall back to the primary")
        );
        assert_eq!(alert.evidence[2], fact("lag_r2", "≥5.00s"));
    }

    #[test]
    fn a_delayed_replica_counts_as_lagging_for_routing_and_its_delay_is_named() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(3.0) });
        // r2 is exactly as far behind as its delay: stale for reads all the same.
        topo.replica_mut("r2", |r| {
            r.heartbeat_lag = Lag::Exact { lag: secs(4.9) };
            r.sql_delay = Some(5);
        });
        let alert = topo.raise(AlertKind::AllReplicasLagging, None);
        assert_eq!(alert.evidence[1], fact("lag_r1", "3.00s"));
        assert_eq!(alert.evidence[2], fact("lag_r2", "4.90s (SQL_Delay 5s)"));
    }

    #[test]
    fn global_rules_count_one_sample_per_poll_interval() {
        let mut topo = Topo::new();
        topo.snapshot.heartbeat.stale = true;
        let mut engine = AlertEngine::new(AlertSettings::default());
        // Four snapshots 250 ms apart are one global sample: nothing raised.
        for quarter in 0..4 {
            let mut snapshot = topo.at(1);
            snapshot.uptime += std::time::Duration::from_millis(250 * quarter);
            assert!(find(&engine.evaluate(&snapshot), AlertKind::HeartbeatStale, None).is_none());
        }
        assert!(
            find(
                &engine.evaluate(&topo.at(2)),
                AlertKind::HeartbeatStale,
                None
            )
            .is_some()
        );
    }
}
