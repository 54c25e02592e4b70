//! Whether tables have a primary or unique key: one table looked up while a replica's appliers
//! are seen applying row events on it (`row_events.rs`), and every table without one listed for
//! the health lint with the settings (every few minutes).
//!
//! Both read `information_schema` only. The one-table lookup names its schema and table as
//! constants, so the server opens that one table's definition (0.1-0.5 ms on 10.11); the list walks
//! every table (18 ms for 793 tables, `docs/benchmarks.md`, "Statements measured by hand"), which
//! is why it rides with the settings and never with a status poll.

use serde::{Deserialize, Serialize};

use super::conn::{NodeConn, SqlError};
use super::row::RawRow;

/// Tables listed at most; one more is asked for, to know the list was cut.
pub const KEYLESS_LISTED: usize = 50;

/// A table without a primary or unique key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeylessTable {
    pub schema: String,
    pub table: String,
    pub engine: Option<String>,
    /// The server's row estimate (`TABLE_ROWS`), approximate for `InnoDB`.
    pub rows_estimate: Option<u64>,
}

/// The node's tables without a primary or unique key, as last read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KeylessTables {
    /// At most [`KEYLESS_LISTED`], by schema and name.
    pub tables: Vec<KeylessTable>,
    /// More were found than are listed.
    pub more: bool,
}

/// One table's answer: whether it exists, and how many columns its unique indexes (the primary
/// key among them) have.
#[must_use]
pub fn key_sql(schema: &str, table: &str) -> String {
    let (schema, table) = (super::literal(schema), super::literal(table));
    format!(
        "SELECT (SELECT COUNT(*) FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = {table}) AS tables_found, \
         (SELECT COUNT(*) FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = {table} AND NON_UNIQUE = 0) \
         AS unique_key_columns"
    )
}

/// The answer of [`key_sql`]: `None` when the table is not there (dropped, renamed, or not
/// visible to rwtop's account) or the answer is not one.
#[must_use]
pub fn key_from_rows(rows: &[RawRow]) -> Option<bool> {
    let row = rows.first()?;
    let found = row.optional_u64(&["tables_found"]).ok().flatten()?;
    let columns = row.optional_u64(&["unique_key_columns"]).ok().flatten()?;
    (found > 0).then_some(columns > 0)
}

/// Every base table outside the servers' own schemas without a unique index (a primary key is
/// one), by schema and name, one more than [`KEYLESS_LISTED`].
#[must_use]
pub fn keyless_sql() -> String {
    format!(
        "SELECT t.TABLE_SCHEMA AS table_schema, t.TABLE_NAME AS table_name, \
         t.ENGINE AS engine, t.TABLE_ROWS AS table_rows \
         FROM information_schema.TABLES t \
         WHERE t.TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') \
         AND t.TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') \
         AND NOT EXISTS (SELECT 1 FROM information_schema.STATISTICS s \
         WHERE s.TABLE_SCHEMA = t.TABLE_SCHEMA AND s.TABLE_NAME = t.TABLE_NAME \
         AND s.NON_UNIQUE = 0) \
         ORDER BY t.TABLE_SCHEMA, t.TABLE_NAME LIMIT {}",
        KEYLESS_LISTED + 1
    )
}

/// The rows of [`keyless_sql`]; a row without a schema or name is left out.
#[must_use]
pub fn keyless_from_rows(rows: &[RawRow]) -> KeylessTables {
    let mut tables: Vec<KeylessTable> = rows
        .iter()
        .filter_map(|row| {
            Some(KeylessTable {
                schema: row.optional_text(&["table_schema"])?.to_owned(),
                table: row.optional_text(&["table_name"])?.to_owned(),
                engine: row.optional_text(&["engine"]).map(str::to_owned),
                rows_estimate: row.optional_u64(&["table_rows"]).ok().flatten(),
            })
        })
        .collect();
    let more = tables.len() > KEYLESS_LISTED;
    tables.truncate(KEYLESS_LISTED);
    KeylessTables { tables, more }
}

impl NodeConn {
    /// Whether `schema.table` has a primary or unique key ([`key_sql`]); `Ok(None)` when the
    /// table is not found.
    pub async fn table_has_key(
        &mut self,
        schema: &str,
        table: &str,
    ) -> Result<Option<bool>, SqlError> {
        let rows = self.query_rows(&key_sql(schema, table)).await?;
        Ok(key_from_rows(&rows))
    }

    /// The tables without a primary or unique key ([`keyless_sql`]).
    pub async fn keyless_tables(&mut self) -> Result<KeylessTables, SqlError> {
        let rows = self.query_rows(&keyless_sql()).await?;
        Ok(keyless_from_rows(&rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[(&str, Option<&str>)]) -> RawRow {
        RawRow::of(cells)
    }

    #[test]
    fn key_lookup_reads_found_missing_and_bad_answers() {
        let answer = |found: &str, n: Option<&str>| {
            [row(&[
                ("tables_found", Some(found)),
                ("unique_key_columns", n),
            ])]
        };
        assert_eq!(key_from_rows(&answer("1", Some("2"))), Some(true));
        assert_eq!(key_from_rows(&answer("1", Some("0"))), Some(false));
        assert_eq!(key_from_rows(&answer("0", Some("0"))), None, "no table");
        assert_eq!(key_from_rows(&answer("1", Some("x"))), None);
        assert_eq!(key_from_rows(&[]), None);
        let sql = key_sql("sh'op", "t");
        assert!(sql.contains("'sh''op'"), "{sql}");
    }

    #[test]
    fn the_keyless_list_is_cut_and_says_so() {
        let rows: Vec<RawRow> = (0..=KEYLESS_LISTED)
            .map(|i| {
                let name = format!("t{i:03}");
                row(&[
                    ("table_schema", Some("shop")),
                    ("table_name", Some(name.as_str())),
                    ("engine", Some("InnoDB")),
                    ("table_rows", None),
                ])
            })
            .collect();
        let list = keyless_from_rows(&rows);
        assert!(list.more);
        assert_eq!(list.tables.len(), KEYLESS_LISTED);
        assert_eq!(list.tables[0].rows_estimate, None);
        let short = keyless_from_rows(&rows[..2]);
        assert!(!short.more);
        assert_eq!(short.tables[1].table, "t001");
        assert!(keyless_sql().ends_with(&format!("LIMIT {}", KEYLESS_LISTED + 1)));
    }
}
