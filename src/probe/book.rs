//! The probe results the store keeps: recent ones and a tally per strategy and replica.
//! A bake-off keeps its own book, so the table it prints is built the same way.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::Strategy;
use super::outcome::{ProbeResult, Tally, TallyView};

/// Recent results kept, newest first in views.
const RECENT: usize = 20;

#[derive(Debug, Default)]
pub struct ProbeBook {
    recent: VecDeque<ProbeResult>,
    tallies: BTreeMap<(String, Strategy), Tally>,
    running: Option<String>,
}

/// What snapshots carry about test reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbesView {
    /// What the prober is doing now (`gtid-wait(1s) on r1`, `bake-off 3/20`), if anything.
    pub running: Option<String>,
    /// Newest first.
    pub recent: Vec<ProbeResult>,
    /// By replica, then strategy.
    pub tallies: Vec<TallyView>,
}

impl ProbeBook {
    pub fn record(&mut self, result: ProbeResult) {
        self.tallies
            .entry((result.target.clone(), result.strategy))
            .or_default()
            .add(&result);
        if self.recent.len() == RECENT {
            self.recent.pop_back();
        }
        self.recent.push_front(result);
    }

    pub fn set_running(&mut self, what: Option<String>) {
        self.running = what;
    }

    #[must_use]
    pub fn view(&self) -> ProbesView {
        ProbesView {
            running: self.running.clone(),
            recent: self.recent.iter().cloned().collect(),
            tallies: self
                .tallies
                .iter()
                .map(|((replica, strategy), tally)| tally.view(*strategy, replica))
                .collect(),
        }
    }
}

impl ProbesView {
    /// The tallies for one replica, in catalogue order.
    pub fn for_replica<'a>(&'a self, replica: &'a str) -> impl Iterator<Item = &'a TallyView> {
        self.tallies.iter().filter(move |t| t.replica == replica)
    }
}
