//! The audit log: one JSON line per operator action (a drain: time, replica, backend, action,
//! result; a kill: time, node, statement, target, result), appended and never rewritten,
//! readable by the operator's own tools.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::ActionRecord;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    #[must_use]
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// `$XDG_STATE_HOME/rwtop/audit.log`, else `~/.local/state/rwtop/audit.log`, else
    /// `./rwtop-audit.log`.
    #[must_use]
    pub fn default_path() -> PathBuf {
        let state = std::env::var_os("XDG_STATE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/state"))
            });
        state.map_or_else(
            || PathBuf::from("rwtop-audit.log"),
            |dir| dir.join("rwtop").join("audit.log"),
        )
    }

    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record (a drain's [`ActionRecord`], a kill's `KillRecord`); the error names
    /// the file so the operator can fix it.
    pub fn append<T: serde::Serialize>(&self, record: &T) -> Result<(), String> {
        let fail = |e: std::io::Error| {
            format!(
                "cannot append to the audit log {}: {e}",
                self.path.display()
            )
        };
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&self.path).map_err(fail)?;
        let mut line = serde_json::to_string(record).map_err(|e| e.to_string())?;
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(fail)
    }

    /// Every drain record in the file, oldest first; other lines (kills) are skipped.
    pub fn read(&self) -> Result<Vec<ActionRecord>, String> {
        let text = std::fs::read_to_string(&self.path)
            .map_err(|e| format!("cannot read the audit log {}: {e}", self.path.display()))?;
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drain::Action;

    #[test]
    fn records_are_appended_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().join("sub/audit.log"));
        let record = |ok| ActionRecord {
            at: chrono::Utc::now(),
            replica: "r1".into(),
            action: Action::Drain,
            backend: "haproxy ro/r1".into(),
            ok,
            message: "m".into(),
        };
        log.append(&record(true)).unwrap();
        log.append(&record(false)).unwrap();
        let read = log.read().unwrap();
        assert_eq!(read.len(), 2);
        assert!(read[0].ok && !read[1].ok);
    }
}
