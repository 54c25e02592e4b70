//! The SQL layer against real `MariaDB` servers started by the sandbox: every reading, in every
//! replication state we can produce on purpose.

mod common;

use std::time::Duration;

use common::{TestSandbox, eventually};
use rwtop::mysql::{
    Family, GtidState, IoRunning, NodeConn, NodeState, ReplicaGtid, ReplicaStatus, bytes_between,
};

const DEADLINE: Duration = Duration::from_secs(30);

async fn one_status(conn: &mut NodeConn) -> ReplicaStatus {
    let mut rows = conn.replica_status().await.expect("replica status");
    assert_eq!(rows.len(), 1, "one replication connection");
    rows.remove(0)
}

fn mariadb_positions(status: &ReplicaStatus) -> (rwtop::gtid::GtidList, rwtop::gtid::GtidList) {
    match &status.gtid {
        ReplicaGtid::Mariadb {
            io_pos, slave_pos, ..
        } => (
            io_pos.clone(),
            slave_pos
                .clone()
                .expect("SHOW ALL SLAVES STATUS has Gtid_Slave_Pos"),
        ),
        ReplicaGtid::Mysql { .. } => panic!("the sandbox runs MariaDB"),
    }
}

#[tokio::test]
async fn live_replicas_report_gtid_replication_in_typed_rows() {
    let t = TestSandbox::start(2, false);
    t.write(1);
    let primary_port = t.sandbox().port("primary").unwrap();
    let mut primary = t.connect("primary").await;
    assert_eq!(primary.flavor().family, Family::Mariadb);
    assert!(
        primary.flavor().version.at_least(10, 5, 0),
        "{}",
        primary.flavor()
    );
    assert!(primary.identity().log_bin);
    assert_eq!(primary.identity().gtid_strict_mode, Some(true));

    let primary_state = primary.node_state().await.unwrap();
    let GtidState::Mariadb { binlog_pos, .. } = &primary_state.gtid else {
        panic!()
    };
    let binlog_pos = binlog_pos.clone();
    let mut ids = vec![primary.identity().server_id];
    for name in ["r1", "r2"] {
        let mut conn = t.connect(name).await;
        ids.push(conn.identity().server_id);
        let status = eventually("replica caught up", DEADLINE, async || {
            let want = binlog_pos.clone();
            let s = one_status(&mut conn).await;
            let (_, applied) = mariadb_positions(&s);
            (applied == want).then_some(s)
        })
        .await;
        assert_eq!(status.io_running, IoRunning::Yes, "{name}");
        assert!(status.sql_running, "{name}");
        assert_eq!(status.seconds_behind_source, Some(0), "{name}");
        assert_eq!(status.source_port, primary_port, "{name}");
        assert_eq!(status.source_host, "127.0.0.1");
        assert_eq!(status.source_server_id, Some(1));
        assert_eq!(status.channel, "", "{name}: default connection");
        assert!(status.last_io_error.is_none() && status.last_sql_error.is_none());
        let ReplicaGtid::Mariadb {
            using_gtid, io_pos, ..
        } = &status.gtid
        else {
            panic!()
        };
        assert_eq!(using_gtid, "Slave_Pos");
        assert_eq!(io_pos, &binlog_pos);
        let state = conn.node_state().await.unwrap();
        assert!(state.read_only, "{name}: sandbox replicas are read-only");
        assert_eq!(
            state.super_read_only, None,
            "MariaDB has no super_read_only"
        );
        assert!(state.has_applied_all_of(&primary_state), "{name}");
        assert!(
            !primary_state.has_applied_all_of(&state),
            "a primary applies nothing"
        );
        conn.close().await;
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "distinct server ids");
    primary.close().await;
}

