//! The headroom families (`store/headroom.rs`, `store/protection.rs`): each channel's relay log
//! and its growth, each node's binlog write rate, and a delayed channel's protection window.
//! A figure rwtop cannot tell has no sample, never a 0.

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::replica::{replica_labels, views};
use super::{Fmt, family, gauge, one_hot};
use crate::store::Snapshot;
use crate::store::protection::ProtectionState;

const PROTECTION_STATES: [ProtectionState; 4] = [
    ProtectionState::Counting,
    ProtectionState::ApplierStopped,
    ProtectionState::ReceiverStopped,
    ProtectionState::Unknown,
];

pub(super) fn headroom(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_replica_relay_log_bytes",
        "Relay_Log_Space: the bytes of every relay log file of the channel, as last read.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.relay_growth.space {
                #[expect(clippy::cast_precision_loss, reason = "a gauge of bytes")]
                Some(bytes) => gauge(m, &replica_labels(n, r), bytes as f64),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_relay_log_growth_bytes_per_second",
        "Net growth of the channel's relay log per second over the last 30 s of polls \
         (negative while it shrinks); absent until the window holds 5 s of polls, or where the \
         server does not report Relay_Log_Space.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.relay_growth.bytes_per_s {
                Some(rate) => gauge(m, &replica_labels(n, r), rate),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_node_binlog_write_bytes_per_second",
        "Bytes the node wrote to its binlogs per second over the last 5 minutes, from its \
         binlog list (rotations and purges accounted for); only where rwtop reads the list (a \
         node a watched replica replicates from). Multiply by 3600 for bytes per hour.",
        MetricType::Gauge,
        |m| {
            s.nodes
                .iter()
                .try_for_each(|n| match n.binlog().rate.and_then(|b| b.bytes_per_s) {
                    Some(rate) => gauge(m, &[("node", n.name.as_str())], rate),
                    None => Ok(()),
                })
        },
    )?;
    family(
        e,
        "rwtop_replica_protection_window_seconds",
        "A delayed channel (SQL_Delay above 0) whose applier runs: seconds left to stop its SQL \
         thread before a statement committed on the primary now can be applied there (SQL_Delay \
         less two seconds, the soonest the server applies it, whatever the applier's lag). Absent without a delay, and while \
         the window cannot be told (see rwtop_replica_protection_state).",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.protection.and_then(|p| p.window) {
                Some(w) => gauge(m, &replica_labels(n, r), w.as_secs_f64()),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_replica_protection_data_timestamp_seconds",
        "A delayed channel: the primary time (Unix seconds) its applied data stands at, the \
         snapshot's time less the heartbeat lag. Absent while the lag is unknown.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| {
                match r.protection.and_then(|p| p.stands_at(s.taken_at)) {
                    #[expect(clippy::cast_precision_loss, reason = "milliseconds since 1970")]
                    Some(t) => gauge(
                        m,
                        &replica_labels(n, r),
                        t.timestamp_millis() as f64 / 1000.0,
                    ),
                    None => Ok(()),
                }
            })
        },
    )?;
    disks(e, s)?;
    let states = PROTECTION_STATES.map(ProtectionState::name);
    family(
        e,
        "rwtop_replica_protection_state",
        "A delayed channel: 1 for where its protection stands: counting (the window runs), \
         applier_stopped (nothing is applied until START SLAVE), receiver_stopped, or unknown.",
        MetricType::Gauge,
        |m| {
            views(s).try_for_each(|(n, r)| match r.protection {
                Some(p) => one_hot(m, replica_labels(n, r), &states, p.state.name()),
                None => Ok(()),
            })
        },
    )
}

/// The disks of the nodes whose disks are read (`[headroom] read_disks`).
fn disks(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let read = || s.nodes.iter().filter_map(|n| Some((n, n.disks()?)));
    family(
        e,
        "rwtop_node_disks_readable",
        "Where [headroom] read_disks is on: 1 when information_schema.DISKS answered, 0 when \
         it cannot be read (the disks plugin is not installed, or rwtop's user lacks FILE; the \
         JSON snapshot says which and the fix).",
        MetricType::Gauge,
        |m| {
            read().try_for_each(|(n, d)| {
                gauge(
                    m,
                    &[("node", n.name.as_str())],
                    super::flag(d.unavailable.is_none()),
                )
            })
        },
    )?;
    let each = || read().flat_map(|(n, d)| d.disks.iter().map(move |k| (n, k)));
    family(
        e,
        "rwtop_node_disk_available_bytes",
        "Free bytes of each disk holding one of the node's directories (datadir, binlog, relay \
         log, tmpdir), from information_schema.DISKS.",
        MetricType::Gauge,
        |m| {
            each().try_for_each(|(n, k)| {
                let labels = [("node", n.name.as_str()), ("path", k.path.as_str())];
                #[expect(clippy::cast_precision_loss, reason = "a gauge of bytes")]
                gauge(m, &labels, k.available as f64)
            })
        },
    )?;
    family(
        e,
        "rwtop_node_disk_full_in_seconds",
        "While an ALTER runs on the node or a relay log grows: seconds until the disk is full \
         at the rate it fills now. Absent when rwtop cannot tell, or the disk is not filling.",
        MetricType::Gauge,
        |m| {
            each().try_for_each(|(n, k)| match k.full_in {
                Some(eta) => {
                    let labels = [("node", n.name.as_str()), ("path", k.path.as_str())];
                    gauge(m, &labels, eta.as_secs_f64())
                }
                None => Ok(()),
            })
        },
    )
}
