//! The settings a what-if can judge without writing: their names (those of `rwtop probe`'s
//! strategies where one exists, `fast(interval)` for `MaxScale`'s `causal_reads=fast` at a
//! monitor interval), and the default grid of values.

use std::fmt;
use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::units::{self, parse_duration};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// Read the replica at once.
    None,
    /// Read the primary (the reference: never stale, all the load on the primary).
    Primary,
    /// Sleep `d`, then read the replica.
    Sleep(Duration),
    /// Reads within the window after a write go to the primary, later ones to the replica.
    Sticky(Duration),
    /// Read the replica when its measured lag is at most this, else the primary.
    LagThreshold(Duration),
    /// Wait (up to the timeout) for `Seconds_Behind_Master` = 0, else read the primary.
    SbmZero(Duration),
    /// `MASTER_GTID_WAIT` / `WAIT_FOR_EXECUTED_GTID_SET` with this timeout, else the primary.
    GtidWait(Duration),
    /// `MASTER_POS_WAIT` / `SOURCE_POS_WAIT` with this timeout, else the primary.
    PosWait(Duration),
    /// `MaxScale` `causal_reads=fast`: no wait; the replica when its position, as last
    /// monitored (every `interval`), covers the write, else the primary.
    Fast(Duration),
}

/// Names and what the parameter means, for errors and help.
pub const NAMES: &[&str] = &[
    "none",
    "primary",
    "sleep(d)",
    "sticky(window)",
    "lag-threshold(max)",
    "sbm-zero(timeout)",
    "gtid-wait(timeout)",
    "pos-wait(timeout)",
    "fast(monitor interval)",
];

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

impl Setting {
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Primary => "primary",
            Self::Sleep(_) => "sleep",
            Self::Sticky(_) => "sticky",
            Self::LagThreshold(_) => "lag-threshold",
            Self::SbmZero(_) => "sbm-zero",
            Self::GtidWait(_) => "gtid-wait",
            Self::PosWait(_) => "pos-wait",
            Self::Fast(_) => "fast",
        }
    }

    #[must_use]
    pub fn param(&self) -> Option<Duration> {
        match *self {
            Self::None | Self::Primary => None,
            Self::Sleep(d)
            | Self::Sticky(d)
            | Self::LagThreshold(d)
            | Self::SbmZero(d)
            | Self::GtidWait(d)
            | Self::PosWait(d)
            | Self::Fast(d) => Some(d),
        }
    }

    /// The default grid: every setting over the values a team would try.
    #[must_use]
    pub fn grid() -> Vec<Self> {
        let waits = [100, 250, 500, 1_000, 2_000, 5_000];
        let mut out = vec![Self::None, Self::Primary];
        out.extend([50, 100, 250, 500, 1_000, 2_000].map(|n| Self::Sleep(ms(n))));
        out.extend(waits.map(|n| Self::Sticky(ms(n))));
        out.extend(waits.map(|n| Self::LagThreshold(ms(n))));
        out.extend([500, 1_000, 2_000, 5_000].map(|n| Self::SbmZero(ms(n))));
        out.extend(waits.map(|n| Self::GtidWait(ms(n))));
        out.extend(waits.map(|n| Self::PosWait(ms(n))));
        out.extend([100, 250, 500, 1_000, 2_000].map(|n| Self::Fast(ms(n))));
        out
    }

    /// Parses `name` or `name(duration)`; every setting but `none` and `primary` needs its
    /// duration.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (name, inner) = crate::units::parse::name_and_parameter(text, "setting")?;
        let param = inner
            .map(|inner| {
                parse_duration(inner.trim_start_matches("monitor="))
                    .map_err(|reason| format!("setting {text:?}: {reason}"))
            })
            .transpose()?;
        let with = |make: fn(Duration) -> Self| {
            param.map(make).ok_or_else(|| {
                format!("setting {name:?} needs a duration: write e.g. {name}(500ms)")
            })
        };
        let setting = match name {
            "none" => Self::None,
            "primary" => Self::Primary,
            "sleep" => with(Self::Sleep)?,
            "sticky" => with(Self::Sticky)?,
            "lag-threshold" => with(Self::LagThreshold)?,
            "sbm-zero" => with(Self::SbmZero)?,
            "gtid-wait" => with(Self::GtidWait)?,
            "pos-wait" => with(Self::PosWait)?,
            "fast" | "maxscale-fast" => with(Self::Fast)?,
            other => {
                return Err(format!(
                    "unknown setting {other:?}: expected one of {}",
                    NAMES.join(", ")
                ));
            }
        };
        if param.is_some() && setting.param().is_none() {
            return Err(format!(
                "setting {name:?} takes no duration: write {name} alone"
            ));
        }
        Ok(setting)
    }

    /// Parses a comma-separated list (commas inside parentheses do not split).
    pub fn parse_list(text: &str) -> Result<Vec<Self>, String> {
        let list: Vec<Self> = text
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(Self::parse)
            .collect::<Result<_, _>>()?;
        if list.is_empty() {
            return Err("no setting given: write e.g. none,gtid-wait(500ms)".to_owned());
        }
        Ok(list)
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.param() {
            None => f.write_str(self.name()),
            Some(d) => write!(f, "{}({})", self.name(), units::duration(d)),
        }
    }
}

impl Serialize for Setting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
