//! What one probe found, and the per-strategy tally a bake-off or the store keeps.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units;

use super::Strategy;

/// How the read after the write went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The read saw the write (on a replica, or on the primary when the strategy reads there).
    Fresh,
    /// The read on a replica missed the write: the stale read the strategy was meant to stop.
    Stale,
    /// The strategy gave up on the replica (timeout, NULL, no eligible replica) and read the
    /// primary instead.
    FellBack,
    /// The probe could not be run or finished; `cause` says why.
    Error,
}

impl Outcome {
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Fresh => "fresh",
            Self::Stale => "stale",
            Self::FellBack => "fell back",
            Self::Error => "error",
        }
    }
}

/// One probe: a marker written on the primary and read back as the strategy dictates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    pub at: chrono::DateTime<chrono::Utc>,
    pub strategy: Strategy,
    /// The replica the probe was aimed at.
    pub target: String,
    /// The node whose read decided the outcome; `None` when no read was made.
    pub served_by: Option<String>,
    pub outcome: Outcome,
    /// Why it fell back or failed (`replication stopped`, `timeout after 1s`, a server error).
    pub cause: Option<String>,
    /// Something the operator should know about the strategy here (why semi-sync can still be
    /// stale, the recommended sticky window).
    pub note: Option<String>,
    /// Time spent waiting for the replica (sleeping, polling, inside a wait function).
    #[serde(rename = "waited_ms", with = "millis")]
    pub waited: Duration,
    /// From the write to the end of the read.
    #[serde(rename = "total_ms", with = "millis")]
    pub total: Duration,
    /// Statements sent, the write and the read included.
    pub queries: u32,
    /// Reads served by the primary: the load the strategy costs it.
    pub primary_reads: u32,
    /// What the proxies' modes add: the write's wait, the reads made, the monitor assumed.
    #[serde(flatten)]
    pub cost: ProbeCost,
}

/// The costs the proxies' modes (`docs/design.md`, "The proxies' consistency modes as
/// strategies") made visible; older results (recordings before schema 1.5) have none of these
/// and read as zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeCost {
    /// Marker reads made (the primary's included): the base of the primary's share.
    #[serde(default)]
    pub reads: u32,
    /// `gr-after`: how long the write was held until every replica had applied it, which is
    /// what `AFTER` adds to each commit. `None` for a strategy that never holds the write.
    #[serde(
        default,
        rename = "write_wait_ms",
        with = "millis_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub write_wait: Option<Duration>,
    /// The fast modes' monitor interval when the prober monitored on its own
    /// (`monitor=100ms`); `None` on rwtop's polls.
    #[serde(
        default,
        rename = "monitor_ms",
        with = "millis_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub monitor: Option<Duration>,
    /// The fast modes: how old the aimed replica's monitored position was when routed on.
    #[serde(
        default,
        rename = "position_age_ms",
        with = "millis_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub position_age: Option<Duration>,
}

/// Optional durations as fractional milliseconds.
mod millis_opt {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_f64(super::ms(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|ms| Duration::try_from_secs_f64(ms / 1000.0).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// Durations as fractional milliseconds (µs precision) in JSON and recordings.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(super::ms(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        Duration::try_from_secs_f64(ms / 1000.0).map_err(serde::de::Error::custom)
    }
}

/// Milliseconds with three decimals.
#[must_use]
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// The running figures for one strategy against one replica.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    pub probes: u32,
    pub fresh: u32,
    pub stale: u32,
    pub fell_back: u32,
    pub errors: u32,
    pub primary_reads: u32,
    pub queries: u32,
    /// Marker reads, the primary's included.
    pub reads: u32,
    /// Waits in microseconds, most recent last, bounded by [`Tally::KEEP`].
    waits_us: Vec<u64>,
    /// Write waits (`gr-after`), likewise.
    write_waits_us: Vec<u64>,
    /// Ages of the monitored positions the fast modes routed on, likewise.
    ages_us: Vec<u64>,
    /// The fast modes' own monitor interval, when they had one.
    pub monitor: Option<Duration>,
    /// Fallback and error causes with their counts.
    pub causes: BTreeMap<String, u32>,
}

/// Nearest-rank percentiles of a tally's waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitPercentiles {
    pub p50: Duration,
    pub p99: Duration,
}

/// Wait percentiles in milliseconds, as JSON shows them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WaitMs {
    pub p50: f64,
    pub p99: f64,
}

