//! Where a replica's appliers are applying row events, from one processlist scan: the table, and
//! (looked up apart, one table at a time) whether it has a primary or unique key. Under ROW
//! format a replica finds each changed row by the table's key; without one every row event scans
//! the table, the classic cause of hours of lag.
//!
//! What the servers show (`docs/server-facts.md`, "Row events being applied"): `MariaDB` 10.11's
//! applier `STATE` is `Update_rows_log_event::find_row()` (or `Delete_rows…`, `Write_rows…`)
//! without the table; its `db` column is the table's schema, and its `Info` the statement that
//! made the events (`replicate_annotate_row_events`, on by default), from which the table is
//! read. `MySQL` 8's `STATE` is `Applying batch of row changes (update)` and names no table
//! either. A state that does name it (ending in ``on table `t` ``) is read first.

use serde::{Deserialize, Serialize};

use super::row::RawRow;

/// What kind of row event a thread is applying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowEvent {
    Write,
    Update,
    Delete,
}

impl RowEvent {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Update => "update",
            Self::Delete => "delete",
        }
    }
}

/// Where the table's name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamedBy {
    /// The thread's state names it.
    State,
    /// The statement the events came from (`Info`): its one target table.
    Statement,
}

/// One applier thread (the SQL thread or a parallel worker) applying row events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowApply {
    pub thread_id: u64,
    pub event: RowEvent,
    /// The table's schema: the state's or the statement's qualified name, else the thread's `db`.
    pub schema: Option<String>,
    /// `None` where neither the state nor the statement names it.
    pub table: Option<String>,
    pub named_by: Option<NamedBy>,
    /// Whether the table has a primary or unique key; `None` until looked up, or where the
    /// lookup found no such table or was refused.
    #[serde(default)]
    pub has_key: Option<bool>,
}

impl RowApply {
    /// `shop.events`, `events` without a schema; `None` without a table.
    #[must_use]
    pub fn qualified(&self) -> Option<String> {
        let table = self.table.as_deref()?;
        Some(match self.schema.as_deref() {
            Some(schema) => format!("{schema}.{table}"),
            None => table.to_owned(),
        })
    }

    /// The table is known to lack a primary and a unique key: each of its row events scans it.
    #[must_use]
    pub fn scans_table(&self) -> bool {
        self.table.is_some() && self.has_key == Some(false)
    }
}

/// The row event a state says a thread applies: `MariaDB`'s `Update_rows_log_event::…`
/// (`Write_rows_log_event`, `Delete_rows_log_event`, with `_v1` variants of old binlogs) and
/// `MySQL` 8's `Applying batch of row changes (update)`.
fn event_of(state: &str) -> Option<RowEvent> {
    let state = state.trim();
    for (prefix, event) in [
        ("Write_rows", RowEvent::Write),
        ("Update_rows", RowEvent::Update),
        ("Delete_rows", RowEvent::Delete),
    ] {
        if state
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with("_log_event") || rest.starts_with("_v1"))
        {
            return Some(event);
        }
    }
    match state.strip_prefix("Applying batch of row changes (")? {
        "write)" => Some(RowEvent::Write),
        "update)" => Some(RowEvent::Update),
        "delete)" => Some(RowEvent::Delete),
        _ => None,
    }
}

/// One identifier at the start of `text`, backquoted (a doubled backquote is one) or bare;
/// with the rest of the text after it.
fn identifier(text: &str) -> Option<(String, &str)> {
    if let Some(rest) = text.strip_prefix('`') {
        let mut name = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            if c != '`' {
                name.push(c);
                continue;
            }
            if rest[i + 1..].starts_with('`') {
                name.push('`');
                chars.next();
                continue;
            }
            return (!name.is_empty()).then(|| (name, &rest[i + 1..]));
        }
        return None;
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(text.len());
    // All digits is no identifier MySQL accepts unquoted.
    let name = &text[..end];
    (!name.is_empty() && !name.bytes().all(|b| b.is_ascii_digit()))
        .then(|| (name.to_owned(), &text[end..]))
}

