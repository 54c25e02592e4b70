//! Every recorded server output under tests/fixtures goes through the same parsers rwtop uses on
//! live servers, and each file's scenario (its name after `__`) is checked for what it must mean:
//! a stopped thread reads as NULL lag, an error carries its errno, and so on. A fixture that no
//! check covers fails the test, so new recordings cannot slip in unchecked.

use std::fs;
use std::path::{Path, PathBuf};

use rwtop::gtid::GtidSet;
use rwtop::mysql::{
    BinlogFile, BinlogStatus, Family, Flavor, GtidState, IoRunning, NodeState, RawRow, ReplicaGtid,
    ReplicaHost, ReplicaStatus, SemiSync, parse_vertical,
};

struct Fixture {
    path: PathBuf,
    statement: String,
    flavor: Flavor,
    scenario: String,
    rows: Vec<RawRow>,
}

fn load(path: &Path) -> Fixture {
    let text = fs::read_to_string(path).unwrap();
    let parsed = parse_vertical(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let server = parsed
        .meta("server")
        .unwrap_or_else(|| panic!("{}: no server", path.display()));
    // `MySQL 8.0.36` / `MariaDB 10.11.19-MariaDB-0+deb12u1 (captured ...)`
    let mut words = server.split_whitespace();
    let product = words.next().unwrap_or_default();
    let version = words.next().unwrap_or_default();
    let flavor = Flavor::detect(version, product).unwrap();
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    Fixture {
        path: path.to_owned(),
        statement: parsed.meta("statement").unwrap_or_default().to_owned(),
        flavor,
        scenario: stem.split("__").nth(1).unwrap_or_default().to_owned(),
        rows: parsed.rows,
    }
}

fn all_fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut paths: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|d| fs::read_dir(d.path()).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

fn replica_rows(f: &Fixture) -> Vec<ReplicaStatus> {
    f.rows
        .iter()
        .map(|r| ReplicaStatus::from_row(r).unwrap_or_else(|e| panic!("{}: {e}", f.path.display())))
        .collect()
}

/// Transactions received but not yet applied, in each family's own terms; `None` where the row
/// does not say (`MariaDB`'s single-connection SHOW SLAVE STATUS has no `Gtid_Slave_Pos`).
fn received_not_applied(status: &ReplicaStatus) -> Option<u128> {
    match &status.gtid {
        ReplicaGtid::Mysql {
            retrieved,
            executed,
            ..
        } => Some(retrieved.subtract(executed).count()),
        ReplicaGtid::Mariadb {
            io_pos, slave_pos, ..
        } => slave_pos
            .as_ref()
            .map(|applied| u128::from(io_pos.total_distance(applied))),
    }
}

/// Checks one replica-status fixture against its scenario; returns whether a scenario matched.
fn check_replica_status(f: &Fixture) -> bool {
    let rows = replica_rows(f);
    let name = f.path.display();
    if f.scenario == "primary" {
        assert!(rows.is_empty(), "{name}: a primary has no replica status");
        return true;
    }
    if f.scenario == "multi_channel" {
        assert_eq!(rows.len(), 2, "{name}");
        assert_ne!(rows[0].channel, rows[1].channel, "{name}");
        assert!(rows.iter().all(|r| !r.channel.is_empty()), "{name}");
        assert_ne!(rows[0].source_host, rows[1].source_host, "{name}");
        return true;
    }
    if f.scenario == "second_connection_refused" {
        // The default connection runs; the second cannot connect, and says why.
        assert_eq!(rows.len(), 2, "{name}");
        assert_eq!(rows[0].channel, "", "{name}");
        check_running(&name.to_string(), &rows[0]);
        assert_eq!(rows[1].channel, "extra", "{name}");
        assert_eq!(rows[1].io_running, IoRunning::Connecting, "{name}");
        assert_eq!(
            rows[1].last_io_error.as_ref().map(|e| e.errno),
            Some(2003),
            "{name}"
        );
        return true;
    }
    assert_eq!(rows.len(), 1, "{name}");
    check_one_replica(f, &rows[0])
}

/// Scenarios of a replica with one replication stream.
fn check_one_replica(f: &Fixture, s: &ReplicaStatus) -> bool {
    let name = f.path.display();
    assert!(s.source_port > 0, "{name}");
    match f.scenario.as_str() {
        "running" => check_running(&name.to_string(), s),
        "lagging" => {
            assert!(s.seconds_behind_source.unwrap() > 0, "{name}");
            assert_ne!(
                s.received, s.applied,
                "{name}: read and exec positions differ"
            );
            assert_ne!(
                s.received.file, s.applied.file,
                "{name}: across a binlog file boundary"
            );
        }
        "sql_stopped" => {
            assert_eq!(
                (s.io_running, s.sql_running),
                (IoRunning::Yes, false),
                "{name}"
            );
            assert_eq!(
                s.seconds_behind_source, None,
                "{name}: NULL stays NULL, never 0"
            );
            assert!(s.sql_state.is_empty(), "{name}");
            assert!(
                received_not_applied(s).unwrap() > 0,
                "{name}: received but not applied"
            );
        }
        "io_stopped" => {
            assert_eq!(
                (s.io_running, s.sql_running),
                (IoRunning::No, true),
                "{name}"
            );
            assert_eq!(s.seconds_behind_source, None, "{name}");
            assert!(s.io_state.is_empty(), "{name}");
        }
        "io_connecting_error" => {
            assert_eq!(s.io_running, IoRunning::Connecting, "{name}");
            assert_eq!(s.seconds_behind_source, None, "{name}");
            let err = s.last_io_error.as_ref().expect("IO error");
            assert!(matches!(err.errno, 2003 | 2005), "{name}: {}", err.errno);
            assert!(err.message.contains("connecting"), "{name}");
            assert!(err.timestamp.is_some(), "{name}: MySQL stamps IO errors");
        }
        "sql_error" | "errant_gtid_strict" => {
            assert!(!s.sql_running, "{name}");
            assert_eq!(s.seconds_behind_source, None, "{name}");
            let err = s.last_sql_error.as_ref().expect("SQL error");
            let want = if f.scenario == "sql_error" {
                1062
            } else {
                1950
            };
            assert_eq!(err.errno, want, "{name}");
        }
        "delayed" => {
            assert!(s.sql_delay.unwrap() > 0, "{name}");
            assert!(s.sql_state.contains("DELAY"), "{name}: {}", s.sql_state);
        }
        "hygiene" => {
            check_running(&name.to_string(), s);
            let link = &s.link;
            assert_eq!(link.tls, Some(rwtop::mysql::ChannelTls::Yes), "{name}");
            assert_eq!(link.verify_server_cert, Some(false), "{name}");
            assert_eq!(link.filters.as_ref().map(Vec::len), Some(2), "{name}");
            assert_eq!(link.until.as_deref(), Some("SQL_AFTER_GTIDS"), "{name}");
            assert_eq!(link.skip_counter, Some(2), "{name}");
            assert_eq!(link.heartbeat_period_ms, None, "{name}: not in MySQL's row");
        }
        "tagged_gtids" => {
            let ReplicaGtid::Mysql { executed, .. } = &s.gtid else {
                panic!("{name}")
            };
            let text = executed.to_string();
            assert!(text.contains(":migration:"), "{name}: tags survive: {text}");
            assert_eq!(GtidSet::parse(&text).unwrap(), *executed, "{name}");
        }
        _ => return false,
    }
    true
}

fn check(f: &Fixture) -> bool {
    let name = f.path.display();
    let statement = f.statement.to_ascii_uppercase();
    if statement.contains("SLAVES STATUS")
        || statement.contains("SLAVE STATUS")
        || statement.contains("REPLICA STATUS")
    {
        return check_replica_status(f);
    }
    if statement.contains("MASTER STATUS")
        || statement.contains("BINLOG STATUS")
        || statement.contains("BINARY LOG STATUS")
    {
        return check_binlog_status(f);
    }
    if statement == "SHOW BINARY LOGS" {
        let files: Vec<BinlogFile> = f
            .rows
            .iter()
            .map(|r| BinlogFile::from_row(r).unwrap())
            .collect();
        assert!(
            !files.is_empty() && files.iter().all(|b| b.size > 0),
            "{name}"
        );
        return true;
    }
    if statement.contains("SLAVE HOSTS") || statement == "SHOW REPLICAS" {
        return check_replica_hosts(f);
    }
    if statement.contains("RPL_SEMI_SYNC") {
        return check_semisync(f);
    }
    if statement.contains("'WSREP%'") {
        return check_galera(f);
    }
    if statement == "SHOW GRANTS" {
        return check_grants(f);
    }
    if f.statement.starts_with("SELECT @@global.gtid_binlog_pos") {
        return check_node_state(f);
    }
    if f.statement.starts_with("SELECT w.CHANNEL_NAME") {
        return check_applier_workers(f);
    }
    if f.statement.contains("replication_connection_status") {
        return check_queued(f);
    }
    if f.statement.starts_with("SELECT /* rwtop lock holders */") {
        return check_lock_rows(f);
    }
    if f.statement.starts_with("SELECT /* rwtop processlist */")
        || f.statement.starts_with("/* rwtop processlist */")
    {
        // The recorded statement must be the one rwtop sends to this flavor.
        let sql = rwtop::mysql::processlist::processlist_sql(&f.flavor);
        assert_eq!(f.statement, sql, "{name}");
        let list = rwtop::mysql::Processlist::from_rows(&f.rows).unwrap();
        if f.scenario == "applying_row_events" {
            return check_row_events(f, &list);
        }
        assert_eq!(list.ddl.len(), 2, "{name}");
        let applier = list.ddl.iter().find(|d| d.applier).expect("applier ALTER");
        let client = list.ddl.iter().find(|d| !d.applier).expect("client DDL");
        assert!(client.statement.starts_with("OPTIMIZE"), "{name}");
        assert_eq!(client.waiting_for, None, "{name}");
        if f.scenario == "alter_waiting_for_locks" {
            // The queued read is no DDL; the applier's ALTER names the lock it waits for.
            assert_eq!(
                (
                    applier.elapsed_s,
                    applier.progress,
                    applier.waiting_for.as_deref()
                ),
                (95, None, Some("table metadata lock")),
                "{name}"
            );
            return true;
        }
        assert_eq!(applier.waiting_for, None, "{name}");
        assert_eq!(
            (applier.elapsed_s, applier.progress),
            (41, Some(37.4)),
            "{name}"
        );
        return true;
    }
    false
}

/// The appliers applying row events: `MariaDB` 10.11 (live) names the table in the statement its
/// thread shows and the schema in `db`; `MySQL` 8 names the kind of event and the schema only.
fn check_row_events(f: &Fixture, list: &rwtop::mysql::Processlist) -> bool {
    use rwtop::mysql::{Family, RowEvent};
    let name = f.path.display();
    assert!(list.ddl.is_empty(), "{name}");
    let seen: Vec<(u64, RowEvent, Option<&str>, Option<&str>)> = list
        .row_events
        .iter()
        .map(|r| {
            (
                r.thread_id,
                r.event,
                r.schema.as_deref(),
                r.table.as_deref(),
            )
        })
        .collect();
    match f.flavor.family {
        Family::Mariadb => assert_eq!(
            seen,
            [(206, RowEvent::Update, Some("shop"), Some("events"))],
            "{name}"
        ),
        Family::Mysql => assert_eq!(
            seen,
            [
                (14, RowEvent::Update, Some("shop"), None),
                (15, RowEvent::Delete, Some("shop"), None),
            ],
            "{name}"
        ),
    }
    // The key is looked up apart, never read from the scan.
    assert!(
        list.row_events.iter().all(|r| r.has_key.is_none()),
        "{name}"
    );
    true
}

/// `MySQL` 8's newest queued transaction per channel: the statement rwtop sends to this
/// flavor, each channel's commit time in microseconds, nothing queued as none.
fn check_queued(f: &Fixture) -> bool {
    let name = f.path.display();
    let sql = rwtop::mysql::queued::queued_sql(&f.flavor);
    assert_eq!(Some(f.statement.as_str()), sql, "{name}");
    let queued = rwtop::mysql::queued::from_table(&f.rows).unwrap();
    let commits: Vec<(&str, Option<i64>)> = queued
        .iter()
        .map(|q| (q.channel.as_str(), q.commit_us))
        .collect();
    assert_eq!(
        commits,
        [("", Some(1_733_510_400_250_125)), ("ch_east", None)],
        "{name}"
    );
    true
}

/// `MySQL` 8's worker table: one sample per channel, a worker busy while it names the
/// transaction it applies, a commit-order wait from its thread's processlist state.
fn check_applier_workers(f: &Fixture) -> bool {
    use rwtop::mysql::WorkerSample;
    let name = f.path.display();
    let sql = rwtop::mysql::appliers::workers_sql(&f.flavor);
    assert_eq!(Some(f.statement.as_str()), sql, "{name}");
    let samples = rwtop::mysql::appliers::workers_from_table(&f.rows).unwrap();
    let sample = |channel: &str, workers, busy, commit_order_waits| WorkerSample {
        channel: Some(channel.to_owned()),
        workers,
        busy,
        commit_order_waits: Some(commit_order_waits),
    };
    assert_eq!(
        samples,
        [sample("", 4, 2, 1), sample("ch_east", 2, 1, 0)],
        "{name}"
    );
    // The columns the parser needs are named when missing.
    let mut bare = f.rows[0].clone();
    bare = RawRow::new(
        bare.columns()
            .filter(|c| *c != "CHANNEL_NAME")
            .map(|c| (c.to_owned(), bare.optional_text(&[c]).map(str::to_owned)))
            .collect(),
    );
    let err = rwtop::mysql::appliers::workers_from_table(&[bare]).unwrap_err();
    assert!(err.to_string().contains("CHANNEL_NAME"), "{err}");
    true
}

/// A Galera member's status means its scenario; a server without a provider is no member.
fn check_galera(f: &Fixture) -> bool {
    use rwtop::mysql::galera::{Component, GaleraStatus, MemberState};
    let name = f.path.display();
    let status = GaleraStatus::from_rows(&f.rows);
    if f.scenario == "not_member" {
        assert_eq!(status, None, "{name}");
        return true;
    }
    let g = status.unwrap_or_else(|| panic!("{name}: a member"));
    assert_eq!(g.component, Component::Primary, "{name}");
    assert_eq!((g.cluster_size, g.incoming.len()), (Some(3), 3), "{name}");
    assert!(g.conf_id.is_some() && g.cluster_uuid.len() == 36, "{name}");
    assert!(
        g.flow_control.paused_ns.is_some() && g.cert_failures.is_some(),
        "{name}: {g:?}"
    );
    if f.scenario == "desynced" {
        assert_eq!(g.state, MemberState::Donor, "{name}");
        assert_eq!(g.state_comment, "Donor/Desynced", "{name}");
        assert_eq!(g.desync_count, Some(1), "{name}");
        assert!(g.recv_queue.is_some_and(|q| q > 0), "{name}: {g:?}");
        assert!(!g.serving(), "{name}");
    } else {
        assert_eq!(g.state, MemberState::Synced, "{name}");
        assert!(g.serving(), "{name}");
        assert_eq!(g.recv_queue, Some(0), "{name}");
    }
    true
}

/// Semi-sync needs the variables and the status of the same server: the fixture pairs them by
/// version folder and scenario.
fn check_semisync(f: &Fixture) -> bool {
    if !f.statement.to_ascii_uppercase().contains("VARIABLES") {
        return true; // checked together with its variables file
    }
    let status_path = f
        .path
        .to_string_lossy()
        .replace("show_global_variables", "show_global_status");
    let status = load(Path::new(&status_path));
    let semi = SemiSync::from_rows(&f.rows, &status.rows).unwrap();
    let name = f.path.display();
    if f.scenario == "not_installed" {
        assert_eq!(
            semi,
            SemiSync::default(),
            "{name}: absent plugin is unknown, not off"
        );
    } else {
        assert_eq!(semi.source_enabled, Some(true), "{name}");
        assert!(
            semi.source_active.is_some() && semi.source_clients.is_some(),
            "{name}"
        );
        assert!(semi.source_timeout_ms.is_some_and(|t| t > 0), "{name}");
        // The counters the ACK wait is built from, in either generation's names; one ACK
        // where the server has no count to wait for (MariaDB).
        let c = semi.counters;
        assert!(
            c.tx_wait_time_us.is_some() && c.tx_waits.is_some() && c.no_tx.is_some(),
            "{name}: {c:?}"
        );
        assert!(semi.required_acks().is_some_and(|n| n >= 1), "{name}");
    }
    true
}

#[test]
fn every_fixture_parses_and_means_its_scenario() {
    let fixtures = all_fixtures();
    assert!(
        fixtures.len() >= 50,
        "found only {} fixtures",
        fixtures.len()
    );
    let unchecked: Vec<String> = fixtures
        .iter()
        .filter(|f| !check(f))
        .map(|f| f.path.display().to_string())
        .collect();
    assert!(
        unchecked.is_empty(),
        "fixtures no scenario check covers: {unchecked:#?}"
    );
}

#[test]
fn each_flavor_has_a_recording_of_the_statement_it_would_run() {
    for f in all_fixtures().iter().filter(|f| f.scenario == "running") {
        let chosen = f.flavor.replica_status_sql();
        let dir = f.path.parent().unwrap();
        let has = all_fixtures()
            .iter()
            .any(|g| g.path.parent() == Some(dir) && g.statement == chosen);
        assert!(
            has,
            "{}: no fixture for {chosen} ({})",
            dir.display(),
            f.flavor
        );
    }
}

#[test]
fn every_version_is_covered() {
    let dirs: Vec<String> = all_fixtures()
        .iter()
        .map(|f| {
            f.path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for want in ["mysql-5.7", "mysql-8.0", "mysql-8.4", "mariadb-10.11"] {
        assert!(dirs.iter().any(|d| d == want), "no fixtures for {want}");
    }
}

#[test]
fn a_missing_required_column_is_named() {
    let f = load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mysql-8.0/show_replica_status__running.txt"),
    );
    let cells: Vec<(String, Option<String>)> = f.rows[0]
        .columns()
        .filter(|c| *c != "Read_Source_Log_Pos")
        .map(|c| {
            (
                c.to_owned(),
                f.rows[0].text(&[c]).unwrap().map(str::to_owned),
            )
        })
        .collect();
    let err = ReplicaStatus::from_row(&RawRow::new(cells))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Read_Source_Log_Pos"), "{err}");
}

fn check_binlog_status(f: &Fixture) -> bool {
    let name = f.path.display();
    let rows: Vec<BinlogStatus> = f
        .rows
        .iter()
        .map(|r| BinlogStatus::from_row(r).unwrap())
        .collect();
    if f.scenario == "binlog_disabled" {
        assert!(rows.is_empty(), "{name}");
        return true;
    }
    assert_eq!(rows.len(), 1, "{name}");
    assert!(
        rows[0].position.pos > 4 && !rows[0].position.file.is_empty(),
        "{name}"
    );
    match f.flavor.family {
        Family::Mariadb => assert!(rows[0].executed_gtid_set.is_none(), "{name}"),
        Family::Mysql => {
            let set = rows[0].executed_gtid_set.as_ref().unwrap();
            let uuids = set.uuids().count();
            let want = if f.scenario.contains("multi_uuid") {
                2
            } else {
                1
            };
            assert_eq!(uuids, want, "{name}: {set}");
        }
    }
    true
}

fn check_replica_hosts(f: &Fixture) -> bool {
    let name = f.path.display();
    let hosts: Vec<ReplicaHost> = f
        .rows
        .iter()
        .map(|r| ReplicaHost::from_row(r).unwrap())
        .collect();
    // Every SHOW SLAVE HOSTS / SHOW REPLICAS fixture was taken with two replicas registered,
    // `no_report_host` included (one of the two without report_host).
    assert_eq!(hosts.len(), 2, "{name}");
    assert!(
        hosts
            .iter()
            .all(|h| h.server_id != h.source_id && h.port > 0),
        "{name}"
    );
    if f.scenario == "no_report_host" {
        assert!(hosts.iter().any(|h| h.host.is_empty()), "{name}");
    }
    assert_eq!(
        hosts.iter().all(|h| h.uuid.is_some()),
        f.flavor.family == Family::Mysql,
        "{name}"
    );
    true
}

fn check_node_state(f: &Fixture) -> bool {
    let name = f.path.display();
    let state = NodeState::from_row(&f.rows[0], f.flavor.family).unwrap();
    let GtidState::Mariadb {
        binlog_pos,
        slave_pos,
        ..
    } = &state.gtid
    else {
        panic!("{name}")
    };
    match f.scenario.as_str() {
        "primary" => assert!(!state.read_only && slave_pos.is_empty(), "{name}"),
        "replica" => {
            assert!(state.read_only, "{name}");
            assert!(
                binlog_pos.ahead_of(slave_pos).is_empty(),
                "{name}: no errant transactions"
            );
        }
        "replica_errant" => {
            let errant = binlog_pos.ahead_of(slave_pos);
            assert_eq!(errant.len(), 1, "{name}: the replica's own write is errant");
            assert_ne!(
                errant[0].server_id, 1,
                "{name}: written by the replica, not the primary"
            );
        }
        _ => return false,
    }
    true
}

/// A healthy replica: both threads, no lag, no errors, nothing in flight.
fn check_running(name: &str, s: &ReplicaStatus) {
    assert_eq!(
        (s.io_running, s.sql_running),
        (IoRunning::Yes, true),
        "{name}"
    );
    assert_eq!(s.seconds_behind_source, Some(0), "{name}");
    assert!(
        s.last_io_error.is_none() && s.last_sql_error.is_none(),
        "{name}"
    );
    assert!(matches!(received_not_applied(s), None | Some(0)), "{name}");
    match &s.gtid {
        ReplicaGtid::Mysql {
            auto_position,
            executed,
            ..
        } => {
            assert!(*auto_position && !executed.is_empty(), "{name}");
        }
        ReplicaGtid::Mariadb {
            using_gtid, io_pos, ..
        } => {
            assert_eq!(using_gtid, "Slave_Pos", "{name}");
            assert!(!io_pos.is_empty(), "{name}");
        }
    }
}

/// One statement of the holder read (`mysql::lock_holders`): the statement rwtop sends to this
/// flavor, and rows that parse with NULL kept as `None`.
fn check_lock_rows(f: &Fixture) -> bool {
    let name = f.path.display();
    let sqls = rwtop::mysql::lock_holders::holders_sql(&f.flavor);
    let part = sqls
        .iter()
        .position(|sql| *sql == f.statement)
        .unwrap_or_else(|| panic!("{name}: not a statement rwtop sends to {}", f.flavor));
    let family = f.flavor.family;
    let parsed = match part {
        0 => rwtop::mysql::LockRows::from_rows(family, &f.rows, None, None),
        1 => rwtop::mysql::LockRows::from_rows(family, &[], Some(&f.rows), None),
        _ => rwtop::mysql::LockRows::from_rows(family, &[], None, Some(&f.rows)),
    }
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    match part {
        0 => {
            assert_eq!(parsed.threads.len(), f.rows.len(), "{name}");
            let applier = parsed.threads.iter().find(|t| t.id == 14).unwrap();
            assert_eq!(
                (applier.user.as_deref(), applier.host.as_deref()),
                (None, None)
            );
            assert!(
                parsed.threads.iter().any(|t| t.own),
                "{name}: rwtop's own sessions"
            );
        }
        1 => assert!(parsed.trx.is_some_and(|t| !t.is_empty()), "{name}"),
        _ => {
            let locks = parsed.locks.unwrap_or_default();
            assert!(locks.iter().any(|l| !l.granted), "{name}: a pending lock");
            assert!(
                locks.iter().any(|l| l.schema.is_none()),
                "{name}: NULL as None"
            );
        }
    }
    true
}

/// The three recorded statements of one `MySQL` holder read name the idle transaction that holds
/// the applier's ALTER, with its last statement and `KILL`, as the live read would.
#[test]
fn mysql_holder_read_names_the_idle_transaction_and_its_kill() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mysql-8.0");
    let rows =
        |what: &str| load(&dir.join(format!("rwtop_lock_{what}__alter_waiting_for_locks.txt")));
    let (threads, trx, locks) = (rows("threads"), rows("trx"), rows("metadata_locks"));
    let list = rwtop::mysql::LockRows::from_rows(
        Family::Mysql,
        &threads.rows,
        Some(&trx.rows),
        Some(&locks.rows),
    )
    .unwrap();
    let scan = load(&dir.join("rwtop_processlist__alter_waiting_for_locks.txt"));
    let processes = rwtop::mysql::Processlist::from_rows(&scan.rows).unwrap();
    let ddl = processes.ddl.iter().find(|d| d.applier).unwrap();
    let blockers = rwtop::mysql::lock_holders::name_holders(ddl, &list).unwrap();
    assert_eq!(
        blockers.source,
        rwtop::mysql::HolderSource::PerformanceSchema
    );
    assert_eq!(blockers.holders.len(), 1, "{blockers:?}");
    let holder = &blockers.holders[0];
    assert_eq!(
        holder.summary(),
        "#11 report@10.0.0.5, idle 2m00s in a transaction open 2m01s: KILL 11"
    );
    assert_eq!(
        holder.last_statement,
        rwtop::mysql::LastStatement::Last("SELECT total FROM orders WHERE id = 7".into())
    );
}

/// A `SHOW GRANTS` recording: what the full mode needs and the account lacks, by scenario.
fn check_grants(f: &Fixture) -> bool {
    use rwtop::mysql::grants::{AccountGrants, Mode, missing};
    let held = AccountGrants::from_rows(&f.rows);
    let lacks: Vec<String> = missing(f.flavor.family, &Mode::Full.uses(""), &held)
        .iter()
        .map(|m| format!("{} ON {}", m.privilege, m.on))
        .collect();
    let want: &[&str] = match f.scenario.as_str() {
        "monitor" | "full" => &[],
        "role_and_no_performance_schema" => &["SELECT ON performance_schema.*"],
        "wildcard_schema" => &["REPLICATION SLAVE ON *.*"],
        _ => return false,
    };
    assert_eq!(lacks, want, "{}", f.path.display());
    assert_ne!(held.account(), "<account>", "{}", f.path.display());
    true
}
