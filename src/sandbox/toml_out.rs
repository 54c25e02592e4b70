//! The ready-to-use `rwtop.toml` for a sandbox: node names and DSNs, and the password by file
//! reference (never inline).

use std::fmt::Write as _;
use std::fs;

use super::layout::{config_file, password_file};
use super::{Sandbox, SandboxError};

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
    for node in &state.nodes {
        let table = if node.source.is_none() {
            "[primary]"
        } else {
            "[[replicas]]"
        };
        let _ = write!(
            out,
            "\n{table}\nname = \"{name}\"\ndsn = \"mysql://{user}@127.0.0.1:{port}\"\n",
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