#[tokio::test]
async fn live_primary_reports_binlog_hosts_and_semisync_off() {
    let t = TestSandbox::start(2, false);
    t.write(7);
    let mut primary = t.connect("primary").await;
    let status = primary
        .binlog_status()
        .await
        .unwrap()
        .expect("binlog is on");
    let files = primary.binlog_files().await.unwrap();
    let last = files.last().expect("at least one binlog");
    assert_eq!(
        status.position.file, last.name,
        "current file is the newest"
    );
    assert_eq!(
        status.position.pos, last.size,
        "active binlog size is the write position"
    );
    assert!(
        status.executed_gtid_set.is_none(),
        "MariaDB reports GTIDs through variables"
    );
    assert!(
        primary.replica_status().await.unwrap().is_empty(),
        "a primary has no source"
    );
    let state = primary.node_state().await.unwrap();
    assert!(!state.read_only);

    let mut hosts = primary.replica_hosts().await.unwrap();
    hosts.sort_by_key(|h| h.port);
    let ports: Vec<u16> = hosts.iter().map(|h| h.port).collect();
    let mut want: Vec<u16> = ["r1", "r2"]
        .iter()
        .map(|n| t.sandbox().port(n).unwrap())
        .collect();
    want.sort_unstable();
    assert_eq!(ports, want);
    // Each replica reports its sandbox name (`report_host`) and its own port (`report_port`).
    for h in &hosts {
        assert_eq!(t.sandbox().port(&h.host), Some(h.port), "{h:?}");
        assert!(h.source_id == 1 && h.uuid.is_none(), "{h:?}");
    }

    let semi = primary.semisync().await.unwrap();
    assert_eq!(semi.source_enabled, Some(false), "built in, but off");
    assert_eq!(semi.source_active, Some(false));
    primary.close().await;
}

#[tokio::test]
async fn live_semisync_sandbox_reports_semisync_on() {
    let t = TestSandbox::start(2, true);
    let mut primary = t.connect("primary").await;
    let semi = eventually("both semi-sync clients", DEADLINE, async || {
        let s = primary.semisync().await.unwrap();
        (s.source_clients == Some(2)).then_some(s)
    })
    .await;
    assert_eq!(semi.source_enabled, Some(true));
    assert_eq!(semi.source_active, Some(true));
    assert!(semi.source_timeout_ms.is_some_and(|t| t > 0));
    let mut r1 = t.connect("r1").await;
    let replica = r1.semisync().await.unwrap();
    assert_eq!(replica.replica_enabled, Some(true));
    assert_eq!(replica.replica_active, Some(true));
}

