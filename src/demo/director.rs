//! What the demo's script acts through: the sandbox, the application's account, the timeline
//! and the narration.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::stop::{Stop, Stopped};
use super::timeline::Timeline;
use crate::mysql::{Endpoint, NodeConn, RawRow, Timeouts};
use crate::sandbox::{Sandbox, SandboxError};

/// Timeouts for statements that legitimately run for a long time (the table build and the
/// rebuilding ALTER): long enough for a slow disk, bounded so a wedged server is still reported.
const LONG: Timeouts = Timeouts {
    connect: Duration::from_secs(3),
    query: Duration::from_secs(900),
};

/// What the script works with: it narrates, runs administrative SQL on nodes and the app's SQL
/// on the primary. Cloned out of the [`super::Demo`] so the script future is `'static` and can be
/// spawned.
pub(crate) struct Director {
    pub sandbox: Arc<Sandbox>,
    /// The application's account on the primary: the load, the build and the ALTER run as it,
    /// because rwtop's monitor user may not ALTER (and should not).
    pub app: Endpoint,
    /// The same account on the second primary, where the load writes too, so the aggregator's
    /// channel from it has something to apply (and to fall behind on).
    pub app_p2: Endpoint,
    pub timeline: Timeline,
    pub events: mpsc::Sender<String>,
}

impl Director {
    /// Narrates one line. Never waits: a TUI that is behind on its footer loses a line rather
    /// than delaying an incident (or the load) it is showing.
    pub(super) fn say(&self, line: impl AsRef<str>) {
        let _ = self.events.try_send(one_line(line.as_ref()));
    }

    /// Administrative SQL on a node, off the runtime. An error is narrated and returned as
    /// `None`; the caller skips the rest of its incident.
    pub(super) async fn admin(
        &self,
        stop: &mut Stop,
        node: &str,
        sql: &str,
    ) -> Result<Option<Vec<RawRow>>, Stopped> {
        match self.admin_quiet(stop, node, sql).await? {
            Ok(rows) => Ok(Some(rows)),
            Err(e) => {
                self.say(format!("error: {e}"));
                Ok(None)
            }
        }
    }

    async fn admin_quiet(
        &self,
        stop: &mut Stop,
        node: &str,
        sql: &str,
    ) -> Result<Result<Vec<RawRow>, SandboxError>, Stopped> {
        let (node, sql) = (node.to_owned(), sql.to_owned());
        self.on_sandbox(stop, move |sandbox| sandbox.admin(&node, &sql))
            .await
    }

    /// Runs a blocking sandbox call on the blocking pool. On a stop the call is abandoned, not
    /// killed: it ends within the client's own deadline, and the Demo's teardown does not wait
    /// for it beyond a moment.
    pub(super) async fn on_sandbox<T: Send + 'static>(
        &self,
        stop: &mut Stop,
        call: impl FnOnce(&Sandbox) -> Result<T, SandboxError> + Send + 'static,
    ) -> Result<Result<T, SandboxError>, Stopped> {
        let sandbox = Arc::clone(&self.sandbox);
        let joined = stop
            .or_stop(tokio::task::spawn_blocking(move || call(&sandbox)))
            .await?;
        Ok(joined.unwrap_or_else(|e| {
            Err(SandboxError::Admin {
                node: "?".to_owned(),
                sql: String::new(),
                problem: format!("the admin task failed: {e}"),
            })
        }))
    }

    /// Undoes an incident when the script is stopped in the middle of it, without waiting: the
    /// stop must stay prompt, and a sandbox being torn down makes the statement moot anyway.
    pub(super) fn undo_in_background(&self, node: &'static str, sql: String) {
        let sandbox = Arc::clone(&self.sandbox);
        drop(tokio::task::spawn_blocking(move || {
            let _ = sandbox.admin(node, &sql);
        }));
    }

    /// Runs statements in order as the app user on one connection, under the long timeouts;
    /// the first failure is returned as text.
    pub(super) async fn app_sql(
        &self,
        stop: &mut Stop,
        statements: &[&str],
    ) -> Result<Result<(), String>, Stopped> {
        let work = async {
            let mut conn = NodeConn::connect(&self.app, LONG)
                .await
                .map_err(|e| e.to_string())?;
            for sql in statements {
                if let Err(e) = conn.query_rows(sql).await {
                    return Err(e.to_string());
                }
            }
            conn.close().await;
            Ok(())
        };
        stop.or_stop(work).await
    }
}

/// Collapses whitespace (client errors carry newlines) so a narration is one footer line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narration_is_one_line() {
        assert_eq!(one_line("a\n  b\tc "), "a b c");
    }
}
