//! `rwtop` with no subcommand: watch the configured topology in the TUI.

use rwtop::config::Config;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::ui::Theme;
use rwtop::ui::keys::KeyMap;

use super::TargetArgs;
use super::outputs::{self, Notes, Outputs};

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
    let report = outputs::report_settings(&config.settings);
    let runtime = super::runtime()?;
    runtime.block_on(async {
        // A taken port is reported here, before the TUI owns the terminal.
        let prepared = Outputs::prepare(metrics, record, &report).await?;
        let mut engine = Engine::start_finding_roots(&mut spec).await;
        if config.settings.ddl.allow_kill {
            // Kills go to the drains' audit log where one is configured.
            let audit = config.settings.drain.as_ref().map_or_else(
                || rwtop::drain::AuditLog::new(rwtop::drain::AuditLog::default_path()),
                |drain| drain.audit.clone(),
            );
            engine.enable_kills(spec.kill_spec(audit));
        }
        // The recorder's trouble and the reports' lines reach the footer.
        let (notes, notes_rx) = tokio::sync::mpsc::channel(8);
        let outputs = Outputs::start(
            prepared,
            &engine,
            &config.settings,
            Some(outputs::live_reports(&config, record)),
            Notes::Screen(notes),
        );
        let result = rwtop::ui::app::run(
            outputs.feed(&engine),
            &theme,
            keys,
            &config.settings.probe,
            Some(notes_rx),
        )
        .await;
        let saved = outputs.finish(engine).await;
        result?;
        saved
    })?;
    Ok(())
}
