//! Turning started servers into a topology: data folders, accounts, replication links.

use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::layout::{NodeDir, password_file};
use super::process::run_with_deadline;
use super::server::{self, Binaries};
use super::{Link, Sandbox, SandboxError};
use crate::mysql::{Flavor, SourceLink, ThreadControl, grants::monitor_grants};

fn repl_password_file(dir: &Path) -> PathBuf {
    dir.join("repl.password")
}

/// Random passwords for the monitor and replication accounts, in files only the owner reads:
/// no password is ever passed in argv or printed.
pub fn write_secrets(dir: &Path) -> Result<(), SandboxError> {
    for path in [password_file(dir), repl_password_file(dir)] {
        let mut bytes = [0u8; 12];
        fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|e| SandboxError::io("reading /dev/urandom".to_owned(), e))?;
        let secret = bytes.iter().fold(String::new(), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        });
        fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(secret.as_bytes()))
            .map_err(|e| SandboxError::io(format!("writing {}", path.display()), e))?;
    }
    Ok(())
}

fn read_secret(path: &Path) -> Result<String, SandboxError> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| SandboxError::io(format!("reading {}", path.display()), e))
}

/// Creates the system tables of one node. The server authenticates the OS user over the socket,
/// so there is no admin password.
pub fn init_datadir(bin: &Binaries, node: &str, dirs: &NodeDir) -> Result<(), SandboxError> {
    let user = server::os_user();
    let cmd = if let Some(install_db) = &bin.install_db {
        let mut cmd = Command::new(install_db);
        cmd.arg(format!("--defaults-file={}", dirs.cnf.display()))
            .args(["--auth-root-authentication-method=socket", "--skip-test-db"])
            .arg(format!("--auth-root-socket-user={user}"));
        // `--user` makes the script chown its PAM helper, which only root may do; a normal
        // user's files are theirs anyway.
        if server::running_as_root() {
            cmd.arg("--user=root");
        }
        cmd
    } else {
        let mut cmd = Command::new(&bin.server);
        cmd.arg(format!("--defaults-file={}", dirs.cnf.display()))
            .arg("--initialize-insecure");
        cmd
    };
    let log = dirs.root.join("init.log");
    let finished =
        run_with_deadline(cmd, Duration::from_secs(120)).map_err(|e| SandboxError::InitFailed {
            node: node.to_owned(),
            detail: e.to_string(),
        })?;
    let _ = fs::write(&log, format!("{}{}", finished.stdout, finished.stderr));
    // A failed init can leave a server without system tables; never start on one.
    if !finished.status.success() || !dirs.data.join("mysql").is_dir() {
        // The bootstrap server writes its reasons to the error log, the script only a banner.
        let script: Vec<&str> = finished
            .stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(6)
            .collect();
        return Err(SandboxError::InitFailed {
            node: node.to_owned(),
            detail: format!(
                "{}\nlast lines of {}:\n{}",
                script.join("\n"),
                dirs.error_log.display(),
                super::process::tail(&dirs.error_log, 8)
            ),
        });
    }
    Ok(())
}

/// Accounts and rwtop's schema on the primary (they replicate to every replica), the same
/// accounts on any second primary, then each link set up with GTID auto-positioning and started.
///
/// A second primary creates its accounts with the binary log off: the aggregator already has
/// them from the first primary, and `CREATE USER` arriving again through the second channel
/// would stop that channel's SQL thread (error 1396). Those accounts are the replication user,
/// which the aggregator's second channel logs in as, and the monitor user, with which rwtop reads
/// the second primary and writes its heartbeat row there. Its `CREATE DATABASE IF NOT EXISTS
/// rwtop` is logged, so the aggregator applies something in the second primary's domain before
/// `up` calls the channel caught up.
pub fn wire(sandbox: &Sandbox) -> Result<(), SandboxError> {
    let state = sandbox.state();
    let flavor = &sandbox.binaries().flavor;
    let monitor_password = read_secret(&password_file(sandbox.dir()))?;
    let repl_password = read_secret(&repl_password_file(sandbox.dir()))?;
    let monitor = format!("'{}'@'127.0.0.1'", state.monitor_user);
    let repl = format!("'{}'@'127.0.0.1'", state.repl_user);
    let mut accounts = vec![
        format!("CREATE USER {repl} IDENTIFIED BY '{repl_password}'"),
        format!("GRANT REPLICATION SLAVE ON *.* TO {repl}"),
        format!("CREATE USER {monitor} IDENTIFIED BY '{monitor_password}'"),
    ];
    accounts.extend(monitor_grants(flavor.family, &monitor));
    let schema = "CREATE DATABASE IF NOT EXISTS rwtop".to_owned();
    for (i, root) in state.roots().enumerate() {
        let sql = if i == 0 {
            [vec![schema.clone()], accounts.clone()].concat()
        } else {
            [
                vec!["SET sql_log_bin=0".to_owned()],
                accounts.clone(),
                vec!["SET sql_log_bin=1".to_owned(), schema.clone()],
            ]
            .concat()
        };
        sandbox.admin(&root.name, &sql.join(";\n"))?;
    }

    for link in state.links() {
        // The relay's port when the link goes through one (the relay forwards to the source).
        let port = sandbox
            .link_port(link.replica, link.channel)
            .unwrap_or_default();
        let change =
            change_source_sql(flavor, link.channel, port, &state.repl_user, &repl_password);
        let start = flavor.channel_thread_sql(ThreadControl::Start, link.channel);
        sandbox.admin(link.replica, &format!("{change}; {start}"))?;
    }
    Ok(())
}

/// Points one link at another port of 127.0.0.1 (its source directly, or a relay), keeping GTID
/// auto-positioning so it resumes exactly where it stopped.
pub fn repoint(sandbox: &Sandbox, link: Link<'_>, port: u16) -> Result<(), SandboxError> {
    let flavor = &sandbox.binaries().flavor;
    let repl_password = read_secret(&repl_password_file(sandbox.dir()))?;
    let user = &sandbox.state().repl_user;
    let change = change_source_sql(flavor, link.channel, port, user, &repl_password);
    sandbox.admin(
        link.replica,
        &format!(
            "{}; {change}; {}",
            flavor.channel_thread_sql(ThreadControl::Stop, link.channel),
            flavor.channel_thread_sql(ThreadControl::Start, link.channel)
        ),
    )?;
    Ok(())
}

/// Every sandbox link is to a port of 127.0.0.1, as the replication account.
fn change_source_sql(
    flavor: &Flavor,
    channel: &str,
    port: u16,
    user: &str,
    repl_password: &str,
) -> String {
    let link = SourceLink {
        host: "127.0.0.1",
        port,
        user,
        password: repl_password,
    };
    flavor.change_channel_source_sql(&link, channel)
}
