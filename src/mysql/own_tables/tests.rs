//! The own tables' definitions, their judging against either flavor's description of a copy,
//! and the error texts that name one.

use super::*;

fn column(name: &str, kind: &str, charset: Option<&str>, nullable: &str, key: &str) -> RawRow {
    described(
        "BASE TABLE",
        Some("InnoDB"),
        [name, kind, nullable, key],
        charset,
    )
}

/// One row of [`check_sql`]: the table's type and engine, then the column's name, type,
/// nullability and key, and its "charset collation".
fn described(
    table_type: &str,
    engine: Option<&str>,
    [name, kind, nullable, key]: [&str; 4],
    charset: Option<&str>,
) -> RawRow {
    let cell = |s: &str| Some(s.to_owned());
    let mut parts = charset.map(|c| c.split(' ').map(str::to_owned));
    RawRow::new(vec![
        ("table_type".to_owned(), cell(table_type)),
        ("engine".to_owned(), engine.map(str::to_owned)),
        ("column_name".to_owned(), cell(name)),
        ("column_type".to_owned(), cell(kind)),
        (
            "charset".to_owned(),
            parts.as_mut().and_then(Iterator::next),
        ),
        (
            "collation".to_owned(),
            parts.as_mut().and_then(Iterator::next),
        ),
        ("nullable".to_owned(), cell(nullable)),
        ("column_key".to_owned(), cell(key)),
    ])
}

/// rwtop's heartbeat as `MariaDB` 10.11 describes it, as a `table_type` with `engine`.
fn heartbeat_as(table_type: &str, engine: Option<&str>) -> Vec<RawRow> {
    vec![
        described(
            table_type,
            engine,
            ["writer_id", "varchar(64)", "NO", "PRI"],
            Some("utf8mb4 utf8mb4_bin"),
        ),
        described(
            table_type,
            engine,
            ["seq", "bigint(20) unsigned", "NO", ""],
            None,
        ),
        described(table_type, engine, ["ts", "datetime(6)", "NO", ""], None),
    ]
}

/// rwtop's heartbeat as `MariaDB` 10.11 describes it.
fn mariadb_heartbeat() -> Vec<RawRow> {
    heartbeat_as("BASE TABLE", Some("InnoDB"))
}

#[test]
fn the_definition_names_everything_a_server_default_would_decide() {
    let sql = HEARTBEAT.create_sql();
    assert_eq!(
        sql,
        "CREATE TABLE IF NOT EXISTS rwtop.heartbeat (writer_id VARCHAR(64) CHARACTER SET \
         utf8mb4 COLLATE utf8mb4_bin NOT NULL, seq BIGINT UNSIGNED NOT NULL, ts DATETIME(6) \
         NOT NULL, PRIMARY KEY (writer_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC"
    );
    assert!(PROBE.create_sql().contains("KEY created (created)"));
    assert!(CREATE_SCHEMA.contains("CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"));
}

#[test]
fn the_docs_show_exactly_the_definitions_sent() {
    let page = include_str!("../../../docs/own-tables.md");
    for sql in [
        CREATE_SCHEMA.to_owned(),
        HEARTBEAT.create_sql(),
        PROBE.create_sql(),
    ] {
        assert!(page.contains(&format!("```sql\n{sql}\n```")), "{sql}");
    }
}

#[test]
fn either_flavors_description_of_rwtops_table_is_the_same() {
    assert_eq!(judge(&HEARTBEAT, &mariadb_heartbeat()), Found::Same);
    // MySQL 8.0.19+ prints no display width, and upper-case names come back as they are.
    let mut mysql = mariadb_heartbeat();
    mysql[1] = column("seq", "bigint unsigned", None, "NO", "");
    assert_eq!(judge(&HEARTBEAT, &mysql), Found::Same);
    assert_eq!(judge(&HEARTBEAT, &[]), Found::Missing);
}

