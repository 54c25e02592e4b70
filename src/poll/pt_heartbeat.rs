//! Read-only mode: lag from an existing pt-heartbeat table instead of rwtop's own heartbeat, and
//! per-server clock offsets to correct it.
//!
//! pt-heartbeat writes `ts` with the clock of the host it runs on (normally the primary's), in
//! local time or UTC (`--utc`). A replica's lag is then `replica now − ts`, minus how far the
//! replica's clock runs ahead of the primary's; both offsets are estimated here from query round
//! trips. pt-heartbeat's own monitor instead subtracts a fixed skew and reads low.

use std::time::{Duration, Instant};

use chrono::NaiveDateTime;

use super::events::PtRead;
use crate::mysql::RawRow;

/// `schema.table` was checked to be plain identifiers when the config was loaded.
#[must_use]
pub fn read_sql(table: &str) -> String {
    format!(
        "SELECT ts, NOW(6) AS now_local, UTC_TIMESTAMP(6) AS now_utc FROM {table} \
         ORDER BY ts DESC LIMIT 1"
    )
}

/// pt-heartbeat writes `2026-11-29T19:05:01.123456`; servers print `2026-11-29 19:05:01.123456`.
fn parse_ts(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
}

fn millis_between(row: &RawRow, now: &str, ts: NaiveDateTime) -> Option<i64> {
    let now = parse_ts(row.optional_text(&[now])?)?;
    Some((now - ts).num_milliseconds())
}

/// The reading the rows of [`read_sql`], sent at `sent_at`, make.
#[must_use]
pub fn from_rows(rows: &[RawRow], sent_at: Instant) -> PtRead {
    let row = rows.first();
    let ts = row
        .and_then(|r| r.optional_text(&["ts"]))
        .and_then(parse_ts);
    let (local_ms, utc_ms) = match (row, ts) {
        (Some(row), Some(ts)) => (
            millis_between(row, "now_local", ts),
            millis_between(row, "now_utc", ts),
        ),
        _ => (None, None),
    };
    PtRead {
        sent_at,
        local_ms,
        utc_ms,
        ts,
    }
}

/// The server's UTC clock (the rows of [`crate::mysql::batch::CLOCK_SQL`], sent at `before`
/// and answered `rtt` later) minus this host's, read at the midpoint of the round trip; the
/// error is at most half the round trip, which is returned with it.
#[must_use]
pub fn clock_offset(
    rows: &[RawRow],
    before: chrono::DateTime<chrono::Utc>,
    rtt: Duration,
) -> Option<(i64, Duration)> {
    let midpoint = before.naive_utc() + chrono::Duration::from_std(rtt / 2).unwrap_or_default();
    let server = rows
        .first()
        .and_then(|r| r.optional_text(&["now_utc"]))
        .and_then(parse_ts);
    server.map(|server| ((server - midpoint).num_milliseconds(), rtt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_timestamp_spellings_parse() {
        let a = parse_ts("2026-11-29T19:05:01.250000").unwrap();
        let b = parse_ts("2026-11-29 19:05:01.25").unwrap();
        assert_eq!(a, b);
        assert!(parse_ts("2026-11-29T19:05:01").is_some());
        assert!(parse_ts("yesterday").is_none());
    }
}
