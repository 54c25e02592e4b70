//! `rwtop demo`: a real sandbox with scripted incidents, watched in the TUI; quitting tears it
//! all down.

use std::path::PathBuf;
use std::time::Duration;

use rwtop::demo::Demo;
use rwtop::engine::Engine;
use tokio::sync::{mpsc, watch};

use super::monitor_cmd;

pub fn run(
    theme_spec: Option<&str>,
    dir: Option<PathBuf>,
    metrics: Option<std::net::SocketAddr>,
    record: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let theme = monitor_cmd::theme(theme_spec)?;
    let recorder = super::record_cmd::create(record, &rwtop::report::ReportSettings::default())?;
    let runtime = super::runtime()?;
    // A taken port is reported before any server starts.
    let listener = match metrics {
        Some(addr) => Some(runtime.block_on(super::serve_cmd::bind(addr))?),
        None => None,
    };
    eprintln!(
        "rwtop demo: starting a primary, two replicas, a cascaded one, a second primary and an aggregator of both on 127.0.0.1 ..."
    );
    let demo = Demo::start(dir)?;
    runtime.block_on(async move {
        let engine = Engine::start(&demo.engine_spec());
        let settings = rwtop::config::FileSettings::default();
        let server = super::serve_cmd::serve(listener, engine.snapshots(), &settings);
        let (narration_tx, narration_rx) = mpsc::channel(16);
        let (stop_tx, stop_rx) = watch::channel(false);
        // The recorder's trouble and the reports' lines are notes: the footer holds each one
        // against the narration for a while (`demo::footer`), so it can be read.
        let (notes_tx, notes_rx) = mpsc::channel(16);
        let (footer_tx, footer_rx) = mpsc::channel(16);
        tokio::spawn(rwtop::demo::footer::forward(
            narration_rx,
            notes_rx,
            footer_tx,
        ));
        let recording =
            super::record_cmd::spawn(recorder, engine.snapshots(), Some(notes_tx.clone()));
        // With --record, each DDL window's report lands beside the recording.
        let reports = record.map(|path| {
            let live = rwtop::report::Live::new(
                rwtop::report::ReportSettings::default(),
                rwtop::config::ReportConfig::default().folder(Some(path)),
                "the demo".to_owned(),
            );
            rwtop::report::spawn_task(live, engine.snapshots(), notes_tx.clone())
        });
        let script = demo.spawn_script(narration_tx, stop_rx);
        let keys = rwtop::ui::keys::KeyMap::default();
        let mut feed = rwtop::ui::feed::Feed::live(&engine);
        if let Some(reports) = &reports {
            feed = feed.with_reports(reports.marker());
        }
        let result = rwtop::ui::app::run(
            feed,
            &theme,
            keys,
            &rwtop::probe::ProbeSettings::default(),
            Some(footer_rx),
        )
        .await;
        let _ = stop_tx.send(true);
        let _ = tokio::time::timeout(Duration::from_secs(10), script).await;
        if let Some(server) = server {
            server.shutdown().await;
        }
        engine.shutdown().await;
        if let Some(reports) = reports {
            reports.finish().await;
        }
        let saved = super::record_cmd::finish(recording).await;
        demo.shutdown().await;
        result?;
        saved
    })?;
    Ok(())
}
