//! Issue 8: a known password never leaks. The real binary runs against a real sandbox whose
//! monitor account has a known, distinctive password, and every byte it puts anywhere is searched
//! for that password (also URL-encoded, and its random core alone, which catches a cut-off
//! copy): the argv of rwtop and of every process it spawns (and their environment, which must
//! not inherit `RWTOP_PASSWORD`), stdout and stderr of each command, `/metrics`, recordings and
//! their replay, the drain audit log, and the TUI's screen. A DSN written with an inline password
//! works, but every message that quotes it shows it redacted.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::TestSandbox;
use serde_json::Value;

/// Generous: the machine running the suite may be busy.
const DEADLINE: Duration = Duration::from_secs(90);

const BIN: &str = env!("CARGO_BIN_EXE_rwtop");

// ---------------------------------------------------------------------------------------------
// The known password and the search for it.

/// A password nobody else would write: a tag, a random core, and characters that URL-encoding,
/// TOML, shells and DSN parsing all treat specially (`@`, `:`, `/`, a space, `%`, `#`, `&`).
struct Known {
    password: String,
    core: String,
}

impl Known {
    fn new(tag: &str) -> Self {
        let mut bytes = [0u8; 8];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .expect("reading /dev/urandom");
        let core = bytes.iter().fold(String::new(), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        });
        Self {
            password: format!("{tag}-{core}-p@ss:w/rd %#&"),
            core,
        }
    }

    /// Every form the password could leak in.
    fn forms(&self) -> [String; 3] {
        [
            self.password.clone(),
            url_encode(&self.password),
            self.core.clone(),
        ]
    }

    fn leaked_in(&self, bytes: &[u8]) -> bool {
        self.forms()
            .iter()
            .any(|form| contains(bytes, form.as_bytes()))
    }

    /// Panics if `bytes` holds the password in any form; the message shows where, masked.
    fn assert_absent(&self, what: &str, bytes: &[u8]) {
        if self.leaked_in(bytes) {
            let mut text = String::from_utf8_lossy(bytes).into_owned();
            for form in self.forms() {
                text = text.replace(&form, "<<LEAKED PASSWORD>>");
            }
            panic!("the password leaked into {what}:\n{text}");
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn url_encode(text: &str) -> String {
    text.bytes().fold(String::new(), |mut out, b| {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
        out
    })
}

#[test]
fn the_search_finds_every_form_of_the_password() {
    let known = Known::new("Sekr3t");
    assert!(known.password.contains(&known.core) && known.core.len() == 16);
    assert_ne!(url_encode(&known.password), known.password);
    for form in known.forms() {
        assert!(known.leaked_in(format!("x {form} y").as_bytes()), "{form}");
    }
    let cut: String = known.password.chars().take(30).collect();
    assert!(known.leaked_in(cut.as_bytes()), "a cut-off copy is found");
    assert!(!known.leaked_in(b"mysql://rwtop:***@127.0.0.1:3306"));
}

// ---------------------------------------------------------------------------------------------
// The sandbox with a known password, and config files for it.

/// Gives the sandbox's monitor account `password` (it replicates to every replica) and puts it
/// in the sandbox's password file, so the old random one is gone everywhere.
fn set_monitor_password(t: &TestSandbox, password: &str) {
    let user = &t.sandbox().state().monitor_user;
    t.admin(
        "primary",
        &format!("ALTER USER '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'"),
    );
    t.sandbox()
        .wait_replicating(DEADLINE)
        .unwrap_or_else(|e| panic!("the new password replicating: {e}"));
    write_private(&t.sandbox().dir().join("monitor.password"), password);
}

fn write_private(path: &Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

fn port(t: &TestSandbox, node: &str) -> u16 {
    t.sandbox().port(node).expect("node port")
}

/// A config naming every node of the sandbox with `userinfo` (`rwtop` or `rwtop:PASSWORD`),
/// `top` before the tables.
fn write_config(t: &TestSandbox, path: &Path, userinfo: &str, top: &str) {
    let mut text = format!("discovery = false\n{top}\n");
    for node in &t.sandbox().state().nodes {
        let table = if node.name == "primary" {
            "[primary]"
        } else {
            "[[replicas]]"
        };
        let _ = write!(
            text,
            "\n{table}\nname = \"{}\"\ndsn = \"mysql://{userinfo}@127.0.0.1:{}\"\n",
            node.name,
            port(t, &node.name)
        );
    }
    std::fs::write(path, text).expect("writing the config");
}

/// The `[drain]` section of an exec backend whose command records what it was given: its own
/// environment and argv (`exec-<action>.environ` / `.cmdline` in `dir`), then lingers a second
/// so that a look at rwtop's descendants sees it alive.
fn exec_drain(dir: &Path) -> String {
    let script = dir.join("dump.sh");
    let d = dir.display();
    std::fs::write(
        &script,
        format!(
            "cat /proc/$$/environ > {d}/exec-$1.environ\n\
             cat /proc/$$/cmdline > {d}/exec-$1.cmdline\n\
             sleep 1\n\
             echo \"exec backend: $1 $2 done\"\n"
        ),
    )
    .unwrap();
    let command = format!("/bin/sh {} {{action}} {{name}}", script.display());
    format!(
        "[drain]\nbackend = \"exec\"\naudit_log = \"{d}/audit.log\"\n\
         [drain.exec]\ndrain = \"{command}\"\nundrain = \"{command}\"\n"
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

// ---------------------------------------------------------------------------------------------
// rwtop's process tree, watched while it runs.

/// What one process showed in /proc: its argv, and its environment unless it is rwtop itself
/// (which holds `RWTOP_PASSWORD` when given that way, by design).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    pid: u32,
    cmdline: Vec<u8>,
    environ: Option<Vec<u8>>,
}

/// Children by parent, from every /proc/PID/stat (`pid (comm) state ppid ...`).
fn children_by_parent() -> BTreeMap<u32, Vec<u32>> {
    let mut map: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(parent) = parent {
            map.entry(parent).or_default().push(child);
        }
    }
    map
}

fn descendants(root: u32) -> Vec<u32> {
    let map = children_by_parent();
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        if let Some(children) = map.get(&pid) {
            out.extend(children);
            todo.extend(children);
        }
    }
    out
}

/// Samples `root` and its descendants every 20 ms until stopped.
struct Watcher {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Seen>>,
}

impl Watcher {
    fn start(root: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut seen: Vec<Seen> = Vec::new();
            let own = std::fs::read(format!("/proc/{root}/cmdline")).unwrap_or_default();
            loop {
                let last = flag.load(Ordering::SeqCst);
                for pid in std::iter::once(root).chain(descendants(root)) {
                    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                        continue;
                    };
                    // A child between fork and exec is still a copy of rwtop, environment
                    // included: it is looked at again once it runs its program.
                    if pid != root && cmdline == own {
                        continue;
                    }
                    let environ = (pid != root)
                        .then(|| std::fs::read(format!("/proc/{pid}/environ")).ok())
                        .flatten();
                    let sample = Seen {
                        pid,
                        cmdline,
                        environ,
                    };
                    if !sample.cmdline.is_empty() && !seen.contains(&sample) {
                        seen.push(sample);
                    }
                }
                if last {
                    return seen;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Self { stop, thread }
    }

    fn finish(self) -> Vec<Seen> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the /proc watcher")
    }
}

/// Nothing rwtop or its children show in /proc holds the password, and no child inherited
/// `RWTOP_PASSWORD`; returns how many child processes were seen.
fn assert_procs_clean(known: &Known, what: &str, seen: &[Seen]) -> usize {
    assert!(!seen.is_empty(), "{what}: rwtop was never seen running");
    for s in seen {
        known.assert_absent(
            &format!("{what}: /proc/{}/cmdline", s.pid),
            &s.cmdline
                .iter()
                .map(|&b| if b == 0 { b' ' } else { b })
                .collect::<Vec<_>>(),
        );
        if let Some(environ) = &s.environ {
            // Only the names of the variables are shown: the rest is this machine's business.
            let leaking: Vec<String> = environ
                .split(|&b| b == 0)
                .filter(|var| var.starts_with(b"RWTOP_PASSWORD=") || known.leaked_in(var))
                .map(|var| {
                    let name = var.split(|&b| b == b'=').next().unwrap_or_default();
                    String::from_utf8_lossy(name).into_owned()
                })
                .collect();
            assert!(
                leaking.is_empty(),
                "{what}: child {} ({}) has the password in its environment: {leaking:?}",
                s.pid,
                String::from_utf8_lossy(&s.cmdline).replace('\0', " ")
            );
        }
    }
    seen.iter().filter(|s| s.environ.is_some()).count()
}

// ---------------------------------------------------------------------------------------------
// Running the binary.

/// How the password reaches rwtop.
#[derive(Clone, Copy)]
enum Via<'a> {
    Env(&'a str),
    File(&'a Path),
    /// Not at all (an inline DSN password, or none).
    Neither,
}

struct Running {
    child: Child,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
    watcher: Watcher,
}

struct Finished {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    seen: Vec<Seen>,
}

impl Finished {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Output, argv and children's environment: for runs given the password the ways that
    /// keep it out of argv.
    fn assert_clean(&self, known: &Known, what: &str) {
        self.assert_output_clean(known, what);
        assert_procs_clean(known, what, &self.seen);
    }

    /// Output only: an inline DSN password is in rwtop's argv by the operator's choice (the
    /// warning says so).
    fn assert_output_clean(&self, known: &Known, what: &str) {
        known.assert_absent(&format!("{what}: stdout"), &self.stdout);
        known.assert_absent(&format!("{what}: stderr"), &self.stderr);
    }
}

fn collect(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    let thread = std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    (buffer, thread)
}

fn start(args: &[&str], via: Via<'_>) -> Running {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("RWTOP_PASSWORD")
        .env_remove("RWTOP_LB_PASSWORD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match via {
        Via::Env(password) => {
            cmd.env("RWTOP_PASSWORD", password);
        }
        Via::File(path) => {
            cmd.arg("--password-file").arg(path);
        }
        Via::Neither => {}
    }
    cmd.args(args);
    let mut child = cmd.spawn().expect("starting rwtop");
    let watcher = Watcher::start(child.id());
    let (stdout, out_thread) = collect(child.stdout.take().unwrap());
    let (stderr, err_thread) = collect(child.stderr.take().unwrap());
    Running {
        child,
        stdout,
        stderr,
        readers: vec![out_thread, err_thread],
        watcher,
    }
}

impl Running {
    fn stderr_so_far(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    fn finish(mut self) -> Finished {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting for rwtop") {
                break status;
            }
            if started.elapsed() > DEADLINE {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "rwtop did not finish within {DEADLINE:?}; stderr:\n{}",
                    self.stderr_so_far()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let seen = self.watcher.finish();
        for reader in self.readers {
            reader.join().unwrap();
        }
        let stdout = std::mem::take(&mut *self.stdout.lock().unwrap());
        let stderr = std::mem::take(&mut *self.stderr.lock().unwrap());
        Finished {
            status,
            stdout,
            stderr,
            seen,
        }
    }
}

fn run(args: &[&str], via: Via<'_>) -> Finished {
    start(args, via).finish()
}

/// Polls `check` every 100 ms until it gives a value, failing after [`DEADLINE`].
fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn http_get(addr: &str, path: &str) -> Option<String> {
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response)
}

fn json(out: &Finished, what: &str) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{}", out.stdout()))
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["name"] == name))
        .unwrap_or_else(|| panic!("no node {name} in {doc:#}"))
}

