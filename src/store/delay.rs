//! Lag beyond a replica's deliberate delay, which the lag alerts judge a delayed replica on.
//!
//! A replica with `MASTER_DELAY=5` is 5 s stale by design: its heartbeat lag is the truth and is
//! shown as it is, but an alert on it would fire for as long as the delay is configured. Each
//! exact reading less the delay in force when it was read goes into a window of its own, rather
//! than the delay being taken off the window's percentiles: a delay changed within the minute
//! (300 s removed) would otherwise leave a P99 near 300 s judged against a delay of 0.
//!
//! Only a replica with a delay pays for this window, and only until it has had none for a whole
//! window.
//!
//! The server holds each event until its timestamp, in whole seconds, plus the delay has passed
//! on its own clock, which it also corrects in whole seconds: a delayed replica that is on time
//! reads up to a second beyond its delay (1.06 s measured at `MASTER_DELAY=5` on MariaDB 10.11,
//! `tests/live_delay.rs`). That second is part of the delay as the server keeps it, so a
//! reading counts as beyond the delay only past the delay and that second.

use std::time::{Duration, Instant};

use super::snapshot::LagBeyondDelay;
use super::windows::{LagWindows, Window};

/// How long a replica with `delay_s` of `SQL_Delay` may hold an event by design: the delay and
/// the second past it that whole-second timestamps allow (the module's header); zero without a
/// delay. What a delayed replica's lag is judged beyond, by the lag alerts and the throttle.
#[must_use]
pub fn held(delay_s: u64) -> Duration {
    if delay_s == 0 {
        Duration::ZERO
    } else {
        Duration::from_secs(delay_s.saturating_add(1))
    }
}

/// The readings of a replica that has (or had, within the last window) a `SQL_Delay`.
#[derive(Debug)]
pub struct BeyondDelay {
    windows: LagWindows,
    /// The latest reading taken with a delay in force.
    last_delayed: Instant,
}

impl BeyondDelay {
    /// A status sample taken at `at` shows a delay: the window is kept from now, so that a
    /// snapshot that shows the delay is never judged on the true lag, even before the first
    /// reading less the delay is in.
    pub fn delay_seen(slot: &mut Option<Box<Self>>, at: Instant) {
        match slot {
            Some(this) => this.last_delayed = this.last_delayed.max(at),
            None => {
                *slot = Some(Box::new(Self {
                    windows: LagWindows::new(),
                    last_delayed: at,
                }));
            }
        }
    }

    /// Records one exact reading taken at `at` with `delay_s` in force, keeping `slot` from the
    /// first delayed reading until the delay has been 0 for the whole window.
    pub fn track(slot: &mut Option<Box<Self>>, at: Instant, lag: Duration, delay_s: u64) {
        if delay_s == 0 {
            let span = Window::OneMinute.duration();
            let undelayed = |b: &Self| at.saturating_duration_since(b.last_delayed) > span;
            if slot.as_deref().is_none_or(undelayed) {
                *slot = None;
                return;
            }
        }
        if delay_s > 0 {
            Self::delay_seen(slot, at);
        }
        let Some(this) = slot else {
            return;
        };
        let beyond = lag.saturating_sub(held(delay_s));
        this.windows.record(at, beyond);
    }

    #[must_use]
    pub fn view(&self, now: Instant) -> LagBeyondDelay {
        LagBeyondDelay {
            one_minute: self.windows.stats(now, Window::OneMinute),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p99(slot: Option<&BeyondDelay>, now: Instant) -> Option<Duration> {
        slot?.view(now).one_minute.map(|s| s.p99)
    }

    #[test]
    fn each_reading_loses_the_delay_in_force_when_it_was_read() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let mut slot = None;
        // No delay: nothing kept.
        BeyondDelay::track(&mut slot, t0, ms(300), 0);
        assert!(slot.is_none());
        // A sample shows a delay: kept, with no reading yet.
        BeyondDelay::delay_seen(&mut slot, t0);
        assert_eq!(slot.as_ref().unwrap().view(t0).one_minute, None);
        // 5 s delay, lag at the delay or within the second the server may hold an event past
        // it: nothing beyond it; 1.5 s past both: that much.
        for i in 0..100 {
            BeyondDelay::track(&mut slot, t0 + ms(250 * i), ms(4_900 + (i % 2) * 1_150), 5);
        }
        assert_eq!(p99(slot.as_deref(), t0 + ms(25_000)), Some(ms(50)));
        BeyondDelay::track(&mut slot, t0 + ms(25_000), ms(7_500), 5);
        assert_eq!(
            slot.as_ref()
                .unwrap()
                .view(t0 + ms(25_000))
                .one_minute
                .unwrap()
                .max,
            ms(1_500)
        );
        // A 300 s delay removed: readings before the removal keep their own delay, so a
        // caught-up replica is not judged on the old 300 s.
        let mut slot = None;
        for i in 0..200 {
            BeyondDelay::track(&mut slot, t0 + ms(250 * i), ms(300_000), 300);
        }
        for i in 200..240 {
            BeyondDelay::track(&mut slot, t0 + ms(250 * i), ms(100), 0);
        }
        assert_eq!(p99(slot.as_deref(), t0 + ms(60_000)), Some(ms(100)));
        // Kept for a whole window after the removal, then dropped.
        BeyondDelay::track(&mut slot, t0 + ms(109_000), ms(100), 0);
        assert!(slot.is_some());
        BeyondDelay::track(&mut slot, t0 + ms(111_000), ms(100), 0);
        assert!(slot.is_none());
    }
}
