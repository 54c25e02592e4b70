//! The settings the health lint judges (`docs/design.md`, "The health lint"), read at connect
//! and every few minutes in one statement, never on the status poll: they change only when an
//! operator changes them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::flavor::Family;
use super::replica_status::StatusError;
use super::row::{RawRow, parse_bool};

/// One node's replication-safety settings, in flavor-neutral terms. A value the server did not
/// report (an older version, a missing privilege) stays `None` and is not judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SafetySettings {
    pub relay_log_recovery: Option<bool>,
    pub sync_binlog: Option<u64>,
    pub innodb_flush_log_at_trx_commit: Option<u64>,
    /// `log_slave_updates` (`MariaDB`, `MySQL` before 8.0.26) or `log_replica_updates`.
    pub log_replica_updates: Option<bool>,
    pub binlog_format: Option<String>,
    pub read_only: Option<bool>,
    /// `MySQL` only.
    pub super_read_only: Option<bool>,
    pub server_id: Option<u32>,
    /// `gtid_strict_mode` (`MariaDB`) or `enforce_gtid_consistency=ON` (`MySQL`; `WARN` is not).
    pub gtid_strict: Option<bool>,
    /// Binlogs older than this are purged at the next rotation; `None`: kept forever (both
    /// `binlog_expire_logs_seconds` and `expire_logs_days` are 0).
    pub binlog_expire: Option<Duration>,
    /// Engine of the table replication records its applied position in (`mysql.gtid_slave_pos`
    /// on `MariaDB`, `mysql.slave_relay_log_info` on `MySQL`); `None` when not visible.
    pub position_table_engine: Option<String>,
    /// Parallel applier workers (`slave_parallel_threads`, `replica_parallel_workers`); 0: one
    /// applier thread.
    pub parallel_workers: Option<u64>,
    /// `MariaDB`'s `slave_parallel_mode` (each connection reports its own as `Parallel_Mode`).
    pub parallel_mode: Option<String>,
    /// `MySQL`'s `replica_preserve_commit_order`.
    pub preserve_commit_order: Option<bool>,
    /// Whether the node lists its metadata locks for the holders of a waiting DDL
    /// (`lock_holders.rs`): `MariaDB`'s `metadata_lock_info` plugin active. `None` where not
    /// asked (`MySQL` lists them in `performance_schema`).
    #[serde(default)]
    pub lock_table: Option<bool>,
    /// `slave_net_timeout` (`replica_net_timeout`), seconds: how long the IO thread waits for
    /// anything from its source before it takes the link for dead and reconnects. Taken when
    /// the IO thread connects.
    #[serde(default)]
    pub net_timeout: Option<u64>,
    /// `slave_exec_mode` (`replica_exec_mode`): `STRICT` or `IDEMPOTENT`.
    #[serde(default)]
    pub exec_mode: Option<String>,
    /// `slave_skip_errors` (`replica_skip_errors`): `OFF`, or the error numbers the applier
    /// skips (`1062,1032`, `ALL`).
    #[serde(default)]
    pub skip_errors: Option<String>,
    /// `relay_log_space_limit`, bytes; 0: no limit.
    #[serde(default)]
    pub relay_log_space_limit: Option<u64>,
    /// What these settings are called on this node's flavor, for the fixes the lint prints.
    pub names: SettingNames,
    /// This node's copies of rwtop's tables that are not rwtop's definition
    /// (`mysql::own_tables`): rows written above it could stop its channel.
    #[serde(default)]
    pub own_tables: Vec<super::own_tables::Mismatch>,
    /// The node's tables without a primary or unique key (`table_keys.rs`); `None` when not
    /// read (refused, or a recording made before rwtop read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyless_tables: Option<super::KeylessTables>,
}

