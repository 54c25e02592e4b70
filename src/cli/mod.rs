//! Command-line surface: the clap definitions and dispatch to each subcommand.

// Doc comments here are `--help` text for people, not rustdoc.
#![allow(clippy::doc_markdown)]

mod demo_cmd;
mod drain_cmd;
mod generate_cmd;
mod grants_cmd;
mod lint_cmd;
mod monitor_cmd;
mod output;
mod outputs;
mod probe_cmd;
mod probe_table;
mod record_cmd;
mod replay_cmd;
mod report_cmd;
mod sandbox_cmd;
mod serve_cmd;
mod snapshot_cmd;
mod whatif_cmd;
mod whatif_table;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// `rwtop --version`: the release and the commit it was built from (`scripts/build.rs`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("RWTOP_COMMIT"), ")");

#[derive(Debug, Parser)]
#[command(
    name = "rwtop",
    version = VERSION,
    max_term_width = 100,
    about = "Replication monitor for MySQL and MariaDB: true lag, backlog, read-after-write tested live",
    long_about = "Replication monitor for MySQL and MariaDB: true lag, GTID backlog, read-after-write \
                  strategies tested live.\n\nWithout a command, rwtop opens the live view of the \
                  topology named by the config file or by --primary/--replica. `rwtop demo` \
                  starts a local topology to try it on; `rwtop <command> --help` tells more \
                  about each command."
)]
pub struct Cli {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Colour theme: dark, light, high-contrast, colorblind or a .toml file.
    ///
    /// NO_COLOR is honoured.
    #[arg(long, global = true)]
    pub theme: Option<String>,
    /// Serve Prometheus metrics at http://ADDR/metrics (ADDR: IP:PORT).
    ///
    /// For example 127.0.0.1:9899; beside the live view or the demo, or with `rwtop serve`.
    #[arg(long, global = true, value_name = "ADDR", value_parser = serve_cmd::listen_arg)]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Record what rwtop sees to FILE (play it with `rwtop replay`).
    ///
    /// The live view, `rwtop demo` or `rwtop serve` write one snapshot a second as JSON Lines
    /// (about 20 MiB an hour for 3 replicas).
    #[arg(long, global = true, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Without a command, rwtop opens the live view of the configured topology.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--server-option NODE:NAME=VALUE`: the node, and the option line.
fn server_option_arg(text: &str) -> Result<(String, String), String> {
    let usage =
        || format!("{text:?} is not NODE:NAME=VALUE (e.g. primary:character_set_server=utf8mb4)");
    let (node, option) = text.split_once(':').ok_or_else(usage)?;
    let (name, _) = option.split_once('=').ok_or_else(usage)?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if !plain(node) || !plain(name) || option.contains('\n') {
        return Err(usage());
    }
    Ok((node.to_owned(), option.to_owned()))
}

/// Which servers to watch and how; shared by every command that talks to a topology.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// Config file [default: ./rwtop.toml, else one under $XDG_CONFIG_HOME].
    ///
    /// Without --config, rwtop reads ./rwtop.toml, else $XDG_CONFIG_HOME/rwtop/rwtop.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A primary: [NAME=]mysql://USER@HOST[:PORT]; repeatable.
    ///
    /// A root of the topology; repeat for several roots. Replaces the config file's nodes.
    #[arg(
        long = "primary",
        id = "primary_dsns",
        global = true,
        value_name = "DSN"
    )]
    pub primaries: Vec<String>,
    /// A replica: [NAME=]mysql://USER@HOST[:PORT]; repeatable.
    #[arg(
        long = "replica",
        id = "replica_dsns",
        global = true,
        value_name = "DSN"
    )]
    pub replicas: Vec<String>,
    /// Poll interval, e.g. 1s or 500ms.
    #[arg(long, global = true)]
    pub interval: Option<String>,
    /// File holding the monitor user's password.
    ///
    /// Without it, RWTOP_PASSWORD, else a prompt.
    #[arg(long, global = true, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// Write nothing to any server (no heartbeat writer).
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Do not follow the replicas that nodes report.
    #[arg(long, global = true)]
    pub no_discovery: bool,
    /// TLS: disabled, preferred, required, verify-ca or verify-identity.
    ///
    /// Without it, the config file's, else preferred.
    #[arg(long, global = true, value_name = "MODE")]
    pub ssl_mode: Option<String>,
    /// PEM file of the CAs that signed the servers' certificates.
    ///
    /// Used by verify-ca and verify-identity.
    #[arg(long, global = true, value_name = "FILE")]
    pub ssl_ca: Option<PathBuf>,
    /// Read each node's free disk space (information_schema.DISKS).
    ///
    /// MariaDB's disks plugin; rwtop's user needs FILE. Off unless asked.
    #[arg(long, global = true)]
    pub read_disks: bool,
}

