//! `/metrics` for 10, 100 and 1,000 replicas: time to render the exposition from a snapshot,
//! its size, and a whole scrape over HTTP on loopback (connect, request, render, read); and
//! `/throttle`'s answer over the same snapshots, judged alone and as a whole request.
//!
//! The replicas are copies of r2 in `tests/ui_snapshots/sql_stopped.json` (a real snapshot: SQL
//! thread stopped, SBM NULL, backlog climbing, one alert), renamed, each with a histogram of
//! 10,000 readings and probe tallies for two strategies, so every family has samples.
//!
//! Run: `cargo bench --bench metrics`. Prints `name value unit` lines.

use std::hint::black_box;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rwtop::export::http::MetricsListener;
use rwtop::export::prometheus::render;
use rwtop::probe::{Strategy, TallyView};
use rwtop::store::{Role, Snapshot};

fn recorded() -> Snapshot {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/ui_snapshots/sql_stopped.json"
    );
    let text = std::fs::read_to_string(path).expect("reading the recorded snapshot");
    serde_json::from_str(&text).expect("a recorded Snapshot")
}

fn snapshot(replicas: usize) -> Snapshot {
    let mut s = recorded();
    let template = s.node("r2").expect("r2 in the recording").clone();
    s.nodes.retain(|n| n.role == Role::Primary);
    let strategies: [Strategy; 2] = [
        "none".parse().expect("a strategy"),
        "gtid-wait(1s)".parse().expect("a strategy"),
    ];
    for i in 0..replicas {
        let mut n = template.clone();
        n.name = format!("replica-{i:04}");
        n.address = format!("10.0.{}.{}:3306", i / 250, i % 250);
        if let Some(r) = n.replica_mut() {
            for k in 0..10_000_u64 {
                r.lag_histogram.observe(Duration::from_micros(
                    (k * 7919 + i as u64 * 104_729) % 3_000_000,
                ));
            }
        }
        for strategy in strategies {
            s.probes.tallies.push(TallyView {
                strategy,
                replica: n.name.clone(),
                probes: 100,
                fresh: 90,
                stale: 6,
                fell_back: 3,
                errors: 1,
                wait_ms: None,
                primary_reads: 3,
                queries: 300,
                causes: std::collections::BTreeMap::new(),
                cost: rwtop::probe::TallyCost::default(),
            });
        }
        s.nodes.push(n);
    }
    s
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("{name}_p50 {:.0} us", us(percentile(&times, 0.5)));
    println!("{name}_p99 {:.0} us", us(percentile(&times, 0.99)));
    println!("{name}_min {:.0} us", us(times[0]));
}

/// One scrape on a fresh connection, as Prometheus does after an idle timeout.
fn scrape(addr: std::net::SocketAddr) -> usize {
    get(addr, "/metrics", b"HTTP/1.1 200")
}

/// One `GET path` on a fresh connection; the status line must start with `expected`.
fn get(addr: std::net::SocketAddr, path: &str, expected: &[u8]) -> usize {
    let mut stream = std::net::TcpStream::connect(addr).expect("connecting");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("sending");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("reading");
    assert!(response.starts_with(expected), "not the expected status");
    response.len()
}

/// `/throttle` over `snap`: the verdict and its text alone, then whole requests (the recorded
/// snapshot is old, so the server's answer is a 503 for a stale snapshot, after the same judging).
fn throttle(snap: &Snapshot, addr: std::net::SocketAddr, replicas: usize, rounds: usize) {
    let settings = rwtop::alerts::throttle::ThrottleSettings::default();
    let answer = || rwtop::export::throttle::answer(snap, &settings, None, Duration::ZERO);
    for _ in 0..rounds / 10 {
        black_box(answer());
    }
    let times = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            black_box(answer());
            start.elapsed()
        })
        .collect();
    report(&format!("throttle_{replicas}_answer"), times);
    let times = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            black_box(get(addr, "/throttle", b"HTTP/1.1 503"));
            start.elapsed()
        })
        .collect();
    report(&format!("throttle_{replicas}_request"), times);
}

fn main() {
    let runtime = rwtop::engine::runtime(rwtop::engine::WORKERS).expect("a runtime");
    for replicas in [10, 100, 1000] {
        let snap = Arc::new(snapshot(replicas));
        let text = render(&snap, "bench");
        let samples = text.lines().filter(|l| !l.starts_with('#')).count();
        println!("metrics_{replicas}_bytes {} B", text.len());
        println!("metrics_{replicas}_samples {samples} lines");
        let rounds = if replicas == 1000 { 200 } else { 1000 };
        for _ in 0..rounds / 10 {
            black_box(render(&snap, "bench"));
        }
        let times = (0..rounds)
            .map(|_| {
                let start = Instant::now();
                black_box(render(black_box(&snap), "bench"));
                start.elapsed()
            })
            .collect();
        report(&format!("metrics_{replicas}_render"), times);

        let (_tx, rx) = tokio::sync::watch::channel(Arc::clone(&snap));
        let server = runtime.block_on(async {
            let listener = MetricsListener::bind("127.0.0.1:0".parse().expect("an address"))
                .await
                .expect("binding");
            listener.serve(rx)
        });
        let addr = server.local_addr();
        let mut size = 0;
        for _ in 0..rounds / 10 {
            size = scrape(addr);
        }
        let times = (0..rounds)
            .map(|_| {
                let start = Instant::now();
                black_box(scrape(addr));
                start.elapsed()
            })
            .collect();
        report(&format!("metrics_{replicas}_scrape"), times);
        println!("metrics_{replicas}_response {size} B");
        throttle(&snap, addr, replicas, rounds);
        runtime.block_on(server.shutdown());
    }
}
