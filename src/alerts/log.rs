//! The alert log: raised and cleared events, newest kept, in memory only.
//!
//! Bounded so that a flapping alert over a week-long session cannot grow memory; the operator
//! who needs more exports JSON. There is no log file.
//!
//! Every snapshot carries the log (up to four a second) while it changes a few times a minute:
//! the snapshots share this one list until the next entry, rather than each holding a copy of
//! up to `log_capacity` entries (up to three strings each).

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{Alert, LogEntry};

#[derive(Debug)]
pub struct AlertLog {
    /// Newest first; shared with the snapshots published since it last changed.
    entries: Arc<Vec<LogEntry>>,
    capacity: usize,
}

impl AlertLog {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Arc::default(),
            capacity,
        }
    }

    pub fn raised(&mut self, alert: &Alert, at: DateTime<Utc>) {
        // A cause that starts with its place ("c1: behind because …") says it once here.
        let cause = alert
            .place()
            .and_then(|p| alert.cause.strip_prefix(&format!("{p}: ")))
            .unwrap_or(&alert.cause);
        let summary = format!("{}{}: {cause}", alert.kind.name(), on(alert));
        self.push(alert, at, true, summary);
    }

    pub fn cleared(&mut self, alert: &Alert, at: DateTime<Utc>, why: &str) {
        let summary = format!(
            "{}{} cleared {why} (held {} samples since {})",
            alert.kind.name(),
            on(alert),
            alert.count,
            alert.since.format("%H:%M:%S"),
        );
        self.push(alert, at, false, summary);
    }

    fn push(&mut self, alert: &Alert, at: DateTime<Utc>, raised: bool, summary: String) {
        if self.capacity == 0 {
            return;
        }
        // Copies the list only while a published snapshot still holds it.
        let entries = Arc::make_mut(&mut self.entries);
        entries.truncate(self.capacity - 1);
        entries.insert(
            0,
            LogEntry {
                at,
                raised,
                kind: alert.kind,
                node: alert.node.clone(),
                channel: alert.channel.clone(),
                summary,
            },
        );
    }

    /// Newest first, as a log panel reads: the log itself, shared, not a copy.
    pub fn newest_first(&self) -> Arc<Vec<LogEntry>> {
        Arc::clone(&self.entries)
    }
}

fn on(alert: &Alert) -> String {
    alert
        .place()
        .map_or_else(String::new, |n| format!(" on {n}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::{AlertKind, Severity};

    fn node_down() -> (Alert, DateTime<Utc>) {
        let at = DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default();
        let alert = Alert {
            kind: AlertKind::NodeDown,
            node: Some("r1".to_owned()),
            channel: None,
            severity: Severity::Critical,
            since: at,
            last_seen: at,
            count: 2,
            evidence: Vec::new(),
            cause: "r1 does not answer".to_owned(),
            membership: crate::alerts::Membership::default(),
        };
        (alert, at)
    }

    #[test]
    fn keeps_the_newest_entries_newest_first() {
        let (alert, at) = node_down();
        let mut log = AlertLog::new(2);
        log.raised(&alert, at);
        log.cleared(&alert, at, "after 3 clean samples");
        log.raised(&alert, at);
        let entries = log.newest_first();
        assert_eq!(entries.len(), 2);
        assert!(entries[0].raised && !entries[1].raised);
        assert_eq!(entries[0].summary, "node_down on r1: r1 does not answer");
        assert!(
            entries[1]
                .summary
                .starts_with("node_down on r1 cleared after 3 clean samples")
        );
    }

    #[test]
    fn snapshots_share_the_log_until_it_changes() {
        let (alert, at) = node_down();
        let mut log = AlertLog::new(2);
        log.raised(&alert, at);
        let published = log.newest_first();
        assert!(Arc::ptr_eq(&published, &log.newest_first()));
        log.cleared(&alert, at, "after 3 clean samples");
        log.raised(&alert, at);
        // The published list is as it was; the log moved on, still bounded.
        assert_eq!(published.len(), 1);
        let now = log.newest_first();
        assert!(!Arc::ptr_eq(&published, &now));
        assert_eq!(now.len(), 2);
        assert!(now[0].raised && !now[1].raised);
    }
}
