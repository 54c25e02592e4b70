//! The close watch on a link that may be stalling, one policy in poll intervals for both of its
//! parts: how long the poller polls such a node at the read pace's base (`learned.rs`), and how
//! long the store treats its stalling samples as news (`store/news.rs`). A watch counted in
//! seconds while the poll interval is configured would be a few polls at one interval and less
//! than one at another.

use std::time::Duration;

/// How long, in poll intervals, a node whose link may be stalling is polled at the read pace's
/// base: long enough for its lag to pass the stalled-link alert's threshold (a second) and be
/// published; bounded, so that a heartbeat that never arrives (a filter, a link that stays down)
/// costs a few polls, not a faster pace for good. The same stretch past its first second is how
/// long a stalling link's samples stay news to the store.
pub const CLOSE_WATCH_INTERVALS: u32 = 2;

/// How long the close watch lasts at a poll `interval`.
#[must_use]
pub fn close_watch(interval: Duration) -> Duration {
    interval.saturating_mul(CLOSE_WATCH_INTERVALS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two intervals whatever the interval: half a second at 250 ms, two at the shipped 1 s
    /// (what the store's fixed two seconds were), ten at 5 s.
    #[test]
    fn the_watch_is_two_poll_intervals() {
        let ms = Duration::from_millis;
        assert_eq!(close_watch(ms(250)), ms(500));
        assert_eq!(close_watch(ms(1_000)), ms(2_000));
        assert_eq!(close_watch(ms(5_000)), ms(10_000));
    }
}
