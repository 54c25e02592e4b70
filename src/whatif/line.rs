//! One channel's lag series as a function of time: the heartbeat lag at any instant between two
//! samples (linear between them), what a router polling the series saw, and when a write
//! becomes visible.

use crate::store::series::Point;

/// A gap longer than this many sample spacings is not bridged: the lag inside it is unknown.
const MAX_GAP_SPACINGS: f64 = 2.5;

/// One channel's samples, times and lags in milliseconds.
#[derive(Debug, Clone)]
pub struct LagLine {
    at: Vec<f64>,
    lag: Vec<Option<f64>>,
    sbm: Vec<Option<u32>>,
    spacing: f64,
}

/// When a write becomes visible, looked for up to a deadline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Visible {
    /// At this instant (ms), at or after the first instant asked about.
    At(f64),
    /// Not by the deadline.
    NotBy,
    /// The series has a gap or ends before the answer is known.
    Unknown,
}

impl LagLine {
    /// Points in time order (as a series holds them); the spacing is their median interval.
    #[must_use]
    pub fn new(points: &[Point]) -> Self {
        #[expect(clippy::cast_precision_loss, reason = "ms since start fit a f64")]
        let at: Vec<f64> = points.iter().map(|p| p.at_ms as f64).collect();
        let mut gaps: Vec<f64> = at
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|g| *g > 0.0)
            .collect();
        gaps.sort_by(f64::total_cmp);
        let spacing = gaps.get(gaps.len() / 2).copied().unwrap_or(1_000.0);
        Self {
            at,
            lag: points
                .iter()
                .map(|p| p.heartbeat_lag_ms.map(f64::from))
                .collect(),
            sbm: points.iter().map(|p| p.sbm_s).collect(),
            spacing,
        }
    }

    /// The median interval between samples (ms): the series' resolution.
    #[must_use]
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// The instants (ms) of the samples with a known lag: the write instants of the what-if.
    pub fn known_instants(&self) -> impl Iterator<Item = f64> + '_ {
        self.at
            .iter()
            .zip(&self.lag)
            .filter(|(_, l)| l.is_some())
            .map(|(t, _)| *t)
    }

    /// How many milliseconds of known lag the series covers (spans between two known samples).
    #[must_use]
    pub fn known_ms(&self) -> f64 {
        (1..self.at.len())
            .filter_map(|i| self.segment(i - 1))
            .map(|(t0, _, t1, _)| t1 - t0)
            .sum()
    }

    /// The last sample's instant, if any.
    #[must_use]
    pub fn end(&self) -> Option<f64> {
        self.at.last().copied()
    }

    /// Segment `i..i+1` when both ends are known and it bridges no gap.
    fn segment(&self, i: usize) -> Option<(f64, f64, f64, f64)> {
        let (t0, t1) = (*self.at.get(i)?, *self.at.get(i + 1)?);
        let (l0, l1) = ((*self.lag.get(i)?)?, (*self.lag.get(i + 1)?)?);
        (t1 - t0 <= MAX_GAP_SPACINGS * self.spacing).then_some((t0, l0, t1, l1))
    }

    /// The index of the last sample at or before `t`.
    fn before(&self, t: f64) -> Option<usize> {
        self.at.partition_point(|a| *a <= t).checked_sub(1)
    }

    /// The heartbeat lag (ms) at instant `t`, linear between the two samples around it.
    #[must_use]
    pub fn lag_at(&self, t: f64) -> Option<f64> {
        let i = self.before(t)?;
        if self.at[i].total_cmp(&t).is_eq() {
            return self.lag[i];
        }
        let (t0, l0, t1, l1) = self.segment(i)?;
        Some(l0 + (l1 - l0) * (t - t0) / (t1 - t0))
    }

    /// The lag a router that reads the series saw at `t`: the newest sample at or before it
    /// (`None` when that sample's lag is unknown, or there is none).
    #[must_use]
    pub fn measured_at(&self, t: f64) -> Option<f64> {
        self.lag[self.before(t)?]
    }

    /// The first instant in `from..=deadline` when `Seconds_Behind_Master` reads 0: `from`
    /// itself when the newest sample before it says 0, else the first later sample that does.
    #[must_use]
    pub fn sbm_zero(&self, from: f64, deadline: f64) -> Visible {
        let Some(i) = self.before(from) else {
            return Visible::Unknown;
        };
        if self.sbm[i] == Some(0) {
            return Visible::At(from);
        }
        for j in i + 1..self.at.len() {
            if self.at[j] > deadline {
                return Visible::NotBy;
            }
            if self.sbm[j] == Some(0) {
                return Visible::At(self.at[j]);
            }
        }
        Visible::Unknown
    }

    /// Whether a write made at `write` is visible at `t`: the lag then is at most the time
    /// since the write. `None` when the lag at `t` is unknown.
    #[must_use]
    pub fn visible(&self, write: f64, t: f64) -> Option<bool> {
        self.lag_at(t).map(|lag| lag <= t - write)
    }

    /// The first instant in `from..=deadline` when a write made at `write` is visible: where
    /// `t − write − lag(t)` turns non-negative, solved on each linear segment.
    #[must_use]
    pub fn first_visible(&self, write: f64, from: f64, deadline: f64) -> Visible {
        match self.visible(write, from) {
            None => return Visible::Unknown,
            Some(true) => return Visible::At(from),
            Some(false) => {}
        }
        let Some(mut i) = self.before(from) else {
            return Visible::Unknown;
        };
        let mut start = from;
        loop {
            let Some((t0, l0, t1, l1)) = self.segment(i) else {
                return Visible::Unknown;
            };
            // On the segment, g(t) = t − write − lag(t) is linear; g(start) < 0.
            let slope = 1.0 - (l1 - l0) / (t1 - t0);
            let g_end = t1 - write - l1;
            if g_end >= 0.0 && slope > 0.0 {
                let g_start = start - write - (l0 + (l1 - l0) * (start - t0) / (t1 - t0));
                let at = start - g_start / slope;
                return if at <= deadline {
                    Visible::At(at.max(start))
                } else {
                    Visible::NotBy
                };
            }
            if t1 >= deadline {
                return Visible::NotBy;
            }
            start = t1;
            i += 1;
        }
    }
}
