//! The sandbox's replication relays: a plain TCP check of forwarding, stall/resume and drop, then
//! real replicas going through relays and the stall that makes `Seconds_Behind_Master` lie.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{TestSandbox, eventually};
use rwtop::gtid::GtidList;
use rwtop::mysql::{GtidState, IoRunning, NodeConn, ReplicaGtid, ReplicaStatus};
use rwtop::sandbox::Relay;

const DEADLINE: Duration = Duration::from_secs(30);
/// How long the primary keeps writing while r1's relay is stalled.
const STALL: Duration = Duration::from_secs(5);

/// An echo server on a free port that counts the bytes it received, so a test can tell whether
/// the relay forwarded anything.
fn echo_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&received);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                loop {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            counter.fetch_add(n, Ordering::SeqCst);
                            if stream.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    (port, received)
}

/// Reads exactly `want.len()` bytes within the deadline and checks them.
fn read_echo(stream: &mut TcpStream, want: &[u8]) {
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < want.len() {
        assert!(
            start.elapsed() < DEADLINE,
            "echo not back after {DEADLINE:?}"
        );
        match stream.read(&mut buf) {
            Ok(0) => panic!("relay closed the connection"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("reading the echo: {e}"),
        }
    }
    assert_eq!(got, want);
}

#[test]
fn relay_forwards_both_ways_and_a_stall_holds_bytes_without_closing() {
    let (echo_port, received) = echo_server();
    let relay = Relay::start(echo_port).unwrap();
    assert_ne!(relay.port(), echo_port);
    assert_eq!(relay.target_port(), echo_port);
    let mut client = TcpStream::connect(("127.0.0.1", relay.port())).unwrap();
    client.write_all(b"hello").unwrap();
    read_echo(&mut client, b"hello");
    assert_eq!(relay.open_connections(), 1);

    relay.stall();
    assert!(relay.is_stalled());
    client.write_all(b"held while stalled").unwrap();
    // Silence, not a disconnect: nothing reaches the server, nothing comes back, and the read
    // times out instead of seeing EOF.
    client
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 64];
    let err = client.read(&mut buf).expect_err("no bytes while stalled");
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err}"
    );
    assert_eq!(
        received.load(Ordering::SeqCst),
        5,
        "the server got nothing new"
    );
    assert_eq!(
        relay.open_connections(),
        1,
        "the stall keeps the connection"
    );

    relay.resume();
    assert!(!relay.is_stalled());
    read_echo(&mut client, b"held while stalled");

    // A second connection is relayed independently.
    let mut other = TcpStream::connect(("127.0.0.1", relay.port())).unwrap();
    other.write_all(b"second").unwrap();
    read_echo(&mut other, b"second");
    drop(other);
    let start = Instant::now();
    while relay.open_connections() != 1 {
        assert!(
            start.elapsed() < DEADLINE,
            "a closed connection is forgotten"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn stall_also_holds_the_server_to_client_direction() {
    // A server that speaks first (as a MySQL server does) must be held too.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (go, wait) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(b"greeting").unwrap();
        let _ = wait.recv();
        s.write_all(b"after").unwrap();
        let _ = wait.recv();
    });
    let relay = Relay::start(port).unwrap();
    let mut client = TcpStream::connect(("127.0.0.1", relay.port())).unwrap();
    read_echo(&mut client, b"greeting");
    relay.stall();
    go.send(()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert!(client.read(&mut buf).is_err(), "held while stalled");
    relay.resume();
    read_echo(&mut client, b"after");
}

#[test]
fn dropping_a_relay_closes_everything_without_hanging() {
    let (echo_port, _) = echo_server();
    for stalled in [false, true] {
        let relay = Relay::start(echo_port).unwrap();
        let port = relay.port();
        let mut client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        client.write_all(b"x").unwrap();
        read_echo(&mut client, b"x");
        if stalled {
            relay.stall();
            client.write_all(b"pending").unwrap();
        }
        let (done, finished) = mpsc::channel();
        let start = Instant::now();
        std::thread::spawn(move || {
            drop(relay);
            let _ = done.send(());
        });
        finished
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("drop hung (stalled: {stalled})"));
        eprintln!("drop took {:?} (stalled: {stalled})", start.elapsed());
        // The relayed connection is closed: EOF or a reset, not a timeout.
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 16];
        match client.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => panic!("{n} bytes after drop"),
            Err(e) => assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "connection left open after drop: {e}"
            ),
        }
        // The listener is closed: nothing answers on its port, or, should a parallel test's
        // server have taken the freed port (seen once in a full run), what answers does not
        // relay to this test's echo server.
        if let Ok(mut again) = TcpStream::connect(("127.0.0.1", port)) {
            again
                .set_read_timeout(Some(Duration::from_secs(1)))
                .unwrap();
            let _ = again.write_all(b"still?");
            let mut echoed = [0u8; 6];
            let relayed = again.read_exact(&mut echoed).is_ok() && &echoed == b"still?";
            assert!(!relayed, "listener closed (stalled: {stalled})");
        }
    }
}

