//! A channel's `appliers` object (docs/json-schema.md): the parallel appliers as the store
//! sees them (`store/applier.rs`), every field `null` where the server does not report it.

use serde::Serialize;

use super::row_events;

/// A channel's parallel appliers; every field `null` when the server does not report it.
#[derive(Debug, Serialize)]
pub struct JsonAppliers {
    /// Configured workers; 0: one applier thread.
    pub workers: Option<u64>,
    pub mode: Option<String>,
    pub preserve_commit_order: Option<bool>,
    /// The newest processlist scan's workers (a sample: scans run every few polls).
    pub busy: Option<u32>,
    pub commit_order_waits: Option<u32>,
    /// Worker threads that scan saw.
    pub workers_seen: Option<u32>,
    /// How old that scan is.
    pub sample_age_seconds: Option<f64>,
    /// The workers are the node's one pool, serving all its channels (`MariaDB` multi-source).
    pub pool_shared: Option<bool>,
    pub retried_transactions: Option<u64>,
    pub retries_per_second: Option<f64>,
    pub groups: JsonGroups,
    /// The tables the newest scan showed row events applied on (since 1.10); empty when none.
    pub row_events: Vec<row_events::JsonRowEvent>,
}

/// Event groups applied since the replica started.
#[derive(Debug, Serialize)]
pub struct JsonGroups {
    pub ddl: Option<u64>,
    pub transactional: Option<u64>,
    pub non_transactional: Option<u64>,
}

pub fn appliers(a: &crate::store::ApplierView) -> JsonAppliers {
    JsonAppliers {
        workers: a.workers,
        mode: a.mode.clone(),
        preserve_commit_order: a.preserve_commit_order,
        busy: a.busy.map(|b| b.busy),
        commit_order_waits: a.busy.and_then(|b| b.commit_order_waits),
        workers_seen: a.busy.map(|b| b.workers),
        sample_age_seconds: a.busy.map(|b| b.age.as_secs_f64()),
        pool_shared: a.busy.map(|b| b.shared),
        retried_transactions: a.retried_transactions,
        retries_per_second: a.retries_per_second,
        groups: JsonGroups {
            ddl: a.groups.ddl,
            transactional: a.groups.transactional,
            non_transactional: a.groups.non_transactional,
        },
        row_events: row_events::row_events(&a.row_events),
    }
}
