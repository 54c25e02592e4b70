//! The `/metrics` endpoint, and `/throttle` beside it (`throttle.rs`): a small HTTP/1.1 server
//! (hyper) that answers from the newest snapshot on each request. Binding is a step of its own
//! so a taken port is reported before the engine or the TUI starts.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::alerts::throttle::{ThrottleSettings, judge};
use crate::store::Snapshot;

/// The path Prometheus scrapes; everything but it and [`super::throttle::THROTTLE_PATH`] is 404.
pub const METRICS_PATH: &str = "/metrics";

/// Connections served at once; more are closed at once (a scraper needs one).
const MAX_CONNECTIONS: usize = 64;

/// A client that opens a connection and sends no request is dropped after this.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The address could not be listened on; says which and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{addr}: {}", describe(.source))]
pub struct ListenError {
    pub addr: SocketAddr,
    pub source: std::io::Error,
}

fn describe(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => "address in use: pick another port".to_owned(),
        std::io::ErrorKind::PermissionDenied => {
            "permission denied: ports below 1024 need privileges, pick a higher one".to_owned()
        }
        std::io::ErrorKind::AddrNotAvailable => {
            "no such address on this host: use one of its own, 127.0.0.1 or 0.0.0.0".to_owned()
        }
        _ => e.to_string(),
    }
}

/// A bound port, not serving yet.
#[derive(Debug)]
pub struct MetricsListener {
    listener: TcpListener,
    addr: SocketAddr,
    served: Served,
}

/// What the answers need besides the snapshot.
#[derive(Debug, Clone)]
struct Served {
    cluster: String,
    throttle: ThrottleSettings,
}

impl MetricsListener {
    /// Binds `addr` (port 0: any free port, see [`Self::local_addr`]). Must run inside a tokio
    /// runtime.
    pub async fn bind(addr: SocketAddr) -> Result<Self, ListenError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ListenError { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ListenError { addr, source })?;
        Ok(Self {
            listener,
            addr,
            served: Served {
                cluster: crate::config::DEFAULT_CLUSTER.to_owned(),
                throttle: ThrottleSettings::default(),
            },
        })
    }

    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `cluster` label on every series (`[metrics] cluster`; [`crate::config::DEFAULT_CLUSTER`]
    /// unless set).
    #[must_use]
    pub fn with_cluster(mut self, cluster: &str) -> Self {
        cluster.clone_into(&mut self.served.cluster);
        self
    }

    /// The settings `/throttle` judges with when a request does not override them (`[throttle]`;
    /// the defaults unless set), and `rwtop_throttle` always.
    #[must_use]
    pub fn with_throttle(mut self, settings: &ThrottleSettings) -> Self {
        self.served.throttle = settings.clone();
        self
    }

    /// Serves `/metrics` from the newest snapshot until [`MetricsServer::shutdown`], until the
    /// handle is dropped, or until the engine publishing `snapshots` stops.
    #[must_use]
    pub fn serve(self, snapshots: watch::Receiver<Arc<Snapshot>>) -> MetricsServer {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(
            self.listener,
            snapshots,
            Arc::new(self.served),
            stopped,
        ));
        MetricsServer {
            addr: self.addr,
            stop,
            task,
        }
    }
}

/// The running server.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl MetricsServer {
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR/metrics`, for the log line and for tests.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}{METRICS_PATH}", self.addr)
    }

    /// Stops accepting, closes open connections and waits for the server task.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn accept(
    listener: TcpListener,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    served: Arc<Served>,
    mut stop: watch::Receiver<bool>,
) {
    let mut engine = snapshots.clone();
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            // A send or a dropped handle both stop the server.
            _ = stop.changed() => break,
            // Every publication wakes this; only a closed channel (the engine stopped) ends it.
            published = engine.changed() => if published.is_err() { break },
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if connections.len() < MAX_CONNECTIONS => {
                    connections.spawn(connection(stream, snapshots.clone(), Arc::clone(&served)));
                }
                Ok(_) => {}
                // Out of file descriptors and the like: give the others time to close.
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
}

async fn connection(
    stream: TcpStream,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    served: Arc<Served>,
) {
    let service = service_fn(move |request: Request<hyper::body::Incoming>| {
        let response = respond(request.method(), request.uri(), &snapshots, &served);
        async move { Ok::<_, Infallible>(response) }
    });
    // A client that hangs up mid-request is its own business.
    let _ = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

fn respond(
    method: &Method,
    uri: &hyper::Uri,
    snapshots: &watch::Receiver<Arc<Snapshot>>,
    served: &Served,
) -> Response<Full<Bytes>> {
    let path = uri.path();
    if path != METRICS_PATH && path != super::throttle::THROTTLE_PATH {
        return text(
            StatusCode::NOT_FOUND,
            "not found: rwtop serves /metrics and /throttle\n".to_owned(),
        );
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{path} takes GET or HEAD\n"),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let snapshot = Arc::clone(&snapshots.borrow());
    let age = age(&snapshot);
    if path == super::throttle::THROTTLE_PATH {
        return throttle(&snapshot, served, uri.query(), age);
    }
    let verdict = judge(&snapshot, &served.throttle, age);
    let mut response = Response::new(Full::new(Bytes::from(
        super::prometheus::render_with_throttle(&snapshot, &served.cluster, &verdict),
    )));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(super::prometheus::CONTENT_TYPE),
    );
    response
}

/// How long ago the snapshot was published, by the wall clock it was stamped with (a clock set
/// back reads 0).
fn age(snapshot: &Snapshot) -> Duration {
    (chrono::Utc::now() - snapshot.taken_at)
        .to_std()
        .unwrap_or_default()
}

/// The throttle's answer: the status, `Retry-After` on a throttle, the reason in a header too
/// (a `HEAD` has no body), never cached.
fn throttle(
    snapshot: &Snapshot,
    served: &Served,
    query: Option<&str>,
    age: Duration,
) -> Response<Full<Bytes>> {
    let answer = super::throttle::answer(snapshot, &served.throttle, query, age);
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let mut response = text(status, answer.body);
    let headers = response.headers_mut();
    if answer.json {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Header values are visible ASCII: the bounds' signs spelled out, anything else a '?'.
    let ascii: String = answer
        .reason
        .replace('≥', ">=")
        .replace('≤', "<=")
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    if let Ok(value) = HeaderValue::from_str(&ascii) {
        headers.insert("x-rwtop-throttle", value);
    }
    response
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
