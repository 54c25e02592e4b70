//! Which sessions hold the lock a DDL waits for, from one holder read's rows: a pure function,
//! the same for every flavor once the rows are typed.
//!
//! With a lock table the holders are certain: `MySQL` lists the waiter's pending lock, and the
//! holders are the other threads granted a lock on that object; `MariaDB`'s plugin lists only
//! granted locks, so the object comes from the wait (the tables the statement names for a table
//! metadata lock; the backup lock's blocking modes for a backup lock). Without one, a table
//! metadata lock's holders are the open transactions older than the DDL, and any lock's are the
//! client sessions idle since before it began (rwtop's own sessions, the appliers and the
//! sessions waiting themselves ruled out): suspects, marked as such.

use super::{
    Blockers, HolderSource, Holds, Kill, LastStatement, LockHolder, LockRows, MdlRow, ThreadRow,
};
use crate::mysql::Family;
use crate::mysql::processlist::DdlStatement;

/// Named at most: a pool of idle sessions should not flood the banner.
const MOST: usize = 8;

/// `MariaDB`'s backup-lock modes that keep a DDL waiting: `FLUSH TABLES WITH READ LOCK` (both
/// steps) and `BACKUP STAGE BLOCK_DDL` and later. Every statement also holds one of the others
/// (`MDL_BACKUP_DML`, `MDL_BACKUP_DDL`, …), which block no DDL.
const BLOCKING_BACKUP_MODES: &[&str] = &[
    "MDL_BACKUP_FTWRL1",
    "MDL_BACKUP_FTWRL2",
    "MDL_BACKUP_WAIT_DDL",
    "MDL_BACKUP_WAIT_COMMIT",
    "MDL_BACKUP_BLOCK_DDL",
];

/// The holders of the lock `waiter` waits for; `None` when it waits for none.
#[must_use]
pub fn name_holders(waiter: &DdlStatement, rows: &LockRows) -> Option<Blockers> {
    let lock = waiter.waiting_for.as_deref()?;
    let waiter_db = rows
        .threads
        .iter()
        .find(|t| t.id == waiter.id)
        .and_then(|t| t.db.as_deref());
    let mut named: Vec<(u64, Holds)> = Vec::new();
    let source = if let Some(locks) = &rows.locks {
        named = from_lock_table(waiter, lock, waiter_db, locks);
        match rows.family {
            Some(Family::Mysql) => HolderSource::PerformanceSchema,
            _ => HolderSource::MetadataLockInfo,
        }
    } else {
        let candidates = rows.threads.iter().filter(|t| suspect(t, waiter));
        let table_lock = lock == "table metadata lock";
        for thread in candidates {
            let trx = trx_age(rows, thread.id);
            let since_before = |age: u64| waiter.applier || age >= waiter.elapsed_s;
            if table_lock && trx.is_some_and(since_before) {
                named.push((thread.id, Holds::OpenTransaction));
            } else if thread.command == "Sleep" && thread.time_s >= waiter.elapsed_s {
                named.push((thread.id, Holds::IdleSinceBefore));
            }
        }
        HolderSource::TransactionsAndProcesslist
    };
    let mut holders: Vec<LockHolder> = named
        .into_iter()
        .filter_map(|(id, holds)| holder(rows, id, holds))
        .collect();
    holders.sort_by_key(|h| {
        let rank = match h.holds {
            Holds::Lock { .. } => 0,
            Holds::OpenTransaction => 1,
            Holds::IdleSinceBefore => 2,
        };
        (rank, std::cmp::Reverse(h.trx_age_s.or(h.idle_s)), h.id)
    });
    holders.dedup_by_key(|h| h.id);
    holders.truncate(MOST);
    Some(Blockers { source, holders })
}

/// A thread that may hold the lock when no lock table tells: a client's session, not rwtop's,
/// not the waiter, not itself waiting for a lock.
fn suspect(thread: &ThreadRow, waiter: &DdlStatement) -> bool {
    let client = thread
        .user
        .as_deref()
        .is_some_and(|u| u != "system user" && u != "event_scheduler");
    let waiting = thread
        .state
        .as_deref()
        .is_some_and(|s| s.starts_with("Waiting for") && s.ends_with(" lock"));
    client && !thread.own && thread.id != waiter.id && !waiting
}

fn trx_age(rows: &LockRows, id: u64) -> Option<u64> {
    rows.trx
        .as_ref()?
        .iter()
        .find(|t| t.thread_id == id)
        .map(|t| t.age_s)
}

/// The holders a lock table names, with the lock that shows it.
fn from_lock_table(
    waiter: &DdlStatement,
    lock: &str,
    waiter_db: Option<&str>,
    locks: &[MdlRow],
) -> Vec<(u64, Holds)> {
    let others = || {
        locks
            .iter()
            .filter(|l| l.granted && l.thread_id != waiter.id)
    };
    let pending: Vec<&MdlRow> = locks
        .iter()
        .filter(|l| !l.granted && l.thread_id == waiter.id)
        .collect();
    let found: Vec<&MdlRow> = if pending.is_empty() {
        match lock {
            "table metadata lock" => {
                let mut tables = tables_named(&waiter.statement, waiter_db);
                // MariaDB lists the tables the waiter already holds a lesser lock on.
                tables.extend(
                    locks
                        .iter()
                        .filter(|l| l.thread_id == waiter.id && is_table(l))
                        .filter_map(|l| Some((l.schema.clone(), l.name.clone()?))),
                );
                others()
                    .filter(|l| is_table(l))
                    .filter(|l| tables.iter().any(|t| same_table(t, l)))
                    .collect()
            }
            "backup lock" => others()
                .filter(|l| BLOCKING_BACKUP_MODES.contains(&l.mode.as_str()))
                .collect(),
            _ => Vec::new(),
        }
    } else {
        // MySQL names the object the waiter waits for.
        others()
            .filter(|l| {
                pending
                    .iter()
                    .any(|p| p.kind == l.kind && p.schema == l.schema && p.name == l.name)
            })
            .collect()
    };
    found
        .into_iter()
        .map(|l| {
            let object = match (&l.schema, &l.name) {
                (Some(s), Some(n)) => format!("{s}.{n}"),
                (None, Some(n)) | (Some(n), None) => n.clone(),
                (None, None) => l.kind.to_ascii_lowercase(),
            };
            let holds = Holds::Lock {
                mode: l.mode.clone(),
                object,
            };
            (l.thread_id, holds)
        })
        .collect()
}

