//! Heartbeat-lag distributions over the last 1, 5 and 15 minutes of one replica.
//!
//! A thousand replicas must fit in a few hundred megabytes and all are summarised every second,
//! so the layout trades a little time precision for memory and snapshot cost:
//!
//! * Samples stay raw (whole milliseconds) in a ring of one-minute slots: the current partial
//!   minute and the 15 before it. At a heartbeat read every 250 ms that is ~1 KiB a minute, a
//!   quarter of a per-minute histogram, and every slot's maximum stays exact.
//! * The 5- and 15-minute windows cover the last 5 (or 15) complete minutes plus the current
//!   partial one. A histogram (2 significant digits: within 1 %) per window holds exactly those
//!   minutes; samples go into both as they arrive and both are rebuilt from the ring when it
//!   turns, once a minute. A snapshot only walks a histogram and never merges one.
//! * The 1-minute window is exact in time, from the raw samples of the current and previous
//!   minute, which also keep each sample's offset in its minute.
//!
//! Times are whole milliseconds since the first sample, and minutes count from it, not from the
//! wall clock. Percentiles are nearest-rank, so the P99 of one sample is that sample, and never
//! exceed the window's exact maximum. Once `now` leaves the latest sample's minute (a replica
//! that stopped reporting) no histogram matches the window, and the raw samples are summarised
//! instead, at some microseconds more per call.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// Length of one ring slot, in milliseconds.
const SLOT_MS: u64 = 60_000;
/// Complete minutes the longest window reaches back, before the current partial minute.
const MAX_WHOLE_MINUTES: u64 = 15;
/// Ring length: the longest window plus the current partial minute.
const SLOTS: usize = 16;
/// Histogram percentiles stop at an hour (maxima and 1-minute percentiles do not): a wider range
/// would cost buckets on every replica for lags that no longer need precision.
const HIGHEST_TRACKED_MS: u64 = 3_600_000;
/// Two significant digits keep percentiles within 1 % while a histogram is 2,048 counters.
const SIGNIFICANT_DIGITS: u8 = 2;

/// A sliding window that rwtop shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Window {
    OneMinute,
    FiveMinutes,
    FifteenMinutes,
}

impl Window {
    /// In display order, shortest first.
    pub const ALL: [Self; 3] = [Self::OneMinute, Self::FiveMinutes, Self::FifteenMinutes];

    #[must_use]
    pub const fn duration(self) -> Duration {
        match self {
            Self::OneMinute => Duration::from_secs(60),
            Self::FiveMinutes => Duration::from_secs(5 * 60),
            Self::FifteenMinutes => Duration::from_secs(15 * 60),
        }
    }
}

/// Summary of the lag samples in one window.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WindowStats {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub samples: u64,
}

impl WindowStats {
    fn from_ms(p50: u64, p99: u64, max: u64, samples: u64) -> Self {
        let ms = Duration::from_millis;
        Self {
            p50: ms(p50),
            p99: ms(p99),
            max: ms(max),
            samples,
        }
    }
}

/// One minute of raw samples.
#[derive(Debug, Default)]
struct Slot {
    /// Minute since the first sample that `lags` belongs to; stale when the ring has moved on.
    minute: u64,
    /// Kept so that a window's maximum needs no scan of the samples.
    max_ms: u32,
    lags: Vec<u32>,
}

/// Lag distributions of one replica over sliding windows of up to 15 minutes.
#[derive(Debug)]
pub struct LagWindows {
    /// Instant of the first sample; all times are milliseconds since it.
    origin: Option<Instant>,
    /// Time of the latest sample, which fixes the current minute of the ring.
    latest_ms: u64,
    slots: [Slot; SLOTS],
    /// Offsets within their minute of the samples of the current and previous minute (indexed
    /// by minute parity, parallel to those slots' `lags`): only the exact 1-minute window needs
    /// them, so older minutes do not pay for them.
    offsets: [Vec<u16>; 2],
    /// Samples of the current minute and the 5 complete minutes before it.
    five: Histogram<u32>,
    /// Samples of the current minute and the 15 complete minutes before it.
    fifteen: Histogram<u32>,
}

impl Default for LagWindows {
    fn default() -> Self {
        Self::new()
    }
}