impl WaitMs {
    /// Back to durations, for text: JSON keeps the milliseconds.
    #[must_use]
    pub fn durations(self) -> WaitPercentiles {
        let d = |ms: f64| Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default();
        WaitPercentiles {
            p50: d(self.p50),
            p99: d(self.p99),
        }
    }
}

/// A tally as snapshots, JSON and the TUI show it: one row of the bake-off table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TallyView {
    pub strategy: Strategy,
    pub replica: String,
    pub probes: u32,
    pub fresh: u32,
    pub stale: u32,
    pub fell_back: u32,
    pub errors: u32,
    /// `None` until a probe got as far as waiting.
    pub wait_ms: Option<WaitMs>,
    /// Reads the primary served: what the strategy costs it.
    pub primary_reads: u32,
    pub queries: u32,
    /// Fallback and error causes with their counts.
    pub causes: BTreeMap<String, u32>,
    /// The proxies' modes' costs (schema 1.5).
    #[serde(flatten)]
    pub cost: TallyCost,
}

/// What a tally adds for the proxies' modes: read shares, write waits, the monitor assumed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TallyCost {
    /// Marker reads made, the primary's included.
    #[serde(default)]
    pub reads: u32,
    /// `primary_reads` over `reads`, in percent; `None` before a read.
    #[serde(default)]
    pub primary_share: Option<f64>,
    /// `gr-after`'s hold on the write; `None` for strategies that never hold it.
    #[serde(default)]
    pub write_wait_ms: Option<WaitMs>,
    /// The fast modes' own monitor interval; `None` when they routed on rwtop's polls.
    #[serde(default)]
    pub monitor_ms: Option<f64>,
    /// How old the monitored positions the fast modes routed on were.
    #[serde(default)]
    pub position_age_ms: Option<WaitMs>,
}

impl TallyView {
    /// The monitor a fast mode routed on: its own interval or rwtop's polls, and how old the
    /// positions were (P99).
    #[must_use]
    pub fn monitor(&self) -> String {
        let age = self.cost.position_age_ms.map(|w| w.durations().p99);
        let interval = self
            .cost
            .monitor_ms
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
        match (interval, age) {
            (None, None) => "-".to_owned(),
            (Some(d), None) => units::duration(d),
            (interval, Some(age)) => format!(
                "{}, aged {}",
                interval.map_or_else(|| "poll".to_owned(), units::duration),
                units::duration(age)
            ),
        }
    }

    /// Share of probes with this count, in percent.
    #[must_use]
    pub fn percent(&self, count: u32) -> f64 {
        if self.probes == 0 {
            0.0
        } else {
            f64::from(count) * 100.0 / f64::from(self.probes)
        }
    }

    /// The most frequent cause, for one-line displays.
    #[must_use]
    pub fn main_cause(&self) -> Option<&str> {
        self.causes
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(c, _)| c.as_str())
    }
}

impl Tally {
    /// Waits kept for percentiles; older ones drop off so a long session stays bounded.
    pub const KEEP: usize = 1000;
    /// Distinct causes kept.
    const CAUSES: usize = 16;

    pub fn add(&mut self, result: &ProbeResult) {
        self.probes += 1;
        match result.outcome {
            Outcome::Fresh => self.fresh += 1,
            Outcome::Stale => self.stale += 1,
            Outcome::FellBack => self.fell_back += 1,
            Outcome::Error => self.errors += 1,
        }
        self.primary_reads += result.primary_reads;
        self.queries += result.queries;
        self.reads += result.cost.reads;
        if result.outcome != Outcome::Error {
            keep(&mut self.waits_us, result.waited);
            if let Some(d) = result.cost.write_wait {
                keep(&mut self.write_waits_us, d);
            }
            if let Some(d) = result.cost.position_age {
                keep(&mut self.ages_us, d);
            }
        }
        if result.cost.monitor.is_some() {
            self.monitor = result.cost.monitor;
        }
        if let Some(cause) = &result.cause {
            if let Some(n) = self.causes.get_mut(cause) {
                *n += 1;
            } else if self.causes.len() < Self::CAUSES {
                self.causes.insert(cause.clone(), 1);
            }
        }
    }

    /// `None` until a probe got as far as waiting.
    #[must_use]
    pub fn waits(&self) -> Option<WaitPercentiles> {
        percentiles(&self.waits_us)
    }

