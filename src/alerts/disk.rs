//! `disk_filling`: a disk holding a node's data, binlogs, relay logs or temporary files would be
//! full within `[headroom] disk_full_within` at the rate it fills now, while something on the
//! node writes steadily (`store/disks.rs` says when it can tell at all).
//!
//! An alert rather than a lint finding: it is a reading that changes from poll to poll (an
//! `ALTER` starts, an applier stops and its relay log grows), not a setting that holds until
//! someone changes it. A warning: the disk is not full yet, and the rate may change; the
//! evidence says what fills it, so the operator can stop that or make room.

use super::verdict::{RuleInputs, Verdict, fact};
use crate::store::NodeView;
use crate::units;

pub fn verdict(inputs: &RuleInputs<'_>, node: &NodeView) -> Verdict {
    let Some(disks) = &node.disks() else {
        return Verdict::Clean;
    };
    if disks.unavailable.is_some() {
        return Verdict::Clean;
    }
    let horizon = inputs.settings.disk_full_within;
    let soonest = disks
        .disks
        .iter()
        .filter_map(|d| Some((d, d.full_in?)))
        .min_by_key(|(_, eta)| *eta);
    let Some((disk, eta)) = soonest.filter(|(_, eta)| *eta <= horizon) else {
        return Verdict::Clean;
    };
    let mut evidence = vec![
        fact("disk", format!("{} on {}", disk.disk, disk.path)),
        fact("holds", disk.holds.join(", ")),
        fact("available", units::bytes(disk.available)),
        fact("full_in", units::eta(eta)),
        fact("horizon", units::duration(horizon)),
    ];
    if let Some(rate) = disk.fill_bytes_per_s {
        evidence.push(fact("filling", units::byte_rate(rate)));
    }
    let cause = format!(
        "{}'s disk {} ({}) would be full in {} at this rate: {}",
        node.name,
        disk.path,
        disk.holds.join(", "),
        units::eta(eta),
        disk.filled_by()
    );
    Verdict::bad(evidence, cause)
}
