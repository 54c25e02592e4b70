//! The heartbeat read, in front of the status poll or on its own, goes as `EXECUTE` of a
//! statement prepared on the connection once a read has found its table
//! (`src/mysql/prepared.rs`), and still reads what the plain read reads: the newest row, no rows
//! while the table is gone, the row again once it is back. A server that will not prepare keeps
//! the plain read. The server's own counters say which was sent.

mod common;

use std::time::Duration;

use common::TestSandbox;
use rwtop::mysql::batch::Ask;
use rwtop::mysql::prepared::Lead;
use rwtop::mysql::{NodeConn, RawRow};

const WRITER: &str = "prepared-test";
const DEADLINE: Duration = Duration::from_secs(30);

fn asking(read: &str) -> Ask<'_> {
    Ask {
        lead: Some(read),
        ..Ask::default()
    }
}

fn seq(rows: &[RawRow]) -> Option<u64> {
    rows.first()
        .and_then(|r| r.optional_u64(&["seq"]).ok().flatten())
}

/// This session's count of a statement kind, as the server counts it.
async fn session_count(conn: &mut NodeConn, counter: &str) -> u64 {
    let rows = conn
        .query_rows(&format!("SHOW SESSION STATUS LIKE '{counter}'"))
        .await
        .unwrap();
    rows.first()
        .and_then(|r| r.optional_u64(&["Value"]).ok().flatten())
        .unwrap_or_else(|| panic!("no {counter} in {rows:?}"))
}

/// Polls until the lead reads `want` as its row's seq; returns that poll's lead rows.
async fn until_seq(conn: &mut NodeConn, read: &str, want: u64) -> Vec<RawRow> {
    common::eventually(&format!("seq {want} on r1"), DEADLINE, async || {
        let status = conn.status(asking(read)).await.unwrap();
        assert_eq!(
            status.reported.replication.len(),
            1,
            "the poll came back with it"
        );
        let rows = status.lead.expect("the read was asked").unwrap();
        (seq(&rows) == Some(want)).then_some(rows)
    })
    .await
}

fn write_beat(t: &TestSandbox, seq: u64) {
    t.admin(
        "primary",
        &format!(
            "INSERT INTO rwtop.heartbeat VALUES ('{WRITER}', {seq}, UTC_TIMESTAMP(6)) \
             ON DUPLICATE KEY UPDATE seq = VALUES(seq), ts = VALUES(ts)"
        ),
    );
}

const CREATE: &str = "CREATE TABLE rwtop.heartbeat (writer_id VARCHAR(64) NOT NULL PRIMARY KEY, \
                      seq BIGINT UNSIGNED NOT NULL, ts DATETIME(6) NOT NULL)";