/// The flavor's names for the settings a fix changes: the lint above prints them and never asks
/// which flavor a node runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SettingNames {
    /// Whose statements the fixes use (`link.rs` builds them).
    pub dialect: Dialect,
    pub log_replica_updates: String,
    pub gtid_strict: String,
    pub read_only: String,
    pub position_table: String,
    pub start_replica: String,
    pub stop_replica: String,
    /// `slave_net_timeout`, `replica_net_timeout`.
    pub net_timeout: String,
    /// `slave_exec_mode`, `replica_exec_mode`.
    pub exec_mode: String,
    /// `slave_skip_errors`, `replica_skip_errors`.
    pub skip_errors: String,
}

/// The statement dialect of a node, for the fixes: `MariaDB`'s named connections and
/// `MASTER_*` options, or `MySQL`'s channels and `SOURCE_*` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    #[default]
    Mariadb,
    Mysql,
}

impl SettingNames {
    #[must_use]
    pub fn of(family: Family) -> Self {
        let (updates, strict, read_only, table, start, stop) = match family {
            Family::Mariadb => (
                "log_slave_updates",
                "gtid_strict_mode",
                "read_only",
                "mysql.gtid_slave_pos",
                "START ALL SLAVES",
                "STOP ALL SLAVES",
            ),
            Family::Mysql => (
                "log_replica_updates",
                "enforce_gtid_consistency",
                "super_read_only",
                "mysql.slave_relay_log_info",
                "START REPLICA",
                "STOP REPLICA",
            ),
        };
        let (dialect, prefix) = match family {
            Family::Mariadb => (Dialect::Mariadb, "slave"),
            Family::Mysql => (Dialect::Mysql, "replica"),
        };
        Self {
            dialect,
            net_timeout: format!("{prefix}_net_timeout"),
            exec_mode: format!("{prefix}_exec_mode"),
            skip_errors: format!("{prefix}_skip_errors"),
            log_replica_updates: updates.to_owned(),
            gtid_strict: strict.to_owned(),
            read_only: read_only.to_owned(),
            position_table: table.to_owned(),
            start_replica: start.to_owned(),
            stop_replica: stop.to_owned(),
        }
    }
}

impl SafetySettings {
    pub fn from_row(row: &RawRow, family: Family) -> Result<Self, StatusError> {
        let seconds = row
            .optional_u64(&["binlog_expire_logs_seconds"])?
            .unwrap_or(0);
        // `expire_logs_days` is a decimal on MariaDB (0.041667 for an hour).
        let days = row
            .optional_text(&["expire_logs_days"])
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|d| d.is_finite() && *d > 0.0)
            .map(|d| Duration::from_secs_f64((d * 86_400.0).min(1e12)));
        let binlog_expire = if seconds > 0 {
            Some(Duration::from_secs(seconds))
        } else {
            days
        };
        let gtid_strict = match family {
            Family::Mariadb => row.optional_bool(&["gtid_strict"])?,
            // enforce_gtid_consistency is OFF, ON or WARN: only ON refuses unsafe statements.
            Family::Mysql => row
                .optional_text(&["gtid_strict"])
                .map(|t| parse_bool(t).unwrap_or(false)),
        };
        Ok(Self {
            relay_log_recovery: row.optional_bool(&["relay_log_recovery"])?,
            sync_binlog: row.optional_u64(&["sync_binlog"])?,
            innodb_flush_log_at_trx_commit: row
                .optional_u64(&["innodb_flush_log_at_trx_commit"])?,
            log_replica_updates: row.optional_bool(&["log_replica_updates"])?,
            binlog_format: row
                .optional_text(&["binlog_format"])
                .map(|t| t.trim().to_ascii_uppercase()),
            read_only: row.optional_bool(&["read_only"])?,
            super_read_only: row.optional_bool(&["super_read_only"])?,
            server_id: row.optional_u32(&["server_id"])?,
            gtid_strict,
            binlog_expire,
            position_table_engine: row
                .optional_text(&["position_table_engine"])
                .map(str::to_owned),
            parallel_workers: row.optional_u64(&["parallel_workers"])?,
            parallel_mode: row
                .optional_text(&["parallel_mode"])
                .map(|m| m.trim().to_owned())
                .filter(|m| !m.is_empty()),
            preserve_commit_order: row.optional_bool(&["preserve_commit_order"])?,
            lock_table: row.optional_bool(&["lock_table"])?,
            net_timeout: row.optional_u64(&["net_timeout"])?,
            exec_mode: word(row, "exec_mode"),
            skip_errors: word(row, "skip_errors"),
            relay_log_space_limit: row.optional_u64(&["relay_log_space_limit"])?,
            names: SettingNames::of(family),
            own_tables: Vec::new(),
            keyless_tables: None,
        })
    }
}

