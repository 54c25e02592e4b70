//! `rwtop snapshot` and `rwtop probe` through the real binary against a real sandbox: the
//! documented JSON, discovery of replicas (cascaded too), and clear exits for bad configuration.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{TestSandbox, rwtop};
use serde_json::Value;

/// Nothing from the caller's `RWTOP_PASSWORD`: each test says where the password comes from.
const NO_PASSWORD: &[(&str, Option<&str>)] = &[("RWTOP_PASSWORD", None)];

fn snapshot_json(config: &Path) -> (Value, String) {
    let config = config.to_str().unwrap();
    let out = rwtop(
        &["--config", config, "snapshot", "--json", "--duration", "3s"],
        NO_PASSWORD,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "snapshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_str(&stdout).expect("valid JSON"), stdout)
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    common::json_node(doc, name)
}

/// Every key the binary prints must be documented, so docs and output cannot drift apart.
fn keys(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.insert(k.clone());
                // Evidence names are each rule's own and causes are free text; the kinds are
                // documented instead.
                if k != "evidence" && k != "causes" {
                    keys(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn live_snapshot_json_is_the_documented_schema_and_follows_the_tree() {
    let t = TestSandbox::start_with(2, false, true);
    let dir = t.sandbox().dir().to_owned();
    // The sandbox's config names the primary and r1, r2; c1 hangs off r1 and is only discovered.
    let (doc, stdout) = snapshot_json(&dir.join("rwtop.toml"));
    assert_eq!(doc["schema_version"], rwtop::export::json::SCHEMA_VERSION);
    assert_eq!(doc["alerts"], Value::Array(Vec::new()));
    // The sandbox grants its monitor user what `rwtop grants` prints: nothing is missing.
    assert_eq!(doc["missing_grants"], Value::Array(Vec::new()));
    let no_probes = serde_json::json!({ "running": null, "recent": [], "tallies": [] });
    assert_eq!(doc["probes"], no_probes, "no test read runs in a snapshot");
    assert_eq!(doc["heartbeat"]["writer"], "writing");
    assert_eq!(doc["heartbeat"]["writer_node"], "primary");
    assert_eq!(doc["heartbeat"]["read_every_seconds"], 0.25);
    assert_eq!(doc["heartbeat"]["stale"], false);

    let primary = node(&doc, "primary");
    assert_eq!(primary["role"], "primary");
    assert_eq!(primary["source"], Value::Null);
    assert_eq!(primary["heartbeat_lag_seconds"], Value::Null);
    for name in ["r1", "r2"] {
        let r = node(&doc, name);
        assert_eq!(r["role"], "replica", "{name}");
        assert_eq!(r["source"], "primary", "{name}");
        assert_eq!(r["state"], "up", "{name}");
        assert_eq!(r["io_running"], "yes", "{name}");
        // The server's own whole-second figure: a second or two while it applies the setup's
        // last events on a busy machine (seen once in three full runs), never null here.
        let sbm = &r["seconds_behind_source"];
        assert!(sbm.as_u64().is_some_and(|s| s <= 5), "{name}: {sbm}");
        assert_eq!(r["heartbeat_lag_seconds"]["kind"], "exact", "{name}");
        assert_eq!(r["gtid_backlog"]["total"], 0, "{name}");
        assert_eq!(r["bytes_behind"]["io"], 0, "{name}");
        assert_eq!(r["read_only"], true, "{name}");
    }
    assert_eq!(
        node(&doc, "c1")["source"],
        "r1",
        "a cascaded replica hangs off its own source"
    );
    let documented =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.md"))
            .unwrap();
    let mut all = BTreeSet::new();
    keys(&doc, &mut all);
    let undocumented: Vec<&String> = all
        .iter()
        .filter(|k| !documented.contains(&format!("\"{k}\"")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "keys missing from docs/json-schema.md: {undocumented:?}"
    );
    probe_json_is_documented(&dir.join("rwtop.toml"), &documented);

    let password = std::fs::read_to_string(dir.join("monitor.password")).unwrap();
    assert!(
        !stdout.contains(password.trim()),
        "the password never appears in the output"
    );

    // Only the primary named: discovery finds the replicas, and the cascaded one under r1, each
    // named by the host it reports (the sandbox's `report_host`), reached at the primary's host.
    let addr = |n: &str| format!("127.0.0.1:{}", t.sandbox().port(n).unwrap());
    let primary_dsn = format!("mysql://rwtop@{}", addr("primary"));
    let password_file = dir.join("monitor.password");
    let flags = [
        "--primary",
        &primary_dsn,
        "--password-file",
        password_file.to_str().unwrap(),
    ];
    let out = rwtop(
        &[&flags[..], &["snapshot", "--json", "--duration", "4s"]].concat(),
        NO_PASSWORD,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let primary = addr("primary");
    for (replica, source) in [("r1", &*primary), ("r2", &primary), ("c1", "r1")] {
        let found = node(&doc, replica);
        assert_eq!(found["address"], addr(replica), "{replica}");
        assert_eq!(found["source"], source, "{replica}");
        assert_eq!(found["heartbeat_lag_seconds"]["kind"], "exact", "{replica}");
    }

    // Discovery off: only what was named.
    let out = rwtop(
        &[
            &flags[..],
            &["--no-discovery", "snapshot", "--json", "--duration", "2s"],
        ]
        .concat(),
        NO_PASSWORD,
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 1);
}

/// `rwtop probe --json`: a row per replica and strategy, every key documented; `--read-only`
/// refuses every probe and exits 1.
fn probe_json_is_documented(config: &Path, documented: &str) {
    let config = config.to_str().unwrap();
    let probe = [
        "--config",
        config,
        "probe",
        "--strategy",
        "primary,gtid-wait",
    ];
    let out = rwtop(
        &[&probe[..], &["--count", "2", "--spacing", "10ms", "--json"]].concat(),
        NO_PASSWORD,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("[1/4] primary on r1: fresh"), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(doc["schema_version"], rwtop::export::json::SCHEMA_VERSION);
    let rows = doc["probes"].as_array().unwrap();
    // Two rounds: the configured replicas take turns, r1 then r2.
    let described: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {} {}", r["strategy"], r["replica"], r["probes"]))
        .collect();
    let expected = [
        "\"primary\" \"r1\" 1",
        "\"gtid-wait(1s)\" \"r1\" 1",
        "\"primary\" \"r2\" 1",
        "\"gtid-wait(1s)\" \"r2\" 1",
    ];
    assert_eq!(described, expected);
    for row in rows {
        // Neither strategy can read stale (gtid-wait falls back instead), and nothing failed.
        assert_eq!(
            (&row["stale"], &row["errors"]),
            (&Value::from(0), &Value::from(0))
        );
        if row["strategy"] == "primary" {
            assert_eq!(
                (&row["fresh"], &row["primary_reads"]),
                (&Value::from(1), &Value::from(1))
            );
        }
    }
    let mut all = BTreeSet::new();
    keys(&doc, &mut all);
    let undocumented: Vec<&String> = all
        .iter()
        .filter(|k| !documented.contains(&format!("\"{k}\"")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "probe keys undocumented: {undocumented:?}"
    );

    let out = rwtop(
        &["--config", config, "--read-only", "probe", "--count", "1"],
        NO_PASSWORD,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("every probe ended in error: refused: read-only"),
        "{err}"
    );
}

/// With a wrong password every node is down, and the text output says why (the same
/// detail as the JSON's `state_detail`); a snapshot in which every node refused rwtop's login
/// observed nothing, so it exits 1, while the same snapshot with the right password exits 0.
#[test]
fn live_snapshot_text_says_why_each_node_is_down_and_a_refused_login_exits_1() {
    let t = TestSandbox::start(1, false);
    let config = t.sandbox().dir().join("rwtop.toml");
    let snapshot = |password: Option<&str>| {
        let out = rwtop(
            &[
                "--config",
                config.to_str().unwrap(),
                "snapshot",
                "--duration",
                "2s",
            ],
            &[("RWTOP_PASSWORD", password)],
        );
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };

    let (code, stdout, stderr) = snapshot(Some("not-the-password"));
    for node in ["primary", "r1"] {
        let why = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{node} is ")))
            .unwrap_or_else(|| panic!("no line says why {node} is down:\n{stdout}"));
        assert!(
            why.contains("Access denied") && why.contains("check the DSN user and RWTOP_PASSWORD"),
            "{why}"
        );
    }
    assert!(!stdout.contains("not-the-password"), "{stdout}");
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stderr.contains("every node refused rwtop's login"),
        "{stderr}"
    );

    // The right password (the sandbox's password file): every node up, nothing to explain.
    let (code, stdout, stderr) = snapshot(None);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !stdout.contains(" is down") && !stdout.contains(" is retrying"),
        "{stdout}"
    );
}

#[test]
fn bad_config_exits_2_naming_the_file_and_key() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/bad_configs/unknown_top_level_key.toml"
    );
    let out = rwtop(&["--config", file, "snapshot"], NO_PASSWORD);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown_top_level_key.toml") && err.contains("intervall"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn no_nodes_exits_2_saying_how_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("rwtop.toml");
    std::fs::write(&empty, "interval = \"1s\"\n").unwrap();
    let out = rwtop(
        &["--config", empty.to_str().unwrap(), "snapshot"],
        NO_PASSWORD,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--primary") && err.contains("rwtop demo"),
        "{err}"
    );
}

#[test]
fn a_dsn_with_a_password_warns_and_never_echoes_it() {
    let out = rwtop(
        &[
            "--primary",
            "mysql://rwtop:hunter2@127.0.0.1:1",
            "snapshot",
            "--duration",
            "1s",
        ],
        NO_PASSWORD,
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("hunter2"), "{all}");
    assert!(all.contains("warning"), "{all}");
    // Nothing listens on port 1: the node is shown as failing, the command still completes.
    assert!(out.status.success(), "{all}");
    assert!(all.contains("retrying") || all.contains("down"), "{all}");
}
