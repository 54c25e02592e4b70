//! The operator's kill of a session that blocks a waiting DDL: off unless `[ddl] allow_kill =
//! true`, asked for in the TUI behind a confirmation, run on a connection of its own to the node,
//! and appended to the audit log with its outcome, as drains are.
//!
//! Before the `KILL` it looks the connection up again: a session that has gone (or whose id now
//! belongs to another user) is not killed, and the record says why.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use super::{AuditLog, DrainEvent};
use crate::mysql::{Endpoint, Kill, NodeConn, Timeouts, lock_holders};

/// `[ddl]` in rwtop.toml.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KillSettings {
    /// Whether the TUI's kill key may kill the session blocking a waiting DDL. Off by default:
    /// rwtop changes nothing on a server unless told to.
    pub allow_kill: bool,
}

/// What the kill task needs: each node's endpoint, and where the audit log is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillSpec {
    pub endpoints: BTreeMap<String, Endpoint>,
    pub timeouts: Timeouts,
    pub audit: AuditLog,
}

/// One confirmed kill: the holder as the operator saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillRequest {
    pub node: String,
    pub id: u64,
    /// The user the holder was named with: the connection must still be that user's.
    pub user: String,
    pub kill: Kill,
}

impl KillRequest {
    /// The exact statement, as the confirmation shows it; `None` for a thread never killed.
    #[must_use]
    pub fn statement(&self) -> Option<String> {
        lock_holders::kill_sql(self.kill, self.id)
    }
}

/// One kill as the audit log and the screen show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillRecord {
    pub at: chrono::DateTime<chrono::Utc>,
    /// Always `kill`: tells these lines from drains in the audit log.
    pub action: String,
    pub node: String,
    /// `KILL 1234`.
    pub statement: String,
    /// `app (connection 1234)`.
    pub target: String,
    pub ok: bool,
    /// What happened, or why nothing was killed.
    pub message: String,
}

impl KillRecord {
    /// `KILL 16 on primary: killed` / `… not run: connection 16 is gone`.
    #[must_use]
    pub fn summary(&self) -> String {
        format!("{} on {}: {}", self.statement, self.node, self.message)
    }
}

/// Runs each request on its own connection, one at a time, until the engine stops.
pub async fn run(
    spec: KillSpec,
    mut requests: mpsc::Receiver<KillRequest>,
    events: mpsc::Sender<DrainEvent>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            request = requests.recv() => {
                let Some(request) = request else { break };
                let record = act(&spec, &request).await;
                if events.send(DrainEvent::Kill(record)).await.is_err() {
                    break;
                }
            }
            _ = stop.changed() => break,
        }
    }
}

/// Kills one holder and appends the record to the audit log.
pub async fn act(spec: &KillSpec, request: &KillRequest) -> KillRecord {
    let statement = request.statement();
    let (ok, message) = match &statement {
        None => (
            false,
            "not run: a replication thread is never killed".to_owned(),
        ),
        Some(sql) => match kill(spec, request, sql).await {
            Ok(message) => (true, message),
            Err(message) => (false, message),
        },
    };
    let mut record = KillRecord {
        at: chrono::Utc::now(),
        action: "kill".to_owned(),
        node: request.node.clone(),
        statement: statement.unwrap_or_default(),
        target: format!("{} (connection {})", request.user, request.id),
        ok,
        message,
    };
    if let Err(e) = spec.audit.append(&record) {
        record.message = format!("{}; {e}", record.message);
    }
    record
}

async fn kill(spec: &KillSpec, request: &KillRequest, sql: &str) -> Result<String, String> {
    let endpoint = spec.endpoints.get(&request.node).ok_or_else(|| {
        format!(
            "not run: {} is not a node in rwtop's configuration (only configured nodes are \
             killed on)",
            request.node
        )
    })?;
    let mut conn = NodeConn::connect(endpoint, spec.timeouts)
        .await
        .map_err(|e| format!("not run: {e}"))?;
    let result = checked_kill(&mut conn, request, sql).await;
    conn.close().await;
    result
}

async fn checked_kill(
    conn: &mut NodeConn,
    request: &KillRequest,
    sql: &str,
) -> Result<String, String> {
    let check = lock_holders::session_user_sql(request.id);
    let rows = conn
        .query_rows(&check)
        .await
        .map_err(|e| format!("not run: {e}"))?;
    let Some(row) = rows.first() else {
        return Err(format!(
            "not run: connection {} is gone (nothing killed)",
            request.id
        ));
    };
    let user = row.optional_text(&["USER"]).unwrap_or_default();
    if user != request.user {
        return Err(format!(
            "not run: connection {} is now {user}'s, not {}'s (nothing killed)",
            request.id, request.user
        ));
    }
    conn.query_rows(sql).await.map_err(|e| match e {
        // ER_KILL_DENIED_ERROR: another user's session needs the privilege.
        crate::mysql::SqlError::Server { code: 1095, .. } => format!(
            "failed: {e}; the monitor user needs CONNECTION ADMIN (MariaDB) or \
             CONNECTION_ADMIN (MySQL) to kill another user's session"
        ),
        e => format!("failed: {e}"),
    })?;
    Ok(match request.kill {
        Kill::Query => "its statement was ended".to_owned(),
        _ => "its connection was killed; its transaction rolls back and its locks are freed"
            .to_owned(),
    })
}
