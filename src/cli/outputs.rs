//! The outputs that run beside the engine while a command watches a topology (the live view,
//! `rwtop demo`, `rwtop serve`): the metrics and throttle endpoint, the recorder and the
//! DDL-window reports. Each reads the engine's snapshot stream on a task of its own; what they
//! have to say goes one way ([`Notes`]); and they stop in one order ([`Outputs::finish`]).
//!
//! Three steps, because each has its moment: [`Outputs::prepare`] does what a user can make fail
//! (a recording that cannot be written, a taken port) before an engine or a sandbox starts and
//! before the TUI owns the terminal; [`Outputs::start`] needs the running engine's snapshots;
//! [`Outputs::finish`] stops them around the engine's own shutdown.

use std::net::SocketAddr;
use std::path::Path;

use rwtop::config::{Config, FileSettings};
use rwtop::engine::Engine;
use rwtop::export::http::{MetricsListener, MetricsServer};
use rwtop::record::Recorder;
use rwtop::report::{Live, ReportSettings, ReportTask};
use rwtop::ui::feed::Feed;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::record_cmd::{self, RecordTask};

/// Lines waiting for standard error; the reports' task waits when it is full.
const STDERR_NOTES: usize = 8;

/// Where the outputs' lines go ("report written to …", the recorder's trouble).
#[derive(Debug)]
pub enum Notes {
    /// To a screen, through the command's channel: the TUI's footer, or the demo's narration.
    Screen(mpsc::Sender<String>),
    /// No screen: the reports' lines to standard error as they come. The recorder's trouble is
    /// said once, by [`Outputs::finish`]'s error, rather than twice.
    Stderr,
}

/// What [`Outputs::prepare`] opened: the listening socket and the recording's file.
pub struct Prepared {
    listener: Option<MetricsListener>,
    recorder: Option<Recorder>,
}

/// The running outputs.
pub struct Outputs {
    server: Option<MetricsServer>,
    recording: Option<RecordTask>,
    reports: Option<ReportTask>,
    /// Copies the reports' lines to standard error ([`Notes::Stderr`]).
    printer: Option<JoinHandle<()>>,
}

impl Outputs {
    /// Creates the recording (its header carries `report`'s thresholds for `rwtop report` to
    /// read back) and binds `--metrics-listen`, before anything starts: either failing is an
    /// error on the terminal.
    pub async fn prepare(
        metrics: Option<SocketAddr>,
        record: Option<&Path>,
        report: &ReportSettings,
    ) -> anyhow::Result<Prepared> {
        let recorder = record_cmd::create(record, report)?;
        let listener = match metrics {
            Some(addr) => Some(
                MetricsListener::bind(addr)
                    .await
                    .map_err(|e| anyhow::anyhow!("--metrics-listen {e}"))?,
            ),
            None => None,
        };
        Ok(Prepared { listener, recorder })
    }

    /// Starts each prepared output on `engine`'s snapshots, and the reports when given: the
    /// endpoint labels every series with `settings`' `cluster` and judges the throttle with its
    /// `[throttle]`.
    pub fn start(
        prepared: Prepared,
        engine: &Engine,
        settings: &FileSettings,
        reports: Option<Live>,
        notes: Notes,
    ) -> Self {
        let server = prepared.listener.map(|listener| {
            listener
                .with_cluster(&settings.cluster)
                .with_throttle(&settings.throttle)
                .serve(engine.snapshots())
        });
        let (notes, recorder_notes, printer) = match notes {
            Notes::Screen(notes) => (notes.clone(), Some(notes), None),
            Notes::Stderr => {
                let (notes, lines) = mpsc::channel(STDERR_NOTES);
                (notes, None, Some(tokio::spawn(print(lines))))
            }
        };
        let recording = record_cmd::spawn(prepared.recorder, engine.snapshots(), recorder_notes);
        let reports =
            reports.map(|live| rwtop::report::spawn_task(live, engine.snapshots(), notes));
        Self {
            server,
            recording,
            reports,
            printer,
        }
    }

    /// The TUI's feed of `engine`, its mark key wired to the reports when they run.
    #[must_use]
    pub fn feed<'a>(&self, engine: &'a Engine) -> Feed<'a> {
        let feed = Feed::live(engine);
        match &self.reports {
            Some(reports) => feed.with_reports(reports.marker()),
            None => feed,
        }
    }

    /// `http://ADDR/metrics`, when the endpoint runs.
    #[must_use]
    pub fn metrics_url(&self) -> Option<String> {
        self.server.as_ref().map(MetricsServer::url)
    }

    /// Stops the endpoint (no request reads a snapshot that stopped changing), then the engine,
    /// whose end ends the recorder's and the reports' snapshot streams; waits for the reports to
    /// write what they hold and for their last line, then for the recorder, which says where the
    /// recording is or why it stopped early.
    pub async fn finish(self, engine: Engine) -> anyhow::Result<()> {
        if let Some(server) = self.server {
            server.shutdown().await;
        }
        engine.shutdown().await;
        if let Some(reports) = self.reports {
            reports.finish().await;
        }
        if let Some(printer) = self.printer {
            let _ = printer.await;
        }
        record_cmd::finish(self.recording).await
    }
}

/// Standard error's copy of the notes, until every output that sends them has ended.
async fn print(mut lines: mpsc::Receiver<String>) {
    while let Some(line) = lines.recv().await {
        eprintln!("rwtop: {line}");
    }
}

/// What the reports judge by: `[report] quiet` and the routing threshold.
pub fn report_settings(settings: &FileSettings) -> ReportSettings {
    ReportSettings {
        quiet: settings.report.quiet,
        ..ReportSettings::default()
    }
    .with_threshold_seconds(settings.thresholds.routing_max_lag_seconds)
}

/// The live DDL-window reports of the configured topology: `[report]`'s folder (else beside the
/// recording, else here), judged by the configured routing threshold.
pub fn live_reports(config: &Config, record: Option<&Path>) -> Live {
    let names: Vec<&str> = config.nodes.iter().map(|n| n.name.as_str()).collect();
    Live::new(
        report_settings(&config.settings),
        config.settings.report.folder(record),
        format!("the live view of {}", names.join(", ")),
    )
}