fn is_table(lock: &MdlRow) -> bool {
    lock.kind.eq_ignore_ascii_case("Table metadata lock") || lock.kind.eq_ignore_ascii_case("TABLE")
}

/// A named table against a lock's; a name with no schema (an applier's, whose default schema
/// the processlist does not show) matches the name in any schema.
fn same_table((schema, name): &(Option<String>, String), lock: &MdlRow) -> bool {
    let name_matches = lock
        .name
        .as_deref()
        .is_some_and(|n| n.eq_ignore_ascii_case(name));
    let schema_matches = match (schema, &lock.schema) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => true,
    };
    name_matches && schema_matches
}

/// The holder of connection `id` as the thread list shows it; `None` when it has gone.
fn holder(rows: &LockRows, id: u64, holds: Holds) -> Option<LockHolder> {
    let thread = rows.threads.iter().find(|t| t.id == id)?;
    let trx_age_s = trx_age(rows, id);
    let sleeping = thread.command == "Sleep";
    let last_statement = match (&thread.info, &thread.last_sql) {
        (Some(now), _) if !sleeping => LastStatement::Running(now.clone()),
        (_, Some(last)) => LastStatement::Last(last.clone()),
        _ => LastStatement::NotTold,
    };
    let applier = thread.user.as_deref().is_none_or(|u| u == "system user");
    let kill = if applier {
        Kill::NotOffered
    } else if !sleeping && trx_age_s.is_none() && !matches!(holds, Holds::IdleSinceBefore) {
        Kill::Query
    } else {
        Kill::Connection
    };
    let host = thread.host.as_deref().unwrap_or_default();
    // `10.0.0.5:51234` → `10.0.0.5`; an IPv6 address keeps its colons but for the port.
    let host = match host.rsplit_once(':') {
        Some((addr, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !port.is_empty() => addr,
        _ => host,
    };
    Some(LockHolder {
        id,
        user: thread.user.clone().unwrap_or_else(|| "system user".into()),
        host: host.to_owned(),
        command: thread.command.clone(),
        idle_s: sleeping.then_some(thread.time_s),
        trx_age_s,
        last_statement,
        holds,
        kill,
    })
}

/// The tables a DDL statement names (`ALTER TABLE db.t`, both sides of each `RENAME TABLE` pair,
/// `CREATE INDEX … ON t`, …), each with its schema (`default_db` where it names none).
#[must_use]
pub fn tables_named(statement: &str, default_db: Option<&str>) -> Vec<(Option<String>, String)> {
    let mut text = statement.trim_start();
    while let Some(rest) = text.strip_prefix("/*") {
        text = rest
            .split_once("*/")
            .map_or("", |(_, after)| after)
            .trim_start();
    }
    let spaced = text
        .replace(',', " , ")
        .replace('(', " ( ")
        .replace(';', " ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let is = |i: usize, word: &str| upper.get(i).is_some_and(|w| w == word);
    let mut names: Vec<&str> = Vec::new();
    match upper.first().map(String::as_str) {
        Some("RENAME") => {
            // RENAME TABLE a TO b, c TO d
            let mut i = 2;
            while let Some(word) = words.get(i) {
                if !matches!(upper[i].as_str(), "TO" | "," | "WAIT" | "NOWAIT") {
                    names.push(*word);
                }
                i += 1;
            }
        }
        Some("CREATE" | "DROP") => {
            if let Some(on) = upper.iter().position(|w| w == "ON") {
                names.extend(words.get(on + 1).copied());
            }
        }
        Some("ALTER" | "OPTIMIZE" | "REPAIR" | "TRUNCATE" | "ANALYZE") => {
            let mut i = 1;
            while upper.get(i).is_some_and(|w| {
                matches!(
                    w.as_str(),
                    "ONLINE"
                        | "IGNORE"
                        | "TABLE"
                        | "NO_WRITE_TO_BINLOG"
                        | "LOCAL"
                        | "IF"
                        | "EXISTS"
                )
            }) {
                i += 1;
            }
            // OPTIMIZE TABLE a, b
            while let Some(word) = words.get(i) {
                names.push(*word);
                if !(upper[0] != "ALTER" && is(i + 1, ",")) {
                    break;
                }
                i += 2;
            }
        }
        _ => {}
    }
    names
        .into_iter()
        .filter_map(|name| {
            let name = name.trim_end_matches(',');
            let (schema, table) = match name.split_once('.') {
                Some((s, t)) => (Some(unquote(s)), unquote(t)),
                None => (default_db.map(str::to_owned), unquote(name)),
            };
            (!table.is_empty()).then_some((schema, table))
        })
        .collect()
}

fn unquote(name: &str) -> String {
    name.trim_matches('`').to_owned()
}

#[cfg(test)]
#[path = "naming_tests.rs"]
mod tests;
