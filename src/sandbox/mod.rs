//! Real replication topologies on one machine: a primary and N GTID replicas, each a real
//! `mariadbd` (or `mysqld`) on 127.0.0.1 with its own folder, port and `server_id`.
//!
//! The same code is the CLI (`rwtop sandbox up|status|down`) and the test harness: tests start an
//! ephemeral sandbox on free ports in a temp folder, and dropping the handle kills and removes it.
//!
//! With [`SandboxSpec::relay`], each replica reaches its source through an in-process TCP
//! [`Relay`] that a test can stall, reproducing a network that goes silent without closing.
//!
//! With [`SandboxSpec::multi_source`], a second primary (`p2`, GTID domain 1) and an aggregator
//! (`agg`) that replicates from both, on the default channel from `primary` and on channel `p2`.

mod admin;
mod catch_up;
mod error;
mod galera;
pub mod layout;
mod links;
mod mycnf;
mod plan;
mod ports;
mod process;
pub mod relay;
mod report;
mod server;
mod state;
pub mod tls;
pub mod toml_out;
mod wiring;

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

pub use admin::mask_passwords;
pub use error::SandboxError;
pub use galera::{CLUSTER_NAME, PROVIDER as GALERA_PROVIDER};
pub use plan::CLUSTER_DOMAIN;
pub use plan::{AGGREGATOR, SECOND_CHANNEL, SECOND_PRIMARY};
pub use ports::Ports;
pub use relay::Relay;
pub use report::{ChannelReport, NodeReport};
pub use server::Binaries;
pub use state::{GaleraPorts, Link, NamedChannel, NodeSpec, SandboxState};

use crate::mysql::{Endpoint, Family, NodeState, RawRow, Secret};
use admin::Admin;
use layout::{MAX_SOCKET_PATH, NodeDir, password_file, state_file};

/// How long servers get to start, and replicas to catch up, before `up` gives up. Generous: CI
/// runs on a busy two-core machine.
const START_DEADLINE: Duration = Duration::from_secs(60);
/// How long a node's port may stay taken before its server is started again (see `spawn`).
const PORT_RELEASE_WAIT: Duration = Duration::from_secs(15);

pub const DEFAULT_BASE_PORT: u16 = 13306;
pub const MONITOR_USER: &str = "rwtop";
const REPL_USER: &str = "repl";

#[derive(Debug, Clone)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent switches of a plain spec the caller fills in, not a state machine"
)]
pub struct SandboxSpec {
    pub dir: PathBuf,
    pub replicas: usize,
    pub semisync: bool,
    /// Add one cascaded replica (`c1`) replicating from `r1`.
    pub cascade: bool,
    pub ports: Ports,
    /// Kill the servers and delete the folder when the handle drops (tests).
    pub ephemeral: bool,
    /// Route each replica link through a [`Relay`] owned by the returned handle, so a test (or
    /// the demo) can stall one link while the primary keeps writing: the way to reproduce
    /// `Seconds_Behind_Master` reading 0 on a replica that is falling behind.
    ///
    /// The relays live in the process holding the [`Sandbox`]: once it drops (or that process
    /// exits) the replicas lose their sources until a later `up` re-points them. So this is for
    /// tests and `rwtop demo`, which hold the handle for their whole run; `rwtop sandbox up`
    /// keeps it off.
    pub relay: bool,
    /// Servers offer TLS with a throwaway CA (`tls/ca.pem`) and a certificate for 127.0.0.1.
    pub tls: bool,
    /// Add a second primary ([`SECOND_PRIMARY`], GTID domain 1) and an aggregator
    /// ([`AGGREGATOR`]) replicating from `primary` on the default channel and from the second
    /// primary on channel [`SECOND_CHANNEL`].
    pub multi_source: bool,
    /// Parallel applier workers on every replica (`slave_parallel_threads`,
    /// `replica_parallel_workers`); 0 keeps one applier thread.
    pub parallel: u16,
    /// Server options by node name, one `name=value` line each, written after the sandbox's
    /// own in that node's option file (`character_set_server=utf8mb4`): nodes set up
    /// differently. Only a new sandbox takes them.
    pub server_options: std::collections::BTreeMap<String, Vec<String>>,
    /// A Galera cluster of this many members (`n1`…) instead of the primary, its replicas
    /// replicating from `n1`; 0 for none.
    pub galera: usize,
}

