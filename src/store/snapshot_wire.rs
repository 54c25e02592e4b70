//! How a [`NodeView`] is read back from a recording or a stored snapshot: today's layout, made
//! of parts, and the flat one every recording before format 2 holds (one field per fact, the
//! only-while-answering ones each on its own). Both are read into the same view; only today's
//! is written.

use std::time::Duration;

use serde::Deserialize;

use super::node_parts::{BinlogView, ClockView, LiveParts, ProcessScan, Scanned, ServerIdentity};
use super::snapshot::{NodeView, ReplicaView, Role};
use crate::mysql::{
    BinlogFile, BinlogPos, DdlStatement, Flavor, GtidState, OscRun, ProcessSummary, SafetySettings,
};
use crate::poll::ConnState;

/// Every field of either layout: today's parts, and the flat fields of format 1.
#[derive(Deserialize)]
pub(super) struct NodeViewWire {
    name: String,
    address: String,
    role: Role,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    configured: bool,
    conn: ConnState,
    #[serde(default)]
    sample_seq: u64,
    #[serde(default)]
    sample_age: Option<Duration>,
    #[serde(default)]
    lb: Option<String>,
    #[serde(default)]
    last_gtid: Option<GtidState>,
    #[serde(default)]
    missing_grants: Vec<crate::mysql::grants::MissingGrant>,
    /// Recordings before schema 1.4 held one channel under `replica`.
    #[serde(alias = "replica", deserialize_with = "one_or_many", default)]
    channels: Vec<ReplicaView>,
    // Today's parts.
    #[serde(default)]
    identity: Option<ServerIdentity>,
    #[serde(default)]
    clock: Option<ClockView>,
    #[serde(default)]
    live: Option<LiveParts>,
    // Format 1's flat fields.
    #[serde(flatten)]
    flat: FlatV1,
}

/// Format 1's fields that today's layout holds in parts.
#[derive(Deserialize, Default)]
#[serde(default)]
struct FlatV1 {
    /// `MariaDB 10.11.19`: the family and version as displayed.
    flavor: Option<String>,
    /// `@@version`.
    version: Option<String>,
    server_id: Option<u32>,
    server_uuid: Option<String>,
    clock_offset_ms: Option<i64>,
    clock_error_ms: Option<i64>,
    read_only: Option<bool>,
    gtid: Option<GtidState>,
    processes: Option<ProcessSummary>,
    ddl: Vec<DdlStatement>,
    processes_fresh: bool,
    osc: Vec<OscRun>,
    osc_fresh: bool,
    settings: Option<SafetySettings>,
    binlog_head: Option<BinlogPos>,
    binlog_files: Vec<BinlogFile>,
    semisync: Option<super::semisync::SemiSyncView>,
    binlog_rate: Option<super::headroom::BinlogRate>,
    disks: Option<super::disks::DisksView>,
}

impl From<NodeViewWire> for NodeView {
    fn from(wire: NodeViewWire) -> Self {
        let flat = wire.flat;
        let seq = wire.sample_seq;
        let identity = wire.identity.unwrap_or_else(|| ServerIdentity {
            flavor: flat.version.as_deref().and_then(|version| {
                Flavor::detect(version, flat.flavor.as_deref().unwrap_or_default()).ok()
            }),
            server_id: flat.server_id,
            server_uuid: flat.server_uuid,
        });
        let clock = wire.clock.or_else(|| {
            Some(ClockView {
                offset_ms: flat.clock_offset_ms?,
                error_ms: flat.clock_error_ms.unwrap_or(0),
            })
        });
        // Format 1 wrote the live values one by one, each absent while the node did not answer;
        // its GTID state was there exactly while it answered and had a sample.
        let live = wire.live.or_else(|| {
            Some(LiveParts {
                read_only: flat.read_only.unwrap_or(false),
                gtid: flat.gtid?,
                // A fresh scan was carried by the newest sample; a stale one by an older one.
                scan: flat.processes.map(|summary| Scanned {
                    sample: if flat.processes_fresh {
                        seq
                    } else {
                        seq.saturating_sub(1)
                    },
                    value: ProcessScan {
                        summary,
                        ddl: flat.ddl,
                    },
                }),
                osc: (flat.osc_fresh || !flat.osc.is_empty()).then(|| Scanned {
                    sample: if flat.osc_fresh {
                        seq
                    } else {
                        seq.saturating_sub(1)
                    },
                    value: flat.osc,
                }),
                binlog: BinlogView {
                    head: flat.binlog_head,
                    files: flat.binlog_files,
                    rate: flat.binlog_rate,
                },
                settings: flat.settings,
                semisync: flat.semisync,
                disks: flat.disks,
                // Format 1 predates Galera.
                galera: None,
            })
        });
        Self {
            name: wire.name,
            address: wire.address,
            role: wire.role,
            source: wire.source,
            configured: wire.configured,
            conn: wire.conn,
            identity,
            sample_seq: seq,
            sample_age: wire.sample_age,
            clock,
            lb: wire.lb,
            last_gtid: wire.last_gtid,
            missing_grants: wire.missing_grants,
            channels: wire.channels,
            live,
        }
    }
}

/// A recording's `replica` (one channel or null, schema ≤ 1.3) or `channels` (a list).
fn one_or_many<'de, D>(deserializer: D) -> Result<Vec<ReplicaView>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<ReplicaView>),
        One(Box<ReplicaView>),
    }
    Ok(match Option::<OneOrMany>::deserialize(deserializer)? {
        None => Vec::new(),
        Some(OneOrMany::Many(channels)) => channels,
        Some(OneOrMany::One(channel)) => vec![*channel],
    })
}
