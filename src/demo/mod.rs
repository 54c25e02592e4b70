//! `rwtop demo`: a real topology on this machine with a scripted run of real incidents, so a
//! newcomer sees every panel come alive in the first minute without a production database.
//!
//! [`Demo::start`] brings up an ephemeral sandbox (primary, r1 and r2, and c1 under r1; beside them
//! a second primary p2 and an aggregator agg replicating from both, on channels '' and 'p2'; every
//! link through a stallable relay) and the application's account on both primaries; it returns as soon as the servers
//! replicate, because the TUI must appear within seconds. The slow part (filling the table the
//! ALTER incident rebuilds) happens inside the script ([`Demo::run_script`]), in the background.
//! Dropping the [`Demo`] stops the script and the load, then kills the servers and deletes the
//! folder.
//!
//! How the TUI uses it:
//!
//! ```no_run
//! # async fn tui() -> Result<(), rwtop::demo::DemoError> {
//! use rwtop::demo::Demo;
//! let demo = tokio::task::spawn_blocking(|| Demo::start(None)).await.expect("join")?;
//! let engine = rwtop::engine::Engine::start(&demo.engine_spec());
//! let (events_tx, mut events_rx) = tokio::sync::mpsc::channel::<String>(64);
//! let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
//! let script = tokio::spawn(demo.run_script(events_tx, stop_rx));
//! // ... draw; show each `events_rx.recv()` line in the footer; on quit:
//! let _ = stop_tx.send(true);
//! let _ = script.await;
//! engine.shutdown().await;
//! demo.shutdown().await; // or just drop it
//! # Ok(()) }
//! ```

mod channel;
mod director;
pub mod footer;
mod galera;
mod script;
mod stop;
mod timeline;

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

pub use timeline::Timeline;

use crate::engine::EngineSpec;
use crate::mysql::{Endpoint, Secret, Timeouts};
use crate::sandbox::{AGGREGATOR, Ports, SECOND_PRIMARY, Sandbox, SandboxError, SandboxSpec};
use crate::store::Role;

