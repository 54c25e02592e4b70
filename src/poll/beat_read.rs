//! A poller's heartbeat readings: rwtop's own rows or pt-heartbeat's read from the table, or,
//! where a replica's applied position tells which heartbeats it has applied
//! (`beat_gtid.rs`), that position, from the status poll's own `gtid_slave_pos` or read alone.

use std::time::{Duration, Instant};

use super::beat_gtid::Marks;
use super::beat_write::heartbeat_read_sql;
use super::events::{AppliedRead, BeatRow, HeartbeatRead, NodeSample, PollEvent};
use super::pt_heartbeat;
use super::spec::{HeartbeatTable, PollerSpec};
use crate::gtid::GtidList;
use crate::mysql::{GtidState, NodeConn, RawRow, SqlError};

/// The statement a heartbeat reading runs, the same on every read of a connection.
pub fn heartbeat_sql(table: &HeartbeatTable) -> String {
    match table {
        HeartbeatTable::Own { writer_ids } => heartbeat_read_sql(writer_ids),
        HeartbeatTable::Pt { table } => pt_heartbeat::read_sql(table),
    }
}

/// Whether a node reads a heartbeat row: rwtop's own on a replica or a Galera member (`below`
/// a writer), pt-heartbeat's on every node in read-only mode (a primary's own row is nothing
/// to read).
pub fn reads_heartbeat(table: &HeartbeatTable, below: bool) -> bool {
    below || matches!(table, HeartbeatTable::Pt { .. })
}

/// The reading `rows` (of [`heartbeat_sql`], sent at `sent_at`) make.
pub fn heartbeat_event(
    spec: &PollerSpec,
    rows: &[RawRow],
    sent_at: Instant,
    rtt: Duration,
) -> PollEvent {
    let node = spec.name.clone();
    match &spec.heartbeat {
        HeartbeatTable::Own { writer_ids } => PollEvent::Heartbeat {
            node,
            read: beat_rows(writer_ids, rows, sent_at, rtt),
        },
        HeartbeatTable::Pt { .. } => PollEvent::PtHeartbeat {
            node,
            read: pt_heartbeat::from_rows(rows, sent_at),
        },
    }
}

/// Reads every root's heartbeat row; `rows` come back in the order of `writer_ids`.
pub async fn read_heartbeat(
    conn: &mut NodeConn,
    writer_ids: &[String],
) -> Result<HeartbeatRead, SqlError> {
    let sent_at = Instant::now();
    let (found, answered) = conn.query_lead(&heartbeat_read_sql(writer_ids)).await?;
    Ok(beat_rows(
        writer_ids,
        &found,
        sent_at,
        answered.duration_since(sent_at),
    ))
}

/// The reading the rows of [`heartbeat_read_sql`] make, in the order of `writer_ids`.
fn beat_rows(
    writer_ids: &[String],
    found: &[RawRow],
    sent_at: Instant,
    rtt: Duration,
) -> HeartbeatRead {
    let rows = writer_ids
        .iter()
        .map(|id| {
            let row = found
                .iter()
                .find(|r| r.optional_text(&["writer_id"]) == Some(id.as_str()));
            BeatRow {
                seq: row.and_then(|r| r.optional_u64(&["seq"]).ok().flatten()),
                row_age_ms: row
                    .and_then(|r| r.optional_text(&["age_us"]))
                    .and_then(|age| age.trim().parse::<i64>().ok())
                    .map(|us| us / 1000),
            }
        })
        .collect();
    HeartbeatRead { sent_at, rtt, rows }
}

/// A status poll's applied position, when it tells which heartbeats the node has applied.
#[must_use]
pub fn applied_of<'a>(marks: &Marks, sample: &'a NodeSample) -> Option<&'a GtidList> {
    let GtidState::Mariadb { slave_pos, .. } = &sample.reported.state.gtid else {
        return None;
    };
    marks.tell(slave_pos).then_some(slave_pos)
}

/// Reads the applied position alone (between status polls); `None` when it no longer tells
/// (or the server answered something unreadable), for the table to be read instead.
pub async fn read_applied(
    conn: &mut NodeConn,
    marks: &Marks,
) -> Result<Option<AppliedRead>, SqlError> {
    let Some(sql) = conn.flavor().applied_position_sql() else {
        return Ok(None);
    };
    let sent_at = Instant::now();
    let rows = conn.query_rows(sql).await?;
    Ok(conn
        .flavor()
        .applied_position(&rows)
        .filter(|applied| marks.tell(applied))
        .map(|applied| AppliedRead { sent_at, applied }))
}
