//! Which server we talk to, detected once at connect; every statement that differs between
//! flavors and versions is chosen here, so the rest of the code asks the flavor, never the version.
//!
//! The monitor's reads are below; the wait functions of the read-after-write strategies are in
//! `waits`, the GTIDs they wait for in `wanted`, and the statements that change replication
//! (sandbox, demo) in `control`.

mod control;
mod waits;
mod wanted;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::gtid::{DomainGtid, GtidList};
use crate::mysql::RawRow;

pub use control::{SourceLink, ThreadControl};
pub use waits::{
    GtidWaitOutcome, ModeFit, ProxyGtidMode, WAIT_RESULT_COLUMN, WRITTEN_GTIDS_COLUMN,
};
pub use wanted::WantedGtids;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Oracle `MySQL` and its builds that keep its dialect (Percona Server).
    Mysql,
    Mariadb,
}

impl Family {
    /// The family's name as its vendor spells it, for people to read.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Mysql => "MySQL",
            Self::Mariadb => "MariaDB",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    #[must_use]
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    #[must_use]
    pub fn at_least(self, major: u32, minor: u32, patch: u32) -> bool {
        self >= Self::new(major, minor, patch)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flavor {
    pub family: Family,
    pub version: Version,
    /// `@@version` as the server reported it, for display.
    pub version_string: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot tell the server flavor from version {version:?} ({comment:?}): expected MySQL 5.7+ or MariaDB 10.x/11.x"
)]
pub struct FlavorError {
    pub version: String,
    pub comment: String,
}

impl Flavor {
    /// Detects from `@@version` and `@@version_comment`. `MariaDB` says so in `@@version`; some
    /// builds put it only in the comment. Old `MariaDB` prefixed `5.5.5-` for replication clients.
    pub fn detect(version: &str, comment: &str) -> Result<Self, FlavorError> {
        let err = || FlavorError {
            version: version.chars().take(80).collect(),
            comment: comment.chars().take(80).collect(),
        };
        let is_mariadb = version.to_ascii_lowercase().contains("mariadb")
            || comment.to_ascii_lowercase().contains("mariadb");
        let numbers = version.strip_prefix("5.5.5-").unwrap_or(version);
        let numbers = numbers.split(['-', '+', ' ']).next().unwrap_or("");
        let mut parts = numbers.split('.').map(str::parse::<u32>);
        let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) else {
            return Err(err());
        };
        let patch = parts.next().and_then(Result::ok).unwrap_or(0);
        let version_obj = Version::new(major, minor, patch);
        let family = if is_mariadb {
            Family::Mariadb
        } else if major >= 5 {
            Family::Mysql
        } else {
            return Err(err());
        };
        Ok(Self {
            family,
            version: version_obj,
            version_string: version.to_owned(),
        })
    }

    fn mysql_at_least(&self, major: u32, minor: u32, patch: u32) -> bool {
        self.family == Family::Mysql && self.version.at_least(major, minor, patch)
    }

