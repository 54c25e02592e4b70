//! Connection and query failures against real servers: each a clear error naming the node, and a
//! connection whose query timed out is never reused.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::TestSandbox;
use rwtop::mysql::batch::{Ask, PollParts};
use rwtop::mysql::{Endpoint, NodeConn, Secret, SqlError, Timeouts};

fn short() -> Timeouts {
    Timeouts {
        connect: Duration::from_millis(1500),
        query: Duration::from_millis(500),
    }
}

#[tokio::test]
async fn live_connect_failures_name_the_node_and_the_fix() {
    let t = TestSandbox::start(1, false);
    let good = t.sandbox().endpoint("r1").unwrap();

    let wrong = Endpoint {
        password: Some(Secret::new("not-the-password")),
        ..good.clone()
    };
    let Err(err) = NodeConn::connect(&wrong, short()).await else {
        panic!("connected")
    };
    assert!(
        matches!(
            err,
            SqlError::Connect {
                code: Some(1045),
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&good.address()) && text.contains("wrong user or password"),
        "{text}"
    );
    assert!(
        !text.contains("not-the-password"),
        "the password never appears: {text}"
    );
    assert!(
        !format!("{wrong:?}").contains("not-the-password"),
        "nor in Debug"
    );

    // A port where nothing listens.
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = Endpoint {
        port: free,
        ..good.clone()
    };
    let Err(err) = NodeConn::connect(&nobody, short()).await else {
        panic!("connected")
    };
    assert!(
        matches!(err, SqlError::Connect { code: None, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{free}")),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_times_out() {
    // The kernel accepts the TCP connection into the backlog; nobody ever speaks.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = Endpoint {
        host: "127.0.0.1".into(),
        port: silent.local_addr().unwrap().port(),
        user: "rwtop".into(),
        password: None,
        tls: rwtop::mysql::Tls::default(),
    };
    let start = Instant::now();
    let Err(err) = NodeConn::connect(&endpoint, short()).await else {
        panic!("connected")
    };
    assert!(matches!(err, SqlError::ConnectTimeout { .. }), "{err:?}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "bounded by the connect timeout"
    );
    assert!(err.to_string().contains("no handshake"), "{err}");
}

#[tokio::test]
async fn live_query_timeout_drops_the_connection() {
    let t = TestSandbox::start(1, false);
    let endpoint = t.sandbox().endpoint("r1").unwrap();
    let mut conn = NodeConn::connect(&endpoint, short()).await.unwrap();
    let err = conn.query_rows("SELECT SLEEP(3)").await.unwrap_err();
    assert!(matches!(err, SqlError::QueryTimeout { .. }), "{err:?}");
    assert!(!conn.is_open(), "a cancelled query poisons the connection");
    // The next query must not receive SLEEP's late answer: it fails until reconnect.
    let err = conn.replica_status().await.unwrap_err();
    assert!(matches!(err, SqlError::Closed { .. }), "{err:?}");
    let mut fresh = NodeConn::connect(&endpoint, short()).await.unwrap();
    assert_eq!(fresh.replica_status().await.unwrap().len(), 1);
}

#[tokio::test]
async fn live_missing_grant_is_a_clear_error_and_keeps_the_connection() {
    let t = TestSandbox::start(1, false);
    let mut conn = t.connect("primary").await;
    let err = conn
        .query_rows("SELECT * FROM mysql.user")
        .await
        .unwrap_err();
    assert!(
        matches!(err, SqlError::Server { code: 1142, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("missing privilege"), "{err}");
    assert!(
        conn.is_open(),
        "a server error leaves the connection usable"
    );
    assert!(conn.binlog_status().await.unwrap().is_some());
}

/// A batch's statements run in one round trip (src/mysql/batch.rs): each set of rows comes back
/// in order, a failing statement is named as it would be alone, the server runs none after it,
/// and the connection answers the next query with that query's own rows.
#[tokio::test]
async fn live_a_batch_names_its_failing_statement_and_leaves_nothing_behind() {
    let t = TestSandbox::start(1, false);
    let mut conn = t.connect("primary").await;
    let value = |rows: &[rwtop::mysql::RawRow], col: &str| {
        rows.first()
            .and_then(|r| r.optional_u64(&[col]).ok().flatten())
    };
    let sets = conn
        .query_sets(&[
            "SELECT 1 AS a",
            "SELECT 2 AS b",
            "SELECT 3 AS c FROM DUAL WHERE 0",
        ])
        .await
        .unwrap();
    assert_eq!(sets.len(), 3);
    assert_eq!(value(&sets[0], "a"), Some(1));
    assert_eq!(value(&sets[1], "b"), Some(2));
    assert!(sets[2].is_empty(), "an empty set keeps its place");

    let err = conn
        .query_sets(&[
            "SELECT 1 AS a",
            "SELECT * FROM mysql.user",
            "SET @after_the_failure = 7",
        ])
        .await
        .unwrap_err();
    match &err {
        SqlError::Server { code, sql, .. } => {
            assert_eq!(*code, 1142, "{err}");
            assert_eq!(
                sql, "SELECT * FROM mysql.user",
                "the failing statement is named"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        conn.is_open(),
        "a server error leaves the connection usable"
    );
    let after = conn.query_rows("SELECT 42 AS x").await.unwrap();
    assert_eq!(
        value(&after, "x"),
        Some(42),
        "the next query gets its own rows"
    );
    let set = conn
        .query_rows("SELECT @after_the_failure AS n")
        .await
        .unwrap();
    assert_eq!(value(&set, "n"), None, "nothing after the failure ran");

    let err = conn
        .query_sets(&["SELECT 1 AS a", "SELECT SLEEP(3) AS s"])
        .await
        .unwrap_err();
    match &err {
        // The server answers a batch once it ran all of it: the timeout names the batch.
        SqlError::QueryTimeout { sql, .. } => {
            assert!(sql.contains("SELECT SLEEP(3) AS s"), "{sql}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!conn.is_open(), "a timed-out batch poisons the connection");
}

/// The status poll's batch answers what its statements answer one by one, on a quiet replica
/// and on the primary (binlog on: coordinate and list); a poll that leaves the coordinate out
/// (a node nobody replicates from) still gets the list.
#[tokio::test]
async fn live_the_status_batch_reads_what_the_statements_read_alone() {
    let every = || Ask {
        parts: PollParts {
            clock: false,
            ..PollParts::ALL
        },
        lead: None,
    };
    let t = TestSandbox::start(1, false);
    for node in ["primary", "r1"] {
        let mut conn = t.connect(node).await;
        let batch = conn.status(every()).await.unwrap();
        let channels = conn.replica_status().await.unwrap();
        let names = |c: &[rwtop::mysql::ReplicaStatus]| -> Vec<(String, String)> {
            c.iter()
                .map(|s| (s.channel.clone(), s.source_host.clone()))
                .collect()
        };
        assert_eq!(
            names(&batch.reported.replication),
            names(&channels),
            "{node}"
        );
        assert_eq!(
            batch.reported.replication.len(),
            usize::from(node == "r1"),
            "{node}"
        );
        assert_eq!(
            batch.reported.state,
            conn.node_state().await.unwrap(),
            "{node}"
        );
        assert_eq!(
            batch.reported.binlog,
            conn.binlog_status().await.unwrap(),
            "{node}"
        );
        let files = conn.binlog_files().await.unwrap();
        assert_eq!(
            batch.reported.binlog_files.as_deref(),
            Some(files.as_slice()),
            "{node}"
        );
        assert!(!files.is_empty(), "{node} logs binlogs");
        let hosts = conn.replica_hosts().await.unwrap();
        assert_eq!(
            batch.reported.replica_hosts.as_deref(),
            Some(hosts.as_slice()),
            "{node}"
        );
        assert_eq!(
            hosts.len(),
            usize::from(node == "primary"),
            "{node}: r1 reports itself"
        );
        let scan = batch
            .reported
            .processes
            .expect("the processlist was asked for");
        assert!(scan.summary.threads >= 1, "{node}: {scan:?}");
        assert!(batch.reported.binlog.is_some(), "{node} logs binlogs");
        let list_alone = Ask {
            parts: PollParts {
                binlog_files: true,
                ..PollParts::default()
            },
            lead: None,
        };
        let list_alone = conn.status(list_alone).await.unwrap();
        assert_eq!(
            list_alone.reported.binlog, None,
            "{node}: the coordinate was not asked"
        );
        assert_eq!(
            list_alone.reported.binlog_files.as_deref(),
            Some(files.as_slice()),
            "{node}"
        );
        let without = conn.status(Ask::default()).await.unwrap();
        assert_eq!(without.reported.binlog, None, "{node}");
        assert_eq!(without.reported.binlog_files, None, "{node}");
        assert_eq!(without.reported.replica_hosts, None, "{node}");
        assert_eq!(without.reported.processes, None, "{node}");
    }
}

/// Discovery is optional: a monitor account without the grant `SHOW SLAVE HOSTS` needs still
/// gets the whole status poll, the processlist asked after the refused statement included (the
/// server ran nothing after it, so the batch asks it again alone).
#[tokio::test]
async fn live_a_refused_optional_part_leaves_only_itself_out_of_the_status_poll() {
    let t = TestSandbox::start(1, false);
    let account = "'rwtop_nohosts'@'127.0.0.1'";
    let mut sql = vec![format!(
        "CREATE USER {account} IDENTIFIED BY 'nohosts-test-only'"
    )];
    sql.extend(
        rwtop::mysql::grants::monitor_grants(rwtop::mysql::Family::Mariadb, account)
            .into_iter()
            .map(|g| g.replace(", REPLICATION MASTER ADMIN", "")),
    );
    t.admin("primary", &sql.join("; "));
    let endpoint = Endpoint {
        user: "rwtop_nohosts".into(),
        password: Some(Secret::new("nohosts-test-only")),
        ..t.sandbox().endpoint("primary").unwrap()
    };
    let mut conn = NodeConn::connect(&endpoint, short()).await.unwrap();
    let refused = conn.replica_hosts().await.unwrap_err();
    assert!(matches!(refused, SqlError::Server { .. }), "{refused:?}");
    let status = conn
        .status(Ask {
            parts: PollParts {
                binlog_files: true,
                replica_hosts: true,
                processes: true,
                ..PollParts::default()
            },
            lead: None,
        })
        .await
        .unwrap();
    assert_eq!(status.reported.replica_hosts, None);
    assert!(
        status.reported.processes.is_some(),
        "asked again after the refusal"
    );
    assert!(status.reported.binlog_files.is_some_and(|f| !f.is_empty()));
    assert!(
        status.reported.replication.is_empty(),
        "the primary replicates from nobody"
    );
}

/// The clock and the heartbeat read sent in front of the status poll answer what they answer
/// alone: the server's clock within the round trip, no rows while the heartbeat table is missing
/// (the rest of the poll still comes back), the row once it replicated; any other refusal is the
/// read's own error, naming it, and the poll still comes back.
#[tokio::test]
async fn live_reads_in_front_of_the_status_poll_read_what_they_read_alone() {
    let t = TestSandbox::start(1, false);
    let mut conn = t.connect("r1").await;
    let read = rwtop::poll::heartbeat::heartbeat_read_sql(&["led-test".to_owned()]);
    let asking = |lead| Ask {
        parts: PollParts {
            clock: true,
            ..PollParts::default()
        },
        lead: Some(lead),
    };
    let sent = chrono::Utc::now();
    let before = conn.status(asking(&read)).await.unwrap();
    let lead = before.lead.expect("the read was asked").unwrap();
    assert!(lead.is_empty(), "no table yet: {lead:?}");
    assert_eq!(
        before.reported.replication.len(),
        1,
        "the poll came back after it"
    );
    assert!(conn.is_open());
    let clock = before.clock.expect("the clock was asked");
    let rtt = before.first_answer;
    assert!(
        rtt > Duration::ZERO && rtt < Duration::from_secs(5),
        "{rtt:?}"
    );
    // Same machine: the server's clock is this one's, read inside the round trip.
    let (offset_ms, bound) = rwtop::poll::pt_heartbeat::clock_offset(&clock, sent, rtt)
        .unwrap_or_else(|| panic!("no clock in {clock:?}"));
    assert_eq!(bound, rtt);
    let slack = i64::try_from(rtt.as_millis()).unwrap() + 2;
    assert!(
        offset_ms.abs() <= slack,
        "offset {offset_ms} ms, rtt {rtt:?}"
    );

    t.admin(
        "primary",
        &format!(
            "{}; INSERT INTO rwtop.heartbeat VALUES ('led-test', 41, UTC_TIMESTAMP(6))",
            rwtop::mysql::own_tables::HEARTBEAT.create_sql()
        ),
    );
    let seq = |rows: &[rwtop::mysql::RawRow]| {
        rows.first()
            .and_then(|r| r.optional_u64(&["seq"]).ok().flatten())
    };
    let lead = common::eventually("the row on r1", Duration::from_secs(30), async || {
        let status = conn.status(asking(&read)).await.unwrap();
        assert_eq!(status.reported.replication.len(), 1);
        status.lead.and_then(Result::ok).filter(|l| !l.is_empty())
    })
    .await;
    assert_eq!(seq(&lead), Some(41));
    let alone = conn.query_rows(&read).await.unwrap();
    assert_eq!(seq(&alone), seq(&lead), "{alone:?}");

    let refused = "SELECT * FROM mysql.user";
    let status = conn.status(asking(refused)).await.unwrap();
    assert_eq!(
        status.reported.replication.len(),
        1,
        "the poll came back without it"
    );
    assert!(status.clock.is_some(), "the clock before it was read");
    match status.lead.expect("the read was asked").unwrap_err() {
        SqlError::Server { code, sql, .. } => {
            assert_eq!(code, 1142);
            assert_eq!(sql, refused, "the read is named");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        conn.is_open(),
        "a server error leaves the connection usable"
    );
}
