//! The health lint pane over a recorded healthy topology whose settings are those of a plain
//! `MariaDB` 10.11 install (`docs/server-facts.md`, "Defaults the lint meets":
//! `relay_log_recovery=0`, `sync_binlog=0`, binlogs kept forever): the pane lists what
//! `alerts::lint` finds, errors first, each with its fix.

use insta::assert_snapshot;
use rwtop::alerts::lint::lint;
use rwtop::mysql::Family;
use rwtop::mysql::settings::{SafetySettings, SettingNames};
use rwtop::store::testkit::live;
use rwtop::ui::panels;

use super::{Cover, UiState, assert_has, draw, recorded, screen_text, selecting};

fn plain_install(server_id: u32) -> SafetySettings {
    SafetySettings {
        relay_log_recovery: Some(false),
        sync_binlog: Some(0),
        innodb_flush_log_at_trx_commit: Some(1),
        log_replica_updates: Some(true),
        binlog_format: Some("MIXED".to_owned()),
        read_only: Some(false),
        super_read_only: None,
        server_id: Some(server_id),
        gtid_strict: Some(false),
        binlog_expire: None,
        position_table_engine: Some("InnoDB".to_owned()),
        parallel_workers: Some(0),
        parallel_mode: Some("optimistic".to_owned()),
        preserve_commit_order: None,
        lock_table: Some(false),
        net_timeout: Some(60),
        exec_mode: Some("STRICT".to_owned()),
        skip_errors: Some("OFF".to_owned()),
        relay_log_space_limit: Some(0),
        names: SettingNames::of(Family::Mariadb),
        own_tables: Vec::new(),
        keyless_tables: None,
    }
}

#[test]
fn lint_pane_lists_the_findings_with_their_fixes() {
    let mut snapshot = recorded("healthy");
    for (i, node) in snapshot.nodes.iter_mut().enumerate() {
        live(node).settings = Some(plain_install(u32::try_from(i).unwrap() + 1));
    }
    let findings = lint(&snapshot);
    assert!(!findings.is_empty(), "a plain install has findings");
    let mut state: UiState = selecting(&snapshot, "r1");
    state.panes.cover = Some(Cover::Lint);
    let backend = draw(&snapshot, &state, panels::lint::render, 100, 24);
    assert_snapshot!("panel_lint_plain_install_100x24", &backend);
    let text = screen_text(&backend);
    assert_has(
        &text,
        &[
            "health lint",
            "settings of 4 nodes",
            "relay_log_recovery is OFF",
            "fix: SET GLOBAL relay_log_recovery = ON",
        ],
    );
    // Every kind of finding is on screen or counted.
    let mut kinds: Vec<&str> = findings.iter().map(|f| f.summary.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown = kinds
        .iter()
        .filter(|k| words.contains(&k.split_whitespace().collect::<Vec<_>>().join(" ")))
        .count();
    let counted = words
        .split_once('+')
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    assert_eq!(shown + counted, kinds.len(), "{text}");
}

#[test]
fn lint_pane_before_any_settings_says_when_they_are_read() {
    // The recording was taken after the settings' first read: as a snapshot before it.
    let mut snapshot = recorded("healthy");
    for node in &mut snapshot.nodes {
        live(node).settings = None;
    }
    let state = selecting(&snapshot, "r1");
    let text = screen_text(&draw(&snapshot, &state, panels::lint::render, 80, 6));
    assert_has(&text, &["no settings read yet", "every few minutes"]);
}
