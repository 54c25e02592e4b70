//! The Prometheus exposition of a [`Snapshot`] (`/metrics`, text format 0.0.4), encoded by the
//! official client (`prometheus-client`) from the snapshot a scrape finds: a scrape shows what
//! the TUI and the JSON show at that moment, nothing kept on the side.
//!
//! Conventions: `rwtop_` prefix, base units (`_seconds`, `_bytes`), `_total` on counters, and an
//! enum as one gauge per state (1 for the current one, 0 for the others), so a series does not
//! appear only when something goes wrong. What rwtop cannot tell is never a number: an unknown
//! heartbeat lag has no `rwtop_replica_heartbeat_lag_seconds` sample and says
//! `rwtop_replica_heartbeat_lag_state{state="unknown"} 1` instead. A NULL `Seconds_Behind_Master`
//! keeps every other series of the replica and sets `rwtop_replica_sbm_null` to 1:
//! `mysqld_exporter` drops the SBM series on NULL, which silences the alerts built on it exactly
//! when replication has stopped (`docs/design.md`, "Lessons from other monitors"). Every series
//! carries `cluster`, from the config, for one Prometheus watching several topologies
//! (`docs/design.md`, "Reports and the fleet").

use std::borrow::Cow;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeGaugeValue, EncodeLabelSet, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::alerts::AlertKind;
use crate::poll::ConnState;
use crate::store::{NodeView, Role, Snapshot};

mod appliers;
mod catch_up;
mod exposure;
mod galera;
mod headroom;
mod incidents;
mod osc;
mod replica;
mod semisync;
#[cfg(test)]
mod tests;
mod throttle;

/// `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Every alert kind, so `rwtop_alerts_active` has a series per kind even at 0.
const ALERT_KINDS: [AlertKind; 23] = [
    AlertKind::SbmUnderstatesLag,
    AlertKind::SbmOverstatesLag,
    AlertKind::IoThreadStopped,
    AlertKind::SqlThreadStopped,
    AlertKind::ReplicationError,
    AlertKind::HeartbeatStale,
    AlertKind::LagP99High,
    AlertKind::GtidBacklogHigh,
    AlertKind::ErrantTransactions,
    AlertKind::NodeDown,
    AlertKind::ClockSkew,
    AlertKind::TopologyChanged,
    AlertKind::WritableReplica,
    AlertKind::AllReplicasLagging,
    AlertKind::DdlInFlight,
    AlertKind::ReplicaNotRecovering,
    AlertKind::SemisyncFellBack,
    AlertKind::SemisyncAcksShort,
    AlertKind::SemisyncUnackedCommits,
    AlertKind::DiskFilling,
    AlertKind::GaleraNotPrimary,
    AlertKind::GaleraNotSynced,
    AlertKind::GaleraFlowControl,
];

const WRITER_STATES: [&str; 5] = ["starting", "writing", "observing", "refused", "failing"];
const CONN_STATES: [&str; 4] = ["connecting", "up", "retrying", "down"];

type Fmt = Result<(), std::fmt::Error>;

const NO_LABELS: [(&str, &str); 0] = [];

/// The exposition text of one snapshot, every series labelled `cluster` (`[metrics] cluster`),
/// so several rwtops feed one Prometheus and their series never collide.
#[must_use]
pub fn render(snapshot: &Arc<Snapshot>, cluster: &str) -> String {
    render_with(snapshot, cluster, None)
}

/// [`render`] with `rwtop_throttle`, the verdict `GET /throttle` gives with the configured
/// settings (`throttle.rs`).
#[must_use]
pub fn render_with_throttle(
    snapshot: &Arc<Snapshot>,
    cluster: &str,
    verdict: &crate::alerts::throttle::Throttle,
) -> String {
    render_with(
        snapshot,
        cluster,
        Some(Box::new(throttle::ThrottleCollector::new(verdict))),
    )
}

