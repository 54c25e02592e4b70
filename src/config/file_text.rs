//! A config file's text beside its parsed values: where a span is (file, line, column and the
//! key), and the checked reads of durations, seconds and strings that name that place when they
//! refuse a value. Every `[table]` of rwtop.toml resolves its values through it.

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::{ConfigError, Origin};
use crate::units::parse::RawDuration;

/// A config file's text, to turn byte spans into line, column and key.
pub struct FileText<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl FileText<'_> {
    /// Where a span is, naming the key found on its line unless the caller knows better.
    pub fn origin(&self, span: Option<Range<usize>>, key: Option<&str>) -> Origin {
        let position = span.map(|span| self.position(span.start));
        let key = key.map(str::to_owned).or_else(|| {
            position.and_then(|(line, _)| super::location::key_on_line(self.text, line))
        });
        Origin::File {
            path: self.path.to_owned(),
            position,
            key,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    fn position(&self, offset: usize) -> (u32, u32) {
        crate::config::location::line_column(self.text, offset)
    }

    pub fn at<T>(&self, value: &Spanned<T>, key: &str) -> Origin {
        self.origin(Some(value.span()), Some(key))
    }

    /// `parse` is `units::parse_duration` or, for intervals, `units::parse_interval`.
    pub(super) fn duration(
        &self,
        value: Option<&Spanned<RawDuration>>,
        key: &str,
        default: Duration,
        parse: fn(&str) -> Result<Duration, String>,
    ) -> Result<Duration, ConfigError> {
        value.map_or(Ok(default), |value| {
            parse(&value.get_ref().0).map_err(|reason| ConfigError::BadDuration {
                at: self.at(value, key),
                reason,
            })
        })
    }

    /// A string value run through a check that explains its refusal.
    pub(super) fn checked(
        &self,
        value: Option<&Spanned<String>>,
        key: &str,
        check: fn(&str) -> Result<(), String>,
    ) -> Result<Option<String>, ConfigError> {
        let Some(value) = value else {
            return Ok(None);
        };
        check(value.get_ref()).map_err(|message| ConfigError::Invalid {
            at: self.at(value, key),
            message,
        })?;
        Ok(Some(value.get_ref().clone()))
    }

    pub(super) fn seconds(
        &self,
        value: Option<&Spanned<f64>>,
        key: &str,
        default: f64,
    ) -> Result<f64, ConfigError> {
        match value {
            None => Ok(default),
            Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => Ok(*v.get_ref()),
            Some(v) => Err(ConfigError::Invalid {
                at: self.at(v, key),
                message: format!(
                    "found {}, expected a number of seconds, 0 or more (such as 1.0)",
                    v.get_ref()
                ),
            }),
        }
    }
}

/// A backlog counts transactions, so only a whole number, 0 or more, passes.
pub(super) fn count(value: &toml::Value) -> Option<u64> {
    value.as_integer().and_then(|n| u64::try_from(n).ok())
}
