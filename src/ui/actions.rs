//! What each action does to the UI state, and what it asks of the engine. The loop in `app.rs`
//! carries out the requests and reports a refusal here, so every answer is worded in one place.

use super::keys::{Command, ReplayKey};
use super::state::{Cover, Mode, UiState};
use crate::drain::{Action as DrainAction, DrainRequest};
use crate::probe::ProbeRequest;
use crate::store::windows::Window;
use crate::store::{Role, Snapshot};

/// What the loop must do after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Continue,
    Quit,
    /// Poll this node now (the force-probe) and queue `read` on it.
    PollNow {
        node: String,
        read: ProbeRequest,
    },
    /// Queue a test read or a bake-off.
    Request(ProbeRequest),
    /// Send a confirmed drain or undrain.
    Drain(DrainRequest),
    /// Send a confirmed kill of a waiting DDL's blocker.
    Kill(crate::drain::KillRequest),
    /// Move the replay (pause, seek, speed).
    Replay(ReplayKey),
    /// Open or close a report window.
    Mark,
}

/// The answer to a live-only key in a replay.
pub const READ_ONLY: &str = "replay: read-only (test reads, polls and drains need live servers)";

/// The answer to `m` in a replay: a recording's windows are reported by the command.
pub const MARK_IN_REPLAY: &str =
    "replay: make this recording's DDL-window report with: rwtop report FILE [--from T --to T]";

/// Applies an action to the UI state; a replay refuses the live-only ones.
pub fn apply(state: &mut UiState, action: Command, snapshot: &Snapshot) -> Effect {
    if state.replay.is_some() && action == Command::Mark {
        state.status = Some(MARK_IN_REPLAY.to_owned());
        return Effect::Continue;
    }
    if state.replay.is_some() && action.is_live_only() {
        state.status = Some(READ_ONLY.to_owned());
        return Effect::Continue;
    }
    apply_to_view(state, action, snapshot)
}

/// The pane toggles. The test reads, the what-if and the lint cover the detail pane, one at a
/// time; `i` then brings the detail back.
fn toggle(panes: &mut super::state::Panes, action: Command) {
    let mut cover = |pane: Cover| {
        panes.cover = (panes.cover != Some(pane)).then_some(pane);
    };
    match action {
        Command::ToggleTestReads => cover(Cover::TestReads),
        Command::ToggleWhatif => cover(Cover::Whatif),
        Command::ToggleLint => cover(Cover::Lint),
        Command::ToggleExposure => cover(Cover::Exposure),
        Command::ExpandGtid => panes.expand_gtid = !panes.expand_gtid,
        Command::ExpandIncidents => panes.expand_incidents = !panes.expand_incidents,
        Command::ToggleTopology => panes.topology = !panes.topology,
        Command::ToggleDetail if panes.cover.is_some() => {
            panes.cover = None;
            panes.detail = true;
        }
        Command::ToggleDetail => panes.detail = !panes.detail,
        Command::ToggleAlerts => panes.alerts = !panes.alerts,
        _ => {}
    }
}

/// `?` opens the help screen at its top and closes it; the arrows move a list too long for the
/// terminal, and close it like any other key where it all fits.
fn help(state: &mut UiState, action: Command) {
    let close = match action {
        Command::HelpScroll(by) => !state.help.scroll(by),
        _ => state.mode != Mode::Normal,
    };
    state.mode = if close { Mode::Normal } else { Mode::Help };
    if state.mode == Mode::Help && action == Command::Help {
        state.help.first = 0;
    }
}

/// The chart's windows in turn: 1, 5, 15 minutes.
fn next_window(window: Window) -> Window {
    match window {
        Window::OneMinute => Window::FiveMinutes,
        Window::FiveMinutes => Window::FifteenMinutes,
        Window::FifteenMinutes => Window::OneMinute,
    }
}