fn render_with(
    snapshot: &Arc<Snapshot>,
    cluster: &str,
    extra: Option<Box<dyn Collector>>,
) -> String {
    let mut registry = Registry::with_labels(std::iter::once((
        Cow::Borrowed("cluster"),
        Cow::Owned(cluster.to_owned()),
    )));
    registry.register_collector(Box::new(SnapshotCollector(Arc::clone(snapshot))));
    if let Some(extra) = extra {
        registry.register_collector(extra);
    }
    // About 2.5 KiB per replication channel; growing the buffer costs more than guessing high.
    let places: usize = snapshot.nodes.iter().map(|n| n.channels.len().max(1)).sum();
    let mut text = String::with_capacity(8192 + places * 3072);
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
        .expect("encoding into a String cannot fail");
    text
}

/// Encodes its snapshot on each scrape, as a `prometheus-client` collector.
#[derive(Debug)]
struct SnapshotCollector(Arc<Snapshot>);

impl Collector for SnapshotCollector {
    fn encode(&self, mut e: DescriptorEncoder) -> Fmt {
        let s = &self.0;
        process(&mut e, s)?;
        heartbeat(&mut e, s)?;
        nodes(&mut e, s)?;
        replica::lag(&mut e, s)?;
        replica::split(&mut e, s)?;
        replica::threads(&mut e, s)?;
        replica::progress(&mut e, s)?;
        replica::drains(&mut e, s)?;
        appliers::appliers(&mut e, s)?;
        catch_up::catch_up(&mut e, s)?;
        exposure::exposure(&mut e, s)?;
        headroom::headroom(&mut e, s)?;
        osc::osc(&mut e, s)?;
        semisync::semisync(&mut e, s)?;
        galera::galera(&mut e, s)?;
        alerts(&mut e, s)?;
        incidents::incidents(&mut e, s)?;
        lint(&mut e, s)?;
        probes(&mut e, s)
    }
}

/// One family: its `# HELP` and `# TYPE` lines, then whatever samples `body` writes.
fn family(
    e: &mut DescriptorEncoder,
    name: &'static str,
    help: &str,
    kind: MetricType,
    body: impl FnOnce(&mut MetricEncoder) -> Fmt,
) -> Fmt {
    let mut m = e.encode_descriptor(name, help, None, kind)?;
    body(&mut m)
}

fn gauge(
    m: &mut MetricEncoder,
    labels: &impl EncodeLabelSet,
    value: impl EncodeGaugeValue + Copy,
) -> Fmt {
    m.encode_family(labels)?.encode_gauge(&value)
}

fn counter(m: &mut MetricEncoder, labels: &impl EncodeLabelSet, value: u32) -> Fmt {
    m.encode_family(labels)?
        .encode_counter::<NoLabelSet, _, u64>(&u64::from(value), None)
}

/// One sample per state, 1 for `current` and 0 for the others.
fn one_hot<L: EncodeLabelSet + Copy>(
    m: &mut MetricEncoder,
    labels: L,
    states: &[&'static str],
    current: &str,
) -> Fmt {
    for state in states {
        gauge(m, &(labels, [("state", *state)]), flag(*state == current))?;
    }
    Ok(())
}

fn flag(value: bool) -> u32 {
    u32::from(value)
}

fn unix_seconds(at: chrono::DateTime<chrono::Utc>) -> f64 {
    // Milliseconds are all a scrape needs; an i64 of them is exact in an f64 for 285 000 years.
    #[expect(clippy::cast_precision_loss, reason = "see above")]
    let ms = at.timestamp_millis() as f64;
    ms / 1000.0
}

fn process(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_build_info",
        "rwtop's version; always 1.",
        MetricType::Gauge,
        |m| gauge(m, &[("version", env!("CARGO_PKG_VERSION"))], 1),
    )?;
    family(
        e,
        "rwtop_snapshot_timestamp_seconds",
        "When the snapshot these figures come from was taken (Unix time); rwtop publishes one \
         every 250 ms while anything changes.",
        MetricType::Gauge,
        |m| gauge(m, &NO_LABELS, unix_seconds(s.taken_at)),
    )?;
    let started = s.taken_at
        - chrono::Duration::from_std(s.uptime).unwrap_or_else(|_| chrono::Duration::zero());
    family(
        e,
        "rwtop_start_time_seconds",
        "When rwtop started watching (Unix time); its counters and histograms start at 0 then.",
        MetricType::Gauge,
        |m| gauge(m, &NO_LABELS, unix_seconds(started)),
    )
}

