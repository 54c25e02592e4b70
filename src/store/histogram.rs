//! A cumulative heartbeat-lag histogram per replica with fixed buckets, for Prometheus: unlike
//! the sliding windows it only ever grows, as a Prometheus histogram must.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Upper bounds in seconds, from loopback-fast to "an incident".
pub const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LagHistogram {
    /// Observations at or below each bound of [`BUCKETS`] (not cumulative); the `+Inf`
    /// bucket is `count`.
    pub counts: Vec<u64>,
    pub sum_seconds: f64,
    pub count: u64,
}

impl LagHistogram {
    pub fn observe(&mut self, lag: Duration) {
        if self.counts.len() != BUCKETS.len() {
            self.counts = vec![0; BUCKETS.len()];
        }
        let secs = lag.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.counts[i] += 1;
        }
        self.sum_seconds += secs;
        self.count += 1;
    }

    /// `(upper bound, observations at or below it)`, cumulative as the exposition format wants,
    /// without the `+Inf` bucket (that one is `count`).
    #[must_use]
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut total = 0;
        BUCKETS
            .iter()
            .enumerate()
            .map(|(i, bound)| {
                total += self.counts.get(i).copied().unwrap_or(0);
                (*bound, total)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_that_holds_them() {
        let mut h = LagHistogram::default();
        for ms in [1, 5, 6, 400, 1_000, 400_000] {
            h.observe(Duration::from_millis(ms));
        }
        let c = h.cumulative();
        assert_eq!(c[0], (0.005, 2), "1 ms and 5 ms (bounds are inclusive)");
        assert_eq!(c[1], (0.01, 3));
        assert_eq!(c[6], (0.5, 4));
        assert_eq!(c[7], (1.0, 5));
        assert_eq!(c[13], (300.0, 5), "400 s is only in +Inf");
        assert_eq!(h.count, 6);
        assert!((h.sum_seconds - 401.412).abs() < 1e-9);
    }
}
