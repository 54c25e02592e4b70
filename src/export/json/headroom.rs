//! A channel's `relay_log` and `protection` objects and a node's `binlog_rate` (since 1.12,
//! docs/json-schema.md): the store's headroom (`store/headroom.rs`) and a delayed replica's
//! protection window (`store/protection.rs`) as plain numbers, null where rwtop cannot tell.

use serde::Serialize;

use crate::store::disks::DisksView;
use crate::store::headroom::{BinlogRate, RelayGrowth};
use crate::store::protection::Protection;
use crate::store::{NodeView, ReplicaView};

/// A node's headroom fields (since 1.12), written among the node's own.
#[derive(Debug, Serialize)]
pub struct JsonNodeHeadroom {
    /// How fast the node writes its binlog, where rwtop reads its binlog list (a node a watched
    /// replica replicates from); null elsewhere.
    pub binlog_rate: Option<JsonBinlogRate>,
    /// The disks holding the node's directories, where `[headroom] read_disks` is on; null
    /// where they are not read.
    pub disks: Option<JsonDisks>,
}

/// A channel's headroom fields, written among the channel's own.
#[derive(Debug, Serialize)]
pub struct JsonChannelHeadroom {
    /// The relay log's size and growth.
    pub relay_log: JsonRelayLog,
    /// A delayed channel's protection window; null without a delay.
    pub protection: Option<JsonProtection>,
}

pub fn node(n: &NodeView) -> JsonNodeHeadroom {
    JsonNodeHeadroom {
        binlog_rate: n.binlog().rate.as_ref().map(binlog_rate),
        disks: n.disks().map(disks),
    }
}

pub fn channel(r: &ReplicaView, taken_at: chrono::DateTime<chrono::Utc>) -> JsonChannelHeadroom {
    JsonChannelHeadroom {
        relay_log: relay_log(&r.relay_growth),
        protection: r.protection.as_ref().map(|p| protection(p, taken_at)),
    }
}

/// The node's channels, each with the snapshot's time its protection window stands against.
pub fn channels(n: &NodeView, taken_at: chrono::DateTime<chrono::Utc>) -> Vec<super::JsonChannel> {
    let live = n.answers();
    n.channels
        .iter()
        .map(|r| super::channel(r, live, taken_at))
        .collect()
}

