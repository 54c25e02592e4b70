//! `rwtop sandbox up|status|down`: thin printing around `rwtop::sandbox`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rwtop::mysql::{GtidState, IoRunning, NodeState, ReplicaStatus};
use rwtop::sandbox::{Ports, Sandbox, SandboxError, SandboxSpec, layout, mask_passwords, toml_out};

use super::SandboxAction;
use super::output::emit;

pub fn run(action: SandboxAction) -> anyhow::Result<()> {
    match action {
        SandboxAction::Up {
            replicas,
            galera,
            semisync,
            cascade,
            multi_source,
            tls,
            parallel,
            server_options,
            dir,
            base_port,
        } => {
            let mut by_node = std::collections::BTreeMap::<String, Vec<String>>::new();
            for (node, option) in server_options {
                by_node.entry(node).or_default().push(option);
            }
            let spec = SandboxSpec {
                dir: dir.unwrap_or_else(layout::default_dir),
                replicas: usize::from(replicas),
                semisync,
                cascade,
                ports: Ports::Base(base_port),
                ephemeral: false,
                relay: false,
                tls,
                multi_source,
                parallel,
                server_options: by_node,
                galera: usize::from(galera),
            };
            let start = Instant::now();
            let sandbox = Sandbox::up(&spec)?;
            let mut text = format!(
                "sandbox up in {}: {} in {}\n\n{}",
                rwtop::units::duration(start.elapsed()),
                sandbox.binaries().flavor,
                sandbox.dir().display(),
                report(&sandbox)
            );
            let config = layout::config_file(sandbox.dir());
            let _ = write!(
                text,
                "\n# {} (use it with --config):\n{}\n# Try: {}\n",
                config.display(),
                toml_out::render(&sandbox),
                client_hint(&sandbox)
            );
            Ok(emit(&text)?)
        }
        SandboxAction::Status { dir } => {
            let sandbox = Sandbox::open(&dir_or_default(dir))?;
            let flavor = &sandbox.binaries().flavor;
            let text = format!(
                "{flavor} in {}\n\n{}",
                sandbox.dir().display(),
                report(&sandbox)
            );
            Ok(emit(&text)?)
        }
        SandboxAction::Down { dir } => {
            let dir = dir_or_default(dir);
            let stopped = Sandbox::down(&dir)?;
            let text = if stopped.is_empty() {
                format!(
                    "no running sandbox in {}; its folder is gone\n",
                    dir.display()
                )
            } else {
                format!(
                    "stopped {} and removed {}\n",
                    stopped.join(", "),
                    dir.display()
                )
            };
            Ok(emit(&text)?)
        }
    }
}

fn dir_or_default(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(layout::default_dir)
}

fn client_hint(sandbox: &Sandbox) -> String {
    let replica = sandbox.state().replicas().next();
    let port = replica.map_or(0, |r| r.port);
    let password = layout::password_file(sandbox.dir());
    format!(
        "MYSQL_PWD=$(cat {}) {} -h 127.0.0.1 -P {port} -u {} -e '{}\\G'",
        password.display(),
        client_name(sandbox.binaries().client.as_path()),
        sandbox.state().monitor_user,
        sandbox.binaries().flavor.replica_status_sql()
    )
}

fn client_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || "mariadb".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn gtid_text(state: &NodeState) -> String {
    match &state.gtid {
        GtidState::Mysql { executed } => executed.to_string(),
        GtidState::Mariadb {
            binlog_pos,
            slave_pos,
            ..
        } => {
            if slave_pos.is_empty() {
                binlog_pos.to_string()
            } else {
                slave_pos.to_string()
            }
        }
    }
}

/// IO, SQL and `Seconds_Behind_Master` of one channel, as printed.
fn threads_text(status: &Result<ReplicaStatus, SandboxError>) -> (String, &'static str, String) {
    match status {
        Err(_) => ("?".to_owned(), "?", "?".to_owned()),
        Ok(r) => (
            match r.io_running {
                IoRunning::Yes => "Yes".to_owned(),
                IoRunning::Connecting => "Connecting".to_owned(),
                IoRunning::No => "No".to_owned(),
            },
            if r.sql_running { "Yes" } else { "No" },
            r.seconds_behind_source
                .map_or_else(|| "NULL".to_owned(), |s| s.to_string()),
        ),
    }
}

/// The problems of one channel, one line each.
fn channel_errors(text: &mut String, status: &Result<ReplicaStatus, SandboxError>) {
    match status {
        Err(e) => {
            let _ = writeln!(text, "         ! {e}");
        }
        Ok(r) => {
            for e in [&r.last_io_error, &r.last_sql_error].into_iter().flatten() {
                let message = mask_passwords(&e.message);
                let _ = writeln!(text, "         ! error {}: {message}", e.errno);
            }
        }
    }
}

/// A line per node (its default channel's threads on it), then a line per named channel under
/// the node that has it.
fn report(sandbox: &Sandbox) -> String {
    let mut text = format!(
        "{:<8} {:>5} {:>8} {:<8} {:<4} {:<10} {:<4} {:>4}  GTID\n",
        "NODE", "PORT", "PID", "ROLE", "RO", "IO", "SQL", "SBM"
    );
    for node in sandbox.report() {
        let pid = node
            .pid
            .map_or_else(|| "down".to_owned(), |p| p.to_string());
        let role = match (&node.spec.source, node.spec.galera) {
            (Some(_), _) => "replica",
            (None, Some(_)) => "member",
            (None, None) => "primary",
        };
        let (ro, gtid) = match &node.state {
            Ok(state) => (if state.read_only { "ON" } else { "OFF" }, gtid_text(state)),
            Err(_) => ("?", "?".to_owned()),
        };
        let default = node.channels.iter().find(|c| c.channel.is_empty());
        let (io, sql, sbm) = default.map_or_else(
            || ("-".to_owned(), "-", "-".to_owned()),
            |c| threads_text(&c.status),
        );
        let _ = writeln!(
            text,
            "{:<8} {:>5} {:>8} {:<8} {:<4} {:<10} {:<4} {:>4}  {}",
            node.spec.name, node.spec.port, pid, role, ro, io, sql, sbm, gtid
        );
        if let Some(e) = node.state.as_ref().err() {
            let _ = writeln!(text, "         ! {e}");
        }
        if let Some(c) = default {
            channel_errors(&mut text, &c.status);
        }
        for c in node.channels.iter().filter(|c| !c.channel.is_empty()) {
            let (io, sql, sbm) = threads_text(&c.status);
            let _ = writeln!(
                text,
                "{:<37} {:<10} {:<4} {:>4}",
                format!("  channel '{}' from {}", c.channel, c.source),
                io,
                sql,
                sbm
            );
            channel_errors(&mut text, &c.status);
        }
    }
    text
}