fn heartbeat(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let hb = &s.heartbeat;
    let writer = hb.writer.name();
    let none = NO_LABELS;
    family(
        e,
        "rwtop_heartbeat_writer_state",
        "The heartbeat writer on the primary: 1 for its current state (writing: this rwtop \
         writes; observing: another rwtop writes, this one times the row; refused: read-only, or its \
         table is not rwtop's; \
         failing: writes fail).",
        MetricType::Gauge,
        |m| one_hot(m, none, &WRITER_STATES, writer),
    )?;
    family(
        e,
        "rwtop_heartbeat_stale",
        "1 when the heartbeat stopped advancing on the primary: every caught-up lag is unknown.",
        MetricType::Gauge,
        |m| gauge(m, &none, flag(hb.stale)),
    )?;
    family(
        e,
        "rwtop_heartbeat_last_ack_age_seconds",
        "Time since the primary last acknowledged a heartbeat; absent before the first.",
        MetricType::Gauge,
        |m| match hb.last_ack_age {
            Some(age) => gauge(m, &none, age.as_secs_f64()),
            None => Ok(()),
        },
    )?;
    family(
        e,
        "rwtop_heartbeat_sequence",
        "The newest heartbeat sequence number acknowledged on the primary; absent before the \
         first.",
        MetricType::Gauge,
        |m| match hb.last_seq {
            Some(seq) => gauge(m, &none, seq),
            None => Ok(()),
        },
    )
}

