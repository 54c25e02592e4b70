//! The holders named from typed rows, as `MariaDB` 10.11 answered the holder read for each
//! holder in the sandbox (docs/server-facts.md), and as `MySQL` lists pending locks.

use super::*;
use crate::mysql::lock_holders::TrxRow;

fn waiter(id: u64, statement: &str, elapsed_s: u64, lock: &str) -> DdlStatement {
    DdlStatement {
        id,
        statement: statement.to_owned(),
        elapsed_s,
        progress: None,
        applier: false,
        waiting_for: Some(lock.to_owned()),
        blockers: None,
    }
}

fn thread(id: u64, user: &str, command: &str, time_s: u64, state: &str) -> ThreadRow {
    ThreadRow {
        id,
        user: Some(user.to_owned()),
        host: Some(format!("10.0.0.{id}:5{id:04}")),
        db: None,
        command: command.to_owned(),
        time_s,
        state: (!state.is_empty()).then(|| state.to_owned()),
        info: None,
        own: user == "rwtop",
        last_sql: None,
    }
}

fn lock(thread_id: u64, kind: &str, mode: &str, table: Option<(&str, &str)>) -> MdlRow {
    MdlRow {
        thread_id,
        kind: kind.to_owned(),
        mode: mode.to_owned(),
        schema: table.map(|t| t.0.to_owned()),
        name: table.map(|t| t.1.to_owned()),
        granted: true,
    }
}

const TML: &str = "Table metadata lock";
const MDL_WAIT: &str = "Waiting for table metadata lock";

/// The sessions of every scenario: the holder 10 (idle 3 s), the waiting DDL 11, a read queued
/// behind it 14, rwtop's own 20 and 21 (idle 0 and 5 s), the replication plumbing 6.
fn threads(ddl_state: &str) -> Vec<ThreadRow> {
    vec![
        thread(6, "repl", "Binlog Dump", 40, "Master has sent all binlog"),
        thread(10, "app", "Sleep", 3, ""),
        thread(11, "app", "Query", 2, ddl_state),
        thread(14, "app", "Query", 1, MDL_WAIT),
        thread(20, "rwtop", "Sleep", 0, ""),
        thread(21, "rwtop", "Sleep", 5, ""),
    ]
}

fn rows(
    ddl_state: &str,
    trx: &[(u64, u64)],
    locks: Option<Vec<MdlRow>>,
    family: Family,
) -> LockRows {
    LockRows {
        threads: threads(ddl_state),
        trx: Some(
            trx.iter()
                .map(|&(thread_id, age_s)| TrxRow { thread_id, age_s })
                .collect(),
        ),
        locks,
        family: Some(family),
    }
}

fn named(blockers: &Blockers) -> Vec<(u64, Option<String>)> {
    blockers
        .holders
        .iter()
        .map(|h| (h.id, h.kill_statement()))
        .collect()
}

#[test]
fn an_open_transaction_is_named_by_the_plugin_and_without_it() {
    let ddl = waiter(
        11,
        "ALTER TABLE rwtop.t ADD COLUMN c1 INT",
        2,
        "table metadata lock",
    );
    let with_plugin = rows(
        MDL_WAIT,
        &[(10, 3)],
        Some(vec![
            lock(11, "Backup lock", "MDL_BACKUP_ALTER_COPY", None),
            lock(11, "Schema metadata lock", "MDL_INTENTION_EXCLUSIVE", None),
            lock(10, TML, "MDL_SHARED_READ", Some(("rwtop", "t"))),
            lock(11, TML, "MDL_SHARED_UPGRADABLE", Some(("rwtop", "t"))),
            // Another table's reader is no holder.
            lock(21, TML, "MDL_SHARED_READ", Some(("rwtop", "other"))),
        ]),
        Family::Mariadb,
    );
    let blockers = name_holders(&ddl, &with_plugin).unwrap();
    assert_eq!(blockers.source, HolderSource::MetadataLockInfo);
    assert_eq!(named(&blockers), [(10, Some("KILL 10".to_owned()))]);
    let h = &blockers.holders[0];
    assert_eq!(
        (h.account(), h.idle_s, h.trx_age_s, &h.last_statement),
        (
            "app@10.0.0.10".to_owned(),
            Some(3),
            Some(3),
            &LastStatement::NotTold
        )
    );
    assert_eq!(
        h.holds,
        Holds::Lock {
            mode: "MDL_SHARED_READ".into(),
            object: "rwtop.t".into()
        }
    );

    let without = rows(MDL_WAIT, &[(10, 3)], None, Family::Mariadb);
    let blockers = name_holders(&ddl, &without).unwrap();
    assert_eq!(blockers.source, HolderSource::TransactionsAndProcesslist);
    assert_eq!(named(&blockers), [(10, Some("KILL 10".to_owned()))]);
    assert_eq!(blockers.holders[0].holds, Holds::OpenTransaction);
    assert!(!blockers.holders[0].holds.is_certain());
}

