//! One replica channel's chart: a point per poll over the last 15 minutes (the longest window a
//! chart shows), in time order.
//!
//! The store appends to a [`ChartRing`]; views hold a [`Chart`], which shares the ring's full
//! blocks and copies only the newest, unfinished one. So a poll allocates about 2 KiB rather
//! than a fresh copy of 15 minutes (21 KiB, a thousand times a second at 1,000 replicas), and a
//! snapshot held by a reader keeps no second copy of the chart alive.

use std::collections::VecDeque;
use std::sync::Arc;

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

/// Points per shared block: about a minute of 1 s polls.
const BLOCK: usize = 64;

/// A full block, shared by the store and every view.
type Block = Arc<[Point]>;

/// A chart as a snapshot holds it: points from `from_ms` on, oldest first. Cheap to clone;
/// serialised as the plain list of its points, so recordings read the same as before.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    blocks: Arc<[Block]>,
    tail: Arc<[Point]>,
    /// Points before this are left out (the oldest block may start earlier).
    from_ms: u64,
}

impl Chart {
    /// Every point, oldest first.
    #[must_use]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Point> {
        self.since(0)
    }

    /// Points at or after `at_ms`, oldest first.
    #[must_use]
    pub fn since(&self, at_ms: u64) -> impl DoubleEndedIterator<Item = &Point> {
        let from = at_ms.max(self.from_ms);
        // Whole blocks that end before `from` are skipped without reading them.
        let skip = self
            .blocks
            .partition_point(|b| b.last().is_some_and(|p| p.at_ms < from));
        let (head, middle, tail): (&[Point], &[Block], &[Point]) = match self.blocks.get(skip) {
            Some(first) => (
                &first[first.partition_point(|p| p.at_ms < from)..],
                &self.blocks[skip + 1..],
                &self.tail,
            ),
            None => (
                &[],
                &[],
                &self.tail[self.tail.partition_point(|p| p.at_ms < from)..],
            ),
        };
        head.iter()
            .chain(middle.iter().flat_map(|b| b.iter()))
            .chain(tail.iter())
    }

    #[must_use]
    pub fn last(&self) -> Option<&Point> {
        self.iter().next_back()
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.last().is_none()
    }

    #[must_use]
    pub fn to_vec(&self) -> Vec<Point> {
        self.iter().copied().collect()
    }
}

impl PartialEq for Chart {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl From<Vec<Point>> for Chart {
    fn from(points: Vec<Point>) -> Self {
        Self {
            blocks: Arc::from([]),
            tail: Arc::from(points),
            from_ms: 0,
        }
    }
}

impl From<Arc<[Point]>> for Chart {
    fn from(points: Arc<[Point]>) -> Self {
        Self {
            blocks: Arc::from([]),
            tail: points,
            from_ms: 0,
        }
    }
}

impl From<&[Point]> for Chart {
    fn from(points: &[Point]) -> Self {
        Self::from(points.to_vec())
    }
}

impl serde::Serialize for Chart {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Chart {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Point>::deserialize(deserializer).map(Self::from)
    }
}

/// The store's side: full blocks, the block being filled, and the view handed out.
#[derive(Debug, Default)]
pub struct ChartRing {
    full: VecDeque<Block>,
    open: Vec<Point>,
    view: Chart,
}

impl ChartRing {
    /// Appends a point and forgets what is older than `span_ms` before it.
    ///
    /// Times must not go backwards (they come from a monotonic clock); a point that does is
    /// moved up to the latest time, which keeps the chart in time order.
    pub fn push(&mut self, mut point: Point, span_ms: u64) {
        let newest = self.open.last().or_else(|| self.full.back()?.last());
        if let Some(last) = newest {
            point.at_ms = point.at_ms.max(last.at_ms);
        }
        self.open.push(point);
        if self.open.len() == BLOCK {
            let full = std::mem::replace(&mut self.open, Vec::with_capacity(BLOCK));
            self.full.push_back(Arc::from(full));
        }
        let from_ms = point.at_ms.saturating_sub(span_ms);
        while self
            .full
            .front()
            .and_then(|b| b.last())
            .is_some_and(|p| p.at_ms < from_ms)
        {
            self.full.pop_front();
        }
        self.view = Chart {
            blocks: self.full.iter().cloned().collect(),
            tail: Arc::from(&self.open[..]),
            from_ms,
        };
    }