#[test]
fn a_relay_to_a_closed_port_refuses_by_closing() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let relay = Relay::start(port).unwrap();
    let mut client = TcpStream::connect(("127.0.0.1", relay.port())).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 4];
    match client.read(&mut buf) {
        Ok(0) => {}
        Ok(n) => panic!("{n} bytes from nowhere"),
        Err(e) => assert!(
            !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
            "{e}"
        ),
    }
    assert_eq!(relay.open_connections(), 0);
}

async fn one_status(conn: &mut NodeConn) -> ReplicaStatus {
    let mut rows = conn.replica_status().await.expect("replica status");
    assert_eq!(rows.len(), 1, "one replication connection");
    rows.remove(0)
}

async fn binlog_pos(conn: &mut NodeConn) -> GtidList {
    match conn.node_state().await.expect("node state").gtid {
        GtidState::Mariadb { binlog_pos, .. } => binlog_pos,
        GtidState::Mysql { .. } => panic!("the sandbox runs MariaDB"),
    }
}

async fn slave_pos(conn: &mut NodeConn) -> GtidList {
    match conn.node_state().await.expect("node state").gtid {
        GtidState::Mariadb { slave_pos, .. } => slave_pos,
        GtidState::Mysql { .. } => panic!("the sandbox runs MariaDB"),
    }
}

#[tokio::test]
async fn live_replicas_replicate_through_their_relays() {
    let t = TestSandbox::start_with_relay(2);
    let primary_port = t.sandbox().port("primary").unwrap();
    t.write(1);
    t.write(2);
    let mut primary = t.connect("primary").await;
    let head = binlog_pos(&mut primary).await;
    for name in ["r1", "r2"] {
        let relay = t.relay(name);
        assert_eq!(relay.target_port(), primary_port, "{name}");
        assert!(!relay.is_stalled());
        let mut conn = t.connect(name).await;
        eventually(&format!("{name} caught up by GTID"), DEADLINE, async || {
            (slave_pos(&mut conn).await == head).then_some(())
        })
        .await;
        let status = one_status(&mut conn).await;
        assert_eq!(status.source_port, relay.port(), "{name}: Master_Port");
        assert_eq!(status.source_host, "127.0.0.1");
        assert_eq!(
            status.source_server_id,
            Some(1),
            "the server id still names the primary"
        );
        assert_eq!(status.io_running, IoRunning::Yes, "{name}");
        assert!(status.sql_running, "{name}");
        assert!(
            matches!(&status.gtid, ReplicaGtid::Mariadb { using_gtid, .. } if using_gtid == "Slave_Pos")
        );
        assert_eq!(relay.open_connections(), 1, "{name}: one replication link");
        conn.close().await;
    }
    assert_ne!(t.relay("r1").port(), t.relay("r2").port());
    assert!(
        TestSandbox::start(1, false).sandbox().relay("r1").is_none(),
        "no relays unless asked"
    );
    primary.close().await;
}

