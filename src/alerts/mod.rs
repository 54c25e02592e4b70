//! The alert engine: rules judged on every new sample of the store, with hysteresis, so the
//! operator sees a condition that holds rather than one that flickered for a poll.
//!
//! The engine is pure model: it reads [`crate::store::Snapshot`]s and returns an
//! [`AlertsView`] (a view type the store publishes; the engine module puts it in each
//! snapshot); the TUI and the JSON export show that view. Time comes from the snapshot
//! (`taken_at` for the wall clock, `uptime` for the sample clock), never from the system clock,
//! so the same snapshots always give the same alerts.
//!
//! * [`engine`] decides which rules have a new sample to judge and keeps their state.
//! * [`hysteresis`] turns a run of verdicts into raised and cleared alerts.
//! * [`log`] is the bounded ring of raised/cleared events (no log file: the JSON export and the
//!   TUI read the ring).
//! * [`rules`] and the files beside it hold one idea each: thread and error rules, the lag
//!   percentile (judged beyond a replica's `SQL_Delay`), the two SBM rules, errant transactions,
//!   topology, DDL with its catch-up [`eta`], a lag that is not recovering, semi-sync (fell
//!   back, short of acking replicas, commits without an ACK), and the global rules.
//! * [`incidents`] groups the active alerts by root cause: one incident per fault, its symptoms
//!   folded under it, a downstream replica's lag inherited from its source's.
//! * [`throttle`] is not an alert: the verdict `GET /throttle` gives a schema change tool, a pure
//!   function of a snapshot like the rules.

mod ddl;
mod disk;
mod engine;
mod errant;
mod eta;
pub mod exposure;
mod format;
mod galera;
mod global;
mod hysteresis;
pub mod incidents;
mod lag;
pub mod lint;
mod log;
mod not_recovering;
mod rules;
mod sbm;
mod semisync;
mod settings;
pub mod throttle;
mod topology;
mod verdict;

#[cfg(test)]
pub(crate) mod testkit;

pub use crate::store::alert_view::{
    Alert, AlertKind, AlertsView, Incident, LogEntry, Membership, Severity,
};
pub use engine::AlertEngine;
pub use settings::{AlertSettings, Thresholds};
