//! Where the TUI's snapshots come from: a running engine, or a recording played back. The loop
//! asks the feed for the snapshot to draw and when the next one comes, and hands it the
//! live-only requests, which a replay never receives (`actions::apply` answers them
//! "read-only").

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;

use super::keys::{REPLAY_SEEK, ReplayKey};
use crate::engine::Engine;
use crate::record::{Player, ReplayStatus};
use crate::report::Marker;
use crate::store::Snapshot;

pub struct Feed<'a>(Kind<'a>);

enum Kind<'a> {
    Live {
        engine: &'a Engine,
        snapshots: watch::Receiver<Arc<Snapshot>>,
        reports: Option<Marker>,
    },
    Replay(Box<Player>),
}

impl<'a> Feed<'a> {
    /// Snapshots as the engine publishes them; keys act on its servers.
    #[must_use]
    pub fn live(engine: &'a Engine) -> Self {
        Self(Kind::Live {
            engine,
            snapshots: engine.snapshots(),
            reports: None,
        })
    }

    /// The DDL-window reports' task, which the mark key asks (a replay has none: its recording
    /// is reported by `rwtop report`).
    #[must_use]
    pub fn with_reports(mut self, marker: Marker) -> Self {
        if let Kind::Live { reports, .. } = &mut self.0 {
            *reports = Some(marker);
        }
        self
    }

    /// The operator's mark, sent to the reports' task (its answer comes as a note); the
    /// footer's answer when it cannot be sent.
    #[must_use]
    pub fn mark(&self) -> Option<String> {
        match &self.0 {
            Kind::Live {
                reports: Some(marker),
                ..
            } => (!marker.mark()).then(|| "not marked: the reports have stopped".to_owned()),
            _ => Some("no report folder: DDL-window reports are off here".to_owned()),
        }
    }

    /// A recording's frames as the player moves through them; read-only.
    #[must_use]
    pub fn replay(player: Player) -> Self {
        Self(Kind::Replay(Box::new(player)))
    }

    #[must_use]
    pub fn is_replay(&self) -> bool {
        matches!(self.0, Kind::Replay(_))
    }

    /// The snapshot to draw now: the engine's newest, or the frame due in the replay.
    pub fn current(&mut self) -> Arc<Snapshot> {
        match &mut self.0 {
            Kind::Live { snapshots, .. } => snapshots.borrow_and_update().clone(),
            Kind::Replay(player) => {
                player.update(Instant::now());
                Arc::clone(player.current())
            }
        }
    }

    #[must_use]
    pub fn replay_status(&self) -> Option<ReplayStatus> {
        match &self.0 {
            Kind::Live { .. } => None,
            Kind::Replay(player) => Some(player.status()),
        }
    }

    /// Resolves when there is something new to draw; false once the engine is gone.
    pub async fn changed(&mut self) -> bool {
        match &mut self.0 {
            Kind::Live { snapshots, .. } => snapshots.changed().await.is_ok(),
            Kind::Replay(player) => {
                match player.next_due(Instant::now()) {
                    Some(due) => {
                        tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
                    }
                    None => std::future::pending().await,
                }
                true
            }
        }
    }

    fn engine(&self) -> Option<&Engine> {
        match &self.0 {
            Kind::Live { engine, .. } => Some(engine),
            Kind::Replay(_) => None,
        }
    }

    /// [`Engine::poll_now`]; false in a replay.
    #[must_use]
    pub fn poll_now(&self, node: &str) -> bool {
        self.engine().is_some_and(|e| e.poll_now(node))
    }

    /// [`Engine::probe`]; false in a replay.
    #[must_use]
    pub fn probe(&self, request: crate::probe::ProbeRequest) -> bool {
        self.engine().is_some_and(|e| e.probe(request))
    }

    /// [`Engine::drain`]; false in a replay.
    #[must_use]
    pub fn drain(&self, request: crate::drain::DrainRequest) -> bool {
        self.engine().is_some_and(|e| e.drain(request))
    }

    /// [`Engine::kill`]; false in a replay.
    #[must_use]
    pub fn kill(&self, request: crate::drain::KillRequest) -> bool {
        self.engine().is_some_and(|e| e.kill(request))
    }

    /// Whether the engine runs kills ([`Engine::enable_kills`]); false in a replay.
    #[must_use]
    pub fn kills_enabled(&self) -> bool {
        self.engine().is_some_and(Engine::kills_enabled)
    }