/// The application's account: it writes the load and runs the ALTER, as an application would;
/// rwtop's monitor user has only the grants in the README and may not ALTER.
const APP_USER: &str = "app";
/// The heartbeat writer's id for the demo (one writer per primary, by `GET_LOCK` on this name).
const WRITER_ID: &str = "rwtop-demo";
/// How long dropping a [`Demo`] waits for a stopped script to let go of the sandbox before
/// killing the servers anyway. A stopped script ends in milliseconds; this only bounds a call
/// to the admin client that was in flight.
const RELEASE_DEADLINE: Duration = Duration::from_secs(3);
/// Folder names of demos started without `--dir`: `rwtop-demo-<pid>-<n>` in the temp folder. The
/// pid lets a later demo remove what a killed one left behind.
const DEFAULT_PREFIX: &str = "rwtop-demo-";

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// Includes a missing server binary ([`SandboxError::NoServer`]), whose message says what to
    /// install.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(
        "{dir} is not empty: the demo deletes its folder when it quits, so give it a new or empty folder"
    )]
    DirNotEmpty { dir: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// A running demo: the sandbox and the accounts the script uses. See the module documentation.
pub struct Demo {
    /// Shared with a running script; the last holder's drop tears the sandbox down (it is
    /// ephemeral), and [`Drop`] for `Demo` makes sure that is this handle, promptly.
    sandbox: Arc<Sandbox>,
    app: Endpoint,
    app_p2: Endpoint,
    /// primary, r1, r2, p2 and agg as rwtop's monitor user sees them (c1 is left to discovery).
    monitor: Vec<(String, Endpoint, Role)>,
    /// The demo's own stop, sent on drop, so a script the caller forgot to stop ends too.
    stop: watch::Sender<bool>,
    /// The Galera act (`rwtop demo --galera`): its cluster, and its script instead of the
    /// replication one.
    cluster: Option<crate::store::cluster::ClusterSpec>,
}

impl Demo {
    /// Starts the sandbox and creates the app account and the load's table. Blocking (it starts
    /// servers and waits for replication, a few seconds): call it from `spawn_blocking` or
    /// before the runtime.
    ///
    /// `dir` must be new or empty, because the demo deletes it on quit; without one, a fresh
    /// folder in the temp folder is used (and folders of earlier demos that were killed are
    /// cleaned up first).
    pub fn start(dir: Option<PathBuf>) -> Result<Self, DemoError> {
        let dir = folder(dir)?;
        let spec = SandboxSpec {
            dir,
            replicas: 2,
            semisync: false,
            cascade: true,
            ports: Ports::Free,
            ephemeral: true,
            relay: true,
            tls: false,
            multi_source: true,
            // Four workers per replica, so the ALTER and the burst show them busy.
            parallel: 4,
            server_options: std::collections::BTreeMap::new(),
            galera: 0,
        };
        let sandbox = up(&spec)?;
        let password = random_hex()?;
        let account = format!(
            "CREATE USER '{APP_USER}'@'127.0.0.1' IDENTIFIED BY '{password}'; \
             GRANT ALL ON rwtop.* TO '{APP_USER}'@'127.0.0.1'"
        );
        let load_table = |table: &str| {
            format!(
                "CREATE TABLE IF NOT EXISTS {table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, \
                 at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), v INT)"
            )
        };
        sandbox.admin(
            "primary",
            &format!("{account}; {}", load_table(script::LOAD_TABLE)),
        )?;
        // On p2 the account is created with the binary log off: agg already has it from the
        // primary, and the same CREATE USER arriving on channel 'p2' would stop that channel
        // (error 1396). p2's load table is its own, logged, so agg creates it from p2.
        sandbox.admin(
            SECOND_PRIMARY,
            &format!(
                "SET sql_log_bin=0; {account}; SET sql_log_bin=1; {}",
                load_table(script::LOAD_TABLE_P2)
            ),
        )?;
        let mut monitor = Vec::new();
        for (name, role) in [
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
            (SECOND_PRIMARY, Role::Primary),
            (AGGREGATOR, Role::Replica),
        ] {
            monitor.push((name.to_owned(), sandbox.endpoint(name)?, role));
        }
        let as_app = |node: &str| -> Result<Endpoint, SandboxError> {
            Ok(Endpoint {
                user: APP_USER.to_owned(),
                password: Some(Secret::new(password.clone())),
                ..sandbox.endpoint(node)?
            })
        };
        let (app, app_p2) = (as_app("primary")?, as_app(SECOND_PRIMARY)?);
        let (stop, _) = watch::channel(false);
        Ok(Self {
            sandbox: Arc::new(sandbox),
            app,
            app_p2,
            monitor,
            stop,
            cluster: None,
        })
    }

    /// The Galera act: three real members (`n1`–`n3`, galera-4) and `r1`, an async replica of
    /// `n1`; the app account and the load's table on the cluster. Blocking, as [`Self::start`];
    /// a missing `galera-4` is named with what to install.
    pub fn start_galera(dir: Option<PathBuf>) -> Result<Self, DemoError> {
        let dir = folder(dir)?;
        let mut spec = SandboxSpec::new(dir);
        spec.galera = galera::MEMBERS.len();
        spec.replicas = 1;
        spec.ports = Ports::Free;
        spec.ephemeral = true;
        let sandbox = up(&spec)?;
        let password = random_hex()?;
        sandbox.admin(
            "n1",
            &format!(
                "CREATE USER '{APP_USER}'@'127.0.0.1' IDENTIFIED BY '{password}'; \
                 GRANT ALL ON rwtop.* TO '{APP_USER}'@'127.0.0.1'; \
                 CREATE TABLE IF NOT EXISTS {} (id BIGINT AUTO_INCREMENT PRIMARY KEY, \
                 at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), v INT)",
                script::LOAD_TABLE
            ),
        )?;
        // n1 carries the heartbeat; the other members are members, as rwtop settles a
        // cluster found from n1 (`engine/clusters.rs`).
        let mut monitor = vec![("n1".to_owned(), sandbox.endpoint("n1")?, Role::Primary)];
        for member in &galera::MEMBERS[1..] {
            monitor.push((
                (*member).to_owned(),
                sandbox.endpoint(member)?,
                Role::Member,
            ));
        }
        monitor.push(("r1".to_owned(), sandbox.endpoint("r1")?, Role::Replica));
        let app = Endpoint {
            user: APP_USER.to_owned(),
            password: Some(Secret::new(password)),
            ..sandbox.endpoint("n1")?
        };
        let (stop, _) = watch::channel(false);
        Ok(Self {
            sandbox: Arc::new(sandbox),
            app_p2: app.clone(),
            app,
            monitor,
            stop,
            cluster: Some(crate::store::cluster::ClusterSpec {
                name: crate::sandbox::CLUSTER_NAME.to_owned(),
                members: galera::MEMBERS.iter().map(|m| (*m).to_owned()).collect(),
                writer: Some("n1".to_owned()),
            }),
        })
    }

    /// What the TUI's engine watches: primary, r1, r2 and agg configured, and p2 as a second
    /// primary (a root with its own heartbeat writer and row, which agg's channel 'p2' reads its
    /// lag from); discovery on so c1 shows up as discovered under r1 (the cascade is part of what
    /// the demo shows); shipped defaults otherwise (1 s polls, 250 ms heartbeat, default
    /// thresholds).
    #[must_use]
    pub fn engine_spec(&self) -> EngineSpec {
        let defaults = crate::config::HeartbeatConfig::default();
        EngineSpec {
            nodes: self.monitor.clone(),
            timeouts: Timeouts::default(),
            interval: Duration::from_secs(1),
            heartbeat_interval: defaults.interval,
            read_interval: defaults.read_interval,
            read_budget: Some(crate::poll::READ_BUDGET),
            writer_id: WRITER_ID.to_owned(),
            discovery: true,
            read_only: false,
            pt_table: defaults.pt_table,
            by_position: defaults.by_position,
            thresholds: crate::config::Thresholds::default(),
            drain: None,
            found_roots: crate::engine::upward::FoundRoots::Write,
            found: Vec::new(),
            clusters: self.cluster.iter().cloned().collect(),
            test_reads: crate::engine::TestReads::Task,
            disks_every: None,
        }
    }

    /// The real script ([`Timeline::default`]): a write load and the incidents, round after
    /// round, one narration line per step on `events` (for the footer; a full channel loses a
    /// line rather than delaying the script). Runs until `stop` reads `true` or its sender is
    /// dropped, or the `Demo` drops; it then ends within a moment. Never panics: SQL errors are
    /// narrated. The future is `'static`: `tokio::spawn` it.
    pub fn run_script(
        &self,
        events: mpsc::Sender<String>,
        stop: watch::Receiver<bool>,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.run_script_with(Timeline::default(), events, stop)
    }

    /// [`Self::run_script`] with another timeline (tests use [`Timeline::fast`]).
    pub fn run_script_with(
        &self,
        timeline: Timeline,
        events: mpsc::Sender<String>,
        stop: watch::Receiver<bool>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let director = director::Director {
            sandbox: Arc::clone(&self.sandbox),
            app: self.app.clone(),
            app_p2: self.app_p2.clone(),
            timeline,
            events,
        };
        let stop = stop::Stop::new(stop, self.stop.subscribe());
        let galera = self.cluster.is_some();
        async move {
            if galera {
                galera::run(director, stop).await;
            } else {
                script::run(director, stop).await;
            }
        }
    }

    /// [`Self::run_script`], spawned on the current runtime.
    #[must_use]
    pub fn spawn_script(
        &self,
        events: mpsc::Sender<String>,
        stop: watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(self.run_script(events, stop))
    }

    /// Stops the script and tears the sandbox down without blocking the runtime while the script
    /// lets go of it. Dropping the `Demo` does the same, waiting on the calling thread.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let started = Instant::now();
        while Arc::strong_count(&self.sandbox) > 1 && started.elapsed() < RELEASE_DEADLINE {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(self);
    }

    /// The sandbox, for a look around (admin SQL, endpoints, pids).
    #[must_use]
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// The sandbox folder, deleted when the demo ends.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.sandbox.dir()
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        // The script and the load first, so they end quietly instead of failing against killed
        // servers; they release the sandbox as they end.
        let _ = self.stop.send(true);
        let started = Instant::now();
        while Arc::strong_count(&self.sandbox) > 1 && started.elapsed() < RELEASE_DEADLINE {
            std::thread::sleep(Duration::from_millis(10));
        }
        if Arc::strong_count(&self.sandbox) > 1 {
            // Something still holds the sandbox (an admin call in flight, or a script on a
            // runtime that is not running): kill the servers and delete the folder now, as its
            // own drop would; the relays go when the last holder lets go.
            kill_now(&self.sandbox);
        }
        // Otherwise this handle is the last: dropping the field kills the servers, stops the
        // relays and removes the folder (the sandbox is ephemeral).
    }
}

