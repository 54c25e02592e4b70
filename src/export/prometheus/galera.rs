//! The Galera families (`store/galera.rs`, `store/cluster.rs`): per member (labelled with its
//! cluster as `galera_cluster`: `cluster` is every series' own label, the rwtop it came
//! from), its state, whether it is in the primary component and ready, its lag behind the
//! cluster's writer and how far to trust it, its queues and distance from the newest member,
//! the paused share of the last interval, and the server's flow-control, certification and
//! brute-force counters; per cluster, the members in the primary component against those
//! found, and a split. A figure the server did not report has no sample, never a 0.

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::{Fmt, family, flag, gauge, one_hot};
use crate::mysql::galera::{Component, MemberState};
use crate::store::cluster::ClusterView;
use crate::store::galera::GaleraView;
use crate::store::lag::Lag;
use crate::store::{NodeView, Snapshot};

const STATES: [&str; 6] = [
    "synced",
    "donor",
    "joining",
    "joined",
    "initialized",
    "other",
];
const LAG_STATES: [&str; 3] = ["exact", "at_least", "unknown"];

fn state_name(state: MemberState) -> &'static str {
    match state {
        MemberState::Synced => "synced",
        MemberState::Donor => "donor",
        MemberState::Joining => "joining",
        MemberState::Joined => "joined",
        MemberState::Initialized => "initialized",
        MemberState::Other => "other",
    }
}

type Labels<'a> = [(&'static str, &'a str); 2];

/// Every member that answers, with its cluster (named by the cluster view that lists it, `""`
/// for a member rwtop found no cluster for) and its view.
fn members(s: &Snapshot) -> impl Iterator<Item = (Labels<'_>, &NodeView, &GaleraView)> {
    s.nodes.iter().filter_map(|n| {
        let g = n.galera()?;
        let cluster = s
            .clusters
            .iter()
            .find(|c| c.members.contains(&n.name))
            .map_or("", |c| c.name.as_str());
        Some((
            [("node", n.name.as_str()), ("galera_cluster", cluster)],
            n,
            g,
        ))
    })
}

fn member_gauge(
    e: &mut DescriptorEncoder,
    s: &Snapshot,
    name: &'static str,
    help: &str,
    pick: fn(&NodeView, &GaleraView, &Snapshot) -> Option<f64>,
) -> Fmt {
    family(e, name, help, MetricType::Gauge, |m| {
        members(s).try_for_each(|(labels, n, g)| match pick(n, g, s) {
            Some(value) => gauge(m, &labels, value),
            None => Ok(()),
        })
    })
}

fn member_total(
    e: &mut DescriptorEncoder,
    s: &Snapshot,
    name: &'static str,
    help: &str,
    pick: fn(&GaleraView) -> Option<u64>,
) -> Fmt {
    family(e, name, help, MetricType::Counter, |m| {
        members(s).try_for_each(|(labels, _, g)| match pick(g) {
            Some(value) => m
                .encode_family(&labels)?
                .encode_counter::<prometheus_client::encoding::NoLabelSet, _, u64>(&value, None),
            None => Ok(()),
        })
    })
}

#[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
fn float(n: u64) -> f64 {
    n as f64
}

fn cluster_of<'a>(s: &'a Snapshot, n: &NodeView) -> Option<&'a ClusterView> {
    s.clusters.iter().find(|c| c.members.contains(&n.name))
}