    /// Moves the replay; nothing in the live view (its table has no playback keys).
    pub fn replay_key(&mut self, key: ReplayKey) {
        let Kind::Replay(player) = &mut self.0 else {
            return;
        };
        let now = Instant::now();
        match key {
            ReplayKey::Pause => player.toggle_pause(now),
            ReplayKey::Back => player.seek(now, false, REPLAY_SEEK),
            ReplayKey::Forward => player.seek(now, true, REPLAY_SEEK),
            ReplayKey::Slower => player.change_speed(now, false),
            ReplayKey::Faster => player.change_speed(now, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::record::ReplayStatus;
    use crate::store::testkit::Topo;
    use crate::ui::actions::{Effect, READ_ONLY, apply};
    use crate::ui::keys::{Command, KeyMap, ReplayKey};
    use crate::ui::panels::footer::replay_text;
    use crate::ui::{Mode, RenderCtx, Theme, UiState};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn status(paused: bool) -> ReplayStatus {
        ReplayStatus {
            taken_at: Topo::new().snapshot.taken_at,
            position: Duration::from_secs(42),
            length: Duration::from_secs(310),
            speed: "2".parse().unwrap(),
            paused,
            at_end: false,
        }
    }

    fn screen(state: &UiState) -> String {
        let snapshot = Topo::new().at(1);
        let theme = Theme::plain();
        let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
        terminal
            .draw(|f| {
                crate::ui::render::render(
                    f,
                    &RenderCtx {
                        snapshot: &snapshot,
                        state,
                        theme: &theme,
                    },
                );
            })
            .unwrap();
        crate::ui::panels::header::tests::buffer_text(terminal.backend().buffer())
    }

    #[test]
    fn playback_keys_exist_only_in_a_replay() {
        let live = KeyMap::default();
        assert_eq!(live.action_for(key(KeyCode::Char(' ')), Mode::Normal), None);
        assert_eq!(live.action_for(key(KeyCode::Left), Mode::Normal), None);
        let replay = KeyMap::default().for_replay();
        for (code, want) in [
            (KeyCode::Char(' '), ReplayKey::Pause),
            (KeyCode::Left, ReplayKey::Back),
            (KeyCode::Right, ReplayKey::Forward),
            (KeyCode::Char('<'), ReplayKey::Slower),
            (KeyCode::Char('-'), ReplayKey::Slower),
            (KeyCode::Char('>'), ReplayKey::Faster),
            (KeyCode::Char('+'), ReplayKey::Faster),
        ] {
            assert_eq!(
                replay.action_for(key(code), Mode::Normal),
                Some(Command::Replay(want))
            );
        }
        // The live view's keys still work; a key [keys] took stays its owner's.
        assert_eq!(
            replay.action_for(key(KeyCode::Char('s')), Mode::Normal),
            Some(Command::Sort)
        );
        let taken = KeyMap::with_overrides([("sort", "space")], "x")
            .unwrap()
            .for_replay();
        assert_eq!(
            taken.action_for(key(KeyCode::Char(' ')), Mode::Normal),
            Some(Command::Sort)
        );
    }

    #[test]
    fn a_replay_refuses_live_actions_and_passes_playback_on() {
        let snapshot = Topo::new().at(1);
        let mut state = UiState {
            keys: KeyMap::default().for_replay(),
            replay: Some(status(false)),
            ..UiState::default()
        };
        for c in ['t', 'b', 'p', 'd'] {
            let action = state
                .keys
                .action_for(key(KeyCode::Char(c)), state.mode)
                .unwrap();
            assert_eq!(
                apply(&mut state, action, &snapshot),
                Effect::Continue,
                "{c}"
            );
            assert_eq!(state.status.as_deref(), Some(READ_ONLY), "{c}");
            assert_eq!(
                state.mode,
                Mode::Normal,
                "no drain confirmation in a replay"
            );
        }
        let space = state
            .keys
            .action_for(key(KeyCode::Char(' ')), state.mode)
            .unwrap();
        assert_eq!(
            apply(&mut state, space, &snapshot),
            Effect::Replay(ReplayKey::Pause)
        );
        assert_eq!(state.status, None, "a key clears the last answer");
        // Looking around is not refused.
        let sort = state
            .keys
            .action_for(key(KeyCode::Char('s')), state.mode)
            .unwrap();
        assert_eq!(apply(&mut state, sort, &snapshot), Effect::Continue);
        assert_eq!(state.status, None);
    }

    #[test]
    fn the_footer_says_where_the_replay_stands_and_shows_its_keys() {
        assert_eq!(
            replay_text(&status(true)),
            "REPLAY 22:13:20 (42s / 5m10s) ×2 paused"
        );
        let state = UiState {
            keys: KeyMap::default().for_replay(),
            replay: Some(status(false)),
            ..UiState::default()
        };
        let text = screen(&state);
        let footer = text.lines().last().unwrap();
        assert!(
            footer.starts_with(
                " REPLAY 22:13:20 (42s / 5m10s) ×2   space  pause   ←  -10s   →  +10s"
            ),
            "{footer}"
        );
        assert!(
            !footer.contains("test read") && !footer.contains("drain"),
            "{footer}"
        );
        assert!(footer.contains("? ") && footer.contains("quit"), "{footer}");
        // An answer keeps the replay's place in view.
        let answered = UiState {
            status: Some(READ_ONLY.to_owned()),
            ..state.clone()
        };
        let text = screen(&answered);
        let footer = text.lines().last().unwrap();
        assert!(footer.starts_with(" REPLAY 22:13:20") && footer.contains("replay: read-only"));
        // The live view's footer has none of it.
        let live = screen(&UiState::default());
        assert!(
            !live.contains("REPLAY") && !live.contains("pause"),
            "{live}"
        );
    }
}
