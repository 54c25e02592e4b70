//! Who holds the lock a waiting schema change waits for: the sessions to name, each with the
//! exact `KILL` that frees the lock. Read only while a scan shows a DDL waiting, on the poller's
//! own connection, in one round trip of up to three statements per flavor:
//!
//! - the threads (`MariaDB`'s `information_schema.PROCESSLIST`, `MySQL`'s
//!   `performance_schema.threads` with each thread's last statement);
//! - `information_schema.INNODB_TRX`: the open transactions and their age;
//! - the metadata locks where the server lists them: `MariaDB`'s `METADATA_LOCK_INFO` (the
//!   `metadata_lock_info` plugin; granted locks only), `MySQL`'s
//!   `performance_schema.metadata_locks` (granted and pending). Last in the round trip, so a
//!   server without it (the plugin not installed) still answers the first two.
//!
//! Which sessions those rows name is worked out in `lock_holders/naming.rs`.

mod naming;

use serde::{Deserialize, Serialize};

use super::conn::{NodeConn, SqlError, parse_answer};
use super::flavor::{Family, Flavor};
use super::processlist::STATEMENT_CHARS;
use super::replica_status::StatusError;
use super::row::RawRow;
use crate::units;

pub use naming::{name_holders, tables_named};

/// What the holders of a waiting DDL's lock are, as far as the node could tell.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Blockers {
    /// Where the names came from.
    pub source: HolderSource,
    /// Surest first; empty when nothing the node reports holds the lock.
    pub holders: Vec<LockHolder>,
}

/// The cheapest source that told who holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HolderSource {
    /// `MariaDB`'s `information_schema.METADATA_LOCK_INFO` (plugin `metadata_lock_info`).
    MetadataLockInfo,
    /// `MySQL`'s `performance_schema.metadata_locks`.
    PerformanceSchema,
    /// No lock table: open transactions (`INNODB_TRX`) and idle sessions (the processlist).
    #[default]
    TransactionsAndProcesslist,
}

impl HolderSource {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::MetadataLockInfo => "metadata_lock_info",
            Self::PerformanceSchema => "performance_schema.metadata_locks",
            Self::TransactionsAndProcesslist => "INNODB_TRX and the processlist",
        }
    }
}

/// A session that holds (or, where the server lists no locks, most likely holds) the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// The connection id (`KILL` takes it).
    pub id: u64,
    pub user: String,
    /// The client's host as the server shows it, without the port.
    pub host: String,
    /// `Sleep`, `Query`, …
    pub command: String,
    /// Seconds since its last statement ended, while it sleeps; `None` while it runs one.
    pub idle_s: Option<u64>,
    /// Seconds since its open transaction started; `None` without one (or where not known).
    pub trx_age_s: Option<u64>,
    pub last_statement: LastStatement,
    /// What shows that it holds the lock.
    pub holds: Holds,
    /// The statement that frees the lock.
    pub kill: Kill,
}

/// A holder's last statement, where the server can tell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "text")]
pub enum LastStatement {
    /// It is running this statement now.
    Running(String),
    /// Idle: the last statement it ran (`MySQL`'s `events_statements_current`).
    Last(String),
    /// Idle, and the server keeps no last statement of an idle session (`MariaDB` without
    /// `performance_schema`).
    NotTold,
}

/// The evidence that a session holds the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Holds {
    /// The server's lock table lists it holding `mode` on `object` (`rwtop.t`, `backup`).
    Lock { mode: String, object: String },
    /// No lock table: an open transaction started before the DDL (which tables it touched is
    /// not told).
    OpenTransaction,
    /// No lock table: a session idle since before the DDL began, left when every other session
    /// is ruled out (how `LOCK TABLES`, `FLUSH TABLES WITH READ LOCK` and `BACKUP STAGE` holders
    /// show without one).
    IdleSinceBefore,
}

impl Holds {
    /// Named by the server's lock table, not by elimination.
    #[must_use]
    pub fn is_certain(&self) -> bool {
        matches!(self, Self::Lock { .. })
    }
}

