//! `[report]` in rwtop.toml: where DDL-window reports go and how long a window stays open once
//! everything is calm.
//!
//! ```toml
//! [report]
//! dir = "reports"    # relative to this file; unset: beside the recording, else the current folder
//! quiet = "10s"      # calm this long (no DDL, every replica under the routing threshold) closes it
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;
use super::file_text::FileText;
use crate::units::parse::{RawDuration, parse_duration};

/// `[report] quiet` unless set.
pub const DEFAULT_QUIET: Duration = Duration::from_secs(10);

/// `[report]` resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportConfig {
    /// `None`: beside the recording (`--record FILE`), else the current folder.
    pub dir: Option<PathBuf>,
    pub quiet: Duration,
}

impl Default for ReportConfig {
    fn default() -> Self {
        Self {
            dir: None,
            quiet: DEFAULT_QUIET,
        }
    }
}

impl ReportConfig {
    /// The folder reports go to, given the recording in progress (if any).
    #[must_use]
    pub fn folder(&self, recording: Option<&Path>) -> PathBuf {
        if let Some(dir) = &self.dir {
            return dir.clone();
        }
        recording
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_owned)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportFile {
    dir: Option<Spanned<String>>,
    quiet: Option<Spanned<RawDuration>>,
}

impl ReportFile {
    pub fn resolve(&self, file_text: &FileText<'_>) -> Result<ReportConfig, ConfigError> {
        let defaults = ReportConfig::default();
        let dir = match &self.dir {
            Some(d) if d.get_ref().trim().is_empty() => {
                return Err(ConfigError::Invalid {
                    at: file_text.at(d, "report.dir"),
                    message: "found an empty path, expected a folder for the reports (e.g. \
                              \"reports\"), or leave the key out to write them beside the \
                              recording"
                        .to_owned(),
                });
            }
            Some(d) => Some(
                file_text
                    .path
                    .parent()
                    .unwrap_or_else(|| Path::new(""))
                    .join(d.get_ref()),
            ),
            None => None,
        };
        Ok(ReportConfig {
            dir,
            quiet: file_text.duration(
                self.quiet.as_ref(),
                "report.quiet",
                defaults.quiet,
                parse_duration,
            )?,
        })
    }
}
