//! A real Prometheus (Debian `prometheus`) scraping `rwtop serve` on a sandbox every second,
//! with deploy/prometheus/rwtop.rules.yml loaded: every query of deploy/grafana's dashboard (its
//! variables set to match everything) and every rule expression is evaluated through the HTTP
//! API (`/api/v1/query`). Dashboard queries and recording rules must return series on a healthy
//! topology; alert conditions legitimately return none there, so for them the test checks they
//! parse and evaluate (status success) and that Prometheus reports the rule healthy.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::TestSandbox;
use serde_json::Value;
use serve::{Serve, deploy, get, tool};

const DEADLINE: Duration = Duration::from_secs(60);

/// The Prometheus server, killed and reaped on drop (a test that fails leaves none behind).
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target: SocketAddr) -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        let rules = deploy("prometheus/rwtop.rules.yml").display().to_string();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global: {{ scrape_interval: 1s, evaluation_interval: 1s }}\n\
                 rule_files: [\"{rules}\"]\n\
                 scrape_configs:\n  - job_name: rwtop\n    static_configs: [{{ targets: [\"{target}\"] }}]\n"
            ),
        )
        .expect("writing prometheus.yml");
        // A free port: bound, read, released (Prometheus binds it a moment later).
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        let child = Command::new(tool("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting prometheus");
        Self {
            child,
            addr,
            _dir: dir,
        }
    }

    /// `GET /api/v1/...`: the JSON answer, whatever its status.
    fn api(&self, path_and_query: &str) -> Option<Value> {
        if std::net::TcpStream::connect(self.addr).is_err() {
            return None;
        }
        let (_, body) = get(self.addr, path_and_query);
        serde_json::from_str(&body).ok()
    }

    /// An instant query: the `data.result` of a success, or a panic naming the query and error.
    fn query(&self, expr: &str) -> Vec<Value> {
        let answer = self
            .api(&format!("/api/v1/query?query={}", encode(expr)))
            .unwrap_or_else(|| panic!("no JSON answer for {expr}"));
        assert_eq!(answer["status"], "success", "{expr}: {answer}");
        answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{expr}: no result in {answer}"))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encoding for a query string value: everything but unreserved characters.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The dashboard's variables replaced by a regex that matches every value.
fn substitute(expr: &str) -> String {
    expr.replace("$cluster", ".*").replace("$replica", ".*")
}

/// Every panel query of the dashboard, and each query variable's series selector (the first
/// argument of `label_values(selector, label)`, with its label).
fn dashboard() -> (Vec<String>, Vec<(String, String)>) {
    let text = std::fs::read_to_string(deploy("grafana/rwtop-dashboard.json")).expect("dashboard");
    let dash: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let panels = dash["panels"].as_array().expect("panels");
    let exprs: Vec<String> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().expect("targets").clone())
        .map(|t| t["expr"].as_str().expect("expr").to_owned())
        .collect();
    let variables = dash["templating"]["list"]
        .as_array()
        .expect("variables")
        .iter()
        .filter(|v| v["type"] == "query")
        .map(|v| {
            let q = v["query"]["query"].as_str().expect("a variable query");
            let inner = q
                .strip_prefix("label_values(")
                .and_then(|q| q.strip_suffix(')'))
                .expect("label_values(selector, label)");
            let (selector, label) = inner.rsplit_once(", ").expect("selector, label");
            (selector.to_owned(), label.to_owned())
        })
        .collect();
    (exprs, variables)
}

#[test]
fn every_dashboard_query_and_rule_runs_on_a_real_prometheus() {
    let (exprs, variables) = dashboard();
    assert!(exprs.len() >= 10, "{exprs:?}");
    assert_eq!(
        variables
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>(),
        ["cluster", "replica"]
    );

    let t = TestSandbox::start(2, false);
    let serve = Serve::start(&t.sandbox().dir().join("rwtop.toml"));
    serve.scrape_until("both replicas measured", DEADLINE, |b| {
        b.matches(r#"state="exact"} 1"#).count() >= 2
    });
    let prometheus = Prometheus::start(serve.addr);

    // Samples in: a few scrapes of lag, enough for rate() and the histogram quantiles.
    let end = Instant::now() + DEADLINE;
    loop {
        let ready = prometheus
            .api(&format!(
                "/api/v1/query?query={}",
                encode("count_over_time(rwtop_replica_heartbeat_lag_seconds[1m]) >= 4")
            ))
            .is_some_and(|a| a["data"]["result"].as_array().is_some_and(|r| r.len() >= 2));
        if ready {
            break;
        }
        assert!(
            Instant::now() < end,
            "Prometheus has no rwtop samples within {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    for (selector, label) in &variables {
        let series = prometheus.query(&substitute(selector));
        assert!(
            series
                .iter()
                .any(|s| s["metric"][label.as_str()].is_string()),
            "variable {label}: {selector} has no series with the label: {series:?}"
        );
    }
    for expr in &exprs {
        let series = prometheus.query(&substitute(expr));
        // Test reads run only when asked (the TUI's keys, `rwtop probe`), never under
        // `rwtop serve`: the probe panel's queries parse and evaluate, with nothing to show.
        // Likewise the Galera panels on this async sandbox; tests/live_galera_cluster.rs reads
        // those families from a real cluster.
        if !expr.contains("rwtop_probe_") && !expr.contains("rwtop_galera_") {
            assert!(
                !series.is_empty(),
                "dashboard query returns no series: {expr}"
            );
        }
    }

    // The rules as Prometheus loaded them; wait until every one has been evaluated.
    let rules = loop {
        let answer = prometheus.api("/api/v1/rules").expect("the rules API");
        let rules: Vec<Value> = answer["data"]["groups"]
            .as_array()
            .expect("rule groups")
            .iter()
            .flat_map(|g| g["rules"].as_array().expect("rules").clone())
            .collect();
        if !rules.is_empty() && rules.iter().all(|r| r["health"] == "ok") {
            break rules;
        }
        assert!(Instant::now() < end, "rules not all healthy: {answer}");
        std::thread::sleep(Duration::from_millis(500));
    };
    // Counted in the file itself: every `- alert:` or `- record:` entry.
    let in_file = std::fs::read_to_string(deploy("prometheus/rwtop.rules.yml"))
        .expect("the shipped rules")
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("- alert:") || l.starts_with("- record:"))
        .count();
    assert!(in_file > 0, "no rules found in rwtop.rules.yml");
    assert_eq!(rules.len(), in_file, "every rule of rwtop.rules.yml loaded");
    for rule in &rules {
        let expr = rule["query"].as_str().expect("a rule's query");
        let series = prometheus.query(expr);
        if rule["type"] == "recording" {
            assert!(
                !series.is_empty(),
                "recording rule returns no series: {expr}"
            );
            let name = rule["name"].as_str().expect("a name");
            assert!(!prometheus.query(name).is_empty(), "{name} not recorded");
        }
        // An alert condition: parsed and evaluated (above); healthy replicas fire none.
    }
    let firing = prometheus.query(r#"ALERTS{alertstate="firing"}"#);
    assert!(
        firing.is_empty(),
        "alerts firing on a healthy sandbox: {firing:?}"
    );
}
