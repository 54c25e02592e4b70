//! The replica families: heartbeat lag (value, trust, histogram), SBM and its NULL, threads,
//! backlog by stage, and drains. Each is written once per replication channel, and every one
//! carries the same `replica`, `source` (that channel's own source) and `channel`, so they join.

use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use super::{Fmt, family, flag, gauge, one_hot};
use crate::mysql::IoRunning;
use crate::store::lag::Lag;
use crate::store::{NodeView, ReplicaView, Role, Snapshot};

const LAG_STATES: [&str; 3] = ["exact", "at_least", "unknown"];
const IO_STATES: [&str; 3] = ["yes", "connecting", "no"];

/// `replica`, `source`, `channel`: the same on every replica series, so they join.
pub(super) type ReplicaLabels<'a> = [(&'static str, &'a str); 3];

/// Every channel rwtop has the status of now (the node answers and replicates on it): what the
/// families of live values are written for.
pub(super) fn views(s: &Snapshot) -> impl Iterator<Item = (&NodeView, &ReplicaView)> {
    known(s).filter(|(n, _)| n.answers())
}

/// Every channel a node showed, whether it answers now or not (one that does not keeps the
/// channels of its last answer, each unknown): what the histogram, a history, is written for.
fn known(s: &Snapshot) -> impl Iterator<Item = (&NodeView, &ReplicaView)> {
    s.nodes
        .iter()
        .flat_map(|n| n.channels.iter().map(move |r| (n, r)))
}

/// What the state and drain families are written for: each channel a node showed (a node that
/// stopped answering keeps one series per channel, its lag state unknown), and one place (the
/// channel unknown: `None`) for a node that should replicate and has never shown a channel (a
/// replica that has not answered yet), so its state never goes missing.
fn places(s: &Snapshot) -> impl Iterator<Item = (&NodeView, Option<&ReplicaView>)> {
    s.nodes.iter().flat_map(|n| {
        let none = (n.channels.is_empty() && n.role == Role::Replica).then_some((n, None));
        n.channels.iter().map(move |r| (n, Some(r))).chain(none)
    })
}

/// A channel's labels; without one, the node's last known source and the default channel.
fn place_labels<'a>(n: &'a NodeView, r: Option<&'a ReplicaView>) -> ReplicaLabels<'a> {
    let source = match r {
        Some(r) => r.source.as_deref(),
        None => n.source.as_deref(),
    };
    [
        ("replica", n.name.as_str()),
        ("source", source.unwrap_or("")),
        ("channel", r.map_or("", |r| r.channel.as_str())),
    ]
}

pub(super) fn replica_labels<'a>(n: &'a NodeView, r: &'a ReplicaView) -> ReplicaLabels<'a> {
    place_labels(n, Some(r))
}

fn lag_state(r: Option<&ReplicaView>) -> &'static str {
    match r.map(|r| &r.heartbeat_lag) {
        Some(Lag::Exact { .. }) => "exact",
        Some(Lag::AtLeast { .. }) => "at_least",
        Some(Lag::Unknown { .. }) | None => "unknown",
    }
}

/// Heartbeat lag: the value, how far to trust it, and its distribution.
pub(super) fn lag(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_replica_heartbeat_lag_seconds",
        "True replication lag from rwtop's heartbeat (time since the first heartbeat the replica \
         has not applied was committed on the primary). A lower bound while \
         rwtop_replica_heartbeat_lag_state is at_least; absent while unknown.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.heartbeat_lag.value() {
                Some(lag) => gauge(m, &replica_labels(n, r), lag.as_secs_f64()),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_heartbeat_lag_upper_bound_seconds",
        "While the lag is only bounded (state at_least): the most it can be, the age of the \
         heartbeat row the replica shows.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match &r.heartbeat_lag {
                Lag::AtLeast {
                    upper: Some(upper), ..
                } => gauge(m, &replica_labels(n, r), upper.as_secs_f64()),
                _ => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_heartbeat_lag_state",
        "How much rwtop_replica_heartbeat_lag_seconds can be trusted: 1 for exact, at_least (a \
         lower bound: the replica has not applied rwtop's first heartbeat) or unknown (the node \
         does not answer, or the heartbeat stopped advancing).",
        MetricType::Gauge,
        |m| {
            places(s)
                .try_for_each(|(n, r)| one_hot(m, place_labels(n, r), &LAG_STATES, lag_state(r)))
        },
    )?;
    family(
        e,
        "rwtop_replica_heartbeat_lag_distribution_seconds",
        "Every exact heartbeat lag reading since rwtop started.",
        MetricType::Histogram,
        |m| {
            known(s).try_for_each(|(n, r)| {
                let h = &r.lag_histogram;
                let buckets: Vec<(f64, u64)> = crate::store::histogram::BUCKETS
                    .iter()
                    .enumerate()
                    .map(|(i, bound)| (*bound, h.counts.get(i).copied().unwrap_or(0)))
                    .collect();
                m.encode_family(&replica_labels(n, r))?
                    .encode_histogram::<NoLabelSet>(h.sum_seconds, h.count, &buckets, None)
            })
        },
    )
}

