//! `rwtop demo`: a real sandbox with scripted incidents, watched in the TUI; quitting tears it
//! all down.

use std::path::PathBuf;
use std::time::Duration;

use rwtop::demo::Demo;
use rwtop::engine::Engine;
use tokio::sync::{mpsc, watch};

use super::monitor_cmd;
use super::outputs::{Notes, Outputs};

pub fn run(
    theme_spec: Option<&str>,
    dir: Option<PathBuf>,
    galera: bool,
    metrics: Option<std::net::SocketAddr>,
    record: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let theme = monitor_cmd::theme(theme_spec)?;
    let report = rwtop::report::ReportSettings::default();
    let runtime = super::runtime()?;
    // A taken port is reported before any server starts.
    let prepared = runtime.block_on(Outputs::prepare(metrics, record, &report))?;
    let demo = if galera {
        eprintln!(
            "rwtop demo: starting a Galera cluster of three members and an async replica on 127.0.0.1 (about 30 s) ..."
        );
        Demo::start_galera(dir)?
    } else {
        eprintln!(
            "rwtop demo: starting a primary, two replicas, a cascaded one, a second primary and an aggregator of both on 127.0.0.1 ..."
        );
        Demo::start(dir)?
    };
    runtime.block_on(async move {
        let engine = Engine::start(&demo.engine_spec());
        // With --record, each DDL window's report lands beside the recording.
        let reports = record.map(|path| {
            rwtop::report::Live::new(
                report,
                rwtop::config::ReportConfig::default().folder(Some(path)),
                "the demo".to_owned(),
            )
        });
        // The recorder's trouble and the reports' lines are notes: the footer holds each one
        // against the narration for a while (`demo::footer`), so it can be read.
        let (notes, notes_rx) = mpsc::channel(16);
        let outputs = Outputs::start(
            prepared,
            &engine,
            &rwtop::config::FileSettings::default(),
            reports,
            Notes::Screen(notes),
        );
        let (narration_tx, narration_rx) = mpsc::channel(16);
        let (stop_tx, stop_rx) = watch::channel(false);
        let (footer_tx, footer_rx) = mpsc::channel(16);
        tokio::spawn(rwtop::demo::footer::forward(
            narration_rx,
            notes_rx,
            footer_tx,
        ));
        let script = demo.spawn_script(narration_tx, stop_rx);
        let result = rwtop::ui::app::run(
            outputs.feed(&engine),
            &theme,
            rwtop::ui::keys::KeyMap::default(),
            &rwtop::probe::ProbeSettings::default(),
            Some(footer_rx),
        )
        .await;
        let _ = stop_tx.send(true);
        let _ = tokio::time::timeout(Duration::from_secs(10), script).await;
        let saved = outputs.finish(engine).await;
        demo.shutdown().await;
        result?;
        saved
    })?;
    Ok(())
}
