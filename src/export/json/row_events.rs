//! A channel's `appliers.row_events` (docs/json-schema.md, since 1.10): the tables the newest
//! processlist scan showed row events applied on (`mysql/row_events.rs`), and whether each has
//! a primary or unique key.

use serde::Serialize;

use crate::mysql::{NamedBy, RowApply};

#[derive(Debug, Serialize)]
pub struct JsonRowEvent {
    /// The applier thread's processlist id (the SQL thread or a parallel worker).
    pub thread_id: u64,
    /// `write`, `update` or `delete`.
    pub event: &'static str,
    pub schema: Option<String>,
    /// `null` where neither the thread's state nor its statement names it.
    pub table: Option<String>,
    /// `state` or `statement`: where the table's name was read; `null` without one.
    pub named_by: Option<&'static str>,
    /// `false`: no primary or unique key, so each row event scans the table; `null`: not known.
    pub has_key: Option<bool>,
}

pub fn row_events(list: &[RowApply]) -> Vec<JsonRowEvent> {
    list.iter()
        .map(|r| JsonRowEvent {
            thread_id: r.thread_id,
            event: r.event.name(),
            schema: r.schema.clone(),
            table: r.table.clone(),
            named_by: r.named_by.map(|by| match by {
                NamedBy::State => "state",
                NamedBy::Statement => "statement",
            }),
            has_key: r.has_key,
        })
        .collect()
}
