//! The throttle verdict: whether an online schema change may copy its next chunk, judged on the
//! heartbeat lag of every replica it covers (`GET /throttle`, `docs/throttle.md`).
//!
//! Only the heartbeat lag counts, never `Seconds_Behind_Master`: a stalled link keeps that at 0
//! while the replica falls behind, which is how a tool that reads it keeps copying. A replica is
//! under the limit only when rwtop can show it is: an exact lag at or below it, or a lower bound
//! whose upper bound is at or below it. A lower bound that may be over, an unknown lag, a replica
//! that has not answered and a snapshot too old to describe now all throttle, each with its
//! reason: a throttle that says "go" when it cannot see is the failure it exists to prevent.
//!
//! A pure function of the snapshot, the settings and the snapshot's age: no clock, no I/O.

use std::time::Duration;

use crate::store::alert_view::place;
use crate::store::lag::Lag;
use crate::store::{NodeView, ReplicaView, Role, Snapshot};
use crate::units;

/// `[throttle] max_lag` unless set: pt-online-schema-change's own `--max-lag` default.
pub const DEFAULT_MAX_LAG: Duration = Duration::from_secs(1);

/// A snapshot older than this no longer describes the replicas: the engine stopped publishing
/// (it publishes every 250 ms to 1 s while anything changes, and the heartbeat always does).
pub const STALE_SNAPSHOT: Duration = Duration::from_secs(10);

/// What the throttle covers and how far behind a replica may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleSettings {
    /// The most heartbeat lag a replica may show for the verdict to be "go".
    pub max_lag: Duration,
    /// Only these nodes (by name); empty: every replica rwtop watches, discovered ones included.
    pub replicas: Vec<String>,
    /// Never these nodes (a delayed or broken replica nobody reads from).
    pub skip: Vec<String>,
}

impl Default for ThrottleSettings {
    fn default() -> Self {
        Self {
            max_lag: DEFAULT_MAX_LAG,
            replicas: Vec::new(),
            skip: Vec::new(),
        }
    }
}

/// The verdict on one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throttle {
    /// Every covered replica is shown under the limit.
    pub go: bool,
    pub max_lag: Duration,
    /// One line: the worst replica and why, or that all are under the limit.
    pub reason: String,
    /// Every covered channel, throttling ones first, the furthest behind first.
    pub judged: Vec<Judged>,
}

/// One covered replication channel (or a covered node with none to read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// `r2`, or `agg/p2` for a named channel.
    pub place: String,
    /// The heartbeat lag as judged (less a deliberate `SQL_Delay` and the second held past it,
    /// `store::delay::held`); `None`: no channel to read.
    pub lag: Option<Lag>,
    pub go: bool,
    /// Why, in a few words: `lag 0.12s ≤ 1.00s`, `lag 4.20s > 1.00s (heartbeat)`.
    pub why: String,
}

impl Judged {
    /// What orders the worst first: the lag's known floor, an unknown lag above any figure.
    fn floor(&self) -> Option<Duration> {
        self.lag.as_ref().and_then(Lag::value)
    }
}

/// Judges `snapshot`, published `age` ago, against `settings`.
#[must_use]
pub fn judge(snapshot: &Snapshot, settings: &ThrottleSettings, age: Duration) -> Throttle {
    let limit = settings.max_lag;
    let mut judged: Vec<Judged> = snapshot
        .nodes
        .iter()
        .filter(|n| covered(n, settings))
        .flat_map(|n| judge_node(n, limit))
        .collect();
    // Named nodes rwtop does not watch (yet: discovery may add them) cannot be judged.
    for name in &settings.replicas {
        if snapshot.node(name).is_none() && !settings.skip.contains(name) {
            judged.push(Judged {
                place: name.clone(),
                lag: None,
                go: false,
                why: "is not watched: no node of that name (yet)".to_owned(),
            });
        }
    }
    judged.sort_by(|a, b| {
        a.go.cmp(&b.go).then_with(|| match (a.floor(), b.floor()) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.cmp(&x),
        })
    });
    let limit_text = units::lag(limit);
    let throttled = judged.iter().filter(|j| !j.go).count();
    let (go, reason) = if age > STALE_SNAPSHOT {
        (
            false,
            format!(
                "rwtop's newest snapshot is {} old: the engine is not publishing, so no lag \
                 is current",
                units::duration(age)
            ),
        )
    } else if judged.is_empty() {
        (
            false,
            "no replica to judge: rwtop watches none (yet), or the replicas/skip settings leave \
             none"
                .to_owned(),
        )
    } else if let Some(worst) = judged.first().filter(|j| !j.go) {
        let more = match throttled {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        (false, format!("{} {}{more}", worst.place, worst.why))
    } else {
        let worst = judged
            .iter()
            .filter_map(|j| Some((j.place.as_str(), j.lag.as_ref()?.value()?)))
            .max_by_key(|(_, lag)| *lag);
        let worst = worst.map_or_else(String::new, |(place, lag)| {
            format!(" (worst {place} {})", units::lag(lag))
        });
        let n = judged.len();
        let what = if n == 1 { "replica" } else { "replicas" };
        (
            true,
            format!("{n} {what} at or under {limit_text} heartbeat lag{worst}"),
        )
    };
    Throttle {
        go,
        max_lag: limit,
        reason,
        judged,
    }
}

