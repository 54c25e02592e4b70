//! The failover exposure (`alerts/exposure.rs`, docs/failover-exposure.md) as series: per root
//! and replica, what a crash of the root would lose now, the relay log left to apply and its
//! drain time, whether the replica qualifies, and the candidate. Labelled `root` and `replica`
//! (and `channel`, the replica's channel from the root); a figure rwtop cannot tell has no
//! sample, never a 0.

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::{Fmt, family, flag, gauge};
use crate::store::Snapshot;
use crate::store::exposure::{ClusterExposure, ReplicaExposure};

type Pick = fn(&ReplicaExposure) -> Option<f64>;

fn rows(s: &Snapshot) -> impl Iterator<Item = (&ClusterExposure, &ReplicaExposure)> {
    s.exposure
        .iter()
        .flat_map(|c| c.replicas.iter().map(move |r| (c, r)))
}

fn labels<'a>(c: &'a ClusterExposure, r: &'a ReplicaExposure) -> [(&'static str, &'a str); 3] {
    [
        ("root", c.root.as_str()),
        ("replica", r.node.as_str()),
        ("channel", r.channel.as_str()),
    ]
}

#[expect(
    clippy::cast_precision_loss,
    reason = "counts of transactions as gauges"
)]
fn count(n: Option<u64>) -> Option<f64> {
    n.map(|n| n as f64)
}

pub(super) fn exposure(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let figures: [(&'static str, &str, Pick); 4] = [
        (
            "rwtop_exposure_not_received_transactions",
            "Transactions the root had that the replica has not received: lost with the root if \
             it crashed now (a lower bound while the root takes writes; after the root stopped \
             answering, as of its last sample).",
            |r| count(r.not_received),
        ),
        (
            "rwtop_exposure_relay_transactions",
            "Transactions the replica received and has not applied (its relay log left to apply).",
            |r| count(r.relay_trx),
        ),
        (
            "rwtop_exposure_relay_bytes",
            "The relay log left to apply in the source's binlog bytes, where known.",
            |r| count(r.relay_bytes),
        ),
        (
            "rwtop_exposure_drain_seconds",
            "How long applying the relay log takes at the measured apply rate; absent while the \
             SQL thread is stopped or no rate is measured yet.",
            |r| r.drain.map(|d| d.as_secs_f64()),
        ),
    ];
    for (name, help, pick) in figures {
        family(e, name, help, MetricType::Gauge, |m| {
            rows(s).try_for_each(|(c, r)| match pick(r) {
                Some(value) => gauge(m, &labels(c, r), value),
                None => Ok(()),
            })
        })?;
    }
    family(
        e,
        "rwtop_exposure_candidate",
        "1 for the replica to promote if the root died now (least lost, then least to apply, \
         then the soonest drained), 0 for every other replica under the root.",
        MetricType::Gauge,
        |m| {
            rows(s).try_for_each(|(c, r)| {
                let chosen = c.candidate.as_ref().is_some_and(|k| k.node == r.node);
                gauge(m, &labels(c, r), flag(chosen))
            })
        },
    )?;
    family(
        e,
        "rwtop_exposure_excluded",
        "1 for a replica that cannot be promoted (delayed, errant GTIDs, no log_slave_updates, \
         not answering, a broken thread, another version, cascaded); the reason is in the JSON \
         snapshot and the TUI.",
        MetricType::Gauge,
        |m| rows(s).try_for_each(|(c, r)| gauge(m, &labels(c, r), flag(r.excluded.is_some()))),
    )?;
    family(
        e,
        "rwtop_exposure_candidate_loses_transactions",
        "Transactions the candidate never received that the root (as last seen) or another \
         replica has: what promoting it now would lose.",
        MetricType::Gauge,
        |m| {
            s.exposure.iter().try_for_each(|c| {
                match c.candidate.as_ref().and_then(|k| Some((k, k.loses?))) {
                    Some((k, loses)) => {
                        let labels = [("root", c.root.as_str()), ("replica", k.node.as_str())];
                        gauge(m, &labels, count(Some(loses)).unwrap_or_default())
                    }
                    None => Ok(()),
                }
            })
        },
    )?;
    family(
        e,
        "rwtop_exposure_root_sample_age_seconds",
        "Age of the root's newest sample, which the exposure is counted against; it grows once \
         the root stops answering.",
        MetricType::Gauge,
        |m| {
            s.exposure.iter().try_for_each(|c| match c.root_sample_age {
                Some(age) => gauge(m, &[("root", c.root.as_str())], age.as_secs_f64()),
                None => Ok(()),
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{has, text};
    use crate::store::testkit::Topo;

    #[test]
    fn the_exposure_is_a_series_per_replica_and_the_candidate_is_one_hot() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.gtid_backlog.not_received = Some(50);
            r.gtid_backlog.not_applied = Some(100);
        });
        topo.replica_mut("r2", |r| r.sql_delay = Some(3600));
        let mut s = topo.at(1);
        s.exposure = crate::alerts::exposure::judge(&s);
        let t = text(&s);
        let l = |replica: &str| format!(r#"{{root="db1",replica="{replica}",channel=""}}"#);
        has(
            &t,
            &format!("rwtop_exposure_not_received_transactions{} 50.0", l("r1")),
        );
        has(
            &t,
            &format!("rwtop_exposure_relay_transactions{} 100.0", l("r1")),
        );
        // 100 trx at the testkit's 50 trx/s.
        has(&t, &format!("rwtop_exposure_drain_seconds{} 2.0", l("r1")));
        has(&t, &format!("rwtop_exposure_candidate{} 1", l("r1")));
        has(&t, &format!("rwtop_exposure_candidate{} 0", l("r2")));
        has(&t, &format!("rwtop_exposure_excluded{} 1", l("r2")));
        has(&t, &format!("rwtop_exposure_excluded{} 0", l("r1")));
        has(
            &t,
            r#"rwtop_exposure_candidate_loses_transactions{root="db1",replica="r1"} 50.0"#,
        );
        has(
            &t,
            r#"rwtop_exposure_root_sample_age_seconds{root="db1"} 0.1"#,
        );
        assert!(t.contains("# HELP rwtop_exposure_drain_seconds "));
    }
}
