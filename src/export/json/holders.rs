//! The holders of a waiting DDL's lock in the JSON snapshot (since 1.10): who they are, what
//! shows they hold it, and the statement that frees it.

use serde::Serialize;

use crate::mysql::{Blockers, Holds, LastStatement, LockHolder};

#[derive(Debug, Serialize)]
pub struct JsonBlockers {
    /// `metadata_lock_info`, `performance_schema.metadata_locks`, or
    /// `INNODB_TRX and the processlist`.
    pub source: &'static str,
    pub holders: Vec<JsonHolder>,
}

#[derive(Debug, Serialize)]
pub struct JsonHolder {
    pub connection_id: u64,
    pub user: String,
    pub host: String,
    pub command: String,
    /// Null while it runs a statement.
    pub idle_seconds: Option<u64>,
    /// Null without an open transaction, or where not known.
    pub transaction_seconds: Option<u64>,
    /// `running`, `last` or `not_told`.
    pub statement_kind: &'static str,
    /// Null when `not_told`.
    pub statement: Option<String>,
    /// `lock` (the server's lock table lists it), `open_transaction` or `idle_since_before`
    /// (suspects, where the server lists no locks).
    pub evidence: &'static str,
    pub lock_mode: Option<String>,
    pub lock_object: Option<String>,
    /// `KILL 1234`, `KILL QUERY 1234`; null for a replication thread.
    pub kill: Option<String>,
}

pub fn blockers(b: &Blockers) -> JsonBlockers {
    JsonBlockers {
        source: b.source.name(),
        holders: b.holders.iter().map(holder).collect(),
    }
}

fn holder(h: &LockHolder) -> JsonHolder {
    let (statement_kind, statement) = match &h.last_statement {
        LastStatement::Running(sql) => ("running", Some(sql.clone())),
        LastStatement::Last(sql) => ("last", Some(sql.clone())),
        LastStatement::NotTold => ("not_told", None),
    };
    let (evidence, lock_mode, lock_object) = match &h.holds {
        Holds::Lock { mode, object } => ("lock", Some(mode.clone()), Some(object.clone())),
        Holds::OpenTransaction => ("open_transaction", None, None),
        Holds::IdleSinceBefore => ("idle_since_before", None, None),
    };
    JsonHolder {
        connection_id: h.id,
        user: h.user.clone(),
        host: h.host.clone(),
        command: h.command.clone(),
        idle_seconds: h.idle_s,
        transaction_seconds: h.trx_age_s,
        statement_kind,
        statement,
        evidence,
        lock_mode,
        lock_object,
        kill: h.kill_statement(),
    }
}
