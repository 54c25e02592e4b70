//! When a lagging replica will have caught up, by one of two methods an operator can check by
//! hand, in this order:
//!
//! 1. **The primary's duration.** A schema change replicates as one statement that the replica
//!    runs from the start after the primary finished it, and usually takes about as long there.
//!    When the engine saw the same statement text running on the primary, the estimate is the
//!    longest time it was seen running there, less what of it the statement waited there for a
//!    lock ([`DdlWait`]: the replica's applier does not wait for the primary's clients), minus
//!    the time the replica has spent on it so far (never below zero: "any moment now").
//! 2. **The channel's catch-up.** Otherwise the store's estimate for any lag
//!    ([`crate::store::apply_rate`]): while the heartbeat lag shrinks over the last 20 s of polls,
//!    the lag beyond `SQL_Delay` divided by how fast it shrinks (60 s of lag falling 0.5 s per
//!    second is ~2m00s). The table, the detail pane, JSON and `/metrics` show the same figure.
//!
//! Anything else (lag flat or growing, too few samples) is "unknown", never a guess.

use std::collections::HashMap;
use std::time::Duration;

use crate::mysql::{DdlStatement, DdlWait};
use crate::store::apply_rate::CatchUpState;
use crate::store::{NodeView, ReplicaView, Role, Snapshot};
use crate::units;