    /// The chart as it stands, for a view.
    #[must_use]
    pub fn chart(&self) -> &Chart {
        &self.view
    }

    /// Approximate bytes held, for the memory benchmark: the points once (views share them).
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        let points: usize = self.full.iter().map(|b| b.len()).sum::<usize>() + self.open.capacity();
        size_of::<Self>() + points * size_of::<Point>()
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
    fn points_older_than_the_span_are_left_out() {
        let mut ring = ChartRing::default();
        for t in 0..5 {
            ring.push(point(t * 1_000, Some(1), None), 2_000);
        }
        let times: Vec<u64> = ring.chart().iter().map(|p| p.at_ms).collect();
        assert_eq!(times, [2_000, 3_000, 4_000], "2 s back from 4 s, inclusive");
        assert_eq!(ring.chart().len(), 3);
        assert_eq!(ring.chart().last().map(|p| p.at_ms), Some(4_000));
    }

    #[test]
    fn times_going_backwards_are_moved_up() {
        let mut ring = ChartRing::default();
        ring.push(point(5_000, Some(1), None), 60_000);
        ring.push(point(4_000, Some(2), None), 60_000);
        assert_eq!(
            ring.chart().to_vec(),
            [point(5_000, Some(1), None), point(5_000, Some(2), None)]
        );
    }

    #[test]
    fn a_view_keeps_its_points_while_the_ring_moves_on_and_shares_full_blocks() {
        let mut ring = ChartRing::default();
        for t in 0..200 {
            ring.push(point(t * 1_000, Some(1), None), 900_000);
        }
        let held = ring.chart().clone();
        for t in 200..2_000 {
            ring.push(point(t * 1_000, None, Some(2)), 900_000);
        }
        assert_eq!(held.len(), 200);
        assert!(held.iter().all(|p| p.heartbeat_lag_ms == Some(1)));
        let now = ring.chart();
        assert_eq!(now.len(), 901, "15 minutes back from the newest, inclusive");
        assert!(
            Arc::ptr_eq(&now.blocks[0], &ring.full[0]),
            "views share the blocks"
        );
        // The store keeps whole blocks: at most one block beyond the span.
        assert!(ring.memory_bytes() < (901 + 2 * BLOCK) * size_of::<Point>() + 256);
    }

    #[test]
    fn serialised_as_the_list_of_its_points() {
        let mut ring = ChartRing::default();
        for t in 0..100 {
            ring.push(point(t * 1_000, Some(3), None), 30_000);
        }
        let json = serde_json::to_string(ring.chart()).unwrap();
        let list: Vec<Point> = serde_json::from_str(&json).unwrap();
        assert_eq!(list, ring.chart().to_vec());
        assert_eq!(list.len(), 31);
        let back: Chart = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, ring.chart());
    }

    proptest! {
        #[test]
        fn the_chart_is_the_points_within_the_span_of_the_newest(
            gaps in prop::collection::vec(0..3_000_u64, 1..400),
            span_ms in 0..600_000_u64,
            since in 0..1_300_000_u64,
        ) {
            let mut ring = ChartRing::default();
            let mut all = Vec::new();
            let mut at_ms = 0;
            for (i, gap) in gaps.into_iter().enumerate() {
                at_ms += gap;
                let p = point(at_ms, u32::try_from(i).ok().filter(|i| i % 3 > 0), None);
                ring.push(p, span_ms);
                all.push(p);
            }
            let from = at_ms.saturating_sub(span_ms);
            let want: Vec<Point> = all.into_iter().filter(|p| p.at_ms >= from).collect();
            prop_assert_eq!(ring.chart().to_vec(), want.clone());
            let later: Vec<Point> = want.iter().copied().filter(|p| p.at_ms >= since).collect();
            prop_assert_eq!(ring.chart().since(since).copied().collect::<Vec<_>>(), later.clone());
            prop_assert_eq!(
                ring.chart().since(since).rev().copied().collect::<Vec<_>>(),
                later.into_iter().rev().collect::<Vec<_>>()
            );
        }
    }
}
