//! The read-after-write waiting strategies (DESIGN.md §6), their parameters and their names.
//!
//! A strategy is written `name` or `name(duration)`, as on the command line and in the config:
//! `gtid-wait(500ms)`, `sleep(100ms)`, `lag-threshold(1s)`. A bare name takes its parameter
//! from [`ProbeDefaults`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units::parse_duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strategy {
    /// Read the replica at once: the baseline that shows stale reads.
    None,
    /// Read the primary: always fresh, all the load on the primary.
    Primary,
    /// Sleep, then read the replica.
    Sleep(Duration),
    /// Poll the replica until `Seconds_Behind_Master` is 0, else fall back.
    SbmZero(Duration),
    /// Poll until the replica's applied position reaches the primary's position after the write.
    PosEqual(Duration),
    /// Poll until the replica's applied GTIDs include the primary's after the write.
    GtidEqual(Duration),
    /// With semi-sync on: poll until the replica has *received* the write's position.
    SemisyncPos(Duration),
    /// `MASTER_POS_WAIT` / `SOURCE_POS_WAIT` for the primary's position after the write.
    PosWait(Duration),
    /// `MASTER_GTID_WAIT` / `WAIT_FOR_EXECUTED_GTID_SET` for the write's own GTID.
    GtidWait(Duration),
    /// Read-your-writes window: reads go to the primary for the window, then to the replica.
    Sticky(Duration),
    /// Route to a replica whose measured heartbeat lag is at most this, else the primary.
    LagThreshold(Duration),
}

/// What each strategy's parameter means, for help texts.
pub const CATALOGUE: &[(&str, &str)] = &[
    ("none", "read the replica at once (the baseline)"),
    ("primary", "read the primary"),
    ("sleep(d)", "sleep d, then read the replica"),
    ("sbm-zero(timeout)", "wait for Seconds_Behind_Master = 0"),
    (
        "pos-equal(timeout)",
        "wait for the applied position to reach the write's",
    ),
    (
        "gtid-equal(timeout)",
        "wait for the applied GTIDs to include the primary's",
    ),
    (
        "semisync-pos(timeout)",
        "semi-sync on: wait for the replica to receive the write",
    ),
    (
        "pos-wait(timeout)",
        "MASTER_POS_WAIT / SOURCE_POS_WAIT on the replica",
    ),
    (
        "gtid-wait(timeout)",
        "MASTER_GTID_WAIT / WAIT_FOR_EXECUTED_GTID_SET on the replica",
    ),
    (
        "sticky(window)",
        "primary for the window after a write, then the replica",
    ),
    (
        "lag-threshold(max)",
        "a replica whose measured lag <= max, else the primary",
    ),
];

/// The parameters a bare strategy name takes (`[probe]` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeDefaults {
    /// How long the waiting strategies wait before falling back to the primary.
    pub timeout: Duration,
    pub sleep: Duration,
    pub sticky_window: Duration,
    pub max_lag: Duration,
}

impl Default for ProbeDefaults {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(1),
            sleep: Duration::from_millis(100),
            sticky_window: Duration::from_secs(2),
            max_lag: Duration::from_secs(1),
        }
    }
}

