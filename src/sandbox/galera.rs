//! A Galera cluster in the sandbox: its members' options, the order they start in (the first
//! bootstraps, each other joins by a full state transfer from mariadb-backup), and waiting for
//! each to be `Synced` before the next.
//!
//! Every address is 127.0.0.1, each member with its own group-communication, IST and SST port
//! (`GaleraPorts`). The cluster writes in GTID domain [`super::plan::CLUSTER_DOMAIN`] with
//! `wsrep_gtid_mode`, so an async replica of a member follows the cluster's writes by GTID.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use super::layout::NodeDir;
use super::server::{self, find_in_path};
use super::state::{NodeSpec, SandboxState};
use super::{Sandbox, SandboxError, process};

/// Debian's `galera-4` puts the provider here.
pub const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";
/// `wsrep_cluster_name` of every sandbox cluster.
pub const CLUSTER_NAME: &str = "rwtop-galera";
/// How long a member gets to reach `Synced`: a joiner copies the donor's data with
/// mariadb-backup first (about 10 s here, far more on a busy two-core CI machine).
const SYNC_DEADLINE: Duration = Duration::from_secs(240);

/// What a Galera sandbox needs beyond the server: the provider, and the two programs the
/// mariadb-backup state transfer runs. Each missing one is named with its package.
pub(super) fn check_installed() -> Result<(), SandboxError> {
    if !Path::new(PROVIDER).is_file() {
        return Err(SandboxError::MissingGalera {
            what: "the Galera provider",
            path: PROVIDER.to_owned(),
            package: "galera-4",
        });
    }
    for (tools, package) in [
        (&["mariadb-backup", "mariabackup"][..], "mariadb-backup"),
        (&["socat"][..], "socat"),
    ] {
        if find_in_path(tools).is_none() {
            return Err(SandboxError::MissingGalera {
                what: tools[0],
                path: format!("{} in PATH", tools[0]),
                package,
            });
        }
    }
    Ok(())
}

/// The option-file lines that make `node` a member; empty for any other node.
pub(super) fn cnf_lines(state: &SandboxState, node: &NodeSpec) -> String {
    let Some(ports) = node.galera else {
        return String::new();
    };
    let peers: Vec<String> = state
        .members()
        .filter_map(|m| m.galera.map(|p| format!("127.0.0.1:{}", p.gcomm)))
        .collect();
    let mut cnf = String::new();
    let _ = write!(
        cnf,
        "wsrep_on=ON\nwsrep_provider={PROVIDER}\nwsrep_cluster_name={CLUSTER_NAME}\n\
         wsrep_cluster_address=gcomm://{peers}\nwsrep_node_name={name}\n\
         wsrep_node_address=127.0.0.1\nwsrep_node_incoming_address=127.0.0.1:{port}\n\
         wsrep_provider_options=\"gmcast.listen_addr=tcp://127.0.0.1:{gcomm};\
         ist.recv_addr=127.0.0.1:{ist};gcache.size=64M\"\n\
         wsrep_sst_receive_address=127.0.0.1:{sst}\nwsrep_sst_method=mariabackup\n\
         wsrep_sst_auth={user}:\nwsrep_gtid_mode=ON\nwsrep_gtid_domain_id={domain}\n\
         innodb_autoinc_lock_mode=2\nwsrep_slave_threads=2\n",
        peers = peers.join(","),
        name = node.name,
        port = node.port,
        gcomm = ports.gcomm,
        ist = ports.ist,
        sst = ports.sst,
        // The state transfer logs in over the socket as the OS user, as `admin` does.
        user = server::os_user(),
        domain = super::plan::CLUSTER_DOMAIN,
    );
    cnf
}

/// Lets a stopped member bootstrap a cluster again: Galera marks only the last member to leave
/// `safe_to_bootstrap`, and a sandbox whose servers were all killed has none.
fn allow_bootstrap(dirs: &NodeDir) {
    let path = dirs.data.join("grastate.dat");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let _ = std::fs::write(
            &path,
            text.replace("safe_to_bootstrap: 0", "safe_to_bootstrap: 1"),
        );
    }
}

impl Sandbox {
    /// Starts the stopped members one at a time, each waited for until `Synced`: when none is
    /// running the first bootstraps a new cluster, and every other joins the running ones.
    pub(super) fn start_members(&mut self) -> Result<(), SandboxError> {
        let members: Vec<String> = self.state.members().map(|m| m.name.clone()).collect();
        if members.is_empty() {
            return Ok(());
        }
        check_installed()?;
        let mut any_running = members.iter().any(|m| self.pid(m).is_some());
        for name in &members {
            if self.pid(name).is_some() {
                continue;
            }
            let bootstrap = !any_running;
            if bootstrap {
                allow_bootstrap(&self.node_dir(name));
            }
            let extra: &[&str] = if bootstrap {
                &["--wsrep-new-cluster"]
            } else {
                &[]
            };
            self.spawn(name, extra)?;
            self.wait_synced(name)?;
            any_running = true;
        }
        Ok(())
    }

    /// Waits until `name` answers and reads `Synced`.
    fn wait_synced(&mut self, name: &str) -> Result<(), SandboxError> {
        let dirs = self.node_dir(name);
        let start = Instant::now();
        let mut state = "not answering".to_owned();
        loop {
            if dirs.socket.exists()
                && let Ok(rows) = self.admin(name, "SHOW STATUS LIKE 'wsrep_local_state_comment'")
            {
                state = rows
                    .first()
                    .and_then(|r| r.string(&["Value"]).ok())
                    .unwrap_or_default();
                if state == "Synced" {
                    return Ok(());
                }
            }
            if self.exited(name) || start.elapsed() > SYNC_DEADLINE {
                return Err(SandboxError::NotSynced {
                    node: name.to_owned(),
                    state,
                    log: dirs.error_log.display().to_string(),
                    tail: process::tail(&dirs.error_log, 12),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
