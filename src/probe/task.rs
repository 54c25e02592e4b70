//! The prober as a task of the engine: requests in from the TUI, results out as events.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::ProbeResult;
use super::bakeoff::{self, BakeoffPlan};
use super::{Prober, Strategy};
use crate::topology::Topology;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeRequest {
    One { strategy: Strategy, target: String },
    Bakeoff(BakeoffPlan),
}

/// What the prober tells the store.
#[derive(Debug, Clone)]
pub enum ProbeEvent {
    /// A test read finished.
    Finished(Box<ProbeResult>),
    /// What the prober is busy with, `None` when idle.
    Running(Option<String>),
}

pub async fn run<T: Topology>(
    mut prober: Prober,
    mut requests: mpsc::Receiver<ProbeRequest>,
    snapshots: watch::Receiver<Arc<T>>,
    events: mpsc::Sender<ProbeEvent>,
    mut stop: watch::Receiver<bool>,
) {
    let busy = ProbeEvent::Running;
    prober.follow(snapshots.clone());
    loop {
        let request = tokio::select! {
            r = requests.recv() => r,
            _ = stop.changed() => None,
        };
        let Some(request) = request else { break };
        match request {
            ProbeRequest::One { strategy, target } => {
                let _ = events
                    .send(busy(Some(format!("{strategy} on {target}"))))
                    .await;
                let view = snapshots.borrow().clone();
                let result = tokio::select! {
                    r = prober.run(strategy, &target, view.as_ref()) => r,
                    _ = stop.changed() => break,
                };
                let _ = events.send(ProbeEvent::Finished(Box::new(result))).await;
            }
            ProbeRequest::Bakeoff(plan) => {
                let total = plan.total();
                let _ = events.send(busy(Some(format!("bake-off 0/{total}")))).await;
                let mut stop_probe = stop.clone();
                let sender = events.clone();
                bakeoff::run(
                    &mut prober,
                    &plan,
                    &snapshots,
                    &mut stop_probe,
                    |done, r| {
                        // The store must not be blocked by the prober: drop progress when full.
                        let _ = sender.try_send(ProbeEvent::Finished(Box::new(r.clone())));
                        let _ = sender.try_send(busy(Some(format!("bake-off {done}/{total}"))));
                    },
                )
                .await;
            }
        }
        let _ = events.send(busy(None)).await;
        if *stop.borrow() {
            break;
        }
    }
    prober.close().await;
}
