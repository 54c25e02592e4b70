//! Keys map to actions through one table; the footer's key bar and the `?` screen are built from
//! the same table, so they can never drift from what the keys do.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::state::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    Up,
    Down,
    Sort,
    Window,
    ExpandGtid,
    ToggleTopology,
    ToggleDetail,
    ToggleAlerts,
    /// Unfold or fold the symptoms under each incident in the alerts pane.
    ExpandIncidents,
    ToggleTestReads,
    ToggleWhatif,
    ToggleLint,
    /// The failover exposure, in place of the detail pane.
    ToggleExposure,
    TestRead,
    Bakeoff,
    PrevStrategy,
    NextStrategy,
    Probe,
    Drain,
    /// Offer to kill the session blocking a waiting DDL (`ui/kill.rs`).
    Kill,
    /// Open or close a DDL-window report window.
    Mark,
    Help,
    /// A key that moves the `?` screen's list while it is longer than the terminal; not in the
    /// key table.
    HelpScroll(super::state::HelpScroll),
    Quit,
    /// `y` while a confirmation is asked; not in the key table.
    ConfirmYes,
    /// Any other key while a confirmation is asked.
    ConfirmNo,
    /// Playback keys, bound only while replaying a recording ([`KeyMap::for_replay`]).
    Replay(ReplayKey),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplayKey {
    Pause,
    Back,
    Forward,
    Slower,
    Faster,
}

