//! The recorder of `tests/ui_snapshots/*.json`: store snapshots taken from real sandboxes in real
//! scenarios, which `tests/ui_render.rs` draws. A tool, not a check: a cargo example that only
//! runs when asked, never under `cargo test`.
//!
//! ```text
//! scripts/record-ui-snapshots                 # every scenario, one after the other
//! scripts/record-ui-snapshots ddl_window      # one scenario
//! ```
//!
//! Each scenario starts its own sandbox and engine, drives it with SQL (or a stalled relay) as
//! `tests/live_alerts.rs` does, waits for the picture it is named after and writes the engine's
//! own snapshot, pretty-printed. Only the ports are rewritten (node `i` in snapshot order becomes
//! `13306 + i`, relay `i` `13406 + i`), so that a re-recording changes what changed; times stay as
//! recorded, which keeps the renders deterministic. See `tests/ui_snapshots/README.md`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use common::{Load, TestSandbox, alert, engine_spec, exact, until};
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;
use rwtop::mysql::{NodeConn, Timeouts};
use rwtop::store::{ReplicaView, Role, Snapshot};
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(120);
const FIRST_NODE_PORT: u16 = 13306;
const FIRST_RELAY_PORT: u16 = 13406;

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ui_snapshots")
}

/// The scenarios by name, each recording `tests/ui_snapshots/<name>.json`.
const SCENARIOS: [&str; 4] = ["healthy", "sql_stopped", "stalled_link", "ddl_window"];

/// Records the scenarios named on the command line, or all of them, one at a time: they share
/// two cores, and one at a time keeps their timings what the names say.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let asked: Vec<String> = std::env::args().skip(1).collect();
    if let Some(unknown) = asked.iter().find(|a| !SCENARIOS.contains(&a.as_str())) {
        eprintln!(
            "record_ui_snapshots: no scenario {unknown:?}; pick from {}",
            SCENARIOS.join(", ")
        );
        return ExitCode::from(2);
    }
    for scenario in SCENARIOS {
        if !asked.is_empty() && !asked.iter().any(|a| a == scenario) {
            continue;
        }
        match scenario {
            "healthy" => record_healthy().await,
            "sql_stopped" => record_sql_stopped().await,
            "stalled_link" => record_stalled_link().await,
            _ => record_ddl_window().await,
        }
    }
    ExitCode::SUCCESS
}

fn engine(t: &TestSandbox, nodes: &[(&str, Role)]) -> Engine {
    Engine::start(&engine_spec(t, nodes))
}

/// The first published snapshot satisfying `check`.
async fn snapshot_where(
    engine: &Engine,
    what: &str,
    check: impl Fn(&Snapshot) -> bool,
) -> Snapshot {
    until(engine, what, DEADLINE, |s| check(s).then(|| s.clone()))
        .await
        .0
}

fn replica<'a>(s: &'a Snapshot, node: &str) -> Option<&'a ReplicaView> {
    s.node(node)?.replica()
}

fn has_alert(s: &Snapshot, kind: AlertKind, node: &str) -> bool {
    alert(s, kind, Some(node)).is_some()
}

async fn healthy(engine: &Engine, replicas: &[&str]) -> Snapshot {
    snapshot_where(engine, "caught up and no alerts", |s| {
        let caught_up = replicas.iter().all(|r| exact(s, r) == Some(Duration::ZERO));
        caught_up && s.alerts.active.is_empty()
    })
    .await
}

/// Lets the load run for `d`, so windows and the chart have history.
async fn settle(d: Duration) {
    tokio::time::sleep(d).await;
}