    /// Replica status for every channel/connection. `MariaDB`'s `SHOW ALL SLAVES STATUS` covers
    /// multi-source and adds `Connection_name` and `Gtid_Slave_Pos` to each row.
    #[must_use]
    pub fn replica_status_sql(&self) -> &'static str {
        match self.family {
            Family::Mariadb => "SHOW ALL SLAVES STATUS",
            Family::Mysql if self.version.at_least(8, 0, 22) => "SHOW REPLICA STATUS",
            Family::Mysql => "SHOW SLAVE STATUS",
        }
    }

    /// The primary's current binlog file and position (`SHOW MASTER STATUS` is gone in 8.4).
    #[must_use]
    pub fn binlog_status_sql(&self) -> &'static str {
        match self.family {
            Family::Mariadb if self.version.at_least(10, 5, 2) => "SHOW BINLOG STATUS",
            Family::Mysql if self.version.at_least(8, 2, 0) => "SHOW BINARY LOG STATUS",
            _ => "SHOW MASTER STATUS",
        }
    }

    #[must_use]
    pub fn binlog_list_sql(&self) -> &'static str {
        "SHOW BINARY LOGS"
    }

    /// Replicas that registered with this node (`report_host`). Not a liveness signal: the
    /// primary keeps listing a replica whose IO thread stopped.
    #[must_use]
    pub fn replica_hosts_sql(&self) -> &'static str {
        if self.mysql_at_least(8, 0, 22) {
            "SHOW REPLICAS"
        } else {
            "SHOW SLAVE HOSTS"
        }
    }

    /// Server facts that do not change while a connection lives.
    #[must_use]
    pub fn identity_sql(&self) -> &'static str {
        match self.family {
            Family::Mariadb => {
                "SELECT @@server_id AS server_id, @@log_bin AS log_bin, \
                 @@gtid_domain_id AS gtid_domain_id, @@gtid_strict_mode AS gtid_strict_mode"
            }
            Family::Mysql => {
                "SELECT @@server_id AS server_id, @@log_bin AS log_bin, \
                 @@server_uuid AS server_uuid, @@gtid_mode AS gtid_mode"
            }
        }
    }

    /// The GTID of the session's own last write, read on the writing connection right after it
    /// (the heartbeat writer asks it in the write's round trip): `MariaDB`'s `@@last_gtid`.
    /// `None` on `MySQL`, whose session GTID reaches this driver no such way.
    #[must_use]
    pub fn own_last_gtid_sql(&self) -> Option<&'static str> {
        match self.family {
            Family::Mariadb => Some("SELECT @@last_gtid AS last_gtid"),
            Family::Mysql => None,
        }
    }

    /// What [`Self::own_last_gtid_sql`] answered: the session's last GTID; `None` when it is
    /// empty (nothing binary-logged on the session yet), unreadable, or on a flavor without
    /// the statement.
    #[must_use]
    pub fn own_last_gtid(&self, rows: &[RawRow]) -> Option<DomainGtid> {
        self.own_last_gtid_sql()?;
        variable(rows, "last_gtid", DomainGtid::parse)
    }

    /// A replica's applied position alone (`MariaDB`'s `gtid_slave_pos`), the heartbeat
    /// reading between status polls where the position tells; `None` on `MySQL`.
    #[must_use]
    pub fn applied_position_sql(&self) -> Option<&'static str> {
        match self.family {
            Family::Mariadb => Some("SELECT @@global.gtid_slave_pos AS gtid_slave_pos"),
            Family::Mysql => None,
        }
    }

    /// What [`Self::applied_position_sql`] answered, as the position; `None` when unreadable,
    /// or on a flavor without the statement.
    #[must_use]
    pub fn applied_position(&self, rows: &[RawRow]) -> Option<GtidList> {
        self.applied_position_sql()?;
        variable(rows, "gtid_slave_pos", GtidList::parse)
    }

    /// GTID state and the read-only switches, read every poll: both change on failover. The
    /// configured applier workers come along (one variable): a change has the settings read
    /// again at once rather than at their next turn.
    #[must_use]
    pub fn state_sql(&self) -> &'static str {
        match self.family {
            Family::Mariadb => {
                "SELECT @@global.gtid_binlog_pos AS gtid_binlog_pos, \
                 @@global.gtid_slave_pos AS gtid_slave_pos, \
                 @@global.gtid_current_pos AS gtid_current_pos, \
                 @@global.read_only AS read_only, \
                 @@global.slave_parallel_threads AS parallel_workers"
            }
            Family::Mysql if self.version.at_least(8, 0, 26) => {
                "SELECT @@global.gtid_executed AS gtid_executed, \
                 @@global.read_only AS read_only, @@global.super_read_only AS super_read_only, \
                 @@global.replica_parallel_workers AS parallel_workers"
            }
            Family::Mysql => {
                "SELECT @@global.gtid_executed AS gtid_executed, \
                 @@global.read_only AS read_only, @@global.super_read_only AS super_read_only, \
                 @@global.slave_parallel_workers AS parallel_workers"
            }
        }
    }

    /// The health lint's settings (`mysql::Settings`) in one statement, read at connect and
    /// every few minutes, never on the status poll. `log_replica_updates` does not exist on
    /// `MariaDB` 10.11 (`@@` on it is an error), `expire_logs_days` is gone from `MySQL` 8.4.
    #[must_use]
    pub fn settings_sql(&self) -> &'static str {
        // Every family's statement: the common settings, then its own names for the rest.
        macro_rules! settings {
            ($($own:literal),* ; $position_table:literal) => {
                concat!(
                    "SELECT @@global.relay_log_recovery AS relay_log_recovery, ",
                    "@@global.sync_binlog AS sync_binlog, ",
                    "@@global.innodb_flush_log_at_trx_commit AS innodb_flush_log_at_trx_commit, ",
                    "@@global.binlog_format AS binlog_format, @@global.read_only AS read_only, ",
                    "@@global.server_id AS server_id, ",
                    $($own, ", ",)*
                    "(SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql' ",
                    "AND TABLE_NAME = '", $position_table, "') AS position_table_engine"
                )
            };
        }
        match self.family {
            Family::Mariadb => settings!(
                "@@global.log_slave_updates AS log_replica_updates",
                "@@global.gtid_strict_mode AS gtid_strict",
                "@@global.binlog_expire_logs_seconds AS binlog_expire_logs_seconds",
                "@@global.expire_logs_days AS expire_logs_days",
                "@@global.slave_parallel_threads AS parallel_workers",
                "@@global.slave_parallel_mode AS parallel_mode",
                "@@global.slave_net_timeout AS net_timeout",
                "@@global.slave_exec_mode AS exec_mode",
                "@@global.slave_skip_errors AS skip_errors",
                "@@global.relay_log_space_limit AS relay_log_space_limit",
                "(SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = \
                 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE') AS lock_table";
                "gtid_slave_pos"
            ),
            Family::Mysql if self.version.at_least(8, 0, 26) => settings!(
                "@@global.log_replica_updates AS log_replica_updates",
                "@@global.super_read_only AS super_read_only",
                "@@global.enforce_gtid_consistency AS gtid_strict",
                "@@global.binlog_expire_logs_seconds AS binlog_expire_logs_seconds",
                "@@global.replica_parallel_workers AS parallel_workers",
                "@@global.replica_preserve_commit_order AS preserve_commit_order",
                "@@global.replica_net_timeout AS net_timeout",
                "@@global.replica_exec_mode AS exec_mode",
                "@@global.replica_skip_errors AS skip_errors",
                "@@global.relay_log_space_limit AS relay_log_space_limit";
                "slave_relay_log_info"
            ),
            Family::Mysql => settings!(
                "@@global.log_slave_updates AS log_replica_updates",
                "@@global.super_read_only AS super_read_only",
                "@@global.enforce_gtid_consistency AS gtid_strict",
                "@@global.expire_logs_days AS expire_logs_days",
                "@@global.slave_parallel_workers AS parallel_workers",
                "@@global.slave_preserve_commit_order AS preserve_commit_order",
                "@@global.slave_net_timeout AS net_timeout",
                "@@global.slave_exec_mode AS exec_mode",
                "@@global.slave_skip_errors AS skip_errors",
                "@@global.relay_log_space_limit AS relay_log_space_limit";
                "slave_relay_log_info"
            ),
        }
    }

    /// Semi-sync settings: absent rows mean the plugin is not loaded (`MySQL`); the names moved
    /// from master/slave to source/replica with `MySQL` 8.0.26's new plugins. `MariaDB` has them
    /// built in, so the four it needs are read by name, in one row (a fifth of the server's
    /// time for the `SHOW`'s scan of every variable: docs/semisync.md).
    #[must_use]
    pub fn semisync_variables_sql(&self) -> &'static str {
        match self.family {
            Family::Mariadb => {
                "SELECT @@global.rpl_semi_sync_master_enabled AS rpl_semi_sync_master_enabled, \
                 @@global.rpl_semi_sync_slave_enabled AS rpl_semi_sync_slave_enabled, \
                 @@global.rpl_semi_sync_master_timeout AS rpl_semi_sync_master_timeout, \
                 @@global.rpl_semi_sync_master_wait_point AS rpl_semi_sync_master_wait_point"
            }
            Family::Mysql => "SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%'",
        }
    }

    #[must_use]
    pub fn semisync_status_sql(&self) -> &'static str {
        "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'"
    }
}