#[derive(Debug, Serialize)]
pub struct JsonRelayLog {
    /// `Relay_Log_Space` as last read.
    pub space_bytes: Option<u64>,
    /// Net growth over the window; negative while the relay log shrinks.
    pub growth_bytes_per_s: Option<f64>,
    pub growth_bytes_per_hour: Option<f64>,
    pub window_s: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct JsonBinlogRate {
    pub bytes_per_s: Option<f64>,
    pub bytes_per_hour: Option<f64>,
    pub window_s: Option<f64>,
    /// The binlog files the node keeps now, and their bytes together.
    pub files: usize,
    pub total_bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct JsonProtection {
    /// `counting`, `applier_stopped`, `receiver_stopped` or `unknown`.
    pub state: &'static str,
    pub sql_delay_s: u64,
    /// The primary time the applied data stands at (RFC 3339): the snapshot's time less the
    /// heartbeat lag.
    pub stands_at: Option<String>,
    pub behind_s: Option<f64>,
    /// `behind_s` is a lower bound.
    pub behind_at_least: bool,
    /// Seconds left to stop the applier before a statement committed now is applied; null
    /// unless `counting`.
    pub window_s: Option<f64>,
    /// `SQL_Remaining_Delay`.
    pub remaining_delay_s: Option<f64>,
}

fn rounded(value: Option<f64>) -> Option<f64> {
    value.map(|v| (v * 100.0).round() / 100.0)
}

pub fn relay_log(g: &RelayGrowth) -> JsonRelayLog {
    JsonRelayLog {
        space_bytes: g.space,
        growth_bytes_per_s: rounded(g.bytes_per_s),
        growth_bytes_per_hour: rounded(g.bytes_per_s.map(|r| r * 3600.0)),
        window_s: rounded(g.window.map(|w| w.as_secs_f64())),
    }
}

pub fn binlog_rate(b: &BinlogRate) -> JsonBinlogRate {
    JsonBinlogRate {
        bytes_per_s: rounded(b.bytes_per_s),
        bytes_per_hour: rounded(b.bytes_per_hour()),
        window_s: rounded(b.window.map(|w| w.as_secs_f64())),
        files: b.files,
        total_bytes: b.total,
    }
}

pub fn protection(p: &Protection, taken_at: chrono::DateTime<chrono::Utc>) -> JsonProtection {
    JsonProtection {
        state: p.state.name(),
        sql_delay_s: p.delay.as_secs(),
        stands_at: p
            .stands_at(taken_at)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        behind_s: rounded(p.behind.map(|d| d.as_secs_f64())),
        behind_at_least: p.behind_at_least,
        window_s: rounded(p.window.map(|d| d.as_secs_f64())),
        remaining_delay_s: p.remaining.map(|d| d.as_secs_f64()),
    }
}

/// A node's disks, where the operator opted in to reading them.
#[derive(Debug, Serialize)]
pub struct JsonDisks {
    /// Why they cannot be read, with the fix; null when they were.
    pub unavailable: Option<String>,
    /// `no_plugin`, `no_grant`, `refused` or `flavor`; null when read.
    pub unavailable_reason: Option<&'static str>,
    pub read_age_s: f64,
    pub read_took_ms: f64,
    pub disks: Vec<JsonDisk>,
}

#[derive(Debug, Serialize)]
pub struct JsonDisk {
    pub disk: String,
    pub path: String,
    pub total_bytes: u64,
    pub available_bytes: u64,
    /// The node's directories on it: `datadir`, `binlog`, `relay log`, `tmpdir`.
    pub holds: Vec<String>,
    pub fill_bytes_per_s: Option<f64>,
    /// Whether the rate is the disk's own (free space over the reads) or the logs' growth.
    pub rate_from_disk: bool,
    /// Null: cannot tell (nothing writes steadily, too few reads) or not filling.
    pub full_in_s: Option<f64>,
    /// What writes steadily now; empty when nothing does.
    pub why: String,
    /// What the node's relay logs and binlogs on it grow by; null when they do not grow.
    pub logs_bytes_per_s: Option<f64>,
    /// As the pane says it: `full in ~12m at 3.0 MiB/s`, `cannot tell when full: …`.
    pub outlook: String,
}

pub fn disks(d: &DisksView) -> JsonDisks {
    use crate::mysql::DisksUnavailable as U;
    JsonDisks {
        unavailable: d.unavailable.as_ref().map(U::text),
        unavailable_reason: d.unavailable.as_ref().map(|u| match u {
            U::NoPlugin => "no_plugin",
            U::NoGrant { .. } => "no_grant",
            U::Refused { .. } => "refused",
            U::Flavor => "flavor",
        }),
        read_age_s: (d.age.as_secs_f64() * 100.0).round() / 100.0,
        read_took_ms: (d.took.as_secs_f64() * 1e5).round() / 100.0,
        disks: d
            .disks
            .iter()
            .map(|k| JsonDisk {
                disk: k.disk.clone(),
                path: k.path.clone(),
                total_bytes: k.total,
                available_bytes: k.available,
                holds: k.holds.clone(),
                fill_bytes_per_s: rounded(k.fill_bytes_per_s),
                rate_from_disk: k.rate_from_disk,
                full_in_s: rounded(k.full_in.map(|e| e.as_secs_f64())),
                why: k.why.clone(),
                logs_bytes_per_s: rounded(k.logs_bytes_per_s),
                outlook: k.outlook(),
            })
            .collect(),
    }
}