/// How to free the lock a holder holds. Metadata locks of a transaction, `LOCK TABLES`,
/// `FLUSH TABLES WITH READ LOCK` and backup stages belong to the connection, not to a running
/// statement: `KILL QUERY` would leave an idle transaction (and its locks) in place, so those
/// take `KILL <id>` (`KILL CONNECTION`: the transaction rolls back, every lock is released).
/// Only a statement running outside any transaction holds its lock just while it runs; ending
/// that statement (`KILL QUERY <id>`) frees the lock and keeps the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kill {
    Connection,
    Query,
    /// A replication thread: killing it stops replication, so no `KILL` is offered.
    NotOffered,
}

/// The statement that frees a holder's lock (`KILL <id>` is `KILL CONNECTION`, the same on both
/// flavors); `None` for a replication thread.
#[must_use]
pub fn kill_sql(kill: Kill, id: u64) -> Option<String> {
    match kill {
        Kill::Connection => Some(format!("KILL {id}")),
        Kill::Query => Some(format!("KILL QUERY {id}")),
        Kill::NotOffered => None,
    }
}

/// The user connection `id` belongs to now (no row once it has gone): checked right before a
/// `KILL`, so an id that has changed hands is not killed.
#[must_use]
pub fn session_user_sql(id: u64) -> String {
    format!("SELECT {MARKER} USER FROM information_schema.PROCESSLIST WHERE ID = {id}")
}

impl LockHolder {
    /// The exact statement that frees the lock, `None` where none is offered.
    #[must_use]
    pub fn kill_statement(&self) -> Option<String> {
        kill_sql(self.kill, self.id)
    }

    /// `app@10.0.0.5`
    #[must_use]
    pub fn account(&self) -> String {
        format!("{}@{}", self.user, self.host)
    }

    /// The holder in one line, as the banner, the alert and the detail pane print it:
    /// `#1234 app@10.0.0.5, idle 1m35s in a transaction open 1m37s: KILL 1234`.
    #[must_use]
    pub fn summary(&self) -> String {
        let doing = match self.idle_s {
            Some(idle) => format!("idle {}", units::secs(idle)),
            None => format!("running {}", self.command),
        };
        let trx = self
            .trx_age_s
            .map(|age| format!(" in a transaction open {}", units::secs(age)))
            .unwrap_or_default();
        let suspect = match &self.holds {
            Holds::Lock { .. } => "",
            Holds::OpenTransaction => " (suspect: open since before the DDL)",
            Holds::IdleSinceBefore => " (suspect: idle since before the DDL)",
        };
        let kill = self
            .kill_statement()
            .unwrap_or_else(|| "a replication thread, no KILL offered".to_owned());
        format!(
            "#{} {}, {doing}{trx}{suspect}: {kill}",
            self.id,
            self.account()
        )
    }

    /// What shows it holds the lock, and its last statement: the detail pane's second line.
    #[must_use]
    pub fn evidence(&self) -> String {
        let holds = match &self.holds {
            Holds::Lock { mode, object } => format!("holds {mode} on {object}"),
            Holds::OpenTransaction => {
                "an open transaction older than the DDL (its tables are not told without a \
                 lock table)"
                    .to_owned()
            }
            Holds::IdleSinceBefore => {
                "idle since before the DDL began, every other session ruled out".to_owned()
            }
        };
        let last = match &self.last_statement {
            LastStatement::Running(sql) => format!("running {}", units::quoted(sql)),
            LastStatement::Last(sql) => format!("last statement {}", units::quoted(sql)),
            LastStatement::NotTold => {
                "its last statement is not told (the server keeps none for an idle session)"
                    .to_owned()
            }
        };
        format!("{holds}; {last}")
    }
}

impl Blockers {
    /// `blocked by #1234 app@10.0.0.5, idle 1m35s …: KILL 1234 (+2 more)`, or that the source
    /// found nobody.
    #[must_use]
    pub fn summary(&self) -> String {
        match self.holders.split_first() {
            None => format!("no holder found in {}", self.source.name()),
            Some((first, [])) => format!("blocked by {}", first.summary()),
            Some((first, rest)) => {
                format!("blocked by {} (+{} more)", first.summary(), rest.len())
            }
        }
    }
}