impl LagWindows {
    #[must_use]
    pub fn new() -> Self {
        Self {
            origin: None,
            latest_ms: 0,
            slots: std::array::from_fn(|_| Slot::default()),
            offsets: [Vec::new(), Vec::new()],
            five: new_histogram(),
            fifteen: new_histogram(),
        }
    }

    /// Records one sample taken at `at`.
    ///
    /// Samples are expected in time order; one stamped earlier than the latest is counted at the
    /// latest instant, so a late delivery can neither reopen a rotated minute nor be lost.
    /// Lags are kept in whole milliseconds (below 1 ms counts as 0) and saturate at ~49 days.
    pub fn record(&mut self, at: Instant, lag: Duration) {
        let origin = *self.origin.get_or_insert(at);
        let at_ms = millis(at.saturating_duration_since(origin)).max(self.latest_ms);
        let minute = at_ms / SLOT_MS;
        if minute > self.latest_ms / SLOT_MS {
            self.advance(minute);
        }
        self.latest_ms = at_ms;

        let lag_ms = u32::try_from(lag.as_millis()).unwrap_or(u32::MAX);
        let slot = &mut self.slots[ring_index(minute)];
        slot.lags.push(lag_ms);
        slot.max_ms = slot.max_ms.max(lag_ms);
        // `at_ms % SLOT_MS` is below 60,000, so it always fits.
        let offset = u16::try_from(at_ms % SLOT_MS).unwrap_or(u16::MAX);
        self.offsets[parity(minute)].push(offset);
        track(&mut self.five, lag_ms);
        track(&mut self.fifteen, lag_ms);
    }

    /// Statistics of `window` ending at `now`, or `None` when it holds no sample.
    #[must_use]
    pub fn stats(&self, now: Instant, window: Window) -> Option<WindowStats> {
        self.stats_over(now, window.duration())
    }

    /// Statistics of the last `span` ending at `now`, for spans other than the usual three.
    ///
    /// Up to one minute the window is exact to the millisecond. Longer spans round up to whole
    /// minutes and cover that many complete minutes plus the current partial one, at most 15.
    /// A `now` before the latest sample counts as that sample's instant.
    #[must_use]
    pub fn stats_over(&self, now: Instant, span: Duration) -> Option<WindowStats> {
        let origin = self.origin?;
        let now_ms = millis(now.saturating_duration_since(origin)).max(self.latest_ms);
        let span_ms = millis(span);
        if span_ms <= SLOT_MS {
            return self.exact_stats(now_ms, span_ms);
        }
        let minutes = span_ms.div_ceil(SLOT_MS).min(MAX_WHOLE_MINUTES);
        let cached = match minutes {
            5 => Some(&self.five),
            MAX_WHOLE_MINUTES => Some(&self.fifteen),
            _ => None,
        };
        self.slot_stats(now_ms, minutes, cached)
    }

