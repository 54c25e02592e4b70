//! When a lagging replica will have caught up, by one of two methods an operator can check by
//! hand, in this order:
//!
//! 1. **The primary's duration.** A schema change replicates as one statement that the replica
//!    runs from the start after the primary finished it, and usually takes about as long there.
//!    When the engine saw the same statement text running on the primary, the estimate is the
//!    longest time it was seen running there minus the time the replica has spent on it so far
//!    (never below zero: "any moment now").
//! 2. **The lag trend.** Otherwise, when the heartbeat lag fell over the last minute of samples,
//!    the estimate is the current lag divided by the rate of fall, first to last sample of that
//!    minute: 60 s of lag falling 0.5 s per second is ~2m00s.
//!
//! Anything else (lag flat or growing, too few samples) is "unknown", never a guess.

use std::collections::HashMap;
use std::time::Duration;

use super::format;
use crate::store::{NodeView, ReplicaView, Role, Snapshot};
use crate::units;

/// How far back the trend looks.
const TREND_WINDOW_MS: u64 = 60_000;
/// Statements remembered from the primary; a maintenance window runs a handful.
const REMEMBERED: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub enum Eta {
    FromPrimary {
        remaining: Duration,
        primary_took_s: u64,
    },
    FromTrend {
        remaining: Duration,
        /// Seconds of lag gone per second.
        rate: f64,
    },
    Unknown,
}

impl Eta {
    /// The estimate alone, for a cause line.
    pub fn short(&self) -> String {
        match self {
            Self::FromPrimary { remaining, .. } | Self::FromTrend { remaining, .. } => {
                format::eta(*remaining)
            }
            Self::Unknown => "ETA unknown".to_owned(),
        }
    }

    /// The estimate with how it was made, for the evidence.
    pub fn explained(&self) -> String {
        match self {
            Self::FromPrimary {
                remaining,
                primary_took_s,
            } => format!(
                "{} (the primary ran it for {})",
                format::eta(*remaining),
                units::secs(*primary_took_s)
            ),
            Self::FromTrend { remaining, rate } => {
                format!("{} (lag falling {rate:.2} s/s)", format::eta(*remaining))
            }
            Self::Unknown => {
                "unknown (lag not falling, statement not seen on the primary)".to_owned()
            }
        }
    }
}

