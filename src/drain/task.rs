//! Drain actions as a task of the engine: requests in from the TUI, records and the load
//! balancer's own view out as events.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::{Action, ActionRecord, AuditLog, Backend, ServerState, Target};
use crate::topology::{Role, Topology};

/// How often the load balancer's view is read.
pub const VIEW_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainSpec {
    pub backend: Backend,
    pub audit: AuditLog,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainRequest {
    pub action: Action,
    pub replica: String,
}

/// What the store learns from the drain task.
#[derive(Debug, Clone)]
pub enum DrainEvent {
    Action(ActionRecord),
    /// A kill of a waiting DDL's blocker (`kill.rs`).
    Kill(super::KillRecord),
    View(Result<std::collections::BTreeMap<String, ServerState>, String>),
}

/// The replicas of the topology as drain targets.
#[must_use]
pub fn targets(view: &dyn Topology) -> Vec<Target> {
    view.members()
        .into_iter()
        .filter(|n| n.role != Role::Primary)
        .filter_map(|n| {
            let (host, port) = n.address.rsplit_once(':')?;
            Some(Target {
                name: n.name.to_owned(),
                host: host.to_owned(),
                port: port.parse().ok()?,
            })
        })
        .collect()
}

/// Applies one action, appends it to the audit log, and says what happened.
pub async fn act(spec: &DrainSpec, action: Action, target: &Target) -> ActionRecord {
    let mut record = spec.backend.apply(action, target).await;
    if let Err(e) = spec.audit.append(&record) {
        record.message = format!("{}; {e}", record.message);
    }
    record
}

pub async fn run<T: Topology>(
    spec: DrainSpec,
    mut requests: mpsc::Receiver<DrainRequest>,
    snapshots: watch::Receiver<Arc<T>>,
    events: mpsc::Sender<DrainEvent>,
    mut stop: watch::Receiver<bool>,
) {
    let mut ticker = tokio::time::interval(VIEW_EVERY);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            request = requests.recv() => {
                let Some(request) = request else { break };
                let view = snapshots.borrow().clone();
                let all = targets(view.as_ref());
                let record = match all.iter().find(|t| t.name == request.replica) {
                    Some(target) => act(&spec, request.action, target).await,
                    None => ActionRecord {
                        at: chrono::Utc::now(),
                        replica: request.replica.clone(),
                        action: request.action,
                        backend: spec.backend.kind().to_owned(),
                        ok: false,
                        message: format!("{} is not a replica rwtop knows", request.replica),
                    },
                };
                if events.send(DrainEvent::Action(record)).await.is_err() {
                    break;
                }
            }
            _ = stop.changed() => break,
        }
        let view = snapshots.borrow().clone();
        if let Some(state) = spec.backend.view(&targets(view.as_ref())).await
            && events.send(DrainEvent::View(state)).await.is_err()
        {
            break;
        }
    }
}