/// Statements remembered from the primary; a maintenance window runs a handful.
const REMEMBERED: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub enum Eta {
    FromPrimary {
        remaining: Duration,
        /// Seconds the primary worked on it, its waits left out.
        primary_took_s: u64,
        /// Seconds it waited there for a lock, and which; `None` when it never waited.
        primary_waited: Option<(u64, String)>,
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
                units::eta(*remaining)
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
                primary_waited,
            } => {
                let waited = primary_waited
                    .as_ref()
                    .map(|(s, lock)| format!(", after waiting {} for the {lock}", units::secs(*s)))
                    .unwrap_or_default();
                format!(
                    "{} (the primary ran it for {}{waited})",
                    units::eta(*remaining),
                    units::secs(*primary_took_s)
                )
            }
            Self::FromTrend { remaining, rate } => {
                format!("{} (lag falling {rate:.2} s/s)", units::eta(*remaining))
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
    wait: DdlWait,
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
        let now: HashMap<String, &DdlStatement> = snapshot
            .nodes
            .iter()
            .filter(|n| n.role == Role::Primary)
            .flat_map(|n| n.ddl().iter().filter(|d| !d.applier))
            .map(|d| (key(&d.statement), d))
            .collect();
        for (statement, ddl) in &now {
            let run = self.runs.entry(statement.clone()).or_insert(PrimaryRun {
                longest_s: ddl.elapsed_s,
                wait: DdlWait::default(),
                running: false,
                last_seen: snapshot.uptime,
            });
            if run.running {
                run.longest_s = run.longest_s.max(ddl.elapsed_s);
            } else {
                run.longest_s = ddl.elapsed_s;
                run.wait = DdlWait::default();
            }
            run.wait.observe(ddl);
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

    /// How long the primary worked on `statement` (its waits for a lock left out), with the
    /// wait.
    pub fn primary_took(&self, statement: &str) -> Option<(u64, &DdlWait)> {
        self.runs
            .get(&key(statement))
            .map(|run| (run.wait.worked(run.longest_s), &run.wait))
    }
}

/// The catch-up estimate of one replica (see the module documentation for the method).
pub fn catch_up(memory: &DdlMemory, node: &NodeView, replica: &ReplicaView) -> Eta {
    let from_primary = node
        .ddl()
        .iter()
        .filter(|d| d.applier)
        .find_map(|d| Some((memory.primary_took(&d.statement)?, d.elapsed_s)));
    if let Some(((took, wait), elapsed)) = from_primary {
        return Eta::FromPrimary {
            remaining: Duration::from_secs(took.saturating_sub(elapsed)),
            primary_took_s: took,
            primary_waited: wait.waited().map(|(s, lock)| (s, lock.to_owned())),
        };
    }
    from_trend(replica)
}

fn from_trend(replica: &ReplicaView) -> Eta {
    let c = &replica.catch_up;
    match (c.state, c.eta, c.lag_change_s_per_s) {
        (CatchUpState::CatchingUp, Some(remaining), Some(change)) => Eta::FromTrend {
            remaining,
            rate: -change,
        },
        _ => Eta::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::apply_rate::CatchUp;
    use crate::store::lag::Lag;
    use crate::store::testkit::scan;
    use crate::store::testkit::{Topo, catching_up, ddl, falling_behind, secs};

    #[test]
    fn primary_duration_minus_replica_elapsed() {
        let mut topo = Topo::new();
        let mut memory = DdlMemory::default();
        topo.node_mut("db1", |n| {
            *scan(n) = vec![ddl("ALTER TABLE big  ADD c INT", 150, false)];
        });
        memory.observe(&topo.at(1));
        topo.node_mut("db1", |n| {
            *scan(n) = vec![ddl("ALTER TABLE big ADD c INT", 190, false)];
        });
        memory.observe(&topo.at(2));
        topo.node_mut("db1", |n| scan(n).clear());
        memory.observe(&topo.at(3));
        assert_eq!(
            memory
                .primary_took("ALTER TABLE big ADD c INT")
                .map(|(s, _)| s),
            Some(190)
        );
        topo.node_mut("r1", |n| {
            *scan(n) = vec![ddl("ALTER TABLE big ADD c INT", 41, true)];
        });
        let snapshot = topo.at(4);
        let Some(r1) = snapshot.node("r1") else {
            panic!()
        };
        let Some(replica) = r1.replica() else {
            panic!()
        };
        let eta = catch_up(&memory, r1, replica);
        assert_eq!(
            eta,
            Eta::FromPrimary {
                remaining: secs(149.0),
                primary_took_s: 190,
                primary_waited: None,
            }
        );
        assert_eq!(eta.explained(), "~2m00s (the primary ran it for 3m10s)");
        // Running again later is a new run, not the old maximum.
        topo.node_mut("db1", |n| {
            *scan(n) = vec![ddl("ALTER TABLE big ADD c INT", 5, false)];
        });
        memory.observe(&topo.at(5));
        assert_eq!(
            memory
                .primary_took("ALTER TABLE big ADD c INT")
                .map(|(s, _)| s),
            Some(5)
        );
    }

    #[test]
    fn the_primarys_wait_for_a_lock_is_no_work_the_replica_repeats() {
        let statement = "ALTER TABLE big ADD c INT";
        let mut topo = Topo::new();
        let mut memory = DdlMemory::default();
        // Waiting for the table's metadata lock for its first 100 s, then 30 s of work.
        for (at, elapsed, waiting) in [
            (1, 40, true),
            (2, 100, true),
            (3, 101, false),
            (4, 130, false),
        ] {
            topo.node_mut("db1", |n| {
                let mut seen = ddl(statement, elapsed, false);
                seen.waiting_for = waiting.then(|| "table metadata lock".to_owned());
                *scan(n) = vec![seen];
            });
            memory.observe(&topo.at(at));
        }
        topo.node_mut("db1", |n| scan(n).clear());
        topo.node_mut("r1", |n| *scan(n) = vec![ddl(statement, 10, true)]);
        let snapshot = topo.at(5);
        let r1 = snapshot.node("r1").unwrap();
        let eta = catch_up(&memory, r1, r1.replica().unwrap());
        assert_eq!(
            eta,
            Eta::FromPrimary {
                remaining: secs(20.0),
                primary_took_s: 30,
                primary_waited: Some((100, "table metadata lock".to_owned())),
            }
        );
        assert_eq!(
            eta.explained(),
            "~20s (the primary ran it for 30s, after waiting 1m40s for the table metadata lock)"
        );
    }

    #[test]
    fn otherwise_the_channels_catch_up_estimate() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.heartbeat_lag = Lag::Exact { lag: secs(52.0) };
            r.catch_up = catching_up(0.5, secs(104.0));
        });
        let snapshot = topo.at(1);
        let Some(r1) = snapshot.node("r1") else {
            panic!()
        };
        let Some(replica) = r1.replica() else {
            panic!()
        };
        let eta = catch_up(&DdlMemory::default(), r1, replica);
        assert_eq!(eta.short(), "~2m00s");
        assert_eq!(eta.explained(), "~2m00s (lag falling 0.50 s/s)");
        assert!(matches!(eta, Eta::FromTrend { rate, .. } if (rate - 0.5).abs() < 1e-9));
    }

    #[test]
    fn falling_behind_or_unknown_catch_up_is_unknown() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| r.catch_up = falling_behind(10.0, 0.8));
        topo.replica_mut("r2", |r| r.catch_up = CatchUp::default());
        let snapshot = topo.at(1);
        for name in ["r1", "r2"] {
            let Some(node) = snapshot.node(name) else {
                panic!()
            };
            let Some(replica) = node.replica() else {
                panic!()
            };
            assert_eq!(catch_up(&DdlMemory::default(), node, replica), Eta::Unknown);
        }
    }
}
