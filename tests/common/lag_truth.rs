//! The truth of a replica's lag, watched by the test itself: a row on the primary stamped with
//! the time every 20 ms, read on the replica every 10 ms, each reading kept with the wall-clock
//! instant it answered. At any instant the replica's lag is that instant less the newest stamp
//! it had applied, whatever rule made it apply when it did (a delayed replica applies a second's
//! worth of commits at a time, at a phase of its own, after a clock difference to its source
//! counted in whole seconds): the truth with that rule applied, no model of it needed, within
//! the stamps' 20 ms.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use rwtop::mysql::SqlError;

use super::TestSandbox;

/// How often the primary stamps the row.
const STAMP_EVERY: Duration = Duration::from_millis(20);
/// How often the replica's copy is read.
const READ_EVERY: Duration = Duration::from_millis(10);

/// Readings of the newest stamp applied: when the read answered, and the stamp.
type Readings = Arc<Mutex<Vec<(DateTime<Utc>, DateTime<Utc>)>>>;

/// Stamps and watches until dropped.
pub struct LagTruth {
    readings: Readings,
    tasks: [tokio::task::JoinHandle<()>; 2],
}

impl LagTruth {
    /// Starts stamping `rwtop.truth_stamp` on the primary and reading it on `replica`.
    pub async fn watch(t: &TestSandbox, replica: &str) -> Self {
        let mut primary = t.connect("primary").await;
        primary
            .query_rows(
                "CREATE TABLE IF NOT EXISTS rwtop.truth_stamp \
                 (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL)",
            )
            .await
            .expect("creating the stamp table");
        let stamper = tokio::spawn(async move {
            loop {
                primary
                    .query_rows("REPLACE INTO rwtop.truth_stamp VALUES (1, UTC_TIMESTAMP(6))")
                    .await
                    .expect("stamping the primary");
                tokio::time::sleep(STAMP_EVERY).await;
            }
        });
        let mut conn = t.connect(replica).await;
        let readings: Readings = Arc::default();
        let kept = Arc::clone(&readings);
        let reader = tokio::spawn(async move {
            loop {
                let rows = match conn.query_rows("SELECT ts FROM rwtop.truth_stamp").await {
                    Ok(rows) => rows,
                    // Not there yet: the table reaches a delayed replica late.
                    Err(SqlError::Server { code: 1146, .. }) => Vec::new(),
                    Err(e) => panic!("reading the stamp: {e}"),
                };
                let answered = Utc::now();
                if let Some(ts) = rows.first().and_then(|r| r.optional_text(&["ts"])) {
                    let ts = NaiveDateTime::parse_from_str(ts, "%Y-%m-%d %H:%M:%S%.f")
                        .unwrap_or_else(|e| panic!("stamp {ts:?}: {e}"))
                        .and_utc();
                    kept.lock().unwrap().push((answered, ts));
                }
                tokio::time::sleep(READ_EVERY).await;
            }
        });
        Self {
            readings,
            tasks: [stamper, reader],
        }
    }

    /// The lag at `at`, from the newest reading that had answered by then; `None` before the
    /// first reading, or when the newest is over 100 ms old (the reader fell behind).
    pub fn lag_at(&self, at: DateTime<Utc>) -> Option<Duration> {
        let readings = self.readings.lock().unwrap();
        let i = readings.partition_point(|(answered, _)| *answered <= at);
        let (answered, ts) = readings.get(i.checked_sub(1)?)?;
        if at - *answered > chrono::TimeDelta::milliseconds(100) {
            return None;
        }
        (at - *ts).to_std().ok()
    }
}

impl Drop for LagTruth {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// How far the median of rwtop's readings of a delayed replica may be from [`LagTruth`]'s:
/// rwtop's lag is the newest applied heartbeat's age less half the heartbeat interval (the
/// tests' 250 ms), its estimate of the data's age between two beats. A delayed replica applies
/// whole seconds of commits at once, so the newest data it applied is always from the end of a
/// second, and the newest heartbeat anywhere in that second's last 250 ms, at the writer's
/// phase: the estimate reads up to half an interval high or low, fixed for a run (medians from
/// −122 to +102 ms in six runs here). With the stamps' 20 ms and a busy machine's 30 ms: 175
/// ms. No whole second is allowed: the truth already holds what the server's whole-second rule
/// did.
pub const DELAYED_WITHIN_MS: i64 = 175;

/// A reading around a batch can be a second off alone: while the batches' phase drifts across
/// the snapshots', the truth or rwtop's foresight of the batch may fall a few ms either side
/// of it (up to 3 of 40 readings here). At most this share of readings may be; a reading a
/// second high after every batch until the next heartbeat read (250 ms) would be one in four.
pub const DELAYED_SECOND_OFF_SHARE: f64 = 0.15;

/// rwtop's readings of a delayed replica against the truth (`errors_ms`: reading less truth, in
/// ms): the median within [`DELAYED_WITHIN_MS`], at most [`DELAYED_SECOND_OFF_SHARE`] of the
/// readings half a second or more off.
pub fn judge_delayed(what: &str, errors_ms: &[i64]) {
    let mut sorted = errors_ms.to_vec();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let off = errors_ms.iter().filter(|e| e.abs() >= 500).count();
    eprintln!(
        "{what}: errors against the truth (ms) {errors_ms:?}: median {median} ms, {off} of {} \
         half a second or more off",
        errors_ms.len()
    );
    assert!(
        median.abs() <= DELAYED_WITHIN_MS,
        "{what}: median error {median} ms (allowed ±{DELAYED_WITHIN_MS} ms)"
    );
    #[expect(clippy::cast_precision_loss, reason = "a few dozen readings")]
    let share = off as f64 / errors_ms.len() as f64;
    assert!(
        share <= DELAYED_SECOND_OFF_SHARE,
        "{what}: {off} of {} readings half a second or more off",
        errors_ms.len()
    );
}
