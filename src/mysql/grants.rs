//! The privileges rwtop needs, per family and per use, each with what it is for and what goes
//! off without it: the one list that `rwtop grants` prints, the sandbox grants, README shows and
//! the connect-time check compares with what the server says the account holds (`account.rs`).

mod account;

use serde::{Deserialize, Serialize};

pub use account::{AccountGrants, GRANTS_SQL};

use super::flavor::Family;

/// Where a privilege is granted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `*.*`
    Global,
    /// `db.*`
    Schema(String),
    /// `db.table`
    Table(String, String),
}

impl Scope {
    /// As a `GRANT` names it: a plain lower-case name bare (`rwtop.*`), any other quoted.
    #[must_use]
    pub fn sql(&self) -> String {
        match self {
            Self::Global => "*.*".to_owned(),
            Self::Schema(db) => format!("{}.*", ident(db)),
            Self::Table(db, table) => format!("{}.{}", ident(db), ident(table)),
        }
    }
}

fn ident(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        name.to_owned()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

/// What one run of rwtop does on a server, which decides the privileges it needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent features, each on or off, not a state machine"
)]
pub struct Uses {
    /// The heartbeat writer and test reads: rows in rwtop's own schema (not `--read-only`).
    pub writes: bool,
    /// Finding replicas through `SHOW SLAVE HOSTS` / `SHOW REPLICAS`.
    pub discovery: bool,
    /// Read-only mode's pt-heartbeat table, `db.table`.
    pub pt_heartbeat: Option<String>,
    /// `[headroom] read_disks`: `MariaDB`'s `information_schema.DISKS`.
    pub disks: bool,
    /// `[ddl] allow_kill`: killing a session that blocks a waiting DDL.
    pub kill: bool,
    /// Schemas where online schema change runs are to be followed (`docs/osc.md`).
    pub osc_schemas: Vec<String>,
}

/// The two ways to run rwtop that `rwtop grants --mode` prints the grants for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `rwtop --read-only`: writes nothing anywhere, lag from pt-heartbeat's table.
    ReadOnly,
    /// The default: the monitor, the heartbeat writer on every root and test reads.
    Full,
}

impl Mode {
    /// What a run in this mode does, discovery on (the default); the optional features off.
    #[must_use]
    pub fn uses(self, pt_heartbeat: &str) -> Uses {
        match self {
            Self::ReadOnly => Uses {
                discovery: true,
                pt_heartbeat: Some(pt_heartbeat.to_owned()),
                ..Uses::default()
            },
            Self::Full => Uses {
                writes: true,
                discovery: true,
                ..Uses::default()
            },
        }
    }
}

/// One privilege rwtop needs: where, what it is for, and what goes off without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub privilege: &'static str,
    pub scope: Scope,
    /// What rwtop reads or writes with it.
    pub used_for: &'static str,
    /// What goes off without it; `None` where nothing does on a server set up as
    /// docs/grants.md says (the privilege is not checked at connect).
    pub off: Option<&'static str>,
}

/// Every privilege `uses` needs on a server of `family`, in the order `GRANT` lists them.
#[must_use]
pub fn needs(family: Family, uses: &Uses) -> Vec<Need> {
    let mut out = Vec::new();
    let mut need = |privilege, scope: &Scope, used_for, off| {
        out.push(Need {
            privilege,
            scope: scope.clone(),
            used_for,
            off,
        });
    };
    monitor(family, uses, &mut need);
    optional(family, uses, &mut need);
    out
}