impl Flavor {
    /// The release series: `MariaDB 10.11` from `MariaDB 10.11.19`.
    #[must_use]
    pub fn series(&self) -> String {
        format!(
            "{} {}.{}",
            self.family.name(),
            self.version.major,
            self.version.minor
        )
    }
}

/// The one variable a `SELECT @@…` answered in `column`, read with `parse`; `None` when absent
/// or unreadable.
fn variable<T, E>(
    rows: &[RawRow],
    column: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Option<T> {
    let text = rows.first()?.optional_text(&[column])?;
    parse(text).ok()
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.family.name(), self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flavor(version: &str, comment: &str) -> Flavor {
        Flavor::detect(version, comment).unwrap()
    }

    #[test]
    fn statements_follow_the_flavor_matrix() {
        let cases = [
            (
                "5.7.44-log",
                "MySQL Community Server (GPL)",
                "SHOW SLAVE STATUS",
                "SHOW MASTER STATUS",
                "SHOW SLAVE HOSTS",
                "MASTER_POS_WAIT",
            ),
            (
                "8.0.21",
                "MySQL Community Server - GPL",
                "SHOW SLAVE STATUS",
                "SHOW MASTER STATUS",
                "SHOW SLAVE HOSTS",
                "MASTER_POS_WAIT",
            ),
            (
                "8.0.36",
                "MySQL Community Server - GPL",
                "SHOW REPLICA STATUS",
                "SHOW MASTER STATUS",
                "SHOW REPLICAS",
                "SOURCE_POS_WAIT",
            ),
            (
                "8.4.3",
                "MySQL Community Server - GPL",
                "SHOW REPLICA STATUS",
                "SHOW BINARY LOG STATUS",
                "SHOW REPLICAS",
                "SOURCE_POS_WAIT",
            ),
            (
                "8.0.35-27",
                "Percona Server (GPL), Release 27",
                "SHOW REPLICA STATUS",
                "SHOW MASTER STATUS",
                "SHOW REPLICAS",
                "SOURCE_POS_WAIT",
            ),
            (
                "10.11.19-MariaDB-0+deb12u1-log",
                "Debian 12",
                "SHOW ALL SLAVES STATUS",
                "SHOW BINLOG STATUS",
                "SHOW SLAVE HOSTS",
                "MASTER_POS_WAIT",
            ),
            (
                "10.4.32-MariaDB",
                "mariadb.org binary distribution",
                "SHOW ALL SLAVES STATUS",
                "SHOW MASTER STATUS",
                "SHOW SLAVE HOSTS",
                "MASTER_POS_WAIT",
            ),
            (
                "5.5.5-10.3.39-MariaDB",
                "",
                "SHOW ALL SLAVES STATUS",
                "SHOW MASTER STATUS",
                "SHOW SLAVE HOSTS",
                "MASTER_POS_WAIT",
            ),
            (
                "11.4.2",
                "MariaDB Server",
                "SHOW ALL SLAVES STATUS",
                "SHOW BINLOG STATUS",
                "SHOW SLAVE HOSTS",
                "MASTER_POS_WAIT",
            ),
        ];
        for (version, comment, replica, binlog, hosts, pos_wait) in cases {
            let f = flavor(version, comment);
            assert_eq!(f.replica_status_sql(), replica, "{version}");
            assert_eq!(f.binlog_status_sql(), binlog, "{version}");
            assert_eq!(f.replica_hosts_sql(), hosts, "{version}");
            assert_eq!(f.pos_wait_function(), pos_wait, "{version}");
        }
        assert_eq!(
            flavor("5.5.5-10.3.39-MariaDB", "").version,
            Version::new(10, 3, 39)
        );
        assert_eq!(flavor("11.4.2", "MariaDB Server").family, Family::Mariadb);
    }

    /// The answers of the flavor's own-GTID and applied-position statements are read here, by
    /// the column the statement names; a flavor without the statement reads none.
    #[test]
    fn the_flavors_gtid_answers_are_read_where_the_statement_is() {
        let row = |column: &str, value: Option<&str>| {
            vec![RawRow::new(vec![(
                column.to_owned(),
                value.map(str::to_owned),
            )])]
        };
        let mariadb = flavor("10.11.19-MariaDB-0+deb12u1-log", "Debian 12");
        let mysql = flavor("8.0.36", "MySQL Community Server - GPL");
        let last = row("last_gtid", Some("0-1-42"));
        assert_eq!(
            mariadb.own_last_gtid(&last),
            DomainGtid::parse("0-1-42").ok()
        );
        assert_eq!(mariadb.own_last_gtid(&row("last_gtid", Some(""))), None);
        assert_eq!(mariadb.own_last_gtid(&row("last_gtid", None)), None);
        assert_eq!(mysql.own_last_gtid(&last), None);
        let applied = row("gtid_slave_pos", Some("0-1-8,1-2-3"));
        assert_eq!(
            mariadb.applied_position(&applied).map(|p| p.to_string()),
            Some("0-1-8,1-2-3".to_owned())
        );
        assert_eq!(
            mariadb.applied_position(&row("gtid_slave_pos", Some("x"))),
            None
        );
        assert_eq!(mariadb.applied_position(&[]), None);
        assert_eq!(mysql.applied_position(&applied), None);
    }

    #[test]
    fn unknown_versions_are_refused_with_the_text() {
        let err = Flavor::detect("banana", "").unwrap_err().to_string();
        assert!(err.contains("banana"), "{err}");
        assert!(Flavor::detect("", "").is_err());
        assert!(Flavor::detect("3.23.1", "").is_err());
    }
}
