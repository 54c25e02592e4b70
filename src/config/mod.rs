//! What to monitor and how: `rwtop.toml`, then the command line over it, then the password.
//!
//! Precedence is CLI > file > defaults. Loading stops at the first problem and names where it is
//! (file, line, key, or flag), what was found and what is expected, because a monitor that starts
//! with a half-understood config shows wrong numbers with confidence. Warnings (an inline
//! password, a world-readable password file) are returned as data: the library never prints.

mod drain_file;
mod dsn;

mod file;
mod file_text;
mod headroom_file;
pub mod location;
mod metrics_file;
mod password;
mod probe_file;
mod report_file;
mod throttle_file;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::alerts::Thresholds;
pub use crate::topology::Role;
pub use crate::units::parse_duration;
pub use dsn::{ParsedDsn, check_name as check_node_name, parse_dsn, redact};
pub use file::FileSettings;
pub use report_file::ReportConfig;

/// The `cluster` label on every Prometheus series when `[metrics] cluster` is not set.
pub const DEFAULT_CLUSTER: &str = "default";
pub use password::ENV_VAR as PASSWORD_ENV_VAR;

use crate::mysql::Endpoint;

/// The flags that can override the file; `rwtop`'s argument parser fills it.
#[derive(Debug, Clone, Default)]
pub struct CliOverrides {
    pub config: Option<PathBuf>,
    /// `--primary`, once per root.
    pub primaries: Vec<String>,
    pub replicas: Vec<String>,
    pub interval: Option<String>,
    pub password_file: Option<PathBuf>,
    pub read_only: bool,
    pub no_discovery: bool,
    /// `--ssl-mode`: disabled, preferred, required, verify-ca, verify-identity.
    pub ssl_mode: Option<String>,
    /// `--ssl-ca`: PEM file of the CA(s) to trust.
    pub ssl_ca: Option<PathBuf>,
    /// `--read-disks`: read each node's free disk space (`[headroom] read_disks`).
    pub read_disks: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    pub name: String,
    pub role: Role,
    pub endpoint: Endpoint,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatConfig {
    pub interval: Duration,
    pub read_interval: Duration,
    /// Whether `read_interval` was set: unset, reads are spread in large topologies
    /// ([`crate::poll::READ_BUDGET`]).
    pub read_interval_set: bool,
    /// Never empty in a loaded [`Config`]; empty in [`Settings`] means "derive it".
    pub writer_id: String,
    pub pt_table: String,
    /// Read a replica's heartbeat from its applied GTID position where that tells, instead
    /// of from the table.
    pub by_position: bool,
    /// Write a heartbeat on a root found through a replica's channel rather than named in the
    /// config (`engine::upward`); `false` only reads it.
    pub write_discovered_roots: bool,
}

impl Default for HeartbeatConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_millis(250),
            read_interval: Duration::from_millis(250),
            read_interval_set: false,
            writer_id: String::new(),
            pt_table: "percona.heartbeat".to_owned(),
            by_position: true,
            write_discovered_roots: true,
        }
    }
}

/// What rwtop was asked to watch, in two layers: the config file fills [`FileSettings`] (its
/// defaults where the file is silent or absent), the flags override it in place, and the nodes
/// come from the file's tables or the flags. [`crate::engine::EngineSpec`] is what then runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file the settings came from, if any.
    pub file: Option<PathBuf>,
    /// The primary first, if there is one.
    pub nodes: Vec<NodeConfig>,
    /// The file's settings with the flags applied (`--interval`, `--read-only`,
    /// `--no-discovery`, `--ssl-mode`, `--ssl-ca`).
    pub settings: FileSettings,
    /// For the caller to show; none contains a password.
    pub warnings: Vec<String>,
}

/// Where a value came from, so a message can send the operator straight to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File {
        path: PathBuf,
        /// 1-based line and column, when known (`u32` keeps every `Result` small).
        position: Option<(u32, u32)>,
        key: Option<String>,
    },
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File {
                path,
                position,
                key,
            } => {
                write!(f, "{}", path.display())?;
                if let Some((line, column)) = position {
                    write!(f, ", line {line}, column {column}")?;
                }
                match key {
                    Some(key) => write!(f, ", key `{key}`"),
                    None => Ok(()),
                }
            }
            Self::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

