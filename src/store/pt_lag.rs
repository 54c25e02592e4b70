//! Read-only mode's lag, from pt-heartbeat's row: `now − ts` on each replica, corrected by how far
//! the replica's clock runs ahead of the primary's (pt-heartbeat is taken to run on the
//! primary's host, as it usually does). Unknown until the primary's row has been seen to move:
//! a row nobody updates any more is as old as it is, not a lag, even on the first reading.

use std::collections::HashMap;
use std::time::Duration;

use super::lag::Lag;
use crate::poll::PtRead;

/// What pt-heartbeat's rows have shown since rwtop started.
#[derive(Debug, Default)]
pub(super) struct PtLag {
    /// The primary's own row, which tells whether pt-heartbeat runs and in which zone it writes.
    primary_row: Option<PtRead>,
    /// Whether each node's row has moved since rwtop started.
    moved: HashMap<String, RowProgress>,
}

impl PtLag {
    /// One reading of `node`'s row; the lag to show for it, `None` for the primary's own row.
    /// `root` is the primary (or the node itself when none is known), `correction` how far
    /// `node`'s clock runs ahead of the primary's in ms, `table` pt-heartbeat's table.
    pub fn read(
        &mut self,
        node: &str,
        root: Option<&str>,
        read: PtRead,
        correction: i64,
        table: &str,
    ) -> Option<Lag> {
        self.moved
            .entry(node.to_owned())
            .or_default()
            .observe(read.ts);
        if root == Some(node) {
            self.primary_row = Some(read);
            return None;
        }
        // Without a known primary, the node's own copy of the row moving shows that updates
        // still reach it.
        let root = root.unwrap_or(node);
        let moved = self.moved.get(root).is_some_and(|p| p.moved);
        // The zone in which the primary's own row is fresh is the zone pt-heartbeat writes in.
        let use_utc = self.primary_row.is_some_and(
            |p| matches!((p.local_ms, p.utc_ms), (Some(l), Some(u)) if u.abs() < l.abs()),
        );
        let raw = if use_utc { read.utc_ms } else { read.local_ms };
        Some(match raw {
            None => Lag::Unknown {
                reason: format!("no pt-heartbeat row in {table} on this node"),
            },
            Some(_) if !moved => Lag::Unknown {
                reason: format!(
                    "pt-heartbeat's row on {root} has not advanced since rwtop started: \
                     is pt-heartbeat running?"
                ),
            },
            Some(_) if self.stale() => Lag::Unknown {
                reason: format!("pt-heartbeat is not updating {table} on the primary"),
            },
            Some(raw) => {
                let ms = u64::try_from((raw - correction).max(0)).unwrap_or(0);
                Lag::Exact {
                    lag: Duration::from_millis(ms),
                }
            }
        })
    }

    /// pt-heartbeat updates every second by default; a primary row older than a few seconds
    /// means it stopped (or never ran), and "caught up" can no longer be told.
    pub fn stale(&self) -> bool {
        let Some(p) = self.primary_row else {
            return false;
        };
        let age = match (p.local_ms, p.utc_ms) {
            (Some(l), Some(u)) => l.abs().min(u.abs()),
            _ => return true,
        };
        age > 3_000
    }
}

/// Whether a heartbeat row was seen to move since rwtop started: the `ts` of the first reading,
/// then whether a later one was newer.
#[derive(Debug, Default, Clone, Copy)]
struct RowProgress {
    first: Option<chrono::NaiveDateTime>,
    moved: bool,
}

impl RowProgress {
    fn observe(&mut self, ts: Option<chrono::NaiveDateTime>) {
        match (self.first, ts) {
            (None, Some(ts)) => self.first = Some(ts),
            (Some(first), Some(ts)) if ts > first => self.moved = true,
            _ => {}
        }
    }
}
