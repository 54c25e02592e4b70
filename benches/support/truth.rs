//! Ground truth for replication lag, measured beside rwtop with nothing of rwtop's: rows inserted
//! on the primary at a steady rate, each remembered with the local instant its INSERT was
//! acknowledged, and each replica's newest row read every few milliseconds on a connection of its
//! own. Shared by the `lag_truth` bench and the live lag tests.
//!
//! Truth for a replica at instant `t` is how long it has been missing the oldest acknowledged row
//! it lacks: `t − ack(oldest row not yet visible at t)`, and 0 when it has every row acknowledged
//! before `t`. Rows apply in order (one SQL thread), so "oldest row lacking" is the newest row
//! visible plus one; between two reads of a replica its newest row is interpolated linearly.
//! Resolution: one row interval (100 ms at 10 rows a second) — truth is itself a lower bound of
//! how far behind the replica is, by up to one row interval.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rwtop::mysql::{Endpoint, NodeConn, SqlError, Timeouts};
use tokio::task::JoinHandle;

const CREATE: &str = "CREATE TABLE rwtop.truth (id BIGINT UNSIGNED NOT NULL PRIMARY KEY)";
const NEWEST: &str = "SELECT COALESCE(MAX(id), 0) AS newest FROM rwtop.truth";

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Inserts rows 1, 2, 3… into `rwtop.truth` on the primary, one every `every`, and remembers
/// when each INSERT was acknowledged. Stops at its first failure (an unacknowledged row may or may
/// not have committed, so the truth after it would be a guess) and says why in [`Self::failure`].
pub struct Writer {
    /// `acks[i]`: when row `i + 1` was acknowledged.
    acks: Arc<Mutex<Vec<Instant>>>,
    failure: Arc<Mutex<Option<String>>>,
    task: JoinHandle<()>,
}