pub(super) fn galera(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_galera_member_state",
        "A Galera member's wsrep_local_state: 1 for its state (synced serves reads; donor is \
         desynced, by a backup's read lock or a state transfer, and serves stale reads; joining, \
         joined; initialized is outside a primary component).",
        MetricType::Gauge,
        |m| {
            members(s).try_for_each(|(labels, _, g)| {
                one_hot(m, labels, &STATES, state_name(g.status.state))
            })
        },
    )?;
    member_gauge(
        e,
        s,
        "rwtop_galera_primary_component",
        "1 while the member is in a primary component (it has quorum); 0 outside one, where its \
         tables refuse reads and writes (error 1047).",
        |_, g, _| Some(f64::from(flag(g.status.component == Component::Primary))),
    )?;
    member_gauge(
        e,
        s,
        "rwtop_galera_ready",
        "wsrep_ready: 1 while the member accepts queries.",
        |_, g, _| g.status.ready.map(|r| f64::from(flag(r))),
    )?;
    lag(e, s)?;
    member_gauge(
        e,
        s,
        "rwtop_galera_recv_queue",
        "Write-sets the member has received and not applied yet.",
        |_, g, _| g.status.recv_queue.map(float),
    )?;
    member_gauge(
        e,
        s,
        "rwtop_galera_send_queue",
        "Write-sets the member has yet to send.",
        |_, g, _| g.status.send_queue.map(float),
    )?;
    member_gauge(
        e,
        s,
        "rwtop_galera_writesets_behind",
        "Write-sets the member has committed fewer than the newest member of its cluster \
         (wsrep_last_committed); members are polled up to a poll apart, so a few under load are \
         skew.",
        |n, _, s| cluster_of(s, n)?.behind(n).map(float),
    )?;
    member_gauge(
        e,
        s,
        "rwtop_galera_flow_control_paused_ratio",
        "The share (0-1) of the last poll interval the member was paused by flow control, \
         whoever asked: every member reads as paused while one asks, so see \
         rwtop_galera_flow_control_sent_total for the sender.",
        |_, g, _| g.interval.and_then(|i| i.paused_share),
    )?;
    member_total(
        e,
        s,
        "rwtop_galera_flow_control_sent_total",
        "Pause requests the member sent (wsrep_flow_control_sent): its own backlog holding the \
         whole cluster's writes back.",
        |g| g.status.flow_control.sent,
    )?;
    member_total(
        e,
        s,
        "rwtop_galera_cert_failures_total",
        "Local transactions that failed certification (wsrep_local_cert_failures).",
        |g| g.status.cert_failures,
    )?;
    member_total(
        e,
        s,
        "rwtop_galera_bf_aborts_total",
        "Local transactions aborted by a replicated one (wsrep_local_bf_aborts).",
        |g| g.status.bf_aborts,
    )?;
    clusters(e, s)
}

/// A member's lag behind its cluster's writer, and how far to trust it.
fn lag(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    member_gauge(
        e,
        s,
        "rwtop_galera_lag_seconds",
        "A member's lag behind the member rwtop writes its cluster's heartbeat on, measured as \
         an async replica's. A lower bound while rwtop_galera_lag_state is at_least (outside the \
         primary component: it has applied nothing since its last complete reading); absent \
         while unknown.",
        |_, g, _| g.lag.value().map(|d| d.as_secs_f64()),
    )?;
    family(
        e,
        "rwtop_galera_lag_state",
        "How much rwtop_galera_lag_seconds can be trusted: 1 for exact, at_least or unknown.",
        MetricType::Gauge,
        |m| {
            members(s).try_for_each(|(labels, _, g)| {
                let state = match g.lag {
                    Lag::Exact { .. } => "exact",
                    Lag::AtLeast { .. } => "at_least",
                    Lag::Unknown { .. } => "unknown",
                };
                one_hot(m, labels, &LAG_STATES, state)
            })
        },
    )
}

/// Per cluster: its size against the members found, and a split.
fn clusters(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let each = |pick: fn(&ClusterView) -> Option<f64>| {
        move |m: &mut prometheus_client::encoding::MetricEncoder| {
            s.clusters.iter().try_for_each(|c| match pick(c) {
                Some(value) => gauge(m, &[("galera_cluster", c.name.as_str())], value),
                None => Ok(()),
            })
        }
    };
    family(
        e,
        "rwtop_galera_cluster_size",
        "The largest primary component's size, as its members report it.",
        MetricType::Gauge,
        each(|c| c.size.map(float)),
    )?;
    family(
        e,
        "rwtop_galera_cluster_expected_size",
        "The members rwtop found when it started: the size the cluster should have.",
        MetricType::Gauge,
        each(|c| Some(float(u64::try_from(c.expected_size).unwrap_or(u64::MAX)))),
    )?;
    family(
        e,
        "rwtop_galera_cluster_split",
        "1 while members in primary components disagree on the cluster's state UUID or \
         configuration: two components each taking writes.",
        MetricType::Gauge,
        each(|c| Some(f64::from(flag(c.split)))),
    )
}
