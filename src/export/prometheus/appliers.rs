//! The parallel-applier families (`docs/design.md`, "Parallel appliers and catch-up"), per
//! replication channel with the replica labels: configured workers, busy workers and
//! commit-order waits at the newest processlist scan (a sample, with its age), retried
//! transactions and event groups as counters. A value the server does not report has no sample.

use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use super::replica::{replica_labels, views};
use super::{Fmt, family, gauge};
use crate::store::{ApplierView, Snapshot};

fn counter(m: &mut MetricEncoder, labels: &impl EncodeLabelSet, value: u64) -> Fmt {
    m.encode_family(labels)?
        .encode_counter::<NoLabelSet, _, u64>(&value, None)
}

/// One gauge family written for each channel where `value` knows something.
fn per_channel<T: prometheus_client::encoding::EncodeGaugeValue + Copy>(
    e: &mut DescriptorEncoder,
    s: &Snapshot,
    name: &'static str,
    help: &str,
    value: impl Fn(&ApplierView) -> Option<T>,
) -> Fmt {
    family(e, name, help, MetricType::Gauge, |m| {
        views(s).try_for_each(|(n, r)| match value(&r.appliers) {
            Some(v) => gauge(m, &replica_labels(n, r), v),
            None => Ok(()),
        })
    })
}

pub(super) fn appliers(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    per_channel(
        e,
        s,
        "rwtop_replica_applier_workers",
        "Configured parallel applier workers (slave_parallel_threads, replica_parallel_workers); \
         0 for one applier thread. On MariaDB one pool serves every channel of the node.",
        |a| a.workers,
    )?;
    per_channel(
        e,
        s,
        "rwtop_replica_applier_workers_busy",
        "Workers holding a transaction at the newest processlist scan (every few polls: see \
         rwtop_replica_applier_sample_age_seconds), commit-order waiters included.",
        |a| a.busy.map(|b| b.busy),
    )?;
    per_channel(
        e,
        s,
        "rwtop_replica_applier_commit_order_waits",
        "Workers waiting for a prior transaction to commit, at the newest processlist scan.",
        |a| a.busy.and_then(|b| b.commit_order_waits),
    )?;
    per_channel(
        e,
        s,
        "rwtop_replica_applier_sample_age_seconds",
        "How old the processlist scan behind the busy-worker figures is.",
        |a| a.busy.map(|b| b.age.as_secs_f64()),
    )?;
    family(
        e,
        "rwtop_replica_applier_retried_transactions",
        "Transactions the appliers rolled back and ran again (Retried_transactions), since the \
         replica started.",
        MetricType::Counter,
        |m| {
            views(s).try_for_each(|(n, r)| match r.appliers.retried_transactions {
                Some(v) => counter(m, &replica_labels(n, r), v),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_applier_groups",
        "Event groups applied since the replica started, by kind: ddl, transactional, \
         non_transactional (Slave_DDL_Groups, Slave_Transactional_Groups, \
         Slave_Non_Transactional_Groups).",
        MetricType::Counter,
        |m| {
            views(s).try_for_each(|(n, r)| {
                let g = &r.appliers.groups;
                for (kind, value) in [
                    ("ddl", g.ddl),
                    ("transactional", g.transactional),
                    ("non_transactional", g.non_transactional),
                ] {
                    if let Some(v) = value {
                        counter(m, &(replica_labels(n, r), [("kind", kind)]), v)?;
                    }
                }
                Ok(())
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::export::prometheus::tests::{has, text};
    use crate::store::testkit::Topo;
    use crate::store::{ApplierGroups, ApplierView, BusyWorkers};

    const R1: &str = r#"replica="r1",source="db1",channel="""#;

    #[test]
    fn workers_busy_waits_and_counters_per_channel() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.appliers = ApplierView {
                workers: Some(4),
                busy: Some(BusyWorkers {
                    workers: 4,
                    busy: 3,
                    commit_order_waits: Some(1),
                    age: Duration::from_millis(1500),
                    shared: false,
                }),
                retried_transactions: Some(7),
                groups: ApplierGroups {
                    ddl: Some(2),
                    transactional: Some(1204),
                    non_transactional: None,
                },
                ..ApplierView::default()
            };
        });
        let t = text(&topo.snapshot);
        has(&t, &format!("rwtop_replica_applier_workers{{{R1}}} 4"));
        has(&t, &format!("rwtop_replica_applier_workers_busy{{{R1}}} 3"));
        has(
            &t,
            &format!("rwtop_replica_applier_commit_order_waits{{{R1}}} 1"),
        );
        has(
            &t,
            &format!("rwtop_replica_applier_sample_age_seconds{{{R1}}} 1.5"),
        );
        has(
            &t,
            "# TYPE rwtop_replica_applier_retried_transactions_total counter",
        );
        has(
            &t,
            &format!("rwtop_replica_applier_retried_transactions_total{{{R1}}} 7"),
        );
        has(
            &t,
            &format!("rwtop_replica_applier_groups_total{{{R1},kind=\"transactional\"}} 1204"),
        );
        // NULL from the server: no sample, never 0.
        assert!(!t.contains("kind=\"non_transactional\""), "{t}");
    }
}
