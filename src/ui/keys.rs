//! Keys map to actions through one table; the footer's key bar and the `?` screen are built from
//! the same table, so they can never drift from what the keys do.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::state::{Mode, UiState};
use crate::store::Snapshot;
use crate::store::windows::Window;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    Sort,
    Window,
    ExpandGtid,
    ToggleTopology,
    ToggleDetail,
    ToggleAlerts,
    Probe,
    Drain,
    Help,
    Quit,
}

pub struct Binding {
    pub key: KeyCode,
    pub action: Action,
    /// Shown in the footer (empty: only on the help screen).
    pub short: &'static str,
    pub help: &'static str,
}

/// The one table. Order is the order of the footer and the help screen.
pub const BINDINGS: &[Binding] = &[
    Binding {
        key: KeyCode::Up,
        action: Action::Up,
        short: "",
        help: "select the previous replica",
    },
    Binding {
        key: KeyCode::Char('k'),
        action: Action::Up,
        short: "",
        help: "select the previous replica",
    },
    Binding {
        key: KeyCode::Down,
        action: Action::Down,
        short: "↑↓ select",
        help: "select the next replica",
    },
    Binding {
        key: KeyCode::Char('j'),
        action: Action::Down,
        short: "",
        help: "select the next replica",
    },
    Binding {
        key: KeyCode::Char('s'),
        action: Action::Sort,
        short: "s sort",
        help: "sort replicas: topology, worst lag, largest backlog",
    },
    Binding {
        key: KeyCode::Char('w'),
        action: Action::Window,
        short: "w window",
        help: "chart and percentile window: 1, 5, 15 minutes",
    },
    Binding {
        key: KeyCode::Char('g'),
        action: Action::ExpandGtid,
        short: "g gtid",
        help: "show GTID sets in full or abbreviated",
    },
    Binding {
        key: KeyCode::Char('t'),
        action: Action::ToggleTopology,
        short: "",
        help: "show or hide the topology tree",
    },
    Binding {
        key: KeyCode::Char('i'),
        action: Action::ToggleDetail,
        short: "",
        help: "show or hide the detail pane",
    },
    Binding {
        key: KeyCode::Char('a'),
        action: Action::ToggleAlerts,
        short: "",
        help: "show or hide the alerts pane",
    },
    Binding {
        key: KeyCode::Char('p'),
        action: Action::Probe,
        short: "p probe",
        help: "poll the selected replica now",
    },
    Binding {
        key: KeyCode::Char('d'),
        action: Action::Drain,
        short: "d drain",
        help: "drain or undrain the selected replica (coming)",
    },
    Binding {
        key: KeyCode::Char('?'),
        action: Action::Help,
        short: "? help",
        help: "this help; any key closes it",
    },
    Binding {
        key: KeyCode::Char('q'),
        action: Action::Quit,
        short: "q quit",
        help: "quit (Ctrl-C too)",
    },
];

/// What a key means in a mode. In help mode every key closes the help.
#[must_use]
pub fn action_for(key: KeyEvent, mode: Mode) -> Option<Action> {
    if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
        return Some(Action::Quit);
    }
    if mode == Mode::Help {
        return Some(Action::Help);
    }
    BINDINGS
        .iter()
        .find(|b| b.key == key.code)
        .map(|b| b.action)
}

/// What the loop must do after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Continue,
    Quit,
    /// Poll this node now.
    Probe(String),
}

/// Applies an action to the UI state.
pub fn apply(state: &mut UiState, action: Action, snapshot: &Snapshot) -> Outcome {
    let replicas = state.replicas(snapshot).len();
    state.status = None;
    match action {
        Action::Up => state.selected = state.selected.saturating_sub(1),
        Action::Down => state.selected = (state.selected + 1).min(replicas.saturating_sub(1)),
        Action::Sort => state.sort = state.sort.next(),
        Action::Window => {
            state.window = match state.window {
                Window::OneMinute => Window::FiveMinutes,
                Window::FiveMinutes => Window::FifteenMinutes,
                Window::FifteenMinutes => Window::OneMinute,
            };
        }
        Action::ExpandGtid => state.panes.expand_gtid = !state.panes.expand_gtid,
        Action::ToggleTopology => state.panes.topology = !state.panes.topology,
        Action::ToggleDetail => state.panes.detail = !state.panes.detail,
        Action::ToggleAlerts => state.panes.alerts = !state.panes.alerts,
        Action::Help => {
            state.mode = match state.mode {
                Mode::Normal => Mode::Help,
                Mode::Help => Mode::Normal,
            };
        }
        Action::Quit => return Outcome::Quit,
        Action::Probe => {
            if let Some(node) = state.selected_node(snapshot) {
                state.status = Some(format!("polling {} now", node.name));
                return Outcome::Probe(node.name.clone());
            }
        }
        Action::Drain => {
            state.status =
                Some("drain arrives with the actions issue: nothing was changed".to_owned());
        }
    }
    Outcome::Continue
}
