//! `rwtop grants` on a real MariaDB: the statements it prints, run on a fresh sandbox for a new
//! account with nothing else granted, let rwtop work with no missing-grant note in each mode;
//! one privilege taken away is named with what went off, in the JSON and the text snapshot;
//! and a grant given while rwtop runs is seen without restarting it.

mod common;

use std::time::Duration;

use common::pt_heartbeat::PtHeartbeat;
use common::{TestSandbox, engine_spec, rwtop, until};
use rwtop::engine::Engine;
use rwtop::mysql::{Endpoint, Secret};
use rwtop::store::Role;
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(30);
const PASSWORD: &str = "grants-test-only";

/// `rwtop grants` for MariaDB in `mode`, for `user`@127.0.0.1, with the password put in.
fn printed_grants(user: &str, mode: &str) -> String {
    let account = format!("'{user}'@'127.0.0.1'");
    let out = rwtop(
        &[
            "grants",
            "--flavor",
            "mariadb",
            "--mode",
            mode,
            "--account",
            &account,
        ],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        text.contains("'<password>'"),
        "a placeholder, never a password: {text}"
    );
    text.replace("<password>", PASSWORD)
}

/// A config naming the sandbox's primary and r1, logged into as `user`.
fn config(t: &TestSandbox, user: &str) -> std::path::PathBuf {
    let port = |n| t.sandbox().port(n).expect("port");
    let path = t.sandbox().dir().join(format!("{user}.toml"));
    let text = format!(
        "[primary]\nname = \"primary\"\ndsn = \"mysql://{user}@127.0.0.1:{}\"\n\n\
         [[replicas]]\nname = \"r1\"\ndsn = \"mysql://{user}@127.0.0.1:{}\"\n",
        port("primary"),
        port("r1")
    );
    std::fs::write(&path, text).expect("config");
    path
}