// ---------------------------------------------------------------------------------------------
// The fixture: a sandbox with the known password, the password in a file of its own, and a
// config naming every node without a password, with an exec drain backend.

struct Live {
    t: TestSandbox,
    known: Known,
    tmp: tempfile::TempDir,
    password_file: PathBuf,
    config: PathBuf,
}

impl Live {
    fn start(replicas: usize) -> Self {
        let t = TestSandbox::start(replicas, false);
        let known = Known::new("Sekr3t");
        set_monitor_password(&t, &known.password);
        let tmp = tempfile::tempdir().unwrap();
        let password_file = tmp.path().join("password");
        write_private(&password_file, &known.password);
        let config = tmp.path().join("rwtop.toml");
        write_config(&t, &config, "rwtop", &exec_drain(tmp.path()));
        Self {
            t,
            known,
            tmp,
            password_file,
            config,
        }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    fn cfg(&self) -> &str {
        self.config.to_str().unwrap()
    }

    fn env(&self) -> Via<'_> {
        Via::Env(&self.known.password)
    }

    fn file(&self) -> Via<'_> {
        Via::File(&self.password_file)
    }
}

// ---------------------------------------------------------------------------------------------
// The commands that use the password: argv, environment, output, metrics, recording, audit log.

#[test]
fn live_password_stays_out_of_argv_children_output_metrics_recordings_and_logs() {
    let live = Live::start(2);
    snapshots_leak_nothing(&live);
    probes_leak_nothing(&live);
    serve_and_its_recording_leak_nothing(&live);
    drains_leak_nothing(&live);
}

