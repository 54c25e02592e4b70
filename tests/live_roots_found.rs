//! Every root found (`docs/own-tables.md`, "Every root found"), through the real binary on a
//! real multi-source sandbox: a second primary that feeds the aggregator is found through the
//! aggregator's channel when only the first primary and the aggregator are named, is polled and
//! written to as a root (or only read, when the config says so), and the aggregator's channel
//! from it reads an exact lag; two `--primary` flags describe the same topology as a config file
//! with two `[[primary]]`.

mod common;

use std::path::{Path, PathBuf};

use common::{TestSandbox, rwtop};
use rwtop::sandbox::{AGGREGATOR, SECOND_CHANNEL, SECOND_PRIMARY};
use serde_json::Value;

const NO_PASSWORD: &[(&str, Option<&str>)] = &[("RWTOP_PASSWORD", None)];

/// The sandbox's monitor password file, as its `rwtop.toml` names it.
fn password_file(t: &TestSandbox) -> PathBuf {
    let config = std::fs::read_to_string(t.sandbox().dir().join("rwtop.toml")).unwrap();
    let line = config
        .lines()
        .find_map(|l| l.strip_prefix("password_file = "))
        .expect("password_file in the sandbox's rwtop.toml");
    PathBuf::from(line.trim_matches('"'))
}

fn dsn(t: &TestSandbox, node: &str) -> String {
    let port = t.sandbox().port(node).expect("a port");
    format!("{node}=mysql://rwtop@127.0.0.1:{port}")
}

/// `rwtop snapshot --json` with `args` before it; the document and standard error.
fn snapshot(args: &[&str]) -> (Value, String) {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["snapshot", "--json", "--duration", "5s"]);
    let out = rwtop(&all, NO_PASSWORD);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "snapshot failed: {stderr}");
    let doc = serde_json::from_slice(&out.stdout).expect("valid JSON");
    (doc, stderr)
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    common::json_node(doc, name)
}

fn channel<'a>(doc: &'a Value, name: &str, channel: &str) -> &'a Value {
    node(doc, name)["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["channel"] == channel)
        .unwrap_or_else(|| panic!("no channel {channel:?} on {name}: {doc:#}"))
}

fn root<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["heartbeat"]["roots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["node"] == name)
        .unwrap_or_else(|| panic!("no root {name}: {:#}", doc["heartbeat"]))
}

/// Both roots written, the aggregator's two channels exact, each from its own root.
fn assert_both_roots_exact(doc: &Value, what: &str) {
    for name in ["primary", SECOND_PRIMARY] {
        assert_eq!(node(doc, name)["role"], "primary", "{what}: {name}");
        assert_eq!(root(doc, name)["writer"], "writing", "{what}: {name}");
    }
    for ch in ["", SECOND_CHANNEL] {
        let lag = &channel(doc, AGGREGATOR, ch)["heartbeat_lag_seconds"];
        assert_eq!(lag["kind"], "exact", "{what}: agg '{ch}': {lag}");
    }
    assert_eq!(
        channel(doc, AGGREGATOR, SECOND_CHANNEL)["source"],
        SECOND_PRIMARY,
        "{what}"
    );
}

fn write_config(path: &Path, password: &Path, body: &str) {
    std::fs::write(
        path,
        format!("password_file = \"{}\"\n{body}", password.display()),
    )
    .unwrap();
}

/// What every step needs: the sandbox, its password file and each node's DSN.
struct Rig {
    t: TestSandbox,
    password: PathBuf,
    primary: String,
    agg: String,
    p2: String,
}

impl Rig {
    fn pw(&self) -> &str {
        self.password.to_str().unwrap()
    }

    fn port(&self, node: &str) -> u16 {
        self.t.sandbox().port(node).unwrap()
    }
}

#[test]
fn live_a_root_named_nowhere_is_found_through_a_channel_polled_and_written() {
    let t = TestSandbox::start_multi_source(1);
    let rig = Rig {
        password: password_file(&t),
        primary: dsn(&t, "primary"),
        agg: dsn(&t, AGGREGATOR),
        p2: dsn(&t, SECOND_PRIMARY),
        t,
    };
    found_through_the_channel(&rig);
    let dir = tempfile::tempdir().unwrap();
    twice_is_the_config_file(&rig, dir.path());
    found_and_only_read(&rig, dir.path());
    not_watched_says_what_to_add(&rig);
}

