//! The status poll's round trip: one batch for the node's replication, state and the parts the
//! cadence adds, the runs behind the online schema change tools' tables when some are found, and
//! the binlog list again after a rotation. What the poller makes of the answer is `learned.rs`'s.

use std::time::{Duration, Instant};

use super::cadence::PollParts;
use super::events::NodeSample;
use crate::mysql::batch::{Ask, Status};
use crate::mysql::{NodeConn, RawRow, SqlError};

/// Replica first, then the node's own state and binlog, in one round trip: a replica's GTID
/// state read after its replication status can only be newer, never make it look behind what
/// it reported. Discovery and the processlist are optional: a missing grant leaves them out.
/// The clock sample (when `parts` has it) and `lead` (a heartbeat read) go first in the same
/// round trip; their rows come back beside the sample, which was sent at the sample's `at`.
/// `list_tail` is the newest file of the binlog list held from earlier polls: a coordinate in
/// another file (a rotation since) has the list read again at once, a second round trip, so that
/// a sample's list always reaches its coordinate's file.
pub async fn poll_status(
    conn: &mut NodeConn,
    parts: PollParts,
    lead: Option<&str>,
    list_tail: Option<&str>,
) -> Result<(NodeSample, Ahead), SqlError> {
    let at = Instant::now();
    // One round trip (src/mysql/batch.rs).
    let Status {
        mut reported,
        clock,
        lead,
        first_answer,
        osc_tables,
    } = conn.status(Ask { parts, lead }).await?;
    // The runs behind the tools' tables, only while some are found (src/mysql/osc.rs).
    reported.osc = match osc_tables {
        Some(tables) if !tables.is_empty() => Some(conn.osc_runs(&tables).await?),
        Some(_) => Some(Vec::new()),
        None => None,
    };
    let rotated = match (&reported.binlog, &reported.binlog_files, list_tail) {
        (Some(head), None, Some(tail)) => head.position.file != tail,
        _ => false,
    };
    if rotated {
        reported.binlog_files = Some(conn.binlog_files().await?);
    }
    let sample = NodeSample {
        at,
        reported,
        resolving: std::collections::BTreeSet::new(),
        took: at.elapsed(),
    };
    let ahead = Ahead {
        clock,
        lead,
        first_answer,
    };
    Ok((sample, ahead))
}

/// What a status poll's batch read ahead of the status: the clock row and the heartbeat read
/// (its rows or its refusal), when asked, and when the first answer came back.
#[derive(Debug)]
pub struct Ahead {
    pub clock: Option<Vec<RawRow>>,
    pub lead: Option<Result<Vec<RawRow>, SqlError>>,
    pub first_answer: Duration,
}
