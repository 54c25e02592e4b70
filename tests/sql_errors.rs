//! Connection and query failures against real servers: each a clear error naming the node, and a
//! connection whose query timed out is never reused.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::TestSandbox;
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
