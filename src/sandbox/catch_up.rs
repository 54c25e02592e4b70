//! Waiting for replication: every replica running both threads and caught up with its source.

use std::time::{Duration, Instant};

use super::{Sandbox, SandboxError};

impl Sandbox {
    /// Waits until every replica runs both threads and has applied everything its primary has.
    pub fn wait_replicating(&self, deadline: Duration) -> Result<(), SandboxError> {
        let start = Instant::now();
        loop {
            let behind = self.first_replica_behind();
            match behind {
                None => return Ok(()),
                Some(detail) if start.elapsed() > deadline => {
                    return Err(SandboxError::NotReplicating { detail });
                }
                Some(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// `None` when all replicas are caught up, else what the first one lacks.
    fn first_replica_behind(&self) -> Option<String> {
        for node in self.state.replicas() {
            let source = node.source.as_deref().unwrap_or("primary");
            let status = match self.replica_status(&node.name) {
                Ok(Some(status)) => status,
                Ok(None) => return Some(format!("{}: replication is not configured", node.name)),
                Err(e) => return Some(e.to_string()),
            };
            let errors = [&status.last_io_error, &status.last_sql_error];
            if let Some(err) = errors.into_iter().flatten().next() {
                return Some(format!(
                    "{}: error {}: {}",
                    node.name, err.errno, err.message
                ));
            }
            if status.io_running != crate::mysql::IoRunning::Yes || !status.sql_running {
                return Some(format!(
                    "{}: replication threads not both running",
                    node.name
                ));
            }
            // Replica first, then its source: read the other way round, a busy source makes the
            // replica look ahead.
            let (Ok(mine), Ok(theirs)) = (self.node_state(&node.name), self.node_state(source))
            else {
                return Some(format!("{}: cannot read GTID state", node.name));
            };
            if !mine.has_applied_all_of(&theirs) {
                return Some(format!(
                    "{}: still applying {source}'s transactions",
                    node.name
                ));
            }
        }
        None
    }
}
