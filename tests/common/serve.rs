//! `rwtop serve` through the binary on a sandbox's config, killed when the handle drops, and the
//! Debian `prometheus` tools (`promtool`, `prometheus`) the Prometheus tests run. Shared by
//! `tests/promtool.rs` and `tests/prometheus_live.rs` (`#[path]`, not through `common`).
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the harness"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A running `rwtop serve`; killed (SIGKILL) and reaped on drop, even when the test fails.
pub struct Serve {
    child: Child,
    pub addr: SocketAddr,
}

impl Serve {
    /// Starts `rwtop --config CONFIG serve --metrics-listen 127.0.0.1:0` and waits for the line
    /// naming its URL.
    pub fn start(config: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rwtop"))
            .arg("--config")
            .arg(config)
            .args(["serve", "--metrics-listen", "127.0.0.1:0"])
            .env_remove("RWTOP_PASSWORD")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting rwtop serve");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                l.strip_prefix("rwtop: serving Prometheus metrics at ")
                    .and_then(|rest| rest.split(' ').next())
                    .map(str::to_owned)
            })
            .expect("rwtop serve names its URL");
        // Keep draining stderr so rwtop never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let addr = url
            .strip_prefix("http://")
            .and_then(|a| a.strip_suffix("/metrics"))
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("not a metrics URL: {url}"));
        Self { child, addr }
    }

    /// SIGTERM, as an operator's `kill` sends it, and the exit status it ends with.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("a pid"));
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        self.child.wait().expect("waiting for rwtop serve")
    }

    /// One `GET /metrics`: the body of a 200.
    pub fn scrape(&self) -> String {
        let (status, body) = get(self.addr, "/metrics");
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Scrapes until `ready` holds for the text, or panics naming `what` at the deadline.
    pub fn scrape_until(
        &self,
        what: &str,
        deadline: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        let end = Instant::now() + deadline;
        loop {
            let body = self.scrape();
            if ready(&body) {
                return body;
            }
            assert!(
                Instant::now() < end,
                "{what}: not within {deadline:?}; last scrape:\n{body}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A plain HTTP/1.1 GET on a fresh connection: (status, body).
pub fn get(addr: SocketAddr, path_and_query: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connecting");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a read timeout");
    write!(
        stream,
        "GET {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("sending");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("reading");
    let raw = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// The Debian `prometheus` package's binary (scripts/test installs it): a missing one fails the
/// test with what to install, it never skips.
pub fn tool(name: &str) -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!("{name} not found: install the Debian package prometheus (scripts/test does)")
    })
}

/// Runs `promtool ARGS`, feeding `stdin` when given.
pub fn promtool(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(tool("promtool"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running promtool");
    let mut input = child.stdin.take().expect("piped stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).expect("feeding promtool");
    }
    drop(input);
    child.wait_with_output().expect("promtool's output")
}

/// The repository's `deploy/` folder.
pub fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(file)
}
