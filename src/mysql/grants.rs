//! The least privileges rwtop's monitor user needs, per family. The sandbox grants exactly these
//! and README.md lists them; a test keeps the two in step.

use super::flavor::Family;

/// Global privileges, then rwtop's own schema (heartbeat and probe tables on the primary).
///
/// `MariaDB`: `BINLOG MONITOR` covers SHOW MASTER STATUS / SHOW BINARY LOGS, `SLAVE MONITOR` the
/// replica status, `REPLICATION MASTER ADMIN` only SHOW SLAVE HOSTS (discovery), `PROCESS` the
/// processlist (DDL in flight). `MySQL`: `REPLICATION CLIENT` covers the status statements,
/// `REPLICATION SLAVE` is what SHOW REPLICAS demands (discovery), and `performance_schema` gives
/// a session its own last GTID. `REFERENCES` on every table lets `information_schema` show the
/// account which tables exist and their keys (`table_keys.rs`) and reads no row: without it those
/// views list only the `rwtop` schema.
#[must_use]
pub fn monitor_grants(family: Family, account: &str) -> Vec<String> {
    let global = match family {
        Family::Mariadb => {
            "PROCESS, REFERENCES, BINLOG MONITOR, SLAVE MONITOR, REPLICATION MASTER ADMIN"
        }
        Family::Mysql => "PROCESS, REFERENCES, REPLICATION CLIENT, REPLICATION SLAVE",
    };
    let mut grants = vec![
        format!("GRANT {global} ON *.* TO {account}"),
        format!("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP ON rwtop.* TO {account}"),
    ];
    if family == Family::Mysql {
        grants.push(format!("GRANT SELECT ON performance_schema.* TO {account}"));
    }
    grants
}

/// The account name README.md shows the grants for.
pub const README_ACCOUNT: &str = "'rwtop'@'%'";
