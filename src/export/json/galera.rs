//! A node's `galera` object (docs/json-schema.md, since 1.14): the member's state and
//! component, the cluster as it sees it, its queues, what its counters did in the last
//! interval between two polls, and (since 1.15) its lag behind the member rwtop writes the
//! cluster's heartbeat on. `null` on a node that is no member, or while it does not answer;
//! every figure the server did not report is `null`, never 0. And the top-level `clusters`
//! (since 1.15): each cluster as one unit.

use serde::Serialize;

use super::JsonLag;
use crate::mysql::galera::{Component, MemberState};
use crate::store::Snapshot;
use crate::store::cluster::ClusterView;
use crate::store::galera::GaleraView;

#[derive(Debug, Serialize)]
pub struct JsonCluster {
    /// `wsrep_cluster_name`.
    pub name: String,
    /// Every member found when rwtop started, in display order.
    pub members: Vec<String>,
    /// The member rwtop writes the cluster's heartbeat on; `null` when it writes none there.
    pub writer: Option<String>,
    pub expected_size: usize,
    /// The largest primary component's size as its members report it.
    pub size: Option<u64>,
    pub in_primary: Vec<String>,
    pub outside_primary: Vec<String>,
    pub not_answering: Vec<String>,
    pub split: bool,
    pub newest_committed: Option<u64>,
    /// Per member, in `members`' order: write-sets committed fewer than the newest member
    /// (`null` when unknown). Polls of different members are up to a poll apart, so a few
    /// under load are skew, not lag.
    pub behind_writesets: Vec<Option<u64>>,
}

pub fn cluster(view: &ClusterView, s: &Snapshot) -> JsonCluster {
    JsonCluster {
        name: view.name.clone(),
        members: view.members.clone(),
        writer: view.writer.clone(),
        expected_size: view.expected_size,
        size: view.size,
        in_primary: view.in_primary.clone(),
        outside_primary: view.outside.clone(),
        not_answering: view.silent.clone(),
        split: view.split,
        newest_committed: view.newest_committed,
        behind_writesets: view
            .members
            .iter()
            .map(|m| s.node(m).and_then(|n| view.behind(n)))
            .collect(),
    }
}

#[derive(Debug, Serialize)]
pub struct JsonGalera {
    /// `synced`, `donor` (donor or desynced), `joining`, `joined`, `initialized` or `other`.
    pub state: MemberState,
    /// The server's own words (`Donor/Desynced`).
    pub state_comment: String,
    pub ready: Option<bool>,
    pub connected: Option<bool>,
    /// `primary`, `non_primary`, `disconnected` or `other`.
    pub component: Component,
    pub cluster_size: Option<u64>,
    pub conf_id: Option<u64>,
    pub cluster_uuid: String,
    pub incoming_addresses: Vec<String>,
    pub recv_queue: Option<u64>,
    pub send_queue: Option<u64>,
    pub last_committed: Option<u64>,
    pub cert_deps_distance: Option<f64>,
    pub applier_threads: Option<u64>,
    pub flow_control_active: Option<bool>,
    pub flow_control_requested: Option<bool>,
    pub desync_count: Option<u64>,
    pub repl_latency_avg_seconds: Option<f64>,
    /// The newest poll interval; `null` before two polls.
    pub interval: Option<JsonGaleraInterval>,
    /// Since 1.15: behind the member rwtop writes the cluster's heartbeat on, as a replica's
    /// `heartbeat_lag_seconds`. `at_least` while the member is out of the primary component
    /// (its tables refuse reads): behind by at least the time since its last complete reading.
    pub lag_seconds: JsonLag,
}

#[derive(Debug, Serialize)]
pub struct JsonGaleraInterval {
    pub seconds: f64,
    pub paused_share: Option<f64>,
    pub flow_control_sent: Option<u64>,
    pub cert_failures: Option<u64>,
    pub bf_aborts: Option<u64>,
}

pub fn galera(view: &GaleraView) -> JsonGalera {
    let g = &view.status;
    JsonGalera {
        state: g.state,
        state_comment: g.state_comment.clone(),
        ready: g.ready,
        connected: g.connected,
        component: g.component,
        cluster_size: g.cluster_size,
        conf_id: g.conf_id,
        cluster_uuid: g.cluster_uuid.clone(),
        incoming_addresses: g.incoming.clone(),
        recv_queue: g.recv_queue,
        send_queue: g.send_queue,
        last_committed: g.last_committed,
        cert_deps_distance: g.cert_deps_distance,
        applier_threads: g.applier_threads,
        flow_control_active: g.flow_control.active,
        flow_control_requested: g.flow_control.requested,
        desync_count: g.desync_count,
        repl_latency_avg_seconds: g.repl_latency_avg_s,
        interval: view.interval.map(|i| JsonGaleraInterval {
            #[expect(
                clippy::cast_precision_loss,
                reason = "milliseconds of a poll interval are far below 2^52"
            )]
            seconds: i.ms as f64 / 1000.0,
            paused_share: i.paused_share,
            flow_control_sent: i.fc_sent,
            cert_failures: i.cert_failures,
            bf_aborts: i.bf_aborts,
        }),
        lag_seconds: super::lag(&view.lag, &view.windows),
    }
}

/// A desynced member with a last interval, for the schema test.
#[cfg(test)]
pub(crate) fn example() -> GaleraView {
    let mut g = crate::store::testkit::galera_member();
    g.status.state = MemberState::Donor;
    "Donor/Desynced".clone_into(&mut g.status.state_comment);
    g.status.incoming = vec!["127.0.0.1:14306".to_owned(), "127.0.0.1:14307".to_owned()];
    g.status.recv_queue = Some(58);
    g.status.desync_count = Some(1);
    g.status.repl_latency_avg_s = Some(0.000_2);
    g
}
