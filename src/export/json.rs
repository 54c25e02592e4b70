//! The JSON snapshot (`rwtop snapshot --json`): a documented, versioned schema of its own
//! (docs/json-schema.md), built from a [`Snapshot`] so the store can change without the output
//! changing under its consumers.

use serde::Serialize;

use crate::mysql::{IoRunning, ThreadError};
use crate::poll::ConnState;
use crate::store::lag::Lag;
use crate::store::windows::Window;
use crate::store::{NodeView, ReplicaView, Role, Snapshot};

/// Bumped on any change a consumer could notice; additions bump the minor part.
pub const SCHEMA_VERSION: &str = "1.15";

#[derive(Debug, Serialize)]
pub struct JsonSnapshot {
    pub schema_version: &'static str,
    pub taken_at: String,
    pub heartbeat: JsonHeartbeat,
    pub nodes: Vec<JsonNode>,
    /// Active alerts, critical first (docs/json-schema.md lists the kinds).
    pub alerts: Vec<JsonAlert>,
    /// Since 1.11: the active alerts grouped by root cause, active before recovering, critical
    /// first (docs/incidents.md).
    pub incidents: Vec<incidents::JsonIncident>,
    /// Raised and cleared events, newest first.
    pub alert_log: Vec<JsonLogEntry>,
    /// Since 1.6: the health lint's findings, errors first (`rwtop lint --json` prints the same).
    pub lint: Vec<crate::alerts::lint::LintFinding>,
    /// Test reads: what runs now, recent results and a tally per replica and strategy.
    pub probes: crate::probe::ProbesView,
    /// Drains: the configured backend, its view of each replica and rwtop's actions.
    pub drain: JsonDrain,
    /// Since 1.12: per root, what each replica would lose if the root died now, and the
    /// replica to promote (docs/failover-exposure.md).
    pub exposure: Vec<exposure::JsonExposure>,
    /// Since 1.13: per node, what this run needs that rwtop's account lacks (docs/grants.md).
    pub missing_grants: Vec<grants::JsonMissingGrant>,
    /// Since 1.15: each Galera cluster as one unit (docs/guide/galera.md).
    pub clusters: Vec<galera::JsonCluster>,
}

#[derive(Debug, Serialize)]
pub struct JsonAlert {
    pub kind: crate::alerts::AlertKind,
    pub node: Option<String>,
    /// The named channel it is about; `null` for a node's default channel or the node as a whole.
    pub channel: Option<String>,
    pub severity: crate::alerts::Severity,
    pub since: String,
    pub last_seen: String,
    pub count: u64,
    /// Named values, in the order the rule gives them.
    pub evidence: serde_json::Map<String, serde_json::Value>,
    pub cause: String,
    /// Since 1.11: the id of its incident (its root alert's key, as `incidents[].id`).
    pub incident: String,
    /// Since 1.11: the root alert's key (`kind:place`); `null` on the root itself.
    pub caused_by: Option<String>,
    /// Since 1.11: behind only because a node upstream is (folded from its source's incident).
    pub inherited: bool,
    /// Since 1.11: an after-effect that stays up while the replica is caught up again.
    pub recovering: bool,
}

/// One raise or clear; `channel` is always there (`null` as on an alert), unlike a recording's.
#[derive(Debug, Serialize)]
pub struct JsonLogEntry {
    pub at: chrono::DateTime<chrono::Utc>,
    pub raised: bool,
    pub kind: crate::alerts::AlertKind,
    pub node: Option<String>,
    pub channel: Option<String>,
    pub summary: String,
}

#[derive(Debug, Serialize)]
pub struct JsonDrain {
    pub backend: Option<String>,
    pub view_error: Option<String>,
    pub replicas: Vec<JsonDrainState>,
    /// Newest first.
    pub log: Vec<crate::drain::ActionRecord>,
}

#[derive(Debug, Serialize)]
pub struct JsonDrainState {
    pub replica: String,
    /// The load balancer's own word (`READY`, `DRAIN`, `MAINT`, `DOWN`, ...); `null` when it
    /// has not been read or does not list the replica.
    pub state: Option<String>,
    /// Drained by rwtop and not undrained since.
    pub drained_by_rwtop: bool,
    /// Whether rwtop's own routing skips it.
    pub skipped_by_routing: bool,
}

