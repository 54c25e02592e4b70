//! Decisions from measured lag: lag-threshold routing and the sticky window to recommend. Both
//! judge channels, not nodes: a read of a write on one root is only as fresh as the channel
//! that carries that root's writes.

use std::time::Duration;

use super::route::Route;
use super::target::{Aim, label};
use crate::topology::{Role, Topology};
use crate::units;
use crate::units::short_duration;

/// Lag-threshold routing over the channels that carry the aim's root's writes, on replicas that
/// are not drained: the aimed channel when its measured lag is within `max`, else the one with
/// the least lag within `max`, else the root. Returns the route, the chosen channel's measured
/// lag and a note when it routed away from the target.
pub(super) fn lag_route(
    view: &dyn Topology,
    aim: &Aim,
    max: Duration,
) -> (Route, Option<Duration>, Option<String>) {
    let mut eligible = Vec::new();
    let mut refused = Vec::new();
    for node in view
        .members()
        .into_iter()
        .filter(|n| n.role != Role::Primary)
    {
        for channel in view.channels(node.name) {
            if !view
                .roots_of(node.name, channel.name)
                .contains(&aim.root.as_str())
            {
                continue;
            }
            let name = label(node.name, channel.name);
            if view.is_drained(node.name) {
                refused.push(format!("{name} drained"));
                continue;
            }
            let health = channel.health;
            let running = health.running;
            match health.lag {
                Some(lag) if running && lag <= max => eligible.push((lag, name, node.name)),
                Some(lag) => refused.push(format!(
                    "{name} {}{}",
                    units::lag(lag),
                    if running { "" } else { " (a thread stopped)" }
                )),
                None => refused.push(format!("{name} unknown")),
            }
        }
    }
    eligible.sort_unstable();
    let target = aim.label();
    let chosen = eligible
        .iter()
        .find(|(_, name, _)| *name == target)
        .or_else(|| eligible.first());
    match chosen {
        Some((lag, picked, replica)) => {
            let note = (*picked != target).then(|| {
                format!(
                    "routed to {picked} (lag {}): {target} is not within {}",
                    units::lag(*lag),
                    short_duration(max)
                )
            });
            (Route::Replica((*replica).to_owned()), Some(*lag), note)
        }
        None => (
            Route::FallBack(format!(
                "no replica within {}: {}",
                short_duration(max),
                if refused.is_empty() {
                    "no replica measured".to_owned()
                } else {
                    refused.join(", ")
                }
            )),
            None,
            None,
        ),
    }
}

/// The sticky window the measured lag suggests: the worst channel's 5-minute P99 (of those that
/// carry the root's writes) plus one heartbeat interval (the measurement's resolution), rounded
/// up to 100 ms.
pub(super) fn recommend_sticky(
    view: &dyn Topology,
    root: &str,
) -> Option<(Duration, String, Duration)> {
    let (p99, node) = view
        .members()
        .into_iter()
        .flat_map(|n| {
            view.channels(n.name).into_iter().filter_map(move |c| {
                let p99 = c.health.lag_p99_5m?;
                view.roots_of(n.name, c.name)
                    .contains(&root)
                    .then(|| (p99, label(n.name, c.name)))
            })
        })
        .max()?;
    let raw = p99 + view.heartbeat_interval();
    let step = 100u128;
    let ms = raw.as_millis().div_ceil(step) * step;
    let window = Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX));
    Some((p99, node, window))
}
