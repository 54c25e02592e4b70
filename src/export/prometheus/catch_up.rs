//! The catch-up families (`store/apply_rate.rs`): apply rate against the source's write rate,
//! the lag's trend, the ETA and the state, once per replication channel with the replica
//! families' labels. A figure rwtop cannot tell has no sample, never a 0.

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::replica::{replica_labels, views};
use super::{Fmt, family, gauge, one_hot};
use crate::store::Snapshot;
use crate::store::apply_rate::{CatchUp, CatchUpState};

/// One gauge family of an optional catch-up figure.
fn figure(
    e: &mut DescriptorEncoder,
    s: &Snapshot,
    name: &'static str,
    help: &str,
    pick: fn(&CatchUp) -> Option<f64>,
) -> Fmt {
    family(e, name, help, MetricType::Gauge, |m| {
        views(s).try_for_each(|(n, r)| match pick(&r.catch_up) {
            Some(value) => gauge(m, &replica_labels(n, r), value),
            None => Ok(()),
        })
    })
}

pub(super) fn catch_up(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    figure(
        e,
        s,
        "rwtop_replica_apply_transactions_per_second",
        "Transactions the channel applied per second over the last 20 s of polls (GTID \
         positions); absent when it cannot be told.",
        |c| c.apply_trx_per_s,
    )?;
    figure(
        e,
        s,
        "rwtop_replica_source_transactions_per_second",
        "Transactions the channel's source wrote per second over the same polls; absent when \
         rwtop does not poll the source.",
        |c| c.source_trx_per_s,
    )?;
    figure(
        e,
        s,
        "rwtop_replica_apply_bytes_per_second",
        "Bytes of the source's binlog the channel applied per second over the last 20 s \
         (executed position), for replicas without GTIDs.",
        |c| c.apply_bytes_per_s,
    )?;
    figure(
        e,
        s,
        "rwtop_replica_source_bytes_per_second",
        "Bytes the channel's source wrote to its binlog per second over the same polls.",
        |c| c.source_bytes_per_s,
    )?;
    figure(
        e,
        s,
        "rwtop_replica_lag_change_seconds_per_second",
        "Seconds of heartbeat lag gained per second over the last 20 s (least squares); \
         negative while the lag shrinks.",
        |c| c.lag_change_s_per_s,
    )?;
    figure(
        e,
        s,
        "rwtop_replica_catch_up_eta_seconds",
        "While the channel catches up: its lag beyond SQL_Delay over how fast the lag shrinks. \
         Absent otherwise (caught up, falling behind, not shrinking, unknown).",
        |c| c.eta.map(|d| d.as_secs_f64()),
    )?;
    let states = CatchUpState::ALL.map(CatchUpState::name);
    family(
        e,
        "rwtop_replica_catch_up_state",
        "1 for where the channel stands: caught_up, catching_up, falling_behind, not_shrinking \
         or unknown.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                one_hot(m, replica_labels(n, r), &states, r.catch_up.state.name())
            })
        },
    )
}