fn drain(s: &Snapshot) -> JsonDrain {
    let d = &s.drain;
    JsonDrain {
        backend: d.backend.clone(),
        view_error: d.view_error.clone(),
        replicas: s
            .nodes
            .iter()
            .filter(|n| n.role == Role::Replica)
            .map(|n| JsonDrainState {
                replica: n.name.clone(),
                state: d.states.get(&n.name).map(|st| st.label().to_owned()),
                drained_by_rwtop: d.drained.contains(&n.name),
                skipped_by_routing: d.is_drained(&n.name),
            })
            .collect(),
        log: d.log.clone(),
    }
}

fn alert(a: &crate::alerts::Alert) -> JsonAlert {
    JsonAlert {
        kind: a.kind,
        node: a.node.clone(),
        channel: a.channel.clone(),
        severity: a.severity,
        since: a.since.to_rfc3339(),
        last_seen: a.last_seen.to_rfc3339(),
        count: a.count,
        evidence: a
            .evidence
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect(),
        cause: a.cause.clone(),
        incident: a.membership.incident.clone(),
        caused_by: a.membership.caused_by.clone(),
        inherited: a.membership.inherited,
        recovering: a.membership.recovering,
    }
}

fn log_entry(e: &crate::alerts::LogEntry) -> JsonLogEntry {
    JsonLogEntry {
        at: e.at,
        raised: e.raised,
        kind: e.kind,
        node: e.node.clone(),
        channel: e.channel.clone(),
        summary: e.summary.clone(),
    }
}

#[derive(Debug, Serialize)]
pub struct JsonHeartbeat {
    pub interval_seconds: f64,
    /// How often each replica's heartbeat is read now (slower than configured past the read
    /// budget of a large topology); `null` when not known.
    pub read_every_seconds: Option<f64>,
    pub writer: String,
    pub writer_detail: Option<String>,
    /// The node written to: the configured primary, or the one that took over after a failover.
    pub writer_node: Option<String>,
    pub last_seq: Option<u64>,
    pub last_ack_age_seconds: Option<f64>,
    pub stale: bool,
    /// Since 1.9: every root's heartbeat (configured primaries, then roots found through a
    /// replica's channel), the one above first.
    pub roots: Vec<JsonRoot>,
}

/// One root's heartbeat row and its writer.
#[derive(Debug, Serialize)]
pub struct JsonRoot {
    pub node: Option<String>,
    /// Whether the root was named in the config or on the command line (`false`: found).
    pub configured: bool,
    pub writer_id: String,
    pub writer: &'static str,
    pub writer_detail: Option<String>,
    pub last_seq: Option<u64>,
    pub last_ack_age_seconds: Option<f64>,
    pub stale: bool,
}

#[derive(Debug, Serialize)]
pub struct JsonNode {
    pub name: String,
    pub address: String,
    pub role: Role,
    pub source: Option<String>,
    pub flavor: Option<String>,
    pub version: Option<String>,
    pub state: &'static str,
    pub state_detail: Option<String>,
    pub server_id: Option<u32>,
    pub read_only: Option<bool>,
    pub sample_age_seconds: Option<f64>,
    /// From the processlist: `{ "threads": 12, "active": 2, "longest_query_s": 41 }`.
    pub processes: Option<crate::mysql::ProcessSummary>,
    /// This server's clock minus rwtop's host clock, from query round trips.
    pub clock_offset_ms: Option<i64>,
    /// Schema changes running on this node.
    pub ddl: Vec<JsonDdl>,
    /// Online schema change runs on this node (a writable root), since 1.10.
    pub osc: Vec<osc::JsonOsc>,
    // Replica fields: null on a primary, and on a replica that does not answer now. They are
    // the default channel's (the first channel's when there is no default one), as in 1.3.
    pub io_running: Option<IoRunning>,
    pub sql_running: Option<bool>,
    pub seconds_behind_source: Option<u64>,
    pub heartbeat_lag_seconds: Option<JsonLag>,
    pub gtid_backlog: Option<JsonBacklog>,
    pub bytes_behind: Option<JsonBytes>,
    pub sql_delay: Option<u64>,
    pub last_io_error: Option<JsonError>,
    pub last_sql_error: Option<JsonError>,
    /// Every replication channel, in the server's order (since 1.4); empty on a node that
    /// replicates from nobody. Since 1.8 a node that does not answer now keeps the channels it
    /// last showed, each with its lag unknown and its live fields null.
    pub channels: Vec<JsonChannel>,
    /// Since 1.12: semi-sync on this node (`null` where neither plugin is loaded, or while the
    /// node does not answer).
    pub semisync: Option<semisync::JsonSemiSync>,
    /// Since 1.14: the node as a Galera member (`null` on any other node, or while it does not
    /// answer).
    pub galera: Option<galera::JsonGalera>,
    #[serde(flatten)]
    pub headroom: headroom::JsonNodeHeadroom,
}

