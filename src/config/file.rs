//! `rwtop.toml`: the raw shape serde reads, and its resolution into checked [`FileSettings`].
//!
//! Values are read as `Spanned` wherever a later check (range, DSN, duplicate) can fail, so that
//! error can still name the line and key like the ones serde raises while reading.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::dsn::{check_pt_table, check_writer_id, redact_quoted};
use super::file_text::{FileText, count};
use super::location::shorten;
use super::probe_file::ProbeFile;
use super::{ConfigError, HeartbeatConfig, Origin, Role, Thresholds};
use crate::mysql::Timeouts;
use crate::probe::ProbeSettings;
use crate::units::excerpt;
use crate::units::parse::{RawDuration, parse_duration, parse_interval};

/// The file-level settings once checked, that is everything but the nodes.
///
/// `heartbeat.writer_id` is kept as written (empty = derive it) because the derived value depends
/// on the host and the primary, which are not settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSettings {
    /// Relative paths are already resolved against the config file's directory.
    pub password_file: Option<PathBuf>,
    pub interval: Duration,
    pub timeouts: Timeouts,
    pub discovery: bool,
    pub read_only: bool,
    /// A theme name or file for the TUI; checked when the TUI loads it.
    pub theme: Option<String>,
    /// TUI key overrides, action name → key; checked when the TUI builds its key map.
    pub keys: std::collections::BTreeMap<String, String>,
    pub heartbeat: HeartbeatConfig,
    pub thresholds: Thresholds,
    pub probe: crate::probe::ProbeSettings,
    /// `None` without a `[drain]` section.
    pub drain: Option<crate::drain::DrainSpec>,
    /// `ssl_mode` and `ssl_ca` (relative to the config file).
    pub tls: crate::mysql::Tls,
    /// `[metrics] cluster`: the `cluster` label on every Prometheus series.
    pub cluster: String,
    /// `[report]`: where DDL-window reports go.
    pub report: super::report_file::ReportConfig,
    /// `[ddl]`: whether the TUI may kill a waiting DDL's blocker.
    pub ddl: crate::drain::KillSettings,
    /// `[throttle]`: the lag limit of `GET /throttle` and the replicas it covers.
    pub throttle: crate::alerts::throttle::ThrottleSettings,
    /// `[headroom]`: whether disks are read (the alert's horizon is in `thresholds`).
    pub headroom: super::headroom_file::HeadroomSettings,
}

impl Default for FileSettings {
    fn default() -> Self {
        Self {
            password_file: None,
            interval: Duration::from_secs(1),
            timeouts: Timeouts::default(),
            discovery: true,
            read_only: false,
            theme: None,
            keys: std::collections::BTreeMap::new(),
            heartbeat: HeartbeatConfig::default(),
            thresholds: Thresholds::default(),
            probe: crate::probe::ProbeSettings::default(),
            drain: None,
            tls: crate::mysql::Tls::default(),
            cluster: super::DEFAULT_CLUSTER.to_owned(),
            report: super::report_file::ReportConfig::default(),
            ddl: crate::drain::KillSettings::default(),
            throttle: crate::alerts::throttle::ThrottleSettings::default(),
            headroom: super::headroom_file::HeadroomSettings::default(),
        }
    }
}

impl FileSettings {
    /// Reads only the settings of a config file, for tools and tests that need no nodes.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = read(path, true)?;
        let file_text = FileText { path, text: &text };
        FileConfig::parse(&file_text)?.settings(&file_text)
    }
}

