//! Command-line surface: the clap definitions and dispatch to each subcommand.

mod output;
mod sandbox_cmd;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rwtop",
    version,
    about = "Replication monitor for MySQL and MariaDB: true lag, GTID backlog, read-after-write strategies tested live"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start, inspect or remove a local replication topology of real servers on 127.0.0.1.
    Sandbox {
        #[command(subcommand)]
        action: SandboxAction,
    },
}

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// Start a primary and N GTID replicas (again: harmless; restarts stopped servers).
    Up {
        /// Number of replicas.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=32))]
        replicas: u16,
        /// Turn on semi-synchronous replication.
        #[arg(long)]
        semisync: bool,
        /// Sandbox folder [default: $TMPDIR/rwtop-sandbox-<uid>].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Port of the primary; replicas take the following ones.
        #[arg(long, default_value_t = rwtop::sandbox::DEFAULT_BASE_PORT)]
        base_port: u16,
    },
    /// Show each node's process, replication threads, lag and GTID position.
    Status {
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Stop every server of the sandbox and delete its folder.
    Down {
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sandbox { action } => sandbox_cmd::run(action),
    }
}
