//! `K`: the offer to kill the session blocking a waiting DDL. Off unless the config enables it
//! (then the key says how); otherwise it picks the first holder of the selected node's waiting
//! DDL (else of the first node's, the primary first) and asks, showing the node and the exact
//! statement, before anything is sent.

use super::state::{Mode, UiState};
use crate::drain::KillRequest;
use crate::mysql::{DdlStatement, LockHolder};
use crate::store::{NodeView, Role, Snapshot};

/// The answer while kills are off.
pub const OFF: &str = "kill is off: set [ddl] allow_kill = true in rwtop.toml to let this key \
                       kill the session blocking a waiting DDL (docs/rwtop.sample.toml)";

/// A holder that can be killed, the DDL it blocks and the node both are on.
struct Target<'a> {
    node: &'a NodeView,
    ddl: &'a DdlStatement,
    holder: &'a LockHolder,
}

fn first_killable(node: &NodeView) -> Option<Target<'_>> {
    node.ddl().iter().find_map(|ddl| {
        ddl.waiting_for.as_ref()?;
        let holder = ddl
            .blockers
            .as_ref()?
            .holders
            .iter()
            .find(|h| h.kill_statement().is_some())?;
        Some(Target { node, ddl, holder })
    })
}

fn target<'a>(state: &UiState, snapshot: &'a Snapshot) -> Option<Target<'a>> {
    if let Some(found) = state.selected_node(snapshot).and_then(first_killable) {
        return Some(found);
    }
    let mut nodes: Vec<&NodeView> = snapshot.nodes.iter().collect();
    nodes.sort_by_key(|n| n.role != Role::Primary);
    nodes.into_iter().find_map(first_killable)
}

/// `K`: asks to kill the blocker, or says why it cannot.
pub fn ask(state: &mut UiState, snapshot: &Snapshot) {
    if !state.kill_enabled {
        state.status = Some(OFF.to_owned());
        return;
    }
    let Some(found) = target(state, snapshot) else {
        state.status =
            Some("nothing to kill: no DDL waits for a lock whose holder is named".to_owned());
        return;
    };
    let request = KillRequest {
        node: found.node.name.clone(),
        id: found.holder.id,
        user: found.holder.user.clone(),
        kill: found.holder.kill,
    };
    state.pending_kill = Some(Pending {
        lines: question(&request, &found),
        request,
    });
    state.mode = Mode::Confirm;
}

/// `y`: the kill to send, if one was asked.
pub fn confirmed(state: &mut UiState) -> Option<KillRequest> {
    let pending = state.pending_kill.take()?;
    state.status = Some(format!(
        "sent: {} on {} — its outcome shows here and in the audit log",
        pending.request.statement().unwrap_or_default(),
        pending.request.node
    ));
    Some(pending.request)
}

/// Any other key: the kill asked about is not sent.
pub fn cancelled(state: &mut UiState) {
    if let Some(pending) = state.pending_kill.take() {
        state.status = Some(format!(
            "cancelled: {} on {} was not sent",
            pending.request.statement().unwrap_or_default(),
            pending.request.node
        ));
    }
}

/// Hands a confirmed kill to the engine, or says why it could not.
pub fn send(feed: &super::feed::Feed<'_>, request: KillRequest, state: &mut UiState) {
    let what = request.statement().unwrap_or_default();
    let node = request.node.clone();
    if !feed.kill(request) {
        state.status = Some(format!(
            "not sent: {what} on {node}: kills are off, or one is still running"
        ));
    }
}

/// A kill's outcome reaches the footer once, when its record arrives in a snapshot.
pub fn show_outcome(state: &mut UiState, snapshot: &Snapshot) {
    if let Some(kill) = snapshot.drain.kills.first()
        && state.kill_shown != Some(kill.at)
    {
        state.kill_shown = Some(kill.at);
        state.status = Some(kill.summary());
    }
}

/// A kill waiting for `y`, with the confirmation's text as it was when asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub request: KillRequest,
    pub lines: Vec<String>,
}

fn question(request: &KillRequest, found: &Target<'_>) -> Vec<String> {
    let statement = request.statement().unwrap_or_default();
    vec![
        format!(
            "Run `{statement}` on {} ({})?",
            found.node.name, found.node.address
        ),
        found.holder.summary(),
        found.holder.evidence(),
        format!("it blocks: {}", crate::units::quoted(&found.ddl.statement)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testkit::scan;
    use crate::store::testkit::{Topo, blocked_ddl};
    use crate::ui::actions::{Effect, apply};
    use crate::ui::keys::Command;

    #[test]
    fn off_by_default_says_how_to_enable_and_sends_nothing() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            *scan(n) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, false)];
        });
        let mut state = UiState::default();
        assert_eq!(
            apply(&mut state, Command::Kill, &topo.snapshot),
            Effect::Continue
        );
        assert_eq!(state.status.as_deref(), Some(OFF));
        assert_eq!((state.mode, &state.pending_kill), (Mode::Normal, &None));
    }

    #[test]
    fn enabled_it_asks_with_the_node_and_statement_and_sends_only_on_y() {
        let mut topo = Topo::new();
        let mut state = UiState {
            kill_enabled: true,
            ..UiState::default()
        };
        apply(&mut state, Command::Kill, &topo.snapshot);
        assert!(
            state
                .status
                .as_deref()
                .unwrap()
                .starts_with("nothing to kill")
        );
        topo.node_mut("db1", |n| {
            *scan(n) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, false)];
        });
        apply(&mut state, Command::Kill, &topo.snapshot);
        assert_eq!(state.mode, Mode::Confirm);
        let pending = state.pending_kill.clone().unwrap();
        assert!(
            pending.lines[0].starts_with("Run `KILL 1234` on db1 ("),
            "{:?}",
            pending.lines
        );
        assert_eq!(
            pending.lines[1],
            "#1234 app@10.0.0.5, idle 1m35s in a transaction open 1m37s: KILL 1234"
        );
        // Any other key cancels.
        apply(&mut state, Command::ConfirmNo, &topo.snapshot);
        assert!(state.pending_kill.is_none());
        assert!(
            state
                .status
                .as_deref()
                .unwrap()
                .starts_with("cancelled: KILL 1234")
        );
        apply(&mut state, Command::Kill, &topo.snapshot);
        assert_eq!(
            apply(&mut state, Command::ConfirmYes, &topo.snapshot),
            Effect::Kill(pending.request)
        );
        assert_eq!(state.mode, Mode::Normal);
    }
}
