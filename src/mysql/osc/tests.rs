//! The tools' tables, triggers, changelog and checkpoint rows as their sources define them,
//! parsed into runs.

use super::*;

fn table(schema: &str, name: &str) -> ToolTable {
    ToolTable {
        schema: schema.into(),
        name: name.into(),
    }
}

fn row(cells: &[(&str, Option<&str>)]) -> RawRow {
    RawRow::of(cells)
}

fn size(schema: &str, name: &str, rows: &str, age: &str) -> RawRow {
    row(&[
        ("TABLE_SCHEMA", Some(schema)),
        ("TABLE_NAME", Some(name)),
        ("TABLE_ROWS", Some(rows)),
        ("AGE_S", Some(age)),
    ])
}

fn trigger(name: &str, on: &str) -> RawRow {
    row(&[
        ("TRIGGER_NAME", Some(name)),
        ("EVENT_OBJECT_TABLE", Some(on)),
    ])
}

/// Runs from the tables found and each detail statement's answer, as `osc_runs` puts them
/// together.
fn read(tables: &[ToolTable], answer: impl Fn(&Detail) -> DetailAnswer) -> Vec<OscRun> {
    let found = candidates(tables);
    let mut answers = Answers::default();
    for detail in details(&found) {
        answers.keep(&detail, answer(&detail));
    }
    runs(&found, &answers)
}

#[test]
fn names_split_into_table_and_tool_table() {
    assert_eq!(split("_orders_new"), Some(("orders", Suffix::New)));
    assert_eq!(
        split("_my_big_table_chkpnt"),
        Some(("my_big_table", Suffix::Chkpnt))
    );
    assert_eq!(split("__orders_new"), Some(("_orders", Suffix::New)));
    assert_eq!(split("_ghc"), None);
    assert_eq!(split("orders_new"), None);
    assert_eq!(split("_orders_news"), None);
}

#[test]
fn pt_osc_is_told_by_its_triggers_and_copies_then_swaps() {
    let tables = [table("shop", "_orders_new"), table("shop", "_users_new")];
    let copying = read(&tables, |d| match d {
        Detail::Sizes => Ok(vec![
            size("shop", "orders", "400000", "900"),
            size("shop", "_orders_new", "100000", "42"),
        ]),
        Detail::Triggers(_) => Ok(vec![
            trigger("pt_osc_shop_orders_del", "orders"),
            trigger("pt_osc_shop_orders_upd", "orders"),
            trigger("pt_osc_shop_orders_ins", "orders"),
            trigger("audit_users", "users"),
        ]),
        other => panic!("not asked: {other:?}"),
    });
    // `_users_new` has no pt-osc trigger and no checkpoint: nobody's run.
    assert_eq!(copying.len(), 1, "{copying:?}");
    let run = &copying[0];
    assert_eq!(run.title(), "pt-osc on shop.orders");
    assert_eq!(run.phase, OscPhase::Copy);
    assert_eq!(run.elapsed_s, Some(42));
    assert_eq!(
        (run.rows_copied, run.rows_estimate),
        (Some(100_000), Some(400_000))
    );
    assert!(!run.copied_counted && !run.throttle_published);
    assert_eq!(run.progress(), Some(25.0));

    // Swapped: `_orders_old` carries the triggers until it is dropped.
    let swapping = read(&[table("shop", "_orders_old")], |d| match d {
        Detail::Triggers(_) => Ok(vec![trigger("pt_osc_shop_orders_ins", "_orders_old")]),
        _ => Ok(Vec::new()),
    });
    assert_eq!(swapping[0].phase, OscPhase::CutOver);
    // A leftover `_orders_old` with no trigger is no run.
    assert!(read(&[table("shop", "_orders_old")], |_| Ok(Vec::new())).is_empty());
}

#[test]
fn pt_osc_trigger_prefix_replaces_non_word_characters() {
    assert_eq!(pt_osc_prefix("my-db", "t.x"), "pt_osc_my_db_t_x");
    assert_eq!(pt_osc_prefix(&"d".repeat(40), &"t".repeat(40)).len(), 60);
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "a detail statement's answer, as the reader takes it"
)]
fn changelog(rows: &[(&str, &str)]) -> DetailAnswer {
    Ok(rows
        .iter()
        .map(|(h, v)| row(&[("hint", Some(h)), ("value", Some(v))]))
        .collect())
}

#[test]
fn gh_ost_phase_and_throttle_come_from_its_changelog() {
    let tables = [table("shop", "_orders_gho"), table("shop", "_orders_ghc")];
    let sizes = || {
        Ok(vec![
            size("shop", "orders", "1000", "5000"),
            size("shop", "_orders_gho", "250", "60"),
            size("shop", "_orders_ghc", "0", "61"),
        ])
    };
    let runs = read(&tables, |d| match d {
        Detail::Sizes => sizes(),
        Detail::Changelog(..) => changelog(&[
            ("heartbeat", "2026-12-06T15:00:00.123456789Z"),
            ("state", "GhostTableMigrated"),
            ("throttle", "lag=3.2s, max-lag-millis=1500"),
        ]),
        other => panic!("not asked: {other:?}"),
    });
    let run = &runs[0];
    assert_eq!(run.title(), "gh-ost on shop.orders");
    assert_eq!((run.phase, run.elapsed_s), (OscPhase::Copy, Some(61)));
    assert_eq!(
        run.throttled.as_deref(),
        Some("lag=3.2s, max-lag-millis=1500")
    );
    assert!(run.throttle_published);
    assert_eq!(run.progress(), Some(25.0));

    let runs = read(&tables, |d| match d {
        Detail::Sizes => sizes(),
        _ => changelog(&[
            ("state", "AllEventsUpToLockProcessed:1733497200000000000"),
            ("throttle", "done throttling"),
        ]),
    });
    assert_eq!(runs[0].phase, OscPhase::CutOver);
    assert_eq!(runs[0].throttled, None);

    // The sentry table alone says cut-over.
    let mut with_del = tables.to_vec();
    with_del.push(table("shop", "_orders_del"));
    let runs = read(&with_del, |_| Ok(Vec::new()));
    assert_eq!(runs[0].phase, OscPhase::CutOver);
}