/// The way in of docs/guide/watching.md, "Nodes, discovery and `snapshot`": one primary and the aggregator. p2 is found through agg's channel.
fn found_through_the_channel(rig: &Rig) {
    let (found, stderr) = snapshot(&[
        "--password-file",
        rig.pw(),
        "--primary",
        &rig.primary,
        "--replica",
        &rig.agg,
    ]);
    assert!(
        stderr.contains("found root p2") && stderr.contains("agg's channel 'p2'"),
        "{stderr}"
    );
    assert!(stderr.contains("writing its heartbeat there"), "{stderr}");
    assert_both_roots_exact(&found, "found");
    assert_eq!(root(&found, SECOND_PRIMARY)["configured"], false);
    assert_eq!(root(&found, "primary")["configured"], true);
}

/// --primary twice: the same topology as a config file with two [[primary]], nothing found,
/// the same roots, rows and lags.
fn twice_is_the_config_file(rig: &Rig, dir: &Path) {
    let (twice, stderr) = snapshot(&[
        "--password-file",
        rig.pw(),
        "--primary",
        &rig.primary,
        "--primary",
        &rig.p2,
        "--replica",
        &rig.agg,
    ]);
    assert!(!stderr.contains("found root"), "{stderr}");
    assert_both_roots_exact(&twice, "--primary twice");
    assert_eq!(root(&twice, SECOND_PRIMARY)["configured"], true);

    let config = dir.join("rwtop.toml");
    let body = format!(
        "[[primary]]\nname = \"primary\"\ndsn = \"mysql://rwtop@127.0.0.1:{}\"\n\
         [[primary]]\nname = \"p2\"\ndsn = \"mysql://rwtop@127.0.0.1:{}\"\n\
         [[replicas]]\nname = \"agg\"\ndsn = \"mysql://rwtop@127.0.0.1:{}\"\n",
        rig.port("primary"),
        rig.port(SECOND_PRIMARY),
        rig.port(AGGREGATOR)
    );
    write_config(&config, &rig.password, &body);
    let (file, _) = snapshot(&["--config", config.to_str().unwrap()]);
    assert_both_roots_exact(&file, "config file");
    let ids = |doc: &Value| -> Vec<(String, String)> {
        doc["heartbeat"]["roots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["node"].to_string(), r["writer_id"].to_string()))
            .collect()
    };
    assert_eq!(ids(&twice), ids(&file), "the same rows on the same roots");
}

/// Found but only read: p2 is polled, nothing is written there, and agg's channel says why.
fn found_and_only_read(rig: &Rig, dir: &Path) {
    let only = dir.join("read.toml");
    let body = format!(
        "[heartbeat]\nwrite_discovered_roots = false\n\
         [primary]\nname = \"primary\"\ndsn = \"mysql://rwtop@127.0.0.1:{}\"\n\
         [[replicas]]\nname = \"agg\"\ndsn = \"mysql://rwtop@127.0.0.1:{}\"\n",
        rig.port("primary"),
        rig.port(AGGREGATOR)
    );
    write_config(&only, &rig.password, &body);
    let count = || {
        let rows = rig.t.admin(
            SECOND_PRIMARY,
            "SELECT COUNT(*) AS n FROM rwtop.heartbeat WHERE writer_id LIKE '%@p2'",
        );
        rows[0].optional_text(&["n"]).unwrap().to_owned()
    };
    let before = count();
    let (read, stderr) = snapshot(&["--config", only.to_str().unwrap()]);
    assert!(stderr.contains("reading it only"), "{stderr}");
    assert_eq!(node(&read, SECOND_PRIMARY)["state"], "up");
    assert_eq!(root(&read, SECOND_PRIMARY)["writer"], "refused");
    let lag = &channel(&read, AGGREGATOR, SECOND_CHANNEL)["heartbeat_lag_seconds"];
    assert_eq!(lag["kind"], "unknown", "{lag}");
    let reason = lag["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("write_discovered_roots is false") && reason.contains("--primary"),
        "{reason}"
    );
    assert_eq!(
        channel(&read, AGGREGATOR, "")["heartbeat_lag_seconds"]["kind"],
        "exact"
    );
    assert_eq!(before, count(), "nothing new written on p2");
}

/// With discovery off, the channel names what to add instead of a bare '?'.
fn not_watched_says_what_to_add(rig: &Rig) {
    let out = rwtop(
        &[
            "--password-file",
            rig.pw(),
            "--no-discovery",
            "--primary",
            &rig.primary,
            "--replica",
            &rig.agg,
            "snapshot",
            "--duration",
            "3s",
        ],
        NO_PASSWORD,
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("agg/p2 lag unknown"))
        .unwrap_or_else(|| panic!("no reason for agg/p2 in:\n{text}"));
    assert!(
        line.contains("is not watched by rwtop") && line.contains("--primary NAME=mysql://"),
        "{line}"
    );
}