#[test]
fn lock_tables_and_gh_ost_cut_over_are_named_from_the_tables_the_ddl_names() {
    // LOCK TABLES t WRITE: the waiting ALTER holds nothing on the table yet.
    let ddl = waiter(
        11,
        "ALTER TABLE rwtop.t ADD COLUMN c2 INT",
        2,
        "table metadata lock",
    );
    let plugin = rows(
        MDL_WAIT,
        &[],
        Some(vec![
            lock(10, "Backup lock", "MDL_BACKUP_DDL", None),
            lock(10, TML, "MDL_SHARED_NO_READ_WRITE", Some(("rwtop", "t"))),
            lock(11, "Schema metadata lock", "MDL_INTENTION_EXCLUSIVE", None),
        ]),
        Family::Mariadb,
    );
    assert_eq!(
        named(&name_holders(&ddl, &plugin).unwrap()),
        [(10, Some("KILL 10".to_owned()))]
    );
    // Without the plugin: no transaction; the one session idle since before the ALTER.
    let without = rows(MDL_WAIT, &[], None, Family::Mariadb);
    let blockers = name_holders(&ddl, &without).unwrap();
    assert_eq!(named(&blockers), [(10, Some("KILL 10".to_owned()))]);
    assert_eq!(blockers.holders[0].holds, Holds::IdleSinceBefore);

    // gh-ost's cut-over: the RENAME waits for `_t_del` and `t`, both locked by one session.
    let rename = waiter(
        11,
        "RENAME TABLE `rwtop`.`t` TO `rwtop`.`_t_del`, `rwtop`.`_t_gho` TO `rwtop`.`t`",
        4,
        "table metadata lock",
    );
    let mut cut_over = plugin.clone();
    cut_over.locks.as_mut().unwrap().push(lock(
        10,
        TML,
        "MDL_SHARED_NO_READ_WRITE",
        Some(("rwtop", "_t_del")),
    ));
    cut_over.threads[1].time_s = 5;
    let blockers = name_holders(&rename, &cut_over).unwrap();
    assert_eq!(named(&blockers), [(10, Some("KILL 10".to_owned()))]);
}

#[test]
fn backup_locks_name_ftwrl_and_block_ddl_but_not_every_statement() {
    let ddl = waiter(
        11,
        "ALTER TABLE rwtop.t ADD COLUMN c4 INT",
        2,
        "backup lock",
    );
    for mode in ["MDL_BACKUP_FTWRL2", "MDL_BACKUP_WAIT_DDL"] {
        let plugin = rows(
            "Waiting for backup lock",
            &[(21, 9)],
            Some(vec![
                lock(10, "Backup lock", mode, None),
                // An ordinary statement's backup lock blocks no DDL.
                lock(21, "Backup lock", "MDL_BACKUP_TRANS_DML", None),
            ]),
            Family::Mariadb,
        );
        let blockers = name_holders(&ddl, &plugin).unwrap();
        assert_eq!(
            named(&blockers),
            [(10, Some("KILL 10".to_owned()))],
            "{mode}"
        );
        assert_eq!(
            blockers.holders[0].holds,
            Holds::Lock {
                mode: mode.into(),
                object: "backup lock".into()
            }
        );
    }
    // Without the plugin an open transaction cannot hold a backup lock: only the idle session.
    let without = rows("Waiting for backup lock", &[(14, 9)], None, Family::Mariadb);
    assert_eq!(
        named(&name_holders(&ddl, &without).unwrap()),
        [(10, Some("KILL 10".to_owned()))]
    );
}

