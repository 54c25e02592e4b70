//! DDL-window reports (docs/guide/ddl.md): what a schema change did to replication,
//! written as Markdown to paste into a ticket or as one self-contained HTML page.
//!
//! One path serves the live view and `rwtop report RECORDING`: both hand a sequence of
//! snapshots to a [`Detector`] (which finds the windows) and a [`Gatherer`] (which keeps what
//! happened inside one), and render the [`Facts`] it yields. Snapshots rather than the store's
//! series, because a snapshot already carries all a report needs (statements with progress, each
//! channel's lag series, the alert log, test reads and drains) and a recording is nothing but
//! snapshots, so a report made live and one made later from the recording of the same run are
//! the same report.
//!
//! ```text
//! snapshots ─▶ Detector ── open/close ─▶ Gatherer ─▶ Facts ─▶ markdown | html (svg)
//!    ▲ live: the TUI's feed            ▲ offline: every frame of a Recording
//! ```

mod facts;
mod html;
mod live;
mod markdown;
mod offline;
mod replica;
mod svg;
mod task;
mod window;
mod words;
mod write;

use std::time::Duration;

pub use facts::{Facts, Gatherer, Statement};
pub use live::Live;
pub use offline::{OfflineError, Span, from_recording, parse_time};
pub use replica::{CaughtUp, Crossing, ReplicaLag};
pub use task::{Marker, ReportTask, spawn as spawn_task};
pub use window::{Bounds, Change, Detector, Opened};
pub use write::{Format, ReportError, write_atomically};

/// What the windows and the reports judge by.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSettings {
    /// The routing threshold (`thresholds.routing_max_lag_seconds`): a replica above it is
    /// "behind" in the report, and a window closes only once every replica is back under it.
    pub threshold: Duration,
    /// How long everything must stay calm (no DDL, every replica under the threshold) before an
    /// automatic window closes.
    pub quiet: Duration,
    /// Lag shown before the window opened, so the chart starts from the calm before.
    pub lead_in: Duration,
}

/// Seconds before the DDL's start that a chart shows.
pub const LEAD_IN: Duration = Duration::from_secs(5);

impl Default for ReportSettings {
    fn default() -> Self {
        Self {
            threshold: Duration::from_secs(1),
            quiet: crate::config::ReportConfig::default().quiet,
            lead_in: LEAD_IN,
        }
    }
}

impl ReportSettings {
    /// The threshold from the alert thresholds' routing lag.
    #[must_use]
    pub fn with_threshold_seconds(mut self, seconds: f64) -> Self {
        if seconds.is_finite() && seconds > 0.0 {
            self.threshold = Duration::from_secs_f64(seconds);
        }
        self
    }
}

/// One or more windows, ready to render.
#[derive(Debug, Clone)]
pub struct DdlReport {
    pub windows: Vec<Facts>,
    /// Where the snapshots came from (`the live view of …`, `the recording x.jsonl`).
    pub source: String,
    /// The quiet time the windows closed after.
    pub quiet: Duration,
}

impl DdlReport {
    #[must_use]
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Markdown => markdown::render(self),
            Format::Html => html::render(self),
        }
    }
}
