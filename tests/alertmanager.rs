//! The shipped Alertmanager configuration (deploy/alertmanager/rwtop-inhibit.yml), with the tools
//! of the Debian package `prometheus-alertmanager`: `amtool check-config` accepts it, `amtool
//! config routes test` sends an incident's members nowhere and the incident to the pager, and a
//! real Alertmanager on a loopback port, sent one incident's alerts through its API, inhibits
//! exactly the per-kind alerts about places in that incident.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/alertmanager/rwtop-inhibit.yml")
}

/// The first of `names` on PATH or in /usr/bin (Debian installs the server as
/// `prometheus-alertmanager`).
fn tool(names: &[&str]) -> PathBuf {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    names
        .iter()
        .flat_map(|name| {
            dirs.iter()
                .cloned()
                .chain([PathBuf::from("/usr/bin")])
                .map(move |dir| dir.join(name))
        })
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{} not found: install the Debian package prometheus-alertmanager (scripts/test does)",
                names.join(" or ")
            )
        })
}

fn said(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn amtool(args: &[&str]) -> Output {
    Command::new(tool(&["amtool"]))
        .args(args)
        .output()
        .expect("running amtool")
}

#[test]
fn the_shipped_config_passes_amtool_and_routes_members_nowhere() {
    let file = config();
    let file = file.to_str().expect("a UTF-8 path");
    let out = amtool(&["check-config", file]);
    assert!(out.status.success(), "{}", said(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SUCCESS"), "{}", said(&out));
    assert!(text.contains("4 inhibit rules"), "{}", said(&out));

    let route = |labels: &[&str]| {
        let mut args = vec!["config", "routes", "test", "--config.file", file];
        args.extend_from_slice(labels);
        let out = amtool(&args);
        assert!(out.status.success(), "{}", said(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(
        route(&["alertname=RwtopIncidentMember", "kind=io_thread_stopped"]),
        "rwtop-none"
    );
    assert_eq!(
        route(&["alertname=RwtopIncident", "incident=io_thread_stopped:r1"]),
        "rwtop-page"
    );
}

/// An Alertmanager run for the test, killed when dropped.
struct Alertmanager {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Alertmanager {
    fn start() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let child = Command::new(tool(&["alertmanager", "prometheus-alertmanager"]))
            .arg(format!("--config.file={}", config().display()))
            .arg(format!("--storage.path={}", dir.path().display()))
            .arg(format!("--web.listen-address={addr}"))
            // No gossip: a single instance, nothing listening beyond the one loopback port.
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting Alertmanager");
        let am = Self {
            child,
            addr,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while am.request("GET", "/-/ready", None).0 != 200 {
            assert!(Instant::now() < deadline, "Alertmanager not ready in 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        am
    }

    /// One HTTP/1.0 request (so the answer is never chunked), its status and body; status 0
    /// when nothing answers yet.
    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
        let Ok(mut stream) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(2)) else {
            return (0, String::new());
        };
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a read timeout");
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return (0, String::new());
        }
        let mut raw = String::new();
        if stream.read_to_string(&mut raw).is_err() {
            return (0, String::new());
        }
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, body.to_owned())
    }
}

fn alert(labels: &Value) -> Value {
    json!({ "labels": labels, "annotations": { "summary": "test" } })
}

/// What the rules make of rwtop's series while r1's IO thread is stopped and c1 below it
/// inherits the lag, beside alerts about places outside the incident.
fn incident_alerts() -> Vec<(&'static str, Value, bool)> {
    let incident = "io_thread_stopped:r1";
    vec![
        // The page, and the two members (never paged).
        (
            "the incident",
            json!({"alertname": "RwtopIncident", "cluster": "eu", "incident": incident,
                   "cause": "io_thread_stopped", "node": "r1", "severity": "critical",
                   "state": "active"}),
            false,
        ),
        (
            "r1's member",
            json!({"alertname": "RwtopIncidentMember", "cluster": "eu", "incident": incident,
                   "kind": "io_thread_stopped", "node": "r1", "replica": "r1",
                   "role": "cause", "inherited": "false", "severity": "none"}),
            false,
        ),
        (
            "c1's member",
            json!({"alertname": "RwtopIncidentMember", "cluster": "eu", "incident": incident,
                   "kind": "sbm_understates_lag", "node": "c1", "replica": "c1",
                   "role": "symptom", "caused_by": incident, "inherited": "true",
                   "severity": "none"}),
            false,
        ),
        // Per-kind alerts from the raw series: inhibited where rwtop's incident covers them.
        (
            "r1's IO thread",
            json!({"alertname": "RwtopIoThreadStopped", "cluster": "eu", "replica": "r1",
                   "source": "db1", "state": "no", "severity": "critical"}),
            true,
        ),
        (
            "c1's SBM",
            json!({"alertname": "RwtopSbmUnderstatesLag", "cluster": "eu", "replica": "c1",
                   "source": "r1", "severity": "warning"}),
            true,
        ),
        (
            "r2's P99 (nothing raised on r2)",
            json!({"alertname": "RwtopLagP99High", "cluster": "eu", "replica": "r2",
                   "source": "db1", "severity": "warning"}),
            false,
        ),
        (
            "c1's SBM in another cluster",
            json!({"alertname": "RwtopSbmUnderstatesLag", "cluster": "us", "replica": "c1",
                   "source": "r1", "severity": "warning"}),
            false,
        ),
        (
            "r1's channel p2",
            json!({"alertname": "RwtopIoThreadStopped", "cluster": "eu", "replica": "r1",
                   "channel": "p2", "source": "db2", "severity": "critical"}),
            false,
        ),
    ]
}

#[test]
fn a_real_alertmanager_inhibits_what_an_incident_covers_and_nothing_else() {
    let am = Alertmanager::start();
    let cases = incident_alerts();
    let posted: Vec<Value> = cases.iter().map(|(_, labels, _)| alert(labels)).collect();
    let (status, body) = am.request("POST", "/api/v2/alerts", Some(&Value::Array(posted)));
    assert_eq!(status, 200, "posting the alerts: {body}");

    // Alertmanager sees its inhibiting alerts a moment after they arrive: ask until every
    // alert shows and the inhibitions settled, or the deadline.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (got, listed) = loop {
        let (status, body) = am.request("GET", "/api/v2/alerts", None);
        let listed: Vec<Value> = serde_json::from_str(&body).unwrap_or_default();
        let inhibited = |labels: &Value| {
            listed.iter().find(|a| &a["labels"] == labels).map(|a| {
                a["status"]["inhibitedBy"]
                    .as_array()
                    .is_some_and(|by| !by.is_empty())
            })
        };
        let got: Vec<(&str, Option<bool>)> = cases
            .iter()
            .map(|(name, labels, _)| (*name, inhibited(labels)))
            .collect();
        let want: Vec<(&str, Option<bool>)> = cases
            .iter()
            .map(|(name, _, inhibited)| (*name, Some(*inhibited)))
            .collect();
        if status == 200 && got == want || Instant::now() > deadline {
            break (got, listed);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for ((name, _, want), (_, seen)) in cases.iter().zip(&got) {
        assert_eq!(
            *seen,
            Some(*want),
            "{name}: inhibited {seen:?}, expected {want}\n{listed:#?}"
        );
    }
    // Inhibited means suppressed by an incident member: the one that names its place.
    let suppressed: Vec<&Value> = listed
        .iter()
        .filter(|a| a["status"]["state"] == "suppressed")
        .collect();
    assert_eq!(suppressed.len(), 2, "{listed:#?}");
}
