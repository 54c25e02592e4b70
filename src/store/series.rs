//! The last 15 minutes of one replica's lag readings, one point per poll, for the lag charts
//! (the longest window a chart shows).
//!
//! A thousand replicas polled every second hold 900,000 points, so each is stored in 16 bytes:
//! the public [`Point`] spells "unknown" as `Option`, which would take 24, and the ring keeps an
//! in-band marker instead. Points are therefore handed out by value.

use std::collections::VecDeque;

/// One poll of one replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// Milliseconds since the store's start.
    pub at_ms: u64,
    /// `None` when the heartbeat could not be read.
    pub heartbeat_lag_ms: Option<u32>,
    /// `None` when the server reported `Seconds_Behind_Master` as NULL.
    pub sbm_s: Option<u32>,
}

/// The stored form of a [`Point`].
#[derive(Clone, Copy, Debug)]
struct Packed {
    at_ms: u64,
    heartbeat_lag_ms: u32,
    sbm_s: u32,
}

/// Marks an unknown value. A real `u32::MAX` (49 days of lag, 136 years behind) is stored one
/// lower, which no chart can tell apart.
const UNKNOWN: u32 = u32::MAX;

impl Packed {
    fn pack(point: Point) -> Self {
        let known = |value: Option<u32>| value.map_or(UNKNOWN, |v| v.min(UNKNOWN - 1));
        Self {
            at_ms: point.at_ms,
            heartbeat_lag_ms: known(point.heartbeat_lag_ms),
            sbm_s: known(point.sbm_s),
        }
    }

    fn unpack(self) -> Point {
        let value = |v: u32| (v != UNKNOWN).then_some(v);
        Point {
            at_ms: self.at_ms,
            heartbeat_lag_ms: value(self.heartbeat_lag_ms),
            sbm_s: value(self.sbm_s),
        }
    }
}

/// A fixed-capacity ring of points in time order; the oldest go first when it is full.
#[derive(Debug, Clone)]
pub struct Series {
    points: VecDeque<Packed>,
    capacity: usize,
}

impl Series {
    /// A series that holds at most `points` points, all allocated up front so that a full
    /// series never reallocates.
    #[must_use]
    pub fn with_capacity(points: usize) -> Self {
        Self {
            points: VecDeque::with_capacity(points),
            capacity: points,
        }
    }

    /// Appends a point, dropping the oldest when full.
    ///
    /// Times must not go backwards (they come from a monotonic clock); one that does is moved up
    /// to the latest time, which keeps [`Series::since`] a binary search.
    pub fn push(&mut self, point: Point) {
        if self.capacity == 0 {
            return;
        }
        if self.points.len() == self.capacity {
            self.points.pop_front();
        }
        let mut packed = Packed::pack(point);
        if let Some(last) = self.points.back() {
            packed.at_ms = packed.at_ms.max(last.at_ms);
        }
        self.points.push_back(packed);
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.points.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Points at or after `at_ms`, oldest first (reversible, for charts drawn from the right).
    #[must_use]
    pub fn since(
        &self,
        at_ms: u64,
    ) -> impl DoubleEndedIterator<Item = Point> + ExactSizeIterator + '_ {
        let first = self.points.partition_point(|p| p.at_ms < at_ms);
        self.points.range(first..).map(|p| p.unpack())
    }

    #[must_use]
    pub fn last(&self) -> Option<Point> {
        self.points.back().map(|p| p.unpack())
    }

    /// Approximate bytes held, inline and on the heap, for the memory benchmark.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        size_of::<Self>() + self.points.capacity() * size_of::<Packed>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn point(at_ms: u64, lag: Option<u32>, sbm: Option<u32>) -> Point {
        Point {
            at_ms,
            heartbeat_lag_ms: lag,
            sbm_s: sbm,
        }
    }

    #[test]
    fn stored_points_take_16_bytes() {
        assert_eq!(size_of::<Packed>(), 16);
        let full = Series::with_capacity(3_600);
        assert!(
            full.memory_bytes() <= 3_600 * 16 + 64,
            "{}",
            full.memory_bytes()
        );
    }

    #[test]
    fn unknown_and_extreme_values_round_trip() {
        let mut series = Series::with_capacity(4);
        let points = [
            point(0, None, None),
            point(1, Some(0), Some(u32::MAX - 1)),
            point(2, Some(7), None),
        ];
        for p in points {
            series.push(p);
        }
        assert!(series.since(0).eq(points));
        series.push(point(3, Some(u32::MAX), Some(u32::MAX)));
        let clamped = Some(u32::MAX - 1);
        assert_eq!(series.last(), Some(point(3, clamped, clamped)));
    }

    #[test]
    fn full_series_drops_the_oldest() {
        let mut series = Series::with_capacity(3);
        assert!(series.is_empty() && series.last().is_none());
        (0..5).for_each(|t| series.push(point(t * 1_000, Some(1), None)));
        assert_eq!(series.len(), 3);
        let times: Vec<u64> = series.since(0).map(|p| p.at_ms).collect();
        assert_eq!(times, [2_000, 3_000, 4_000]);
        let capacity = series.points.capacity();
        (5..100).for_each(|t| series.push(point(t, None, None)));
        assert_eq!(
            series.points.capacity(),
            capacity,
            "a full ring never grows"
        );
    }

    #[test]
    fn zero_capacity_holds_nothing() {
        let mut series = Series::with_capacity(0);
        series.push(point(1, None, None));
        assert!(series.is_empty() && series.since(0).next().is_none());
    }

    #[test]
    fn times_going_backwards_are_moved_up() {
        let mut series = Series::with_capacity(8);
        series.push(point(5_000, Some(1), None));
        series.push(point(4_000, Some(2), None));
        let got: Vec<Point> = series.since(5_000).collect();
        assert_eq!(
            got,
            [point(5_000, Some(1), None), point(5_000, Some(2), None)]
        );
    }

    proptest! {
        #[test]
        fn since_matches_a_filter_over_the_newest_points(
            gaps in prop::collection::vec(0..3_000_u64, 0..400),
            capacity in 0..300_usize,
            from in 0..1_300_000_u64,
        ) {
            let mut series = Series::with_capacity(capacity);
            let mut all = Vec::new();
            let mut at_ms = 0;
            for (i, gap) in gaps.into_iter().enumerate() {
                at_ms += gap;
                let p = point(at_ms, u32::try_from(i).ok().filter(|i| i % 3 > 0), None);
                series.push(p);
                all.push(p);
            }
            let kept = &all[all.len().saturating_sub(capacity)..];
            let want: Vec<Point> = kept.iter().copied().filter(|p| p.at_ms >= from).collect();
            prop_assert_eq!(series.since(from).len(), want.len());
            prop_assert_eq!(series.since(from).rev().collect::<Vec<_>>(),
                want.into_iter().rev().collect::<Vec<_>>());
            prop_assert_eq!(series.last(), kept.last().copied());
        }
    }
}