/// A thread as the holder read shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    pub id: u64,
    /// `None` for a server thread (`MySQL`'s background threads).
    pub user: Option<String>,
    pub host: Option<String>,
    pub db: Option<String>,
    pub command: String,
    pub time_s: u64,
    pub state: Option<String>,
    pub info: Option<String>,
    /// Logged in as rwtop's own user (its pollers, writer, probes).
    pub own: bool,
    /// The last statement it ran (`MySQL` only).
    pub last_sql: Option<String>,
}

/// An open `InnoDB` transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrxRow {
    pub thread_id: u64,
    pub age_s: u64,
}

/// A metadata lock: granted, or (`MySQL` only) pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MdlRow {
    pub thread_id: u64,
    /// `Table metadata lock`, `Backup lock` (`MariaDB`); `TABLE`, `GLOBAL`, `BACKUP LOCK` (`MySQL`).
    pub kind: String,
    /// `MDL_SHARED_READ` (`MariaDB`), `SHARED_READ` (`MySQL`).
    pub mode: String,
    pub schema: Option<String>,
    pub name: Option<String>,
    pub granted: bool,
}

/// One holder read's rows, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockRows {
    pub threads: Vec<ThreadRow>,
    /// `None`: not readable (a missing grant).
    pub trx: Option<Vec<TrxRow>>,
    /// `None`: the server lists no metadata locks (plugin missing, or refused).
    pub locks: Option<Vec<MdlRow>>,
    pub family: Option<Family>,
}

/// Marks the holder read so the processlist scan and the read itself leave it out.
pub const MARKER: &str = "/* rwtop lock holders */";

/// The holder read's statements for `flavor`, in order: threads, transactions, locks.
#[must_use]
pub fn holders_sql(flavor: &Flavor) -> [String; 3] {
    let own = "SUBSTRING_INDEX(USER(), '@', 1)";
    let trx = format!(
        "SELECT {MARKER} trx_mysql_thread_id AS ID, \
         TIMESTAMPDIFF(SECOND, trx_started, NOW()) AS AGE FROM information_schema.INNODB_TRX"
    );
    match flavor.family {
        Family::Mariadb => [
            format!(
                "SELECT {MARKER} ID, USER, HOST, DB, COMMAND, TIME, STATE, \
                 LEFT(INFO, {STATEMENT_CHARS}) AS INFO, USER = {own} AS OWN \
                 FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"
            ),
            trx,
            format!(
                "SELECT {MARKER} THREAD_ID AS ID, LOCK_TYPE AS KIND, LOCK_MODE AS MODE, \
                 TABLE_SCHEMA AS SCHEMA_NAME, TABLE_NAME AS NAME, 'GRANTED' AS STATUS \
                 FROM information_schema.METADATA_LOCK_INFO"
            ),
        ],
        Family::Mysql => [
            format!(
                "SELECT {MARKER} t.PROCESSLIST_ID AS ID, t.PROCESSLIST_USER AS USER, \
                 t.PROCESSLIST_HOST AS HOST, t.PROCESSLIST_DB AS DB, \
                 t.PROCESSLIST_COMMAND AS COMMAND, t.PROCESSLIST_TIME AS TIME, \
                 t.PROCESSLIST_STATE AS STATE, LEFT(t.PROCESSLIST_INFO, {STATEMENT_CHARS}) AS INFO, \
                 t.PROCESSLIST_USER <=> {own} AS OWN, LEFT(e.SQL_TEXT, {STATEMENT_CHARS}) AS LAST_SQL \
                 FROM performance_schema.threads t \
                 LEFT JOIN performance_schema.events_statements_current e \
                 ON e.THREAD_ID = t.THREAD_ID AND e.NESTING_EVENT_ID IS NULL \
                 WHERE t.PROCESSLIST_ID IS NOT NULL AND t.PROCESSLIST_ID <> CONNECTION_ID()"
            ),
            trx,
            format!(
                "SELECT {MARKER} t.PROCESSLIST_ID AS ID, m.OBJECT_TYPE AS KIND, \
                 m.LOCK_TYPE AS MODE, m.OBJECT_SCHEMA AS SCHEMA_NAME, m.OBJECT_NAME AS NAME, \
                 m.LOCK_STATUS AS STATUS FROM performance_schema.metadata_locks m \
                 JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID \
                 WHERE t.PROCESSLIST_ID IS NOT NULL"
            ),
        ],
    }
}