    /// Approximate bytes held, inline and on the heap, for the memory benchmark.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        let lags: usize = self.slots.iter().map(|s| s.lags.capacity()).sum();
        let offsets: usize = self.offsets.iter().map(Vec::capacity).sum();
        let counters = self.five.distinct_values() + self.fifteen.distinct_values();
        size_of::<Self>() + (lags + counters) * size_of::<u32>() + offsets * size_of::<u16>()
    }

    /// Moves the ring forward to `minute`, clearing the minutes it enters and rebuilding the
    /// window histograms from the minutes still in reach.
    fn advance(&mut self, minute: u64) {
        let next = self.latest_ms / SLOT_MS + 1;
        // After idle minutes the rate to come is unknown, so their buffers are given back.
        let steady = minute == next;
        for m in next.max(minute.saturating_sub(MAX_WHOLE_MINUTES))..=minute {
            let slot = &mut self.slots[ring_index(m)];
            clear_for_reuse(&mut slot.lags, steady);
            (slot.minute, slot.max_ms) = (m, 0);
            clear_for_reuse(&mut self.offsets[parity(m)], steady);
        }
        self.five.reset();
        self.fifteen.reset();
        let slots = &self.slots;
        let live = |m| Some((m, live_slot(slots, m)?));
        for (m, slot) in (minute.saturating_sub(MAX_WHOLE_MINUTES)..minute).filter_map(live) {
            for &lag in &slot.lags {
                track(&mut self.fifteen, lag);
                if minute - m <= 5 {
                    track(&mut self.five, lag);
                }
            }
        }
    }

    /// Samples in `(now_ms - span_ms, now_ms]`, for spans of at most a minute, which can only
    /// reach into the previous minute.
    fn exact_stats(&self, now_ms: u64, span_ms: u64) -> Option<WindowStats> {
        let cutoff = now_ms.checked_sub(span_ms);
        let minute_now = now_ms / SLOT_MS;
        let mut lags = Vec::new();
        let live = |m| Some((m, live_slot(&self.slots, m)?));
        for (m, slot) in (minute_now.saturating_sub(1)..=minute_now).filter_map(live) {
            // A live minute no older than the previous one has its offsets in step with `lags`.
            let timed = self.offsets[parity(m)].iter().zip(&slot.lags);
            let recent = |&(&offset, _): &(&u16, &u32)| {
                cutoff.is_none_or(|c| (m * SLOT_MS).saturating_add(offset.into()) > c)
            };
            lags.extend(timed.filter(recent).map(|(_, &lag)| lag));
        }
        exact_summary(&mut lags)
    }

    /// Samples of the minutes `minute(now) - minutes ..= minute(now)`, from `cached` when it
    /// holds exactly those minutes (`now` is in the current minute), else from the raw slots.
    fn slot_stats(
        &self,
        now_ms: u64,
        minutes: u64,
        cached: Option<&Histogram<u32>>,
    ) -> Option<WindowStats> {
        let minute_now = now_ms / SLOT_MS;
        let in_window = || {
            (minute_now.saturating_sub(minutes)..=minute_now)
                .filter_map(|m| live_slot(&self.slots, m))
        };
        let max_ms = in_window().map(|s| s.max_ms).max()?;
        let cached = cached.filter(|_| minute_now == self.latest_ms / SLOT_MS);
        let Some(histogram) = cached else {
            let mut lags: Vec<u32> = in_window().flat_map(|s| s.lags.iter().copied()).collect();
            return exact_summary(&mut lags);
        };
        let (samples, max_ms) = (histogram.len(), u64::from(max_ms));
        // The histogram reports the top of a bucket, which may lie above every sample.
        let at = |p| {
            histogram
                .value_at_quantile(quantile_for(rank(samples, p), samples))
                .min(max_ms)
        };
        Some(WindowStats::from_ms(at(50), at(99), max_ms, samples))
    }
}

/// The slot holding `minute`, if it is still in the ring and has samples.
fn live_slot(slots: &[Slot; SLOTS], minute: u64) -> Option<&Slot> {
    let slot = &slots[ring_index(minute)];
    (slot.minute == minute && !slot.lags.is_empty()).then_some(slot)
}

fn new_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, HIGHEST_TRACKED_MS, SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// Counts a lag in a window histogram, at most [`HIGHEST_TRACKED_MS`] so that every window
/// caps its percentiles at the same value whatever the histogram's internal headroom.
fn track(histogram: &mut Histogram<u32>, lag_ms: u32) {
    histogram.saturating_record(u64::from(lag_ms).min(HIGHEST_TRACKED_MS));
}

/// Nearest-rank percentiles of raw samples, reordering them.
fn exact_summary(lags: &mut [u32]) -> Option<WindowStats> {
    let max = *lags.iter().max()?;
    let samples = u64::try_from(lags.len()).unwrap_or(u64::MAX);
    let last = lags.len() - 1;
    let index = |percent| usize::try_from(rank(samples, percent) - 1).map_or(last, |i| i.min(last));
    let (i50, i99) = (index(50), index(99));
    let p99 = *lags.select_nth_unstable(i99).1;
    // Selecting the P99 left only smaller samples before it, so the P50 is among them.
    let p50 = *lags[..=i99].select_nth_unstable(i50).1;
    Some(WindowStats::from_ms(
        p50.into(),
        p99.into(),
        max.into(),
        samples,
    ))
}

/// 1-based nearest rank, `ceil(samples * percent / 100)`, at least 1.
fn rank(samples: u64, percent: u64) -> u64 {
    samples.saturating_mul(percent).div_ceil(100).max(1)
}

/// A quantile that `Histogram::value_at_quantile` turns back into exactly `rank`.
///
/// It computes `ceil(quantile * samples)`; aiming half a sample below the rank keeps float
/// rounding from landing on the neighbouring rank.
#[allow(clippy::cast_precision_loss, reason = "counts stay far below 2^52")]
fn quantile_for(rank: u64, samples: u64) -> f64 {
    (rank as f64 - 0.5) / samples as f64
}

