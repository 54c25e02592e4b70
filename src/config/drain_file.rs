//! `[drain]` in rwtop.toml: which load balancer drains go through, how to reach it, and where
//! the audit log goes.
//!
//! ```toml
//! [drain]
//! backend = "haproxy"                 # haproxy | proxysql | maxscale | exec
//! audit_log = "/var/log/rwtop/audit.log"
//! [drain.haproxy]
//! socket = "/run/haproxy/admin.sock"  # or "127.0.0.1:9999"
//! backend = "mysql_replicas"
//! servers = { r1 = "db2" }            # HAProxy server names, when not the replica names
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;
use super::file_text::FileText;
use crate::drain::{
    AuditLog, Backend, DrainSpec, ExecConfig, HaproxyConfig, MaxscaleConfig, ProxysqlConfig,
};
use crate::mysql::{Endpoint, Secret};

/// Where a load balancer's password comes from when its section names no file.
pub const LB_PASSWORD_ENV: &str = "RWTOP_LB_PASSWORD";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrainFile {
    backend: Option<Spanned<String>>,
    audit_log: Option<Spanned<String>>,
    haproxy: Option<HaproxyFile>,
    proxysql: Option<ProxysqlFile>,
    maxscale: Option<MaxscaleFile>,
    exec: Option<ExecFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HaproxyFile {
    socket: Spanned<String>,
    backend: Spanned<String>,
    #[serde(default)]
    servers: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProxysqlFile {
    /// `mysql://USER@HOST:PORT` of the admin interface.
    admin: Spanned<String>,
    hostgroups: Spanned<Vec<u32>>,
    password_file: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaxscaleFile {
    /// `host:port` of the REST API.
    address: Spanned<String>,
    user: String,
    password_file: Option<Spanned<String>>,
    #[serde(default)]
    servers: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecFile {
    drain: Spanned<String>,
    undrain: Spanned<String>,
}

fn invalid(at: super::Origin, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        at,
        message: message.into(),
    }
}

impl DrainFile {
    pub fn resolve(&self, file_text: &FileText<'_>) -> Result<Option<DrainSpec>, ConfigError> {
        let Some(backend) = &self.backend else {
            return Ok(None);
        };
        let missing = |name: &str| {
            invalid(
                file_text.at(backend, "drain.backend"),
                format!(
                    "backend = \"{name}\" needs a [drain.{name}] section (see \
                     docs/rwtop.sample.toml)"
                ),
            )
        };
        let dir = file_text.path.parent().unwrap_or_else(|| Path::new(""));
        let backend = match backend.get_ref().as_str() {
            "haproxy" => self
                .haproxy
                .as_ref()
                .ok_or_else(|| missing("haproxy"))?
                .resolve(file_text)?,
            "proxysql" => self
                .proxysql
                .as_ref()
                .ok_or_else(|| missing("proxysql"))?
                .resolve(file_text, dir)?,
            "maxscale" => self
                .maxscale
                .as_ref()
                .ok_or_else(|| missing("maxscale"))?
                .resolve(file_text, dir)?,
            "exec" => self
                .exec
                .as_ref()
                .ok_or_else(|| missing("exec"))?
                .resolve(file_text)?,
            other => {
                return Err(invalid(
                    file_text.at(backend, "drain.backend"),
                    format!("found {other:?}, expected one of haproxy, proxysql, maxscale, exec"),
                ));
            }
        };
        let audit = match &self.audit_log {
            Some(p) if p.get_ref().trim().is_empty() => {
                return Err(invalid(
                    file_text.at(p, "drain.audit_log"),
                    "found an empty path",
                ));
            }
            Some(p) => AuditLog::new(dir.join(p.get_ref())),
            None => AuditLog::new(AuditLog::default_path()),
        };
        Ok(Some(DrainSpec { backend, audit }))
    }
}

impl HaproxyFile {
    fn resolve(&self, file_text: &FileText<'_>) -> Result<Backend, ConfigError> {
        for (value, key) in [
            (&self.socket, "drain.haproxy.socket"),
            (&self.backend, "drain.haproxy.backend"),
        ] {
            if value.get_ref().trim().is_empty() {
                return Err(invalid(file_text.at(value, key), "found an empty value"));
            }
        }
        Ok(Backend::Haproxy(HaproxyConfig {
            socket: self.socket.get_ref().clone(),
            backend: self.backend.get_ref().clone(),
            servers: self.servers.clone(),
        }))
    }
}

impl ProxysqlFile {
    fn resolve(&self, file_text: &FileText<'_>, dir: &Path) -> Result<Backend, ConfigError> {
        let dsn = super::parse_dsn(self.admin.get_ref()).map_err(|e| {
            invalid(
                file_text.at(&self.admin, "drain.proxysql.admin"),
                e.to_string(),
            )
        })?;
        if self.hostgroups.get_ref().is_empty() {
            return Err(invalid(
                file_text.at(&self.hostgroups, "drain.proxysql.hostgroups"),
                "found no hostgroup, expected the reader hostgroup(s), such as [20]",
            ));
        }
        let file = self.password_file.as_ref();
        let password = match dsn.password {
            Some(p) => Some(p),
            None => password(file_text, dir, file, "drain.proxysql.password_file")?,
        };
        Ok(Backend::Proxysql(ProxysqlConfig {
            admin: Endpoint {
                host: dsn.host,
                port: dsn.port,
                user: dsn.user,
                password,
                tls: crate::mysql::Tls::default(),
            },
            hostgroups: self.hostgroups.get_ref().clone(),
        }))
    }
}

impl MaxscaleFile {
    fn resolve(&self, file_text: &FileText<'_>, dir: &Path) -> Result<Backend, ConfigError> {
        let address = self.address.get_ref().trim();
        let address = address
            .strip_prefix("http://")
            .unwrap_or(address)
            .trim_end_matches('/');
        if address.starts_with("https://") || !address.contains(':') {
            return Err(invalid(
                file_text.at(&self.address, "drain.maxscale.address"),
                format!(
                    "found {address:?}, expected host:port of MaxScale's REST API over plain HTTP \
                     (such as \"127.0.0.1:8989\"); for HTTPS use the exec backend with maxctrl"
                ),
            ));
        }
        let file = self.password_file.as_ref();
        Ok(Backend::Maxscale(MaxscaleConfig {
            address: address.to_owned(),
            user: self.user.clone(),
            password: password(file_text, dir, file, "drain.maxscale.password_file")?,
            servers: self.servers.clone(),
        }))
    }
}

impl ExecFile {
    fn resolve(&self, file_text: &FileText<'_>) -> Result<Backend, ConfigError> {
        let split = |value: &Spanned<String>, key: &str| {
            let argv: Vec<String> = value
                .get_ref()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            if argv.is_empty() {
                Err(invalid(file_text.at(value, key), "found an empty command"))
            } else {
                Ok(argv)
            }
        };
        Ok(Backend::Exec(ExecConfig {
            drain: split(&self.drain, "drain.exec.drain")?,
            undrain: split(&self.undrain, "drain.exec.undrain")?,
        }))
    }
}

/// A load balancer's password: the named file (relative to the config), else
/// [`LB_PASSWORD_ENV`], else none.
fn password(
    file_text: &FileText<'_>,
    dir: &Path,
    file: Option<&Spanned<String>>,
    key: &str,
) -> Result<Option<Secret>, ConfigError> {
    if let Some(file) = file {
        let path: PathBuf = dir.join(file.get_ref());
        let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::Invalid {
            at: file_text.at(file, key),
            message: format!("cannot read {}: {e}", path.display()),
        })?;
        return Ok(Some(Secret::new(text.trim_end_matches(['\r', '\n']))));
    }
    Ok(std::env::var(LB_PASSWORD_ENV).ok().map(Secret::new))
}