impl SandboxSpec {
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            replicas: 2,
            semisync: false,
            tls: false,
            cascade: false,
            ports: Ports::Base(DEFAULT_BASE_PORT),
            ephemeral: false,
            relay: false,
            multi_source: false,
            parallel: 0,
            server_options: std::collections::BTreeMap::new(),
            galera: 0,
        }
    }
}

/// A running sandbox.
pub struct Sandbox {
    dir: PathBuf,
    state: SandboxState,
    binaries: Binaries,
    /// Servers this handle started, by node; only their exits matter while waiting for a start.
    children: Vec<(String, Child)>,
    ephemeral: bool,
    /// One relay per replication link, by replica and channel, when the spec asked for them.
    /// Dropped with the handle, after the servers are killed (ephemeral) or left running.
    relays: Vec<((String, String), Relay)>,
}

impl Sandbox {
    /// Starts the sandbox in `spec.dir`, creating it if needed. Running it again on a sandbox that
    /// is up is harmless; servers that are down are started again with their data.
    pub fn up(spec: &SandboxSpec) -> Result<Self, SandboxError> {
        let binaries = Binaries::discover()?;
        if let Some(state) = SandboxState::load(&spec.dir)? {
            Self::restart(spec, binaries, state)
        } else {
            let created = Self::create(spec, binaries);
            if created.is_err() {
                // Leave nothing half-built behind: no process, no port, no folder.
                let _ = Self::down(&spec.dir);
            }
            created
        }
    }

    /// Opens a sandbox that `up` started earlier (another process), without starting anything.
    pub fn open(dir: &Path) -> Result<Self, SandboxError> {
        let binaries = Binaries::discover()?;
        let state = SandboxState::load(dir)?.ok_or_else(|| SandboxError::NoSandbox {
            dir: dir.display().to_string(),
        })?;
        Ok(Self {
            dir: dir.to_owned(),
            state,
            binaries,
            children: Vec::new(),
            ephemeral: false,
            relays: Vec::new(),
        })
    }

    fn create(spec: &SandboxSpec, binaries: Binaries) -> Result<Self, SandboxError> {
        let nodes = plan::nodes(spec)?;
        let state = SandboxState {
            format: SandboxState::FORMAT,
            family: format!("{:?}", binaries.flavor.family).to_lowercase(),
            server_version: binaries.flavor.version_string.clone(),
            semisync: spec.semisync,
            tls: spec.tls,
            parallel: u32::from(spec.parallel),
            monitor_user: MONITOR_USER.to_owned(),
            repl_user: REPL_USER.to_owned(),
            nodes,
        };
        fs::create_dir_all(&spec.dir)
            .map_err(|e| SandboxError::io(format!("creating {}", spec.dir.display()), e))?;
        let dir = fs::canonicalize(&spec.dir)
            .map_err(|e| SandboxError::io(format!("resolving {}", spec.dir.display()), e))?;
        state.save(&dir)?;
        let mut sandbox = Self {
            dir,
            state,
            binaries,
            children: Vec::new(),
            ephemeral: spec.ephemeral,
            relays: Vec::new(),
        };
        wiring::write_secrets(&sandbox.dir)?;
        if sandbox.state.tls {
            tls::make(&sandbox.dir)?;
        }
        sandbox.init_nodes()?;
        sandbox.start_stopped()?;
        // After the servers hold their ports: a relay binds a free port, which with
        // `Ports::Free` could otherwise be one just chosen for a server.
        if spec.relay {
            sandbox.start_relays()?;
        }
        wiring::wire(&sandbox)?;
        sandbox.wait_replicating(START_DEADLINE)?;
        toml_out::write(&sandbox)?;
        Ok(sandbox)
    }

    fn restart(
        spec: &SandboxSpec,
        binaries: Binaries,
        state: SandboxState,
    ) -> Result<Self, SandboxError> {
        plan::check_same_shape(spec, &state)?;
        if let Ports::Base(base) = spec.ports {
            let have = state.primary().map_or(0, |p| p.port);
            if base != have && base != DEFAULT_BASE_PORT {
                return Err(SandboxError::Exists {
                    dir: spec.dir.display().to_string(),
                    problem: format!("it uses ports from {have}; run `rwtop sandbox down` first"),
                });
            }
        }
        let mut sandbox = Self {
            dir: fs::canonicalize(&spec.dir).unwrap_or_else(|_| spec.dir.clone()),
            state,
            binaries,
            children: Vec::new(),
            ephemeral: spec.ephemeral,
            relays: Vec::new(),
        };
        sandbox.start_stopped()?;
        if spec.relay {
            sandbox.start_relays()?;
        }
        sandbox.repoint_links()?;
        sandbox.wait_replicating(START_DEADLINE)?;
        toml_out::write(&sandbox)?;
        Ok(sandbox)
    }

