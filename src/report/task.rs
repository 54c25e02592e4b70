//! The DDL-window reports as an output of their own: a task beside the recorder and the metrics
//! endpoint that reads the engine's snapshot stream, hands each published snapshot to [`Live`]
//! and writes each report as its window closes. The TUI, `rwtop serve` and the demo start it
//! the same way; none of them does the file I/O on its own loop. The operator's mark reaches it
//! as a request ([`Marker`]), and every line it has to say (a window opened, a report written or
//! not) goes to `notes`: the TUI's footer, or standard error without a screen.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::Live;
use crate::store::Snapshot;

/// Marks waiting for the task; more presses than this are one mark too many.
const MARKS: usize = 4;

/// The running task; it ends when the engine stops publishing.
pub struct ReportTask {
    marks: mpsc::Sender<()>,
    handle: JoinHandle<()>,
}

/// Asks the running task to mark: open a window now, or close the open one and write its report.
#[derive(Debug, Clone)]
pub struct Marker(mpsc::Sender<()>);

impl Marker {
    /// False when the task is gone or marks are piling up; its answer comes through `notes`.
    #[must_use]
    pub fn mark(&self) -> bool {
        self.0.try_send(()).is_ok()
    }
}

/// Starts the task over `snapshots`.
#[must_use]
pub fn spawn(
    mut live: Live,
    mut snapshots: watch::Receiver<Arc<Snapshot>>,
    notes: mpsc::Sender<String>,
) -> ReportTask {
    let (marks, mut requests) = mpsc::channel::<()>(MARKS);
    let handle = tokio::spawn(async move {
        loop {
            let said = tokio::select! {
                changed = snapshots.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let snapshot = snapshots.borrow_and_update().clone();
                    live.observe(&snapshot)
                }
                Some(()) = requests.recv() => {
                    let snapshot = snapshots.borrow_and_update().clone();
                    Some(live.mark(&snapshot))
                }
            };
            if let Some(line) = said.filter(|l| !l.is_empty())
                && notes.send(line).await.is_err()
            {
                return;
            }
        }
    });
    ReportTask { marks, handle }
}

impl ReportTask {
    #[must_use]
    pub fn marker(&self) -> Marker {
        Marker(self.marks.clone())
    }

    /// Waits for the task to end (the engine shut down first), a few seconds at most.
    pub async fn finish(self) {
        drop(self.marks);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.handle).await;
    }
}