    #[must_use]
    pub fn view(&self, strategy: Strategy, replica: &str) -> TallyView {
        let as_ms = |w: WaitPercentiles| WaitMs {
            p50: ms(w.p50),
            p99: ms(w.p99),
        };
        TallyView {
            strategy,
            replica: replica.to_owned(),
            probes: self.probes,
            fresh: self.fresh,
            stale: self.stale,
            fell_back: self.fell_back,
            errors: self.errors,
            wait_ms: self.waits().map(as_ms),
            primary_reads: self.primary_reads,
            queries: self.queries,
            causes: self.causes.clone(),
            cost: TallyCost {
                reads: self.reads,
                primary_share: (self.reads > 0).then(|| {
                    (f64::from(self.primary_reads) * 1000.0 / f64::from(self.reads)).round() / 10.0
                }),
                write_wait_ms: percentiles(&self.write_waits_us).map(as_ms),
                monitor_ms: self.monitor.map(ms),
                position_age_ms: percentiles(&self.ages_us).map(as_ms),
            },
        }
    }
}

/// Appends a sample, dropping the oldest past [`Tally::KEEP`].
fn keep(samples: &mut Vec<u64>, d: Duration) {
    if samples.len() == Tally::KEEP {
        samples.remove(0);
    }
    samples.push(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
}

/// Nearest-rank P50 and P99 of microsecond samples; `None` without any.
fn percentiles(samples: &[u64]) -> Option<WaitPercentiles> {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let at = |q: f64| {
        // Nearest rank: the smallest value with at least q of the samples at or below it.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        Duration::from_micros(sorted[rank - 1])
    };
    (!sorted.is_empty()).then(|| WaitPercentiles {
        p50: at(0.50),
        p99: at(0.99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(outcome: Outcome, waited_ms: u64, cause: Option<&str>) -> ProbeResult {
        ProbeResult {
            at: chrono::Utc::now(),
            strategy: Strategy::None,
            target: "r1".into(),
            served_by: Some("r1".into()),
            outcome,
            cause: cause.map(str::to_owned),
            note: None,
            waited: Duration::from_millis(waited_ms),
            total: Duration::from_millis(waited_ms + 1),
            queries: 3,
            primary_reads: u32::from(outcome == Outcome::FellBack),
            cost: ProbeCost {
                reads: 1,
                ..ProbeCost::default()
            },
        }
    }

    #[test]
    fn a_tally_counts_outcomes_costs_and_wait_percentiles() {
        let mut t = Tally::default();
        for ms in 1..=100 {
            t.add(&result(Outcome::Fresh, ms, None));
        }
        t.add(&result(Outcome::FellBack, 500, Some("timeout after 500ms")));
        t.add(&result(Outcome::Error, 0, Some("access denied")));
        assert_eq!((t.probes, t.fresh, t.fell_back, t.errors), (102, 100, 1, 1));
        assert_eq!(t.primary_reads, 1);
        assert_eq!(t.queries, 306);
        let w = t.waits().unwrap();
        // 101 waits (errors do not wait): 1..=100 ms and 500 ms.
        assert_eq!(w.p50, Duration::from_millis(51));
        assert_eq!(w.p99, Duration::from_millis(100));
        assert_eq!(t.causes.len(), 2);
        let view = t.view(Strategy::None, "r1");
        assert!((view.percent(view.fresh) - 98.04).abs() < 0.01);
        assert_eq!(view.wait_ms.map(|w| w.p99), Some(100.0));
    }

    #[test]
    fn wait_milliseconds_turn_back_into_durations() {
        let w = WaitMs {
            p50: 0.26,
            p99: 1_234.5,
        };
        let d = w.durations();
        assert_eq!(d.p50, Duration::from_micros(260));
        assert_eq!(d.p99, Duration::from_micros(1_234_500));
        let odd = WaitMs {
            p50: -1.0,
            p99: f64::NAN,
        };
        assert_eq!(odd.durations().p50, Duration::ZERO);
        assert_eq!(odd.durations().p99, Duration::ZERO);
    }

    #[test]
    fn waits_and_causes_stay_bounded() {
        let mut t = Tally::default();
        for i in 0..(Tally::KEEP as u64 + 10) {
            let cause = format!("cause {}", i % 40);
            t.add(&result(Outcome::Stale, i, Some(&cause)));
        }
        assert_eq!(t.waits_us.len(), Tally::KEEP);
        assert_eq!(t.waits().unwrap().p50, Duration::from_millis(509));
        assert_eq!(t.causes.len(), 16);
        assert_eq!(Tally::default().waits(), None);
    }
}