fn snapshots_leak_nothing(live: &Live) {
    let (known, cfg) = (&live.known, live.cfg());
    // snapshot --json with RWTOP_PASSWORD: every node up proves the password was used.
    let out = run(
        &["--config", cfg, "snapshot", "--json", "--duration", "3s"],
        live.env(),
    );
    assert!(out.status.success(), "snapshot: {}", out.stderr());
    let doc = json(&out, "snapshot --json");
    for name in ["primary", "r1", "r2"] {
        assert_eq!(node(&doc, name)["state"], "up", "{name}: {doc:#}");
    }
    out.assert_clean(known, "snapshot --json (RWTOP_PASSWORD)");

    // The table, with --password-file.
    let out = run(
        &["--config", cfg, "snapshot", "--duration", "2s"],
        live.file(),
    );
    assert!(out.status.success(), "snapshot: {}", out.stderr());
    assert!(
        out.stdout().lines().filter(|l| l.contains(" up ")).count() == 3,
        "every node up:\n{}",
        out.stdout()
    );
    out.assert_clean(known, "snapshot (--password-file)");
}

/// probe: a line per probe on stderr, the table on stdout; then the JSON.
fn probes_leak_nothing(live: &Live) {
    let probe = [
        "--config",
        live.cfg(),
        "probe",
        "--target",
        "r1",
        "--strategy",
        "none,primary",
        "--count",
        "2",
        "--spacing",
        "10ms",
    ];
    let out = run(&probe, live.env());
    assert!(out.status.success(), "probe: {}", out.stderr());
    assert!(
        out.stdout().contains("STRATEGY") && out.stdout().contains("primary"),
        "{}",
        out.stdout()
    );
    out.assert_clean(&live.known, "probe (RWTOP_PASSWORD)");
    let out = run(&[&probe[..], &["--json"]].concat(), live.file());
    assert!(out.status.success(), "probe --json: {}", out.stderr());
    json(&out, "probe --json");
    out.assert_clean(&live.known, "probe --json (--password-file)");
}

