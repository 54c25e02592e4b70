//! `[metrics]` in rwtop.toml: what the Prometheus exposition says about itself.
//!
//! ```toml
//! [metrics]
//! cluster = "eu-west-orders"   # the `cluster` label on every series; "default" unless set
//! ```

use serde::Deserialize;
use toml::Spanned;

use super::file_text::FileText;
use super::{ConfigError, DEFAULT_CLUSTER};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsFile {
    cluster: Option<Spanned<String>>,
}

impl MetricsFile {
    /// The `cluster` label: as written, or [`DEFAULT_CLUSTER`]; an empty one is refused, since
    /// Prometheus treats an empty label as no label and the series of two rwtops would collide.
    pub fn cluster(&self, file_text: &FileText<'_>) -> Result<String, ConfigError> {
        match &self.cluster {
            None => Ok(DEFAULT_CLUSTER.to_owned()),
            Some(c) if c.get_ref().trim().is_empty() => Err(ConfigError::Invalid {
                at: file_text.at(c, "metrics.cluster"),
                message: format!(
                    "found an empty name, expected a name for this topology (e.g. \"eu-orders\"), \
                     or leave the key out for {DEFAULT_CLUSTER:?}"
                ),
            }),
            Some(c) => Ok(c.get_ref().clone()),
        }
    }
}