/// How `needs` adds one privilege: name, scope, what it is for, what goes off without it.
trait Add: FnMut(&'static str, &Scope, &'static str, Option<&'static str>) {}
impl<F: FnMut(&'static str, &Scope, &'static str, Option<&'static str>)> Add for F {}

/// The monitor's global privileges, every run's.
fn monitor(family: Family, uses: &Uses, need: &mut impl Add) {
    let global = Scope::Global;
    need(
        "PROCESS",
        &global,
        "the processlist and InnoDB's transactions: DDL in flight, who blocks it, what the \
         appliers apply",
        Some("DDL and its blockers are not seen (the processlist shows rwtop's own sessions only)"),
    );
    need(
        "REFERENCES",
        &global,
        "information_schema's list of tables and keys (reads no row)",
        Some(
            "tables without a key and online schema change tools' tables are not seen outside \
             rwtop's schema",
        ),
    );
    match family {
        Family::Mariadb => {
            need(
                "BINLOG MONITOR",
                &global,
                "SHOW BINLOG STATUS and SHOW BINARY LOGS",
                Some("polls of a node that replicas read from fail (binlog position and list)"),
            );
            need(
                "SLAVE MONITOR",
                &global,
                "SHOW ALL SLAVES STATUS",
                Some("every poll fails (SHOW ALL SLAVES STATUS, asked of every node)"),
            );
            if uses.discovery {
                need(
                    "REPLICATION MASTER ADMIN",
                    &global,
                    "SHOW SLAVE HOSTS (discovery)",
                    Some("replicas are not discovered (SHOW SLAVE HOSTS)"),
                );
            }
        }
        Family::Mysql => {
            need(
                "REPLICATION CLIENT",
                &global,
                "SHOW REPLICA STATUS, SHOW BINARY LOG STATUS and SHOW BINARY LOGS",
                Some("every poll fails (replication and binlog status)"),
            );
            if uses.discovery {
                need(
                    "REPLICATION SLAVE",
                    &global,
                    "SHOW REPLICAS (discovery)",
                    Some("replicas are not discovered (SHOW REPLICAS)"),
                );
            }
        }
    }
}

/// The privileges of the heartbeat's mode and of the features a run opts into.
fn optional(family: Family, uses: &Uses, need: &mut impl Add) {
    let global = Scope::Global;
    if uses.disks && family == Family::Mariadb {
        need(
            "FILE",
            &global,
            "information_schema.DISKS (the disks plugin lists disks only to FILE)",
            Some("free disk space is not read ([headroom] read_disks)"),
        );
    }
    if uses.kill {
        need(
            match family {
                Family::Mariadb => "CONNECTION ADMIN",
                Family::Mysql => "CONNECTION_ADMIN",
            },
            &global,
            "KILL of another user's session that blocks a waiting DDL",
            None,
        );
    }
    if uses.writes {
        own_schema(need);
    }
    if let Some(table) = &uses.pt_heartbeat {
        let (db, name) = table.split_once('.').unwrap_or(("", table));
        need(
            "SELECT",
            &Scope::Table(db.to_owned(), name.to_owned()),
            "pt-heartbeat's rows (read-only mode's lag)",
            Some("lag is unknown on every channel (pt-heartbeat's table cannot be read)"),
        );
    }
    if family == Family::Mysql {
        need(
            "SELECT",
            &Scope::Schema("performance_schema".to_owned()),
            "a session's own last GTID, the appliers' workers, threads and metadata locks",
            Some("appliers, the lag split and lock holders are not seen (performance_schema)"),
        );
    }
    for schema in &uses.osc_schemas {
        let scope = Scope::Schema(schema.clone());
        need(
            "SELECT",
            &scope,
            "gh-ost's changelog and Spirit's checkpoint rows",
            None,
        );
        need(
            "TRIGGER",
            &scope,
            "information_schema.TRIGGERS: how a pt-osc run is told",
            None,
        );
    }
}

/// rwtop's own schema: the heartbeat writer's and test reads' rows (docs/own-tables.md).
fn own_schema(need: &mut impl Add) {
    let rwtop = Scope::Schema(super::own_tables::SCHEMA.to_owned());
    let off = Some("no heartbeat is written and test reads fail (rwtop's own tables)");
    need(
        "SELECT",
        &rwtop,
        "reading heartbeat and test-read rows",
        off,
    );
    need(
        "INSERT",
        &rwtop,
        "writing heartbeat and test-read rows",
        off,
    );
    need("UPDATE", &rwtop, "the heartbeat row's update", off);
    need(
        "DELETE",
        &rwtop,
        "removing test-read rows older than ten minutes",
        off,
    );
    need(
        "CREATE",
        &rwtop,
        "creating rwtop's schema and tables when they are missing",
        None,
    );
    need(
        "DROP",
        &rwtop,
        "listed since the first version; rwtop drops nothing",
        None,
    );
}

/// The `GRANT` statements for `needs`, one per scope in first-seen order.
#[must_use]
pub fn grant_statements(needs: &[Need], account: &str) -> Vec<String> {
    let mut scopes: Vec<(&Scope, Vec<&str>)> = Vec::new();
    for need in needs {
        match scopes.iter_mut().find(|(s, _)| *s == &need.scope) {
            Some((_, privileges)) => privileges.push(need.privilege),
            None => scopes.push((&need.scope, vec![need.privilege])),
        }
    }
    scopes
        .into_iter()
        .map(|(scope, privileges)| {
            format!(
                "GRANT {} ON {} TO {account}",
                privileges.join(", "),
                scope.sql()
            )
        })
        .collect()
}

/// The full mode's grants (monitor, heartbeat writer, test reads): what the sandbox grants its
/// monitor user and README lists.
#[must_use]
pub fn monitor_grants(family: Family, account: &str) -> Vec<String> {
    grant_statements(&needs(family, &Mode::Full.uses("")), account)
}

/// The account name README.md shows the grants for.
pub const README_ACCOUNT: &str = "'rwtop'@'%'";

/// A privilege `uses` needs that the account does not hold, as the snapshot carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingGrant {
    /// `FILE`, `SELECT`.
    pub privilege: String,
    /// `*.*`, `rwtop.*`, `percona.heartbeat`.
    pub on: String,
    /// What is off for want of it.
    pub off: String,
    /// The statement that grants it, to the account as the server names it.
    pub fix: String,
}

impl MissingGrant {
    /// `FILE ON *.*: free disk space is not read (…)`.
    #[must_use]
    pub fn text(&self) -> String {
        format!("{} ON {}: {}", self.privilege, self.on, self.off)
    }
}

/// What `uses` needs and `grants` lacks, each with what goes off and the fix; privileges whose
/// absence turns nothing off are not listed.
#[must_use]
pub fn missing(family: Family, uses: &Uses, grants: &AccountGrants) -> Vec<MissingGrant> {
    needs(family, uses)
        .into_iter()
        .filter_map(|need| {
            let off = need.off?;
            (!grants.covers(need.privilege, &need.scope)).then(|| MissingGrant {
                privilege: need.privilege.to_owned(),
                on: need.scope.sql(),
                off: off.to_owned(),
                fix: format!(
                    "GRANT {} ON {} TO {}",
                    need.privilege,
                    need.scope.sql(),
                    grants.account()
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_mode_is_the_list_every_release_has_printed() {
        assert_eq!(
            monitor_grants(Family::Mariadb, "'rwtop'@'%'"),
            [
                "GRANT PROCESS, REFERENCES, BINLOG MONITOR, SLAVE MONITOR, REPLICATION MASTER \
                 ADMIN ON *.* TO 'rwtop'@'%'",
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP ON rwtop.* TO 'rwtop'@'%'",
            ]
        );
        assert_eq!(
            monitor_grants(Family::Mysql, "u"),
            [
                "GRANT PROCESS, REFERENCES, REPLICATION CLIENT, REPLICATION SLAVE ON *.* TO u",
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP ON rwtop.* TO u",
                "GRANT SELECT ON performance_schema.* TO u",
            ]
        );
    }

    #[test]
    fn docs_grants_shows_what_rwtop_grants_prints_for_each_flavor_and_mode() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/grants.md");
        let page = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for family in [Family::Mariadb, Family::Mysql] {
            for mode in [Mode::Full, Mode::ReadOnly] {
                let needs = needs(family, &mode.uses("percona.heartbeat"));
                let block = grant_statements(&needs, README_ACCOUNT).join(";\n") + ";\n";
                let fenced = format!("```sql\n{block}```");
                assert!(
                    page.contains(&fenced),
                    "{path} lacks {family:?} {mode:?}:\n{fenced}"
                );
            }
        }
    }

    #[test]
    fn read_only_mode_writes_nowhere_and_reads_pt_heartbeat() {
        let uses = Mode::ReadOnly.uses("percona.heartbeat");
        let sql = grant_statements(&needs(Family::Mariadb, &uses), "a");
        assert_eq!(
            sql,
            [
                "GRANT PROCESS, REFERENCES, BINLOG MONITOR, SLAVE MONITOR, REPLICATION MASTER \
                 ADMIN ON *.* TO a",
                "GRANT SELECT ON percona.heartbeat TO a",
            ]
        );
    }

    #[test]
    fn optional_uses_add_their_privileges_and_odd_names_are_quoted() {
        let uses = Uses {
            disks: true,
            kill: true,
            osc_schemas: vec!["Shop-1".to_owned()],
            ..Uses::default()
        };
        let sql = grant_statements(&needs(Family::Mariadb, &uses), "a").join("\n");
        assert!(sql.contains("FILE, CONNECTION ADMIN ON *.*"), "{sql}");
        assert!(
            sql.contains("GRANT SELECT, TRIGGER ON `Shop-1`.* TO a"),
            "{sql}"
        );
        let sql = grant_statements(&needs(Family::Mysql, &uses), "a").join("\n");
        assert!(!sql.contains("FILE"), "MySQL has no DISKS table: {sql}");
        assert!(sql.contains("CONNECTION_ADMIN ON *.*"), "{sql}");
    }
}
