//! What `sandbox up` built, kept in `sandbox.json` so `status`, `down` and a second `up` know it.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::SandboxError;
use super::layout::state_file;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub port: u16,
    pub server_id: u32,
    /// Name of the node this one replicates from on its default channel; `None` for a root
    /// (the primary, or a multi-source sandbox's second primary).
    pub source: Option<String>,
    /// More sources, each on a channel of its own (`MariaDB`'s named connections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<NamedChannel>,
    /// `MariaDB`'s `gtid_domain_id`: each writable root of a multi-source sandbox writes in a
    /// domain of its own, so a replica of both keeps one position per domain.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gtid_domain_id: u32,
    /// Server options of this node's own, one `name=value` line each, after the sandbox's:
    /// servers set up differently, as fleets that grew over years are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// A member of the sandbox's Galera cluster: the ports of its group communication, its
    /// incremental and its full state transfers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub galera: Option<GaleraPorts>,
}

/// A Galera member's ports besides its SQL port, all on 127.0.0.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GaleraPorts {
    /// Group communication (`gmcast.listen_addr`): the cluster's address lists these.
    pub gcomm: u16,
    /// Incremental state transfer (`ist.recv_addr`).
    pub ist: u16,
    /// Full state transfer, by mariadb-backup (`wsrep_sst_receive_address`).
    pub sst: u16,
}

/// A replication channel besides the default one: its name, and the node it replicates from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedChannel {
    pub name: String,
    pub source: String,
}

/// One replication link: `replica` replicates from `source` on `channel` (`""`: the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link<'a> {
    pub replica: &'a str,
    pub channel: &'a str,
    pub source: &'a str,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if signature"
)]
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxState {
    pub format: u32,
    /// `mariadb` or `mysql`, and the server's version when it was created.
    pub family: String,
    pub server_version: String,
    pub semisync: bool,
    /// Servers take TLS connections with the certificates in `tls/`.
    #[serde(default)]
    pub tls: bool,
    /// Parallel applier workers on every replica; 0 (and absent) for one applier thread.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parallel: u32,
    pub monitor_user: String,
    /// Replication account the replicas log in with (password in `repl.password`).
    pub repl_user: String,
    pub nodes: Vec<NodeSpec>,
}

impl SandboxState {
    pub const FORMAT: u32 = 1;

    pub fn load(dir: &Path) -> Result<Option<Self>, SandboxError> {
        let path = state_file(dir);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(SandboxError::io(format!("reading {}", path.display()), e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| SandboxError::BadState {
                path: path.display().to_string(),
                problem: e.to_string(),
            })
    }

    pub fn save(&self, dir: &Path) -> Result<(), SandboxError> {
        let path = state_file(dir);
        let text = serde_json::to_string_pretty(self).map_err(|e| SandboxError::BadState {
            path: path.display().to_string(),
            problem: e.to_string(),
        })?;
        fs::write(&path, text)
            .map_err(|e| SandboxError::io(format!("writing {}", path.display()), e))
    }

    /// The first root: the primary, which the accounts and rwtop's schema start from.
    #[must_use]
    pub fn primary(&self) -> Option<&NodeSpec> {
        self.roots().next()
    }

    /// The nodes that replicate from no one: the primary, then any second primary. Of a Galera
    /// cluster only its first member: the others get its writes (accounts included) from the
    /// cluster, not on their own.
    pub fn roots(&self) -> impl Iterator<Item = &NodeSpec> {
        let first_member = self.members().next().map(|m| m.name.as_str());
        self.nodes.iter().filter(move |n| {
            n.source.is_none() && (n.galera.is_none() || Some(n.name.as_str()) == first_member)
        })
    }

    /// The Galera cluster's members, in order: the first one bootstraps a new cluster.
    pub fn members(&self) -> impl Iterator<Item = &NodeSpec> {
        self.nodes.iter().filter(|n| n.galera.is_some())
    }

    pub fn replicas(&self) -> impl Iterator<Item = &NodeSpec> {
        self.nodes.iter().filter(|n| n.source.is_some())
    }

    /// Every replication link: each replica's default channel, then its named ones.
    pub fn links(&self) -> impl Iterator<Item = Link<'_>> {
        self.replicas().flat_map(|node| {
            let default = node.source.as_deref().map(|source| Link {
                replica: &node.name,
                channel: "",
                source,
            });
            let named = node.channels.iter().map(|c| Link {
                replica: &node.name,
                channel: &c.name,
                source: &c.source,
            });
            default.into_iter().chain(named)
        })
    }
}
