//! A channel's lag between two readings: a stalled reading carried forward with the clock, and a
//! delayed replica's next apply batch foreseen.
//!
//! A reading is taken at one instant and shown at a later one, when the store publishes. A
//! channel that applied nothing between its last two readings is standing still, and its lag
//! grows with the clock until a reading says otherwise; any other reading is shown as read.
//!
//! A replica with a `SQL_Delay` stands still most of the time and then jumps: the server holds
//! each event until its timestamp plus the delay, and the timestamps count whole seconds, so it
//! applies a whole second of the source's commits at once, once a second, at a steady point in
//! the second (`docs/server-facts.md`, "What `SQL_Delay` does"). Its lag is a saw: one second high
//! just before a batch, and the batch takes it back a second. Carried forward across a batch it
//! would read a second high until the next reading, and a publication that falls between a batch
//! and the reading after it would show that. So the batch each reading sees is remembered (the
//! two readings around it, and how far it moved what is missing), and the next one is foreseen a
//! second later: a publication past the middle of that window, with no reading since, shows the
//! lag as the batch left it. Only the batch next after one seen is foreseen: once a reading has
//! passed it, nothing more is until the replica is seen to jump again, so an applier that stopped
//! reads a second low for one reading interval at most.

use std::time::{Duration, Instant};

use super::lag::Lag;

/// How far two readings' "missing since" instants may differ and still be the same work: own
/// heartbeats give the same instant to the nanosecond; pt-heartbeat's `NOW(6) − ts` moves by a
/// query's jitter, far less than the second between its updates.
pub const STALL_JITTER: Duration = Duration::from_millis(20);

/// How often a delayed replica applies a batch: the delay's unit.
const BATCH_EVERY: Duration = Duration::from_secs(1);

/// What a batch moves the missing work by: about a second of the source's commits (a batch cut
/// in two by a reading moves it less, and is not a rhythm to foresee).
const BATCH_STEP: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(600)..=Duration::from_millis(1_400);

/// A lag reading and whether the channel stands still: when two readings in a row find the same
/// work missing, the lag grows with the clock until a reading says otherwise.
#[derive(Debug, Clone)]
pub struct Carried {
    pub lag: Lag,
    /// When the oldest work the newest exact reading found missing was committed (the reading's
    /// instant less its lag).
    missing_since: Option<Instant>,
    stalled: bool,
    /// When the newest reading was sent.
    read_at: Option<Instant>,
    /// The newest batch a delayed channel was seen to apply.
    batch: Option<Batch>,
    /// The first part of a batch a reading fell inside of.
    partial: Option<Batch>,
}

/// One apply batch of a delayed replica, as two readings saw it.
#[derive(Debug, Clone, Copy)]
struct Batch {
    /// The reading before it and the reading that found it applied.
    before: Instant,
    by: Instant,
    /// How far it moved the oldest missing work.
    step: Duration,
}

impl Batch {
    /// The middle of the window in which the next batch is due.
    fn next_due(&self) -> Instant {
        self.before + (self.by - self.before) / 2 + BATCH_EVERY
    }
}

impl Carried {
    #[must_use]
    pub fn new(reason: &str) -> Self {
        Self {
            lag: Lag::Unknown {
                reason: reason.to_owned(),
            },
            missing_since: None,
            stalled: false,
            read_at: None,
            batch: None,
            partial: None,
        }
    }

    /// When the oldest work the newest exact reading found missing was committed; `None` when
    /// it found none missing or was no exact reading.
    #[must_use]
    pub fn missing_since(&self) -> Option<Instant> {
        self.missing_since
    }

    /// Records a reading sent at `at`; `delayed`: the channel has a `SQL_Delay`, so it applies
    /// in batches worth foreseeing.
    pub fn record(&mut self, at: Instant, lag: Lag, delayed: bool) {
        let since = match lag {
            Lag::Exact { lag } if !lag.is_zero() => at.checked_sub(lag),
            _ => None,
        };
        self.stalled = matches!((since, self.missing_since), (Some(now), Some(before))
            if now.max(before) - now.min(before) <= STALL_JITTER);
        let moved = match (since, self.missing_since, self.read_at) {
            (Some(now), Some(before), Some(read_before))
                if delayed && now > before + STALL_JITTER =>
            {
                Some(Batch {
                    before: read_before,
                    by: at,
                    step: now - before,
                })
            }
            _ => None,
        };
        // A reading can fall inside a batch (applying one takes a few milliseconds): the part
        // seen first opens it, the rest completes it, and the batch began in the window before
        // that first part.
        let moved = match (moved, self.partial.take()) {
            (Some(rest), Some(first)) => Some(Batch {
                step: first.step + rest.step,
                ..first
            }),
            (moved, _) => moved,
        };
        self.batch = match moved {
            Some(batch) if BATCH_STEP.contains(&batch.step) => Some(batch),
            Some(part) if part.step < *BATCH_STEP.start() => {
                self.partial = Some(part);
                self.batch
            }
            None if self.stalled => self.batch,
            _ => None,
        };
        self.missing_since = since;
        self.lag = lag;
        self.read_at = Some(at);
    }

