//! The heartbeat read as a prepared statement. A table read is the dearest statement of a
//! status poll on the server's side: parsing, resolving and optimizing a one-row `SELECT` from
//! `rwtop.heartbeat` costs MariaDB 10.11 about as much as the rest of the poll's statements
//! together, and `EXECUTE` of the same statement prepared once per connection a fifth less
//! (docs/benchmarks.md). So once a plain read has found the table, the connection prepares the
//! read (one round trip, after that poll's batch, outside any timed window) and later batches
//! send `EXECUTE`. A server that refuses to prepare it for any reason but a missing table (its
//! `max_prepared_stmt_count` reached, say) keeps the plain read on that connection; a new
//! connection starts over with a plain read.

use super::conn::{NodeConn, SqlError, is_missing_table};
use super::literal;

/// The name the read is prepared under, per connection (a session's names are its own).
const NAME: &str = "rwtop_lead";
const EXECUTE: &str = "EXECUTE rwtop_lead";

/// Where a connection's heartbeat read stands.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum Lead {
    /// Sent as text until a read finds its table.
    #[default]
    Plain,
    /// This text is prepared under [`NAME`].
    Ready(String),
    /// The server would not prepare it: text from now on.
    Refused,
}

impl NodeConn {
    /// What a batch sends for the lead `text`: `EXECUTE` when it is prepared, else the text.
    pub(super) fn lead_sql<'a>(&self, text: &'a str) -> &'a str {
        match &self.lead {
            Lead::Ready(ready) if ready == text => EXECUTE,
            _ => text,
        }
    }

    /// After a batch whose lead `text` read rows (its table is there): prepares it for the
    /// next batch unless it is prepared or refused already. Only an error that drops the
    /// connection is returned; a refusal leaves the plain read.
    pub(super) async fn prepare_lead(&mut self, text: &str) -> Result<(), SqlError> {
        let due = match &self.lead {
            Lead::Plain => true,
            Lead::Ready(ready) => ready != text,
            Lead::Refused => false,
        };
        if !due {
            return Ok(());
        }
        // A PREPARE under a name in use replaces that statement, even when it fails.
        let prepare = format!("PREPARE {NAME} FROM {}", literal(text));
        self.lead = match self.query_rows(&prepare).await {
            Ok(_) => Lead::Ready(text.to_owned()),
            Err(err) if err.drops_connection() => return Err(err),
            Err(err) if is_missing_table(&err) => Lead::Plain,
            Err(_) => Lead::Refused,
        };
        Ok(())
    }

    /// Where this connection's heartbeat read stands.
    #[must_use]
    pub fn lead_state(&self) -> &Lead {
        &self.lead
    }
}

/// The lead's error named by its text rather than by the `EXECUTE` that ran it.
pub(super) fn named(err: SqlError, text: &str) -> SqlError {
    match err {
        SqlError::Server {
            addr,
            sql,
            code,
            message,
        } if sql == EXECUTE => SqlError::Server {
            addr,
            sql: text.to_owned(),
            code,
            message,
        },
        other => other,
    }
}
