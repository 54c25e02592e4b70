//! The footer's note on missing grants: once, when the snapshot first shows privileges rwtop's
//! account lacks (and again only when that list changes), which privilege, on which nodes, and
//! what is off for want of it. `rwtop snapshot` and the JSON list every one with its fix.

use std::fmt::Write as _;

use super::state::UiState;
use crate::store::Snapshot;

/// Says the snapshot's missing grants in the footer when they differ from those last told.
pub fn show(state: &mut UiState, snapshot: &Snapshot) {
    let missing: Vec<(&str, &crate::mysql::grants::MissingGrant)> = snapshot
        .nodes
        .iter()
        .flat_map(|n| n.missing_grants.iter().map(|m| (n.name.as_str(), m)))
        .collect();
    let told = missing.iter().fold(String::new(), |mut told, (node, m)| {
        let _ = write!(told, "{node}:{}:{};", m.privilege, m.on);
        told
    });
    if told == state.grants_told {
        return;
    }
    state.grants_told = told;
    if let Some(note) = note(&missing) {
        state.status = Some(note);
    }
}

/// `missing grant PROCESS ON *.* on primary, r1: DDL and its blockers are not seen (+1 more:
/// rwtop snapshot)`: the first privilege missing, on every node that lacks it (grants replicate,
/// so it is usually all of them), what is off (its first clause: the footer is one line), and
/// how many other privileges are missing.
fn note(missing: &[(&str, &crate::mysql::grants::MissingGrant)]) -> Option<String> {
    let (_, first) = missing.first()?;
    let same =
        |m: &crate::mysql::grants::MissingGrant| m.privilege == first.privilege && m.on == first.on;
    let nodes: Vec<&str> = missing
        .iter()
        .filter(|(_, m)| same(m))
        .map(|(node, _)| *node)
        .collect();
    let nodes = if nodes.len() > 3 {
        format!("{} nodes", nodes.len())
    } else {
        nodes.join(", ")
    };
    let mut others: Vec<(&str, &str)> = missing
        .iter()
        .filter(|(_, m)| !same(m))
        .map(|(_, m)| (m.privilege.as_str(), m.on.as_str()))
        .collect();
    others.sort_unstable();
    others.dedup();
    let more = match others.len() {
        0 => String::new(),
        n => format!(" (+{n} more: rwtop snapshot)"),
    };
    let off = first.off.split(" (").next().unwrap_or_default();
    Some(format!(
        "missing grant {} ON {} on {nodes}: {off}{more}",
        first.privilege, first.on
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::grants::MissingGrant;
    use crate::store::testkit::Topo;

    fn file() -> MissingGrant {
        MissingGrant {
            privilege: "FILE".to_owned(),
            on: "*.*".to_owned(),
            off: "free disk space is not read".to_owned(),
            fix: "GRANT FILE ON *.* TO u".to_owned(),
        }
    }

    #[test]
    fn a_missing_grant_is_told_once_and_again_only_when_the_list_changes() {
        let mut topo = Topo::new();
        let mut state = UiState::default();
        show(&mut state, &topo.snapshot);
        assert_eq!(state.status, None, "nothing missing, nothing said");
        topo.node_mut("r1", |n| n.missing_grants = vec![file()]);
        show(&mut state, &topo.snapshot);
        assert_eq!(
            state.status.as_deref(),
            Some("missing grant FILE ON *.* on r1: free disk space is not read")
        );
        state.status = None;
        show(&mut state, &topo.snapshot);
        assert_eq!(state.status, None, "told once");
        topo.node_mut("r2", |n| n.missing_grants = vec![file()]);
        show(&mut state, &topo.snapshot);
        assert_eq!(
            state.status.as_deref(),
            Some("missing grant FILE ON *.* on r1, r2: free disk space is not read"),
            "one privilege, every node that lacks it"
        );
        let process = MissingGrant {
            privilege: "PROCESS".to_owned(),
            off: "DDL is not seen (the processlist)".to_owned(),
            ..file()
        };
        topo.node_mut("r2", |n| n.missing_grants.push(process));
        show(&mut state, &topo.snapshot);
        let said = state.status.clone().unwrap_or_default();
        assert!(
            said.ends_with("not read (+1 more: rwtop snapshot)"),
            "{said}"
        );
    }
}
