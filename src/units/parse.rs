//! Durations as people write them in a config file or on the command line.
//!
//! The arithmetic is done on integer nanoseconds rather than `f64` so that `"0.3s"` is exactly
//! 300 ms: a poll interval that drifts by a nanosecond would be harmless, but a test comparing
//! the sample config against the defaults would not be.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};

use super::quote::quoted;

/// The accepted forms, quoted by every duration error so the fix is in the message.
pub const EXPECTED: &str = concat!(
    "a duration such as \"250ms\", \"1s\", \"1.5s\", \"2m\" (units ms, s, m, h) ",
    "or a number of seconds"
);

/// The longest poll or heartbeat interval: past an hour a "monitor" no longer monitors, and such
/// a value is nearly always a unit slip (`"2h"` for `"2s"`).
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);

/// The longest duration of any kind (a timeout, a wait, a window, a run): past a week it is a
/// slip, and far past it, adding it to "now" overflows the clock and panics.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Parses `"250ms"`, `"1s"`, `"1.5s"`, `"2m"`, `"1h"` or a bare number of seconds, up to
/// [`MAX_DURATION`]. `us` (microseconds) is read too, since that is how a strategy prints a
/// parameter finer than a millisecond.
///
/// The error is the reason alone (no key, no file): callers know where the text came from and
/// wrap it in their own error (the config's `ConfigError::BadDuration`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    // Quoted in every refusal, cut: a value can be any length, a message must not be.
    let shown = quoted(text);
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit_nanos: u128 = match unit.trim() {
        "" | "s" => NANOS_PER_SEC,
        "ms" => 1_000_000,
        "us" => 1_000,
        "m" => 60 * NANOS_PER_SEC,
        "h" => 3600 * NANOS_PER_SEC,
        _ if trimmed.starts_with('-') => {
            return Err(format!("found {shown}; it must be positive: {EXPECTED}"));
        }
        other => {
            return Err(format!(
                "found {shown}, unknown unit {}: expected {EXPECTED}",
                quoted(other)
            ));
        }
    };
    let nanos = decimal_nanos(number, unit_nanos)
        .ok_or_else(|| format!("found {shown}: expected {EXPECTED}"))?;
    if nanos == 0 {
        return Err(format!(
            "found {shown}; it must be more than zero: {EXPECTED}"
        ));
    }
    if nanos > MAX_DURATION.as_nanos() {
        return Err(format!(
            "found {shown}, which is far too long (at most 168h, a week): expected {EXPECTED}"
        ));
    }
    let secs = u64::try_from(nanos / NANOS_PER_SEC)
        .map_err(|_| format!("found {shown}, which is far too long: expected {EXPECTED}"))?;
    // The remainder of a division by 10^9 always fits.
    let sub = u32::try_from(nanos % NANOS_PER_SEC).unwrap_or(0);
    Ok(Duration::new(secs, sub))
}

/// Splits `name` or `name(parameter)` (a strategy or a what-if setting as written) into the
/// name and the parameter, both trimmed; `what` names the kind in the message for a missing `)`.
pub fn name_and_parameter<'a>(
    text: &'a str,
    what: &str,
) -> Result<(&'a str, Option<&'a str>), String> {
    let text = text.trim();
    match text.split_once('(') {
        None => Ok((text, None)),
        Some((name, rest)) => {
            let inner = rest.strip_suffix(')').ok_or_else(|| {
                format!("{what} {text:?} is missing its closing ')': write e.g. sleep(100ms)")
            })?;
            Ok((name.trim(), Some(inner.trim())))
        }
    }
}

/// A poll or heartbeat interval: a duration of at most [`MAX_INTERVAL`].
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = parse_duration(text)?;
    if interval > MAX_INTERVAL {
        return Err(format!(
            "found {}; an interval is at most 1h: expected {EXPECTED}",
            quoted(text)
        ));
    }
    Ok(interval)
}

/// `digits[.digits]` times the unit, in nanoseconds; `None` for anything else or overflow.
fn decimal_nanos(number: &str, unit_nanos: u128) -> Option<u128> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits_only(whole) || !digits_only(fraction) {
        return None;
    }
    // More decimals than nanosecond precision needs are dropped rather than refused.
    let fraction = &fraction[..fraction.len().min(18)];
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut total = whole.checked_mul(unit_nanos)?;
    if !fraction.is_empty() {
        let scale = 10u128.pow(u32::try_from(fraction.len()).ok()?);
        let part: u128 = fraction.parse().ok()?;
        total = total.checked_add(part.checked_mul(unit_nanos)? / scale)?;
    }
    Some(total)
}

/// A duration value as found in TOML, kept as text until its key is known, so the error can
/// name the key, its line and what was written.
#[derive(Debug, Clone, PartialEq)]
pub struct RawDuration(pub String);

impl<'de> de::Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawDurationVisitor)
    }
}

struct RawDurationVisitor;

impl Visitor<'_> for RawDurationVisitor {
    type Value = RawDuration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDuration, E> {
        Ok(RawDuration(v.to_owned()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDuration, E> {
        Ok(RawDuration(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDuration, E> {
        Ok(RawDuration(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDuration, E> {
        // `f64`'s Display never uses an exponent, so the text parses like a typed number;
        // NaN and infinities come out as words and are refused by `parse_duration`.
        Ok(RawDuration(v.to_string()))
    }
}

/// `250ms`, `1s`, `1.5s`: the shortest form [`parse_duration`] reads back to the same value.
#[must_use]
pub fn short_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !d.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{}us", d.as_micros())
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        let number = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{}s", number.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0.3s"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration(".5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 10 ms "), Ok(Duration::from_millis(10)));
    }

    #[test]
    fn refusals_quote_the_text_and_the_forms() {
        for bad in [
            "", "0", "0s", "-1s", "-2", "1x", "s", "1.2.3s", "nan", "inf", "1e3",
        ] {
            let err = parse_duration(bad).expect_err(bad);
            assert!(err.contains(&format!("{bad:?}")), "{err}");
            assert!(err.contains("\"250ms\""), "{err}");
        }
        assert!(parse_duration("999999999999999999999999h").is_err());
        // Past a week, and so far from overflowing `Instant + d`.
        assert!(parse_duration("169h").unwrap_err().contains("far too long"));
        assert_eq!(parse_duration("168h"), Ok(MAX_DURATION));
        assert!(parse_duration("1000000000000000h").is_err());
        assert_eq!(parse_duration("1500us"), Ok(Duration::from_micros(1500)));
        let long = parse_duration(&"9".repeat(10_000)).unwrap_err();
        assert!(long.len() < 400, "{long}");
    }
}
