//! The holder read's rows parsed, NULL as `None`, and bad rows refused with the column named.

use super::*;

fn row(cells: &[(&str, Option<&str>)]) -> RawRow {
    RawRow::of(cells)
}

#[test]
fn rows_parse_with_null_as_none_and_rwtops_own_read_left_out() {
    let threads = [
        row(&[
            ("ID", Some("10")),
            ("USER", Some("app")),
            ("HOST", Some("127.0.0.1:52960")),
            ("DB", Some("")),
            ("COMMAND", Some("Sleep")),
            ("TIME", Some("-1")),
            ("STATE", Some("")),
            ("INFO", None),
            ("OWN", Some("0")),
        ]),
        row(&[
            ("ID", Some("12")),
            ("USER", Some("rwtop")),
            ("HOST", Some("localhost")),
            ("DB", None),
            ("COMMAND", Some("Query")),
            ("TIME", Some("0")),
            ("STATE", Some("Filling schema table")),
            ("INFO", Some("SELECT /* rwtop lock holders */ ID")),
            ("OWN", Some("1")),
        ]),
    ];
    let trx = [row(&[("ID", Some("10")), ("AGE", Some("97"))])];
    let parsed = LockRows::from_rows(Family::Mariadb, &threads, Some(&trx), None).unwrap();
    assert_eq!(parsed.threads.len(), 1);
    let t = &parsed.threads[0];
    assert_eq!(
        (t.id, t.db.as_deref(), t.time_s, t.state.as_deref(), t.own),
        (10, None, 0, None, false)
    );
    assert_eq!(
        parsed.trx,
        Some(vec![TrxRow {
            thread_id: 10,
            age_s: 97
        }])
    );
    assert_eq!(parsed.locks, None);
}

#[test]
fn bad_rows_are_clear_errors_naming_the_column() {
    let no_id = [row(&[("USER", Some("app")), ("COMMAND", Some("Sleep"))])];
    let err = LockRows::from_rows(Family::Mariadb, &no_id, None, None).unwrap_err();
    assert!(err.to_string().contains("column ID is missing"), "{err}");
    let threads = [row(&[("ID", Some("10")), ("TIME", Some("soon"))])];
    let err = LockRows::from_rows(Family::Mariadb, &threads, None, None).unwrap_err();
    assert!(
        err.to_string().contains("column TIME holds \"soon\""),
        "{err}"
    );
    let lock = [row(&[
        ("ID", Some("10")),
        ("KIND", None),
        ("MODE", Some("MDL_SHARED_READ")),
        ("STATUS", Some("GRANTED")),
    ])];
    let err = LockRows::from_rows(Family::Mariadb, &[], None, Some(&lock)).unwrap_err();
    assert!(err.to_string().contains("column KIND is NULL"), "{err}");
    let trx = [row(&[("ID", Some("x")), ("AGE", Some("3"))])];
    assert!(LockRows::from_rows(Family::Mysql, &[], Some(&trx), None).is_err());
}

#[test]
fn each_flavor_reads_its_own_tables() {
    let maria = Flavor::detect("10.11.19-MariaDB", "").unwrap();
    let mysql = Flavor::detect("8.0.36", "MySQL Community Server").unwrap();
    let [threads, trx, locks] = holders_sql(&maria);
    assert!(threads.contains("information_schema.PROCESSLIST"));
    assert!(trx.contains("INNODB_TRX"));
    assert!(locks.contains("METADATA_LOCK_INFO"));
    let [threads, _, locks] = holders_sql(&mysql);
    assert!(threads.contains("events_statements_current"));
    assert!(locks.contains("performance_schema.metadata_locks"));
}
