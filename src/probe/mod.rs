//! Interactive test reads (`docs/design.md`, "Test reads"): a probe writes a unique marker row on
//! the root of the channel it targets (the primary, or another root of a multi-source topology)
//! and reads it back following one read-after-write strategy, reporting fresh, stale, fell back
//! or error with the time waited and the queries spent. A bake-off runs every strategy N times.

mod attempt;
pub mod bakeoff;
pub mod book;
mod by_lag;
mod marker;
mod modes;
mod monitor;
pub mod outcome;
mod route;
mod runner;
mod session;
pub mod strategy;
pub mod target;
pub mod task;

use std::collections::BTreeMap;

pub use attempt::ProbeError;
pub use bakeoff::BakeoffPlan;
pub use book::{ProbeBook, ProbesView};
pub use outcome::{Outcome, ProbeCost, ProbeResult, Tally, TallyCost, TallyView, WaitMs};
pub use runner::Prober;
pub use strategy::{CATALOGUE, Fast, Monitor, ProbeDefaults, Strategy};
pub use target::Target;
pub use task::{ProbeEvent, ProbeRequest};

use crate::mysql::{Endpoint, Timeouts};

/// Test-read settings (`[probe]` in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeSettings {
    /// Parameters of bare strategy names.
    pub defaults: ProbeDefaults,
    /// The strategy `t` and `p` use until the operator picks another.
    pub strategy: Strategy,
    /// Probes per strategy in a bake-off.
    pub count: u32,
    /// Pause between two probes of a bake-off.
    pub spacing: std::time::Duration,
}

impl Default for ProbeSettings {
    fn default() -> Self {
        let defaults = ProbeDefaults::default();
        Self {
            strategy: Strategy::GtidWait(defaults.timeout),
            defaults,
            count: 10,
            spacing: std::time::Duration::from_millis(100),
        }
    }
}

/// What the prober needs to know about the topology.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    /// The configured primary, by name: the root probes write to unless the target's channel
    /// leads to another (whose endpoint is in `endpoints`).
    pub primary: (String, Endpoint),
    /// Configured replicas; discovered ones are learnt from snapshots.
    pub endpoints: BTreeMap<String, Endpoint>,
    pub timeouts: Timeouts,
    /// Starts every marker's token (the heartbeat writer id), so rows say who wrote them.
    pub token_prefix: String,
    /// `--read-only`: every probe is refused, since a probe writes.
    pub read_only: bool,
}
