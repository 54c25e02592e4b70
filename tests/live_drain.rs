//! Drains through a real HAProxy (the Debian package) in front of the sandbox's replicas, and
//! through the exec backend; every action lands in the audit log, and a drained replica is
//! skipped by rwtop's own lag-threshold routing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{TestSandbox, engine_spec, eventually, rwtop};
use rwtop::drain::task::{DrainSpec, act};
use rwtop::drain::{Action, AuditLog, Backend, ExecConfig, HaproxyConfig, ServerState, Target};
use rwtop::engine::Engine;
use rwtop::store::Role;

const DEADLINE: Duration = Duration::from_secs(30);

/// A foreground `haproxy` in TCP mode with r1 and r2 in backend `replicas`, killed on drop.
struct Haproxy {
    child: Child,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Haproxy {
    fn start(t: &TestSandbox) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("admin.sock");
        let port = |n: &str| t.sandbox().endpoint(n).unwrap().port;
        let listen = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let front = listen.local_addr().unwrap().port();
        drop(listen);
        let cfg = format!(
            "global\n  stats socket {} mode 600 level admin\n\
             defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n\
             frontend ro\n  bind 127.0.0.1:{front}\n  default_backend replicas\n\
             backend replicas\n  server r1 127.0.0.1:{}\n  server r2 127.0.0.1:{}\n",
            socket.display(),
            port("r1"),
            port("r2"),
        );
        let cfg_path = dir.path().join("haproxy.cfg");
        std::fs::write(&cfg_path, cfg).unwrap();
        let child = Command::new(haproxy_binary())
            .arg("-db")
            .arg("-f")
            .arg(&cfg_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting haproxy (scripts/test installs the Debian package)");
        // Ready once its admin socket answers (a plain thread wait: async and sync tests use it).
        let start = std::time::Instant::now();
        while admin_state(&socket, "r1").is_none() {
            assert!(
                start.elapsed() < DEADLINE,
                "haproxy's admin socket never answered"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            socket,
            _dir: dir,
        }
    }

    fn config(&self, backend: &str) -> HaproxyConfig {
        HaproxyConfig {
            socket: self.socket.display().to_string(),
            backend: backend.into(),
            servers: std::collections::BTreeMap::new(),
        }
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian installs it in /usr/sbin, which a normal user's PATH may lack.
fn haproxy_binary() -> PathBuf {
    ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("haproxy"))
}

/// The raw `srv_admin_state` HAProxy prints for a server in `show servers state`.
fn admin_state(socket: &Path, server: &str) -> Option<u32> {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.write_all(b"show servers state replicas\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let mut lines = text.lines().skip(1);
    let header: Vec<&str> = lines
        .next()?
        .trim_start_matches('#')
        .split_whitespace()
        .collect();
    let (name_at, admin_at) = (
        header.iter().position(|c| *c == "srv_name")?,
        header.iter().position(|c| *c == "srv_admin_state")?,
    );
    lines.find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(name_at) == Some(&server)).then(|| f.get(admin_at)?.parse().ok())?
    })
}

fn target(t: &TestSandbox, name: &str) -> Target {
    let e = t.sandbox().endpoint(name).unwrap();
    Target {
        name: name.into(),
        host: e.host,
        port: e.port,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn haproxy_drain_and_undrain_move_the_server_and_are_audited() {
    let t = TestSandbox::start(2, false);
    let haproxy = Haproxy::start(&t);
    let socket = haproxy.socket.clone();
    assert_eq!(admin_state(&socket, "r1"), Some(0));
    let audit_dir = tempfile::tempdir().unwrap();
    let spec = DrainSpec {
        backend: Backend::Haproxy(haproxy.config("replicas")),
        audit: AuditLog::new(audit_dir.path().join("audit.log")),
    };
    let r1 = target(&t, "r1");

    let record = act(&spec, Action::Drain, &r1).await;
    assert!(record.ok, "{record:?}");
    // FDRAIN (0x08) is HAProxy's "drained by the admin" flag.
    assert_eq!(admin_state(&socket, "r1"), Some(8));
    let view = spec
        .backend
        .view(std::slice::from_ref(&r1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(view["r1"], ServerState::Drain);
    assert_eq!(view["r2"], ServerState::Ready);

    let record = act(&spec, Action::Undrain, &r1).await;
    assert!(record.ok, "{record:?}");
    assert_eq!(admin_state(&socket, "r1"), Some(0));
    let view = spec
        .backend
        .view(std::slice::from_ref(&r1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(view["r1"], ServerState::Ready);

    // A wrong backend name fails with HAProxy's own words, and is logged as failed.
    let wrong = DrainSpec {
        backend: Backend::Haproxy(haproxy.config("no_such_backend")),
        audit: spec.audit.clone(),
    };
    let record = act(&wrong, Action::Drain, &r1).await;
    assert!(!record.ok, "{record:?}");
    assert!(record.message.contains("No such backend"), "{record:?}");
    assert_eq!(admin_state(&socket, "r1"), Some(0), "nothing changed");

    let log = spec.audit.read().unwrap();
    let summary: Vec<(Action, bool)> = log.iter().map(|r| (r.action, r.ok)).collect();
    assert_eq!(
        summary,
        [
            (Action::Drain, true),
            (Action::Undrain, true),
            (Action::Drain, false)
        ]
    );
    assert!(
        log.iter()
            .all(|r| r.replica == "r1" && r.backend.starts_with("haproxy "))
    );
    assert!(log[2].backend.contains("no_such_backend/r1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_replica_is_shown_and_skipped_by_lag_threshold_routing() {
    let t = TestSandbox::start(2, false);
    let haproxy = Haproxy::start(&t);
    let audit_dir = tempfile::tempdir().unwrap();
    let mut spec = engine_spec(
        &t,
        &[
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ],
    );
    spec.drain = Some(DrainSpec {
        backend: Backend::Haproxy(haproxy.config("replicas")),
        audit: AuditLog::new(audit_dir.path().join("audit.log")),
    });
    let engine = Engine::start(&spec);
    let mut rx = engine.snapshots();
    eventually(
        "both replicas measured and HAProxy's view read",
        DEADLINE,
        async || {
            let s = rx.borrow_and_update().clone();
            let measured = ["r1", "r2"].iter().all(|n| {
                s.node(n)
                    .and_then(|n| n.replica())
                    .is_some_and(|r| r.heartbeat_lag.value().is_some())
            });
            (measured && s.drain.states.get("r1") == Some(&ServerState::Ready)).then_some(())
        },
    )
    .await;

    assert!(engine.drain(rwtop::drain::DrainRequest {
        action: Action::Drain,
        replica: "r1".into()
    }));
    let s = eventually("r1 drained in the snapshot", DEADLINE, async || {
        let s = rx.borrow_and_update().clone();
        (s.drain.is_drained("r1") && s.drain.states.get("r1") == Some(&ServerState::Drain))
            .then_some(s)
    })
    .await;
    assert_eq!(s.drain.backend.as_deref(), Some("haproxy"));
    assert!(s.drain.log[0].ok);

    let mut prober = rwtop::probe::Prober::new(spec.probe_spec().unwrap());
    let r = prober
        .run(
            rwtop::probe::Strategy::LagThreshold(Duration::from_secs(5)),
            "r1",
            s.as_ref(),
        )
        .await;
    assert_eq!(r.served_by.as_deref(), Some("r2"), "{r:?}");
    prober.close().await;

    assert!(engine.drain(rwtop::drain::DrainRequest {
        action: Action::Undrain,
        replica: "r1".into()
    }));
    eventually("r1 back in rotation", DEADLINE, async || {
        let s = rx.borrow_and_update().clone();
        (!s.drain.is_drained("r1")).then_some(())
    })
    .await;
    engine.shutdown().await;
}

#[tokio::test]
async fn the_exec_backend_runs_the_command_with_placeholders_and_reports_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("calls");
    let script = format!("echo \"$0 $1 $2 $3\" >> {}", out.display());
    let spec = DrainSpec {
        backend: Backend::Exec(ExecConfig {
            drain: vec![
                "sh".into(),
                "-c".into(),
                script.clone(),
                "{action}".into(),
                "{name}".into(),
                "{host}".into(),
                "{port}".into(),
            ],
            undrain: vec!["sh".into(), "-c".into(), "echo refused >&2; exit 3".into()],
        }),
        audit: AuditLog::new(dir.path().join("audit.log")),
    };
    let target = Target {
        name: "r1".into(),
        host: "10.0.0.2".into(),
        port: 3307,
    };
    let record = act(&spec, Action::Drain, &target).await;
    assert!(record.ok, "{record:?}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "drain r1 10.0.0.2 3307\n"
    );
    let record = act(&spec, Action::Undrain, &target).await;
    assert!(!record.ok, "{record:?}");
    assert!(
        record.message.contains("exit status: 3") && record.message.contains("refused"),
        "{record:?}"
    );
    let log = spec.audit.read().unwrap();
    assert_eq!(log.len(), 2);
    assert!(log[0].ok && !log[1].ok);
}

/// A one-shot HTTP server that records the request it gets and answers `reply`.
async fn http_once(reply: &'static str) -> (String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let handle = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.ends_with(b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        stream.write_all(reply.as_bytes()).await.unwrap();
        String::from_utf8(request).unwrap()
    });
    (address, handle)
}

#[tokio::test]
async fn maxscale_gets_exactly_these_requests_and_its_errors_are_shown() {
    let config = |address: String| rwtop::drain::MaxscaleConfig {
        address,
        user: "admin".into(),
        password: Some(rwtop::mysql::Secret::new("mariadb")),
        servers: [("r1".to_owned(), "server2".to_owned())].into(),
    };
    let target = Target {
        name: "r1".into(),
        host: "127.0.0.1".into(),
        port: 3307,
    };
    let (address, request) =
        http_once("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n").await;
    let backend = Backend::Maxscale(config(address.clone()));
    let record = backend.apply(Action::Drain, &target).await;
    assert!(record.ok, "{record:?}");
    assert_eq!(
        request.await.unwrap(),
        format!(
            "PUT /v1/servers/server2/set?state=drain HTTP/1.1\r\nHost: {address}\r\n\
             Authorization: Basic YWRtaW46bWFyaWFkYg==\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
        )
    );

    let body = r#"{"errors":[{"detail":"No server 'server2' found"}]}"#;
    let reply: &'static str = Box::leak(
        format!(
            "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_boxed_str(),
    );
    let (address, request) = http_once(reply).await;
    let record = Backend::Maxscale(config(address))
        .apply(Action::Undrain, &target)
        .await;
    assert!(
        request
            .await
            .unwrap()
            .starts_with("PUT /v1/servers/server2/clear?state=drain HTTP/1.1\r\n")
    );
    assert!(!record.ok);
    assert_eq!(
        record.message,
        "MaxScale answered 404: No server 'server2' found"
    );
}

#[test]
fn rwtop_drain_and_undrain_on_the_command_line() {
    let t = TestSandbox::start(2, false);
    let haproxy = Haproxy::start(&t);
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(t.sandbox().dir().join("rwtop.toml")).unwrap();
    let config = |backend: &str| {
        let path = dir.path().join(format!("{backend}.toml"));
        let text = format!(
            "{base}\n[drain]\nbackend = \"haproxy\"\naudit_log = \"audit.log\"\n\
             [drain.haproxy]\nsocket = \"{}\"\nbackend = \"{backend}\"\n",
            haproxy.socket.display()
        );
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let good = config("replicas");
    let socket = haproxy.socket.clone();

    let out = rwtop(&["--config", &good, "drain", "r1"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.starts_with("drained r1 via haproxy replicas/r1"),
        "{stdout}"
    );
    assert_eq!(admin_state(&socket, "r1"), Some(8));
    let out = rwtop(&["--config", &good, "undrain", "r1"], &[]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(admin_state(&socket, "r1"), Some(0));

    let out = rwtop(&["--config", &config("nope"), "drain", "r2"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("FAILED") && stderr.contains("No such backend"),
        "{stderr}"
    );

    let out = rwtop(&["--config", &good, "drain", "primary"], &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no replica named \"primary\""));

    let audit = AuditLog::new(dir.path().join("audit.log")).read().unwrap();
    let summary: Vec<(Action, bool)> = audit.iter().map(|r| (r.action, r.ok)).collect();
    assert_eq!(
        summary,
        [
            (Action::Drain, true),
            (Action::Undrain, true),
            (Action::Drain, false)
        ]
    );
}
