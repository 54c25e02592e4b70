//! Waiting for replication: every link running both threads and its replica caught up with the
//! link's source.

use std::time::{Duration, Instant};

use super::{Sandbox, SandboxError};

impl Sandbox {
    /// Waits until every link (each channel of each replica) runs both threads and its replica
    /// has applied everything the link's source has.
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

    /// `None` when all links are caught up, else what the first one lacks.
    fn first_replica_behind(&self) -> Option<String> {
        for link in self.state.links() {
            let (node, source) = (link.replica, link.source);
            let on = if link.channel.is_empty() {
                node.to_owned()
            } else {
                format!("{node} (channel '{}')", link.channel)
            };
            let status = match self.channel_status(node, link.channel) {
                Ok(Some(status)) => status,
                Ok(None) => return Some(format!("{on}: replication is not configured")),
                Err(e) => return Some(e.to_string()),
            };
            let errors = [&status.last_io_error, &status.last_sql_error];
            if let Some(err) = errors.into_iter().flatten().next() {
                let message = super::mask_passwords(&err.message);
                return Some(format!("{on}: error {}: {message}", err.errno));
            }
            if status.io_running != crate::mysql::IoRunning::Yes || !status.sql_running {
                return Some(format!("{on}: replication threads not both running"));
            }
            // Replica first, then its source: read the other way round, a busy source makes the
            // replica look ahead.
            let (Ok(mine), Ok(theirs)) = (self.node_state(node), self.node_state(source)) else {
                return Some(format!("{on}: cannot read GTID state"));
            };
            if !mine.has_applied_all_of(&theirs) {
                return Some(format!("{on}: still applying {source}'s transactions"));
            }
        }
        None
    }
}
