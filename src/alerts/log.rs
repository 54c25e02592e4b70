//! The alert log: raised and cleared events, newest kept, in memory only.
//!
//! Bounded so that a flapping alert over a week-long session cannot grow memory; the operator
//! who needs more exports JSON. There is no log file.

use std::collections::VecDeque;

use chrono::{DateTime, Utc};

use super::{Alert, LogEntry};

#[derive(Debug)]
pub struct AlertLog {
    ring: VecDeque<LogEntry>,
    capacity: usize,
}

impl AlertLog {
    pub fn new(capacity: usize) -> Self {
        Self {
            ring: VecDeque::with_capacity(capacity.min(1024)),
            capacity,
        }
    }

    pub fn raised(&mut self, alert: &Alert, at: DateTime<Utc>) {
        let summary = format!("{}{}: {}", alert.kind.name(), on(alert), alert.cause);
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
        if self.ring.len() == self.capacity {
            self.ring.pop_front();
        }
        self.ring.push_back(LogEntry {
            at,
            raised,
            kind: alert.kind,
            node: alert.node.clone(),
            channel: alert.channel.clone(),
            summary,
        });
    }

    /// Newest first, as a log panel reads.
    pub fn newest_first(&self) -> Vec<LogEntry> {
        self.ring.iter().rev().cloned().collect()
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

    #[test]
    fn keeps_the_newest_entries_newest_first() {
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
        };
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
}
