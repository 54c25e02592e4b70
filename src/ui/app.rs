//! The one UI loop: terminal events, snapshot updates (from an engine or a replay, see
//! `feed.rs`), narration and a clock tick, multiplexed with `select!`. The terminal is restored
//! on every way out: quit, Ctrl-C, SIGTERM, a hang-up (SIGHUP), an error (a drop guard) and a
//! panic (ratatui's hook, installed by `ratatui::init`).

use std::time::Duration;

use futures_util::StreamExt;
use ratatui::crossterm::event::{Event, EventStream, KeyEventKind};
use tokio::sync::mpsc;

use super::actions::{Effect, apply, poll_now_answer, refused};
use super::feed::Feed;
use super::keys::KeyMap;
use super::render::render;
use super::state::ProbeChoice;
use super::{RenderCtx, Theme, UiState};
use crate::probe::ProbeSettings;

/// Restores the terminal when the loop ends by any path that unwinds or returns.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        // Errors are ignored: a terminal that hung up cannot be restored, and a message about it
        // has nowhere to go (printing to a dead terminal panics, and a panic in a drop aborts
        // the process before the demo has stopped its servers).
        let _ = ratatui::try_restore();
        let _ = ratatui::crossterm::execute!(std::io::stdout(), ratatui::crossterm::cursor::Show);
    }
}

/// Runs the TUI over a running engine or a replay until the operator quits. `narration` (the
/// demo's commentary, a recorder's trouble, what the reports' task did) is shown in the footer
/// as it arrives; `probe` is the
/// test-read strategy `t` starts with and the size of a bake-off. A replay adds its playback keys
/// to `keys`.
pub async fn run(
    mut feed: Feed<'_>,
    theme: &Theme,
    keys: KeyMap,
    probe: &ProbeSettings,
    mut narration: Option<mpsc::Receiver<String>>,
) -> std::io::Result<()> {
    // Never dropped: a terminal's drop shows the cursor and prints when that fails, which
    // panics on a terminal that hung up; `Restore` shows it instead.
    let mut terminal = std::mem::ManuallyDrop::new(ratatui::init());
    let _restore = Restore;
    let mut events = EventStream::new();
    // Ages and "since" columns move even when no snapshot does.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    // A closed terminal (an SSH session dropped, a tmux session killed) hangs up: without a
    // handler the process would die on the spot, and the demo's servers would outlive it.
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    let keys = if feed.is_replay() {
        keys.for_replay()
    } else {
        keys
    };
    let mut state = UiState {
        keys,
        probe: ProbeChoice::new(probe.clone()),
        kill_enabled: feed.kills_enabled(),
        ..UiState::default()
    };
    loop {
        let snapshot = feed.current();
        state.replay = feed.replay_status();
        super::kill::show_outcome(&mut state, &snapshot);
        super::grant_note::show(&mut state, &snapshot);
        if state.panes.cover == Some(super::state::Cover::Whatif) {
            super::whatif::refresh(&mut state.whatif, &snapshot);
        }
        terminal.draw(|frame| {
            render(
                frame,
                &RenderCtx {
                    snapshot: &snapshot,
                    state: &state,
                    theme,
                },
            );
        })?;
        tokio::select! {
            biased;
            event = events.next() => match event {
                // Only presses: a key release would act twice on terminals that report both.
                Some(Ok(Event::Key(key))) if key.kind == KeyEventKind::Press => {
                    let Some(action) = state.keys.action_for(key, state.mode) else { continue };
                    match apply(&mut state, action, &snapshot) {
                        Effect::Quit => return Ok(()),
                        Effect::PollNow { node, read } => {
                            let polled = feed.poll_now(&node);
                            let queued = feed.probe(read.clone());
                            if let Some(answer) =
                                poll_now_answer(&node, polled, &read, queued, &snapshot)
                            {
                                state.status = Some(answer);
                            }
                        }
                        Effect::Request(request) => {
                            if !feed.probe(request.clone()) {
                                state.status = Some(refused(&request, &snapshot));
                            }
                        }
                        Effect::Drain(request) => {
                            if !feed.drain(request.clone()) {
                                state.status = Some(format!(
                                    "not sent: {} {}: no drain backend, or one is still running",
                                    request.action.verb(),
                                    request.replica
                                ));
                            }
                        }
                        Effect::Kill(request) => super::kill::send(&feed, request, &mut state),
                        Effect::Replay(key) => feed.replay_key(key),
                        Effect::Mark => {
                            if let Some(answer) = feed.mark() {
                                state.status = Some(answer);
                            }
                        }
                        Effect::Continue => {}
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(err)) => return Err(err),
                None => return Ok(()),
            },
            _ = terminate.recv() => return Ok(()),
            _ = hangup.recv() => return Ok(()),
            _ = tokio::signal::ctrl_c() => return Ok(()),
            changed = feed.changed() => {
                if !changed {
                    return Ok(());
                }
            }
            Some(line) = async {
                match narration.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => state.status = Some(line),
            _ = tick.tick() => {}
        }
    }
}
