//! `rwtop` with no subcommand: watch the configured topology in the TUI.

use rwtop::config::Config;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::ui::Theme;
use rwtop::ui::keys::KeyMap;

use super::TargetArgs;

/// `NO_COLOR` set and non-empty (no-color.org) turns colour off.
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

pub fn theme(spec: Option<&str>) -> anyhow::Result<Theme> {
    Ok(Theme::resolve(spec, no_color())?)
}

pub fn run(
    target: &TargetArgs,
    theme_spec: Option<&str>,
    metrics: Option<std::net::SocketAddr>,
    record: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let config = Config::load(&target.overrides())?;
    let theme = theme(theme_spec.or(config.settings.theme.as_deref()))?;
    super::warn(&config);
    let origin = config
        .file
        .as_ref()
        .map_or_else(|| "rwtop.toml".to_owned(), |p| p.display().to_string());
    let keys = KeyMap::with_overrides(
        config
            .settings
            .keys
            .iter()
            .map(|(a, k)| (a.as_str(), k.as_str())),
        &origin,
    )?;
    let mut spec = EngineSpec::from_config(&config);
    let recorder = super::record_cmd::create(record, &report_settings(&config.settings))?;
    let runtime = super::runtime()?;
    runtime.block_on(async {
        // A taken port is reported here, before the TUI owns the terminal.
        let listener = match metrics {
            Some(addr) => Some(super::serve_cmd::bind(addr).await?),
            None => None,
        };
        let mut engine = Engine::start_finding_roots(&mut spec).await;
        if config.settings.ddl.allow_kill {
            // Kills go to the drains' audit log where one is configured.
            let audit = config.settings.drain.as_ref().map_or_else(
                || rwtop::drain::AuditLog::new(rwtop::drain::AuditLog::default_path()),
                |drain| drain.audit.clone(),
            );
            engine.enable_kills(spec.kill_spec(audit));
        }
        let server = super::serve_cmd::serve(listener, engine.snapshots(), &config.settings);
        // The recorder's trouble and the reports' lines reach the footer.
        let (notes_tx, notes_rx) = tokio::sync::mpsc::channel(8);
        let recording =
            super::record_cmd::spawn(recorder, engine.snapshots(), Some(notes_tx.clone()));
        let reports =
            rwtop::report::spawn_task(reports(&config, record), engine.snapshots(), notes_tx);
        let feed = rwtop::ui::feed::Feed::live(&engine).with_reports(reports.marker());
        let result =
            rwtop::ui::app::run(feed, &theme, keys, &config.settings.probe, Some(notes_rx)).await;
        if let Some(server) = server {
            server.shutdown().await;
        }
        engine.shutdown().await;
        reports.finish().await;
        let saved = super::record_cmd::finish(recording).await;
        result?;
        saved
    })?;
    Ok(())
}

/// What the reports judge by: `[report] quiet` and the routing threshold.
pub fn report_settings(settings: &rwtop::config::FileSettings) -> rwtop::report::ReportSettings {
    rwtop::report::ReportSettings {
        quiet: settings.report.quiet,
        ..rwtop::report::ReportSettings::default()
    }
    .with_threshold_seconds(settings.thresholds.routing_max_lag_seconds)
}

/// The live DDL-window reports: `[report]`'s folder (else beside the recording, else here),
/// judged by the configured routing threshold.
pub fn reports(config: &Config, record: Option<&std::path::Path>) -> rwtop::report::Live {
    let settings = report_settings(&config.settings);
    let names: Vec<&str> = config.nodes.iter().map(|n| n.name.as_str()).collect();
    rwtop::report::Live::new(
        settings,
        config.settings.report.folder(record),
        format!("the live view of {}", names.join(", ")),
    )
}
