//! A node's clock against this host's, estimated from query round trips: the server's time read
//! at the middle of a round trip, off by at most half of it.

use std::time::{Duration, Instant};

/// The estimate a node holds.
#[derive(Debug, Clone, Copy)]
pub struct ClockEstimate {
    /// The server's clock minus this host's.
    pub offset_ms: i64,
    rtt: Duration,
    at: Instant,
}

impl ClockEstimate {
    /// Keeps in `held` the estimate with the shortest round trip (the tightest bound on its
    /// error), unless it is a minute old: clocks drift and get stepped.
    pub fn keep(held: &mut Option<Self>, offset_ms: i64, rtt: Duration, at: Instant) {
        let replace = held.is_none_or(|h| {
            rtt <= h.rtt + h.rtt / 2 || at.saturating_duration_since(h.at).as_secs() >= 60
        });
        if replace {
            *held = Some(Self { offset_ms, rtt, at });
        }
    }

    /// How far the offset may be off: half the round trip it was read with.
    #[must_use]
    pub fn error_ms(&self) -> i64 {
        i64::try_from(self.rtt.as_millis() / 2).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_round_trip_is_kept_until_a_minute_old() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let mut held = None;
        ClockEstimate::keep(&mut held, 40, ms(400), t0);
        ClockEstimate::keep(&mut held, 5, ms(20), t0 + ms(10));
        assert_eq!(held.map(|c| (c.offset_ms, c.error_ms())), Some((5, 10)));
        // A longer trip does not replace it, unless the held one is a minute old.
        ClockEstimate::keep(&mut held, 300, ms(600), t0 + ms(20));
        assert_eq!(held.map(|c| c.offset_ms), Some(5));
        ClockEstimate::keep(&mut held, 300, ms(600), t0 + Duration::from_secs(61));
        assert_eq!(held.map(|c| (c.offset_ms, c.error_ms())), Some((300, 300)));
    }
}