/// Empties a buffer that the next minute will refill.
///
/// A steady rate keeps its buffer and reallocates nothing, while a burst or an idle replica
/// should not pin a large buffer for the rest of the run.
fn clear_for_reuse<T>(buffer: &mut Vec<T>, keep: bool) {
    let used = if keep { buffer.len() } else { 0 };
    buffer.clear();
    if buffer.capacity() > 2 * used + 64 {
        buffer.shrink_to(used);
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn ring_index(minute: u64) -> usize {
    // The remainder is below SLOTS, so it always fits.
    usize::try_from(minute % SLOTS as u64).unwrap_or(0)
}

fn parity(minute: u64) -> usize {
    usize::from(minute % 2 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SEC: u64 = 1_000;
    const MIN: u64 = 60 * SEC;

    type Summary = (u64, u64, u64, u64);

    /// Windows fed `(ms since start, lag ms)` samples, with the start instant.
    fn fed(samples: &[(u64, u32)]) -> (LagWindows, Instant) {
        let start = Instant::now();
        let mut windows = LagWindows::new();
        for &(t, lag) in samples {
            windows.record(start + ms(t), ms(lag.into()));
        }
        (windows, start)
    }

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// `(p50, p99, max, samples)` in ms of `window` at `now_ms` after `start`.
    fn get(windows: &LagWindows, start: Instant, now_ms: u64, window: Window) -> Option<Summary> {
        let stats = windows.stats(start + ms(now_ms), window)?;
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap();
        Some((ms(stats.p50), ms(stats.p99), ms(stats.max), stats.samples))
    }

    #[test]
    fn windows_are_listed_shortest_first() {
        let secs: Vec<u64> = Window::ALL.iter().map(|w| w.duration().as_secs()).collect();
        assert_eq!(secs, [60, 300, 900]);
        let (windows, start) = fed(&[]);
        assert!(
            Window::ALL
                .iter()
                .all(|&w| windows.stats(start, w).is_none())
        );
    }

    #[test]
    fn one_sample_is_every_statistic_and_extremes_are_clamped() {
        let (windows, start) = fed(&[(500, 1_234)]);
        for window in Window::ALL {
            let got = get(&windows, start, SEC, window);
            assert_eq!(got, Some((1_234, 1_234, 1_234, 1)), "{window:?}");
        }
        let (mut windows, start) = fed(&[(0, u32::MAX)]);
        windows.record(start, Duration::MAX);
        let (p50, p99, max, _) = get(&windows, start, 0, Window::FiveMinutes).unwrap();
        assert_eq!(max, u64::from(u32::MAX));
        let hour = HIGHEST_TRACKED_MS..=HIGHEST_TRACKED_MS * 101 / 100;
        assert!(hour.contains(&p50) && hour.contains(&p99), "{p50} {p99}");
        let mut windows = LagWindows::new();
        windows.record(start, Duration::from_micros(400));
        let got = get(&windows, start, 0, Window::FifteenMinutes);
        assert_eq!(got, Some((0, 0, 0, 1)), "sub-millisecond lag counts as 0");
    }

    #[test]
    fn one_minute_window_is_exact_in_time() {
        let samples: Vec<(u64, u32)> = (0..=150_u32).map(|s| (u64::from(s) * SEC, s)).collect();
        let (windows, start) = fed(&samples);
        // (90 s, 150 s] holds lags 91..=150.
        let at = |t| get(&windows, start, t, Window::OneMinute);
        assert_eq!(at(150 * SEC), Some((120, 150, 150, 60)));
        assert_eq!(at(200 * SEC), Some((145, 150, 150, 10)));
        assert_eq!(at(210 * SEC), None);
    }

    #[test]
    fn long_windows_keep_whole_minutes_until_they_expire() {
        let (windows, start) = fed(&[(0, 900), (MIN + 10 * SEC, 5), (6 * MIN, 7)]);
        let at = |t| get(&windows, start, t, Window::FiveMinutes);
        assert_eq!(
            at(6 * MIN),
            Some((5, 7, 7, 2)),
            "minute 0 left as minute 6 began"
        );
        assert_eq!(
            at(7 * MIN),
            Some((7, 7, 7, 1)),
            "idle time slides the window too"
        );
        assert_eq!(at(12 * MIN), None);
        let fifteen = get(&windows, start, 15 * MIN + 59 * SEC, Window::FifteenMinutes);
        assert_eq!(fifteen, Some((7, 900, 900, 3)));
        let two_minutes = windows.stats_over(start + ms(7 * MIN), ms(2 * MIN));
        assert_eq!(two_minutes.map(|s| s.samples), Some(1));
    }

    #[test]
    fn a_long_gap_empties_the_ring_and_late_samples_count_as_latest() {
        let (mut windows, start) = fed(&[(0, 100), (40 * MIN, 3)]);
        windows.record(start + ms(MIN), ms(4));
        let got = get(&windows, start, 0, Window::FifteenMinutes);
        assert_eq!(got, Some((3, 4, 4, 2)));
    }

    #[test]
    fn memory_stays_small_and_idle_minutes_give_it_back() {
        let samples: Vec<(u64, u32)> = (0..20 * 240).map(|i| (i * 250, 5)).collect();
        let (mut windows, start) = fed(&samples);
        assert_eq!(windows.five.distinct_values(), 2_048);
        let full = windows.memory_bytes();
        assert!(full < 40 * 1024, "{full} bytes");
        windows.record(start + ms(40 * MIN), ms(5));
        assert!(windows.memory_bytes() < full - 16 * 1024);
    }

    /// Lags from a few ms to beyond the histogram's hour, mostly small, as heartbeats are.
    fn long_tailed_lag() -> impl Strategy<Value = u32> {
        prop_oneof![8 => 0..50_u32, 4 => 0..2_000_u32, 2 => 0..200_000_u32, 1 => 0..8_000_000_u32]
    }

    /// Gaps between samples: mostly a heartbeat period, sometimes an outage of minutes.
    fn gap() -> impl Strategy<Value = u64> {
        prop_oneof![200 => 0..1_000_u64, 1 => 0..6 * MIN]
    }

    fn naive(mut lags: Vec<u32>) -> Option<Summary> {
        lags.sort_unstable();
        let n = u64::try_from(lags.len()).unwrap();
        let at = |p| u64::from(lags[usize::try_from(rank(n, p)).unwrap() - 1]);
        (n > 0).then(|| (at(50), at(99), at(100), n))
    }

    /// Within the histogram's precision above the true value, for lags the histogram tracks.
    fn close(got: u64, want: u64) -> bool {
        let low = want.min(HIGHEST_TRACKED_MS);
        got >= low && got <= want.max(low + low / 100)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn agrees_with_a_sorting_model(
            steps in prop::collection::vec((gap(), long_tailed_lag(), 0..40_u8), 1..3_000),
            later in 0..20 * MIN,
            span in 0..=MIN,
        ) {
            let start = Instant::now();
            let mut windows = LagWindows::new();
            let mut seen: Vec<(u64, u32)> = Vec::new();
            let mut t = 0;
            for (i, (gap, lag, query)) in (0_u64..).zip(steps) {
                t += if i == 0 { 0 } else { gap };
                windows.record(start + ms(t), ms(lag.into()));
                seen.push((t, lag));
                if query > 1 {
                    continue;
                }
                // Half the queries come from later on, with no sample since.
                let now = t + u64::from(query) * (later * i % (20 * MIN));
                let since = |from: u64| seen.iter().filter(move |s| s.0 >= from).map(|s| s.1);
                for span in [MIN, span] {
                    let got = windows.stats_over(start + ms(now), ms(span));
                    let got = got.map(|s| (s.p50, s.p99, s.max, s.samples));
                    let want = naive(since((now + 1).saturating_sub(span)).collect());
                    prop_assert_eq!(got, want.map(|(a, b, c, n)| (ms(a), ms(b), ms(c), n)));
                }
                for window in [Window::FiveMinutes, Window::FifteenMinutes] {
                    let minutes = window.duration().as_secs() / 60;
                    let want = naive(since((now / MIN).saturating_sub(minutes) * MIN).collect());
                    let got = get(&windows, start, now, window);
                    prop_assert_eq!(got.map(|g| (g.2, g.3)), want.map(|w| (w.2, w.3)));
                    if let (Some(got), Some(want)) = (got, want) {
                        prop_assert!(close(got.0, want.0), "p50 {} vs {}", got.0, want.0);
                        prop_assert!(close(got.1, want.1), "p99 {} vs {}", got.1, want.1);
                    }
                }
            }
        }
    }
}
