//! Administrative SQL through the server's own command-line client over the node's unix socket,
//! authenticated as the OS user (socket authentication): no admin password exists anywhere.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::SandboxError;
use super::process::run_with_input;
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
            .args(["--connect-timeout=5", "--batch", "--raw", "--vertical"]);
        let failed = |problem: String| SandboxError::Admin {
            node: node.to_owned(),
            sql: mask_passwords(sql).chars().take(120).collect(),
            problem,
        };
        // On stdin, not `-e`: the SQL may create an account with its password.
        let out = run_with_input(cmd, Some(sql), Duration::from_secs(30))
            .map_err(|e| failed(format!("{}: {e}", self.client.display())))?;
        if !out.status.success() {
            return Err(failed(out.stderr.trim().to_owned()));
        }
        parse_vertical(&out.stdout)
            .map(|v| v.rows)
            .map_err(|e| failed(format!("unreadable client output: {e}")))
    }
}

/// `sql` with the quoted password of `IDENTIFIED BY '...'` and `PASSWORD='...'` replaced by
/// `***`, for error messages that quote the statement (ours, or a replica's `Last_SQL_Error`,
/// which quotes the replicated statement that failed).
#[must_use]
pub fn mask_passwords(sql: &str) -> String {
    let mut out = sql.to_owned();
    for marker in ["IDENTIFIED BY '", "PASSWORD='"] {
        let mut from = 0;
        while let Some(at) = out[from..].find(marker) {
            let start = from + at + marker.len();
            let end = out[start..].find('\'').map_or(out.len(), |i| start + i);
            out.replace_range(start..end, "***");
            from = start + 3;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_masked_in_quoted_sql() {
        assert_eq!(
            super::mask_passwords(
                "CREATE USER 'u'@'h' IDENTIFIED BY 'pw1'; CHANGE MASTER TO MASTER_PASSWORD='pw2', \
                 MASTER_PORT=1"
            ),
            "CREATE USER 'u'@'h' IDENTIFIED BY '***'; CHANGE MASTER TO MASTER_PASSWORD='***', \
             MASTER_PORT=1"
        );
    }

    /// A replica's `Last_SQL_Error` as `MariaDB` 10.11 wrote it when a second primary's logged
    /// `CREATE USER` reached an aggregator that had the account already.
    #[test]
    fn a_replicated_statement_in_an_error_is_masked() {
        let error = "Error 'Operation CREATE USER failed for 'repl'@'127.0.0.1'' on query. \
                     Default database: ''. Query: 'CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY \
                     'f2b5215937a8b8e599b7a3aa''";
        let masked = super::mask_passwords(error);
        assert!(!masked.contains("f2b5215937a8b8e599b7a3aa"), "{masked}");
        assert!(masked.ends_with("IDENTIFIED BY '***''"), "{masked}");
    }
}