fn apply_to_view(state: &mut UiState, action: Command, snapshot: &Snapshot) -> Effect {
    let rows = state.rows(snapshot).len();
    state.status = None;
    match action {
        Command::Up => state.selected = state.selected.saturating_sub(1),
        Command::Down => state.selected = (state.selected + 1).min(rows.saturating_sub(1)),
        Command::Sort => state.sort = state.sort.next(),
        Command::Window => state.window = next_window(state.window),
        Command::ExpandGtid
        | Command::ExpandIncidents
        | Command::ToggleTopology
        | Command::ToggleDetail
        | Command::ToggleAlerts
        | Command::ToggleTestReads
        | Command::ToggleWhatif
        | Command::ToggleLint
        | Command::ToggleExposure => toggle(&mut state.panes, action),
        Command::PrevStrategy | Command::NextStrategy => {
            state.probe.step(action == Command::NextStrategy);
            state.status = Some(format!(
                "test-read strategy {}{}",
                state.probe.current(),
                state
                    .keys
                    .key_for(Command::TestRead)
                    .map_or_else(String::new, |key| format!(": {key} runs one"))
            ));
        }
        Command::TestRead | Command::Bakeoff => {
            state.panes.cover = Some(Cover::TestReads);
            // A named channel's row is tested through that channel: `agg/p2`.
            let Some(target) = state.selected_row(snapshot).map(|r| r.label()) else {
                state.status = Some("no replica to test: none has been found yet".to_owned());
                return Effect::Continue;
            };
            let request = if action == Command::TestRead {
                ProbeRequest::One {
                    strategy: state.probe.current(),
                    target,
                }
            } else {
                ProbeRequest::Bakeoff(state.probe.bakeoff(&target))
            };
            state.status = Some(format!("queued {}", describe(&request)));
            return Effect::Request(request);
        }
        Command::Help | Command::HelpScroll(_) => help(state, action),
        Command::Quit => return Effect::Quit,
        Command::Probe => {
            // The node is polled as a whole; the read goes through the row's channel.
            if let Some(row) = state.selected_row(snapshot) {
                let (strategy, target) = (state.probe.current(), row.label());
                state.status = Some(format!(
                    "polling {} now and queued a {strategy} test read on {target}",
                    row.node.name
                ));
                return Effect::PollNow {
                    node: row.node.name.clone(),
                    read: ProbeRequest::One { strategy, target },
                };
            }
            state.status = Some("no replica to poll: none has been found yet".to_owned());
        }
        Command::Drain => ask_drain(state, snapshot),
        Command::Kill => super::kill::ask(state, snapshot),
        Command::Mark => return Effect::Mark,
        Command::ConfirmYes => {
            state.mode = Mode::Normal;
            if let Some(request) = super::kill::confirmed(state) {
                return Effect::Kill(request);
            }
            if let Some(request) = state.pending_drain.take() {
                state.status = Some(format!(
                    "sent: {} {} — the result shows beside it and in the audit log",
                    request.action.verb(),
                    request.replica
                ));
                return Effect::Drain(request);
            }
        }
        Command::ConfirmNo => {
            state.mode = Mode::Normal;
            super::kill::cancelled(state);
            if let Some(request) = state.pending_drain.take() {
                state.status = Some(format!(
                    "cancelled: {} {} was not sent",
                    request.action.verb(),
                    request.replica
                ));
            }
        }
        Command::Replay(key) => return Effect::Replay(key),
    }
    Effect::Continue
}

/// `d`: asks to drain the selected replica, or to undrain it when it is drained already.
fn ask_drain(state: &mut UiState, snapshot: &Snapshot) {
    if snapshot.drain.backend.is_none() {
        state.status = Some(
            "no drain backend: add a [drain] section to rwtop.toml (docs/rwtop.sample.toml)"
                .to_owned(),
        );
        return;
    }
    let Some(node) = state.selected_node(snapshot) else {
        state.status = Some("no replica to drain: none has been found yet".to_owned());
        return;
    };
    let action = if snapshot.drain.is_drained(&node.name) {
        DrainAction::Undrain
    } else {
        DrainAction::Drain
    };
    state.pending_drain = Some(DrainRequest {
        action,
        replica: node.name.clone(),
    });
    state.mode = Mode::Confirm;
}

