//! Who blocks a waiting DDL, named on real servers: each holder the test makes (an open
//! transaction, `LOCK TABLES`, `FLUSH TABLES WITH READ LOCK`, `BACKUP STAGE BLOCK_DDL`, gh-ost's
//! cut-over made by hand, and a replica's applier stuck behind a session there) is named with its
//! connection id and `KILL` on the first snapshot that shows the wait, first with the
//! `metadata_lock_info` plugin absent, then with it installed on every node.

mod common;

use std::time::Duration;

use common::{TestSandbox, primary_and, until, until_healthy};
use rwtop::engine::Engine;
use rwtop::mysql::{Blockers, HolderSource, Holds, Kill, NodeConn};

const DEADLINE: Duration = Duration::from_secs(60);
const HOLDER: (&str, &str) = ("holder", "holder-test-only");
const APP: (&str, &str) = ("app", "app-test-only");

/// A holder the test makes: what its session runs to take the lock, what the DDL waiting
/// behind it runs, the lock that DDL waits for, and what frees it.
struct Case {
    name: &'static str,
    take: &'static [&'static str],
    ddl: &'static str,
    lock: &'static str,
    release: &'static [&'static str],
    /// What names it without a lock table.
    without_plugin: Holds,
}

const CASES: &[Case] = &[
    Case {
        name: "open transaction",
        take: &["START TRANSACTION", "SELECT v FROM rwtop.t WHERE id = 1"],
        ddl: "ALTER TABLE rwtop.t ADD COLUMN c_trx INT",
        lock: "table metadata lock",
        release: &["COMMIT"],
        without_plugin: Holds::OpenTransaction,
    },
    Case {
        name: "LOCK TABLES",
        take: &["LOCK TABLES rwtop.t WRITE"],
        ddl: "ALTER TABLE rwtop.t ADD COLUMN c_lock INT",
        lock: "table metadata lock",
        release: &["UNLOCK TABLES"],
        without_plugin: Holds::IdleSinceBefore,
    },
    Case {
        name: "FLUSH TABLES WITH READ LOCK",
        take: &["FLUSH TABLES WITH READ LOCK"],
        ddl: "ALTER TABLE rwtop.t ADD COLUMN c_ftwrl INT",
        lock: "backup lock",
        release: &["UNLOCK TABLES"],
        without_plugin: Holds::IdleSinceBefore,
    },
    Case {
        name: "BACKUP STAGE BLOCK_DDL",
        take: &["BACKUP STAGE START", "BACKUP STAGE BLOCK_DDL"],
        ddl: "ALTER TABLE rwtop.t ADD COLUMN c_backup INT",
        lock: "backup lock",
        release: &["BACKUP STAGE END"],
        without_plugin: Holds::IdleSinceBefore,
    },
    // gh-ost's cut-over: its lock session holds the table and the sentry `_t_del` while the
    // RENAME waits; dropping the sentry and unlocking lets the RENAME swap the tables.
    Case {
        name: "gh-ost cut-over",
        take: &["LOCK TABLES rwtop.t WRITE, rwtop._t_del WRITE"],
        ddl: "RENAME TABLE rwtop.t TO rwtop._t_del, rwtop._t_gho TO rwtop.t",
        lock: "table metadata lock",
        release: &["DROP TABLE rwtop._t_del", "UNLOCK TABLES"],
        without_plugin: Holds::IdleSinceBefore,
    },
];

async fn connection_id(conn: &mut NodeConn) -> u64 {
    let rows = conn
        .query_rows("SELECT CONNECTION_ID() AS id")
        .await
        .unwrap();
    rows[0].u64(&["id"]).unwrap()
}

