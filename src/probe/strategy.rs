//! The read-after-write waiting strategies (`docs/design.md`, "Test reads"), their parameters
//! and their names.
//!
//! A strategy is written `name` or `name(duration)`, as on the command line and in the config:
//! `gtid-wait(500ms)`, `sleep(100ms)`, `lag-threshold(1s)`. A bare name takes its parameter
//! from [`ProbeDefaults`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units::{parse_duration, short_duration};

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
    /// MaxScale `causal_reads=local`: `MASTER_GTID_WAIT` for the write's own GTID, retried on
    /// the primary on timeout (the mechanism of each mode is in [`super::modes`]).
    MaxscaleLocal(Duration),
    /// MaxScale `causal_reads=global`: waits for the newest GTID any session wrote.
    MaxscaleGlobal(Duration),
    /// MaxScale `causal_reads=universal`: reads the primary's position before the read, waits.
    MaxscaleUniversal(Duration),
    /// MaxScale `causal_reads=fast`: no wait; a replica whose monitored position has the write.
    MaxscaleFast(Fast),
    /// MaxScale `causal_reads=fast_global`.
    MaxscaleFastGlobal(Fast),
    /// MaxScale `causal_reads=fast_universal`.
    MaxscaleFastUniversal(Fast),
    /// MySQL Router `wait_for_my_writes` with `wait_for_my_writes_timeout` (0: a subset check).
    RouterWait(Duration),
    /// ProxySQL GTID causal reads: a replica known to have the write, else the primary.
    ProxysqlGtid,
    /// Group Replication `group_replication_consistency=BEFORE`, emulated on async replicas.
    GrBefore(Duration),
    /// Group Replication `group_replication_consistency=AFTER`, emulated on async replicas.
    GrAfter(Duration),
}

/// Where the MaxScale fast modes take a replica's GTID position from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Monitor {
    /// rwtop's own newest poll of the node, as the latest snapshot holds it (MaxScale's
    /// `monitor_interval` is then rwtop's poll interval).
    Polled,
    /// The prober's own monitor, reading the node's position every interval
    /// (`maxscale-fast(monitor=100ms)`).
    Every(Duration),
}

/// A MaxScale fast mode's parameters: where its positions come from, and when the
/// application reads after its write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fast {
    pub monitor: Monitor,
    /// The read comes this long after the write (a page's next request, say), and is routed
    /// on what the monitor knows then; zero (the default) reads right after the write, where a
    /// monitor has next to never seen it yet.
    pub after: Duration,
}

impl Fast {
    /// On rwtop's own polls, read right after the write.
    pub const POLLED: Self = Self {
        monitor: Monitor::Polled,
        after: Duration::ZERO,
    };

    /// Parses what a fast mode's parentheses hold: `monitor=INTERVAL`, `after=DELAY`, or both
    /// separated by a comma.
    fn parse(inner: &str, name: &str, text: &str) -> Result<Self, String> {
        let mut fast = Self::POLLED;
        for part in inner.split(',') {
            let part = part.trim();
            let bad = || {
                format!(
                    "strategy {text:?}: {name} takes monitor=INTERVAL and/or after=DELAY, e.g. \
                     {name}(monitor=100ms), {name}(monitor=100ms,after=300ms), or nothing to \
                     route on rwtop's own polls right after the write"
                )
            };
            let (key, value) = part.split_once('=').ok_or_else(bad)?;
            let duration = parse_duration(value.trim())
                .map_err(|reason| format!("strategy {text:?}: {key}: {reason}"));
            match key.trim() {
                "monitor" => fast.monitor = Monitor::Every(duration?),
                "after" => fast.after = duration?,
                _ => return Err(bad()),
            }
        }
        Ok(fast)
    }
}

