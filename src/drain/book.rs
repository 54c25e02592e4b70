//! What the store keeps about drains (rwtop's own actions and the load balancer's view) and
//! the operator's kills.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::task::DrainEvent;
use super::{Action, ActionRecord, KillRecord, ServerState};

/// Actions kept for the screen (the audit log file keeps them all).
const LOG: usize = 50;

#[derive(Debug, Default)]
pub struct DrainBook {
    view: DrainView,
}

/// What snapshots carry about drains.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrainView {
    /// `haproxy`, `proxysql`, `maxscale`, `exec`; `None` when no backend is configured.
    pub backend: Option<String>,
    /// Where the backend is (`haproxy backend replicas via /run/haproxy.sock`).
    #[serde(default)]
    pub detail: Option<String>,
    /// The load balancer's own state per replica, as last read.
    pub states: BTreeMap<String, ServerState>,
    /// Why the last read of that state failed.
    pub view_error: Option<String>,
    /// Replicas rwtop drained (successfully) and has not undrained.
    pub drained: BTreeSet<String>,
    /// Newest first.
    pub log: Vec<ActionRecord>,
    /// The kills of waiting DDLs' blockers, newest first.
    #[serde(default)]
    pub kills: Vec<KillRecord>,
}

impl DrainBook {
    #[must_use]
    pub fn new(backend: Option<String>, detail: Option<String>) -> Self {
        Self {
            view: DrainView {
                backend,
                detail,
                ..DrainView::default()
            },
        }
    }

    pub fn apply(&mut self, event: DrainEvent) {
        match event {
            DrainEvent::Action(record) => {
                if record.ok {
                    match record.action {
                        Action::Drain => self.view.drained.insert(record.replica.clone()),
                        Action::Undrain => self.view.drained.remove(&record.replica),
                    };
                }
                self.view.log.insert(0, record);
                self.view.log.truncate(LOG);
            }
            DrainEvent::Kill(record) => {
                self.view.kills.insert(0, record);
                self.view.kills.truncate(LOG);
            }
            DrainEvent::View(Ok(states)) => {
                self.view.states = states;
                self.view.view_error = None;
            }
            DrainEvent::View(Err(e)) => self.view.view_error = Some(e),
        }
    }

    #[must_use]
    pub fn view(&self) -> DrainView {
        self.view.clone()
    }
}

impl DrainView {
    /// Whether rwtop's own routing must skip this replica: drained by rwtop, or not taking
    /// reads in the load balancer's own view.
    #[must_use]
    pub fn is_drained(&self, replica: &str) -> bool {
        self.drained.contains(replica) || self.states.get(replica).is_some_and(|s| !s.takes_reads())
    }

    /// A short label for tables: the load balancer's state, else rwtop's intent.
    #[must_use]
    pub fn label(&self, replica: &str) -> Option<String> {
        match self.states.get(replica) {
            Some(state) => Some(state.label().to_owned()),
            None => self.drained.contains(replica).then(|| "DRAIN".to_owned()),
        }
    }
}
