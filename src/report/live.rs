//! Reports while rwtop watches: the live view hands every snapshot here, and each window that
//! closes is written to the report folder as Markdown and HTML. What is returned is the line
//! the footer shows.

use std::path::PathBuf;
use std::sync::Arc;

use super::facts::Gatherer;
use super::window::{Bounds, Change, Detector, Opened};
use super::write::{Format, write_atomically};
use super::{DdlReport, ReportSettings};
use crate::store::Snapshot;

pub struct Live {
    settings: ReportSettings,
    detector: Detector,
    gatherer: Option<Gatherer>,
    folder: PathBuf,
    /// Where the window's snapshots came from, for the report's first line.
    source: String,
    last: Option<Arc<Snapshot>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("folder", &self.folder)
            .field("open", &self.detector.is_open())
            .finish_non_exhaustive()
    }
}

impl Live {
    /// Reports go to `folder` (created when the first one is written).
    #[must_use]
    pub fn new(settings: ReportSettings, folder: PathBuf, source: String) -> Self {
        Self {
            detector: Detector::new(settings.clone()),
            settings,
            gatherer: None,
            folder,
            source,
            last: None,
        }
    }

    /// Takes one snapshot (the same one again changes nothing); the footer's line when a
    /// window opened or a report was written.
    pub fn observe(&mut self, snapshot: &Arc<Snapshot>) -> Option<String> {
        if self
            .last
            .as_ref()
            .is_some_and(|l| l.uptime >= snapshot.uptime)
        {
            return None;
        }
        self.last = Some(Arc::clone(snapshot));
        let change = self.detector.observe(snapshot);
        if let Some(gatherer) = &mut self.gatherer {
            gatherer.observe(snapshot);
        }
        Some(self.apply(change?, snapshot))
    }

    /// The operator's mark: opens a window, or closes the open one and writes its report.
    pub fn mark(&mut self, snapshot: &Arc<Snapshot>) -> String {
        let change = self.detector.mark(snapshot);
        if let Some(gatherer) = &mut self.gatherer {
            gatherer.observe(snapshot);
        }
        self.apply(change, snapshot)
    }

    fn apply(&mut self, change: Change, snapshot: &Snapshot) -> String {
        match change {
            Change::Opened { by, from } => {
                let mut gatherer = Gatherer::new(self.settings.clone(), from);
                gatherer.observe(snapshot);
                self.gatherer = Some(gatherer);
                match by {
                    Opened::Ddl => "DDL seen: report window open; it closes once every \
                                    replica has caught up (m closes it now)"
                        .to_owned(),
                    Opened::Mark => "report window open: m again closes it and writes the \
                                     report"
                        .to_owned(),
                }
            }
            Change::Closed(bounds) => self.write(bounds),
        }
    }

    fn write(&mut self, bounds: Bounds) -> String {
        let Some(gatherer) = self.gatherer.take() else {
            return String::new();
        };
        let facts = gatherer.finish(bounds);
        let stem = format!("rwtop-ddl-{}", facts.from.format("%Y%m%dT%H%M%SZ"));
        let report = DdlReport {
            windows: vec![facts],
            source: self.source.clone(),
            quiet: self.settings.quiet,
        };
        if let Err(e) = std::fs::create_dir_all(&self.folder) {
            return format!(
                "report not written: cannot create {}: {e} (set [report] dir)",
                self.folder.display()
            );
        }
        let mut written = Vec::new();
        for format in [Format::Html, Format::Markdown] {
            let path = self.folder.join(format!("{stem}.{}", format.extension()));
            if let Err(e) = write_atomically(&path, &report.render(format), "[report] dir") {
                return format!("report not written: {e}");
            }
            written.push(path);
        }
        format!(
            "DDL window report written: {} (and .md)",
            written[0].display()
        )
    }
}