#[tokio::test]
async fn live_sql_thread_stopped_reads_null_lag_and_a_backlog() {
    let t = TestSandbox::start(1, false);
    t.write(1);
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    t.write(2);
    t.write(3);
    let mut r1 = t.connect("r1").await;
    let status = eventually(
        "two transactions received, not applied",
        DEADLINE,
        async || {
            let s = one_status(&mut r1).await;
            let (received, applied) = mariadb_positions(&s);
            (received.total_distance(&applied) == 2).then_some(s)
        },
    )
    .await;
    assert_eq!(status.io_running, IoRunning::Yes);
    assert!(!status.sql_running);
    assert_eq!(status.seconds_behind_source, None, "NULL stays NULL");
    assert!(status.sql_state.is_empty());
    assert_ne!(
        status.received, status.applied,
        "exec position frozen behind read position"
    );

    let mut primary = t.connect("primary").await;
    let files = primary.binlog_files().await.unwrap();
    let behind = bytes_between(&files, &status.applied, &status.received).unwrap();
    assert!(behind > 0, "two row events are bytes behind");
    let head = primary.binlog_status().await.unwrap().unwrap().position;
    assert_eq!(
        bytes_between(&files, &status.received, &head),
        Some(0),
        "IO thread is current"
    );
    let (r1_state, p_state) = (
        r1.node_state().await.unwrap(),
        primary.node_state().await.unwrap(),
    );
    assert!(!r1_state.has_applied_all_of(&p_state));

    t.admin("r1", "START SLAVE SQL_THREAD");
    eventually("catch-up after restart", DEADLINE, async || {
        let s = one_status(&mut r1).await;
        (s.sql_running && s.seconds_behind_source == Some(0) && s.received == s.applied)
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn live_io_thread_stopped_reads_null_lag() {
    let t = TestSandbox::start(1, false);
    t.write(0); // creates the table: a transaction of its own
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    t.admin("r1", "STOP SLAVE IO_THREAD");
    t.write(1);
    let mut r1 = t.connect("r1").await;
    let status = one_status(&mut r1).await;
    assert_eq!(status.io_running, IoRunning::No);
    assert!(status.sql_running);
    assert_eq!(status.seconds_behind_source, None);
    assert!(status.io_state.is_empty());
    let mut primary = t.connect("primary").await;
    let p_state: NodeState = primary.node_state().await.unwrap();
    let GtidState::Mariadb { binlog_pos, .. } = &p_state.gtid else {
        panic!()
    };
    let (received, _) = mariadb_positions(&status);
    assert_eq!(
        binlog_pos.total_distance(&received),
        1,
        "one transaction not yet received"
    );
}

#[tokio::test]
async fn live_replication_errors_are_typed() {
    let t = TestSandbox::start(1, false);
    t.write(1);
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    // A row the replica has but never logged, then the same key from the primary.
    t.admin("r1", "SET sql_log_bin=0; INSERT INTO rwtop.t VALUES (5)");
    t.write(5);
    let mut r1 = t.connect("r1").await;
    let status = eventually("SQL thread stops on the duplicate", DEADLINE, async || {
        let s = one_status(&mut r1).await;
        (!s.sql_running).then_some(s)
    })
    .await;
    let err = status.last_sql_error.expect("SQL error");
    assert_eq!(err.errno, 1062);
    assert!(
        err.message.contains("Duplicate entry '5'"),
        "{}",
        err.message
    );
    assert_eq!(err.timestamp, None, "MariaDB has no error timestamps");
    assert!(status.last_io_error.is_none());
    assert_eq!(status.seconds_behind_source, None);
}

#[tokio::test]
async fn live_and_recorded_readings_agree() {
    // The fixture path (client's vertical text) and the live path (driver rows) must give the
    // same typed status, or the MariaDB fixtures would prove nothing about live parsing.
    let t = TestSandbox::start(1, false);
    t.write(1);
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    t.write(2);
    let mut r1 = t.connect("r1").await;
    let sql = r1.flavor().replica_status_sql();
    let live = r1.query_rows(sql).await.unwrap();
    let recorded = t.admin("r1", sql);
    assert_eq!(live.len(), 1);
    let a = ReplicaStatus::from_row(&live[0]).unwrap();
    let b = ReplicaStatus::from_row(&recorded[0]).unwrap();
    // Relay_Log_Space and the like can move between the two reads only if replication moves;
    // with the SQL thread stopped and no writes, nothing does.
    assert_eq!(a, b);
    assert_eq!(
        live[0].columns().collect::<Vec<_>>(),
        recorded[0].columns().collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn live_monitor_user_has_exactly_the_granted_privileges() {
    // What the server says the monitor user holds must be what `monitor_grants` (and so the
    // README) lists: nothing more slipped in, nothing lost.
    use rwtop::mysql::grants::monitor_grants;
    let t = TestSandbox::start(1, false);
    let account = "'rwtop'@'127.0.0.1'";
    for node in ["primary", "r1"] {
        let rows = t.admin(node, &format!("SHOW GRANTS FOR {account}"));
        let shown: Vec<String> = rows
            .iter()
            .map(|r| privileges(r.text(&[r.columns().next().unwrap()]).unwrap().unwrap()))
            .collect();
        let mut shown = shown
            .into_iter()
            .filter(|p| !p.starts_with("USAGE"))
            .collect::<Vec<_>>();
        let mut want: Vec<String> = monitor_grants(Family::Mariadb, account)
            .iter()
            .map(|g| privileges(g))
            .collect();
        shown.sort();
        want.sort();
        assert_eq!(shown, want, "{node}");
    }
}

/// `GRANT A, B ON x.* TO ...` → "on x.*: A, B" with privileges sorted and quotes dropped, so the
/// server's spelling and ours compare.
fn privileges(grant: &str) -> String {
    let body = grant.trim_start_matches("GRANT ");
    let (privs, rest) = body.split_once(" ON ").unwrap();
    let object = rest.split(" TO ").next().unwrap().replace('`', "");
    let mut list: Vec<&str> = privs.split(", ").collect();
    list.sort_unstable();
    format!(
        "{}on {object}",
        if list == ["USAGE"] { "USAGE " } else { "" }
    ) + ": "
        + &list.join(", ")
}
