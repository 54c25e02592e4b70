//! The kill key in a real terminal (tmux) against a real sandbox: an ALTER waits behind an
//! application's open transaction; with the shipped defaults `K` only says how to turn kills on
//! and kills nothing, and with `[ddl] allow_kill = true` it asks, showing the node and the exact
//! `KILL`, kills the holder on `y`, the ALTER completes, and the audit log has the line.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::TestSandbox;
use rwtop::mysql::NodeConn;

#[path = "common/tmux.rs"]
mod tmux;

use tmux::Tmux;

const DEADLINE: Duration = Duration::from_secs(60);
const HOLDER: (&str, &str) = ("holder", "holder-test-only");
const APP: (&str, &str) = ("app", "app-test-only");
const ALTER: &str = "ALTER TABLE rwtop.t ADD COLUMN c INT";

/// Starts rwtop in the pane on `config`, its audit log under `state` (`XDG_STATE_HOME`).
fn run_rwtop(tmux: &Tmux, config: &Path, state: &Path) {
    let command = format!(
        "XDG_STATE_HOME={} {} --config {} ; echo EXIT=$?",
        state.display(),
        env!("CARGO_BIN_EXE_rwtop"),
        config.display()
    );
    tmux.send(&[&command, "Enter"]);
}

/// A session in an open transaction that read `rwtop.t`, and its connection id.
async fn hold(t: &TestSandbox) -> (NodeConn, u64) {
    let mut conn = t.connect_as("primary", HOLDER, DEADLINE).await;
    let rows = conn
        .query_rows("SELECT CONNECTION_ID() AS id")
        .await
        .unwrap();
    let id = rows[0].u64(&["id"]).unwrap();
    for sql in ["START TRANSACTION", "SELECT v FROM rwtop.t WHERE id = 1"] {
        conn.query_rows(sql).await.unwrap();
    }
    (conn, id)
}

/// Whether connection `id` is still on the primary.
fn alive(t: &TestSandbox, id: u64) -> bool {
    let rows = t.admin(
        "primary",
        &format!("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = {id}"),
    );
    rows[0].u64(&["n"]).unwrap() == 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_kill_key_is_off_by_default_and_kills_the_blocker_when_enabled() {
    let t = TestSandbox::start(1, false);
    t.admin(
        "primary",
        "CREATE TABLE rwtop.t (id INT PRIMARY KEY, v INT); INSERT INTO rwtop.t VALUES (1, 1); \
         CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-test-only'; \
         GRANT ALL ON rwtop.* TO 'app'@'127.0.0.1'; \
         CREATE USER 'holder'@'127.0.0.1' IDENTIFIED BY 'holder-test-only'; \
         GRANT SELECT ON rwtop.* TO 'holder'@'127.0.0.1'; \
         GRANT CONNECTION ADMIN ON *.* TO 'rwtop'@'127.0.0.1'",
    );
    let state = tempfile::tempdir().unwrap();
    let audit = state.path().join("rwtop/audit.log");
    let shipped = t.sandbox().dir().join("rwtop.toml");
    let (mut holder, id) = hold(&t).await;
    let mut app = t.connect_as("primary", APP, DEADLINE).await;
    let alter = tokio::spawn(async move {
        let result = app.query_rows(ALTER).await.map(|_| ());
        (app, result, Instant::now())
    });
    let blocked = format!("blocked by #{id} holder@127.0.0.1");

    // 1. The shipped config: K says how to turn kills on, and kills nothing.
    let tmux = Tmux::start(220, 40);
    run_rwtop(&tmux, &shipped, state.path());
    tmux.wait_for(&[blocked.as_str()]);
    tmux.send(&["K"]);
    tmux.wait_for(&["kill is off: set [ddl] allow_kill = true"]);
    assert!(!tmux.pane().contains("confirm"), "{}", tmux.pane());
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);
    assert!(alive(&t, id), "the holder was killed with kills off");
    assert!(
        !alter.is_finished(),
        "the ALTER ended with its blocker alive"
    );
    assert!(!audit.exists(), "an audit line with kills off");

    // 2. Enabled: K asks with the node and the exact statement; y kills the holder.
    let enabled = state.path().join("rwtop.toml");
    let text = std::fs::read_to_string(&shipped).unwrap();
    std::fs::write(&enabled, format!("{text}\n[ddl]\nallow_kill = true\n")).unwrap();
    // The sandbox's password file is named relative to the sandbox's folder.
    let text = std::fs::read_to_string(&enabled).unwrap();
    assert!(text.contains("password_file = \"/"), "{text}");
    tmux.send(&["clear", "Enter"]);
    run_rwtop(&tmux, &enabled, state.path());
    tmux.wait_for(&[blocked.as_str()]);
    tmux.send(&["K"]);
    let kill = format!("Run `KILL {id}` on primary (127.0.0.1:");
    let pane = tmux.wait_for(&[kill.as_str(), "any other key"]);
    assert!(
        pane.contains("it blocks: \"ALTER TABLE rwtop.t ADD COLUMN c INT\""),
        "{pane}"
    );
    eprintln!("{pane}");
    tmux.send(&["y"]);
    let y_at = Instant::now();
    let done = format!("KILL {id} on primary: its connection was killed");
    tmux.wait_for(&[done.as_str()]);
    let (app, result, ended) = tokio::time::timeout(DEADLINE, alter)
        .await
        .expect("the ALTER completes once its blocker is killed")
        .unwrap();
    result.unwrap_or_else(|e| panic!("{ALTER}: {e}"));
    eprintln!(
        "the ALTER completed {:?} after y was pressed",
        ended.saturating_duration_since(y_at)
    );
    assert!(!alive(&t, id), "connection {id} still there");
    assert!(
        holder.query_rows("SELECT 1").await.is_err(),
        "the holder's session survived"
    );
    app.close().await;
    tmux.wait_gone(&blocked);
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);

    let log =
        std::fs::read_to_string(&audit).unwrap_or_else(|e| panic!("{}: {e}", audit.display()));
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    let line = &lines[0];
    assert_eq!(line["action"], "kill", "{log}");
    assert_eq!(line["node"], "primary", "{log}");
    assert_eq!(line["statement"], format!("KILL {id}"), "{log}");
    assert_eq!(line["target"], format!("holder (connection {id})"), "{log}");
    assert_eq!(line["ok"], true, "{log}");
}