fn at_prefix(at: Option<&Origin>) -> String {
    at.map(|at| format!("{at}: ")).unwrap_or_default()
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "cannot read config file {}{}: {source}",
        path.display(),
        if *explicit { " (named by --config)" } else { "" }
    )]
    Unreadable {
        path: PathBuf,
        explicit: bool,
        #[source]
        source: io::Error,
    },
    /// `detail` is the toml crate's report, which quotes the line and points at the column.
    #[error("{at}: not valid TOML:\n{detail}")]
    Syntax { at: Origin, detail: String },
    /// Valid TOML with an unknown key, a wrong type or a value out of range.
    #[error("{at}: {message}")]
    Invalid { at: Origin, message: String },
    #[error("{at}: bad duration: {reason}")]
    BadDuration { at: Origin, reason: String },
    /// `dsn` is already redacted.
    #[error("{}bad DSN \"{dsn}\": {reason}; expected {}", at_prefix(at.as_ref()), dsn::EXPECTED)]
    BadDsn {
        at: Option<Origin>,
        dsn: String,
        reason: String,
    },
    #[error(
        "node {what} `{value}` is used twice, at {first} and at {second}: \
         every node needs its own name and its own host:port"
    )]
    DuplicateNode {
        what: &'static str,
        value: String,
        /// Boxed to keep every `Result<_, ConfigError>` small.
        first: Box<Origin>,
        second: Box<Origin>,
    },
    #[error(
        "no nodes to monitor: write a config file with a [primary] table (--config FILE, \
         ./rwtop.toml or ~/.config/rwtop/rwtop.toml; see docs/rwtop.sample.toml), or pass \
         --primary mysql://user@host:port [--replica mysql://user@host:port ...], \
         or try `rwtop demo`"
    )]
    NoNodes,
    #[error("cannot read password file {} (named by {at}): {reason}", path.display())]
    PasswordFile {
        path: PathBuf,
        at: Origin,
        reason: String,
    },
    #[error(
        "no password for the monitor user: {reason}. Give it one of three ways: set \
         RWTOP_PASSWORD, pass --password-file FILE (or set password_file in rwtop.toml), \
         or run rwtop in a terminal to be prompted"
    )]
    NoPassword { reason: String },
}

impl ConfigError {
    /// Every config problem is a usage error, whatever its kind.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        2
    }
}

impl Config {
    /// Loads with the real `RWTOP_PASSWORD` and a no-echo prompt on the terminal.
    pub fn load(cli: &CliOverrides) -> Result<Self, ConfigError> {
        let env = std::env::var(password::ENV_VAR).ok();
        Self::load_with(cli, env, &mut password::tty_prompt)
    }

    /// The testable core of [`Config::load`]: the password from the environment and the prompt
    /// are injected so that tests neither read the real environment nor need a terminal.
    pub fn load_with(
        cli: &CliOverrides,
        env_password: Option<String>,
        prompt: &mut dyn FnMut(&str) -> io::Result<String>,
    ) -> Result<Self, ConfigError> {
        Self::load_from(cli, &implicit_paths(), env_password, prompt)
    }

