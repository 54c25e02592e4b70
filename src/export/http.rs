//! The `/metrics` endpoint: a small HTTP/1.1 server (hyper) that renders the newest snapshot on
//! each scrape. Binding is a step of its own so a taken port is reported before the engine or
//! the TUI starts.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::store::Snapshot;

/// The path Prometheus scrapes; everything else is 404.
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
    cluster: Arc<str>,
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
            cluster: crate::config::DEFAULT_CLUSTER.into(),
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
        self.cluster = cluster.into();
        self
    }

    /// Serves `/metrics` from the newest snapshot until [`MetricsServer::shutdown`], until the
    /// handle is dropped, or until the engine publishing `snapshots` stops.
    #[must_use]
    pub fn serve(self, snapshots: watch::Receiver<Arc<Snapshot>>) -> MetricsServer {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(self.listener, snapshots, self.cluster, stopped));
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
    cluster: Arc<str>,
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
                    connections.spawn(connection(stream, snapshots.clone(), Arc::clone(&cluster)));
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
    cluster: Arc<str>,
) {
    let service = service_fn(move |request: Request<hyper::body::Incoming>| {
        let response = respond(request.method(), request.uri().path(), &snapshots, &cluster);
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
    path: &str,
    snapshots: &watch::Receiver<Arc<Snapshot>>,
    cluster: &str,
) -> Response<Full<Bytes>> {
    if path != METRICS_PATH {
        return text(
            StatusCode::NOT_FOUND,
            "not found: rwtop serves /metrics\n".to_owned(),
        );
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "/metrics takes GET or HEAD\n".to_owned(),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let snapshot = Arc::clone(&snapshots.borrow());
    let mut response = Response::new(Full::new(Bytes::from(super::prometheus::render(
        &snapshot, cluster,
    ))));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(super::prometheus::CONTENT_TYPE),
    );
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