/// A value that should be a count of seconds: negative ones (clock steps) count as 0.
fn seconds(row: &RawRow, column: &str) -> Result<u64, StatusError> {
    match row.optional_text(&[column]).map(str::trim) {
        Some(text) if text.starts_with('-') && text[1..].bytes().all(|b| b.is_ascii_digit()) => {
            Ok(0)
        }
        _ => Ok(row.optional_u64(&[column])?.unwrap_or(0)),
    }
}

impl ThreadRow {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        let text = |column: &str| row.optional_text(&[column]).map(str::to_owned);
        Ok(Self {
            id: row.u64(&["ID"])?,
            user: text("USER"),
            host: text("HOST"),
            db: text("DB").filter(|db| !db.is_empty()),
            command: text("COMMAND").unwrap_or_default(),
            time_s: seconds(row, "TIME")?,
            state: text("STATE").filter(|s| !s.is_empty()),
            info: text("INFO"),
            own: row.optional_bool(&["OWN"])?.unwrap_or(false),
            last_sql: text("LAST_SQL"),
        })
    }
}

impl TrxRow {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            thread_id: row.u64(&["ID"])?,
            age_s: seconds(row, "AGE")?,
        })
    }
}

impl MdlRow {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        let text = |column: &str| {
            row.optional_text(&[column])
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let required = |column: &str| -> Result<String, StatusError> {
            row.text(&[column])?.map(str::to_owned).ok_or_else(|| {
                super::RowError::UnexpectedNull {
                    column: column.to_owned(),
                    expected: "a lock's name",
                }
                .into()
            })
        };
        let status = required("STATUS")?;
        Ok(Self {
            thread_id: row.u64(&["ID"])?,
            kind: required("KIND")?,
            mode: required("MODE")?,
            schema: text("SCHEMA_NAME"),
            name: text("NAME"),
            granted: status.eq_ignore_ascii_case("GRANTED"),
        })
    }
}

impl LockRows {
    /// The three statements' rows parsed (`locks` and `trx` `None` where not read).
    pub fn from_rows(
        family: Family,
        threads: &[RawRow],
        trx: Option<&[RawRow]>,
        locks: Option<&[RawRow]>,
    ) -> Result<Self, StatusError> {
        let threads = threads
            .iter()
            .filter(|r| {
                !r.optional_text(&["INFO"])
                    .is_some_and(|i| i.contains(MARKER))
            })
            .map(ThreadRow::from_row)
            .collect::<Result<_, _>>()?;
        let trx = trx
            .map(|rows| rows.iter().map(TrxRow::from_row).collect())
            .transpose()?;
        let locks = locks
            .map(|rows| rows.iter().map(MdlRow::from_row).collect())
            .transpose()?;
        Ok(Self {
            threads,
            trx,
            locks,
            family: Some(family),
        })
    }
}

impl NodeConn {
    /// One holder read ([`holders_sql`]) in one round trip. A refused lock table (the plugin
    /// missing, a grant) or transaction table leaves that part `None`; a refused thread list
    /// is this read's error.
    pub async fn lock_rows(&mut self) -> Result<LockRows, SqlError> {
        let flavor = self.flavor().clone();
        let sqls = holders_sql(&flavor);
        let asked: Vec<&str> = sqls.iter().map(String::as_str).collect();
        let (sets, error) = self.query_sets_kept(&asked).await;
        if let Some(err) = error {
            let refused = matches!(err, SqlError::Server { .. });
            // The threads are needed; the two tables after them may be missing.
            if !refused || sets.is_empty() {
                return Err(err);
            }
        }
        let mut sets = sets.into_iter();
        let threads = sets.next().unwrap_or_default();
        let trx = sets.next();
        let locks = sets.next();
        let addr = self.address().to_owned();
        parse_answer(
            &addr,
            &sqls[0],
            LockRows::from_rows(flavor.family, &threads, trx.as_deref(), locks.as_deref()),
        )
    }
}

#[cfg(test)]
mod tests;