/// The confirmation's question: replica, backend and where it is.
#[must_use]
pub fn confirm_question(request: &DrainRequest, snapshot: &Snapshot) -> String {
    let lb = snapshot
        .drain
        .states
        .get(&request.replica)
        .map_or_else(String::new, |s| format!(" (now {})", s.label()));
    let backend = snapshot
        .drain
        .detail
        .clone()
        .or_else(|| snapshot.drain.backend.clone())
        .unwrap_or_default();
    format!(
        "{} {}{lb} through {backend}?",
        match request.action {
            DrainAction::Drain => "Drain",
            DrainAction::Undrain => "Undrain",
        },
        request.replica
    )
}

/// `a gtid-wait(1s) test read on r1`, `a bake-off on r1: 11 strategies × 10, 100ms apart`.
#[must_use]
pub fn describe(request: &ProbeRequest) -> String {
    match request {
        ProbeRequest::One { strategy, target } => format!("a {strategy} test read on {target}"),
        ProbeRequest::Bakeoff(plan) => format!(
            "a bake-off on {}: {} strategies × {}, {} apart",
            plan.targets.join(", "),
            plan.strategies.len(),
            plan.count,
            crate::units::duration(plan.spacing)
        ),
    }
}

/// The footer's answer when the engine would not queue `request`.
#[must_use]
pub fn refused(request: &ProbeRequest, snapshot: &Snapshot) -> String {
    let why = if snapshot.nodes.iter().any(|n| n.role == Role::Primary) {
        "the queue is full: wait for the running test reads to finish"
    } else {
        "there is no primary to write the test marker to"
    };
    format!("not queued: {}: {why}", describe(request))
}