#[tokio::test]
async fn live_the_heartbeat_read_is_prepared_once_it_finds_its_table_and_reads_the_same() {
    let t = TestSandbox::start(1, false);
    let mut conn = t.connect("r1").await;
    let read = rwtop::poll::heartbeat::heartbeat_read_sql(&[WRITER.to_owned()]);

    // No table yet: plain reads, nothing prepared.
    let status = conn.status(asking(&read)).await.unwrap();
    assert_eq!(status.lead.expect("asked").unwrap(), Vec::new());
    assert_eq!(conn.lead_state(), &Lead::Plain);
    assert_eq!(session_count(&mut conn, "Com_prepare_sql").await, 0);

    t.admin("primary", CREATE);
    write_beat(&t, 41);
    until_seq(&mut conn, &read, 41).await;
    assert_eq!(conn.lead_state(), &Lead::Ready(read.clone()));
    assert_eq!(session_count(&mut conn, "Com_prepare_sql").await, 1);

    // From now on every poll sends EXECUTE, and it reads new rows, not a cached answer.
    let executed = session_count(&mut conn, "Com_execute_sql").await;
    for _ in 0..5 {
        let status = conn.status(asking(&read)).await.unwrap();
        assert_eq!(seq(&status.lead.expect("asked").unwrap()), Some(41));
    }
    assert_eq!(
        session_count(&mut conn, "Com_execute_sql").await,
        executed + 5
    );
    // The read on its own, between status polls, goes the same way.
    let (alone, _) = conn.query_lead(&read).await.unwrap();
    assert_eq!(seq(&alone), Some(41));
    assert_eq!(
        session_count(&mut conn, "Com_execute_sql").await,
        executed + 6
    );
    write_beat(&t, 42);
    let rows = until_seq(&mut conn, &read, 42).await;
    let alone = conn.query_rows(&read).await.unwrap();
    assert_eq!(seq(&alone), seq(&rows), "the plain read reads the same row");
    assert_eq!(rows.len(), alone.len());

    // The table dropped: no rows and no error, as the plain read; back: its row again.
    t.admin("primary", "DROP TABLE rwtop.heartbeat");
    common::eventually("the table gone on r1", DEADLINE, async || {
        let status = conn.status(asking(&read)).await.unwrap();
        let rows = status.lead.expect("asked").unwrap();
        rows.is_empty().then_some(())
    })
    .await;
    let (alone, _) = conn.query_lead(&read).await.unwrap();
    assert!(alone.is_empty(), "no table, no rows, no error: {alone:?}");
    assert!(conn.is_open());
    t.admin("primary", CREATE);
    write_beat(&t, 43);
    until_seq(&mut conn, &read, 43).await;
    assert_eq!(session_count(&mut conn, "Com_prepare_sql").await, 1);

    // Another writer list prepares the new text in place of the old one.
    let two = rwtop::poll::heartbeat::heartbeat_read_sql(&[WRITER.to_owned(), "other".to_owned()]);
    until_seq(&mut conn, &two, 43).await;
    let status = conn.status(asking(&two)).await.unwrap();
    assert_eq!(seq(&status.lead.expect("asked").unwrap()), Some(43));
    assert_eq!(conn.lead_state(), &Lead::Ready(two.clone()));
    assert_eq!(session_count(&mut conn, "Com_prepare_sql").await, 2);
}

#[tokio::test]
async fn live_a_server_that_will_not_prepare_keeps_the_plain_read() {
    let t = TestSandbox::start(1, false);
    t.admin("primary", CREATE);
    write_beat(&t, 7);
    t.admin("r1", "SET GLOBAL max_prepared_stmt_count = 0");
    let mut conn = t.connect("r1").await;
    let read = rwtop::poll::heartbeat::heartbeat_read_sql(&[WRITER.to_owned()]);
    until_seq(&mut conn, &read, 7).await;
    assert_eq!(conn.lead_state(), &Lead::Refused);
    write_beat(&t, 8);
    until_seq(&mut conn, &read, 8).await;
    let (alone, _) = conn.query_lead(&read).await.unwrap();
    assert_eq!(seq(&alone), Some(8));
    assert_eq!(conn.lead_state(), &Lead::Refused);
    assert_eq!(session_count(&mut conn, "Com_execute_sql").await, 0);
    assert!(
        conn.is_open(),
        "a refused PREPARE leaves the connection usable"
    );

    // A refused read that was prepared is named by its text, not by the EXECUTE.
    t.admin("r1", "SET GLOBAL max_prepared_stmt_count = 16382");
    let mut conn = t.connect("r1").await;
    until_seq(&mut conn, &read, 8).await;
    assert_eq!(conn.lead_state(), &Lead::Ready(read.clone()));
    t.admin(
        "primary",
        "ALTER TABLE rwtop.heartbeat CHANGE seq seq_renamed BIGINT UNSIGNED NOT NULL",
    );
    let err = common::eventually("the renamed column on r1", DEADLINE, async || {
        let status = conn.status(asking(&read)).await.unwrap();
        status.lead.expect("asked").err()
    })
    .await;
    match err {
        rwtop::mysql::SqlError::Server { code, sql, .. } => {
            assert_eq!(code, 1054, "unknown column");
            assert_eq!(sql, read, "the read is named");
        }
        other => panic!("{other:?}"),
    }
}
