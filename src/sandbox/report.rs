//! What `rwtop sandbox status` shows: each node's process and GTID state, and each replication
//! channel it has.

use super::{NodeSpec, Sandbox, SandboxError};
use crate::mysql::{NodeState, ReplicaStatus};

/// One node as `status` sees it.
#[derive(Debug)]
pub struct NodeReport {
    pub spec: NodeSpec,
    pub pid: Option<i32>,
    pub state: Result<NodeState, SandboxError>,
    /// One per channel the sandbox set up on this node, the default channel first; none on a
    /// root.
    pub channels: Vec<ChannelReport>,
}

/// One replication channel of a node.
#[derive(Debug)]
pub struct ChannelReport {
    /// `""` for the default channel.
    pub channel: String,
    /// The node it replicates from.
    pub source: String,
    pub status: Result<ReplicaStatus, SandboxError>,
}

impl Sandbox {
    #[must_use]
    pub fn report(&self) -> Vec<NodeReport> {
        self.state
            .nodes
            .iter()
            .map(|node| {
                let dirs = self.node_dir(&node.name);
                let channels = self
                    .state
                    .links()
                    .filter(|l| l.replica == node.name)
                    .map(|link| ChannelReport {
                        channel: link.channel.to_owned(),
                        source: link.source.to_owned(),
                        status: self.configured_status(&node.name, link.channel),
                    })
                    .collect();
                NodeReport {
                    spec: node.clone(),
                    pid: super::process::live_pid(&dirs.pid_file, &dirs.cnf),
                    state: self.node_state(&node.name),
                    channels,
                }
            })
            .collect()
    }

    /// One channel's status, or why there is none.
    fn configured_status(&self, node: &str, channel: &str) -> Result<ReplicaStatus, SandboxError> {
        self.channel_status(node, channel)?
            .ok_or_else(|| SandboxError::Admin {
                node: node.to_owned(),
                sql: self.binaries.flavor.replica_status_sql().to_owned(),
                problem: if channel.is_empty() {
                    "no replication configured".to_owned()
                } else {
                    format!("no channel '{channel}' configured")
                },
            })
    }
}