/// The demo's folder: `dir` when it is new or empty, else a fresh one in the temp folder (after
/// stopping what demos killed outright left behind).
fn folder(dir: Option<PathBuf>) -> Result<PathBuf, DemoError> {
    if let Some(dir) = dir {
        ensure_empty(&dir)?;
        Ok(dir)
    } else {
        reap_orphans();
        Ok(default_dir())
    }
}

/// Starts the sandbox. A port chosen free can be taken by another program before its server
/// binds it; `up` leaves nothing behind on failure, so once more on new ports is clean.
fn up(spec: &SandboxSpec) -> Result<Sandbox, SandboxError> {
    match Sandbox::up(spec) {
        Err(SandboxError::PortTaken { .. } | SandboxError::StartFailed { .. }) => Sandbox::up(spec),
        other => other,
    }
}

fn kill_now(sandbox: &Sandbox) {
    for node in &sandbox.state().nodes {
        if let Some(pid) = sandbox.pid(&node.name) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    let _ = fs::remove_dir_all(sandbox.dir());
}

/// The demo deletes its folder on quit: refuse one that holds anything, so `--dir ~` cannot
/// delete a home folder.
fn ensure_empty(dir: &Path) -> Result<(), DemoError> {
    match fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(DemoError::DirNotEmpty {
            dir: dir.display().to_string(),
        }),
        Ok(false) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(DemoError::Io {
            what: format!("reading {}", dir.display()),
            source: e,
        }),
    }
}