impl fmt::Display for Fast {
    /// What goes between the parentheses; empty for [`Fast::POLLED`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Monitor::Every(d) = self.monitor {
            parts.push(format!("monitor={}", short_duration(d)));
        }
        if !self.after.is_zero() {
            parts.push(format!("after={}", short_duration(self.after)));
        }
        f.write_str(&parts.join(","))
    }
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
    (
        "maxscale-local(timeout)",
        "MaxScale causal_reads=local: wait for the write's GTID",
    ),
    (
        "maxscale-global(timeout)",
        "MaxScale causal_reads=global: wait for the newest GTID written",
    ),
    (
        "maxscale-universal(timeout)",
        "MaxScale causal_reads=universal: wait for the primary's position",
    ),
    (
        "maxscale-fast(monitor=d,after=d)",
        "MaxScale fast: a replica monitored past the write, else primary",
    ),
    (
        "maxscale-fast-global(monitor=d)",
        "MaxScale fast_global: as fast, for the newest GTID written",
    ),
    (
        "maxscale-fast-universal(monitor=d)",
        "MaxScale fast_universal: as fast, for the primary's position",
    ),
    (
        "router-wait(timeout)",
        "MySQL Router wait_for_my_writes (0: no wait), then the primary",
    ),
    (
        "proxysql-gtid",
        "ProxySQL GTID causal reads: a replica with the write, else primary",
    ),
    (
        "gr-before(timeout)",
        "Group Replication BEFORE: wait for all the primary committed",
    ),
    (
        "gr-after(timeout)",
        "Group Replication AFTER: the write waits for every replica",
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
            Self::MaxscaleLocal(d.timeout),
            Self::MaxscaleGlobal(d.timeout),
            Self::MaxscaleUniversal(d.timeout),
            Self::MaxscaleFast(Fast::POLLED),
            Self::MaxscaleFastGlobal(Fast::POLLED),
            Self::MaxscaleFastUniversal(Fast::POLLED),
            Self::RouterWait(d.timeout),
            Self::ProxysqlGtid,
            Self::GrBefore(d.timeout),
            Self::GrAfter(d.timeout),
        ]
    }

    /// The proxies' modes (`docs/design.md`, "The proxies' consistency modes as strategies"),
    /// routed by [`super::modes`].
    #[must_use]
    pub fn is_proxy_mode(&self) -> bool {
        matches!(
            self,
            Self::MaxscaleLocal(_)
                | Self::MaxscaleGlobal(_)
                | Self::MaxscaleUniversal(_)
                | Self::MaxscaleFast(_)
                | Self::MaxscaleFastGlobal(_)
                | Self::MaxscaleFastUniversal(_)
                | Self::RouterWait(_)
                | Self::ProxysqlGtid
                | Self::GrBefore(_)
                | Self::GrAfter(_)
        )
    }

    /// A fast mode's parameters.
    #[must_use]
    pub fn fast(&self) -> Option<Fast> {
        match *self {
            Self::MaxscaleFast(m)
            | Self::MaxscaleFastGlobal(m)
            | Self::MaxscaleFastUniversal(m) => Some(m),
            _ => None,
        }
    }

    /// The fast modes' monitor.
    #[must_use]
    pub fn monitor(&self) -> Option<Monitor> {
        self.fast().map(|f| f.monitor)
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
            Self::MaxscaleLocal(_) => "maxscale-local",
            Self::MaxscaleGlobal(_) => "maxscale-global",
            Self::MaxscaleUniversal(_) => "maxscale-universal",
            Self::MaxscaleFast(_) => "maxscale-fast",
            Self::MaxscaleFastGlobal(_) => "maxscale-fast-global",
            Self::MaxscaleFastUniversal(_) => "maxscale-fast-universal",
            Self::RouterWait(_) => "router-wait",
            Self::ProxysqlGtid => "proxysql-gtid",
            Self::GrBefore(_) => "gr-before",
            Self::GrAfter(_) => "gr-after",
        }
    }

    /// The duration parameter, if the strategy has one (the fast modes' monitor interval is
    /// [`Self::monitor`]).
    #[must_use]
    pub fn param(&self) -> Option<Duration> {
        match *self {
            Self::None
            | Self::Primary
            | Self::ProxysqlGtid
            | Self::MaxscaleFast(_)
            | Self::MaxscaleFastGlobal(_)
            | Self::MaxscaleFastUniversal(_) => None,
            Self::Sleep(d)
            | Self::SbmZero(d)
            | Self::PosEqual(d)
            | Self::GtidEqual(d)
            | Self::SemisyncPos(d)
            | Self::PosWait(d)
            | Self::GtidWait(d)
            | Self::Sticky(d)
            | Self::LagThreshold(d)
            | Self::MaxscaleLocal(d)
            | Self::MaxscaleGlobal(d)
            | Self::MaxscaleUniversal(d)
            | Self::RouterWait(d)
            | Self::GrBefore(d)
            | Self::GrAfter(d) => Some(d),
        }
    }

    /// Parses `name` or `name(duration)`; a bare name takes its parameter from `defaults`. The
    /// fast modes take `monitor=interval`; `router-wait` also takes `0` (a check, no wait).
    pub fn parse(text: &str, defaults: &ProbeDefaults) -> Result<Self, String> {
        let text = text.trim();
        let (name, inner) = crate::units::parse::name_and_parameter(text, "strategy")?;
        let duration =
            |t: &str| parse_duration(t).map_err(|reason| format!("strategy {text:?}: {reason}"));
        if let Some(fast) = fast_mode(name) {
            return Ok(fast(match inner {
                None => Fast::POLLED,
                Some(inner) => Fast::parse(inner, name, text)?,
            }));
        }
        let param = match inner {
            Some(t) if name == "router-wait" && is_zero(t) => Some(Duration::ZERO),
            Some(t) => Some(duration(t)?),
            None => None,
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
            "maxscale-local" => Self::MaxscaleLocal(pick(defaults.timeout)),
            "maxscale-global" => Self::MaxscaleGlobal(pick(defaults.timeout)),
            "maxscale-universal" => Self::MaxscaleUniversal(pick(defaults.timeout)),
            "router-wait" => Self::RouterWait(pick(defaults.timeout)),
            "proxysql-gtid" => Self::ProxysqlGtid,
            "gr-before" => Self::GrBefore(pick(defaults.timeout)),
            "gr-after" => Self::GrAfter(pick(defaults.timeout)),
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

/// The constructor of a MaxScale fast mode, by name.
fn fast_mode(name: &str) -> Option<fn(Fast) -> Strategy> {
    match name {
        "maxscale-fast" => Some(Strategy::MaxscaleFast),
        "maxscale-fast-global" => Some(Strategy::MaxscaleFastGlobal),
        "maxscale-fast-universal" => Some(Strategy::MaxscaleFastUniversal),
        _ => None,
    }
}

/// `0`, `0s`, `0ms`: the zero only `router-wait` takes.
fn is_zero(text: &str) -> bool {
    let number = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    matches!(text.trim_start_matches(number), "" | "s" | "ms" | "us")
        && !number.is_empty()
        && number.chars().all(|c| c == '0' || c == '.')
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

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.param(), self.fast()) {
            (_, Some(fast)) if fast != Fast::POLLED => write!(f, "{}({fast})", self.name()),
            (None, _) => f.write_str(self.name()),
            (Some(d), _) => write!(f, "{}({})", self.name(), short_duration(d)),
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
mod tests;