/// A setting's text, trimmed and upper-cased (`idempotent` → `IDEMPOTENT`); empty: `None`.
fn word(row: &RawRow, column: &str) -> Option<String> {
    row.optional_text(&[column])
        .map(|t| t.trim().to_ascii_uppercase())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[(&str, Option<&str>)]) -> RawRow {
        RawRow::of(cells)
    }

    #[test]
    fn mariadb_row_reads_into_settings() {
        let r = row(&[
            ("relay_log_recovery", Some("0")),
            ("sync_binlog", Some("0")),
            ("innodb_flush_log_at_trx_commit", Some("2")),
            ("log_replica_updates", Some("1")),
            ("binlog_format", Some("ROW")),
            ("read_only", Some("1")),
            ("server_id", Some("2")),
            ("gtid_strict", Some("1")),
            ("binlog_expire_logs_seconds", Some("0")),
            ("expire_logs_days", Some("0.041667")),
            ("position_table_engine", Some("InnoDB")),
            ("parallel_workers", Some("4")),
            ("parallel_mode", Some("optimistic")),
            ("lock_table", Some("0")),
            ("net_timeout", Some("60")),
            ("exec_mode", Some("IDEMPOTENT")),
            ("skip_errors", Some("1062,1032")),
            ("relay_log_space_limit", Some("0")),
        ]);
        let s = SafetySettings::from_row(&r, Family::Mariadb).unwrap();
        assert_eq!(s.relay_log_recovery, Some(false));
        assert_eq!(s.innodb_flush_log_at_trx_commit, Some(2));
        assert_eq!(s.gtid_strict, Some(true));
        assert_eq!(s.super_read_only, None);
        assert_eq!(
            (s.parallel_workers, s.parallel_mode.as_deref()),
            (Some(4), Some("optimistic"))
        );
        assert_eq!(s.preserve_commit_order, None);
        assert_eq!(s.lock_table, Some(false));
        assert_eq!(
            (
                s.net_timeout,
                s.exec_mode.as_deref(),
                s.skip_errors.as_deref()
            ),
            (Some(60), Some("IDEMPOTENT"), Some("1062,1032"))
        );
        assert_eq!(s.relay_log_space_limit, Some(0));
        let expire = s.binlog_expire.unwrap().as_secs();
        assert!((3599..=3601).contains(&expire), "{expire}");
    }

    #[test]
    fn kept_forever_and_mysql_warn_is_not_strict() {
        let r = row(&[
            ("binlog_expire_logs_seconds", Some("0")),
            ("expire_logs_days", Some("0")),
            ("gtid_strict", Some("WARN")),
            ("position_table_engine", None),
            ("parallel_workers", Some("8")),
            ("preserve_commit_order", Some("1")),
        ]);
        let s = SafetySettings::from_row(&r, Family::Mysql).unwrap();
        assert_eq!(s.binlog_expire, None);
        assert_eq!(s.gtid_strict, Some(false));
        assert_eq!(s.position_table_engine, None);
        // Not read (an older recording, a build without them): cannot tell.
        assert_eq!(
            (
                s.net_timeout,
                s.exec_mode,
                s.skip_errors,
                s.relay_log_space_limit
            ),
            (None, None, None, None)
        );
        assert_eq!(s.names.net_timeout, "replica_net_timeout");
        assert_eq!(
            (s.parallel_workers, s.preserve_commit_order, s.parallel_mode),
            (Some(8), Some(true), None)
        );
    }
}