#[test]
fn a_replicas_applier_names_the_session_in_its_way_and_is_never_killed() {
    let mut ddl = waiter(
        7,
        "ALTER TABLE rwtop.t ADD COLUMN c9 INT",
        90,
        "table metadata lock",
    );
    ddl.applier = true;
    let mut list = rows(MDL_WAIT, &[(10, 4)], None, Family::Mariadb);
    list.threads
        .push(thread(7, "system user", "Slave_SQL", 90, MDL_WAIT));
    // The applier's time runs from the event's timestamp: a transaction younger than it may
    // still hold the lock.
    let blockers = name_holders(&ddl, &list).unwrap();
    assert_eq!(named(&blockers), [(10, Some("KILL 10".to_owned()))]);
    list.locks = Some(vec![
        lock(10, TML, "MDL_SHARED_READ", Some(("rwtop", "t"))),
        lock(7, TML, "MDL_SHARED_UPGRADABLE", Some(("rwtop", "t"))),
        // A replication thread holding a lock is named, with no KILL offered.
        lock(6, TML, "MDL_SHARED_READ", Some(("rwtop", "t"))),
    ]);
    list.threads[0].user = Some("system user".into());
    let blockers = name_holders(&ddl, &list).unwrap();
    let kills: Vec<_> = blockers.holders.iter().map(|h| (h.id, h.kill)).collect();
    assert_eq!(kills, [(10, Kill::Connection), (6, Kill::NotOffered)]);
}

#[test]
fn mysql_names_the_granted_locks_on_the_pending_object() {
    let ddl = waiter(
        11,
        "ALTER TABLE shop.orders ADD note INT",
        30,
        "table metadata lock",
    );
    let mut list = rows(MDL_WAIT, &[], None, Family::Mysql);
    list.threads[1].last_sql = Some("SELECT * FROM orders WHERE id = 1".into());
    // 21 runs a long autocommit read of the table: its statement, not its session, holds it.
    list.threads[5].command = "Query".into();
    list.threads[5].own = false;
    list.threads[5].user = Some("report".into());
    list.threads[5].info = Some("SELECT SUM(total) FROM orders".into());
    let pending = MdlRow {
        granted: false,
        ..lock(11, "TABLE", "EXCLUSIVE", Some(("shop", "orders")))
    };
    list.trx = Some(vec![TrxRow {
        thread_id: 10,
        age_s: 40,
    }]);
    list.locks = Some(vec![
        lock(10, "TABLE", "SHARED_READ", Some(("shop", "orders"))),
        lock(11, "TABLE", "SHARED_UPGRADABLE", Some(("shop", "orders"))),
        pending,
        lock(21, "TABLE", "SHARED_READ", Some(("shop", "orders"))),
        lock(20, "TABLE", "SHARED_READ", Some(("shop", "customers"))),
    ]);
    let blockers = name_holders(&ddl, &list).unwrap();
    assert_eq!(blockers.source, HolderSource::PerformanceSchema);
    assert_eq!(
        named(&blockers),
        [
            (10, Some("KILL 10".to_owned())),
            (21, Some("KILL QUERY 21".to_owned()))
        ]
    );
    assert_eq!(
        blockers.holders[0].last_statement,
        LastStatement::Last("SELECT * FROM orders WHERE id = 1".into())
    );
    assert_eq!(
        blockers.holders[1].last_statement,
        LastStatement::Running("SELECT SUM(total) FROM orders".into())
    );
}

#[test]
fn a_ddl_that_waits_for_nothing_reads_no_holders_and_gone_holders_are_dropped() {
    let mut ddl = waiter(11, "ALTER TABLE t FORCE", 2, "table metadata lock");
    let list = rows(MDL_WAIT, &[(99, 50)], Some(Vec::new()), Family::Mariadb);
    assert_eq!(name_holders(&ddl, &list).unwrap().holders, []);
    ddl.waiting_for = None;
    assert_eq!(name_holders(&ddl, &list), None);
}

#[test]
fn the_tables_a_ddl_names() {
    let db = Some("shop");
    let t = |s: Option<&str>, n: &str| (s.map(str::to_owned), n.to_owned());
    for (statement, tables) in [
        ("ALTER TABLE t ADD x INT", vec![t(db, "t")]),
        (
            "/* gh-ost */ alter online table `a`.`b` force",
            vec![t(Some("a"), "b")],
        ),
        (
            "RENAME TABLE t TO _t_del, _t_gho TO t",
            vec![t(db, "t"), t(db, "_t_del"), t(db, "_t_gho"), t(db, "t")],
        ),
        ("CREATE UNIQUE INDEX u ON x.y (a)", vec![t(Some("x"), "y")]),
        ("DROP INDEX i ON y", vec![t(db, "y")]),
        ("TRUNCATE t2", vec![t(db, "t2")]),
        ("OPTIMIZE TABLE a, b.c", vec![t(db, "a"), t(Some("b"), "c")]),
        ("ALTER TABLE t", vec![t(db, "t")]),
        ("SELECT 1", vec![]),
        ("", vec![]),
        ("/* unterminated", vec![]),
    ] {
        assert_eq!(tables_named(statement, db), tables, "{statement}");
    }
}
