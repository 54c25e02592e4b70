//! A bake-off: N probes per strategy, interleaved round by round so every strategy meets the
//! same moments of the topology, tabulated per strategy and replica.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::book::ProbeBook;
use super::outcome::{ProbeResult, TallyView};
use super::{Prober, Strategy};
use crate::topology::Topology;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BakeoffPlan {
    pub strategies: Vec<Strategy>,
    /// One replica, or several taken in turn.
    pub targets: Vec<String>,
    /// Probes per strategy.
    pub count: u32,
    /// Pause between two probes.
    pub spacing: Duration,
}

impl BakeoffPlan {
    #[must_use]
    pub fn total(&self) -> usize {
        self.strategies.len() * self.count as usize
    }
}

/// Runs the plan; `each` sees every result as it arrives (progress, the store). Stops early when
/// `stop` turns true.
pub async fn run<T: Topology>(
    prober: &mut Prober,
    plan: &BakeoffPlan,
    snapshots: &watch::Receiver<Arc<T>>,
    stop: &mut watch::Receiver<bool>,
    mut each: impl FnMut(usize, &ProbeResult),
) -> Vec<TallyView> {
    let mut book = ProbeBook::default();
    let mut done = 0;
    'rounds: for round in 0..plan.count as usize {
        for strategy in &plan.strategies {
            if *stop.borrow() || plan.targets.is_empty() {
                break 'rounds;
            }
            let target = &plan.targets[round % plan.targets.len()];
            let view = snapshots.borrow().clone();
            let result = prober.run(*strategy, target, view.as_ref()).await;
            done += 1;
            each(done, &result);
            book.record(result);
            if done < plan.total() {
                tokio::select! {
                    () = tokio::time::sleep(plan.spacing) => {}
                    _ = stop.changed() => {}
                }
            }
        }
    }
    // Catalogue order per replica, as the plan listed the strategies.
    let mut rows = book.view().tallies;
    rows.sort_by_key(|t| {
        (
            plan.targets.iter().position(|r| *r == t.replica),
            plan.strategies.iter().position(|s| *s == t.strategy),
        )
    });
    rows
}