#[test]
fn a_changelog_with_other_columns_is_recognised_but_unreadable() {
    let tables = [table("shop", "_orders_ghc")];
    let runs = read(&tables, |d| match d {
        Detail::Changelog(..) => Err("Unknown column 'hint' in 'field list' (error 1054)".into()),
        _ => Ok(Vec::new()),
    });
    assert_eq!(runs.len(), 1);
    let why = runs[0].unreadable.as_deref().unwrap();
    assert!(why.contains("shop._orders_ghc"), "{why}");
    assert!(why.contains("Unknown column 'hint'"), "{why}");
    assert!(why.contains("id, last_update, hint, value"), "{why}");
    // A row whose hint is NULL: no panic, the same kind of message.
    let runs = read(&tables, |d| match d {
        Detail::Changelog(..) => Ok(vec![row(&[("hint", None), ("value", Some("x"))])]),
        _ => Ok(Vec::new()),
    });
    assert!(runs[0].unreadable.is_some());
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "a detail statement's answer, as the reader takes it"
)]
fn checkpoint(rows_copied: Option<&str>, checksum: Option<&str>) -> DetailAnswer {
    Ok(vec![row(&[
        ("rows_copied", rows_copied),
        ("checksum_watermark", checksum),
        ("alter_statement", Some("ADD COLUMN c INT")),
    ])])
}

#[test]
fn spirit_counts_rows_in_its_checkpoint_and_is_not_taken_for_pt_osc() {
    let tables = [
        table("shop", "_orders_new"),
        table("shop", "_orders_chkpnt"),
    ];
    let runs = read(&tables, |d| match d {
        Detail::Sizes => Ok(vec![
            size("shop", "orders", "2000", "5000"),
            size("shop", "_orders_new", "900", "30"),
        ]),
        Detail::Checkpoint(..) => checkpoint(Some("1500"), Some("")),
        Detail::Triggers(_) => panic!("a Spirit run needs no trigger read"),
        Detail::Changelog(..) => panic!("not gh-ost"),
    });
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.title(), "Spirit on shop.orders");
    assert_eq!((run.rows_copied, run.copied_counted), (Some(1500), true));
    assert_eq!(run.progress(), Some(75.0));
    assert_eq!(run.phase, OscPhase::Copy);

    let runs = read(&tables, |d| match d {
        Detail::Checkpoint(..) => checkpoint(Some("2000"), Some("{\"Key\":[\"id\"]}")),
        _ => Ok(Vec::new()),
    });
    assert_eq!(runs[0].phase, OscPhase::Checksum);
    let mut swapped = tables.to_vec();
    swapped.push(table("shop", "_orders_old"));
    let runs = read(&swapped, |_| Ok(Vec::new()));
    assert_eq!(runs[0].phase, OscPhase::CutOver);

    // No checkpoint yet: the copy table's estimate, not counted.
    let runs = read(&tables, |d| match d {
        Detail::Sizes => Ok(vec![size("shop", "_orders_new", "10", "1")]),
        _ => Ok(Vec::new()),
    });
    assert_eq!(
        (runs[0].rows_copied, runs[0].copied_counted),
        (Some(10), false)
    );

    // A count that is no number.
    let runs = read(&tables, |d| match d {
        Detail::Checkpoint(..) => checkpoint(Some("lots"), None),
        _ => Ok(Vec::new()),
    });
    let why = runs[0].unreadable.as_deref().unwrap();
    assert!(
        why.contains("shop._orders_chkpnt") && why.contains("rows_copied"),
        "{why}"
    );
}

#[test]
fn detail_statements_quote_names() {
    let found = candidates(&[table("we'ird", "_a`b_ghc")]);
    let sqls: Vec<String> = details(&found).iter().map(|d| d.sql(&found)).collect();
    assert!(sqls[0].contains("TABLE_SCHEMA = 'we''ird'"), "{}", sqls[0]);
    assert!(sqls[1].contains("`we'ird`.`_a``b_ghc`"), "{}", sqls[1]);
}

#[test]
fn progress_needs_an_estimate_and_stays_within_bounds() {
    let mut run = OscRun::new(OscTool::PtOsc, "d", "t");
    assert_eq!(run.progress(), None);
    run.rows_copied = Some(12);
    run.rows_estimate = Some(0);
    assert_eq!(run.progress(), None);
    run.rows_estimate = Some(10);
    assert_eq!(run.progress(), Some(100.0));
}