/// serve: /metrics with both replicas measured, and a recording beside it.
fn serve_and_its_recording_leak_nothing(live: &Live) {
    let known = &live.known;
    let recording = live.dir().join("serve.jsonl");
    let serving = start(
        &[
            "--config",
            live.cfg(),
            "serve",
            "--metrics-listen",
            "127.0.0.1:0",
            "--record",
            recording.to_str().unwrap(),
        ],
        live.env(),
    );
    let addr = wait_for("the line naming the metrics URL", || {
        let said = serving.stderr_so_far();
        let (_, rest) = said.split_once("serving Prometheus metrics at http://")?;
        rest.split_once("/metrics").map(|(addr, _)| addr.to_owned())
    });
    let body = wait_for("both replicas measured in /metrics", || {
        let response = http_get(&addr, "/metrics")?;
        let exact = |replica: &str| {
            response.lines().any(|l| {
                l.starts_with("rwtop_replica_heartbeat_lag_state{")
                    && l.contains(&format!("replica=\"{replica}\""))
                    && l.contains("state=\"exact\"")
                    && l.ends_with(" 1")
            })
        };
        (exact("r1") && exact("r2")).then_some(response)
    });
    known.assert_absent("/metrics", body.as_bytes());
    known.assert_absent(
        "a 404 page",
        http_get(&addr, "/secret").unwrap_or_default().as_bytes(),
    );
    wait_for("three frames recorded", || {
        let text = std::fs::read_to_string(&recording).ok()?;
        (text.lines().count() >= 4).then_some(())
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(serving.child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = serving.finish();
    assert!(out.status.success(), "serve: {}", out.stderr());
    assert!(out.stderr().contains("recorded "), "{}", out.stderr());
    out.assert_clean(known, "serve --record (RWTOP_PASSWORD)");
    known.assert_absent("the recording", &std::fs::read(&recording).unwrap());
}

/// drain / undrain through the exec backend: the one command rwtop runs on the operator's
/// behalf must neither see the password in its argv nor inherit `RWTOP_PASSWORD`.
fn drains_leak_nothing(live: &Live) {
    let known = &live.known;
    for (action, via) in [("drain", live.env()), ("undrain", live.file())] {
        let out = run(&["--config", live.cfg(), action, "r1"], via);
        assert!(out.status.success(), "{action}: {}", out.stderr());
        assert!(
            out.stdout()
                .contains(&format!("exec backend: {action} r1 done")),
            "{}",
            out.stdout()
        );
        let what = format!("rwtop {action}");
        let children = assert_procs_clean(known, &what, &out.seen);
        assert!(children > 0, "{what}: the exec command was never seen");
        out.assert_clean(known, &what);
        assert_exec_dump_clean(known, live.dir(), action, &what);
    }
    let audit = std::fs::read_to_string(live.dir().join("audit.log")).unwrap();
    assert_eq!(audit.lines().count(), 2, "{audit}");
    known.assert_absent("the audit log", audit.as_bytes());
}

/// What the exec command recorded of itself: no password, no `RWTOP_PASSWORD`.
fn assert_exec_dump_clean(known: &Known, dir: &Path, action: &str, what: &str) {
    let environ = std::fs::read(dir.join(format!("exec-{action}.environ"))).unwrap();
    assert!(
        contains(&environ, b"PATH="),
        "the dump holds the environment"
    );
    known.assert_absent(&format!("{what}: the command's environment"), &environ);
    assert!(
        !contains(&environ, b"RWTOP_PASSWORD="),
        "{what}: the exec command inherited RWTOP_PASSWORD"
    );
    let cmdline = std::fs::read(dir.join(format!("exec-{action}.cmdline"))).unwrap();
    known.assert_absent(&format!("{what}: the command's argv"), &cmdline);
}

// ---------------------------------------------------------------------------------------------
// The TUI, a drain from it, its recording and the replay, on a real terminal.

struct Tmux {
    session: String,
}

impl Tmux {
    fn start(width: u16, height: u16) -> Self {
        let session = format!("rwtop-secrets-{}", std::process::id());
        let ok = Command::new("tmux")
            .args(["new-session", "-d", "-s", &session])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .args(["bash", "--norc", "--noprofile"])
            .env("PS1", "$ ")
            .status()
            .expect("tmux must be installed (scripts/test installs it)")
            .success();
        assert!(ok, "tmux new-session failed");
        Self { session }
    }

    fn send(&self, keys: &[&str]) {
        let ok = Command::new("tmux")
            .args(["send-keys", "-t", &self.session])
            .args(keys)
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux send-keys {keys:?}");
    }

    /// The screen, and with `history` everything that scrolled off it too.
    fn capture(&self, history: bool) -> String {
        let mut cmd = Command::new("tmux");
        cmd.args(["capture-pane", "-p", "-t", &self.session]);
        if history {
            cmd.args(["-S", "-"]);
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    }

    fn wait_for(&self, texts: &[&str]) -> String {
        let started = Instant::now();
        loop {
            let last = self.capture(false);
            if texts.iter().all(|t| last.contains(t)) {
                return last;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "the pane never showed {texts:?}:\n{last}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn shell_pid(&self) -> u32 {
        let out = Command::new("tmux")
            .args(["display-message", "-p", "-t", &self.session, "#{pane_pid}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("the pane's pid")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .status();
    }
}

#[test]
fn live_tui_drain_recording_and_replay_never_show_the_password() {
    let live = Live::start(2);
    let (known, dir) = (&live.known, live.dir());
    let recording = dir.join("tui.jsonl");

    let tmux = Tmux::start(140, 45);
    // The shell reads the password from the file into RWTOP_PASSWORD for rwtop alone: neither
    // the typed line nor the shell's argv holds it.
    tmux.send(&[
        &format!(
            "RWTOP_PASSWORD=\"$(cat {})\" {BIN} --config {} --record {} ; echo EXIT=$?",
            live.password_file.display(),
            live.cfg(),
            recording.display()
        ),
        "Enter",
    ]);
    let mut screens = vec![tmux.wait_for(&["r1", "r2", "primary", " quit"])];
    let rwtop = wait_for("rwtop under the pane's shell", || {
        descendants(tmux.shell_pid()).into_iter().find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with(BIN.as_bytes()))
        })
    });
    let environ = std::fs::read(format!("/proc/{rwtop}/environ")).unwrap();
    assert!(
        contains(&environ, b"RWTOP_PASSWORD="),
        "rwtop got the password from the environment"
    );
    let watcher = Watcher::start(rwtop);

    tmux.send(&["?"]);
    screens.push(tmux.wait_for(&["any key closes"]));
    tmux.send(&["x"]);
    tmux.send(&["r"]);
    tmux.wait_for(&["test reads · r1"]);
    tmux.send(&["t"]);
    screens.push(tmux.wait_for(&["last "]));
    tmux.send(&["d"]);
    screens.push(tmux.wait_for(&["Drain r1", "through exec"]));
    tmux.send(&["y"]);
    wait_for("the drain in the audit log", || {
        std::fs::read_to_string(dir.join("audit.log"))
            .ok()
            .filter(|log| log.contains("exec backend: drain r1 done"))
    });
    screens.push(tmux.capture(false));
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);
    let seen = watcher.finish();
    assert!(
        assert_procs_clean(known, "the TUI", &seen) > 0,
        "the drain command was never seen under rwtop"
    );
    assert_exec_dump_clean(known, dir, "drain", "the TUI's drain");
    screens.push(tmux.capture(true));
    known.assert_absent(
        "the audit log",
        &std::fs::read(dir.join("audit.log")).unwrap(),
    );
    known.assert_absent("the TUI's recording", &std::fs::read(&recording).unwrap());

    tmux.send(&[
        &format!("{BIN} replay {} ; echo EXIT=$?", recording.display()),
        "Enter",
    ]);
    screens.push(tmux.wait_for(&["REPLAY", "r1", "r2"]));
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);
    screens.push(tmux.capture(true));
    for (i, screen) in screens.iter().enumerate() {
        known.assert_absent(&format!("screen {i}"), screen.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// A DSN with an inline password: it works, and every message quoting it shows `***`.

/// The message quotes `redacted` and nothing of the password.
fn assert_redacted(known: &Known, what: &str, out: &Finished, redacted: &str) {
    out.assert_output_clean(known, what);
    assert!(
        out.stderr().contains(redacted),
        "{what}: expected {redacted:?} in stderr:\n{}",
        out.stderr()
    );
}

#[test]
fn live_inline_dsn_passwords_are_redacted_in_warnings_and_errors() {
    let live = Live::start(1);
    let inline = Inline {
        live: &live,
        p: u32::from(port(&live.t, "primary")),
        r1: u32::from(port(&live.t, "r1")),
    };
    inline_passwords_work_and_warn_redacted(&inline);
    bad_dsns_and_broken_configs_are_quoted_redacted(&inline);
    misplaced_dsns_are_echoed_redacted(&inline);
    access_denied_says_so_without_the_password(&inline);
    unreachable_servers_are_named_without_the_password(&inline);
}

/// The sandbox and its ports as u32: a port out of range is one of the mistakes quoted back.
struct Inline<'a> {
    live: &'a Live,
    p: u32,
    r1: u32,
}

impl Inline<'_> {
    fn dsn(&self, port: u32) -> String {
        format!(
            "mysql://rwtop:{}@127.0.0.1:{port}",
            self.live.known.password
        )
    }

    fn shown(port: u32) -> String {
        format!("mysql://rwtop:***@127.0.0.1:{port}")
    }
}

/// On the command line and in a file, an inline password works and is warned about, redacted.
fn inline_passwords_work_and_warn_redacted(i: &Inline<'_>) {
    let (known, p, r1) = (&i.live.known, i.p, i.r1);
    let replica = format!("r1={}", i.dsn(r1));
    let out = run(
        &[
            "--primary",
            &i.dsn(p),
            "--replica",
            &replica,
            "--no-discovery",
            "snapshot",
            "--json",
            "--duration",
            "2s",
        ],
        Via::Neither,
    );
    assert!(out.status.success(), "{}", out.stderr());
    let doc = json(&out, "snapshot with inline passwords");
    assert_eq!(
        node(&doc, &format!("127.0.0.1:{p}"))["state"],
        "up",
        "{doc:#}"
    );
    assert_eq!(node(&doc, "r1")["state"], "up", "{doc:#}");
    out.assert_output_clean(known, "snapshot with inline passwords");
    for (flag, text) in [
        ("--primary", Inline::shown(p)),
        ("--replica", format!("r1={}", Inline::shown(r1))),
    ] {
        assert!(
            out.stderr()
                .contains(&format!("flag {flag}: the DSN \"{text}\" holds a password")),
            "{flag}: {}",
            out.stderr()
        );
    }

    // In a config file: the warning names the file and line, redacted.
    let config = i.live.dir().join("inline.toml");
    write_config(&i.live.t, &config, &format!("rwtop:{}", known.password), "");
    let cfg = config.to_str().unwrap();
    let out = run(
        &["--config", cfg, "snapshot", "--duration", "2s"],
        Via::Neither,
    );
    assert!(out.status.success(), "{}", out.stderr());
    assert!(out.stdout().contains(" up "), "{}", out.stdout());
    assert_redacted(known, "config warning", &out, &format!("{cfg}, line "));
    assert_redacted(
        known,
        "config warning",
        &out,
        &format!("\"{}\" holds a password", Inline::shown(p)),
    );
    let out = run(
        &[
            "--config",
            cfg,
            "probe",
            "--target",
            "r1",
            "--strategy",
            "none",
            "--count",
            "1",
        ],
        Via::Neither,
    );
    assert!(out.status.success(), "{}", out.stderr());
    assert_redacted(known, "probe warning", &out, &Inline::shown(r1));
}

/// A bad DSN, on the command line and in a file, and config files broken on the very line of
/// the DSN (the toml crate's report quotes that line, serde's the value): exit 2, redacted.
fn bad_dsns_and_broken_configs_are_quoted_redacted(i: &Inline<'_>) {
    let known = &i.live.known;
    let out = run(&["--primary", &i.dsn(99999), "snapshot"], Via::Neither);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr());
    assert_redacted(
        known,
        "bad DSN flag",
        &out,
        &format!("flag --primary: bad DSN \"{}\"", Inline::shown(99999)),
    );
    let broken = [
        (
            "bad port",
            format!("[primary]\ndsn = \"{}\"\n", i.dsn(99999)),
        ),
        (
            "trailing junk",
            format!("[primary]\ndsn = \"{}\" junk\n", i.dsn(i.p)),
        ),
        (
            "unterminated",
            format!("[primary]\ndsn = \"{}\n", i.dsn(i.p)),
        ),
        (
            "duplicate key",
            format!(
                "[primary]\ndsn = \"{}\"\ndsn = \"{}\"\n",
                i.dsn(i.p),
                i.dsn(i.r1)
            ),
        ),
        (
            "a string for a table",
            format!("primary = \"{}\"\n", i.dsn(i.p)),
        ),
        (
            "a string for a list",
            format!(
                "replicas = \"{}\"\n[primary]\ndsn = \"mysql://rwtop@h\"\n",
                i.dsn(i.r1)
            ),
        ),
    ];
    for (what, text) in broken {
        let path = i.live.dir().join("broken.toml");
        std::fs::write(&path, &text).unwrap();
        let out = run(
            &["--config", path.to_str().unwrap(), "snapshot"],
            Via::Neither,
        );
        assert_eq!(out.status.code(), Some(2), "{what}: {}", out.stderr());
        assert!(
            out.stderr().contains("broken.toml"),
            "{what}: {}",
            out.stderr()
        );
        assert_redacted(known, what, &out, "mysql://rwtop:***@127.0.0.1:");
    }
}

/// clap quotes a misplaced argument: a DSN typed without --primary.
fn misplaced_dsns_are_echoed_redacted(i: &Inline<'_>) {
    let known = &i.live.known;
    let (p, r1) = (i.dsn(i.p), i.dsn(i.r1));
    let misplaced: [&[&str]; 3] = [
        &[&p],
        &["snapshot", &p],
        &["--primary", &p, "snapshot", "--json", &r1],
    ];
    for args in misplaced {
        let out = run(args, Via::Neither);
        assert_eq!(out.status.code(), Some(2), "{}", out.stderr());
        assert_redacted(known, "a clap error", &out, "'mysql://rwtop:***@127.0.0.1:");
    }
    let out = run(
        &["--primary", &p, "--primary", &r1, "snapshot"],
        Via::Neither,
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr());
    out.assert_output_clean(known, "--primary twice");
}

/// A wrong password (access denied), inline and from `RWTOP_PASSWORD`: the error says so and
/// holds neither the password tried nor the right one.
fn access_denied_says_so_without_the_password(i: &Inline<'_>) {
    let known = &i.live.known;
    let wrong = Known::new("Wr0ng");
    let wrong_dsn = |port: u32| format!("mysql://rwtop:{}@127.0.0.1:{port}", wrong.password);
    let (primary, replica) = (wrong_dsn(i.p), format!("r1={}", wrong_dsn(i.r1)));
    for (what, args, via) in [
        (
            "wrong inline password",
            vec![
                "--primary",
                &primary,
                "--replica",
                &replica,
                "--no-discovery",
            ],
            Via::Neither,
        ),
        (
            "wrong RWTOP_PASSWORD",
            vec!["--config", i.live.cfg()],
            Via::Env(&wrong.password),
        ),
    ] {
        let snapshot = [&args[..], &["snapshot", "--json", "--duration", "2s"]].concat();
        let out = run(&snapshot, via);
        let doc = json(&out, what);
        let detail = doc["nodes"][0]["state_detail"].as_str().unwrap_or_default();
        assert!(detail.contains("Access denied"), "{what}: {doc:#}");
        out.assert_output_clean(known, what);
        out.assert_output_clean(&wrong, what);
        let probe = [
            &args[..],
            &[
                "probe",
                "--target",
                "r1",
                "--strategy",
                "none",
                "--count",
                "1",
            ],
        ]
        .concat();
        let out = run(&probe, via);
        assert_ne!(out.status.code(), Some(0), "{what}: {}", out.stderr());
        assert!(
            out.stderr().contains("Access denied"),
            "{what}: {}",
            out.stderr()
        );
        out.assert_output_clean(known, what);
        out.assert_output_clean(&wrong, what);
    }
}

/// A server that does not answer: the error names the address, not the password.
fn unreachable_servers_are_named_without_the_password(i: &Inline<'_>) {
    let known = &i.live.known;
    // Two ports nothing listens on, held apart while both are picked.
    let (closed, other) = {
        let a = TcpListener::bind("127.0.0.1:0").unwrap();
        let b = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = |l: &TcpListener| u32::from(l.local_addr().unwrap().port());
        (port(&a), port(&b))
    };
    let (dsn, replica) = (i.dsn(closed), format!("r1={}", i.dsn(other)));
    let out = run(
        &["--primary", &dsn, "snapshot", "--json", "--duration", "1s"],
        Via::Neither,
    );
    let doc = json(&out, "unreachable");
    let detail = doc["nodes"][0]["state_detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&format!("127.0.0.1:{closed}: cannot connect")),
        "{doc:#}"
    );
    assert_redacted(known, "unreachable", &out, &Inline::shown(closed));
    let out = run(
        &[
            "--primary",
            &dsn,
            "--replica",
            &replica,
            "--no-discovery",
            "probe",
            "--target",
            "r1",
            "--strategy",
            "none",
            "--count",
            "1",
        ],
        Via::Neither,
    );
    assert_ne!(out.status.code(), Some(0), "{}", out.stderr());
    assert!(out.stderr().contains("cannot connect"), "{}", out.stderr());
    assert_redacted(known, "unreachable probe", &out, &Inline::shown(closed));
    assert_redacted(known, "unreachable probe", &out, &Inline::shown(other));
}

// ---------------------------------------------------------------------------------------------
// `rwtop sandbox up`: every program it runs, seen through wrappers that log their argv and
// environment before handing over to the real one.

/// The directory holding `name` among the places the sandbox itself searches.
fn real_binary(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/libexec", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed"))
}

/// Stops the sandbox in `dir` however the test ends.
struct SandboxDir(PathBuf);

impl Drop for SandboxDir {
    fn drop(&mut self) {
        let _ = rwtop::sandbox::Sandbox::down(&self.0);
    }
}

#[test]
fn live_sandbox_up_passes_no_password_in_argv_nor_rwtop_password_to_its_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let wrappers = tmp.path().join("bin");
    std::fs::create_dir(&wrappers).unwrap();
    let log = tmp.path().join("spawned.log");
    for name in ["mariadbd", "mariadb-install-db", "mariadb", "openssl"] {
        let wrapper = wrappers.join(name);
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n\
                 a=$(printf ' %s' \"$0\" \"$@\" | tr '\\n' ' ')\n\
                 e=$(tr '\\0\\n' '\\n ' < /proc/$$/environ | cut -d= -f1 | tr '\\n' ' ')\n\
                 printf 'ARGV%s ENV %s\\n' \"$a\" \"$e\" >> {log}\n\
                 exec {real} \"$@\"\n",
                log = log.display(),
                real = real_binary(name).display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let known = Known::new("Sekr3t");
    let sandbox = SandboxDir(tmp.path().join("sb"));
    let base = loop {
        // Two consecutive free ports, held while checked.
        let first = free_port();
        if first < 65000 && TcpListener::bind(("127.0.0.1", first + 1)).is_ok() {
            break first;
        }
    };
    let path = format!(
        "{}:{}",
        wrappers.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(BIN);
    cmd.args(["sandbox", "up", "--replicas", "1", "--tls", "--dir"])
        .arg(&sandbox.0)
        .args(["--base-port", &base.to_string()])
        .env("RWTOP_SERVER_DIR", &wrappers)
        .env("PATH", path)
        .env("RWTOP_PASSWORD", &known.password)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("starting rwtop sandbox up");
    let watcher = Watcher::start(child.id());
    let (stdout, out_thread) = collect(child.stdout.take().unwrap());
    let (stderr, err_thread) = collect(child.stderr.take().unwrap());
    let running = Running {
        child,
        stdout,
        stderr,
        readers: vec![out_thread, err_thread],
        watcher,
    };
    let out = running.finish();
    assert!(out.status.success(), "sandbox up: {}", out.stderr());
    out.assert_clean(&known, "sandbox up");

    let spawned = std::fs::read_to_string(&log).unwrap();
    let argv: Vec<&str> = spawned.lines().filter(|l| l.starts_with("ARGV")).collect();
    for name in [
        "mariadbd --version",
        "mariadb-install-db",
        "mariadbd --defaults-file",
        "/mariadb --no-defaults",
        "openssl",
    ] {
        assert!(
            argv.iter().any(|l| l.contains(name)),
            "{name} never ran through its wrapper:\n{argv:#?}"
        );
    }
    // One line a program: `ARGV` its argv, then `ENV` the names of its variables.
    for line in &argv {
        let (argv, env) = line.rsplit_once(" ENV ").expect("ARGV ... ENV ...");
        known.assert_absent("a spawned program's argv", argv.as_bytes());
        assert!(
            !env.split(' ').any(|name| name == "RWTOP_PASSWORD"),
            "this program inherited RWTOP_PASSWORD: {argv}"
        );
    }
    // The sandbox's own passwords, random, in files only the owner reads: never in an argv.
    for file in ["monitor.password", "repl.password"] {
        let secret = std::fs::read_to_string(sandbox.0.join(file)).unwrap();
        let secret = secret.trim();
        assert!(secret.len() >= 16, "{file}: {secret:?}");
        for line in &argv {
            assert!(
                !line.contains(secret),
                "{file}'s password in an argv: {line}"
            );
        }
        assert!(!out.stdout().contains(secret) && !out.stderr().contains(secret));
        for s in &out.seen {
            assert!(
                !contains(&s.cmdline, secret.as_bytes()),
                "{file}'s password in /proc/{}/cmdline",
                s.pid
            );
        }
    }
}
