//! Whether the tables a replica's appliers apply row events on have a key, looked up once per
//! table and connection and kept: a scan that names a table asks the server only when the table
//! is not known yet, or its answer is older than [`KEEP_FOR`]. A DDL seen on the node forgets
//! every answer (an `ALTER TABLE … ADD PRIMARY KEY` is what an operator does about a keyless
//! table), and so does a new connection.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::mysql::{NodeConn, Processlist, SqlError};

/// How long an answer is kept: a key added by hand outside replication's DDL shows within this.
pub const KEEP_FOR: Duration = Duration::from_secs(60);
/// Tables kept at most; past it the cache starts again (a scan names a few tables at most).
const KEPT_MAX: usize = 256;

#[derive(Debug, Default)]
pub struct KeyCache {
    known: HashMap<(String, String), (Instant, Option<bool>)>,
}

impl KeyCache {
    /// Forgets every answer (a DDL ran on the node).
    pub fn forget(&mut self) {
        self.known.clear();
    }

    /// Fills in `has_key` for every row event of `list` that names its table and schema,
    /// asking the server for the tables not known (or known too long ago). A refusal leaves the
    /// table's key unknown, and is kept as such like any answer: it is not asked again each
    /// poll.
    pub async fn fill(
        &mut self,
        conn: &mut NodeConn,
        list: &mut Processlist,
        now: Instant,
    ) -> Result<(), SqlError> {
        for apply in &mut list.row_events {
            let (Some(schema), Some(table)) = (&apply.schema, &apply.table) else {
                continue;
            };
            let key = (schema.clone(), table.clone());
            let fresh = self
                .known
                .get(&key)
                .filter(|(at, _)| now.saturating_duration_since(*at) < KEEP_FOR)
                .map(|(_, has)| *has);
            let has = if let Some(has) = fresh {
                has
            } else {
                let has = match conn.table_has_key(schema, table).await {
                    Ok(has) => has,
                    Err(SqlError::Server { .. } | SqlError::Parse { .. }) => None,
                    Err(other) => return Err(other),
                };
                if self.known.len() >= KEPT_MAX {
                    self.known.clear();
                }
                self.known.insert(key, (now, has));
                has
            };
            apply.has_key = has;
        }
        Ok(())
    }
}