fn differs(rows: &[RawRow]) -> Mismatch {
    match judge(&HEARTBEAT, rows) {
        Found::Differs(m) => m,
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn a_table_made_with_a_servers_default_charset_is_refused_with_the_fix() {
    let mut rows = mariadb_heartbeat();
    rows[0] = column(
        "writer_id",
        "varchar(64)",
        Some("latin1 latin1_swedish_ci"),
        "NO",
        "PRI",
    );
    let m = differs(&rows);
    assert_eq!(m.table, "rwtop.heartbeat");
    assert_eq!(
        m.differences,
        [
            "column writer_id is varchar(64) latin1 latin1_swedish_ci, rwtop's is varchar(64) \
          utf8mb4 utf8mb4_bin"
        ]
    );
    assert_eq!(
        m.fix,
        "ALTER TABLE rwtop.heartbeat DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin, MODIFY \
         writer_id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL FIRST, \
         MODIFY seq BIGINT UNSIGNED NOT NULL AFTER writer_id, MODIFY ts DATETIME(6) NOT NULL \
         AFTER seq"
    );
    // A collation alone changes no byte of the image but is refused all the same: two
    // copies that compare ids differently are not one table.
    rows[0] = column(
        "writer_id",
        "varchar(64)",
        Some("utf8mb4 utf8mb4_general_ci"),
        "NO",
        "PRI",
    );
    assert!(differs(&rows).differences[0].contains("utf8mb4_general_ci"));
}

#[test]
fn extra_missing_reordered_nullable_columns_engine_and_key_are_each_named() {
    let mut rows = mariadb_heartbeat();
    rows.push(column(
        "note",
        "text",
        Some("utf8mb4 utf8mb4_bin"),
        "YES",
        "",
    ));
    let m = differs(&rows);
    assert_eq!(
        m.differences,
        ["column note is not rwtop's (its rows would carry it)"]
    );
    assert!(m.fix.contains("DROP COLUMN note"), "{}", m.fix);

    let rows = vec![
        column("seq", "bigint(20) unsigned", None, "YES", ""),
        column(
            "writer_id",
            "varchar(64)",
            Some("utf8mb4 utf8mb4_bin"),
            "NO",
            "",
        ),
    ];
    let m = differs(&rows);
    assert_eq!(
        m.differences,
        [
            "column writer_id is column 2 of 2, rwtop's is column 1 of 3",
            "column seq is bigint unsigned NULL, rwtop's is bigint unsigned",
            "column seq is column 1 of 2, rwtop's is column 2 of 3",
            "column ts is missing",
            "its primary key is (), rwtop's is (writer_id)",
        ]
    );
    assert!(
        m.fix.contains("ADD ts DATETIME(6) NOT NULL AFTER seq"),
        "{}",
        m.fix
    );
    assert!(m.fix.ends_with("ADD PRIMARY KEY (writer_id)"), "{}", m.fix);
    assert!(!m.fix.contains("DROP PRIMARY KEY"), "{}", m.fix);

    let m = differs(&heartbeat_as("BASE TABLE", Some("MyISAM")));
    assert_eq!(m.differences, ["its engine is MyISAM, rwtop's is InnoDB"]);
    assert!(
        m.fix
            .starts_with("ALTER TABLE rwtop.heartbeat ENGINE=InnoDB, "),
        "{}",
        m.fix
    );
}

#[test]
fn a_view_in_the_tables_place_is_refused() {
    let m = differs(&heartbeat_as("VIEW", None));
    assert_eq!(m.differences, ["it is a view, where rwtop keeps a table"]);
    assert!(
        m.fix.starts_with("DROP VIEW rwtop.heartbeat; CREATE TABLE"),
        "{}",
        m.fix
    );
}

#[test]
fn each_table_is_judged_by_its_own_rows() {
    let named = |table: &str, mut rows: Vec<RawRow>| {
        for row in &mut rows {
            *row = RawRow::new(
                std::iter::once(("table_name".to_owned(), Some(table.to_owned())))
                    .chain(
                        row.columns().map(str::to_owned).zip(
                            row.columns()
                                .map(|c| row.optional_text(&[c]).map(str::to_owned))
                                .collect::<Vec<_>>(),
                        ),
                    )
                    .collect(),
            );
        }
        rows
    };
    let mut rows = named("heartbeat", mariadb_heartbeat());
    assert!(
        mismatches(&rows).is_empty(),
        "the probe table missing is no mismatch"
    );
    rows.extend(named("probe", heartbeat_as("BASE TABLE", Some("InnoDB"))));
    let found = mismatches(&rows);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].table, "rwtop.probe");
    assert!(check_sql(&ALL).contains("IN ('heartbeat', 'probe')"));
}

#[test]
fn integer_display_widths_are_not_a_difference() {
    assert_eq!(normalise_type("BIGINT(20) UNSIGNED"), "bigint unsigned");
    assert_eq!(normalise_type("int(11)"), "int");
    assert_eq!(normalise_type("varchar(64)"), "varchar(64)");
    assert_eq!(normalise_type("datetime(6)"), "datetime(6)");
    assert_eq!(normalise_type("interval(3)"), "interval(3)");
}

#[test]
fn replication_errors_naming_rwtops_tables_are_recognised() {
    let agg = "Column 0 of table 'rwtop.heartbeat' cannot be converted from type \
               'varchar(64 octets)' to type 'varchar(256 octets) character set utf8mb4'";
    assert_eq!(named_in(agg).as_deref(), Some("rwtop.heartbeat"));
    assert_eq!(
        named_in("Table `rwtop`.`probe` doesn't exist").as_deref(),
        Some("rwtop.probe")
    );
    assert_eq!(named_in("Table 'shop.orders' doesn't exist"), None);
    assert_eq!(named_in("Table 'myrwtop.heartbeat' doesn't exist"), None);
    assert_eq!(named_in("Error 'rwtop.' something"), None);
}
