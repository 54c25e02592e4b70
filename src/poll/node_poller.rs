//! One task per node: connect, poll replication state every `interval`, read the heartbeat row
//! every `read_interval` (more often on a delayed replica, `pace.rs`), and report everything —
//! failures included — to the store. A heartbeat read and a clock sample due with a status poll
//! ride in front of the poll's batch: one round trip for all of them. Where a replica's applied
//! position tells which heartbeats it has applied (`beat_gtid.rs`), that is its reading, and the
//! table is not read at all.
//!
//! A hung or dead node only ever delays its own task: every statement runs under a timeout, and a
//! connection whose statement timed out is dropped and reopened with capped back-off. A tick
//! whose statements have not answered within one poll interval has the node shown `down` at
//! once ([`Silence`]), without waiting for that timeout.

use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::backoff::backoff;
pub use super::beat_read::read_heartbeat;
pub use super::cadence::{DDL_SCAN_LINGER, PollParts, QUIET_SCAN_EVERY, phase};
use super::ended::Ended;
use super::events::{ConnState, PollEvent};
use super::session::Session;
use super::silence::Silence;
use super::spec::PollerSpec;
pub use super::status_poll::poll_status;
use crate::mysql::NodeConn;

/// Consecutive failures before a node is shown `down` rather than `retrying`.
const DOWN_AFTER: u32 = 2;

pub async fn run(
    spec: PollerSpec,
    events: mpsc::Sender<PollEvent>,
    mut stop: watch::Receiver<bool>,
) {
    let mut failures: u32 = 0;
    let _ = events
        .send(PollEvent::Conn {
            node: spec.name.clone(),
            state: ConnState::Connecting,
        })
        .await;
    loop {
        let cause = match NodeConn::connect(&spec.endpoint, spec.timeouts).await {
            Ok(conn) => {
                let ended = poll_connected(&spec, conn, &events, &mut stop, &mut failures).await;
                match ended {
                    Ended::Stopped => return,
                    // Not a failure: connect again at once, the node stays up.
                    Ended::Regranted => continue,
                    Ended::Failed(err) => err.to_string(),
                }
            }
            Err(err) => err.to_string(),
        };
        // A first attempt that failed is over too: a node down at start does not hold up the
        // judging of the others' silence.
        spec.start_up.ended(&spec.name);
        failures = failures.saturating_add(1);
        // The first failure after a healthy spell (or at start) is tried again at once: a
        // server that went away refuses that attempt too, the second failure in a row, and is
        // shown down without a back-off's wait; a connection the server closed alone (`KILL`,
        // `wait_timeout`) is back before the next poll. Once: the next failure backs off.
        let next = if failures == 1 {
            Duration::ZERO
        } else {
            backoff(failures)
        };
        let state = if failures >= DOWN_AFTER {
            ConnState::Down { next, cause }
        } else {
            ConnState::Retrying { next, cause }
        };
        if events
            .send(PollEvent::Conn {
                node: spec.name.clone(),
                state,
            })
            .await
            .is_err()
        {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(next) => {}
            _ = stop.changed() => return,
        }
    }
}