/// Rewrites `:port` (not followed by a digit) in every string of `v`.
fn replace_ports(v: &mut Value, ports: &[(u16, u16)]) {
    match v {
        Value::String(s) => {
            for (from, to) in ports {
                let needle = format!(":{from}");
                let mut out = String::with_capacity(s.len());
                let mut rest = s.as_str();
                while let Some(at) = rest.find(&needle) {
                    let (head, tail) = rest.split_at(at);
                    out.push_str(head);
                    let after = &tail[needle.len()..];
                    if after.starts_with(|c: char| c.is_ascii_digit()) {
                        out.push_str(&needle);
                    } else {
                        out.push(':');
                        out.push_str(&to.to_string());
                    }
                    rest = after;
                }
                out.push_str(rest);
                *s = out;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| replace_ports(i, ports)),
        Value::Object(map) => map.values_mut().for_each(|i| replace_ports(i, ports)),
        _ => {}
    }
}

/// Writes `snapshot` as `tests/ui_snapshots/<scenario>.json` with fixed ports.
fn save(t: &TestSandbox, scenario: &str, snapshot: &Snapshot) {
    let sandbox = t.sandbox();
    let mut ports: Vec<(u16, u16)> = Vec::new();
    let mut next_node = FIRST_NODE_PORT;
    let mut next_relay = FIRST_RELAY_PORT;
    for node in &snapshot.nodes {
        if let Some(port) = sandbox.port(&node.name) {
            ports.push((port, next_node));
            next_node += 1;
        }
        if let Some(relay) = sandbox.relay(&node.name) {
            ports.push((relay.port(), next_relay));
            next_relay += 1;
        }
    }
    let mut doc = serde_json::to_value(snapshot).expect("snapshot to JSON");
    replace_ports(&mut doc, &ports);
    let text = serde_json::to_string_pretty(&doc).expect("JSON text");
    for (port, _) in &ports {
        if text.contains(&port.to_string()) {
            eprintln!("{scenario}: note, {port} still appears in the JSON (not as :{port})");
        }
    }
    // What the renders read must load back.
    let back: Snapshot = serde_json::from_str(&text).expect("the recording loads back");
    assert_eq!(back.nodes.len(), snapshot.nodes.len());
    let dir = out_dir();
    std::fs::create_dir_all(&dir).expect("creating tests/ui_snapshots");
    let path = dir.join(format!("{scenario}.json"));
    std::fs::write(&path, text + "\n").expect("writing the recording");
    let active: Vec<String> = snapshot
        .alerts
        .active
        .iter()
        .map(|a| format!("{} {}", a.kind.name(), a.node.as_deref().unwrap_or("-")))
        .collect();
    eprintln!(
        "{scenario}: wrote {} (uptime {:?}, alerts: {active:?})",
        path.display(),
        snapshot.uptime
    );
}

const TOPOLOGY: [(&str, Role); 3] = [
    ("primary", Role::Primary),
    ("r1", Role::Replica),
    ("r2", Role::Replica),
];

/// Primary, two replicas and `c1` cascaded from `r1`, under steady load, all caught up, after
/// long enough that the windows' percentiles and the chart have data.
async fn record_healthy() {
    let t = TestSandbox::start_with(2, false, true);
    let mut nodes = TOPOLOGY.to_vec();
    nodes.push(("c1", Role::Replica));
    let engine = engine(&t, &nodes);
    let _load = Load::start(&t).await;
    healthy(&engine, &["r1", "r2", "c1"]).await;
    settle(Duration::from_secs(30)).await;
    let s = healthy(&engine, &["r1", "r2", "c1"]).await;
    assert_eq!(s.node("c1").and_then(|n| n.source.as_deref()), Some("r1"));
    save(&t, "healthy", &s);
    engine.shutdown().await;
}

/// `r2`'s SQL thread stopped for about ten seconds under load: SBM NULL, lag and backlog
/// climbing, `sql_thread_stopped` raised.
async fn record_sql_stopped() {
    let t = TestSandbox::start(2, false);
    let engine = engine(&t, &TOPOLOGY);
    let _load = Load::start(&t).await;
    healthy(&engine, &["r1", "r2"]).await;
    settle(Duration::from_secs(20)).await;
    t.admin("r2", "STOP SLAVE SQL_THREAD");
    let stopped = Instant::now();
    snapshot_where(&engine, "sql_thread_stopped on r2", |s| {
        has_alert(s, AlertKind::SqlThreadStopped, "r2")
    })
    .await;
    let s = snapshot_where(&engine, "ten seconds stopped", |s| {
        let r = replica(s, "r2");
        stopped.elapsed() >= Duration::from_secs(10)
            && has_alert(s, AlertKind::SqlThreadStopped, "r2")
            && r.is_some_and(|r| !r.sql_running && r.seconds_behind_source.is_none())
    })
    .await;
    save(&t, "sql_stopped", &s);
    engine.shutdown().await;
}

/// `r1`'s link to the primary stalled about twelve seconds (the relay holds the connection open):
/// both threads Yes, SBM 0, heartbeat lag climbing, `sbm_understates_lag` raised.
async fn record_stalled_link() {
    let t = TestSandbox::start_with_relay(2);
    let engine = engine(&t, &TOPOLOGY);
    let _load = Load::start(&t).await;
    healthy(&engine, &["r1", "r2"]).await;
    settle(Duration::from_secs(20)).await;
    t.relay("r1").stall();
    let stalled = Instant::now();
    let s = snapshot_where(&engine, "sbm_understates_lag on r1 after ~12 s", |s| {
        let r = replica(s, "r1");
        stalled.elapsed() >= Duration::from_secs(12)
            && has_alert(s, AlertKind::SbmUnderstatesLag, "r1")
            && r.is_some_and(|r| {
                r.seconds_behind_source == Some(0)
                    && r.heartbeat_lag
                        .value()
                        .is_some_and(|l| l > Duration::from_secs(8))
            })
    })
    .await;
    save(&t, "stalled_link", &s);
    t.relay("r1").resume();
    engine.shutdown().await;
}

/// A million wide rows rebuilt by `ALTER … ALGORITHM=COPY`, run by an application user, captured
/// while a replica applies it (banner, `ddl_in_flight` with an ETA, lag behind it).
async fn record_ddl_window() {
    let t = TestSandbox::start(2, false);
    t.admin(
        "primary",
        "CREATE TABLE rwtop.big (id INT PRIMARY KEY, a CHAR(255) NOT NULL, \
         b CHAR(255) NOT NULL, KEY (a(20))) CHARSET latin1; \
         INSERT INTO rwtop.big SELECT seq, REPEAT('x', 255), REPEAT('y', 255) \
         FROM rwtop.seq_1_to_1000000",
    );
    t.sandbox().wait_replicating(DEADLINE).unwrap();
    let engine = engine(&t, &TOPOLOGY);
    let _load = Load::start(&t).await;
    healthy(&engine, &["r1", "r2"]).await;
    settle(Duration::from_secs(15)).await;
    t.admin(
        "primary",
        "CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-test-only'; \
         GRANT ALL ON rwtop.* TO 'app'@'127.0.0.1'",
    );
    let endpoint = rwtop::mysql::Endpoint {
        user: "app".to_owned(),
        password: Some(rwtop::mysql::Secret::new("app-test-only")),
        ..t.sandbox().endpoint("primary").unwrap()
    };
    let alter = tokio::spawn(async move {
        let timeouts = Timeouts {
            connect: Duration::from_secs(3),
            query: Duration::from_secs(600),
        };
        let mut conn = NodeConn::connect(&endpoint, timeouts).await.unwrap();
        conn.query_rows("ALTER TABLE rwtop.big ENGINE=InnoDB, ALGORITHM=COPY")
            .await
            .unwrap();
    });
    let s = snapshot_where(&engine, "a replica applying the ALTER, with an ETA", |s| {
        ["r1", "r2"].iter().any(|r| {
            let applying = s.node(r).is_some_and(|n| n.ddl().iter().any(|d| d.applier));
            let eta = s.alerts.active.iter().any(|a| {
                a.kind == AlertKind::DdlInFlight
                    && a.node.as_deref() == Some(*r)
                    && a.cause.contains('~')
            });
            let behind = replica(s, r)
                .and_then(|v| v.heartbeat_lag.value())
                .is_some_and(|l| l > Duration::from_secs(1));
            applying && eta && behind
        })
    })
    .await;
    save(&t, "ddl_window", &s);
    alter.await.unwrap();
    engine.shutdown().await;
}