    /// Initializes every node's data folder, in parallel.
    fn init_nodes(&self) -> Result<(), SandboxError> {
        for node in &self.state.nodes {
            let dirs = self.node_dir(&node.name);
            if dirs.socket.as_os_str().len() > MAX_SOCKET_PATH {
                return Err(SandboxError::SocketPathTooLong {
                    path: dirs.socket.display().to_string(),
                });
            }
            fs::create_dir_all(&dirs.tmp)
                .map_err(|e| SandboxError::io(format!("creating {}", dirs.tmp.display()), e))?;
            let cnf = mycnf::render(&mycnf::CnfParams {
                node: &dirs,
                name: &node.name,
                port: node.port,
                server_id: node.server_id,
                is_replica: node.source.is_some(),
                gtid_domain_id: node.gtid_domain_id,
                semisync: self.state.semisync,
                parallel: self.state.parallel,
                as_root: server::running_as_root(),
                flavor: &self.binaries.flavor,
                options: &node.options,
            });
            let cnf = if self.state.tls {
                cnf + &tls::cnf_lines(&self.dir)
            } else {
                cnf
            } + &galera::cnf_lines(&self.state, node);
            fs::write(&dirs.cnf, cnf)
                .map_err(|e| SandboxError::io(format!("writing {}", dirs.cnf.display()), e))?;
        }
        std::thread::scope(|scope| {
            let jobs: Vec<_> = self
                .state
                .nodes
                .iter()
                .map(|node| {
                    let dirs = self.node_dir(&node.name);
                    let name = node.name.clone();
                    scope.spawn(move || wiring::init_datadir(&self.binaries, &name, &dirs))
                })
                .collect();
            jobs.into_iter().try_for_each(|job| {
                job.join().unwrap_or_else(|_| {
                    Err(SandboxError::InitFailed {
                        node: "?".to_owned(),
                        detail: "the init thread panicked".to_owned(),
                    })
                })
            })
        })
    }

    /// Starts every node whose server is not running (killed, or stopped by hand), then waits
    /// until each accepts connections.
    pub fn start_stopped(&mut self) -> Result<(), SandboxError> {
        // A Galera cluster's members first, one at a time (their replicas need them).
        self.start_members()?;
        let mut started = Vec::new();
        let names: Vec<String> = self.state.nodes.iter().map(|n| n.name.clone()).collect();
        for name in names {
            if self.pid(&name).is_none() {
                self.spawn(&name, &[])?;
                started.push(name);
            }
        }
        for name in started {
            self.wait_accepting(&name)?;
        }
        Ok(())
    }