/// The footer's answer to the force-probe once the engine has had its say.
#[must_use]
pub fn poll_now_answer(
    node: &str,
    polled: bool,
    read: &ProbeRequest,
    queued: bool,
    snapshot: &Snapshot,
) -> Option<String> {
    match (polled, queued) {
        (true, true) => None,
        (true, false) => Some(format!("polling {node} now; {}", refused(read, snapshot))),
        (false, true) => Some(format!("{node} has no poller; queued {}", describe(read))),
        (false, false) => Some(format!("{node} has no poller; {}", refused(read, snapshot))),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::*;
    use crate::probe::{ProbeDefaults, ProbeSettings, Strategy};
    use crate::store::testkit::Topo;
    use crate::ui::state::ProbeChoice;

    fn press(state: &mut UiState, c: char, snapshot: &Snapshot) -> Effect {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        let action = state.keys.action_for(key, state.mode).expect("a bound key");
        apply(state, action, snapshot)
    }

    #[test]
    fn drain_asks_first_and_sends_only_on_y() {
        let mut snapshot = Topo::new().at(1);
        let mut state = UiState::default();
        // Without a backend, d says how to configure one and changes nothing.
        assert_eq!(press(&mut state, 'd', &snapshot), Effect::Continue);
        assert_eq!(state.mode, Mode::Normal);
        assert!(state.status.as_deref().unwrap().contains("[drain] section"));

        snapshot.drain.backend = Some("haproxy".into());
        snapshot.drain.detail = Some("haproxy backend replicas via /run/h.sock".into());
        snapshot
            .drain
            .states
            .insert("r1".into(), crate::drain::ServerState::Ready);
        assert_eq!(press(&mut state, 'd', &snapshot), Effect::Continue);
        assert_eq!(state.mode, Mode::Confirm);
        let pending = state.pending_drain.clone().unwrap();
        assert_eq!(
            confirm_question(&pending, &snapshot),
            "Drain r1 (now READY) through haproxy backend replicas via /run/h.sock?"
        );
        // Any key but y cancels, even one bound to an action.
        assert_eq!(press(&mut state, 'q', &snapshot), Effect::Continue);
        assert_eq!(
            (state.mode, state.pending_drain.is_none()),
            (Mode::Normal, true)
        );
        assert!(
            state
                .status
                .as_deref()
                .unwrap()
                .starts_with("cancelled: drain r1")
        );

        press(&mut state, 'd', &snapshot);
        let sent = press(&mut state, 'y', &snapshot);
        assert_eq!(
            sent,
            Effect::Drain(DrainRequest {
                action: DrainAction::Drain,
                replica: "r1".into()
            })
        );
        assert_eq!(state.mode, Mode::Normal);

        // A replica the balancer shows drained is offered an undrain.
        snapshot
            .drain
            .states
            .insert("r1".into(), crate::drain::ServerState::Drain);
        press(&mut state, 'd', &snapshot);
        assert_eq!(
            state.pending_drain.as_ref().map(|r| r.action),
            Some(DrainAction::Undrain)
        );
    }

    #[test]
    fn the_whatif_the_test_reads_and_the_lint_take_the_detail_panes_place_one_at_a_time() {
        let snapshot = Topo::new().at(1);
        let mut state = UiState::default();
        press(&mut state, 'r', &snapshot);
        assert_eq!(state.panes.cover, Some(Cover::TestReads));
        press(&mut state, 'f', &snapshot);
        assert_eq!(state.panes.cover, Some(Cover::Whatif));
        press(&mut state, 'l', &snapshot);
        assert_eq!(state.panes.cover, Some(Cover::Lint));
        press(&mut state, 'r', &snapshot);
        assert_eq!(state.panes.cover, Some(Cover::TestReads));
        press(&mut state, 'f', &snapshot);
        press(&mut state, 'i', &snapshot);
        assert!(state.panes.cover.is_none() && state.panes.detail);
        press(&mut state, 'l', &snapshot);
        press(&mut state, 'l', &snapshot);
        assert!(state.panes.cover.is_none());
    }

    #[test]
    fn test_read_keys_dispatch_to_their_actions() {
        let snapshot = Topo::new().at(1);
        let mut state = UiState::default();
        let gtid_wait = Strategy::GtidWait(Duration::from_secs(1));
        assert_eq!(state.probe.current(), gtid_wait, "the configured default");
        assert!(state.panes.cover.is_none());

        // t: one read with the current strategy on the selected replica, and the pane shows.
        let one = |strategy| {
            Effect::Request(ProbeRequest::One {
                strategy,
                target: "r1".into(),
            })
        };
        assert_eq!(press(&mut state, 't', &snapshot), one(gtid_wait));
        assert_eq!(state.panes.cover, Some(Cover::TestReads));
        // ] and [ step through the catalogue, wrapping; t follows.
        press(&mut state, ']', &snapshot);
        let sticky = Strategy::Sticky(Duration::from_secs(2));
        assert_eq!(state.probe.current(), sticky);
        assert_eq!(
            state.status.as_deref(),
            Some("test-read strategy sticky(2s): t runs one")
        );
        assert_eq!(press(&mut state, 't', &snapshot), one(sticky));
        press(&mut state, '[', &snapshot);
        press(&mut state, '[', &snapshot);
        assert_eq!(state.probe.current().name(), "pos-wait");
        // r hides and shows the pane; b shows it and bakes off every strategy on r1.
        press(&mut state, 'r', &snapshot);
        assert!(state.panes.cover.is_none());
        let Effect::Request(ProbeRequest::Bakeoff(plan)) = press(&mut state, 'b', &snapshot) else {
            panic!("b must queue a bake-off");
        };
        assert_eq!(state.panes.cover, Some(Cover::TestReads));
        assert_eq!(plan.strategies, Strategy::all(&ProbeDefaults::default()));
        assert_eq!((plan.targets, plan.count), (vec!["r1".to_owned()], 10));
        // i brings back the detail pane the test reads cover.
        press(&mut state, 'i', &snapshot);
        assert!(state.panes.cover.is_none() && state.panes.detail);
        // o toggles the topology tree, as t used to.
        assert!(state.panes.topology);
        press(&mut state, 'o', &snapshot);
        assert!(!state.panes.topology);
        // p polls and reads the selected replica.
        state.selected = 1;
        assert_eq!(
            press(&mut state, 'p', &snapshot),
            Effect::PollNow {
                node: "r2".into(),
                read: ProbeRequest::One {
                    strategy: Strategy::PosWait(Duration::from_secs(1)),
                    target: "r2".into()
                }
            }
        );
    }

    #[test]
    fn a_named_channels_row_is_read_through_its_channel_and_drained_as_its_node() {
        let mut topo = Topo::new();
        topo.add_primary("p2", 4);
        topo.add_replica("agg", "db1", 5);
        topo.add_channel("agg", "p2", "p2");
        topo.snapshot.drain.backend = Some("haproxy".into());
        let snapshot = topo.at(1);
        let mut state = UiState::default();
        // Rows: r1, r2, agg, agg/p2; j walks over them and stops on the last.
        for _ in 0..5 {
            press(&mut state, 'j', &snapshot);
        }
        assert_eq!(state.selected, 3);
        let strategy = state.probe.current();
        let read = |target: &str| ProbeRequest::One {
            strategy,
            target: target.into(),
        };
        let (on_p2, polled) = (read("agg/p2"), read("agg/p2"));
        assert_eq!(press(&mut state, 't', &snapshot), Effect::Request(on_p2));
        assert_eq!(
            press(&mut state, 'p', &snapshot),
            Effect::PollNow {
                node: "agg".into(),
                read: polled
            }
        );
        press(&mut state, 'd', &snapshot);
        assert_eq!(
            state.pending_drain.take().map(|r| r.replica),
            Some("agg".into())
        );
        // The default channel's row reads through the node.
        state.mode = Mode::Normal;
        press(&mut state, 'k', &snapshot);
        let default = read("agg");
        assert_eq!(press(&mut state, 't', &snapshot), Effect::Request(default));
    }

    #[test]
    fn the_old_action_name_follows_its_key() {
        let keys =
            crate::ui::keys::KeyMap::with_overrides([("toggle_topology", "y")], "x").unwrap();
        let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(
            keys.action_for(key('y'), Mode::Normal),
            Some(Command::ToggleTopology)
        );
        assert_eq!(keys.action_for(key('o'), Mode::Normal), None);
        assert_eq!(
            keys.action_for(key('t'), Mode::Normal),
            Some(Command::TestRead)
        );
    }

    #[test]
    fn a_configured_strategy_with_its_own_parameter_joins_the_cycle() {
        let settings = ProbeSettings {
            strategy: Strategy::GtidWait(Duration::from_millis(300)),
            ..ProbeSettings::default()
        };
        let mut choice = ProbeChoice::new(settings);
        assert_eq!(
            choice.current(),
            Strategy::GtidWait(Duration::from_millis(300))
        );
        choice.step(true);
        assert_eq!(choice.current(), Strategy::GtidWait(Duration::from_secs(1)));
        let catalogue = Strategy::all(&ProbeDefaults::default()).len();
        let mut seen = Vec::new();
        for _ in 0..=catalogue {
            seen.push(choice.current());
            choice.step(true);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), catalogue + 1, "every strategy once: {seen:?}");
        assert_eq!(choice.current(), Strategy::GtidWait(Duration::from_secs(1)));
        // The bake-off stays the catalogue's.
        assert_eq!(choice.bakeoff("r1").strategies.len(), catalogue);
    }

    #[test]
    fn refusals_say_why() {
        let mut topo = Topo::new();
        let read = ProbeRequest::One {
            strategy: Strategy::None,
            target: "r1".into(),
        };
        assert_eq!(
            refused(&read, &topo.at(1)),
            "not queued: a none test read on r1: the queue is full: wait for the running test \
             reads to finish"
        );
        topo.snapshot.nodes.retain(|n| n.role != Role::Primary);
        let answer = poll_now_answer("r1", true, &read, false, &topo.at(1)).unwrap();
        assert!(
            answer.starts_with("polling r1 now; not queued")
                && answer.ends_with("no primary to write the test marker to"),
            "{answer}"
        );
        assert_eq!(poll_now_answer("r1", true, &read, true, &topo.at(1)), None);
    }
}
