//! `/metrics` over real HTTP against a real sandbox: the scraped text is parsed and every value
//! checked against the very snapshot the server rendered; a NULL SBM keeps the replica's other
//! series; `rwtop serve` runs, scrapes, stops on SIGTERM and names a taken port.

#![expect(
    clippy::float_cmp,
    clippy::cast_precision_loss,
    reason = "scraped values must equal the snapshot's exactly: integers far below 2^52, floats \
              printed in their shortest round-trip form"
)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::http::http;
use common::{Load, TestSandbox, engine_spec, eventually, rwtop};
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;
use rwtop::export::http::{MetricsListener, MetricsServer};
use rwtop::mysql::IoRunning;
use rwtop::store::histogram::LagHistogram;
use rwtop::store::lag::Lag;
use rwtop::store::{NodeView, ReplicaView, Role, Snapshot};

const DEADLINE: Duration = Duration::from_secs(40);

/// A parsed exposition: the declared type of each family, and every sample.
#[derive(Debug)]
struct Exposition {
    types: BTreeMap<String, String>,
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

/// A strict reader of the text format 0.0.4: panics on any line it does not understand, and on a
/// sample whose family was not declared before it.
fn parse(text: &str) -> Exposition {
    let mut types = BTreeMap::new();
    let mut samples = Vec::new();
    let mut family = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(["gauge", "counter", "histogram"].contains(&kind), "{line}");
            assert!(
                types.insert(name.to_owned(), kind.to_owned()).is_none(),
                "{line}"
            );
            name.clone_into(&mut family);
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(
            !line.is_empty() && !line.starts_with('#'),
            "unexpected line {line:?}"
        );
        let name_end = line.find(['{', ' ']).expect("a name");
        let name = &line[..name_end];
        let (labels, rest) = match line[name_end..].strip_prefix('{') {
            Some(inner) => labels(inner, line),
            None => (BTreeMap::new(), &line[name_end..]),
        };
        let value = rest.strip_prefix(' ').expect("a space before the value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}")),
        };
        let kind = types.get(&family).map(String::as_str);
        let belongs = name == family
            || (kind == Some("histogram")
                && ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|s| name == format!("{family}{s}")));
        assert!(belongs, "{line:?} is not in family {family}");
        samples.push((name.to_owned(), labels, value));
    }
    Exposition { types, samples }
}

/// `key="value",...}` with escapes undone; returns the labels and the text after `}`.
fn labels<'a>(mut text: &'a str, line: &str) -> (BTreeMap<String, String>, &'a str) {
    let mut labels = BTreeMap::new();
    loop {
        let eq = text
            .find("=\"")
            .unwrap_or_else(|| panic!("label=\" in {line:?}"));
        let key = text[..eq].to_owned();
        let mut value = String::new();
        let mut chars = text[eq + 2..].char_indices();
        let end = loop {
            match chars
                .next()
                .unwrap_or_else(|| panic!("closing quote in {line:?}"))
            {
                (i, '"') => break eq + 2 + i,
                (_, '\\') => match chars.next().map(|(_, c)| c) {
                    Some('n') => value.push('\n'),
                    Some(c) => value.push(c),
                    None => panic!("dangling escape in {line:?}"),
                },
                (_, c) => value.push(c),
            }
        };
        labels.insert(key, value);
        text = &text[end + 1..];
        match text.chars().next() {
            Some('}') => return (labels, &text[1..]),
            Some(',') => text = &text[1..],
            other => panic!("{other:?} after a label in {line:?}"),
        }
    }
}

impl Exposition {
    /// The one sample of `name` whose labels include `labels`; `None` when there is none.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let found: Vec<f64> = self
            .samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|(_, _, v)| *v)
            .collect();
        assert!(found.len() <= 1, "{name} {labels:?} matches {found:?}");
        found.first().copied()
    }

    #[track_caller]
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels)
            .unwrap_or_else(|| panic!("no sample {name} {labels:?}"))
    }
}

