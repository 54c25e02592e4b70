//! `missing_grants` (since 1.13): per node, each privilege this run needs that rwtop's account
//! lacks, what is off for want of it and the statement that grants it (docs/grants.md).

use serde::Serialize;

use crate::store::Snapshot;

#[derive(Debug, Serialize)]
pub struct JsonMissingGrant {
    pub node: String,
    /// `FILE`, `SELECT`.
    pub privilege: String,
    /// `*.*`, `rwtop.*`, `percona.heartbeat`.
    pub on: String,
    /// What is off without it.
    pub off: String,
    /// The `GRANT` that fixes it, to the account as the server names it.
    pub fix: String,
}

/// Every node's missing grants, in the snapshot's node order.
#[must_use]
pub fn missing(s: &Snapshot) -> Vec<JsonMissingGrant> {
    s.nodes
        .iter()
        .flat_map(|n| {
            n.missing_grants.iter().map(|m| JsonMissingGrant {
                node: n.name.clone(),
                privilege: m.privilege.clone(),
                on: m.on.clone(),
                off: m.off.clone(),
                fix: m.fix.clone(),
            })
        })
        .collect()
}