impl TargetArgs {
    pub fn overrides(&self) -> rwtop::config::CliOverrides {
        rwtop::config::CliOverrides {
            config: self.config.clone(),
            primaries: self.primaries.clone(),
            replicas: self.replicas.clone(),
            interval: self.interval.clone(),
            password_file: self.password_file.clone(),
            read_only: self.read_only,
            no_discovery: self.no_discovery,
            ssl_mode: self.ssl_mode.clone(),
            ssl_ca: self.ssl_ca.clone(),
            read_disks: self.read_disks,
        }
    }
}

/// The configuration the flags name, its warnings printed.
fn load_config(target: &TargetArgs) -> anyhow::Result<rwtop::config::Config> {
    let config = rwtop::config::Config::load(&target.overrides())?;
    warn(&config);
    Ok(config)
}

fn warn(config: &rwtop::config::Config) {
    for warning in &config.warnings {
        eprintln!("rwtop: warning: {warning}");
    }
}

/// The engine's runtime ([`rwtop::engine::WORKERS`] worker threads; this thread runs the TUI).
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    rwtop::engine::runtime(rwtop::engine::WORKERS)
}

fn duration_arg(text: &str) -> Result<Duration, String> {
    rwtop::config::parse_duration(text)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Try rwtop on a local topology of real servers with scripted incidents.
    ///
    /// A real primary, two replicas and a cascaded one, and a second primary with an aggregator
    /// of both, on 127.0.0.1, a light write load and scripted incidents (a rebuilding ALTER, a
    /// stalled source link, a stopped IO thread, a delayed replica, one channel of the
    /// aggregator stopped while the other flows), in the TUI. Quitting stops every server and
    /// deletes the folder.
    Demo {
        /// Sandbox folder [default: a new temporary folder].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The Galera act instead: a three-member cluster and an async replica, a backup's read
        /// lock, flow control and a member cut off (needs galera-4, mariadb-backup and socat).
        #[arg(long)]
        galera: bool,
    },
    /// Poll the topology for a while, then print one snapshot.
    ///
    /// A table, or the documented JSON document with --json.
    Snapshot {
        /// Print the documented JSON document (docs/json-schema.md).
        #[arg(long)]
        json: bool,
        /// How long to poll before printing.
        #[arg(long, default_value = "3s", value_parser = duration_arg)]
        duration: Duration,
    },
    /// Check every node's replication-safety settings; exit 1 on an error.
    ///
    /// Health lint: read every node's replication-safety settings and binlog retention, print
    /// each finding with why it matters and the exact fix; exit 1 on an error-severity finding.
    Lint {
        /// Print JSON (the findings as in `snapshot --json`'s `lint`).
        #[arg(long)]
        json: bool,
        /// How long to wait at most for every node to answer.
        #[arg(long, default_value = "10s", value_parser = duration_arg)]
        wait: Duration,
    },
    /// No screen: watch the topology and serve Prometheus metrics.
    ///
    /// Serves /metrics at --metrics-listen ADDR until Ctrl-C or SIGTERM.
    Serve,
    /// Play a recording (made with --record FILE) in the TUI.
    ///
    /// Read-only: space pauses, ←/→ seek
    /// 10 s, </> change the speed; the end pauses on the last frame.
    Replay {
        /// The recording.
        file: PathBuf,
        /// Playback speed: 1 is real time; 2, 10 faster, 0.5 slower (0.1 to 100).
        #[arg(long, default_value = "1", value_parser = replay_cmd::speed_arg)]
        speed: rwtop::record::Speed,
    },
    /// Report on the DDL windows of a recording, as Markdown or HTML.
    ///
    /// DDL-window report of a recording: the statements with per-node run times, each
    /// replica's lag as a chart, threshold crossings, catch-up, alerts, test reads and drains,
    /// as Markdown or one self-contained HTML page. Windows are found where a DDL ran, or given
    /// with --from/--to.
    Report(report_cmd::ReportArgs),
    /// Test every read-after-write strategy against the topology, N times.
    ///
    /// Test reads: write a marker on the primary and read it back on the replicas with each
    /// read-after-write strategy, N times; prints fresh/stale/fell-back shares, waits and the
    /// primary's load per strategy.
    Probe(probe_cmd::ProbeArgs),
    /// Recommend the cheapest read-after-write setting, from lag alone.
    ///
    /// What-if, no writes: from each replica's lag series (watched live for --duration, or a
    /// --recording), judge every read-after-write setting that needs no probe over a grid of
    /// values for a workload, and recommend the cheapest one that meets --max-stale within
    /// --primary-budget (docs/whatif.md).
    Whatif(whatif_cmd::WhatifArgs),
    /// Take a replica out of the load balancer's rotation.
    ///
    /// As [drain] in rwtop.toml says: HAProxy DRAIN, ProxySQL OFFLINE_SOFT, MaxScale drain, or
    /// your command. Logged to the audit log.
    Drain {
        /// The replica's name in the configuration.
        replica: String,
    },
    /// Put a drained replica back into rotation.
    ///
    /// HAProxy READY, ProxySQL ONLINE, MaxScale clear drain, or your command. Logged to the
    /// audit log.
    Undrain {
        /// The replica's name in the configuration.
        replica: String,
    },
    /// Print the CREATE USER and GRANT statements rwtop needs.
    ///
    /// Per flavor and mode, each privilege with a comment saying what it is for. Pipe them to
    /// the client after putting the password in place of <password>. Modes: full (the default:
    /// the monitor, the heartbeat writer on every root, test reads) and read-only (rwtop
    /// --read-only, which writes nothing and reads pt-heartbeat's table). --disks, --kill and
    /// --osc-schema add the optional features' privileges. On connect rwtop reads the account's
    /// grants and says what is off for want of which (docs/grants.md).
    Grants(grants_cmd::GrantsArgs),
    /// Start, inspect or remove a local topology of real servers on 127.0.0.1.
    Sandbox {
        #[command(subcommand)]
        action: SandboxAction,
    },
    /// Write the man pages into --out DIR, or print a shell's completions.
    ///
    /// Generated from this command line; the Debian package ships them (scripts/package).
    #[command(hide = true)]
    Generate {
        what: generate_cmd::Asset,
        /// The folder for the man pages (rwtop.1 and one page per command).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// Start a primary and N GTID replicas.
    ///
    /// Running it again is harmless: it restarts stopped servers.
    Up {
        /// Number of replicas (of n1 with --galera).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(0..=32))]
        replicas: u16,
        /// A Galera cluster of N members (n1…nN, from the galera-4 package, joined by
        /// mariadb-backup state transfers) instead of the primary; the replicas replicate from n1.
        #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=9))]
        galera: u16,
        /// Turn on semi-synchronous replication.
        #[arg(long)]
        semisync: bool,
        /// Add a cascaded replica (c1) that replicates from r1.
        #[arg(long)]
        cascade: bool,
        /// Add a second primary (p2, GTID domain 1) and a node (agg) that replicates from both:
        /// from primary on the default channel and from p2 on channel 'p2'.
        #[arg(long)]
        multi_source: bool,
        /// Servers offer TLS (a throwaway CA in <dir>/tls; the printed config verifies it).
        #[arg(long)]
        tls: bool,
        /// Parallel applier workers on every replica (slave_parallel_threads on MariaDB,
        /// replica_parallel_workers on MySQL); 0 keeps one applier thread.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=256))]
        parallel: u16,
        /// A server option of one node, as NODE:NAME=VALUE (e.g.
        /// primary:character_set_server=utf8mb4), written last in its option file; repeat for
        /// more. Nodes set up differently, as a fleet's are.
        #[arg(long = "server-option", value_parser = server_option_arg)]
        server_options: Vec<(String, String)>,
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
    if let Err(usage) = serve_cmd::check_flags(&cli) {
        usage.exit();
    }
    if let Err(usage) = record_cmd::check_flags(&cli) {
        usage.exit();
    }
    let record = cli.record.as_deref();
    match cli.command {
        None => monitor_cmd::run(
            &cli.target,
            cli.theme.as_deref(),
            cli.metrics_listen,
            record,
        ),
        Some(Command::Serve) => serve_cmd::run(&cli.target, cli.metrics_listen, record),
        Some(Command::Demo { dir, galera }) => demo_cmd::run(
            cli.theme.as_deref(),
            dir,
            galera,
            cli.metrics_listen,
            record,
        ),
        Some(Command::Replay { file, speed }) => {
            replay_cmd::run(&file, speed, cli.theme.as_deref())
        }
        Some(Command::Sandbox { action }) => sandbox_cmd::run(action),
        Some(Command::Grants(args)) => grants_cmd::run(&args),
        Some(Command::Generate { what, out }) => generate_cmd::run(what, out.as_deref()),
        Some(Command::Snapshot { json, duration }) => {
            snapshot_cmd::run(&cli.target, json, duration)
        }
        Some(Command::Lint { json, wait }) => lint_cmd::run(&cli.target, json, wait),
        Some(Command::Probe(args)) => probe_cmd::run(&cli.target, &args),
        Some(Command::Whatif(args)) => whatif_cmd::run(&cli.target, &args),
        Some(Command::Report(args)) => report_cmd::run(&cli.target, &args),
        Some(Command::Drain { replica }) => {
            drain_cmd::run(&cli.target, rwtop::drain::Action::Drain, &replica)
        }
        Some(Command::Undrain { replica }) => {
            drain_cmd::run(&cli.target, rwtop::drain::Action::Undrain, &replica)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command, SandboxAction};

    #[test]
    fn the_command_lines_people_type_parse() {
        Cli::command().debug_assert();
        // Global flags and subcommand flags share one id space; a clash only shows as a panic
        // when a command line is parsed, so parse the ones people type.
        let up = Cli::try_parse_from(["rwtop", "sandbox", "up", "--replicas", "3"]).unwrap();
        assert!(matches!(
            up.command,
            Some(Command::Sandbox {
                action: SandboxAction::Up { replicas: 3, .. }
            })
        ));
        let snap = Cli::try_parse_from([
            "rwtop",
            "--primary",
            "p=mysql://u@h:1",
            "--replica",
            "mysql://u@h:2",
            "--replica",
            "mysql://u@h:3",
            "snapshot",
            "--json",
            "--duration",
            "2s",
        ])
        .unwrap();
        assert_eq!(snap.target.replicas.len(), 2);
        let after =
            Cli::try_parse_from(["rwtop", "snapshot", "--replica", "mysql://u@h:2"]).unwrap();
        assert_eq!(after.target.replicas, ["mysql://u@h:2"]);
        assert!(Cli::try_parse_from(["rwtop", "snapshot", "--duration", "soon"]).is_err());

        let probe = Cli::try_parse_from([
            "rwtop",
            "--config",
            "r.toml",
            "probe",
            "--target",
            "r1",
            "--strategy",
            "none,sleep(200ms),gtid-wait",
            "--count",
            "20",
            "--spacing",
            "50ms",
            "--json",
            "--read-only",
        ])
        .unwrap();
        assert!(probe.target.read_only);
        let Some(Command::Probe(args)) = probe.command else {
            panic!("not a probe: {probe:?}")
        };
        assert_eq!(args.target.as_deref(), Some("r1"));
        assert_eq!(
            args.strategy.as_deref(),
            Some("none,sleep(200ms),gtid-wait")
        );
        assert_eq!(args.count, Some(20));
        assert_eq!(args.spacing, Some(std::time::Duration::from_millis(50)));
        assert!(args.json);
        // Bare: every value comes from the config later.
        let bare = Cli::try_parse_from(["rwtop", "probe"]).unwrap();
        let Some(Command::Probe(args)) = bare.command else {
            panic!("not a probe: {bare:?}")
        };
        assert_eq!((args.target, args.strategy, args.count), (None, None, None));
        for bad in [["--count", "0"], ["--spacing", "soon"]] {
            let line = ["rwtop", "probe", bad[0], bad[1]];
            assert!(Cli::try_parse_from(line).is_err(), "{line:?}");
        }
    }
}
