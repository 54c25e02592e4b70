//! What the password-leak tests share: a known password and the search for it, a sandbox whose
//! monitor account has it, the real binary run with it, and a watcher of every process rwtop
//! spawns. Included with `#[path]` by `tests/secrets*.rs`.

#![allow(dead_code, reason = "each test binary uses some of these helpers")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::TestSandbox;
use serde_json::Value;

/// Generous: the machine running the suite may be busy.
pub const DEADLINE: Duration = Duration::from_secs(90);

pub const BIN: &str = env!("CARGO_BIN_EXE_rwtop");

// ---------------------------------------------------------------------------------------------
// The known password and the search for it.

/// A password nobody else would write: a tag, a random core, and characters that URL-encoding,
/// TOML, shells and DSN parsing all treat specially (`@`, `:`, `/`, a space, `%`, `#`, `&`).
pub struct Known {
    pub password: String,
    pub core: String,
}

impl Known {
    pub fn new(tag: &str) -> Self {
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
    pub fn forms(&self) -> [String; 3] {
        [
            self.password.clone(),
            url_encode(&self.password),
            self.core.clone(),
        ]
    }

    pub fn leaked_in(&self, bytes: &[u8]) -> bool {
        self.forms()
            .iter()
            .any(|form| contains(bytes, form.as_bytes()))
    }

    /// Panics if `bytes` holds the password in any form; the message shows where, masked.
    pub fn assert_absent(&self, what: &str, bytes: &[u8]) {
        if self.leaked_in(bytes) {
            let mut text = String::from_utf8_lossy(bytes).into_owned();
            for form in self.forms() {
                text = text.replace(&form, "<<LEAKED PASSWORD>>");
            }
            panic!("the password leaked into {what}:\n{text}");
        }
    }
}

pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

pub fn url_encode(text: &str) -> String {
    text.bytes().fold(String::new(), |mut out, b| {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
        out
    })
}

// ---------------------------------------------------------------------------------------------
// The sandbox with a known password, and config files for it.

/// Gives the sandbox's monitor account `password` (it replicates to every replica) and puts it
/// in the sandbox's password file, so the old random one is gone everywhere.
pub fn set_monitor_password(t: &TestSandbox, password: &str) {
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

pub fn write_private(path: &Path, text: &str) {
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

pub fn port(t: &TestSandbox, node: &str) -> u16 {
    t.sandbox().port(node).expect("node port")
}

/// A config naming every node of the sandbox with `userinfo` (`rwtop` or `rwtop:PASSWORD`),
/// `top` before the tables.
pub fn write_config(t: &TestSandbox, path: &Path, userinfo: &str, top: &str) {
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
pub fn exec_drain(dir: &Path) -> String {
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

pub fn free_port() -> u16 {
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
pub struct Seen {
    pub pid: u32,
    pub cmdline: Vec<u8>,
    pub environ: Option<Vec<u8>>,
}

/// Children by parent, from every /proc/PID/stat (`pid (comm) state ppid ...`).
pub fn children_by_parent() -> BTreeMap<u32, Vec<u32>> {
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

pub fn descendants(root: u32) -> Vec<u32> {
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
pub struct Watcher {
    pub stop: Arc<AtomicBool>,
    pub thread: JoinHandle<Vec<Seen>>,
}

impl Watcher {
    pub fn start(root: u32) -> Self {
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
                    // A child that exec'd while it was being read (each read takes several
                    // syscalls) shows parts of two programs: the next round reads it again.
                    if std::fs::read(format!("/proc/{pid}/cmdline")).ok().as_ref() != Some(&cmdline)
                    {
                        continue;
                    }
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

    pub fn finish(self) -> Vec<Seen> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the /proc watcher")
    }
}

/// Nothing rwtop or its children show in /proc holds the password, and no child inherited
/// `RWTOP_PASSWORD`; returns how many child processes were seen.
pub fn assert_procs_clean(known: &Known, what: &str, seen: &[Seen]) -> usize {
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
pub enum Via<'a> {
    Env(&'a str),
    File(&'a Path),
    /// Not at all (an inline DSN password, or none).
    Neither,
}

pub struct Running {
    pub child: Child,
    pub stdout: Arc<Mutex<Vec<u8>>>,
    pub stderr: Arc<Mutex<Vec<u8>>>,
    pub readers: Vec<JoinHandle<()>>,
    pub watcher: Watcher,
}

pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub seen: Vec<Seen>,
}

impl Finished {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Output, argv and children's environment: for runs given the password the ways that
    /// keep it out of argv.
    pub fn assert_clean(&self, known: &Known, what: &str) {
        self.assert_output_clean(known, what);
        assert_procs_clean(known, what, &self.seen);
    }

    /// Output only: an inline DSN password is in rwtop's argv by the operator's choice (the
    /// warning says so).
    pub fn assert_output_clean(&self, known: &Known, what: &str) {
        known.assert_absent(&format!("{what}: stdout"), &self.stdout);
        known.assert_absent(&format!("{what}: stderr"), &self.stderr);
    }
}

pub fn collect(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
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

pub fn start(args: &[&str], via: Via<'_>) -> Running {
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
    pub fn stderr_so_far(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    pub fn finish(mut self) -> Finished {
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

pub fn run(args: &[&str], via: Via<'_>) -> Finished {
    start(args, via).finish()
}

/// Polls `check` every 100 ms until it gives a value, failing after [`DEADLINE`].
pub fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
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

pub fn http_get(addr: &str, path: &str) -> Option<String> {
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

pub fn json(out: &Finished, what: &str) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{}", out.stdout()))
}

pub fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["name"] == name))
        .unwrap_or_else(|| panic!("no node {name} in {doc:#}"))
}

// ---------------------------------------------------------------------------------------------
// The fixture: a sandbox with the known password, the password in a file of its own, and a
// config naming every node without a password, with an exec drain backend.

pub struct Live {
    pub t: TestSandbox,
    pub known: Known,
    pub tmp: tempfile::TempDir,
    pub password_file: PathBuf,
    pub config: PathBuf,
}

impl Live {
    pub fn start(replicas: usize) -> Self {
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

    pub fn dir(&self) -> &Path {
        self.tmp.path()
    }

    pub fn cfg(&self) -> &str {
        self.config.to_str().unwrap()
    }

    pub fn env(&self) -> Via<'_> {
        Via::Env(&self.known.password)
    }

    pub fn file(&self) -> Via<'_> {
        Via::File(&self.password_file)
    }
}

/// The message quotes `redacted` and nothing of the password.
pub fn assert_redacted(known: &Known, what: &str, out: &Finished, redacted: &str) {
    out.assert_output_clean(known, what);
    assert!(
        out.stderr().contains(redacted),
        "{what}: expected {redacted:?} in stderr:\n{}",
        out.stderr()
    );
}
