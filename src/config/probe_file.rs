//! `[probe]` in rwtop.toml: the test reads' strategy and the values its bare names take.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::file_text::{FileText, count};
use super::{ConfigError, Thresholds};
use crate::probe::{ProbeDefaults, ProbeSettings, Strategy};
use crate::units::parse::{MAX_DURATION, RawDuration, parse_duration};
use crate::units::{excerpt, quoted};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProbeFile {
    strategy: Option<Spanned<String>>,
    timeout: Option<Spanned<RawDuration>>,
    sleep: Option<Spanned<RawDuration>>,
    sticky_window: Option<Spanned<RawDuration>>,
    /// Unset: `thresholds.routing_max_lag_seconds`.
    max_lag: Option<Spanned<RawDuration>>,
    count: Option<Spanned<toml::Value>>,
    spacing: Option<Spanned<RawDuration>>,
}

impl ProbeFile {
    /// The parameters first, then the strategy, whose bare name takes them.
    pub(super) fn resolve(
        &self,
        file_text: &FileText<'_>,
        thresholds: &Thresholds,
    ) -> Result<ProbeSettings, ConfigError> {
        let d = ProbeSettings::default();
        // Capped like a written duration, so the strategy prints as text that reads back.
        let routing = Duration::try_from_secs_f64(thresholds.routing_max_lag_seconds)
            .unwrap_or(Duration::MAX)
            .min(MAX_DURATION);
        let defaults = ProbeDefaults {
            timeout: file_text.duration(
                self.timeout.as_ref(),
                "probe.timeout",
                d.defaults.timeout,
                parse_duration,
            )?,
            sleep: file_text.duration(
                self.sleep.as_ref(),
                "probe.sleep",
                d.defaults.sleep,
                parse_duration,
            )?,
            sticky_window: file_text.duration(
                self.sticky_window.as_ref(),
                "probe.sticky_window",
                d.defaults.sticky_window,
                parse_duration,
            )?,
            max_lag: file_text.duration(
                self.max_lag.as_ref(),
                "probe.max_lag",
                routing,
                parse_duration,
            )?,
        };
        let strategy = match &self.strategy {
            None => Strategy::GtidWait(defaults.timeout),
            Some(text) => {
                strategy(text.get_ref(), &defaults).map_err(|message| ConfigError::Invalid {
                    at: file_text.at(text, "probe.strategy"),
                    message,
                })?
            }
        };
        let count = match &self.count {
            None => d.count,
            Some(v) => count(v.get_ref())
                .filter(|n| *n >= 1)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| ConfigError::Invalid {
                    at: file_text.at(v, "probe.count"),
                    message: format!(
                        "found {}, expected a number of probes per strategy, 1 or more (such as 10)",
                        excerpt(&v.get_ref().to_string())
                    ),
                })?,
        };
        Ok(ProbeSettings {
            defaults,
            strategy,
            count,
            spacing: file_text.duration(
                self.spacing.as_ref(),
                "probe.spacing",
                d.spacing,
                parse_duration,
            )?,
        })
    }
}

/// The one strategy a single test read uses; lists belong on the command line.
fn strategy(text: &str, defaults: &ProbeDefaults) -> Result<Strategy, String> {
    if text.trim() == "all" || text.contains(',') {
        return Err(format!(
            "found {}, expected one strategy (such as \"gtid-wait\" or \"sleep(100ms)\"): \
             the one a single test read uses; a list or all goes on the command line, as in \
             `rwtop probe --strategy all`",
            quoted(text)
        ));
    }
    // Parse's message offers `all` too, which only the command line takes.
    Strategy::parse(text, defaults).map_err(|m| m.trim_end_matches(", or all").to_owned())
}