    /// [`Config::load_with`] with the places searched when `--config` is absent given
    /// explicitly, so tests do not depend on the working directory or `$HOME`.
    pub fn load_from(
        cli: &CliOverrides,
        implicit: &[PathBuf],
        env_password: Option<String>,
        prompt: &mut dyn FnMut(&str) -> io::Result<String>,
    ) -> Result<Self, ConfigError> {
        let found = match &cli.config {
            Some(path) => Some((path.clone(), file::read(path, true)?)),
            None => find_implicit(implicit)?,
        };
        let (settings, file_nodes) = match &found {
            Some((path, text)) => {
                let file_text = file_text::FileText { path, text };
                let raw = file::FileConfig::parse(&file_text)?;
                (raw.settings(&file_text)?, raw.nodes(&file_text))
            }
            None => (FileSettings::default(), Vec::new()),
        };
        let password_file = settings.password_file.clone();
        let mut config = Self::from_settings(cli, settings)?;
        config.file = found.map(|(path, _)| path);

        let cli_nodes = dsn::cli_node_specs(cli);
        let specs = if cli_nodes.is_empty() {
            file_nodes
        } else {
            cli_nodes
        };
        if specs.is_empty() {
            return Err(ConfigError::NoNodes);
        }
        let mut nodes = dsn::build_nodes(&specs, &mut config.warnings)?;
        for node in &mut nodes {
            node.endpoint.tls = config.settings.tls.clone();
        }

        if let Some(first) = nodes.iter().find(|n| n.endpoint.password.is_none()) {
            let file = match (&cli.password_file, password_file, &config.file) {
                (Some(path), _, _) => Some((path.clone(), Origin::Flag("--password-file".into()))),
                (None, Some(path), Some(source)) => Some((
                    path,
                    Origin::File {
                        path: source.clone(),
                        position: None,
                        key: Some("password_file".to_owned()),
                    },
                )),
                _ => None,
            };
            let inputs = password::Inputs {
                env: env_password,
                file,
            };
            let user = first.endpoint.user.clone();
            let shared = password::resolve(inputs, &user, prompt, &mut config.warnings)?;
            for node in nodes.iter_mut().filter(|n| n.endpoint.password.is_none()) {
                node.endpoint.password = Some(shared.clone());
            }
        }
        if config.settings.heartbeat.writer_id.is_empty() {
            let primary = nodes.iter().find(|n| n.role == Role::Primary);
            config.settings.heartbeat.writer_id = derive_writer_id(&hostname(), primary);
        }
        config.nodes = nodes;
        Ok(config)
    }

    /// The file-level settings with the flags applied; nodes and password come later.
    fn from_settings(cli: &CliOverrides, mut settings: FileSettings) -> Result<Self, ConfigError> {
        if let Some(text) = &cli.interval {
            settings.interval =
                crate::units::parse_interval(text).map_err(|reason| ConfigError::BadDuration {
                    at: Origin::Flag("--interval".to_owned()),
                    reason,
                })?;
        }
        settings.discovery &= !cli.no_discovery;
        settings.read_only |= cli.read_only;
        settings.headroom.read_disks |= cli.read_disks;
        if let Some(text) = &cli.ssl_mode {
            settings.tls.mode = text.parse().map_err(|message| ConfigError::Invalid {
                at: Origin::Flag("--ssl-mode".to_owned()),
                message,
            })?;
        }
        if let Some(ca) = &cli.ssl_ca {
            settings.tls.ca = Some(ca.clone());
        }
        Ok(Self {
            file: None,
            nodes: Vec::new(),
            settings,
            warnings: Vec::new(),
        })
    }

    #[must_use]
    pub fn primary(&self) -> Option<&NodeConfig> {
        self.nodes.iter().find(|n| n.role == Role::Primary)
    }
}

/// `./rwtop.toml`, then `$XDG_CONFIG_HOME/rwtop/rwtop.toml` or `~/.config/rwtop/rwtop.toml`.
#[must_use]
pub fn implicit_paths() -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from("rwtop.toml")];
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let home = std::env::var_os("HOME").map(|home| Path::new(&home).join(".config"));
    if let Some(dir) = xdg.or(home) {
        paths.push(dir.join("rwtop").join("rwtop.toml"));
    }
    paths
}

/// The first implicit file that exists; one that exists but cannot be read is still an error,
/// since silently falling back to defaults would hide it.
fn find_implicit(paths: &[PathBuf]) -> Result<Option<(PathBuf, String)>, ConfigError> {
    for path in paths {
        match std::fs::read_to_string(path) {
            Ok(text) => return Ok(Some((path.clone(), text))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(ConfigError::Unreadable {
                    path: path.clone(),
                    explicit: false,
                    source,
                });
            }
        }
    }
    Ok(None)
}

/// Stable across runs on one host for one primary, so a restarted rwtop updates its own
/// heartbeat row instead of adding another; 64 characters fit the heartbeat table's column.
fn derive_writer_id(hostname: &str, primary: Option<&NodeConfig>) -> String {
    let id = match primary {
        Some(node) => format!(
            "rwtop-{hostname}-{}-{}",
            node.endpoint.host, node.endpoint.port
        ),
        None => format!("rwtop-{hostname}"),
    };
    id.chars().take(64).collect()
}

fn hostname() -> String {
    let clean = |s: String| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .and_then(clean)
        .or_else(|| std::env::var("HOSTNAME").ok().and_then(clean))
        .unwrap_or_else(|| "host".to_owned())
}