/// `rwtop snapshot` as `user` (JSON, or the text table), 3 s of polls.
fn snapshot(t: &TestSandbox, user: &str, read_only: bool, json: bool) -> String {
    let config = config(t, user);
    let mut args = vec!["--config", config.to_str().expect("path")];
    if read_only {
        args.push("--read-only");
    }
    args.extend(["snapshot", "--duration", "3s"]);
    if json {
        args.push("--json");
    }
    let out = rwtop(&args, &[("RWTOP_PASSWORD", Some(PASSWORD))]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn doc(t: &TestSandbox, user: &str, read_only: bool) -> Value {
    serde_json::from_str(&snapshot(t, user, read_only, true)).expect("JSON")
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    common::json_node(doc, name)
}

/// `(node, privilege, on)` of every missing grant.
fn missing(doc: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
    doc["missing_grants"]
        .as_array()
        .unwrap_or_else(|| panic!("no missing_grants in {doc:#}"))
        .iter()
        .map(|m| (text(m, "node"), text(m, "privilege"), text(m, "on")))
        .collect()
}

fn on_both(privilege: &str, on: &str) -> Vec<(String, String, String)> {
    ["primary", "r1"]
        .iter()
        .map(|n| ((*n).to_owned(), privilege.to_owned(), on.to_owned()))
        .collect()
}

fn admin_and_wait(t: &TestSandbox, sql: &str) {
    t.admin("primary", sql);
    t.sandbox()
        .wait_replicating(DEADLINE)
        .unwrap_or_else(|e| panic!("replicating {sql}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_printed_grants_are_enough_in_each_mode_and_one_taken_away_is_named() {
    let t = TestSandbox::start(1, false);
    // Read-only mode's lag comes from a real pt-heartbeat; its table must exist before a grant
    // on it can be given.
    let _pt = PtHeartbeat::start(&t);
    common::eventually("pt-heartbeat's table on r1", DEADLINE, async || {
        let rows = t.admin(
            "r1",
            "SELECT COUNT(*) AS n FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'percona' AND TABLE_NAME = 'heartbeat'",
        );
        (rows[0].optional_u64(&["n"]).ok().flatten() == Some(1)).then_some(())
    })
    .await;

    // Full mode: nothing missing, and what needs the grants works (the heartbeat is written,
    // r1's lag read from it, the processlist read).
    admin_and_wait(&t, &printed_grants("g_full", "full"));
    let full = doc(&t, "g_full", false);
    assert_eq!(missing(&full), [], "{:#}", full["missing_grants"]);
    for n in ["primary", "r1"] {
        assert_eq!(node(&full, n)["state"], "up", "{n}: {:#}", node(&full, n));
    }
    assert_eq!(
        full["heartbeat"]["writer"], "writing",
        "{:#}",
        full["heartbeat"]
    );
    assert_eq!(node(&full, "r1")["heartbeat_lag_seconds"]["kind"], "exact");

    // Read-only mode: nothing missing either, and lag from pt-heartbeat's table.
    admin_and_wait(&t, &printed_grants("g_ro", "read-only"));
    let ro = doc(&t, "g_ro", true);
    assert_eq!(missing(&ro), [], "{:#}", ro["missing_grants"]);
    assert_eq!(
        node(&ro, "r1")["heartbeat_lag_seconds"]["kind"],
        "exact",
        "{:#}",
        node(&ro, "r1")
    );

    // One grant taken away: the note names it, on every node (grants replicate), with what went
    // off and the fix, in the JSON and in the text.
    admin_and_wait(&t, "REVOKE PROCESS ON *.* FROM 'g_full'@'127.0.0.1'");
    let without = doc(&t, "g_full", false);
    assert_eq!(
        missing(&without),
        on_both("PROCESS", "*.*"),
        "{:#}",
        without["missing_grants"]
    );
    let first = &without["missing_grants"][0];
    assert!(
        first["off"].as_str().is_some_and(|o| o.contains("DDL")),
        "{first:#}"
    );
    assert_eq!(first["fix"], "GRANT PROCESS ON *.* TO `g_full`@`127.0.0.1`");
    let text = snapshot(&t, "g_full", false, false);
    assert!(
        text.contains("r1 missing grant PROCESS ON *.*: DDL and its blockers are not seen")
            && text.contains("fix: GRANT PROCESS ON *.* TO `g_full`@`127.0.0.1`"),
        "{text}"
    );

    admin_and_wait(
        &t,
        "REVOKE SELECT ON percona.heartbeat FROM 'g_ro'@'127.0.0.1'",
    );
    let ro = doc(&t, "g_ro", true);
    assert_eq!(
        missing(&ro),
        on_both("SELECT", "percona.heartbeat"),
        "{:#}",
        ro["missing_grants"]
    );
    assert_eq!(
        node(&ro, "r1")["heartbeat_lag_seconds"]["kind"],
        "unknown",
        "what went off"
    );

    // A grant every poll needs: the nodes are down, and the note says why.
    admin_and_wait(&t, "REVOKE SLAVE MONITOR ON *.* FROM 'g_ro'@'127.0.0.1'");
    let ro = doc(&t, "g_ro", true);
    let both =
        |p: &str, on: &str| ["primary", "r1"].map(|n| (n.to_owned(), p.to_owned(), on.to_owned()));
    let [p_sm, r_sm] = both("SLAVE MONITOR", "*.*");
    let [p_pt, r_pt] = both("SELECT", "percona.heartbeat");
    assert_eq!(
        missing(&ro),
        [p_sm, p_pt, r_sm, r_pt],
        "{:#}",
        ro["missing_grants"]
    );
    for n in ["primary", "r1"] {
        assert_eq!(node(&ro, n)["state"], "down", "{n}: {:#}", node(&ro, n));
    }

    a_grant_given_while_rwtop_runs_is_seen(&t).await;
}

/// A grant given while rwtop runs: seen at the next read of the grants (every 10 s), and the
/// connections opened again hold it, so the note goes.
async fn a_grant_given_while_rwtop_runs_is_seen(t: &TestSandbox) {
    let as_full = |n: &str| Endpoint {
        user: "g_full".to_owned(),
        password: Some(Secret::new(PASSWORD)),
        ..t.sandbox().endpoint(n).expect("endpoint")
    };
    let mut spec = engine_spec(t, &[("primary", Role::Primary), ("r1", Role::Replica)]);
    for (name, endpoint, _) in &mut spec.nodes {
        *endpoint = as_full(name);
    }
    let engine = Engine::start(&spec);
    until(&engine, "PROCESS missing on both", DEADLINE, |s| {
        let lacks = |n: &str| {
            s.node(n)
                .is_some_and(|v| v.missing_grants.iter().any(|m| m.privilege == "PROCESS"))
        };
        (lacks("primary") && lacks("r1")).then_some(())
    })
    .await;
    // r1's only session of this account is its poller's: a server gives an open connection no
    // global privilege granted since, so that connection must be opened again.
    let before = sessions(t, "r1");
    assert_eq!(before.len(), 1, "{before:?}");
    admin_and_wait(t, "GRANT PROCESS ON *.* TO 'g_full'@'127.0.0.1'");
    let ((), took) = until(&engine, "the note gone and both up", DEADLINE, |s| {
        let fine = |n: &str| {
            s.node(n).is_some_and(|v| {
                v.missing_grants.is_empty() && v.conn == rwtop::poll::ConnState::Up
            })
        };
        (fine("primary") && fine("r1")).then_some(())
    })
    .await;
    assert!(
        took < Duration::from_secs(20),
        "seen within the 10 s re-read: {took:?}"
    );
    let after = sessions(t, "r1");
    assert!(
        !after.is_empty() && after.iter().all(|id| !before.contains(id)),
        "r1's poller connected again: {before:?} then {after:?}"
    );
    engine.shutdown().await;
}

/// The ids of the test account's sessions on `node`.
fn sessions(t: &TestSandbox, node: &str) -> Vec<u64> {
    t.admin(
        node,
        "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'g_full' ORDER BY ID",
    )
    .iter()
    .filter_map(|r| r.optional_u64(&["ID"]).ok().flatten())
    .collect()
}