/// One replication channel: a row of `SHOW ALL SLAVES STATUS` (`SHOW REPLICA STATUS` on `MySQL`)
/// with what rwtop measured of it.
#[derive(Debug, Serialize)]
pub struct JsonChannel {
    /// `''` is the default channel.
    pub channel: String,
    /// The node it replicates from, when rwtop polls that node.
    pub source: Option<String>,
    /// Where the source is, as the replica reports it (`host:port`).
    pub source_address: String,
    // The channel's live state: null (since 1.8) while its node does not answer.
    pub io_running: Option<IoRunning>,
    pub sql_running: Option<bool>,
    pub io_state: Option<String>,
    pub sql_state: Option<String>,
    pub seconds_behind_source: Option<u64>,
    pub heartbeat_lag_seconds: JsonLag,
    /// In a cascade, this hop's own share of the lag; null when its source is a root.
    pub hop_lag_seconds: Option<f64>,
    /// Since 1.11: the heartbeat lag in two parts, transport and apply.
    pub lag_split: lag_split::JsonLagSplit,
    pub gtid_backlog: JsonBacklog,
    pub bytes_behind: JsonBytes,
    pub received: Option<JsonPosition>,
    pub applied: Option<JsonPosition>,
    pub sql_delay: Option<u64>,
    pub sql_remaining_delay: Option<u64>,
    pub last_io_error: Option<JsonError>,
    pub last_sql_error: Option<JsonError>,
    /// The parallel appliers (`docs/design.md`, "Parallel appliers and catch-up").
    pub appliers: appliers::JsonAppliers,
    /// Apply rate against the source's, the lag's trend and the ETA.
    pub catch_up: catch_up::JsonCatchUp,
    /// Since 1.12: `relay_log` and `protection`.
    #[serde(flatten)]
    pub headroom: headroom::JsonChannelHeadroom,
}

/// A coordinate in the source's binlog.
#[derive(Debug, Serialize)]
pub struct JsonPosition {
    pub file: String,
    pub pos: u64,
}

#[derive(Debug, Serialize)]
pub struct JsonLag {
    /// `exact`, `at_least` (a lower bound) or `unknown` (then `now` is null and `reason` says why).
    pub kind: &'static str,
    pub now: Option<f64>,
    /// With `at_least`: the most it can be (the age of the row the replica shows).
    pub upper_bound: Option<f64>,
    pub reason: Option<String>,
    /// Over the last minute of exact readings; null before the first.
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
    pub windows: Vec<JsonWindow>,
}

#[derive(Debug, Serialize)]
pub struct JsonWindow {
    pub window: &'static str,
    pub samples: u64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Debug, Serialize)]
pub struct JsonBacklog {
    pub not_received: Option<u64>,
    pub not_applied: Option<u64>,
    pub total: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct JsonBytes {
    pub io: Option<u64>,
    pub sql: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct JsonDdl {
    pub statement: String,
    pub elapsed_seconds: u64,
    pub progress_percent: Option<f64>,
    /// Applied by replication (the SQL thread), not run by a client.
    pub applier: bool,
    /// The lock it waits for (`table metadata lock`, `backup lock`); null while it works.
    pub waiting_for_lock: Option<String>,
    /// Since 1.10: who holds that lock; null while it waits for none or until read.
    pub blocked_by: Option<holders::JsonBlockers>,
}

#[derive(Debug, Serialize)]
pub struct JsonError {
    pub errno: u32,
    pub message: String,
}

/// A window's name in every output: `1m`, `5m`, `15m`.
#[must_use]
pub fn window_label(window: Window) -> &'static str {
    window_name(window)
}

fn window_name(window: Window) -> &'static str {
    match window {
        Window::OneMinute => "1m",
        Window::FiveMinutes => "5m",
        Window::FifteenMinutes => "15m",
    }
}