/// Scrapes until the server rendered a snapshot we also hold: the engine published nothing
/// between our two looks, so the scrape saw exactly `before`.
async fn consistent_scrape(
    engine: &Engine,
    addr: SocketAddr,
) -> (Arc<Snapshot>, Exposition, String) {
    eventually("a scrape between two publications", DEADLINE, async || {
        let before = engine.latest();
        let common::http::Response {
            status,
            headers,
            body,
        } = http(addr, "GET", "/metrics").await;
        let after = engine.latest();
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            headers.get("content-type").map(String::as_str),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        assert_eq!(
            headers
                .get("content-length")
                .and_then(|l| l.parse::<usize>().ok()),
            Some(body.len())
        );
        Arc::ptr_eq(&before, &after).then(|| {
            let exposition = parse(&body);
            (before, exposition, body)
        })
    })
    .await
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Every replica figure in the exposition equals the snapshot's.
fn assert_matches(s: &Snapshot, m: &Exposition) {
    let at = s.taken_at.timestamp_millis() as f64 / 1000.0;
    assert_eq!(m.value("rwtop_snapshot_timestamp_seconds", &[]), at);
    assert_eq!(
        m.value("rwtop_heartbeat_sequence", &[]),
        s.heartbeat.last_seq.expect("a heartbeat") as f64
    );
    assert_eq!(
        m.value("rwtop_heartbeat_stale", &[]),
        f64::from(u8::from(s.heartbeat.stale))
    );
    for n in &s.nodes {
        let node = [("node", n.name.as_str())];
        let up = f64::from(u8::from(n.conn.name() == "up"));
        assert_eq!(m.value("rwtop_node_up", &node), up, "{}", n.name);
        assert_eq!(
            m.get("rwtop_node_read_only", &node),
            n.read_only().map(|ro| f64::from(u8::from(ro))),
            "{}",
            n.name
        );
        for r in &n.channels {
            assert_replica_matches(n, r, m);
        }
    }
    for kind in [
        AlertKind::SqlThreadStopped,
        AlertKind::NodeDown,
        AlertKind::SbmUnderstatesLag,
    ] {
        let active = s.alerts.active.iter().filter(|a| a.kind == kind).count();
        assert_eq!(
            m.value("rwtop_alerts_active", &[("kind", kind.name())]),
            active as f64,
            "{kind:?}"
        );
    }
}

/// The replica's figures in the exposition equal the snapshot's, histogram included.
fn assert_replica_matches(n: &NodeView, r: &ReplicaView, m: &Exposition) {
    let who = [
        ("replica", n.name.as_str()),
        ("source", r.source.as_deref().unwrap_or("")),
        ("channel", r.channel.as_str()),
    ];
    let with = |k: &'static str, v: &'static str| {
        let mut l = who.to_vec();
        l.push((k, v));
        l
    };
    let name = &n.name;
    assert_eq!(
        m.get("rwtop_replica_heartbeat_lag_seconds", &who),
        r.heartbeat_lag.value().map(secs),
        "{name}"
    );
    let state = match r.heartbeat_lag {
        Lag::Exact { .. } => "exact",
        Lag::AtLeast { .. } => "at_least",
        Lag::Unknown { .. } => "unknown",
    };
    for s in ["exact", "at_least", "unknown"] {
        let expected = f64::from(u8::from(s == state));
        assert_eq!(
            m.value("rwtop_replica_heartbeat_lag_state", &with("state", s)),
            expected,
            "{name} {s}"
        );
    }
    assert_eq!(
        m.get("rwtop_replica_sbm_seconds", &who),
        r.seconds_behind_source.map(|v| v as f64),
        "{name}"
    );
    assert_eq!(
        m.value("rwtop_replica_sbm_null", &who),
        f64::from(u8::from(r.seconds_behind_source.is_none())),
        "{name}"
    );
    assert_eq!(
        m.value("rwtop_replica_sql_thread_running", &who),
        f64::from(u8::from(r.sql_running)),
        "{name}"
    );
    let io = match r.io_running {
        IoRunning::Yes => "yes",
        IoRunning::Connecting => "connecting",
        IoRunning::No => "no",
    };
    assert_eq!(
        m.value("rwtop_replica_io_thread_state", &with("state", io)),
        1.0,
        "{name}"
    );
    let stages = [
        (
            "not_received",
            r.gtid_backlog.not_received,
            r.bytes_behind.io,
        ),
        (
            "not_applied",
            r.gtid_backlog.not_applied,
            r.bytes_behind.sql,
        ),
    ];
    for (stage, transactions, bytes) in stages {
        let labels = with("stage", stage);
        assert_eq!(
            m.get("rwtop_replica_gtid_backlog_transactions", &labels),
            transactions.map(|v| v as f64),
            "{name} {stage}"
        );
        assert_eq!(
            m.get("rwtop_replica_binlog_backlog_bytes", &labels),
            bytes.map(|v| v as f64),
            "{name} {stage}"
        );
    }
    assert_histogram_matches(&n.name, &r.lag_histogram, &who, m);
}

/// Cumulative buckets, `+Inf` equal to the count, and every figure the snapshot's.
fn assert_histogram_matches(name: &str, h: &LagHistogram, who: &[(&str, &str)], m: &Exposition) {
    let with = |k: &'static str, v: &'static str| {
        let mut l = who.to_vec();
        l.push((k, v));
        l
    };
    let hist = "rwtop_replica_heartbeat_lag_distribution_seconds";
    let mut previous = 0.0;
    for (bound, cumulative) in h.cumulative() {
        let le = if bound >= 1.0 && bound.fract() == 0.0 {
            format!("{bound:.0}")
        } else {
            bound.to_string()
        };
        let mut labels = who.to_vec();
        labels.push(("le", &le));
        let got = m.value(&format!("{hist}_bucket"), &labels);
        assert_eq!(got, cumulative as f64, "{name} le={le}");
        assert!(got >= previous, "{name}: buckets must not decrease");
        previous = got;
    }
    let count = m.value(&format!("{hist}_count"), who);
    assert_eq!(count, h.count as f64, "{name}");
    assert_eq!(
        m.value(&format!("{hist}_bucket"), &with("le", "+Inf")),
        count
    );
    assert!(previous <= count);
    assert_eq!(
        m.value(&format!("{hist}_sum"), who),
        h.sum_seconds,
        "{name}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_scraped_over_http_match_the_snapshot() {
    let t = TestSandbox::start(2, false);
    let spec = engine_spec(
        &t,
        &[
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ],
    );
    let engine = Engine::start(&spec);
    let listener = MetricsListener::bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("binding a free port");
    let addr = listener.local_addr();
    let server = listener.serve(engine.snapshots());
    assert_eq!(server.url(), format!("http://{addr}/metrics"));
    let _load = Load::start(&t).await;

    // Measured: exact lag with readings in the histogram and a known backlog on both replicas.
    eventually(
        "exact lag and a known backlog on r1 and r2",
        DEADLINE,
        async || {
            let s = engine.latest();
            ["r1", "r2"]
                .iter()
                .all(|name| {
                    s.node(name).and_then(|n| n.replica()).is_some_and(|r| {
                        matches!(r.heartbeat_lag, Lag::Exact { .. })
                            && r.lag_histogram.count >= 8
                            && r.gtid_backlog.total().is_some()
                            && r.bytes_behind.io.is_some()
                    })
                })
                .then_some(())
        },
    )
    .await;
    let (s, m, body) = consistent_scrape(&engine, addr).await;
    assert_matches(&s, &m);
    assert_eq!(
        m.types["rwtop_replica_heartbeat_lag_distribution_seconds"],
        "histogram"
    );
    assert_eq!(m.types["rwtop_probe_outcomes_total"], "counter");
    for name in ["r1", "r2"] {
        let who = [("replica", name)];
        assert_eq!(m.value("rwtop_replica_sbm_null", &who), 0.0, "{name}");
        assert!(m.get("rwtop_replica_sbm_seconds", &who).is_some(), "{name}");
        assert_eq!(
            m.value(
                "rwtop_replica_io_thread_state",
                &[("replica", name), ("state", "yes")]
            ),
            1.0
        );
    }
    assert!(
        !body.contains(r#"replica="primary""#),
        "the primary has no replica series"
    );
    println!(
        "scrape of 3 nodes: {} bytes, {} samples, {} families",
        body.len(),
        m.samples.len(),
        m.types.len()
    );

    other_paths_and_methods(addr).await;
    a_null_sbm_keeps_the_replica(&t, &engine, addr).await;
    stops_with_its_handle_and_with_the_engine(engine, server, addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_port_is_named_with_what_to_do() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = taken.local_addr().unwrap();
    let err = MetricsListener::bind(addr).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{addr}: address in use: pick another port")
    );
}

/// `rwtop serve` through the binary: one line naming the URL, a scrape with both replicas
/// measured, a clean exit on SIGTERM; a second one on the same port fails naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rwtop_serve_serves_until_sigterm() {
    let t = TestSandbox::start(2, false);
    let config = t.sandbox().dir().join("rwtop.toml");
    let config = config.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rwtop"))
        .args([
            "--config",
            config,
            "serve",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .env_remove("RWTOP_PASSWORD")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting rwtop serve");
    let stderr = child.stderr.take().unwrap();
    let url = tokio::task::spawn_blocking(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| {
                l.strip_prefix("rwtop: serving Prometheus metrics at ")
                    .and_then(|rest| rest.split(' ').next())
                    .map(str::to_owned)
            })
    })
    .await
    .unwrap()
    .expect("the line naming the URL");
    let addr: SocketAddr = url
        .strip_prefix("http://")
        .and_then(|a| a.strip_suffix("/metrics"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("not a metrics URL: {url}"));

    let m = eventually(
        "both replicas measured through rwtop serve",
        DEADLINE,
        async || {
            let r = http(addr, "GET", "/metrics").await;
            let (status, body) = (r.status, r.body);
            assert_eq!(status, 200);
            let m = parse(&body);
            ["r1", "r2"]
                .iter()
                .all(|r| {
                    m.get(
                        "rwtop_replica_heartbeat_lag_state",
                        &[("replica", r), ("state", "exact")],
                    ) == Some(1.0)
                })
                .then_some(m)
        },
    )
    .await;
    assert_eq!(
        m.value("rwtop_heartbeat_writer_state", &[("state", "writing")]),
        1.0
    );
    assert_eq!(
        m.value("rwtop_replica_sbm_seconds", &[("replica", "r1")]),
        0.0
    );

    let second = rwtop(
        &[
            "--config",
            config,
            "serve",
            "--metrics-listen",
            &addr.to_string(),
        ],
        &[("RWTOP_PASSWORD", None)],
    );
    assert_eq!(second.status.code(), Some(1));
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        said.contains(&format!(
            "rwtop: --metrics-listen {addr}: address in use: pick another port"
        )),
        "{said}"
    );

    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");
}

/// 404 elsewhere, 405 for a method that is not a read, HEAD without a body.
async fn other_paths_and_methods(addr: SocketAddr) {
    // Elsewhere on the server: 404, and 405 for a method that is not a read.
    let status = http(addr, "GET", "/").await.status;
    assert_eq!(status, 404);
    let r = http(addr, "POST", "/metrics").await;
    let (status, headers) = (r.status, r.headers);
    assert_eq!(status, 405);
    assert_eq!(headers.get("allow").map(String::as_str), Some("GET, HEAD"));
    let r = http(addr, "HEAD", "/metrics").await;
    let (status, headers, body) = (r.status, r.headers, r.body);
    assert_eq!((status, body.as_str()), (200, ""));
    assert!(headers.contains_key("content-length"));
}

/// `STOP SLAVE SQL_THREAD` on r1: its SBM series goes, its null gauge says so, and its other
/// series stay.
async fn a_null_sbm_keeps_the_replica(t: &TestSandbox, engine: &Engine, addr: SocketAddr) {
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    eventually("sql_thread_stopped raised on r1", DEADLINE, async || {
        let s = engine.latest();
        let r = s.node("r1")?.replica()?;
        let raised = s
            .alerts
            .active
            .iter()
            .any(|a| a.kind == AlertKind::SqlThreadStopped && a.node.as_deref() == Some("r1"));
        (!r.sql_running && r.seconds_behind_source.is_none() && raised).then_some(())
    })
    .await;
    let (s, m, _) = consistent_scrape(engine, addr).await;
    assert_matches(&s, &m);
    let r1 = [("replica", "r1")];
    assert_eq!(m.value("rwtop_replica_sbm_null", &r1), 1.0);
    assert_eq!(m.get("rwtop_replica_sbm_seconds", &r1), None);
    assert_eq!(m.value("rwtop_replica_sql_thread_running", &r1), 0.0);
    assert!(
        m.get("rwtop_replica_heartbeat_lag_seconds", &r1).is_some(),
        "lag stays"
    );
    assert!(
        m.value(
            "rwtop_replica_heartbeat_lag_distribution_seconds_count",
            &r1
        ) > 0.0
    );
    assert!(
        m.get(
            "rwtop_replica_gtid_backlog_transactions",
            &[("replica", "r1"), ("stage", "not_applied")]
        )
        .is_some(),
        "backlog stays"
    );
    assert_eq!(m.value("rwtop_replica_sbm_null", &[("replica", "r2")]), 0.0);
    assert_eq!(
        m.value(
            "rwtop_alerts_active",
            &[("kind", "sql_thread_stopped"), ("severity", "critical")]
        ),
        1.0
    );
    assert!(
        m.get(
            "rwtop_alert_active_since_timestamp_seconds",
            &[("kind", "sql_thread_stopped"), ("node", "r1")]
        )
        .is_some()
    );
}

/// The server stops with its handle, and with the engine whose snapshots it serves.
async fn stops_with_its_handle_and_with_the_engine(
    engine: Engine,
    server: MetricsServer,
    addr: SocketAddr,
) {
    server.shutdown().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still listening"
    );
    let listener = MetricsListener::bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("binding a free port");
    let addr = listener.local_addr();
    let server = listener.serve(engine.snapshots());
    assert_eq!(http(addr, "GET", "/metrics").await.status, 200);
    engine.shutdown().await;
    eventually("the server to stop with the engine", DEADLINE, async || {
        tokio::net::TcpStream::connect(addr)
            .await
            .is_err()
            .then_some(())
    })
    .await;
    server.shutdown().await;
}
