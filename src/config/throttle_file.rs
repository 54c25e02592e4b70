//! `[throttle]` in rwtop.toml: the lag limit of `GET /throttle` and the replicas it covers
//! (`docs/throttle.md`).
//!
//! ```toml
//! [throttle]
//! max_lag = "1s"            # the most heartbeat lag a covered replica may show for "go"
//! replicas = ["r1", "r2"]   # only these nodes; unset: every replica watched, discovered too
//! skip = ["delayed1"]       # never these nodes
//! ```

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;
use super::dsn::check_name;
use super::file_text::FileText;
use crate::alerts::throttle::ThrottleSettings;
use crate::units::parse::{RawDuration, parse_duration};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleFile {
    max_lag: Option<Spanned<RawDuration>>,
    replicas: Option<Spanned<Vec<String>>>,
    skip: Option<Spanned<Vec<String>>>,
}

impl ThrottleFile {
    pub fn resolve(&self, file_text: &FileText<'_>) -> Result<ThrottleSettings, ConfigError> {
        let defaults = ThrottleSettings::default();
        Ok(ThrottleSettings {
            max_lag: file_text.duration(
                self.max_lag.as_ref(),
                "throttle.max_lag",
                defaults.max_lag,
                parse_duration,
            )?,
            replicas: names(self.replicas.as_ref(), "throttle.replicas", file_text)?,
            skip: names(self.skip.as_ref(), "throttle.skip", file_text)?,
        })
    }
}

/// Node names, each checked as a node's name is; an empty list is the same as none.
fn names(
    list: Option<&Spanned<Vec<String>>>,
    key: &str,
    file_text: &FileText<'_>,
) -> Result<Vec<String>, ConfigError> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    for name in list.get_ref() {
        check_name(name).map_err(|message| ConfigError::Invalid {
            at: file_text.at(list, key),
            message: format!("{message}: each entry is the name of a node rwtop watches"),
        })?;
    }
    Ok(list.get_ref().clone())
}
