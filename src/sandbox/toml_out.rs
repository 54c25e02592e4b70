//! The ready-to-use `rwtop.toml` for a sandbox: node names and DSNs, and the password by file
//! reference (never inline).

use std::fmt::Write as _;
use std::fs;

use super::layout::{config_file, password_file};
use super::{NodeSpec, Sandbox, SandboxError, SandboxState};

#[must_use]
pub fn render(sandbox: &Sandbox) -> String {
    let state = sandbox.state();
    let mut out = format!(
        "# rwtop.toml for the sandbox in {dir}, written by `rwtop sandbox up`.\n\
         # The monitor password stays in a file readable only by you.\n\
         password_file = \"{password}\"\n",
        dir = sandbox.dir().display(),
        password = password_file(sandbox.dir()).display(),
    );
    if state.tls {
        let _ = write!(
            out,
            "# The servers offer TLS with the sandbox's own CA; rwtop checks the certificate.\n\
             ssl_mode = \"verify-identity\"\nssl_ca = \"{}\"\n",
            super::tls::ca(sandbox.dir()).display()
        );
    }
    // Every node that replicates from nobody is a root; several roots are `[[primary]]` each.
    // A Galera cluster is named by its first member alone: rwtop finds the others from it
    // (they are left as comments, for the reader).
    let roots = state.roots().count();
    for node in &state.nodes {
        let root = state.roots().any(|r| r.name == node.name);
        let table = match (node.source.is_none(), root, roots) {
            (true, false, _) => {
                let _ = write!(
                    out,
                    "\n# {name}: a member of the Galera cluster {cluster} with {first} \
                     (127.0.0.1:{port}); rwtop\n# finds it from {first}, and writes the \
                     cluster's heartbeat on {first} only.\n",
                    name = node.name,
                    cluster = super::CLUSTER_NAME,
                    first = state.primary().map_or("-", |p| p.name.as_str()),
                    port = node.port,
                );
                continue;
            }
            (true, true, 1) => "[primary]",
            (true, true, _) => "[[primary]]",
            (false, _, _) => "[[replicas]]",
        };
        let _ = write!(
            out,
            "\n{note}{table}\nname = \"{name}\"\ndsn = \"mysql://{user}@127.0.0.1:{port}\"\n",
            note = note(state, node),
            name = node.name,
            user = state.monitor_user,
            port = node.port,
        );
    }
    out
}

pub fn write(sandbox: &Sandbox) -> Result<(), SandboxError> {
    let path = config_file(sandbox.dir());
    fs::write(&path, render(sandbox))
        .map_err(|e| SandboxError::io(format!("writing {}", path.display()), e))
}

/// What the table of a node cannot say: a second root, and a node with several sources.
fn note(state: &SandboxState, node: &NodeSpec) -> String {
    if node.source.is_none() && state.primary() != Some(node) {
        return format!(
            "# {name}: a second primary (GTID domain {domain}), a root of its own: rwtop writes\n\
             # a heartbeat row on it too, and the channels it feeds read their lag from that row.\n",
            name = node.name,
            domain = node.gtid_domain_id,
        );
    }
    if node.channels.is_empty() {
        return String::new();
    }
    let named: Vec<String> = node
        .channels
        .iter()
        .map(|c| format!("from {} on channel '{}'", c.source, c.name))
        .collect();
    format!(
        "# {name}: replicates from {source} on the default channel and {named}.\n",
        name = node.name,
        source = node.source.as_deref().unwrap_or("-"),
        named = named.join(" and "),
    )
}