impl Strategy {
    /// Every strategy with its default parameter, in catalogue order (`--strategy all`).
    #[must_use]
    pub fn all(d: &ProbeDefaults) -> Vec<Self> {
        vec![
            Self::None,
            Self::Primary,
            Self::Sleep(d.sleep),
            Self::SbmZero(d.timeout),
            Self::PosEqual(d.timeout),
            Self::GtidEqual(d.timeout),
            Self::SemisyncPos(d.timeout),
            Self::PosWait(d.timeout),
            Self::GtidWait(d.timeout),
            Self::Sticky(d.sticky_window),
            Self::LagThreshold(d.max_lag),
        ]
    }

    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Primary => "primary",
            Self::Sleep(_) => "sleep",
            Self::SbmZero(_) => "sbm-zero",
            Self::PosEqual(_) => "pos-equal",
            Self::GtidEqual(_) => "gtid-equal",
            Self::SemisyncPos(_) => "semisync-pos",
            Self::PosWait(_) => "pos-wait",
            Self::GtidWait(_) => "gtid-wait",
            Self::Sticky(_) => "sticky",
            Self::LagThreshold(_) => "lag-threshold",
        }
    }

    /// The duration parameter, if the strategy has one.
    #[must_use]
    pub fn param(&self) -> Option<Duration> {
        match *self {
            Self::None | Self::Primary => None,
            Self::Sleep(d)
            | Self::SbmZero(d)
            | Self::PosEqual(d)
            | Self::GtidEqual(d)
            | Self::SemisyncPos(d)
            | Self::PosWait(d)
            | Self::GtidWait(d)
            | Self::Sticky(d)
            | Self::LagThreshold(d) => Some(d),
        }
    }

    /// Parses `name` or `name(duration)`; a bare name takes its parameter from `defaults`.
    pub fn parse(text: &str, defaults: &ProbeDefaults) -> Result<Self, String> {
        let text = text.trim();
        let (name, param) = match text.split_once('(') {
            None => (text, None),
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| {
                    format!("strategy {text:?} is missing its closing ')': write e.g. sleep(100ms)")
                })?;
                let d = parse_duration(inner)
                    .map_err(|reason| format!("strategy {text:?}: {reason}"))?;
                (name.trim(), Some(d))
            }
        };
        let pick = |default: Duration| param.unwrap_or(default);
        let strategy = match name {
            "none" => Self::None,
            "primary" => Self::Primary,
            "sleep" => Self::Sleep(pick(defaults.sleep)),
            "sbm-zero" => Self::SbmZero(pick(defaults.timeout)),
            "pos-equal" => Self::PosEqual(pick(defaults.timeout)),
            "gtid-equal" => Self::GtidEqual(pick(defaults.timeout)),
            "semisync-pos" => Self::SemisyncPos(pick(defaults.timeout)),
            "pos-wait" => Self::PosWait(pick(defaults.timeout)),
            "gtid-wait" => Self::GtidWait(pick(defaults.timeout)),
            "sticky" => Self::Sticky(pick(defaults.sticky_window)),
            "lag-threshold" => Self::LagThreshold(pick(defaults.max_lag)),
            other => {
                return Err(format!(
                    "unknown strategy {other:?}: expected one of {}, or all",
                    names().join(", ")
                ));
            }
        };
        if param.is_some() && strategy.param().is_none() {
            return Err(format!(
                "strategy {name:?} takes no parameter: write {name} alone"
            ));
        }
        Ok(strategy)
    }

    /// Parses a comma-separated list, where `all` stands for every strategy.
    pub fn parse_list(text: &str, defaults: &ProbeDefaults) -> Result<Vec<Self>, String> {
        let mut out = Vec::new();
        for part in split_top_level(text) {
            if part.trim() == "all" {
                out.extend(Self::all(defaults));
            } else {
                out.push(Self::parse(part, defaults)?);
            }
        }
        if out.is_empty() {
            return Err(
                "no strategy given: name one, a list such as none,gtid-wait, or all".into(),
            );
        }
        Ok(out)
    }
}

/// Strategy names, for messages.
#[must_use]
pub fn names() -> Vec<&'static str> {
    Strategy::all(&ProbeDefaults::default())
        .iter()
        .map(Strategy::name)
        .collect()
}

/// Splits on commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
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

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.param() {
            None => f.write_str(self.name()),
            Some(d) => write!(f, "{}({})", self.name(), short_duration(d)),
        }
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse(text, &ProbeDefaults::default())
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_prints_as_it_parses() {
        let d = ProbeDefaults::default();
        for s in Strategy::all(&d) {
            assert_eq!(s.to_string().parse::<Strategy>(), Ok(s), "{s}");
        }
        for text in [
            "sleep(250ms)",
            "pos-wait(1.5s)",
            "sticky(120s)",
            "gtid-wait(300ms)",
        ] {
            assert_eq!(text.parse::<Strategy>().unwrap().to_string(), text);
        }
    }

    #[test]
    fn bare_names_take_the_configured_defaults() {
        let d = ProbeDefaults {
            timeout: Duration::from_millis(700),
            ..ProbeDefaults::default()
        };
        assert_eq!(
            Strategy::parse("gtid-wait", &d),
            Ok(Strategy::GtidWait(Duration::from_millis(700)))
        );
        assert_eq!(
            Strategy::parse(" sleep( 20ms ) ", &d),
            Ok(Strategy::Sleep(Duration::from_millis(20)))
        );
    }

    #[test]
    fn mistakes_are_named() {
        let d = ProbeDefaults::default();
        let err = Strategy::parse("gtid-wiat", &d).unwrap_err();
        assert!(err.contains("unknown strategy \"gtid-wiat\"") && err.contains("gtid-wait"));
        assert!(
            Strategy::parse("none(1s)", &d)
                .unwrap_err()
                .contains("takes no parameter")
        );
        assert!(
            Strategy::parse("sleep(1s", &d)
                .unwrap_err()
                .contains("closing")
        );
        assert!(
            Strategy::parse("sleep(-1s)", &d)
                .unwrap_err()
                .contains("positive")
        );
        assert!(
            Strategy::parse_list(" , ", &d)
                .unwrap_err()
                .contains("no strategy")
        );
    }

    #[test]
    fn lists_split_outside_parentheses_and_expand_all() {
        let d = ProbeDefaults::default();
        let list = Strategy::parse_list("none,sleep(1.5s),gtid-wait", &d).unwrap();
        assert_eq!(
            list,
            vec![
                Strategy::None,
                Strategy::Sleep(Duration::from_millis(1500)),
                Strategy::GtidWait(d.timeout)
            ]
        );
        assert_eq!(
            Strategy::parse_list("all", &d).unwrap().len(),
            CATALOGUE.len()
        );
    }
}