/// Statements are matched on their text with whitespace runs folded: the primary's client and
/// the replica's applier may lay it out differently.
fn key(statement: &str) -> String {
    statement.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[derive(Debug)]
struct PrimaryRun {
    longest_s: u64,
    /// Seen in the newest evaluation; a statement seen again after it was gone is a new run.
    running: bool,
    last_seen: Duration,
}

/// How long schema changes ran on the primary, by statement text.
#[derive(Debug, Default)]
pub struct DdlMemory {
    runs: HashMap<String, PrimaryRun>,
}

impl DdlMemory {
    /// Notes the client DDL running on primaries now; called on every snapshot.
    pub fn observe(&mut self, snapshot: &Snapshot) {
        let now: HashMap<String, u64> = snapshot
            .nodes
            .iter()
            .filter(|n| n.role == Role::Primary)
            .flat_map(|n| n.ddl.iter().filter(|d| !d.applier))
            .map(|d| (key(&d.statement), d.elapsed_s))
            .collect();
        for (statement, &elapsed) in &now {
            let run = self.runs.entry(statement.clone()).or_insert(PrimaryRun {
                longest_s: elapsed,
                running: false,
                last_seen: snapshot.uptime,
            });
            run.longest_s = if run.running {
                run.longest_s.max(elapsed)
            } else {
                elapsed
            };
            run.last_seen = snapshot.uptime;
        }
        for (statement, run) in &mut self.runs {
            run.running = now.contains_key(statement);
        }
        while self.runs.len() > REMEMBERED {
            let oldest = self
                .runs
                .iter()
                .min_by_key(|(_, run)| run.last_seen)
                .map(|(statement, _)| statement.clone());
            match oldest {
                Some(statement) => self.runs.remove(&statement),
                None => break,
            };
        }
    }

    pub fn primary_took(&self, statement: &str) -> Option<u64> {
        self.runs.get(&key(statement)).map(|run| run.longest_s)
    }
}

/// The catch-up estimate of one replica (see the module documentation for the method).
pub fn catch_up(
    memory: &DdlMemory,
    uptime: Duration,
    node: &NodeView,
    replica: &ReplicaView,
) -> Eta {
    let from_primary = node
        .ddl
        .iter()
        .filter(|d| d.applier)
        .find_map(|d| Some((memory.primary_took(&d.statement)?, d.elapsed_s)));
    if let Some((took, elapsed)) = from_primary {
        return Eta::FromPrimary {
            remaining: Duration::from_secs(took.saturating_sub(elapsed)),
            primary_took_s: took,
        };
    }
    from_trend(uptime, replica)
}

fn from_trend(uptime: Duration, replica: &ReplicaView) -> Eta {
    let now_ms = u64::try_from(uptime.as_millis()).unwrap_or(u64::MAX);
    let from = now_ms.saturating_sub(TREND_WINDOW_MS);
    let mut points = replica
        .series
        .iter()
        .filter(|p| p.at_ms >= from)
        .filter_map(|p| Some((p.at_ms, p.heartbeat_lag_ms?)));
    let (Some(first), Some(last)) = (points.next(), points.next_back()) else {
        return Eta::Unknown;
    };
    let Some(lag) = replica.heartbeat_lag.value() else {
        return Eta::Unknown;
    };
    if last.0 <= first.0 || last.1 >= first.1 {
        return Eta::Unknown;
    }
    let fell_ms = f64::from(first.1 - last.1);
    #[expect(clippy::cast_precision_loss, reason = "a minute of milliseconds")]
    let over_ms = (last.0 - first.0) as f64;
    let rate = fell_ms / over_ms;
    Eta::FromTrend {
        remaining: Duration::from_secs_f64(lag.as_secs_f64() / rate),
        rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lag::Lag;
    use crate::store::series::Point;
    use crate::store::testkit::{Topo, ddl, secs};

    #[test]
    fn primary_duration_minus_replica_elapsed() {
        let mut topo = Topo::new();
        let mut memory = DdlMemory::default();
        topo.node_mut("db1", |n| {
            n.ddl = vec![ddl("ALTER TABLE big  ADD c INT", 150, false)];
        });
        memory.observe(&topo.at(1));
        topo.node_mut("db1", |n| {
            n.ddl = vec![ddl("ALTER TABLE big ADD c INT", 190, false)];
        });
        memory.observe(&topo.at(2));
        topo.node_mut("db1", |n| n.ddl.clear());
        memory.observe(&topo.at(3));
        assert_eq!(memory.primary_took("ALTER TABLE big ADD c INT"), Some(190));
        topo.node_mut("r1", |n| {
            n.ddl = vec![ddl("ALTER TABLE big ADD c INT", 41, true)];
        });
        let snapshot = topo.at(4);
        let Some(r1) = snapshot.node("r1") else {
            panic!()
        };
        let Some(replica) = r1.replica() else {
            panic!()
        };
        let eta = catch_up(&memory, snapshot.uptime, r1, replica);
        assert_eq!(
            eta,
            Eta::FromPrimary {
                remaining: secs(149.0),
                primary_took_s: 190
            }
        );
        assert_eq!(eta.explained(), "~2m00s (the primary ran it for 3m10s)");
        // Running again later is a new run, not the old maximum.
        topo.node_mut("db1", |n| {
            n.ddl = vec![ddl("ALTER TABLE big ADD c INT", 5, false)];
        });
        memory.observe(&topo.at(5));
        assert_eq!(memory.primary_took("ALTER TABLE big ADD c INT"), Some(5));
    }

    #[test]
    fn falling_lag_gives_lag_over_rate() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            // 101 s of uptime at step 1: points from 45 s to 100 s, lag falling 0.5 s/s.
            r.series = (0..=11)
                .map(|i| Point {
                    at_ms: 45_000 + i * 5_000,
                    heartbeat_lag_ms: u32::try_from(80_000 - i * 2_500).ok(),
                    sbm_s: Some(0),
                })
                .collect();
            r.heartbeat_lag = Lag::Exact { lag: secs(52.0) };
        });
        let snapshot = topo.at(1);
        let Some(r1) = snapshot.node("r1") else {
            panic!()
        };
        let Some(replica) = r1.replica() else {
            panic!()
        };
        let eta = catch_up(&DdlMemory::default(), snapshot.uptime, r1, replica);
        // 80 s → 52.5 s of lag over 55 s: 0.5 s/s, so 52 s of lag is 104 s away.
        assert_eq!(eta.short(), "~2m00s");
        assert!(matches!(eta, Eta::FromTrend { rate, .. } if (rate - 0.5).abs() < 1e-9));
    }

    #[test]
    fn rising_or_missing_lag_is_unknown() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.series = (0..5)
                .map(|i| Point {
                    at_ms: 90_000 + i * 1_000,
                    heartbeat_lag_ms: Some(1_000 + u32::try_from(i).unwrap_or(0) * 1_000),
                    sbm_s: Some(0),
                })
                .collect();
        });
        let snapshot = topo.at(1);
        let Some(r1) = snapshot.node("r1") else {
            panic!()
        };
        let Some(replica) = r1.replica() else {
            panic!()
        };
        assert_eq!(
            catch_up(&DdlMemory::default(), snapshot.uptime, r1, replica),
            Eta::Unknown
        );
    }
}
