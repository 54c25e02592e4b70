//! A delayed replica's protection window: where its applied data stands in the primary's time,
//! and how long an operator has to stop its applier before a statement committed on the primary
//! now reaches it (docs/headroom.md, "The protection window").
//!
//! The server holds each event until its binlog timestamp, plus its measure of how far its clock
//! is ahead of its source's, plus `SQL_Delay`, has passed on its own clock: all in whole seconds.
//! The timestamp's dropped fraction lets a statement through up to a second before the delay is
//! up, and the clock difference, taken as the difference of two whole-second readings, can be a
//! second short of the true one (a replica whose clock is a few milliseconds behind its source's
//! counts a whole second), so up to a second sooner again. The soonest a statement committed
//! now can be applied is therefore the delay less two seconds; that is the window, and it holds
//! whatever the applier does. An applier behind its delay applies the statement later still,
//! but by how much depends on how fast it works through what it holds, which no reading tells
//! in advance: a lag a second beyond the delay is often gone before the statement's own delay
//! is up. So the lag says where the data stands and how far the applier is behind its delay,
//! never that there is more time.
//!
//! `SQL_Remaining_Delay` says the same from the other side: a number while the applier waits
//! out an event's delay (so it is on time, and the event it waits for was committed about
//! `SQL_Delay − SQL_Remaining_Delay` seconds ago), NULL while it applies or has nothing to
//! apply. It is shown beside the window.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::lag::Lag;
use crate::mysql::IoRunning;

/// How long before its delay is up the server may apply a statement: a second for the
/// timestamp's dropped fraction, a second for the clock difference counted in whole seconds.
pub const SOONEST_BEFORE_THE_DELAY: Duration = Duration::from_secs(2);

/// Where a delayed channel's protection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProtectionState {
    /// The applier runs: a statement committed now is applied no sooner than
    /// [`Protection::window`].
    Counting,
    /// The applier is stopped: nothing reaches the data until it starts again, and then no
    /// sooner than the delay.
    ApplierStopped,
    /// The receiver is stopped: a statement committed now is not even received yet.
    ReceiverStopped,
    /// The lag is unknown, so the window cannot be told.
    Unknown,
}

impl ProtectionState {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Counting => "counting",
            Self::ApplierStopped => "applier_stopped",
            Self::ReceiverStopped => "receiver_stopped",
            Self::Unknown => "unknown",
        }
    }
}

/// A delayed channel's protection window, for a channel with `SQL_Delay` above 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Protection {
    pub delay: Duration,
    pub state: ProtectionState,
    /// How far behind the primary's clock the applied data stands: the heartbeat lag (at least
    /// this when the lag is a bound). The primary time it stands at is the snapshot's time less
    /// this.
    pub behind: Option<Duration>,
    /// Whether [`Self::behind`] is a lower bound.
    pub behind_at_least: bool,
    /// Seconds left, at the least, to stop the applier before a statement committed now is
    /// applied: the delay less two seconds ([`SOONEST_BEFORE_THE_DELAY`]). `None` unless [`ProtectionState::Counting`].
    pub window: Option<Duration>,
    /// `SQL_Remaining_Delay`: while the applier waits out an event's delay, how long it still
    /// waits.
    pub remaining: Option<Duration>,
}

impl Protection {
    /// The window of a channel with `delay_s` of `SQL_Delay`; `None` without a delay (or where the
    /// server does not report one).
    #[must_use]
    pub fn of(
        delay_s: Option<u64>,
        remaining_s: Option<u64>,
        io: IoRunning,
        sql_running: bool,
        lag: &Lag,
    ) -> Option<Self> {
        let delay = Duration::from_secs(delay_s.filter(|d| *d > 0)?);
        let (behind, at_least) = match lag {
            Lag::Exact { lag } => (Some(*lag), false),
            Lag::AtLeast { lag, .. } => (Some(*lag), true),
            Lag::Unknown { .. } => (None, false),
        };
        let state = if !sql_running {
            ProtectionState::ApplierStopped
        } else if io == IoRunning::No {
            ProtectionState::ReceiverStopped
        } else if behind.is_none() {
            ProtectionState::Unknown
        } else {
            ProtectionState::Counting
        };
        let window = (state == ProtectionState::Counting)
            .then(|| delay.saturating_sub(SOONEST_BEFORE_THE_DELAY));
        Some(Self {
            delay,
            state,
            behind,
            behind_at_least: at_least,
            window,
            remaining: remaining_s.map(Duration::from_secs),
        })
    }

