//! Drain and undrain a replica in the load balancer in front of it (`docs/design.md`, "Drains";
//! `docs/guide/drains.md`): HAProxy's runtime API, ProxySQL's admin interface, MaxScale's REST
//! API, or a command. Every action is appended to an audit log; a failure is reported with the
//! backend's own message. The operator's other action on servers, killing the session that
//! blocks a waiting DDL (`kill.rs`), goes to the same audit log.

pub mod audit;
pub mod book;
pub mod exec;
pub mod haproxy;
pub mod kill;
pub mod maxscale;
pub mod proxysql;
pub mod task;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use audit::AuditLog;
pub use book::{DrainBook, DrainView};
pub use exec::ExecConfig;
pub use haproxy::HaproxyConfig;
pub use kill::{KillRecord, KillRequest, KillSettings, KillSpec};
pub use maxscale::MaxscaleConfig;
pub use proxysql::ProxysqlConfig;
pub use task::{DrainEvent, DrainRequest, DrainSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Drain,
    Undrain,
}

impl Action {
    #[must_use]
    pub fn verb(self) -> &'static str {
        match self {
            Self::Drain => "drain",
            Self::Undrain => "undrain",
        }
    }
}

/// A server's state as the load balancer itself reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Takes new connections (HAProxy READY/UP, ProxySQL ONLINE, MaxScale Running).
    Ready,
    /// No new connections, running ones finish (HAProxy DRAIN, `ProxySQL` `OFFLINE_SOFT`, `MaxScale`
    /// Draining/Drained).
    Drain,
    /// Out of service (HAProxy MAINT, `ProxySQL` `OFFLINE_HARD`, `MaxScale` Maintenance).
    Maint,
    /// Failing its checks (HAProxy DOWN, ProxySQL SHUNNED, MaxScale Down).
    Down,
    Other(String),
}

impl ServerState {
    /// From the words ProxySQL and MaxScale use.
    #[must_use]
    pub fn from_label(label: &str) -> Self {
        let l = label.to_ascii_lowercase();
        if l.contains("drain") || l == "offline_soft" {
            Self::Drain
        } else if l.contains("maint") || l == "offline_hard" {
            Self::Maint
        } else if l == "shunned" || l.contains("down") {
            Self::Down
        } else if l == "online" || l.contains("running") {
            Self::Ready
        } else {
            Self::Other(label.to_owned())
        }
    }

    #[must_use]
    pub fn label(&self) -> &str {
        match self {
            Self::Ready => "READY",
            Self::Drain => "DRAIN",
            Self::Maint => "MAINT",
            Self::Down => "DOWN",
            Self::Other(s) => s,
        }
    }

    /// Whether rwtop's own routing must skip a replica in this state.
    #[must_use]
    pub fn takes_reads(&self) -> bool {
        matches!(self, Self::Ready)
    }
}

/// The load balancer's name for a replica: mapped in the config, else the replica's own.
#[must_use]
pub fn server_name<'a>(servers: &'a BTreeMap<String, String>, replica: &'a str) -> &'a str {
    servers.get(replica).map_or(replica, String::as_str)
}

/// Which load balancer, and how to reach it (`[drain]` in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    Haproxy(HaproxyConfig),
    Proxysql(ProxysqlConfig),
    Maxscale(MaxscaleConfig),
    Exec(ExecConfig),
}

/// The replica an action is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub host: String,
    pub port: u16,
}

/// One action as the audit log and the screen show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    pub at: chrono::DateTime<chrono::Utc>,
    pub replica: String,
    pub action: Action,
    /// The backend and what in it was addressed (`haproxy mysql_ro/r1 via /run/haproxy.sock`).
    pub backend: String,
    pub ok: bool,
    /// The backend's answer, or why it failed.
    pub message: String,
}

/// How long a load balancer gets to answer.
pub const TIMEOUT: Duration = Duration::from_secs(5);

impl Backend {
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Haproxy(_) => "haproxy",
            Self::Proxysql(_) => "proxysql",
            Self::Maxscale(_) => "maxscale",
            Self::Exec(_) => "exec",
        }
    }

    /// The backend and where it is, for the confirmation (`haproxy backend replicas via
    /// /run/haproxy.sock`).
    #[must_use]
    pub fn summary(&self) -> String {
        match self {
            Self::Haproxy(c) => format!("haproxy backend {} via {}", c.backend, c.socket),
            Self::Proxysql(c) => c.describe(),
            Self::Maxscale(c) => format!("maxscale at {}", c.address),
            Self::Exec(c) => format!("exec `{}`", c.drain.join(" ")),
        }
    }

    /// What an action on `target` will address, for the confirmation and the audit log.
    #[must_use]
    pub fn describe(&self, action: Action, target: &Target) -> String {
        match self {
            Self::Haproxy(c) => c.describe(&target.name),
            Self::Proxysql(c) => c.describe(),
            Self::Maxscale(c) => c.describe(&target.name),
            Self::Exec(c) => c.describe(action),
        }
    }

    /// Runs the action and returns its record (never "done" unless the backend said so).
    pub async fn apply(&self, action: Action, target: &Target) -> ActionRecord {
        let result = match self {
            Self::Haproxy(c) => c.apply(action, &target.name, TIMEOUT).await,
            Self::Proxysql(c) => c.apply(action, &target.host, target.port, TIMEOUT).await,
            Self::Maxscale(c) => c.apply(action, &target.name, TIMEOUT).await,
            Self::Exec(c) => {
                c.apply(action, &target.name, &target.host, target.port, TIMEOUT)
                    .await
            }
        };
        let (ok, message) = match result {
            Ok(m) => (true, m),
            Err(m) => (false, m),
        };
        ActionRecord {
            at: chrono::Utc::now(),
            replica: target.name.clone(),
            action,
            backend: self.describe(action, target),
            ok,
            message,
        }
    }

    /// The backend's own state of each target, by replica name; `None` for exec (it has no
    /// view to read).
    pub async fn view(
        &self,
        targets: &[Target],
    ) -> Option<Result<BTreeMap<String, ServerState>, String>> {
        Some(match self {
            Self::Haproxy(c) => c.view(TIMEOUT).await,
            Self::Proxysql(c) => c.view(TIMEOUT).await.map(|by_address| {
                targets
                    .iter()
                    .filter_map(|t| {
                        let state = by_address.get(&format!("{}:{}", t.host, t.port))?;
                        Some((t.name.clone(), state.clone()))
                    })
                    .collect()
            }),
            Self::Maxscale(c) => {
                let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
                c.view(&names, TIMEOUT).await
            }
            Self::Exec(_) => return None,
        })
    }
}
