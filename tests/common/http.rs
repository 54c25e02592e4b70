//! One HTTP/1.1 request on a fresh connection, as gh-ost, curl or Prometheus send it, read
//! whole: the tests of rwtop's own endpoints (`/metrics`, `/throttle`) look at the raw answer.
#![allow(dead_code, reason = "each test binary uses part of this file")]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use rwtop::alerts::throttle::ThrottleSettings;
use rwtop::engine::Engine;
use rwtop::export::http::{MetricsListener, MetricsServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub struct Response {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

/// Sends `method target` to `addr` and reads the answer to the end (the request asks the
/// server to close); fails the test if no answer comes within 10 s.
pub async fn http(addr: SocketAddr, method: &str, target: &str) -> Response {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connecting");
    let request =
        format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sending");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("an answer within 10 s")
        .expect("reading");
    let raw = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// `/metrics` and `/throttle` (at the shipped throttle settings) served from `engine`'s
/// snapshots on a free loopback port: the address and the server to shut down.
pub async fn serve_with_throttle(engine: &Engine) -> (SocketAddr, MetricsServer) {
    serve_throttle_from(engine.snapshots()).await
}

/// [`serve_with_throttle`] from any engine's snapshot channel (one on a thread of its own:
/// `engine_thread.rs`).
pub async fn serve_throttle_from(
    snapshots: tokio::sync::watch::Receiver<std::sync::Arc<rwtop::store::Snapshot>>,
) -> (SocketAddr, MetricsServer) {
    let listener = MetricsListener::bind("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("binding a free port");
    let addr = listener.local_addr();
    let server = listener
        .with_throttle(&ThrottleSettings::default())
        .serve(snapshots);
    (addr, server)
}