/// The heartbeat lag in its two parts (`store/lag_split.rs`): each only while exact, so the two
/// add up to `rwtop_replica_heartbeat_lag_seconds` whenever both are written.
pub(super) fn split(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    type Part = fn(&ReplicaView) -> &Lag;
    let parts: [(&str, &str, Part); 2] = [
        (
            "rwtop_replica_lag_transport_seconds",
            "The transport part of the heartbeat lag: how old the newest heartbeat the replica \
             has received (in its relay log) is. Absent while not exact (MySQL, a channel \
             without GTIDs, an unknown lag).",
            |r| &r.lag_split.transport,
        ),
        (
            "rwtop_replica_lag_apply_seconds",
            "The apply part of the heartbeat lag: how much further behind the replica's applied \
             position is than what it has received (what waits in the relay log). Transport \
             plus apply is rwtop_replica_heartbeat_lag_seconds. Absent while not exact.",
            |r| &r.lag_split.apply,
        ),
    ];
    for (name, help, part) in parts {
        family(e, name, help, MetricType::Gauge, |m| {
            views(s).try_for_each(|(n, r)| match part(r).exact() {
                Some(lag) => gauge(m, &replica_labels(n, r), lag.as_secs_f64()),
                None => Ok(()),
            })
        })?;
    }
    Ok(())
}

/// What the replica reports of itself: SBM and its threads.
pub(super) fn threads(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_replica_sbm_seconds",
        "Seconds_Behind_Master (Seconds_Behind_Source) as the replica reports it; absent only \
         while it is NULL (then rwtop_replica_sbm_null is 1).",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.seconds_behind_source {
                Some(sbm) => gauge(m, &replica_labels(n, r), sbm),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_sbm_null",
        "1 while Seconds_Behind_Master is NULL (a replication thread is stopped or reconnecting): \
         the replica's other series stay.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                gauge(
                    m,
                    &replica_labels(n, r),
                    flag(r.seconds_behind_source.is_none()),
                )
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_io_thread_state",
        "Slave_IO_Running: 1 for yes, connecting or no.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                let state = match r.io_running {
                    IoRunning::Yes => "yes",
                    IoRunning::Connecting => "connecting",
                    IoRunning::No => "no",
                };
                one_hot(m, replica_labels(n, r), &IO_STATES, state)
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_sql_thread_running",
        "Slave_SQL_Running: 1 yes, 0 no.",
        MetricType::Gauge,
        |m| views(s).try_for_each(|(n, r)| gauge(m, &replica_labels(n, r), flag(r.sql_running))),
    )?;
    family(
        e,
        "rwtop_replica_last_error_number",
        "Last_IO_Errno and Last_SQL_Errno by thread; 0 when there is none.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                let labels = replica_labels(n, r);
                let errno = |e: Option<&crate::mysql::ThreadError>| e.map_or(0, |e| e.errno);
                gauge(
                    m,
                    &(labels, [("thread", "io")]),
                    errno(r.last_io_error.as_ref()),
                )?;
                gauge(
                    m,
                    &(labels, [("thread", "sql")]),
                    errno(r.last_sql_error.as_ref()),
                )
            })
        },
    )
}

/// How far behind in transactions and bytes, and the configured delay.
pub(super) fn progress(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_replica_gtid_backlog_transactions",
        "GTID transactions in flight by stage: not_received (on the source before the replica's \
         poll, not yet in its relay log: a lower bound) and not_applied (received, not yet \
         applied); absent when it cannot be told (GTID off, source not polled yet), never a \
         guessed 0.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                let labels = replica_labels(n, r);
                let b = &r.gtid_backlog;
                for (stage, value) in [
                    ("not_received", b.not_received),
                    ("not_applied", b.not_applied),
                ] {
                    if let Some(v) = value {
                        gauge(m, &(labels, [("stage", stage)]), v)?;
                    }
                }
                Ok(())
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_binlog_backlog_bytes",
        "Binlog bytes in flight by stage, across file boundaries: not_received (the IO thread has \
         yet to read them: a lower bound, as for transactions) and not_applied (read, not yet \
         applied); absent when unknown.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                let labels = replica_labels(n, r);
                let b = &r.bytes_behind;
                for (stage, value) in [("not_received", b.io), ("not_applied", b.sql)] {
                    if let Some(v) = value {
                        gauge(m, &(labels, [("stage", stage)]), v)?;
                    }
                }
                Ok(())
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_sql_delay_seconds",
        "The configured replication delay (MASTER_DELAY / SOURCE_DELAY); absent when the server \
         does not report one.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.sql_delay {
                Some(d) => gauge(m, &replica_labels(n, r), d),
                None => Ok(()),
            })
        },
    )
}

pub(super) fn drains(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let d = &s.drain;
    family(
        e,
        "rwtop_replica_drained",
        "1 while the replica is out of rotation: drained by rwtop, or not taking reads in the \
         load balancer's own view. rwtop's routing (probes, lag threshold) skips it. A drain is the \
         node's: each of its channels shows it.",
        MetricType::Gauge,
        |m| {
            places(s)
                .try_for_each(|(n, r)| gauge(m, &place_labels(n, r), flag(d.is_drained(&n.name))))
        },
    )?;
    family(
        e,
        "rwtop_replica_drained_by_rwtop",
        "1 when rwtop drained the replica and has not undrained it since.",
        MetricType::Gauge,
        |m| {
            places(s).try_for_each(|(n, r)| {
                gauge(m, &place_labels(n, r), flag(d.drained.contains(&n.name)))
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_load_balancer_state",
        "The load balancer's own word for the replica (READY, DRAIN, MAINT, DOWN, ...), always 1; \
         absent without a drain backend or before its view is read.",
        MetricType::Gauge,
        |m| {
            places(s).try_for_each(|(n, r)| match d.states.get(&n.name) {
                Some(state) => gauge(m, &(place_labels(n, r), [("state", state.label())]), 1),
                None => Ok(()),
            })
        },
    )
}