fn nodes(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_node_info",
        "One per watched node, always 1: its role, address, flavor and version.",
        MetricType::Gauge,
        |m| {
            for n in &s.nodes {
                let role = match n.role {
                    Role::Primary => "primary",
                    Role::Replica => "replica",
                    Role::Member => "member",
                };
                let flavor = n.identity.flavor_name();
                let labels = [
                    ("node", n.name.as_str()),
                    ("role", role),
                    ("address", n.address.as_str()),
                    ("flavor", flavor.as_deref().unwrap_or("")),
                    ("version", n.identity.version().unwrap_or("")),
                ];
                gauge(m, &labels, 1)?;
            }
            Ok(())
        },
    )?;
    family(
        e,
        "rwtop_node_up",
        "1 while rwtop's connection to the node answers, 0 while it connects or retries.",
        MetricType::Gauge,
        |m| {
            s.nodes
                .iter()
                .try_for_each(|n| gauge(m, &node(n), flag(n.conn == ConnState::Up)))
        },
    )?;
    family(
        e,
        "rwtop_node_connection_state",
        "rwtop's connection to the node: 1 for its current state (retrying: the last attempt \
         failed; down: failing repeatedly, still retrying).",
        MetricType::Gauge,
        |m| {
            s.nodes
                .iter()
                .try_for_each(|n| one_hot(m, node(n), &CONN_STATES, n.conn.name()))
        },
    )?;
    family(
        e,
        "rwtop_node_read_only",
        "The node's read_only setting (1 on); absent while it does not answer.",
        MetricType::Gauge,
        |m| {
            s.nodes.iter().try_for_each(|n| match n.read_only() {
                Some(ro) => gauge(m, &node(n), flag(ro)),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_node_sample_age_seconds",
        "Age of the node's newest status sample: the replica figures are that old.",
        MetricType::Gauge,
        |m| {
            s.nodes.iter().try_for_each(|n| match n.sample_age {
                Some(age) => gauge(m, &node(n), age.as_secs_f64()),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_node_clock_offset_seconds",
        "The node's clock minus rwtop's host clock, estimated from query round trips (heartbeat \
         lag does not depend on it).",
        MetricType::Gauge,
        |m| {
            s.nodes
                .iter()
                .try_for_each(|n| match n.clock.map(|c| c.offset_ms) {
                    #[expect(clippy::cast_precision_loss, reason = "offsets are far below 2^52 ms")]
                    Some(ms) => gauge(m, &node(n), ms as f64 / 1000.0),
                    None => Ok(()),
                })
        },
    )
}

fn node(n: &NodeView) -> [(&'static str, &str); 1] {
    [("node", n.name.as_str())]
}

fn alerts(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_alerts_active",
        "Alerts raised and not cleared, by kind (every kind, 0 when none).",
        MetricType::Gauge,
        |m| {
            ALERT_KINDS.iter().try_for_each(|kind| {
                let count = s.alerts.active.iter().filter(|a| a.kind == *kind).count();
                let labels = [("kind", kind.name()), ("severity", severity(*kind))];
                gauge(m, &labels, count)
            })
        },
    )?;
    family(
        e,
        "rwtop_alert_active_since_timestamp_seconds",
        "One per active alert: when its condition was first seen (Unix time). node is empty for \
         alerts about the whole topology, channel for those about a node or its default channel.",
        MetricType::Gauge,
        |m| {
            s.alerts.active.iter().try_for_each(|a| {
                let labels = [
                    ("kind", a.kind.name()),
                    ("severity", severity(a.kind)),
                    ("node", a.node.as_deref().unwrap_or("")),
                    ("channel", a.channel.as_deref().unwrap_or("")),
                ];
                gauge(m, &labels, unix_seconds(a.since))
            })
        },
    )
}

/// One series per health-lint finding (`rwtop lint`), always 1: a fixed finding's series goes.
fn lint(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let findings = crate::alerts::lint::lint(s);
    family(
        e,
        "rwtop_lint_finding",
        "A health-lint finding (rwtop lint): id, severity (error, warning, info), node, channel",
        MetricType::Gauge,
        |m| {
            findings.iter().try_for_each(|f| {
                let labels = [
                    ("id", f.id),
                    ("severity", f.severity.name()),
                    ("node", f.node.as_str()),
                    ("channel", f.channel.as_deref().unwrap_or("")),
                ];
                gauge(m, &labels, 1)
            })
        },
    )
}

fn severity(kind: AlertKind) -> &'static str {
    match kind.severity() {
        crate::alerts::Severity::Warning => "warning",
        crate::alerts::Severity::Critical => "critical",
    }
}

fn probes(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let tallies = &s.probes.tallies;
    let strategies: Vec<String> = tallies.iter().map(|t| t.strategy.to_string()).collect();
    let labels = |i: usize| {
        [
            ("replica", tallies[i].replica.as_str()),
            ("strategy", strategies[i].as_str()),
        ]
    };
    family(
        e,
        "rwtop_probe_outcomes",
        "Test reads since rwtop started by replica, strategy and outcome: fresh (saw the write), \
         stale (missed it), fell_back (read the primary instead), error.",
        MetricType::Counter,
        |m| {
            tallies.iter().enumerate().try_for_each(|(i, t)| {
                for (outcome, count) in [
                    ("fresh", t.fresh),
                    ("stale", t.stale),
                    ("fell_back", t.fell_back),
                    ("error", t.errors),
                ] {
                    counter(m, &(labels(i), [("outcome", outcome)]), count)?;
                }
                Ok(())
            })
        },
    )?;
    family(
        e,
        "rwtop_probe_primary_reads",
        "Reads the primary served for test reads: the load each strategy costs it.",
        MetricType::Counter,
        |m| (0..tallies.len()).try_for_each(|i| counter(m, &labels(i), tallies[i].primary_reads)),
    )?;
    family(
        e,
        "rwtop_probe_queries",
        "Statements test reads sent (the write and the reads included).",
        MetricType::Counter,
        |m| (0..tallies.len()).try_for_each(|i| counter(m, &labels(i), tallies[i].queries)),
    )
}
