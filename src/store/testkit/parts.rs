//! The parts of a synthetic node, set as a test needs them: its flavor, its live parts, the
//! processlist scan and online schema change runs (fresh or not against its newest sample),
//! its clock.

use super::{BASE_SEQ, mariadb_gtid};
use crate::store::{BinlogView, ClockView, LiveParts, NodeView, ProcessScan, Scanned};

/// The flavor a server of `version` (`@@version`) is detected as.
#[must_use]
pub fn flavor(version: &str) -> crate::mysql::Flavor {
    crate::mysql::Flavor::detect(version, "").unwrap_or_else(|e| panic!("{e}"))
}

/// What a testkit node reports while it answers: at `0-1-100`, scanned with its newest sample
/// with nothing running.
pub(super) fn answering(read_only: bool) -> LiveParts {
    LiveParts {
        read_only,
        gtid: mariadb_gtid("0-1-100"),
        scan: Some(Scanned {
            sample: BASE_SEQ,
            value: ProcessScan::default(),
        }),
        osc: None,
        binlog: BinlogView::default(),
        settings: None,
        semisync: None,
        disks: None,
        galera: None,
    }
}

/// The live parts of a node, to change: a node that had none (it did not answer) gets a
/// writable node's.
pub fn live(node: &mut NodeView) -> &mut LiveParts {
    node.live.get_or_insert_with(|| answering(false))
}

/// The schema changes `node`'s processlist scan shows, carried by its newest sample.
pub fn scan(node: &mut NodeView) -> &mut Vec<crate::mysql::DdlStatement> {
    let seq = node.sample_seq;
    let scan = live(node).scan.get_or_insert_with(|| Scanned {
        sample: seq,
        value: ProcessScan::default(),
    });
    scan.sample = seq;
    &mut scan.value.ddl
}

/// `node`'s newest sample carried no processlist scan: its scan is one sample older.
pub fn stale_scan(node: &mut NodeView) {
    let seq = node.sample_seq.saturating_sub(1);
    scan(node);
    if let Some(scan) = live(node).scan.as_mut() {
        scan.sample = seq;
    }
}

/// `node`'s newest sample carried its processlist scan.
pub fn fresh_scan(node: &mut NodeView) {
    scan(node);
}

/// `node`'s newest sample looked for online schema change runs and found `runs`.
pub fn set_osc(node: &mut NodeView, runs: Vec<crate::mysql::OscRun>) {
    let sample = node.sample_seq;
    live(node).osc = Some(Scanned {
        sample,
        value: runs,
    });
}

/// `node`'s clock is `offset_ms` off this host's, estimated with the error it had (none at
/// first).
pub fn set_clock(node: &mut NodeView, offset_ms: i64) {
    let error_ms = node.clock.map_or(0, |c| c.error_ms);
    node.clock = Some(ClockView {
        offset_ms,
        error_ms,
    });
}

/// A synced Galera member of a primary component of three, one poll interval read with nothing
/// paused: tests change what their case needs.
#[must_use]
pub fn galera_member() -> crate::store::galera::GaleraView {
    use crate::mysql::galera::{Component, FlowControl, GaleraStatus, MemberState};
    crate::store::galera::GaleraView {
        status: GaleraStatus {
            state: MemberState::Synced,
            state_comment: "Synced".to_owned(),
            ready: Some(true),
            connected: Some(true),
            component: Component::Primary,
            cluster_size: Some(3),
            conf_id: Some(3),
            cluster_uuid: "f8a72840-f280-11f1-a37c-4e9b18735d0b".to_owned(),
            incoming: Vec::new(),
            recv_queue: Some(0),
            send_queue: Some(0),
            last_committed: Some(10),
            cert_deps_distance: Some(1.2),
            applier_threads: Some(8),
            flow_control: FlowControl::default(),
            cert_failures: Some(0),
            bf_aborts: Some(0),
            desync_count: Some(0),
            repl_latency_avg_s: None,
        },
        interval: Some(crate::store::galera::GaleraInterval {
            ms: 1000,
            paused_share: Some(0.0),
            fc_sent: Some(0),
            cert_failures: Some(0),
            bf_aborts: Some(0),
        }),
        lag: crate::store::lag::Lag::Exact {
            lag: std::time::Duration::from_millis(120),
        },
        windows: Vec::new(),
    }
}