impl Command {
    /// Actions that act on live servers: a replay answers them with "read-only".
    #[must_use]
    pub fn is_live_only(self) -> bool {
        matches!(
            self,
            Command::TestRead
                | Command::Bakeoff
                | Command::Probe
                | Command::Drain
                | Command::Kill
                | Command::Mark
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub key: KeyCode,
    pub action: Command,
    /// Shown in the footer after the key (empty: only on the help screen).
    pub short: &'static str,
    pub help: &'static str,
}

/// The default table. Order is the order of the footer and the help screen.
pub const BINDINGS: &[Binding] = &[
    Binding {
        key: KeyCode::Up,
        action: Command::Up,
        short: "",
        help: "select the previous replica",
    },
    Binding {
        key: KeyCode::Char('k'),
        action: Command::Up,
        short: "",
        help: "select the previous replica",
    },
    Binding {
        key: KeyCode::Down,
        action: Command::Down,
        short: "select",
        help: "select the next replica",
    },
    Binding {
        key: KeyCode::Char('j'),
        action: Command::Down,
        short: "",
        help: "select the next replica",
    },
    Binding {
        key: KeyCode::Char('s'),
        action: Command::Sort,
        short: "sort",
        help: "sort replicas: topology, worst lag, largest backlog",
    },
    Binding {
        key: KeyCode::Char('w'),
        action: Command::Window,
        short: "window",
        help: "chart and percentile window: 1, 5, 15 minutes",
    },
    Binding {
        key: KeyCode::Char('g'),
        action: Command::ExpandGtid,
        short: "gtid",
        help: "show GTID sets in full or abbreviated",
    },
    Binding {
        key: KeyCode::Char('o'),
        action: Command::ToggleTopology,
        short: "",
        help: "show or hide the topology tree",
    },
    Binding {
        key: KeyCode::Char('i'),
        action: Command::ToggleDetail,
        short: "",
        help: "show or hide the detail pane",
    },
    Binding {
        key: KeyCode::Char('a'),
        action: Command::ToggleAlerts,
        short: "",
        help: "show or hide the alerts pane",
    },
    Binding {
        key: KeyCode::Char('e'),
        action: Command::ExpandIncidents,
        short: "",
        help: "unfold or fold each incident's symptoms in the alerts pane",
    },
    Binding {
        key: KeyCode::Char('r'),
        action: Command::ToggleTestReads,
        short: "",
        help: "show or hide the test reads (in place of the detail pane)",
    },
    Binding {
        key: KeyCode::Char('f'),
        action: Command::ToggleWhatif,
        short: "",
        help: "show or hide the what-if (in place of the detail pane)",
    },
    Binding {
        key: KeyCode::Char('l'),
        action: Command::ToggleLint,
        short: "",
        help: "show or hide the health lint (in place of the detail pane)",
    },
    Binding {
        key: KeyCode::Char('E'),
        action: Command::ToggleExposure,
        short: "",
        help: "show or hide the failover exposure (over the detail pane)",
    },
    Binding {
        key: KeyCode::Char('t'),
        action: Command::TestRead,
        short: "test read",
        help: "test-read the selected replica with the current strategy",
    },
    Binding {
        key: KeyCode::Char('b'),
        action: Command::Bakeoff,
        short: "bake-off",
        help: "bake-off: every strategy in turn on the selected replica",
    },
    Binding {
        key: KeyCode::Char('['),
        action: Command::PrevStrategy,
        short: "",
        help: "previous test-read strategy",
    },
    Binding {
        key: KeyCode::Char(']'),
        action: Command::NextStrategy,
        short: "",
        help: "next test-read strategy",
    },
    Binding {
        key: KeyCode::Char('p'),
        action: Command::Probe,
        short: "poll",
        help: "poll the selected replica now and run one test read on it",
    },
    Binding {
        key: KeyCode::Char('d'),
        action: Command::Drain,
        short: "drain",
        help: "drain or undrain the selected replica (asks first)",
    },
    Binding {
        key: KeyCode::Char('K'),
        action: Command::Kill,
        short: "",
        help: "kill a waiting DDL's blocker (asks; [ddl] allow_kill)",
    },
    Binding {
        key: KeyCode::Char('m'),
        action: Command::Mark,
        short: "mark",
        help: "open or close a report window (a DDL opens one by itself)",
    },
    Binding {
        key: KeyCode::Char('?'),
        action: Command::Help,
        short: "help",
        help: "this help; ↑ ↓ move a long list, any other key closes it",
    },
    Binding {
        key: KeyCode::Char('q'),
        action: Command::Quit,
        short: "quit",
        help: "quit (Ctrl-C too)",
    },
];

/// Added in front of the table while replaying, so the footer shows them first. Not
/// configurable: `[keys]` names the live view's actions, and a key it took stays its own.
pub const REPLAY_BINDINGS: &[Binding] = &[
    Binding {
        key: KeyCode::Char(' '),
        action: Command::Replay(ReplayKey::Pause),
        short: "pause",
        help: "replay: pause or play on (at the end: play again)",
    },
    Binding {
        key: KeyCode::Left,
        action: Command::Replay(ReplayKey::Back),
        short: "-10s",
        help: "replay: back 10 seconds",
    },
    Binding {
        key: KeyCode::Right,
        action: Command::Replay(ReplayKey::Forward),
        short: "+10s",
        help: "replay: forward 10 seconds",
    },
    Binding {
        key: KeyCode::Char('<'),
        action: Command::Replay(ReplayKey::Slower),
        short: "slow",
        help: "replay: slower (down to ×0.1)",
    },
    Binding {
        key: KeyCode::Char('-'),
        action: Command::Replay(ReplayKey::Slower),
        short: "",
        help: "replay: slower",
    },
    Binding {
        key: KeyCode::Char('>'),
        action: Command::Replay(ReplayKey::Faster),
        short: "fast",
        help: "replay: faster (up to ×100)",
    },
    Binding {
        key: KeyCode::Char('+'),
        action: Command::Replay(ReplayKey::Faster),
        short: "",
        help: "replay: faster",
    },
];

/// Seek step of the left and right keys in a replay.
pub const REPLAY_SEEK: std::time::Duration = std::time::Duration::from_secs(10);

impl Command {
    /// Names used in the `[keys]` table of `rwtop.toml`.
    pub const NAMES: &[(&'static str, Command)] = &[
        ("up", Command::Up),
        ("down", Command::Down),
        ("sort", Command::Sort),
        ("window", Command::Window),
        ("expand_gtid", Command::ExpandGtid),
        ("toggle_topology", Command::ToggleTopology),
        ("toggle_detail", Command::ToggleDetail),
        ("toggle_alerts", Command::ToggleAlerts),
        ("expand_incidents", Command::ExpandIncidents),
        ("toggle_test_reads", Command::ToggleTestReads),
        ("toggle_whatif", Command::ToggleWhatif),
        ("toggle_lint", Command::ToggleLint),
        ("toggle_exposure", Command::ToggleExposure),
        ("test_read", Command::TestRead),
        ("bakeoff", Command::Bakeoff),
        ("prev_strategy", Command::PrevStrategy),
        ("next_strategy", Command::NextStrategy),
        ("probe", Command::Probe),
        ("drain", Command::Drain),
        ("kill", Command::Kill),
        ("mark", Command::Mark),
        ("help", Command::Help),
        ("quit", Command::Quit),
    ];
}

/// The key table in force: the defaults with the operator's `[keys]` overrides. Dispatch, the
/// footer and the help screen all read this one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMap {
    pub bindings: Vec<Binding>,
}

impl Default for KeyMap {
    fn default() -> Self {
        Self {
            bindings: BINDINGS.to_vec(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: [keys] {action} = {key:?}: {problem}")]
pub struct KeyMapError {
    pub origin: String,
    pub action: String,
    pub key: String,
    pub problem: String,
}

impl KeyMapError {
    /// A bad `[keys]` entry is a configuration error.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        2
    }
}

/// `q`, `?`, or a named key: up, down, left, right, enter, esc, tab, space, home, end, pageup,
/// pagedown.
fn parse_key(text: &str) -> Option<KeyCode> {
    let mut chars = text.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return (!c.is_control()).then_some(KeyCode::Char(c));
    }
    Some(match text.to_ascii_lowercase().as_str() {
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "enter" => KeyCode::Enter,
        "esc" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "space" => KeyCode::Char(' '),
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        _ => return None,
    })
}

const KEY_FORMS: &str = "expected one character or a key name (up, down, left, right, enter, esc, \
                         tab, space, home, end, pageup, pagedown)";

impl KeyMap {
    /// Applies `[keys]` overrides (action name → key): an overridden action answers only to its
    /// new key. A key may not serve two actions.
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (&'a str, &'a str)>,
        origin: &str,
    ) -> Result<Self, KeyMapError> {
        let mut map = Self::default();
        for (name, key_text) in overrides {
            let err = |problem: String| KeyMapError {
                origin: origin.to_owned(),
                action: name.to_owned(),
                key: key_text.to_owned(),
                problem,
            };
            let Some(&(_, action)) = Command::NAMES.iter().find(|(n, _)| *n == name) else {
                let known: Vec<&str> = Command::NAMES.iter().map(|(n, _)| *n).collect();
                return Err(err(format!(
                    "unknown action; expected one of {}",
                    known.join(", ")
                )));
            };
            let key = parse_key(key_text).ok_or_else(|| err(KEY_FORMS.to_owned()))?;
            let template = map.bindings.iter().find(|b| b.action == action).cloned();
            map.bindings.retain(|b| b.action != action);
            if let Some(other) = map.bindings.iter().find(|b| b.key == key) {
                let taken = Command::NAMES
                    .iter()
                    .find(|(_, a)| *a == other.action)
                    .map_or("?", |(n, _)| n);
                return Err(err(format!("that key already does {taken}")));
            }
            if let Some(mut binding) = template {
                binding.key = key;
                map.bindings.push(binding);
            }
        }
        Ok(map)
    }

    /// The table for a replay: the playback keys first (each unless `[keys]` gave its key to
    /// an action), and the live-only actions off the footer (they answer "read-only").
    #[must_use]
    pub fn for_replay(self) -> Self {
        let mut bindings: Vec<Binding> = REPLAY_BINDINGS
            .iter()
            .filter(|r| self.bindings.iter().all(|b| b.key != r.key))
            .cloned()
            .collect();
        bindings.extend(self.bindings.into_iter().map(|mut b| {
            if b.action.is_live_only() {
                b.short = "";
            }
            b
        }));
        Self { bindings }
    }

    /// The first key bound to `action`, as the footer writes it: for texts that name keys.
    #[must_use]
    pub fn key_for(&self, action: Command) -> Option<String> {
        self.bindings
            .iter()
            .find(|b| b.action == action)
            .map(|b| key_name(b.key))
    }

    /// What a key means in a mode. In help mode the arrows and page keys move a list too long
    /// for the terminal and every other key closes the help; Ctrl-C always quits.
    #[must_use]
    pub fn action_for(&self, key: KeyEvent, mode: Mode) -> Option<Command> {
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            return Some(Command::Quit);
        }
        if mode == Mode::Help {
            return Some(
                super::state::HelpScroll::of(key.code).map_or(Command::Help, Command::HelpScroll),
            );
        }
        if mode == Mode::Confirm {
            let yes = matches!(key.code, KeyCode::Char('y' | 'Y'));
            return Some(if yes {
                Command::ConfirmYes
            } else {
                Command::ConfirmNo
            });
        }
        self.bindings
            .iter()
            .find(|b| b.key == key.code)
            .map(|b| b.action)
    }
}

/// How a key is written in the footer and the help screen.
#[must_use]
pub fn key_name(code: KeyCode) -> String {
    match code {
        KeyCode::Up => "↑".to_owned(),
        KeyCode::Down => "↓".to_owned(),
        KeyCode::Left => "←".to_owned(),
        KeyCode::Right => "→".to_owned(),
        KeyCode::Char(' ') => "space".to_owned(),
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_sample_config_names_every_action() {
        let sample = include_str!("../../docs/rwtop.sample.toml");
        let listed = sample
            .split("[keys]")
            .next()
            .and_then(|before| before.rsplit("# TUI keys:").next())
            .unwrap_or_default();
        for (name, _) in Command::NAMES {
            assert!(
                listed.contains(&format!(" {name},")) || listed.contains(&format!(" {name}.")),
                "docs/rwtop.sample.toml does not list the action {name}"
            );
        }
    }

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::store::testkit::Topo;
    use crate::ui::{RenderCtx, Theme, UiState};

    fn press(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn overrides_move_an_action_to_its_new_key_everywhere() {
        let map = KeyMap::with_overrides([("quit", "x"), ("help", "h")], "rwtop.toml").unwrap();
        assert_eq!(
            map.action_for(press('x'), Mode::Normal),
            Some(Command::Quit)
        );
        assert_eq!(
            map.action_for(press('q'), Mode::Normal),
            None,
            "the old key is free"
        );
        assert_eq!(
            map.action_for(press('h'), Mode::Normal),
            Some(Command::Help)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(map.action_for(ctrl_c, Mode::Normal), Some(Command::Quit));
        // The footer and the help screen read the same table.
        let snapshot = Topo::new().at(1);
        let state = UiState {
            keys: map,
            ..UiState::default()
        };
        let theme = Theme::plain();
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        let mut text = String::new();
        for mode in [Mode::Normal, Mode::Help] {
            let state = UiState {
                mode,
                ..state.clone()
            };
            terminal
                .draw(|f| {
                    crate::ui::render::render(
                        f,
                        &RenderCtx {
                            snapshot: &snapshot,
                            state: &state,
                            theme: &theme,
                        },
                    );
                })
                .unwrap();
            text.extend(
                terminal
                    .backend()
                    .buffer()
                    .content()
                    .iter()
                    .map(|c| c.symbol().to_owned()),
            );
        }
        assert!(text.contains(" x  quit"), "footer shows the new key");
        assert!(!text.contains(" q  quit"), "and not the old one");
        assert!(text.contains("h   this help"), "help lists the new key");
    }

    #[test]
    fn bad_overrides_name_the_action_key_and_fix() {
        let err = KeyMap::with_overrides([("quitt", "x")], "my.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("my.toml") && err.contains("quitt") && err.contains("expected one of"),
            "{err}"
        );
        let err = KeyMap::with_overrides([("quit", "ctrl-q")], "my.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("one character or a key name"), "{err}");
        let err = KeyMap::with_overrides([("quit", "s")], "my.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("already does sort"), "{err}");
        let map = KeyMap::with_overrides([("up", "pageup")], "my.toml").unwrap();
        assert_eq!(
            map.action_for(
                KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE),
                Mode::Normal
            ),
            Some(Command::Up)
        );
    }
}