fn default_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    std::env::temp_dir().join(format!("{DEFAULT_PREFIX}{}-{n}", std::process::id()))
}

/// A demo killed outright (no `Drop`) leaves its servers running; the next demo stops those
/// whose owning process is gone. Best effort: another user's leftovers are not ours to remove.
fn reap_orphans() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(DEFAULT_PREFIX) else {
            continue;
        };
        let owner = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let alive = owner.is_some_and(|pid| {
            pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
        });
        if owner.is_some() && !alive {
            let _ = Sandbox::down(&entry.path());
        }
    }
}

/// The app account's password: random, never shown, only in this process.
fn random_hex() -> Result<String, DemoError> {
    let mut bytes = [0u8; 12];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| DemoError::Io {
            what: "reading /dev/urandom".to_owned(),
            source: e,
        })?;
    Ok(bytes.iter().fold(String::new(), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_server_says_what_to_install() {
        let e = DemoError::from(SandboxError::NoServer {
            searched: vec!["/usr/sbin".to_owned()],
        });
        assert!(
            e.to_string()
                .contains("apt-get install mariadb-server mariadb-client"),
            "{e}"
        );
    }

    #[test]
    fn a_folder_with_anything_in_it_is_refused() {
        let base = std::env::temp_dir().join(format!("rwtop-demo-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        assert!(ensure_empty(&base).is_ok(), "a missing folder is fine");
        fs::create_dir_all(&base).ok();
        assert!(ensure_empty(&base).is_ok(), "an empty folder is fine");
        fs::write(base.join("keep"), b"x").ok();
        assert!(matches!(
            ensure_empty(&base),
            Err(DemoError::DirNotEmpty { .. })
        ));
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn passwords_are_random_hex() {
        let (a, b) = (random_hex().ok(), random_hex().ok());
        assert_ne!(a, b);
        assert!(a.is_some_and(|p| p.len() == 24 && p.chars().all(|c| c.is_ascii_hexdigit())));
    }
}
