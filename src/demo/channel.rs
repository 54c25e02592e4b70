//! The demo's multi-source incident: one channel of the aggregator stops applying while its
//! other channel keeps flowing.
//!
//! Why it is in the demo: a monitor that reads one row of `SHOW ALL SLAVES STATUS` per replica
//! calls agg healthy here (its default channel is fine); rwtop shows the channel that is not,
//! with a lag read from its own root's heartbeat row (p2's), not the primary's.

use super::director::Director;
use super::stop::{Stop, Stopped};
use crate::mysql::ThreadControl;
use crate::sandbox::{AGGREGATOR, SECOND_CHANNEL};

/// (e) agg's channel from p2 stops applying: its SQL thread stops (the IO thread keeps
/// receiving), so agg/p2's heartbeat lag and GTID backlog grow and its alerts raise, while agg's
/// default channel, from the primary, stays at about 0. Then it applies again and catches up.
pub(super) async fn channel_stopped(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let flavor = &director.sandbox.binaries().flavor;
    let halt = flavor.channel_thread_sql(ThreadControl::StopSql, SECOND_CHANNEL);
    let resume = flavor.channel_thread_sql(ThreadControl::StartSql, SECOND_CHANNEL);
    if director.admin(stop, AGGREGATOR, &halt).await?.is_none() {
        return Ok(());
    }
    director.say(format!(
        "incident: {AGGREGATOR}'s channel {SECOND_CHANNEL} stopped applying ({halt}): \
         {AGGREGATOR}/{SECOND_CHANNEL} lag grows, {AGGREGATOR} from primary keeps flowing"
    ));
    let held = stop.sleep(director.timeline.channel_stop).await;
    // Started again even when stopping, as r1's IO thread is: the sandbox may outlive the script.
    if held.is_err() {
        director.undo_in_background(AGGREGATOR, resume);
        return Err(Stopped);
    }
    if director.admin(stop, AGGREGATOR, &resume).await?.is_some() {
        director.say(format!(
            "resolved: {AGGREGATOR}'s channel {SECOND_CHANNEL} applies again ({resume}); \
             {AGGREGATOR}/{SECOND_CHANNEL} catches up and its alerts clear"
        ));
    }
    Ok(())
}
