//! The heartbeat read as a prepared statement. A table read is the dearest statement of a
//! status poll on the server's side: parsing, resolving and optimizing a one-row `SELECT` from
//! `rwtop.heartbeat` costs MariaDB 10.11 about as much as the rest of the poll's statements
//! together, and `EXECUTE` of the same statement prepared once per connection a fifth less
//! (docs/benchmarks.md, "Statements measured by hand"). So once a plain read has found the table,
//! the connection prepares the read (one round trip, after that poll's batch or that read, outside
//! any timed window) and later batches and reads send `EXECUTE`. A server that refuses to prepare
//! it for any reason but a missing table (its `max_prepared_stmt_count` reached, say) keeps the
//! plain read on that connection; a new connection starts over with a plain read.

use std::time::Instant;

use super::conn::{NodeConn, SqlError, is_missing_table, rows_if_table};
use super::literal;
use super::row::RawRow;

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

    /// The heartbeat read `text` on its own (between status polls), as
    /// [`NodeConn::query_rows_if_table`] reads it, sent as `EXECUTE` once prepared; with when
    /// its answer came back (a preparation it leads to comes after that).
    pub async fn query_lead(&mut self, text: &str) -> Result<(Vec<RawRow>, Instant), SqlError> {
        let sql = self.lead_sql(text);
        let read = self.query_rows(sql).await.map_err(|err| named(err, text));
        let answered = Instant::now();
        let rows = rows_if_table(read)?;
        self.prepare_lead(text, &rows).await?;
        Ok((rows, answered))
    }

    /// After a read of `text` that answered `rows`: rows mean its table is there, so it is
    /// prepared for the next read unless it is prepared or refused already. Only an error that
    /// drops the connection is returned; a refusal leaves the plain read.
    pub(super) async fn prepare_lead(
        &mut self,
        text: &str,
        rows: &[RawRow],
    ) -> Result<(), SqlError> {
        let due = !rows.is_empty()
            && match &self.lead {
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
pub(super) fn named(mut err: SqlError, text: &str) -> SqlError {
    if let SqlError::Server { sql, .. }
    | SqlError::QueryTimeout { sql, .. }
    | SqlError::Lost { sql, .. }
    | SqlError::Parse { sql, .. } = &mut err
        && sql == EXECUTE
    {
        text.clone_into(sql);
    }
    err
}
