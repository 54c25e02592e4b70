//! Where a sandbox keeps its files: one folder per node under the sandbox folder.

use std::path::{Path, PathBuf};

/// Unix socket paths are limited to 107 bytes; a deep `--dir` would fail inside the server with
/// an obscure message, so it is checked up front.
pub const MAX_SOCKET_PATH: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDir {
    pub root: PathBuf,
    pub cnf: PathBuf,
    pub data: PathBuf,
    pub socket: PathBuf,
    pub pid_file: PathBuf,
    pub error_log: PathBuf,
    /// Private temp folder: parallel bootstraps sharing /tmp collide on temp-table names.
    pub tmp: PathBuf,
}

impl NodeDir {
    #[must_use]
    pub fn new(sandbox: &Path, node: &str) -> Self {
        let root = sandbox.join(node);
        Self {
            cnf: root.join("my.cnf"),
            data: root.join("data"),
            socket: root.join("mysqld.sock"),
            pid_file: root.join("mysqld.pid"),
            error_log: root.join("error.log"),
            tmp: root.join("tmp"),
            root,
        }
    }
}

/// The default sandbox folder: per user, under the system temp folder (short, so sockets fit).
#[must_use]
pub fn default_dir() -> PathBuf {
    std::env::temp_dir().join(format!("rwtop-sandbox-{}", nix::unistd::geteuid()))
}

#[must_use]
pub fn state_file(sandbox: &Path) -> PathBuf {
    sandbox.join("sandbox.json")
}

#[must_use]
pub fn password_file(sandbox: &Path) -> PathBuf {
    sandbox.join("monitor.password")
}

#[must_use]
pub fn config_file(sandbox: &Path) -> PathBuf {
    sandbox.join("rwtop.toml")
}
