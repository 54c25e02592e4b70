//! Administrative SQL through the server's own command-line client over the node's unix socket,
//! authenticated as the OS user (socket authentication): no admin password exists anywhere.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::SandboxError;
use super::process::run_with_deadline;
use crate::mysql::{RawRow, parse_vertical};

pub struct Admin<'a> {
    pub client: &'a Path,
    pub user: String,
}

impl Admin<'_> {
    /// Runs `sql` (one or more statements) on the node behind `socket`; returns the rows of the
    /// statements that produce any.
    pub fn run(&self, node: &str, socket: &Path, sql: &str) -> Result<Vec<RawRow>, SandboxError> {
        let mut cmd = Command::new(self.client);
        cmd.arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--user={}", self.user))
            .args([
                "--connect-timeout=5",
                "--batch",
                "--raw",
                "--vertical",
                "-e",
                sql,
            ]);
        let failed = |problem: String| SandboxError::Admin {
            node: node.to_owned(),
            sql: sql.chars().take(120).collect(),
            problem,
        };
        let out = run_with_deadline(cmd, Duration::from_secs(30))
            .map_err(|e| failed(format!("{}: {e}", self.client.display())))?;
        if !out.status.success() {
            return Err(failed(out.stderr.trim().to_owned()));
        }
        parse_vertical(&out.stdout)
            .map(|v| v.rows)
            .map_err(|e| failed(format!("unreadable client output: {e}")))
    }
}
