//! The `SHOW GRANTS` parser against recorded outputs of each flavor (`MySQL`'s written by hand
//! to the manual's format, `MariaDB`'s captured from the sandbox) and against lines that must
//! not parse.

use super::*;
use crate::mysql::Family;
use crate::mysql::grants::{Mode, Uses, missing};
use crate::mysql::row::fixture_rows;

fn from_fixture(path: &str) -> AccountGrants {
    AccountGrants::from_rows(&fixture_rows(path))
}

fn missing_names(family: Family, uses: &Uses, grants: &AccountGrants) -> Vec<String> {
    missing(family, uses, grants)
        .iter()
        .map(|m| format!("{} ON {}", m.privilege, m.on))
        .collect()
}

#[test]
fn mysql_8_full_grants_leave_nothing_missing_in_either_mode() {
    let grants = from_fixture("mysql-8.0/show_grants__full.txt");
    assert_eq!(grants.account(), "`rwtop`@`%`");
    assert!(grants.roles.is_empty());
    for mode in [Mode::Full, Mode::ReadOnly] {
        let mut uses = mode.uses("percona.heartbeat");
        uses.pt_heartbeat = None;
        assert_eq!(
            missing_names(Family::Mysql, &uses, &grants),
            Vec::<String>::new()
        );
    }
    // A dynamic privilege on its own line counts, and is what a kill needs.
    assert!(grants.covers("CONNECTION_ADMIN", &Scope::Global));
    assert!(!grants.covers("FILE", &Scope::Global));
}

#[test]
fn mysql_8_all_privileges_on_a_schema_cover_it_and_a_role_is_not_read() {
    let grants = from_fixture("mysql-8.0/show_grants__role_and_no_performance_schema.txt");
    assert_eq!(grants.account(), "`rwtop`@`10.0.%`");
    assert_eq!(grants.roles, ["`monitoring`@`%`"]);
    let uses = Mode::Full.uses("");
    let gone = missing(Family::Mysql, &uses, &grants);
    assert_eq!(gone.len(), 1, "{gone:#?}");
    assert_eq!(gone[0].privilege, "SELECT");
    assert_eq!(gone[0].on, "performance_schema.*");
    assert!(gone[0].off.contains("appliers"), "{}", gone[0].off);
    assert_eq!(
        gone[0].fix,
        "GRANT SELECT ON performance_schema.* TO `rwtop`@`10.0.%`"
    );
    // One column of the table is not the table.
    let read_only = Mode::ReadOnly.uses("percona.heartbeat");
    assert!(
        missing_names(Family::Mysql, &read_only, &grants)
            .contains(&"SELECT ON percona.heartbeat".to_owned())
    );
}

#[test]
fn mysql_8_4_table_and_quoted_schema_grants_are_read() {
    let grants = from_fixture("mysql-8.4/show_grants__full.txt");
    let uses = Uses {
        osc_schemas: vec!["shop-eu".to_owned()],
        ..Mode::ReadOnly.uses("percona.heartbeat")
    };
    assert_eq!(
        missing_names(Family::Mysql, &uses, &grants),
        Vec::<String>::new()
    );
    assert!(grants.covers("TRIGGER", &Scope::Schema("shop-eu".to_owned())));
    assert!(!grants.covers("TRIGGER", &Scope::Schema("shop".to_owned())));
    let other = Scope::Table("percona".to_owned(), "other".to_owned());
    assert!(!grants.covers("SELECT", &other));
}

#[test]
fn mysql_5_7_wildcard_schemas_match_and_routines_grant_nothing() {
    let grants = from_fixture("mysql-5.7/show_grants__wildcard_schema.txt");
    assert_eq!(grants.account(), "'rwtop'@'%'");
    // CREATE and DROP turn nothing off where the tables exist; REPLICATION SLAVE is discovery.
    assert_eq!(
        missing_names(Family::Mysql, &Mode::Full.uses(""), &grants),
        ["REPLICATION SLAVE ON *.*"]
    );
    let no_discovery = Uses {
        discovery: false,
        ..Mode::Full.uses("")
    };
    assert!(missing_names(Family::Mysql, &no_discovery, &grants).is_empty());
    assert!(!grants.covers("EXECUTE", &Scope::Schema("rwtop".to_owned())));
}

