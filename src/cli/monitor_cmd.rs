//! `rwtop` with no subcommand: watch the configured topology in the TUI.

use rwtop::config::Config;
use rwtop::poll::{Engine, EngineSpec};
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

pub fn run(target: &TargetArgs, theme_spec: Option<&str>) -> anyhow::Result<()> {
    let config = Config::load(&target.overrides())?;
    let theme = theme(theme_spec.or(config.theme.as_deref()))?;
    for warning in &config.warnings {
        eprintln!("rwtop: warning: {warning}");
    }
    let origin = config
        .source
        .as_ref()
        .map_or_else(|| "rwtop.toml".to_owned(), |p| p.display().to_string());
    let keys = KeyMap::with_overrides(
        config.keys.iter().map(|(a, k)| (a.as_str(), k.as_str())),
        &origin,
    )?;
    let spec = EngineSpec::from_config(&config);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let engine = Engine::start(&spec);
        let result = rwtop::ui::app::run(&engine, &theme, keys, &config.probe, None).await;
        engine.shutdown().await;
        result
    })?;
    Ok(())
}