/// `schema.table` or `table` at the start of `text`, and the rest after it.
fn table_name(text: &str) -> Option<((Option<String>, String), &str)> {
    let (first, rest) = identifier(text)?;
    match rest.strip_prefix('.') {
        Some(after) => {
            let (second, rest) = identifier(after)?;
            Some(((Some(first), second), rest))
        }
        None => Some(((None, first), rest)),
    }
}

/// The table a state names: ``… on table `t` `` or ``… on table `s`.`t` ``.
fn named_in_state(state: &str) -> Option<(Option<String>, String)> {
    let at = state.find(" on table ")?;
    let (name, _) = table_name(state[at + " on table ".len()..].trim_start())?;
    Some(name)
}

/// Skips leading comments and whitespace.
fn skip_comments(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        match text.strip_prefix("/*") {
            Some(rest) => text = rest.split_once("*/").map_or("", |(_, after)| after),
            None => return text,
        }
    }
}

/// The next word (letters only), upper-cased, and the rest.
fn word(text: &str) -> (String, &str) {
    let text = skip_comments(text);
    let end = text
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    (text[..end].to_ascii_uppercase(), &text[end..])
}

/// The one table a single-table `UPDATE`, `DELETE`, `INSERT` or `REPLACE` writes; `None` for a
/// statement that writes several (a multi-table `UPDATE` or `DELETE`) or where the name may be
/// cut (the processlist cuts `Info`): the name must be followed by more text.
fn target_of(statement: &str) -> Option<(Option<String>, String)> {
    let (verb, mut rest) = word(statement);
    let modifiers: &[&str] = match verb.as_str() {
        "UPDATE" => &["LOW_PRIORITY", "IGNORE"],
        "DELETE" => &["LOW_PRIORITY", "QUICK", "IGNORE", "FROM"],
        "INSERT" | "REPLACE" => &["LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", "INTO"],
        _ => return None,
    };
    let mut saw_from = false;
    loop {
        let next = skip_comments(rest);
        let end = next
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '_'))
            .unwrap_or(next.len());
        let upper = next[..end].to_ascii_uppercase();
        if !modifiers.contains(&upper.as_str()) || end == 0 {
            rest = next;
            break;
        }
        saw_from |= upper == "FROM";
        rest = &next[end..];
    }
    if verb == "DELETE" && !saw_from {
        // `DELETE t1, t2 FROM …`: several tables.
        return None;
    }
    let (name, after) = table_name(rest)?;
    let after = after.trim_start();
    if after.is_empty() {
        return None;
    }
    // A comma or a join after the first table: it writes several (or reads them to write one
    // of them, which the statement does not say).
    let (next, _) = word(after);
    let several = after.starts_with(',')
        || matches!(
            next.as_str(),
            "JOIN" | "INNER" | "LEFT" | "RIGHT" | "STRAIGHT_JOIN" | "CROSS" | "NATURAL" | "USING"
        );
    if several {
        return None;
    }
    Some(name)
}

