//! `[headroom]` in rwtop.toml: whether rwtop reads each node's free disk space, and how soon a
//! disk must be about to fill for the `disk_filling` alert (docs/headroom.md).
//!
//! ```toml
//! [headroom]
//! read_disks = false          # read information_schema.DISKS (MariaDB's disks plugin, FILE)
//! disk_full_within = "1h"     # alert when a disk fills within this at the current rate
//! ```

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;
use super::file_text::FileText;
use crate::units::parse::{RawDuration, parse_duration};

/// `[headroom]` once checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadroomSettings {
    /// Read `information_schema.DISKS` on every node (off: rwtop reads no disk).
    pub read_disks: bool,
    /// The `disk_filling` alert's horizon.
    pub disk_full_within: Duration,
}

impl Default for HeadroomSettings {
    fn default() -> Self {
        Self {
            read_disks: false,
            disk_full_within: crate::alerts::Thresholds::default().disk_full_within,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadroomFile {
    read_disks: Option<bool>,
    disk_full_within: Option<Spanned<RawDuration>>,
}

impl HeadroomFile {
    pub fn resolve(&self, file_text: &FileText<'_>) -> Result<HeadroomSettings, ConfigError> {
        let defaults = HeadroomSettings::default();
        Ok(HeadroomSettings {
            read_disks: self.read_disks.unwrap_or(defaults.read_disks),
            disk_full_within: file_text.duration(
                self.disk_full_within.as_ref(),
                "headroom.disk_full_within",
                defaults.disk_full_within,
                parse_duration,
            )?,
        })
    }
}