fn error(e: Option<&ThreadError>) -> Option<JsonError> {
    e.map(|e| JsonError {
        errno: e.errno,
        message: e.message.clone(),
    })
}

fn state_detail(conn: &ConnState) -> Option<String> {
    match conn {
        ConnState::Retrying { cause, .. } | ConnState::Down { cause, .. } => Some(cause.clone()),
        ConnState::Connecting | ConnState::Up => None,
    }
}

pub(super) fn lag(
    lag: &Lag,
    windows: &[(Window, Option<crate::store::windows::WindowStats>)],
) -> JsonLag {
    let (kind, reason) = match lag {
        Lag::Exact { .. } => ("exact", None),
        Lag::AtLeast { .. } => ("at_least", None),
        Lag::Unknown { reason } => ("unknown", Some(reason.clone())),
    };
    let upper_bound = match lag {
        Lag::AtLeast { upper, .. } => upper.map(|u| u.as_secs_f64()),
        _ => None,
    };
    let windows: Vec<JsonWindow> = windows
        .iter()
        .filter_map(|(w, stats)| {
            stats.map(|s| JsonWindow {
                window: window_name(*w),
                samples: s.samples,
                p50: s.p50.as_secs_f64(),
                p99: s.p99.as_secs_f64(),
                max: s.max.as_secs_f64(),
            })
        })
        .collect();
    let minute = windows.iter().find(|w| w.window == "1m");
    JsonLag {
        kind,
        now: lag.value().map(|d| d.as_secs_f64()),
        upper_bound,
        reason,
        p50: minute.map(|w| w.p50),
        p99: minute.map(|w| w.p99),
        max: minute.map(|w| w.max),
        windows,
    }
}

fn backlog(r: &ReplicaView) -> JsonBacklog {
    JsonBacklog {
        not_received: r.gtid_backlog.not_received,
        not_applied: r.gtid_backlog.not_applied,
        total: r.gtid_backlog.total(),
    }
}

fn bytes(r: &ReplicaView) -> JsonBytes {
    JsonBytes {
        io: r.bytes_behind.io,
        sql: r.bytes_behind.sql,
    }
}

fn position(p: &crate::mysql::BinlogPos) -> JsonPosition {
    JsonPosition {
        file: p.file.clone(),
        pos: p.pos,
    }
}

/// One channel; `live` is false while its node does not answer (the view is then
/// [`ReplicaView::unanswered`], and its threads, states and positions are written null).
fn channel(r: &ReplicaView, live: bool, at: chrono::DateTime<chrono::Utc>) -> JsonChannel {
    JsonChannel {
        channel: r.channel.clone(),
        source: r.source.clone(),
        source_address: r.source_address.clone(),
        io_running: live.then_some(r.io_running),
        sql_running: live.then_some(r.sql_running),
        io_state: live.then(|| r.io_state.clone()),
        sql_state: live.then(|| r.sql_state.clone()),
        seconds_behind_source: r.seconds_behind_source,
        heartbeat_lag_seconds: lag(&r.heartbeat_lag, &r.windows),
        hop_lag_seconds: r.hop_lag.map(|d| d.as_secs_f64()),
        lag_split: lag_split::lag_split(&r.lag_split),
        gtid_backlog: backlog(r),
        bytes_behind: bytes(r),
        received: live.then(|| position(&r.received)),
        applied: live.then(|| position(&r.applied)),
        sql_delay: r.sql_delay,
        sql_remaining_delay: r.sql_remaining_delay,
        last_io_error: error(r.last_io_error.as_ref()),
        last_sql_error: error(r.last_sql_error.as_ref()),
        appliers: appliers::appliers(&r.appliers),
        catch_up: catch_up::catch_up(&r.catch_up),
        headroom: headroom::channel(r, at),
    }
}