/// What a file says about one node, before its DSN is parsed.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub role: Role,
    /// From a `name =` key; the DSN may carry one too.
    pub name: Option<(String, Origin)>,
    pub dsn: String,
    pub origin: Origin,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    password_file: Option<Spanned<String>>,
    interval: Option<Spanned<RawDuration>>,
    connect_timeout: Option<Spanned<RawDuration>>,
    query_timeout: Option<Spanned<RawDuration>>,
    discovery: Option<bool>,
    read_only: Option<bool>,
    ssl_mode: Option<Spanned<String>>,
    ssl_ca: Option<Spanned<String>>,
    theme: Option<String>,
    #[serde(default)]
    keys: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    heartbeat: HeartbeatFile,
    #[serde(default)]
    thresholds: ThresholdsFile,
    #[serde(default)]
    probe: ProbeFile,
    #[serde(default)]
    drain: super::drain_file::DrainFile,
    #[serde(default)]
    metrics: super::metrics_file::MetricsFile,
    #[serde(default)]
    report: super::report_file::ReportFile,
    #[serde(default)]
    ddl: DdlFile,
    #[serde(default)]
    throttle: super::throttle_file::ThrottleFile,
    #[serde(default)]
    headroom: super::headroom_file::HeadroomFile,
    /// `[primary]`, or `[[primary]]` once per root when several primaries feed the topology
    /// (multi-source: each gets a heartbeat writer of its own).
    #[serde(default)]
    primary: OneOrMany,
    #[serde(default)]
    replicas: Vec<NodeFile>,
}