#[test]
fn mariadb_lines_with_passwords_roles_and_options_parse() {
    let grants = AccountGrants::parse([
        "GRANT USAGE ON *.* TO `rwtop`@`127.0.0.1` IDENTIFIED BY PASSWORD '*0123456789ABCDEF'",
        "GRANT PROCESS, REFERENCES, BINLOG MONITOR, SLAVE MONITOR ON *.* TO `rwtop`@`127.0.0.1`",
        "GRANT `mon` TO `rwtop`@`127.0.0.1`",
        "GRANT REPLICATION MASTER ADMIN ON *.* TO `mon`",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON `rwtop`.* TO `mon` WITH GRANT OPTION",
        "SET DEFAULT ROLE `mon` FOR `rwtop`@`127.0.0.1`",
        "GRANT PROXY ON ''@'%' TO 'rwtop'@'127.0.0.1'",
    ]);
    assert_eq!(grants.account(), "`rwtop`@`127.0.0.1`");
    assert!(
        grants.roles.is_empty(),
        "the current role's grants are listed"
    );
    assert!(missing(Family::Mariadb, &Mode::Full.uses(""), &grants).is_empty());
    let disks = full_with_disks();
    assert_eq!(
        missing_names(Family::Mariadb, &disks, &grants),
        ["FILE ON *.*"]
    );
}

#[test]
fn aliases_all_privileges_and_super_count() {
    let grants = AccountGrants::parse(["GRANT REPLICATION CLIENT ON *.* TO u"]);
    assert!(grants.covers("BINLOG MONITOR", &Scope::Global));
    assert!(!grants.covers("SLAVE MONITOR", &Scope::Global));
    let old_school = AccountGrants::parse(["GRANT SUPER ON *.* TO u"]);
    for covered in [
        "BINLOG MONITOR",
        "SLAVE MONITOR",
        "REPLICATION CLIENT",
        "CONNECTION ADMIN",
    ] {
        assert!(old_school.covers(covered, &Scope::Global), "{covered}");
    }
    // MariaDB 10.11 refuses SHOW SLAVE HOSTS without REPLICATION MASTER ADMIN, SUPER or not.
    assert!(!old_school.covers("REPLICATION MASTER ADMIN", &Scope::Global));
    let all = AccountGrants::parse([
        "grant all privileges on *.* to 'root'@'localhost' with grant option",
    ]);
    assert!(all.covers("FILE", &Scope::Global));
    assert!(all.covers("SELECT", &Scope::Table("a".into(), "b".into())));
}

#[test]
fn garbage_never_panics_and_grants_nothing() {
    let lines = [
        "",
        "GRANT",
        "GRANT ",
        "GRANT SELECT ON",
        "GRANT SELECT ON `unterminated TO x",
        "GRANT SELECT ON *.* ",
        "GRANT ( ON *.* TO x",
        "GRANT SELECT ON *.`t` TO x",
        "GRANT SELECT ON `a`.`b`.`c` TO x",
        "REVOKE SELECT ON *.* FROM x",
        "GRANT SELECT ON é.* TO ü",
    ];
    for line in lines {
        let grants = AccountGrants::parse([line]);
        assert!(!grants.covers("SELECT", &Scope::Global), "{line:?}");
        assert!(
            !grants.covers("SELECT", &Scope::Schema("a".into())),
            "{line:?}"
        );
    }
    assert_eq!(AccountGrants::parse([]).account(), "<account>");
}

#[test]
fn schema_patterns_follow_the_servers_wildcards() {
    for (pattern, name, want) in [
        ("rwtop", "rwtop", true),
        ("rwtop", "rwtopx", false),
        ("rw%", "rwtop", true),
        ("rw_op", "rwtop", true),
        ("rw\\_op", "rwtop", false),
        ("rw\\_op", "rw_op", true),
        ("%", "", true),
        ("a%b%", "axxbyy", true),
        ("a%b", "axxby", false),
    ] {
        assert_eq!(matches(pattern, name), want, "{pattern} vs {name}");
    }
}

#[test]
fn mariadb_10_11_as_captured_holds_the_full_mode() {
    let grants = from_fixture("mariadb-10.11/show_grants__monitor.txt");
    assert_eq!(grants.account(), "`rwtop`@`127.0.0.1`");
    let disks = full_with_disks();
    assert_eq!(
        missing_names(Family::Mariadb, &disks, &grants),
        ["FILE ON *.*"]
    );
}

/// What a full run that also reads the disks needs.
fn full_with_disks() -> Uses {
    Uses {
        disks: true,
        ..Mode::Full.uses("")
    }
}