fn node(n: &NodeView, at: chrono::DateTime<chrono::Utc>) -> JsonNode {
    // The node's own replica fields stay null while it does not answer, as before 1.8.
    let r = n.replica().filter(|_| n.answers());
    let unknown_lag = (n.role == Role::Replica && r.is_none()).then(|| JsonLag {
        kind: "unknown",
        now: None,
        upper_bound: None,
        reason: Some(if n.conn == ConnState::Up {
            "no replication configured on this node".to_owned()
        } else {
            format!("node is {}", n.conn.name())
        }),
        p50: None,
        p99: None,
        max: None,
        windows: Vec::new(),
    });
    JsonNode {
        name: n.name.clone(),
        address: n.address.clone(),
        role: n.role,
        source: n.source.clone(),
        flavor: n.identity.flavor_name(),
        version: n.identity.version().map(str::to_owned),
        state: n.conn.name(),
        state_detail: state_detail(&n.conn),
        server_id: n.identity.server_id,
        read_only: n.read_only(),
        sample_age_seconds: n.sample_age.map(|d| d.as_secs_f64()),
        processes: n.scan().map(|s| s.value.summary),
        clock_offset_ms: n.clock.map(|c| c.offset_ms),
        ddl: n
            .ddl()
            .iter()
            .map(|d| JsonDdl {
                statement: d.statement.clone(),
                elapsed_seconds: d.elapsed_s,
                progress_percent: d.progress,
                applier: d.applier,
                waiting_for_lock: d.waiting_for.clone(),
                blocked_by: d.blockers.as_ref().map(holders::blockers),
            })
            .collect(),
        osc: n.osc().iter().map(osc::osc).collect(),
        io_running: r.map(|r| r.io_running),
        sql_running: r.map(|r| r.sql_running),
        seconds_behind_source: r.and_then(|r| r.seconds_behind_source),
        heartbeat_lag_seconds: r.map(|r| lag(&r.heartbeat_lag, &r.windows)).or(unknown_lag),
        gtid_backlog: r.map(backlog),
        bytes_behind: r.map(bytes),
        sql_delay: r.and_then(|r| r.sql_delay),
        last_io_error: r.and_then(|r| error(r.last_io_error.as_ref())),
        last_sql_error: r.and_then(|r| error(r.last_sql_error.as_ref())),
        channels: headroom::channels(n, at),
        semisync: n.semisync().map(semisync::semisync),
        galera: n.galera().map(galera::galera),
        headroom: headroom::node(n),
    }
}

#[must_use]
pub fn from_snapshot(s: &Snapshot) -> JsonSnapshot {
    let (writer, writer_detail) = (s.heartbeat.writer.name(), s.heartbeat.writer.detail());
    JsonSnapshot {
        schema_version: SCHEMA_VERSION,
        taken_at: s.taken_at.to_rfc3339(),
        heartbeat: JsonHeartbeat {
            interval_seconds: s.heartbeat.interval.as_secs_f64(),
            read_every_seconds: s.heartbeat.read_every.map(|d| d.as_secs_f64()),
            writer: writer.to_owned(),
            writer_detail,
            writer_node: s.heartbeat.node.clone(),
            last_seq: s.heartbeat.last_seq,
            last_ack_age_seconds: s.heartbeat.last_ack_age.map(|d| d.as_secs_f64()),
            stale: s.heartbeat.stale,
            roots: s
                .heartbeat
                .roots
                .iter()
                .map(|root| JsonRoot {
                    configured: root
                        .node
                        .as_deref()
                        .and_then(|name| s.node(name))
                        .is_none_or(|n| n.configured),
                    node: root.node.clone(),
                    writer_id: root.writer_id.clone(),
                    writer: root.writer.name(),
                    writer_detail: root.writer.detail(),
                    last_seq: root.last_seq,
                    last_ack_age_seconds: root.last_ack_age.map(|d| d.as_secs_f64()),
                    stale: root.stale,
                })
                .collect(),
        },
        nodes: s.nodes.iter().map(|n| node(n, s.taken_at)).collect(),
        alerts: s.alerts.active.iter().map(alert).collect(),
        incidents: s.alerts.incidents.iter().map(incidents::incident).collect(),
        alert_log: s.alerts.log.iter().map(log_entry).collect(),
        lint: crate::alerts::lint::lint(s),
        probes: s.probes.clone(),
        drain: drain(s),
        exposure: s.exposure.iter().map(exposure::exposure).collect(),
        missing_grants: grants::missing(s),
        clusters: s.clusters.iter().map(|c| galera::cluster(c, s)).collect(),
    }
}

mod appliers;
mod catch_up;
mod exposure;
mod galera;
mod grants;
mod headroom;
mod holders;
mod incidents;
mod lag_split;
mod osc;
mod row_events;
mod semisync;
#[cfg(test)]
pub(crate) use semisync::example as semisync_example;
#[cfg(test)]
mod tests;
