//! The semi-sync families (`store/semisync.rs`): per node whose source side is loaded, its state,
//! the acking replicas against those required, the timeout, the ACK wait per window and the
//! server's totals; per replica whose side is loaded, whether it acknowledges. A figure the
//! server did not report has no sample, never a 0.

use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use super::{Fmt, family, flag, gauge, node, one_hot};
use crate::store::semisync::{SemiSyncState, SemiSyncView};
use crate::store::windows::Window;
use crate::store::{NodeView, Snapshot};

const STATES: [&str; 4] = ["active", "fell_back", "off", "unknown"];

fn state_name(state: SemiSyncState) -> &'static str {
    match state {
        SemiSyncState::Active => "active",
        SemiSyncState::FellBack => "fell_back",
        SemiSyncState::Off => "off",
        SemiSyncState::Unknown => "unknown",
    }
}

/// The nodes whose source side is loaded, with their view.
fn sources(s: &Snapshot) -> impl Iterator<Item = (&NodeView, &SemiSyncView)> {
    s.nodes
        .iter()
        .filter_map(|n| Some((n, n.semisync().filter(|v| v.state.is_some())?)))
}

/// One gauge family of an optional figure of a source side.
fn figure(
    e: &mut DescriptorEncoder,
    s: &Snapshot,
    name: &'static str,
    help: &str,
    pick: fn(&SemiSyncView) -> Option<f64>,
) -> Fmt {
    family(e, name, help, MetricType::Gauge, |m| {
        sources(s).try_for_each(|(n, v)| match pick(v) {
            Some(value) => gauge(m, &node(n), value),
            None => Ok(()),
        })
    })
}

/// A server total, as a counter (it starts over when the server restarts).
fn total(m: &mut MetricEncoder, labels: &impl EncodeLabelSet, value: u64) -> Fmt {
    m.encode_family(labels)?
        .encode_counter::<NoLabelSet, _, u64>(&value, None)
}

fn totals(
    e: &mut DescriptorEncoder,
    s: &Snapshot,
    name: &'static str,
    help: &str,
    pick: fn(&SemiSyncView) -> Option<u64>,
) -> Fmt {
    family(e, name, help, MetricType::Counter, |m| {
        sources(s).try_for_each(|(n, v)| match pick(v) {
            Some(value) => total(m, &node(n), value),
            None => Ok(()),
        })
    })
}

#[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
fn float(n: u64) -> f64 {
    n as f64
}

pub(super) fn semisync(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_semisync_state",
        "Semi-sync on a node whose source side is loaded: 1 for its state (active: commits wait \
         for ACKs; fell_back: enabled but the server turned it off, commits are asynchronous; \
         off: not enabled; unknown).",
        MetricType::Gauge,
        |m| {
            sources(s).try_for_each(|(n, v)| {
                let state = v.state.map_or("unknown", state_name);
                one_hot(m, node(n), &STATES, state)
            })
        },
    )?;
    figure(
        e,
        s,
        "rwtop_semisync_acking_replicas",
        "Semi-sync replicas connected to the node now (Rpl_semi_sync_master_clients).",
        |v| v.clients.map(float),
    )?;
    figure(
        e,
        s,
        "rwtop_semisync_required_acks",
        "ACKs a commit waits for: rpl_semi_sync_source_wait_for_replica_count, or 1 on MariaDB, \
         which has no such setting.",
        |v| v.required_acks.map(float),
    )?;
    figure(
        e,
        s,
        "rwtop_semisync_timeout_seconds",
        "How long a commit waits for an ACK before the primary falls back to async.",
        |v| v.timeout.map(|d| d.as_secs_f64()),
    )?;
    figure(
        e,
        s,
        "rwtop_semisync_wait_sessions",
        "Sessions waiting for an ACK at the newest poll.",
        |v| v.wait_sessions.map(float),
    )?;
    figure(
        e,
        s,
        "rwtop_semisync_commits_without_ack_per_second",
        "Commits that got no ACK per second over the newest poll interval.",
        |v| v.interval.and_then(|i| i.no_ack_per_s()),
    )?;
    family(
        e,
        "rwtop_semisync_ack_wait_seconds",
        "Commit ACK wait over a window (1m, 5m, 15m): the quantile of the poll intervals' average \
         waits (the server keeps only totals, so one slow commit is averaged with its interval's \
         others); absent where no commit waited in the window.",
        MetricType::Gauge,
        |m| {
            sources(s).try_for_each(|(n, v)| {
                Window::ALL.iter().try_for_each(|w| {
                    let Some(stats) = v.window(*w) else {
                        return Ok(());
                    };
                    let window = crate::export::json::window_label(*w);
                    for (q, value) in [("0.5", stats.p50), ("0.99", stats.p99)] {
                        let labels = (node(n), [("window", window), ("quantile", q)]);
                        gauge(m, &labels, value.as_secs_f64())?;
                    }
                    Ok(())
                })
            })
        },
    )?;
    counts(e, s)
}

/// The server's totals, and the replica side.
fn counts(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    totals(
        e,
        s,
        "rwtop_semisync_commits_acked",
        "Commits a replica acknowledged, as the server counts them (Rpl_semi_sync_master_yes_tx).",
        |v| v.totals.yes_tx,
    )?;
    totals(
        e,
        s,
        "rwtop_semisync_commits_without_ack",
        "Commits that got no ACK, as the server counts them (Rpl_semi_sync_master_no_tx).",
        |v| v.totals.no_tx,
    )?;
    totals(
        e,
        s,
        "rwtop_semisync_fallbacks",
        "Times the server turned semi-sync off (Rpl_semi_sync_master_no_times).",
        |v| v.totals.no_times,
    )?;
    family(
        e,
        "rwtop_semisync_replica_active",
        "On a replica whose semi-sync side is loaded: 1 while its IO thread acknowledges what it \
         receives (Rpl_semi_sync_slave_status).",
        MetricType::Gauge,
        |m| {
            s.nodes
                .iter()
                .try_for_each(|n| match n.semisync().and_then(|v| v.replica_active) {
                    Some(active) => gauge(m, &node(n), flag(active)),
                    None => Ok(()),
                })
        },
    )
}