/// `[ddl]`: `allow_kill = true` lets the TUI's kill key kill the session blocking a waiting DDL.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DdlFile {
    allow_kill: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeartbeatFile {
    interval: Option<Spanned<RawDuration>>,
    read_interval: Option<Spanned<RawDuration>>,
    writer_id: Option<Spanned<String>>,
    pt_table: Option<Spanned<String>>,
    by_position: Option<bool>,
    write_discovered_roots: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdsFile {
    sbm_disagree_seconds: Option<Spanned<f64>>,
    lag_p99_seconds: Option<Spanned<f64>>,
    /// Any value, so that a float or a negative number gets the same plain-words message.
    gtid_backlog: Option<Spanned<toml::Value>>,
    routing_max_lag_seconds: Option<Spanned<f64>>,
    clock_skew_ms: Option<Spanned<toml::Value>>,
    not_recovering_seconds: Option<Spanned<f64>>,
    raise_after: Option<Spanned<toml::Value>>,
    clear_after: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeFile {
    name: Option<Spanned<String>>,
    dsn: Spanned<String>,
}

/// A table or an array of tables. Read by hand rather than as an untagged enum, which would
/// buffer the values and lose the spans error messages name lines by.
#[derive(Debug)]
enum OneOrMany {
    One(NodeFile),
    Many(Vec<NodeFile>),
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a [primary] table, or [[primary]] tables (one per root)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<OneOrMany, A::Error> {
                let de = serde::de::value::MapAccessDeserializer::new(map);
                NodeFile::deserialize(de).map(OneOrMany::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<OneOrMany, A::Error> {
                let de = serde::de::value::SeqAccessDeserializer::new(seq);
                Vec::<NodeFile>::deserialize(de).map(OneOrMany::Many)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Default for OneOrMany {
    fn default() -> Self {
        Self::Many(Vec::new())
    }
}

impl OneOrMany {
    fn iter(&self) -> std::slice::Iter<'_, NodeFile> {
        match self {
            Self::One(node) => std::slice::from_ref(node).iter(),
            Self::Many(nodes) => nodes.iter(),
        }
    }
}

/// Reads a config file; `explicit` says whether `--config` named it (for the message).
pub fn read(path: &Path, explicit: bool) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Unreadable {
        path: path.to_owned(),
        explicit,
        source,
    })
}

impl HeartbeatFile {
    fn resolve(&self, file_text: &FileText<'_>) -> Result<HeartbeatConfig, ConfigError> {
        let d = HeartbeatConfig::default();
        Ok(HeartbeatConfig {
            interval: file_text.duration(
                self.interval.as_ref(),
                "heartbeat.interval",
                d.interval,
                parse_interval,
            )?,
            read_interval: file_text.duration(
                self.read_interval.as_ref(),
                "heartbeat.read_interval",
                d.read_interval,
                parse_interval,
            )?,
            read_interval_set: self.read_interval.is_some(),
            writer_id: file_text
                .checked(
                    self.writer_id.as_ref(),
                    "heartbeat.writer_id",
                    check_writer_id,
                )?
                .unwrap_or(d.writer_id),
            pt_table: file_text
                .checked(self.pt_table.as_ref(), "heartbeat.pt_table", check_pt_table)?
                .unwrap_or(d.pt_table),
            by_position: self.by_position.unwrap_or(d.by_position),
            write_discovered_roots: self
                .write_discovered_roots
                .unwrap_or(d.write_discovered_roots),
        })
    }
}

impl ThresholdsFile {
    fn resolve(&self, file_text: &FileText<'_>) -> Result<Thresholds, ConfigError> {
        let d = Thresholds::default();
        // A whole number at least `min`, else a message naming the key and the expected form.
        let whole = |value: Option<&Spanned<toml::Value>>,
                     key: &str,
                     min: u64,
                     default: u64,
                     form: &str| {
            let Some(v) = value else { return Ok(default) };
            count(v.get_ref())
                .filter(|n| *n >= min)
                .ok_or_else(|| ConfigError::Invalid {
                    at: file_text.at(v, key),
                    message: format!(
                        "found {}, expected {form}",
                        excerpt(&v.get_ref().to_string())
                    ),
                })
        };
        let samples = |value, key| {
            let n = whole(
                value,
                key,
                1,
                0,
                "a number of samples, 1 or more (such as 2)",
            )?;
            Ok::<u32, ConfigError>(u32::try_from(n).unwrap_or(u32::MAX))
        };
        Ok(Thresholds {
            clock_skew_ms: whole(
                self.clock_skew_ms.as_ref(),
                "thresholds.clock_skew_ms",
                0,
                d.clock_skew_ms,
                "milliseconds, 0 or more (such as 500)",
            )?,
            raise_after: match &self.raise_after {
                Some(v) => samples(Some(v), "thresholds.raise_after")?,
                None => d.raise_after,
            },
            clear_after: match &self.clear_after {
                Some(v) => samples(Some(v), "thresholds.clear_after")?,
                None => d.clear_after,
            },
            sbm_disagree_seconds: file_text.seconds(
                self.sbm_disagree_seconds.as_ref(),
                "thresholds.sbm_disagree_seconds",
                d.sbm_disagree_seconds,
            )?,
            lag_p99_seconds: file_text.seconds(
                self.lag_p99_seconds.as_ref(),
                "thresholds.lag_p99_seconds",
                d.lag_p99_seconds,
            )?,
            gtid_backlog: match &self.gtid_backlog {
                Some(n) => count(n.get_ref()).ok_or_else(|| ConfigError::Invalid {
                    at: file_text.at(n, "thresholds.gtid_backlog"),
                    message: format!(
                        "found {}, expected a number of transactions, 0 or more (such as 1000)",
                        excerpt(&n.get_ref().to_string())
                    ),
                })?,
                None => d.gtid_backlog,
            },
            routing_max_lag_seconds: file_text.seconds(
                self.routing_max_lag_seconds.as_ref(),
                "thresholds.routing_max_lag_seconds",
                d.routing_max_lag_seconds,
            )?,
            not_recovering_seconds: file_text.seconds(
                self.not_recovering_seconds.as_ref(),
                "thresholds.not_recovering_seconds",
                d.not_recovering_seconds,
            )?,
            // Set from `[headroom]`, where the disks are.
            disk_full_within: d.disk_full_within,
        })
    }
}

impl FileConfig {
    /// Reads `text` into the raw shape: a syntax error and a wrong value are told apart.
    pub fn parse(text: &FileText<'_>) -> Result<Self, ConfigError> {
        // Syntax first, on its own, so that a syntax error keeps the toml crate's full report
        // (line, column, the line itself and a caret) and is told apart from a wrong value.
        // Both reports may quote a DSN verbatim, password included: it is masked.
        if let Err(err) = text.text.parse::<toml::Table>() {
            return Err(ConfigError::Syntax {
                at: text.origin(err.span(), None),
                detail: redact_quoted(err.to_string().trim_end()),
            });
        }
        toml::from_str(text.text).map_err(|err| ConfigError::Invalid {
            at: text.origin(err.span(), None),
            message: shorten(&redact_quoted(err.message().trim_end())),
        })
    }
}

impl FileConfig {
    pub fn settings(&self, file_text: &FileText<'_>) -> Result<FileSettings, ConfigError> {
        let defaults = FileSettings::default();
        let headroom = self.headroom.resolve(file_text)?;
        let password_file = match &self.password_file {
            Some(p) if p.get_ref().trim().is_empty() => {
                return Err(ConfigError::Invalid {
                    at: file_text.at(p, "password_file"),
                    message: "found an empty path, expected the path of a file holding the \
                              password (or leave the key out)"
                        .to_owned(),
                });
            }
            // Relative to the config file, so a config and its password file can move together.
            Some(p) => Some(
                file_text
                    .path
                    .parent()
                    .unwrap_or_else(|| Path::new(""))
                    .join(p.get_ref()),
            ),
            None => None,
        };
        let mut settings = FileSettings {
            password_file,
            interval: file_text.duration(
                self.interval.as_ref(),
                "interval",
                defaults.interval,
                parse_interval,
            )?,
            timeouts: Timeouts {
                connect: file_text.duration(
                    self.connect_timeout.as_ref(),
                    "connect_timeout",
                    defaults.timeouts.connect,
                    parse_duration,
                )?,
                query: file_text.duration(
                    self.query_timeout.as_ref(),
                    "query_timeout",
                    defaults.timeouts.query,
                    parse_duration,
                )?,
            },
            discovery: self.discovery.unwrap_or(defaults.discovery),
            read_only: self.read_only.unwrap_or(defaults.read_only),
            theme: self.theme.clone().or(defaults.theme),
            keys: self.keys.clone(),
            heartbeat: self.heartbeat.resolve(file_text)?,
            thresholds: Thresholds {
                disk_full_within: headroom.disk_full_within,
                ..self.thresholds.resolve(file_text)?
            },
            headroom,
            probe: ProbeSettings::default(),
            drain: self.drain.resolve(file_text)?,
            cluster: self.metrics.cluster(file_text)?,
            report: self.report.resolve(file_text)?,
            ddl: crate::drain::KillSettings {
                allow_kill: self.ddl.allow_kill.unwrap_or(defaults.ddl.allow_kill),
            },
            throttle: self.throttle.resolve(file_text)?,
            tls: crate::mysql::Tls {
                mode: match &self.ssl_mode {
                    Some(m) => m
                        .get_ref()
                        .parse()
                        .map_err(|message| ConfigError::Invalid {
                            at: file_text.at(m, "ssl_mode"),
                            message,
                        })?,
                    None => crate::mysql::TlsMode::default(),
                },
                ca: self.ssl_ca.as_ref().map(|p| {
                    file_text
                        .path
                        .parent()
                        .unwrap_or_else(|| Path::new(""))
                        .join(p.get_ref())
                }),
            },
        };
        // After the thresholds: lag-threshold's default follows the routing threshold.
        settings.probe = self.probe.resolve(file_text, &settings.thresholds)?;
        Ok(settings)
    }

    /// The primary first, then the replicas in file order.
    pub fn nodes(&self, file_text: &FileText<'_>) -> Vec<NodeSpec> {
        let primary = self.primary.iter().map(|n| (Role::Primary, "primary", n));
        let replicas = self.replicas.iter().map(|n| (Role::Replica, "replicas", n));
        primary
            .chain(replicas)
            .map(|(role, table, node)| NodeSpec {
                role,
                name: node.name.as_ref().map(|name| {
                    (
                        name.get_ref().clone(),
                        file_text.at(name, &format!("{table}.name")),
                    )
                }),
                dsn: node.dsn.get_ref().clone(),
                origin: file_text.at(&node.dsn, &format!("{table}.dsn")),
            })
            .collect()
    }
}