/// Polls over one connection until it fails, the account's global privileges change, or the
/// engine stops: the tick schedule, each tick's steps taken by a [`Session`].
///
/// One tick per heartbeat read or status poll, whichever comes more often; the read pace slows
/// as nodes are added, and the ticker with it (no wake-up without a query). A status poll is due
/// an `interval` after the last one was due (a tick's scheduled instant, so that one late tick
/// on a busy machine does not push the next poll a whole tick later), a heartbeat reading a
/// read pace after the last; the operator's nudge makes both due now.
async fn poll_connected(
    spec: &PollerSpec,
    conn: NodeConn,
    events: &mpsc::Sender<PollEvent>,
    stop: &mut watch::Receiver<bool>,
    failures: &mut u32,
) -> Ended {
    let mut session = match Session::start(spec, conn, events).await {
        Ok(session) => session,
        Err(e) => return e,
    };
    let period = |s: &Session| {
        let (status, read) = s.every(&spec.pace);
        status.min(read)
    };
    let mut ticker = ticker(on_slot(tokio::time::Instant::now()), period(&session));
    let mut last_status: Option<tokio::time::Instant> = None;
    let mut last_read: Option<tokio::time::Instant> = None;
    let mut silence = Silence::new(spec);
    loop {
        let mut nudged = false;
        let due_at = tokio::select! {
            at = ticker.tick() => at,
            () = spec.nudge.notified() => {
                nudged = true;
                tokio::time::Instant::now()
            }
            _ = stop.changed() => {
                session.conn.close().await;
                return Ended::Stopped;
            }
        };
        let (status_every, read_every) = session.every(&spec.pace);
        let status_due = nudged || due(last_status, due_at, status_every);
        // Spread past the read budget: this tick may be one to skip.
        let read_due = nudged || due(last_read, due_at, read_every);
        if read_due {
            last_read = Some(due_at);
        }
        if status_due {
            last_status = Some(due_at);
        }
        let work = tick(&mut session, status_due, read_due, failures);
        if let Err(e) = silence.answer(events, work).await {
            if silence.said {
                *failures = (*failures).max(DOWN_AFTER - 1);
            }
            if matches!(e, Ended::Regranted) {
                session.conn.close().await;
            }
            return e;
        }
        // What the tick saw may change the pace (a delay, a link that may be stalling), and a
        // close watch ends with time.
        let now_every = period(&session);
        if now_every != ticker.period() {
            ticker = self::ticker(on_slot(due_at + now_every), now_every);
        }
    }
}

/// One tick's statements: the status poll when due (with the settings when those are due),
/// and the heartbeat reading when due and not made by the poll.
async fn tick(
    session: &mut Session<'_>,
    status_due: bool,
    mut read_due: bool,
    failures: &mut u32,
) -> Result<(), Ended> {
    if status_due {
        read_due &= !session.status_poll(read_due, failures).await?;
        session.settings_when_due().await?;
        session.grants_when_due().await?;
        session.disks_when_due().await?;
    }
    if read_due && session.reads() {
        session.heartbeat_reading().await?;
    }
    Ok(())
}

/// Whether something last done at `last` (a tick's scheduled instant) is due again at `now`;
/// 5 ms of slack absorbs timer rounding.
fn due(last: Option<tokio::time::Instant>, now: tokio::time::Instant, every: Duration) -> bool {
    last.is_none_or(|t| now.saturating_duration_since(t) + Duration::from_millis(5) >= every)
}

/// Pollers start their ticks on a shared grid of this step, so that in a large topology the
/// ~100 whose ticks fall in one step wake the runtime once between them rather than once each
/// (every poller shares the period, so ticks that start on one grid point stay together). At
/// 1,000 nodes 100 ms cost 11–16 % less CPU than 10 ms; 50 ms read the same, 250 ms no lower
/// (the `scale` runs recorded in commits `42808c5` and `c6e92a4`, docs/benchmarks.md's history);
/// a poller's first poll waits at most one step.
const TICK_SLOT: Duration = Duration::from_millis(100);

/// The first point of the [`TICK_SLOT`] grid at or after `at`.
fn on_slot(at: tokio::time::Instant) -> tokio::time::Instant {
    static ORIGIN: std::sync::OnceLock<tokio::time::Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(|| at);
    let slot = TICK_SLOT.as_nanos();
    let since = at.saturating_duration_since(origin).as_nanos();
    let steps = since.div_ceil(slot);
    let offset = u64::try_from(steps * slot).unwrap_or(u64::MAX);
    origin + Duration::from_nanos(offset)
}

/// Ticks every `period` from `start`; a late tick does not shift the ones after it, so polls
/// keep to their schedule.
fn ticker(start: tokio::time::Instant, period: Duration) -> tokio::time::Interval {
    let mut ticker = tokio::time::interval_at(start, period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    ticker
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_start_on_the_shared_grid_and_never_early() {
        let origin = tokio::time::Instant::now();
        let first = on_slot(origin);
        for ms in [0_u64, 1, 9, 10, 11, 995, 1_000] {
            let at = origin + Duration::from_millis(ms) + Duration::from_micros(300);
            let slot = on_slot(at);
            assert!(slot >= at, "{ms} ms: never before it was asked");
            assert!(slot - at < TICK_SLOT, "{ms} ms: within one step");
            let from_grid = (slot - first).as_nanos() % TICK_SLOT.as_nanos();
            assert_eq!(from_grid, 0, "{ms} ms: on the grid");
        }
    }
}