impl Writer {
    /// Creates the table afresh (and so on every replica through replication) and starts writing.
    pub async fn start(primary: &Endpoint, every: Duration) -> Result<Self, SqlError> {
        let mut conn = NodeConn::connect(primary, Timeouts::default()).await?;
        conn.query_rows("DROP TABLE IF EXISTS rwtop.truth").await?;
        conn.query_rows(CREATE).await?;
        let acks = Arc::new(Mutex::new(Vec::new()));
        let failure = Arc::new(Mutex::new(None));
        let task = {
            let (acks, failure) = (Arc::clone(&acks), Arc::clone(&failure));
            tokio::spawn(async move {
                let mut ticker = tokio::time::interval(every);
                ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticker.tick().await;
                    let id = lock(&acks).len() + 1;
                    let sql = format!("INSERT INTO rwtop.truth (id) VALUES ({id})");
                    match conn.query_rows(&sql).await {
                        Ok(_) => lock(&acks).push(Instant::now()),
                        Err(err) => {
                            *lock(&failure) = Some(format!("truth row {id}: {err}"));
                            return;
                        }
                    }
                }
            })
        };
        Ok(Self {
            acks,
            failure,
            task,
        })
    }

    /// Why the writer stopped, if it did.
    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    /// Rows acknowledged so far.
    pub fn written(&self) -> u64 {
        lock(&self.acks).len() as u64
    }

    fn acks(&self) -> Vec<Instant> {
        lock(&self.acks).clone()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One read of a replica's newest row: it had every row up to `newest` and none after, at some
/// moment between the read being sent and answered (`at` is the middle of that span).
#[derive(Debug, Clone, Copy)]
struct Seen {
    at: Instant,
    newest: u64,
}

/// Reads one replica's newest truth row every `every` on its own connection.
pub struct Watcher {
    seen: Arc<Mutex<Vec<Seen>>>,
    failure: Arc<Mutex<Option<String>>>,
    task: JoinHandle<()>,
}

impl Watcher {
    pub async fn start(replica: &Endpoint, every: Duration) -> Result<Self, SqlError> {
        let mut conn = NodeConn::connect(replica, Timeouts::default()).await?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let failure = Arc::new(Mutex::new(None));
        let task = {
            let (seen, failure) = (Arc::clone(&seen), Arc::clone(&failure));
            tokio::spawn(async move {
                let mut ticker = tokio::time::interval(every);
                ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                loop {
                    ticker.tick().await;
                    let sent = Instant::now();
                    let newest = match conn.query_rows_if_table(NEWEST).await {
                        Ok(rows) => rows
                            .first()
                            .and_then(|r| r.optional_u64(&["newest"]).ok().flatten())
                            .unwrap_or(0),
                        Err(err) => {
                            *lock(&failure) = Some(err.to_string());
                            return;
                        }
                    };
                    let answered = Instant::now();
                    let at = sent + answered.saturating_duration_since(sent) / 2;
                    lock(&seen).push(Seen { at, newest });
                }
            })
        };
        Ok(Self {
            seen,
            failure,
            task,
        })
    }

    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    /// The newest row the replica showed at its latest read.
    pub fn newest(&self) -> Option<u64> {
        lock(&self.seen).last().map(|s| s.newest)
    }

    /// What was measured so far, to ask the truth at any instant it covers.
    pub fn truth(&self, writer: &Writer) -> Truth {
        Truth {
            acks: writer.acks(),
            seen: lock(&self.seen).clone(),
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One replica's measured truth.
pub struct Truth {
    acks: Vec<Instant>,
    seen: Vec<Seen>,
}

impl Truth {
    /// Truth at `t`; `None` outside the span the replica was read over.
    pub fn at(&self, t: Instant) -> Option<Duration> {
        let after = self.seen.partition_point(|s| s.at <= t);
        let before = self.seen.get(after.checked_sub(1)?)?;
        let next = self.seen.get(after)?;
        let newest = interpolate(*before, *next, t);
        // Row ids start at 1: row `newest + 1` is the oldest the replica lacks.
        let lacking = usize::try_from(newest).ok()?;
        Some(match self.acks.get(lacking) {
            Some(ack) if *ack < t => t - *ack,
            _ => Duration::ZERO,
        })
    }
}

impl Truth {
    /// The truth at `t` as far as the reads around it can tell: from what the replica had at the
    /// read after `t` (the least it can be) to what it had at the read before (the most). Rows
    /// that arrive in a batch (a delayed replica's) make the two far apart for the read interval
    /// around the batch, where [`Self::at`]'s even arrival is a guess.
    pub fn range(&self, t: Instant) -> Option<(Duration, Duration)> {
        let after = self.seen.partition_point(|s| s.at <= t);
        let before = self.seen.get(after.checked_sub(1)?)?;
        let next = self.seen.get(after)?;
        let lacking = |newest: u64| -> Option<Duration> {
            let newest = usize::try_from(newest).ok()?;
            Some(match self.acks.get(newest) {
                Some(ack) if *ack < t => t - *ack,
                _ => Duration::ZERO,
            })
        };
        Some((lacking(next.newest)?, lacking(before.newest)?))
    }
}

/// The newest row at `t` between two reads: rows are taken to have arrived evenly over the span.
fn interpolate(before: Seen, next: Seen, t: Instant) -> u64 {
    if next.newest <= before.newest {
        return before.newest;
    }
    let span = next.at.saturating_duration_since(before.at).as_secs_f64();
    let into = t.saturating_duration_since(before.at).as_secs_f64();
    let share = if span > 0.0 {
        (into / span).clamp(0.0, 1.0)
    } else {
        1.0
    };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a share in [0, 1] of a row count far below 2^52"
    )]
    let arrived = (share * (next.newest - before.newest) as f64).floor() as u64;
    before.newest + arrived
}

/// Runs where this file is included in a test crate (`tests/live_lag.rs`); a bench has no test
/// harness. Full paths, no `use`: the bench build strips the test and would flag the imports.
/// Nearest-rank quantile; `None` of nothing.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "q in [0, 1] times a length"
    )]
    #[expect(clippy::cast_precision_loss, reason = "a count far below 2^52")]
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    #[test]
    fn truth_is_time_since_the_oldest_missing_row_was_acknowledged() {
        let t0 = std::time::Instant::now();
        let ms = std::time::Duration::from_millis;
        let seen = |at, newest| super::Seen {
            at: t0 + ms(at),
            newest,
        };
        let truth = super::Truth {
            acks: (0..10).map(|i| t0 + ms(100 * i)).collect(),
            seen: vec![seen(350, 4), seen(700, 4), seen(900, 8)],
        };
        // Rows 1-4 (acked 0-300 ms) visible; row 5 acked at 400 ms.
        assert_eq!(truth.at(t0 + ms(380)), Some(ms(0)));
        assert_eq!(truth.at(t0 + ms(650)), Some(ms(250)));
        // Halfway between the reads at 700 and 900 ms: 6 rows, so row 7 (600 ms) is missing.
        assert_eq!(truth.at(t0 + ms(800)), Some(ms(200)));
        // Outside the reads: no truth.
        assert_eq!(truth.at(t0 + ms(100)), None);
        assert_eq!(truth.at(t0 + ms(950)), None);
    }
}