    /// Starts one node's server (its port checked free first), with `extra` options after its
    /// option file.
    fn spawn(&mut self, name: &str, extra: &[&str]) -> Result<(), SandboxError> {
        let dirs = self.node_dir(name);
        let port = self.port(name).unwrap_or_default();
        // A server killed a moment ago may hold its port a while yet: its process reads as
        // exited once its main thread has, while its other threads (a Galera member's, InnoDB's
        // I/O) still hold the listening socket.
        let freed_by = Instant::now() + PORT_RELEASE_WAIT;
        while TcpListener::bind(("127.0.0.1", port)).is_err() {
            if Instant::now() > freed_by {
                return Err(SandboxError::PortTaken {
                    port,
                    node: name.to_owned(),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = fs::remove_file(&dirs.pid_file);
        let child = process::spawn_server(&self.binaries.server, &dirs.cnf, &dirs.error_log, extra)
            .map_err(|e| SandboxError::io(format!("starting {name}"), e))?;
        // Reap the previous server of this node (killed, or stopped by hand).
        self.children.retain_mut(|(node, old)| {
            let same = node == name;
            if same {
                let _ = old.wait();
            }
            !same
        });
        self.children.push((name.to_owned(), child));
        Ok(())
    }

    /// Whether the server this handle started for `name` has exited.
    fn exited(&mut self, name: &str) -> bool {
        self.children
            .iter_mut()
            .filter(|(node, _)| node == name)
            .any(|(_, c)| matches!(c.try_wait(), Ok(Some(_))))
    }

    fn wait_accepting(&mut self, name: &str) -> Result<(), SandboxError> {
        let dirs = self.node_dir(name);
        let start = Instant::now();
        loop {
            if dirs.socket.exists() && self.admin(name, "SELECT 1").is_ok() {
                return Ok(());
            }
            if self.exited(name) || start.elapsed() > START_DEADLINE {
                return Err(SandboxError::StartFailed {
                    node: name.to_owned(),
                    log: dirs.error_log.display().to_string(),
                    tail: process::tail(&dirs.error_log, 8),
                });
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Stops every server of the sandbox in `dir` (replicas first) and deletes the folder.
    /// Returns the names of the nodes that were running; a missing sandbox is not an error.
    pub fn down(dir: &Path) -> Result<Vec<String>, SandboxError> {
        let Some(state) = SandboxState::load(dir)? else {
            if dir.exists() && fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none()) {
                let _ = fs::remove_dir(dir);
            }
            return Ok(Vec::new());
        };
        let mut stopped = Vec::new();
        for node in state.nodes.iter().rev() {
            let dirs = NodeDir::new(dir, &node.name);
            if let Some(pid) = process::live_pid(&dirs.pid_file, &dirs.cnf) {
                process::stop(pid, Duration::from_secs(30));
                stopped.push(node.name.clone());
            }
        }
        fs::remove_dir_all(dir)
            .map_err(|e| SandboxError::io(format!("removing {}", dir.display()), e))?;
        Ok(stopped)
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    #[must_use]
    pub fn state(&self) -> &SandboxState {
        &self.state
    }

    #[must_use]
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    #[must_use]
    pub fn node_dir(&self, name: &str) -> NodeDir {
        NodeDir::new(&self.dir, name)
    }

    #[must_use]
    pub fn port(&self, name: &str) -> Option<u16> {
        self.state
            .nodes
            .iter()
            .find(|n| n.name == name)
            .map(|n| n.port)
    }

    /// The live pid of a node's server.
    #[must_use]
    pub fn pid(&self, name: &str) -> Option<i32> {
        let dirs = self.node_dir(name);
        process::live_pid(&dirs.pid_file, &dirs.cnf)
    }

    /// How rwtop connects to a node: over TCP as the monitor user.
    pub fn endpoint(&self, name: &str) -> Result<Endpoint, SandboxError> {
        let port = self.port(name).ok_or_else(|| SandboxError::UnknownNode {
            node: name.to_owned(),
        })?;
        let path = password_file(&self.dir);
        let password = fs::read_to_string(&path)
            .map_err(|e| SandboxError::io(format!("reading {}", path.display()), e))?;
        Ok(Endpoint {
            host: "127.0.0.1".to_owned(),
            port,
            user: self.state.monitor_user.clone(),
            password: Some(Secret::new(password.trim())),
            tls: crate::mysql::Tls::default(),
        })
    }

    /// Runs administrative SQL on a node (as the OS user over its socket).
    pub fn admin(&self, name: &str, sql: &str) -> Result<Vec<RawRow>, SandboxError> {
        let user = match self.binaries.flavor.family {
            Family::Mariadb => server::os_user(),
            Family::Mysql => "root".to_owned(),
        };
        let admin = Admin {
            client: &self.binaries.client,
            user,
        };
        admin.run(name, &self.node_dir(name).socket, sql)
    }

    pub(super) fn node_state(&self, name: &str) -> Result<NodeState, SandboxError> {
        let sql = self.binaries.flavor.state_sql();
        let rows = self.admin(name, sql)?;
        let parsed = rows
            .first()
            .map(|row| NodeState::from_row(row, self.binaries.flavor.family));
        match parsed {
            Some(Ok(state)) => Ok(state),
            other => Err(SandboxError::Admin {
                node: name.to_owned(),
                sql: sql.to_owned(),
                problem: other.map_or_else(|| "no row".to_owned(), |e| format!("{e:?}")),
            }),
        }
    }

    /// Whether the sandbox folder still has its state file (tests check `down` removed it).
    #[must_use]
    pub fn exists(dir: &Path) -> bool {
        state_file(dir).exists()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.ephemeral {
            return;
        }
        // Throwaway data: kill at once rather than wait for a clean shutdown.
        for node in &self.state.nodes {
            if let Some(pid) = self.pid(&node.name) {
                process::signal(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}
