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
    /// Name of the node this one replicates from; `None` for the primary.
    pub source: Option<String>,
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

    #[must_use]
    pub fn primary(&self) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.source.is_none())
    }

    pub fn replicas(&self) -> impl Iterator<Item = &NodeSpec> {
        self.nodes.iter().filter(|n| n.source.is_some())
    }
}