#[tokio::test]
async fn live_stalled_link_keeps_threads_yes_and_sbm_zero_while_the_replica_falls_behind() {
    let t = TestSandbox::start_with_relay(2);
    t.write(0); // creates the table
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let mut primary = t.connect("primary").await;
    let mut r1 = t.connect("r1").await;
    let mut r2 = t.connect("r2").await;
    let before = binlog_pos(&mut primary).await;
    assert_eq!(
        slave_pos(&mut r1).await,
        before,
        "r1 caught up before the stall"
    );

    t.relay("r1").stall();
    let start = Instant::now();
    let mut id = 1;
    let mut max_sbm = 0;
    let mut samples = 0;
    // Keep writing for the stall's length (the one fixed wait: the stall itself), reading r1's
    // status as rwtop would: it must look healthy throughout.
    while start.elapsed() < STALL {
        t.admin("primary", &format!("INSERT INTO rwtop.t VALUES ({id})"));
        id += 1;
        let s = one_status(&mut r1).await;
        assert_eq!(s.io_running, IoRunning::Yes, "after {:?}", start.elapsed());
        assert!(s.sql_running, "after {:?}", start.elapsed());
        assert!(s.last_io_error.is_none() && s.last_sql_error.is_none());
        max_sbm = max_sbm.max(s.seconds_behind_source.expect("SBM is not NULL"));
        samples += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stalled_for = start.elapsed();
    let written = id - 1;
    let status = one_status(&mut r1).await;
    let head = binlog_pos(&mut primary).await;
    let applied = slave_pos(&mut r1).await;
    let behind = head.total_distance(&applied);
    eprintln!(
        "stalled {stalled_for:?}: {written} transactions written, r1 {behind} behind by GTID, \
         SBM {:?} (max {max_sbm} over {samples} samples), IO state {:?}",
        status.seconds_behind_source, status.io_state
    );
    // The lie, as the server tells it.
    assert_eq!(status.io_running, IoRunning::Yes);
    assert!(status.sql_running);
    assert_eq!(status.seconds_behind_source, Some(0));
    assert_eq!(max_sbm, 0, "SBM stayed 0 during the whole stall");
    assert!(
        status.io_state.contains("Waiting for master to send event"),
        "{:?}",
        status.io_state
    );
    // The truth: every transaction written during the stall is missing on r1.
    assert_eq!(applied, before, "r1 applied nothing during the stall");
    assert_eq!(behind, written, "one GTID per insert");
    assert_eq!(t.relay("r1").open_connections(), 1, "the link stayed open");
    // r2's link was not stalled.
    eventually("r2 caught up", DEADLINE, async || {
        (slave_pos(&mut r2).await == head).then_some(())
    })
    .await;

    t.relay("r1").resume();
    let resumed = Instant::now();
    eventually("r1 caught up after resume", DEADLINE, async || {
        (slave_pos(&mut r1).await == head).then_some(())
    })
    .await;
    eprintln!("r1 caught up {:?} after resume", resumed.elapsed());
    let status = one_status(&mut r1).await;
    assert_eq!(status.io_running, IoRunning::Yes);
    assert!(status.last_io_error.is_none(), "no reconnect was needed");
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    for conn in [primary, r1, r2] {
        conn.close().await;
    }
}

#[tokio::test]
async fn live_up_again_repoints_replicas_at_new_relays_or_back_at_their_source() {
    use rwtop::sandbox::{Ports, Sandbox, SandboxSpec};
    let t = TestSandbox::start_with_relay(1);
    let primary_port = t.sandbox().port("primary").unwrap();
    let first_relay = t.relay("r1").port();
    let mut spec = SandboxSpec::new(t.sandbox().dir());
    spec.replicas = 1;
    spec.ports = Ports::Free;
    let mut r1 = t.connect("r1").await;
    for relay in [true, false] {
        spec.relay = relay;
        let again = Sandbox::up(&spec).unwrap_or_else(|e| panic!("up again: {e}"));
        let want = if relay {
            let port = again.relay("r1").expect("a new relay").port();
            assert_ne!(port, first_relay);
            port
        } else {
            assert!(again.relay("r1").is_none());
            primary_port
        };
        let status = one_status(&mut r1).await;
        assert_eq!(status.source_port, want, "relay: {relay}");
        assert_eq!(status.io_running, IoRunning::Yes, "relay: {relay}");
        // `up` waited until r1 replicated through the new link; a write proves it still does.
        t.write(u64::from(relay));
        again.wait_replicating(DEADLINE).unwrap();
        drop(again); // not ephemeral: leaves the servers to `t`
    }
    r1.close().await;
}