    /// The lag at `now`: a stalled reading carried forward to `now`, so a stop is shown as long
    /// as it is and not as it was one read (and one publication) ago, less the batch a delayed
    /// replica has applied since, by its rhythm; a delayed replica read inside a batch as the batch
    /// will leave it; any other reading as it was read, since the channel was still moving then.
    #[must_use]
    pub fn at(&self, now: Instant) -> Lag {
        match (&self.lag, self.missing_since) {
            (Lag::Exact { lag }, Some(since)) if self.stalled => {
                if let (Some(batch), Some(read)) = (self.batch, self.read_at) {
                    let due = batch.next_due();
                    if read < due && due <= now {
                        return Lag::Exact {
                            lag: now.saturating_duration_since(since + batch.step),
                        };
                    }
                }
                Lag::Exact {
                    lag: now.saturating_duration_since(since).max(*lag),
                }
            }
            // Read inside a batch, which takes milliseconds: shown as the batch will leave it,
            // a step like the last one on from where it began.
            (Lag::Exact { .. }, Some(since)) => match (self.partial, self.batch) {
                (Some(part), Some(batch)) if part.step < batch.step => Lag::Exact {
                    lag: now
                        .saturating_duration_since(since + batch.step.saturating_sub(part.step)),
                },
                _ => self.lag.clone(),
            },
            (lag, _) => lag.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::Carried;
    use crate::store::testkit::exact_ms as exact;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_stalled_reading_grows_with_the_clock() {
        let t0 = Instant::now();
        let mut carried = Carried::new("none yet");
        carried.record(t0 + ms(1000), exact(1000), false);
        assert_eq!(carried.at(t0 + ms(1300)), exact(1000));
        carried.record(t0 + ms(1250), exact(1250), false);
        assert_eq!(carried.at(t0 + ms(1400)), exact(1400));
        carried.record(t0 + ms(1500), exact(0), false);
        assert_eq!(carried.at(t0 + ms(1700)), exact(0));
    }

    /// A replica 5 s delayed, read every 50 ms, applying a second of commits at .520 of each
    /// second: readings lack what was committed since `missing` (t0 + 0.9 s before the batch).
    fn delayed(carried: &mut Carried, t0: Instant, from_ms: u64, to_ms: u64, delayed: bool) {
        for read in (from_ms..=to_ms).step_by(50) {
            // Batches at 5.520, 6.520, …: each applies the next second of commits.
            let batches = (read.saturating_sub(5_520) / 1_000) + u64::from(read >= 5_520);
            let missing = 900 + 1_000 * batches;
            carried.record(t0 + ms(read), exact(read - missing), delayed);
        }
    }

    /// Readings every 50 ms from `from_ms` to `to_ms` of a replica that stands still, lacking
    /// what was committed since `since_ms`.
    fn standing(carried: &mut Carried, t0: Instant, (from_ms, to_ms): (u64, u64), since_ms: u64) {
        for read in (from_ms..=to_ms).step_by(50) {
            carried.record(t0 + ms(read), exact(read - since_ms), true);
        }
    }

    /// Read up to 6.450 s, then inside the batch at 6.520 (half of it at 6.530), then standing
    /// until `to_ms`.
    fn halfway(t0: Instant, to_ms: u64) -> Carried {
        let mut carried = Carried::new("none yet");
        delayed(&mut carried, t0, 5_000, 6_450, true);
        carried.record(t0 + ms(6_530), exact(6_530 - 2_400), true);
        standing(&mut carried, t0, (6_580, to_ms), 2_900);
        carried
    }

    #[test]
    fn a_delayed_replicas_next_batch_is_foreseen_between_two_readings() {
        let t0 = Instant::now();
        let mut carried = Carried::new("none yet");
        delayed(&mut carried, t0, 5_000, 7_500, true);
        // Read at 7.500, lacking what was committed since 2.9 s: 4.6 s behind.
        assert_eq!(carried.at(t0 + ms(7_500)), exact(4_600));
        // Published at 7.510, before the batch due at 7.525 (between the reads at 6.500 and
        // 6.550): carried forward.
        assert_eq!(carried.at(t0 + ms(7_510)), exact(4_610));
        // Published at 7.540, past it, with no reading since: the batch took a second off.
        assert_eq!(carried.at(t0 + ms(7_540)), exact(3_640));
        // Carried forward alone, it would read a second high: what this rhythm is for.
        let mut plain = Carried::new("none yet");
        delayed(&mut plain, t0, 5_000, 7_500, false);
        assert_eq!(plain.at(t0 + ms(7_540)), exact(4_640));
    }

    #[test]
    fn a_batch_read_halfway_is_one_batch() {
        let t0 = Instant::now();
        // The batch at 6.520 took 40 ms, and the reading at 6.530 found half of it applied.
        let carried = halfway(t0, 7_530);
        // Due in the middle of 6.450..6.530, a second later: 7.490, before the last reading.
        assert_eq!(carried.at(t0 + ms(7_540)), exact(4_640));
        let mut carried = halfway(t0, 7_480);
        assert_eq!(carried.at(t0 + ms(7_495)), exact(3_595), "foreseen");
        // Read inside that batch: shown as the batch will leave it, a second on.
        carried.record(t0 + ms(7_500), exact(7_500 - 3_300), true);
        assert_eq!(carried.at(t0 + ms(7_510)), exact(3_610));
    }

    #[test]
    fn a_batch_that_does_not_come_is_foreseen_once_at_most() {
        let t0 = Instant::now();
        let mut carried = Carried::new("none yet");
        delayed(&mut carried, t0, 5_000, 6_550, true);
        // The applier stops after the batch at 6.520: the readings stand still at 2.9 s.
        standing(&mut carried, t0, (6_600, 7_500), 2_900);
        // Until a reading passes the batch due at 7.525, it is foreseen.
        assert_eq!(carried.at(t0 + ms(7_540)), exact(3_640));
        carried.record(t0 + ms(7_550), exact(4_650), true);
        assert_eq!(carried.at(t0 + ms(7_560)), exact(4_660));
        // And never again until the replica jumps.
        standing(&mut carried, t0, (7_600, 8_500), 2_900);
        assert_eq!(carried.at(t0 + ms(8_540)), exact(5_640));
    }
}