/// The row events being applied in one scan's rows: the replication threads (`system user`)
/// whose state names a row event. A thread that shows none is applying nothing by rows.
#[must_use]
pub fn from_processlist(rows: &[RawRow]) -> Vec<RowApply> {
    let mut out = Vec::new();
    for row in rows {
        if row.optional_text(&["USER"]) != Some("system user") {
            continue;
        }
        let state = row.optional_text(&["STATE"]).unwrap_or_default();
        let Some(event) = event_of(state) else {
            continue;
        };
        let Ok(thread_id) = row.u64(&["ID"]) else {
            continue;
        };
        let db = row
            .optional_text(&["DB"])
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned);
        let info = row.optional_text(&["INFO"]).unwrap_or_default();
        let (named, named_by) = match named_in_state(state) {
            Some(name) => (Some(name), Some(NamedBy::State)),
            None => match target_of(info) {
                Some(name) => (Some(name), Some(NamedBy::Statement)),
                None => (None, None),
            },
        };
        let (schema, table) = match named {
            Some((schema, table)) => (schema.or_else(|| db.clone()), Some(table)),
            None => (db, None),
        };
        out.push(RowApply {
            thread_id,
            event,
            schema,
            table,
            named_by,
            has_key: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(id: &str, db: Option<&str>, state: &str, info: Option<&str>) -> RawRow {
        RawRow::new(vec![
            ("Id".into(), Some(id.into())),
            ("User".into(), Some("system user".into())),
            ("db".into(), db.map(Into::into)),
            ("Command".into(), Some("Slave_worker".into())),
            ("State".into(), Some(state.into())),
            ("Info".into(), info.map(Into::into)),
        ])
    }

    #[test]
    fn mariadb_names_the_table_from_the_statement_and_the_schema_from_db() {
        let rows = [
            thread(
                "10",
                Some("shop"),
                "Update_rows_log_event::find_row()",
                Some("update shop.events set n=n+1"),
            ),
            thread(
                "11",
                Some("shop"),
                "Delete_rows_log_event::find_row()",
                Some("DELETE FROM `order``s` WHERE id > 4"),
            ),
            thread(
                "12",
                Some("shop"),
                "Write_rows_log_event::write_row()",
                None,
            ),
            thread("13", None, "Waiting for work from SQL thread", None),
        ];
        let found = from_processlist(&rows);
        let names: Vec<(u64, RowEvent, Option<String>)> = found
            .iter()
            .map(|r| (r.thread_id, r.event, r.qualified()))
            .collect();
        assert_eq!(
            names,
            [
                (10, RowEvent::Update, Some("shop.events".into())),
                (11, RowEvent::Delete, Some("shop.order`s".into())),
                (12, RowEvent::Write, None),
            ]
        );
        assert_eq!(found[0].named_by, Some(NamedBy::Statement));
        assert_eq!(found[2].schema.as_deref(), Some("shop"));
    }

    #[test]
    fn a_state_that_names_the_table_wins_and_mysql_states_are_row_events() {
        let rows = [
            thread(
                "5",
                Some("app"),
                "Update_rows_log_event::find_row(-1) on table `events`",
                Some("update other set a = 1"),
            ),
            thread(
                "6",
                None,
                "Applying batch of row changes (delete)",
                Some("DELETE FROM db1.t1 WHERE a < 9"),
            ),
            thread("7", None, "Applying batch of row changes (nothing)", None),
        ];
        let found = from_processlist(&rows);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].qualified().as_deref(), Some("app.events"));
        assert_eq!(found[0].named_by, Some(NamedBy::State));
        assert_eq!(found[1].event, RowEvent::Delete);
        assert_eq!(found[1].qualified().as_deref(), Some("db1.t1"));
    }

    #[test]
    fn only_a_single_table_statement_names_its_table() {
        for (statement, table) in [
            ("UPDATE LOW_PRIORITY t SET a = 1", Some("t")),
            ("/* app */ update `s`.`t` set a=1", Some("s.t")),
            ("INSERT INTO t (a) VALUES (1)", Some("t")),
            ("insert ignore t select * from u", Some("t")),
            ("REPLACE INTO s.t VALUES (1)", Some("s.t")),
            ("DELETE QUICK FROM t WHERE a = 1", Some("t")),
            ("UPDATE t1, t2 SET t1.a = t2.a", None),
            ("UPDATE t1 JOIN t2 USING (id) SET a = 1", None),
            ("DELETE t1 FROM t1 JOIN t2 ON 1", None),
            ("SELECT * FROM t", None),
            // Cut by the processlist right after the name: it may be longer.
            ("UPDATE very_long_name_cu", None),
            ("", None),
            ("UPDATE `unterminated", None),
        ] {
            let got = target_of(statement).map(|(s, t)| match s {
                Some(s) => format!("{s}.{t}"),
                None => t,
            });
            assert_eq!(got.as_deref(), table, "{statement}");
        }
    }
}
