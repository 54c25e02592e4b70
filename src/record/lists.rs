//! The snapshot's newest-first bounded lists — the alert log (up to 1,000 entries), the recent
//! test reads and the drain actions — written like the charts: each frame carries a list's
//! length and only the entries newer than the previous frame's, so a session with many alerts
//! does not rewrite its whole log every second.

use serde::{Deserialize, Serialize};

use crate::alerts::LogEntry;
use crate::drain::ActionRecord;
use crate::probe::ProbeResult;
use crate::store::Snapshot;

/// One list in a frame: its length, and its entries newer than the previous frame's, newest
/// first as in the snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Delta<T> {
    len: usize,
    new: Vec<T>,
}

/// The three lists of a frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Lists {
    alerts: Delta<LogEntry>,
    probes: Delta<ProbeResult>,
    drains: Delta<ActionRecord>,
}

/// The entries of `list` (newest first) before `newest`, the newest entry an earlier frame
/// carried; all of them when that one is gone or there was none.
fn delta<T: PartialEq + Clone>(list: &[T], newest: Option<&T>) -> Delta<T> {
    let fresh = newest
        .and_then(|n| list.iter().position(|e| e == n))
        .unwrap_or(list.len());
    Delta {
        len: list.len(),
        new: list[..fresh].to_vec(),
    }
}

/// The writer's memory: the newest entry of each list in the last frame written.
#[derive(Debug, Default)]
pub(super) struct Newest {
    alerts: Option<LogEntry>,
    probes: Option<ProbeResult>,
    drains: Option<ActionRecord>,
}

impl Newest {
    /// Takes the lists out of `snapshot` (left empty) as deltas against the previous frame.
    pub(super) fn take(&self, snapshot: &mut Snapshot) -> (Lists, Self) {
        let alerts = std::mem::take(&mut snapshot.alerts.log);
        let probes = std::mem::take(&mut snapshot.probes.recent);
        let drains = std::mem::take(&mut snapshot.drain.log);
        let lists = Lists {
            alerts: delta(&alerts, self.alerts.as_ref()),
            probes: delta(&probes, self.probes.as_ref()),
            drains: delta(&drains, self.drains.as_ref()),
        };
        let next = Self {
            alerts: alerts.first().cloned(),
            probes: probes.first().cloned(),
            drains: drains.first().cloned(),
        };
        (lists, next)
    }
}

/// Every entry a list ever had in the recording, oldest first; a frame's list is a window of it.
#[derive(Debug)]
struct Log<T> {
    all: Vec<T>,
}

impl<T: Clone> Log<T> {
    fn push(&mut self, delta: Delta<T>, what: &str) -> Result<(usize, usize), String> {
        self.all.extend(delta.new.into_iter().rev());
        if delta.len > self.all.len() {
            return Err(format!(
                "the {what} has {} entries but only {} were recorded",
                delta.len,
                self.all.len()
            ));
        }
        Ok((self.all.len(), delta.len))
    }

    fn window(&self, (end, len): (usize, usize)) -> Vec<T> {
        self.all
            .get(end - len..end)
            .unwrap_or_default()
            .iter()
            .rev()
            .cloned()
            .collect()
    }
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self { all: Vec::new() }
    }
}

/// Where each list of one frame ends in the logs, and its length.
#[derive(Debug, Clone, Copy)]
pub(super) struct Windows([(usize, usize); 3]);

/// The reader's side: the three logs.
#[derive(Debug, Default)]
pub(super) struct Logs {
    alerts: Log<LogEntry>,
    probes: Log<ProbeResult>,
    drains: Log<ActionRecord>,
}

impl Logs {
    pub(super) fn push(&mut self, lists: Lists) -> Result<Windows, String> {
        Ok(Windows([
            self.alerts.push(lists.alerts, "alert log")?,
            self.probes.push(lists.probes, "test-read list")?,
            self.drains.push(lists.drains, "drain log")?,
        ]))
    }

    /// Puts a frame's lists back into its snapshot.
    pub(super) fn fill(&self, snapshot: &mut Snapshot, windows: Windows) {
        let [alerts, probes, drains] = windows.0;
        snapshot.alerts.log = self.alerts.window(alerts).into();
        snapshot.probes.recent = self.probes.window(probes);
        snapshot.drain.log = self.drains.window(drains);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_new_entries_are_written_and_windows_rebuild_each_frame() {
        // Newest first, as the snapshot keeps them; bounded to 3.
        let frames: [&[u32]; 4] = [&[1], &[3, 2, 1], &[3, 2, 1], &[6, 5, 4]];
        let mut newest: Option<u32> = None;
        let mut log = Log::default();
        let mut windows = Vec::new();
        let mut written = Vec::new();
        for list in frames {
            let d = delta(list, newest.as_ref());
            written.push(d.new.clone());
            newest = list.first().copied();
            windows.push(log.push(d, "list").unwrap());
        }
        assert_eq!(written, [vec![1], vec![3, 2], vec![], vec![6, 5, 4]]);
        for (list, w) in frames.iter().zip(windows) {
            assert_eq!(log.window(w), list.to_vec());
        }
        let short = Delta {
            len: 9,
            new: vec![7],
        };
        assert!(log.push(short, "list").unwrap_err().contains("9 entries"));
    }
}
