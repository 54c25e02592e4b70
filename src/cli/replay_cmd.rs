//! `rwtop replay FILE`: a recording played into the TUI, read-only.

use std::path::Path;
use std::time::Instant;

use rwtop::record::{Player, Recording, Speed};
use rwtop::ui::feed::Feed;
use rwtop::ui::keys::KeyMap;
use tokio::sync::mpsc;

use super::monitor_cmd;

/// `--speed`: a factor from 0.1 to 100.
pub fn speed_arg(text: &str) -> Result<Speed, String> {
    text.parse()
}

pub fn run(file: &Path, speed: Speed, theme_spec: Option<&str>) -> anyhow::Result<()> {
    let theme = monitor_cmd::theme(theme_spec)?;
    // Read and checked whole before the TUI takes the terminal: a bad file is a plain error.
    let recording = Recording::open(file)?;
    let warning = recording.warning();
    if let Some(warning) = &warning {
        eprintln!("rwtop: warning: {warning}");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (notes_tx, notes_rx) = mpsc::channel(1);
        if let Some(warning) = warning {
            let _ = notes_tx.try_send(warning);
        }
        let player = Player::new(recording, speed, Instant::now());
        rwtop::ui::app::run(
            Feed::replay(player),
            &theme,
            KeyMap::default(),
            &rwtop::probe::ProbeSettings::default(),
            Some(notes_rx),
        )
        .await
    })?;
    Ok(())
}