async fn run_all(conn: &mut NodeConn, sqls: &[&str]) {
    for sql in sqls {
        conn.query_rows(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// The first snapshot that shows `node`'s DDL waiting for `lock`: its holders, read in the same
/// poll as the scan that saw the wait.
async fn first_sight(engine: &Engine, node: &str, lock: &str) -> Blockers {
    let what = format!("{node}'s DDL waiting for the {lock}");
    let (blockers, took) = until(engine, &what, DEADLINE, |s| {
        let ddl = s
            .node(node)?
            .ddl()
            .iter()
            .find(|d| d.waiting_for.is_some())?;
        assert_eq!(ddl.waiting_for.as_deref(), Some(lock), "{ddl:?}");
        Some(ddl.blockers.clone().unwrap_or_else(|| {
            panic!("{node}: the scan that saw the wait named no holders: {ddl:?}")
        }))
    })
    .await;
    eprintln!("{node}: {lock} seen after {took:?}: {}", blockers.summary());
    blockers
}

/// Checks that `blockers` names connection `id` first, as `holds` (the lock table's evidence is
/// checked by kind only), with `KILL <id>`.
fn names(blockers: &Blockers, id: u64, source: HolderSource, holds: &Holds, case: &str) {
    assert_eq!(blockers.source, source, "{case}: {blockers:?}");
    let first = blockers
        .holders
        .first()
        .unwrap_or_else(|| panic!("{case}: nobody named: {blockers:?}"));
    assert_eq!(first.id, id, "{case}: {blockers:?}");
    // Nobody else: not rwtop's own sessions, not the replica's dump thread, not the waiter.
    assert_eq!(blockers.holders.len(), 1, "{case}: {blockers:?}");
    assert_eq!(first.kill, Kill::Connection, "{case}");
    assert_eq!(first.kill_statement(), Some(format!("KILL {id}")), "{case}");
    assert_eq!(first.user, HOLDER.0, "{case}");
    assert_eq!(first.host, "127.0.0.1", "{case}");
    match holds {
        Holds::Lock { .. } => assert!(first.holds.is_certain(), "{case}: {first:?}"),
        other => assert_eq!(&first.holds, other, "{case}"),
    }
}

/// Makes each case's holder on the primary (on a fresh `rwtop.t`), waits for the DDL's first sight, then frees it and
/// waits for the DDL to end.
async fn every_case(t: &TestSandbox, engine: &Engine, plugin: bool) {
    for case in CASES {
        t.admin(
            "primary",
            "DROP TABLE IF EXISTS rwtop._t_del, rwtop._t_gho, rwtop.t; \
             CREATE TABLE rwtop.t (id INT PRIMARY KEY, v INT); INSERT INTO rwtop.t VALUES (1, 1); \
             CREATE TABLE rwtop._t_gho LIKE rwtop.t; CREATE TABLE rwtop._t_del (id INT)",
        );
        let mut holder = t.connect_as("primary", HOLDER, DEADLINE).await;
        let id = connection_id(&mut holder).await;
        run_all(&mut holder, case.take).await;
        let app = t.connect_as("primary", APP, DEADLINE).await;
        let ddl = common::in_background(app, case.ddl);
        let blockers = first_sight(engine, "primary", case.lock).await;
        let (source, holds) = expected(plugin, case.without_plugin.clone());
        names(&blockers, id, source, &holds, case.name);
        run_all(&mut holder, case.release).await;
        ddl.await.unwrap().close().await;
        holder.close().await;
        until(engine, "the DDL done", DEADLINE, |s| {
            s.node("primary")?.ddl().is_empty().then_some(())
        })
        .await;
    }
}

/// Where a holder should be named from and what it should be shown to hold: the plugin's lock
/// (its mode and object checked apart) when installed, else `without_plugin` from the
/// transactions and the processlist.
fn expected(plugin: bool, without_plugin: Holds) -> (HolderSource, Holds) {
    if plugin {
        let lock = Holds::Lock {
            mode: String::new(),
            object: String::new(),
        };
        (HolderSource::MetadataLockInfo, lock)
    } else {
        (HolderSource::TransactionsAndProcesslist, without_plugin)
    }
}

/// On r1 a session holds an open transaction on the table while its applier applies an ALTER
/// from the primary.
async fn replica_applier(t: &TestSandbox, engine: &Engine, column: &str, plugin: bool) {
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let mut holder = t.connect_as("r1", HOLDER, DEADLINE).await;
    let id = connection_id(&mut holder).await;
    run_all(
        &mut holder,
        &["START TRANSACTION", "SELECT v FROM rwtop.t WHERE id = 1"],
    )
    .await;
    let mut app = t.connect_as("primary", APP, DEADLINE).await;
    let alter = format!("ALTER TABLE rwtop.t ADD COLUMN {column} INT");
    app.query_rows(&alter).await.unwrap();
    app.close().await;
    let blockers = first_sight(engine, "r1", "table metadata lock").await;
    let (source, holds) = expected(plugin, Holds::OpenTransaction);
    names(&blockers, id, source, &holds, "replica applier");
    if plugin {
        assert_eq!(
            blockers.holders[0].holds,
            Holds::Lock {
                mode: "MDL_SHARED_READ".into(),
                object: "rwtop.t".into()
            }
        );
    }
    run_all(&mut holder, &["COMMIT"]).await;
    holder.close().await;
    until(engine, "r1's ALTER applied", DEADLINE, |s| {
        s.node("r1")?.ddl().is_empty().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_each_holder_is_named_with_its_kill_with_and_without_the_plugin() {
    let t = TestSandbox::start(1, false);
    t.admin(
        "primary",
        "CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-test-only'; \
         GRANT ALL ON rwtop.* TO 'app'@'127.0.0.1'; \
         CREATE USER 'holder'@'127.0.0.1' IDENTIFIED BY 'holder-test-only'; \
         GRANT ALL ON *.* TO 'holder'@'127.0.0.1'",
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let engine = Engine::start(&primary_and(&t, &["r1"]));
    until_healthy(&engine, &["r1"], DEADLINE).await;
    // Without the plugin the lint suggests it on every node (read with the settings at connect).
    until(
        &engine,
        "the lint suggesting metadata_lock_info",
        DEADLINE,
        |s| {
            let mut nodes: Vec<String> = rwtop::alerts::lint::lint(s)
                .into_iter()
                .filter(|f| f.id == "metadata_lock_info")
                .map(|f| f.node)
                .collect();
            nodes.sort();
            (nodes == ["primary", "r1"]).then_some(())
        },
    )
    .await;

    every_case(&t, &engine, false).await;
    replica_applier(&t, &engine, "r_plain", false).await;

    // The plugin is global per server: installed on both, by hand, as a DBA would.
    for node in ["primary", "r1"] {
        t.admin(
            node,
            "SET sql_log_bin = 0; INSTALL SONAME 'metadata_lock_info'",
        );
    }
    every_case(&t, &engine, true).await;
    replica_applier(&t, &engine, "r_plugin", true).await;
    engine.shutdown().await;
    kills_are_checked_first(&t).await;
}

/// The kill task's own checks, each written to the audit log: a connection that has gone, an
/// id that now belongs to another user, and a monitor user without `CONNECTION ADMIN` (the
/// sandbox's, as shipped) are refused, and nothing is killed.
async fn kills_are_checked_first(t: &TestSandbox) {
    use rwtop::drain::{AuditLog, KillRequest, kill};
    let dir = tempfile::tempdir().unwrap();
    let audit = AuditLog::new(dir.path().join("audit.log"));
    let spec = primary_and(t, &[]).kill_spec(audit.clone());
    let mut holder = t.connect_as("primary", HOLDER, DEADLINE).await;
    let id = connection_id(&mut holder).await;
    let request = |id: u64, user: &str| KillRequest {
        node: "primary".to_owned(),
        id,
        user: user.to_owned(),
        kill: Kill::Connection,
    };
    let gone = kill::act(&spec, &request(id + 100_000, "holder")).await;
    let other = kill::act(&spec, &request(id, "app")).await;
    let refused = kill::act(&spec, &request(id, "holder")).await;
    for record in [&gone, &other, &refused] {
        eprintln!("{}", record.summary());
        assert!(!record.ok, "{record:?}");
    }
    assert!(
        gone.message.contains("is gone (nothing killed)"),
        "{gone:?}"
    );
    assert!(
        other.message.contains("is now holder's, not app's"),
        "{other:?}"
    );
    assert!(
        refused.message.starts_with("failed: ")
            && refused.message.contains("needs CONNECTION ADMIN"),
        "{refused:?}"
    );
    holder
        .query_rows("SELECT 1")
        .await
        .expect("the holder is alive");
    let log = std::fs::read_to_string(audit.path()).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        log.lines()
            .all(|l| l.contains("\"action\":\"kill\"") && l.contains("\"ok\":false"))
    );
}