/// Whether the settings cover this node: named, or a replica when none are named; never skipped.
fn covered(node: &NodeView, settings: &ThrottleSettings) -> bool {
    if settings.skip.contains(&node.name) {
        return false;
    }
    if !settings.replicas.is_empty() {
        return settings.replicas.contains(&node.name);
    }
    // A replica that answers with no channel replicates from nobody now: not a replica.
    node.role == Role::Replica && (!node.channels.is_empty() || !node.answers())
}

fn judge_node(node: &NodeView, limit: Duration) -> Vec<Judged> {
    if node.channels.is_empty() {
        let why = if node.answers() {
            "replicates from nobody: no lag to judge".to_owned()
        } else {
            format!(
                "has not answered (connection {}): its lag is unknown",
                node.conn.name()
            )
        };
        return vec![Judged {
            place: node.name.clone(),
            lag: None,
            go: false,
            why,
        }];
    }
    node.channels
        .iter()
        .map(|c| {
            let named = (!c.channel.is_empty()).then_some(c.channel.as_str());
            let place = place(Some(&node.name), named).unwrap_or_default();
            judge_channel(place, c, limit)
        })
        .collect()
}

fn judge_channel(place: String, channel: &ReplicaView, limit: Duration) -> Judged {
    let delay = channel
        .sql_delay
        .filter(|&d| d > 0)
        .map(Duration::from_secs);
    let lag = match delay {
        Some(d) => less(
            &channel.heartbeat_lag,
            crate::store::delay::held(d.as_secs()),
        ),
        None => channel.heartbeat_lag.clone(),
    };
    let shown = |lag: &Lag| {
        let text = lag.text().unwrap_or_default();
        match (delay, channel.heartbeat_lag.text()) {
            (Some(d), Some(raw)) => {
                format!(
                    "{raw} less its {} SQL_Delay and the second held past it = {text}",
                    units::duration(d)
                )
            }
            _ => text,
        }
    };
    let limit_text = units::lag(limit);
    let (go, why) = match &lag {
        Lag::Exact { lag: l } if *l <= limit => {
            (true, format!("lag {} ≤ {limit_text}", shown(&lag)))
        }
        Lag::Exact { .. } => (
            false,
            format!("lag {} > {limit_text} (heartbeat)", shown(&lag)),
        ),
        Lag::AtLeast { lag: low, .. } if *low > limit => (
            false,
            format!(
                "lag {} > {limit_text} (heartbeat, a lower bound)",
                shown(&lag)
            ),
        ),
        Lag::AtLeast {
            upper: Some(high), ..
        } if *high <= limit => (
            true,
            format!(
                "lag {}, at most {} ≤ {limit_text}",
                shown(&lag),
                units::lag(*high)
            ),
        ),
        Lag::AtLeast { upper, .. } => {
            let bound = upper.map_or_else(
                || "with no upper bound".to_owned(),
                |u| format!("at most {}", units::lag(u)),
            );
            (
                false,
                format!(
                    "lag {} {bound}: cannot show it is under {limit_text} (heartbeat)",
                    shown(&lag)
                ),
            )
        }
        Lag::Unknown { reason } => (false, format!("lag unknown: {reason}")),
    };
    Judged {
        place,
        lag: Some(lag),
        go,
        why,
    }
}

/// A lag less a deliberate delay: how far behind the replica is beyond what it was told to be.
fn less(lag: &Lag, delay: Duration) -> Lag {
    match lag {
        Lag::Exact { lag } => Lag::Exact {
            lag: lag.saturating_sub(delay),
        },
        Lag::AtLeast { lag, upper } => Lag::AtLeast {
            lag: lag.saturating_sub(delay),
            upper: upper.map(|u| u.saturating_sub(delay)),
        },
        Lag::Unknown { reason } => Lag::Unknown {
            reason: reason.clone(),
        },
    }
}

#[cfg(test)]
mod tests;