    /// How far the applier is behind its delay, where that is more than the second the
    /// whole-second timestamps account for: a statement committed now may then be applied later
    /// than the window, though never sooner.
    #[must_use]
    pub fn late(&self) -> Option<Duration> {
        let beyond = self.behind?.checked_sub(self.delay)?;
        (beyond > Duration::from_secs(1)).then_some(beyond)
    }

    /// The primary time the applied data stands at, for a snapshot taken at `taken_at`.
    #[must_use]
    pub fn stands_at(
        &self,
        taken_at: chrono::DateTime<chrono::Utc>,
    ) -> Option<chrono::DateTime<chrono::Utc>> {
        let behind = chrono::Duration::from_std(self.behind?).ok()?;
        taken_at.checked_sub_signed(behind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::testkit::exact_ms as exact;

    #[test]
    fn the_window_is_the_delay_less_two_seconds_whatever_the_lag() {
        let s = Duration::from_millis;
        // No delay, or none reported: no window.
        assert_eq!(
            Protection::of(Some(0), None, IoRunning::Yes, true, &exact(0)),
            None
        );
        assert_eq!(
            Protection::of(None, None, IoRunning::Yes, true, &exact(0)),
            None
        );
        // On time: the lag is the delay and a little; the window is the earliest apply.
        let p = Protection::of(Some(10), Some(4), IoRunning::Yes, true, &exact(10_400)).unwrap();
        assert_eq!(p.state, ProtectionState::Counting);
        assert_eq!(p.window, Some(s(8_000)));
        assert_eq!(p.behind, Some(s(10_400)));
        assert_eq!(p.remaining, Some(s(4_000)));
        assert_eq!(p.late(), None);
        // Behind its delay: the applier may catch up before the statement's delay is up, so the
        // lag promises no more time; it is shown as how late the applier runs.
        let p = Protection::of(Some(10), None, IoRunning::Yes, true, &exact(11_800)).unwrap();
        assert_eq!(p.window, Some(s(8_000)));
        assert_eq!(p.late(), Some(s(1_800)));
        // Just after the delay was set, the lag has not grown to it yet: the same.
        let p = Protection::of(Some(10), None, IoRunning::Yes, true, &exact(300)).unwrap();
        assert_eq!(p.window, Some(s(8_000)));
        // Stopped threads and unknown lag: no window, and why.
        let p = Protection::of(Some(10), None, IoRunning::Yes, false, &exact(12_000)).unwrap();
        assert_eq!((p.state, p.window), (ProtectionState::ApplierStopped, None));
        assert_eq!(p.behind, Some(s(12_000)));
        let p = Protection::of(Some(10), None, IoRunning::No, true, &exact(12_000)).unwrap();
        assert_eq!(p.state, ProtectionState::ReceiverStopped);
        let unknown = Lag::Unknown {
            reason: "no heartbeat".into(),
        };
        let p = Protection::of(Some(10), None, IoRunning::Yes, true, &unknown).unwrap();
        assert_eq!(
            (p.state, p.window, p.behind),
            (ProtectionState::Unknown, None, None)
        );
        let taken = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let p = Protection::of(Some(10), None, IoRunning::Yes, true, &exact(10_500)).unwrap();
        assert_eq!(
            p.stands_at(taken).unwrap().timestamp_millis(),
            1_700_000_000_000 - 10_500
        );
    }
}
