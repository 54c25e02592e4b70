//! `rwtop sandbox` through the real binary: the commands a person types, their messages and exit
//! codes, and that `down` leaves no process and no port behind.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::process::Output;

use common::rwtop;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn free_base_port(count: u16) -> u16 {
    // A run of `count` consecutive free ports, probed by binding them all at once.
    for _ in 0..200 {
        let base = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if base > 65000 {
            continue;
        }
        let held: Vec<_> = (0..count)
            .filter_map(|i| TcpListener::bind(("127.0.0.1", base + i)).ok())
            .collect();
        if held.len() == usize::from(count) {
            return base;
        }
    }
    panic!("no run of {count} free ports");
}

fn pid_alive(pid: &str) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z"))
}

#[test]
fn live_cli_up_status_down_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sb");
    let dir_s = dir.to_str().unwrap();
    let base = free_base_port(3);
    let base_s = base.to_string();
    let up = rwtop(
        &["sandbox", "up", "--dir", dir_s, "--base-port", &base_s],
        &[],
    );
    let (out, err) = text(&up);
    assert!(up.status.success(), "up failed: {err}");
    assert!(
        out.contains("[primary]") && out.contains(&format!("127.0.0.1:{}", base + 2)),
        "{out}"
    );
    assert!(
        !out.contains(&std::fs::read_to_string(dir.join("monitor.password")).unwrap()),
        "no password printed"
    );
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(dir.join("rwtop.toml")).unwrap()).unwrap();
    assert_eq!(config["replicas"].as_array().unwrap().len(), 2);

    // Twice is harmless and keeps the same servers.
    let again = rwtop(
        &["sandbox", "up", "--dir", dir_s, "--base-port", &base_s],
        &[],
    );
    assert!(again.status.success(), "{}", text(&again).1);

    let status = rwtop(&["sandbox", "status", "--dir", dir_s], &[]);
    let (out, _) = text(&status);
    assert!(status.status.success(), "{}", text(&status).1);
    let replica_lines: Vec<&str> = out.lines().filter(|l| l.starts_with('r')).collect();
    assert_eq!(replica_lines.len(), 2, "{out}");
    assert!(
        replica_lines.iter().all(|l| l.contains("Yes        Yes")),
        "{out}"
    );
    let pids: Vec<String> = out
        .lines()
        .skip_while(|l| !l.starts_with("NODE"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .collect();
    assert_eq!(pids.len(), 3, "{out}");
    assert!(pids.iter().all(|p| pid_alive(p)), "{out}");

    let down = rwtop(&["sandbox", "down", "--dir", dir_s], &[]);
    assert!(down.status.success(), "{}", text(&down).1);
    assert!(
        pids.iter().all(|p| !pid_alive(p)),
        "no server process survives down"
    );
    for port in base..base + 3 {
        assert!(
            TcpListener::bind(("127.0.0.1", port)).is_ok(),
            "port {port} still taken"
        );
    }
    assert!(!dir.exists(), "folder removed");
    let twice = rwtop(&["sandbox", "down", "--dir", dir_s], &[]);
    assert!(twice.status.success(), "down twice is fine");
}

/// The printed multi-source config: both roots as `[[primary]]`, the replicas after.
fn config_lists_both_roots(config_text: &str, base: u16) {
    let config: toml::Value = toml::from_str(config_text).unwrap();
    let dsn = |i: u16| format!("mysql://rwtop@127.0.0.1:{}", base + i);
    let primaries: Vec<(&str, &str)> = config["primary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["dsn"].as_str().unwrap()))
        .collect();
    assert_eq!(
        primaries,
        [("primary", dsn(0).as_str()), ("p2", dsn(2).as_str())],
        "{config_text}"
    );
    let replicas: Vec<(&str, &str)> = config["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["dsn"].as_str().unwrap()))
        .collect();
    assert_eq!(
        replicas,
        [("r1", dsn(1).as_str()), ("agg", dsn(3).as_str())],
        "{config_text}"
    );
}

/// rwtop on the multi-source sandbox's printed config: both roots are primaries, agg has a row
/// per channel, each from its own source.
fn snapshot_shows_both_channels(config: &std::path::Path) {
    let snap = rwtop(
        &[
            "--config",
            config.to_str().unwrap(),
            "snapshot",
            "--duration",
            "3s",
        ],
        &[],
    );
    let (snap_out, snap_err) = text(&snap);
    assert!(snap.status.success(), "{snap_err}");
    let row = |start: &str| {
        snap_out
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no row {start:?} in:\n{snap_out}"))
            .split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("p2 "), ["p2", "primary", "up", "-"], "{snap_out}");
    assert_eq!(
        row("agg "),
        ["agg", "replica", "up", "primary"],
        "{snap_out}"
    );
    assert_eq!(
        row("agg/p2 "),
        ["agg/p2", "replica", "up", "p2"],
        "{snap_out}"
    );
}

#[test]
fn live_cli_multi_source_shows_both_primaries_and_both_channels() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sb");
    let dir_s = dir.to_str().unwrap();
    let base = free_base_port(4);
    let base_s = base.to_string();
    let up_args = [
        "sandbox",
        "up",
        "--dir",
        dir_s,
        "--base-port",
        &base_s,
        "--replicas",
        "1",
        "--multi-source",
    ];
    let up = rwtop(&up_args, &[]);
    let (out, err) = text(&up);
    assert!(up.status.success(), "up failed: {err}");

    // The config lists every node: both roots as [[primary]], each with its own writer.
    let config_text = std::fs::read_to_string(dir.join("rwtop.toml")).unwrap();
    config_lists_both_roots(&config_text, base);
    assert!(
        config_text.contains("# p2: a second primary (GTID domain 1)"),
        "{config_text}"
    );
    assert!(out.contains(&config_text), "up prints the config");

    let status = rwtop(&["sandbox", "status", "--dir", dir_s], &[]);
    let (out, _) = text(&status);
    assert!(status.status.success(), "{}", text(&status).1);
    let line = |start: &str| {
        out.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start:?} in:\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    // NODE PORT PID ROLE RO IO SQL SBM GTID
    let p2 = line("p2 ");
    assert_eq!(p2[3..8], ["primary", "OFF", "-", "-", "-"], "{out}");
    assert_eq!(
        p2[8].split('-').next(),
        Some("1"),
        "p2 writes in domain 1: {out}"
    );
    let agg = line("agg ");
    assert_eq!(agg[3..8], ["replica", "ON", "Yes", "Yes", "0"], "{out}");
    let mut agg_domains: Vec<&str> = agg[8]
        .split(',')
        .filter_map(|g| g.split('-').next())
        .collect();
    agg_domains.sort_unstable();
    assert_eq!(agg_domains, ["0", "1"], "agg applied both domains: {out}");
    let channel = line("  channel 'p2' from p2 ");
    assert_eq!(channel[4..], ["Yes", "Yes", "0"], "{out}");

    snapshot_shows_both_channels(&dir.join("rwtop.toml"));

    let pids: Vec<&str> = ["primary ", "r1 ", "p2 ", "agg "]
        .iter()
        .map(|n| out.lines().find(|l| l.starts_with(n)).unwrap())
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert!(pids.iter().all(|p| pid_alive(p)), "{out}");

    // Again is harmless; without --multi-source it is another sandbox, refused.
    let again = rwtop(&up_args, &[]);
    assert!(again.status.success(), "{}", text(&again).1);
    let other = rwtop(&up_args[..up_args.len() - 1], &[]);
    let (_, err) = text(&other);
    assert_eq!(other.status.code(), Some(1), "{err}");
    assert!(err.contains("a second primary and an aggregator"), "{err}");

    let down = rwtop(&["sandbox", "down", "--dir", dir_s], &[]);
    assert!(down.status.success(), "{}", text(&down).1);
    assert!(
        pids.iter().all(|p| !pid_alive(p)),
        "no server survives down"
    );
    for port in base..base + 4 {
        assert!(
            TcpListener::bind(("127.0.0.1", port)).is_ok(),
            "port {port} still taken"
        );
    }
}

/// `--parallel 2` gives the replica two applier workers: `snapshot --json` reads them from the
/// replica's own settings, and the sandbox's shape includes them.
#[test]
fn live_cli_parallel_workers_reach_the_replicas() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sb");
    let dir_s = dir.to_str().unwrap();
    let base_s = free_base_port(2).to_string();
    let up_args = [
        "sandbox",
        "up",
        "--dir",
        dir_s,
        "--base-port",
        &base_s,
        "--replicas",
        "1",
        "--parallel",
        "2",
    ];
    let up = rwtop(&up_args, &[]);
    assert!(up.status.success(), "up failed: {}", text(&up).1);
    let config = dir.join("rwtop.toml");
    let snap = rwtop(
        &[
            "--config",
            config.to_str().unwrap(),
            "snapshot",
            "--json",
            "--duration",
            "3s",
        ],
        &[],
    );
    let (out, err) = text(&snap);
    assert!(snap.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let r1 = doc["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["name"] == "r1"))
        .unwrap_or_else(|| panic!("no r1 in {out}"));
    let appliers = &r1["channels"][0]["appliers"];
    assert_eq!(appliers["workers"], 2, "{appliers}");
    assert_eq!(appliers["mode"], "optimistic", "{appliers}");
    assert_eq!(appliers["retried_transactions"], 0, "{appliers}");
    // The primary replicates from nobody: no channel, no appliers.
    let primary = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "primary");
    assert_eq!(primary.unwrap()["channels"], serde_json::json!([]));

    let serial = rwtop(&up_args[..up_args.len() - 2], &[]);
    let (_, err) = text(&serial);
    assert_eq!(serial.status.code(), Some(1), "{err}");
    assert!(err.contains("2 parallel workers per replica"), "{err}");
    let down = rwtop(&["sandbox", "down", "--dir", dir_s], &[]);
    assert!(down.status.success(), "{}", text(&down).1);
}

#[test]
fn live_taken_port_is_refused_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port().to_string();
    let out = rwtop(
        &[
            "sandbox",
            "up",
            "--dir",
            tmp.path().join("sb").to_str().unwrap(),
            "--base-port",
            &port,
        ],
        &[],
    );
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("port {port} on 127.0.0.1")) && err.contains("--base-port"),
        "{err}"
    );
    assert!(
        !tmp.path().join("sb").exists(),
        "nothing half-built is left"
    );
}

#[test]
fn missing_server_binary_says_which_package_to_install() {
    let empty = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = rwtop(
        &[
            "sandbox",
            "up",
            "--dir",
            tmp.path().join("sb").to_str().unwrap(),
        ],
        &[("RWTOP_SERVER_DIR", Some(empty.path().to_str().unwrap()))],
    );
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no MariaDB or MySQL server found"), "{err}");
    assert!(
        err.contains("apt-get install mariadb-server mariadb-client"),
        "{err}"
    );
    assert!(
        err.contains(empty.path().to_str().unwrap()),
        "names where it looked: {err}"
    );
}

#[test]
fn status_of_a_missing_sandbox_says_how_to_start_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("none");
    let out = rwtop(&["sandbox", "status", "--dir", dir.to_str().unwrap()], &[]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("rwtop sandbox up --dir"), "{err}");
}

#[test]
fn readme_lists_exactly_the_grants_the_sandbox_gives() {
    use rwtop::mysql::{Family, grants};
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let documented: Vec<&str> = readme.lines().filter(|l| l.starts_with("GRANT ")).collect();
    let mut from_code: Vec<String> = [Family::Mariadb, Family::Mysql]
        .into_iter()
        .flat_map(|f| grants::monitor_grants(f, grants::README_ACCOUNT))
        .map(|g| format!("{g};"))
        .collect();
    let mut documented_sorted: Vec<String> = documented.iter().map(|s| (*s).to_owned()).collect();
    documented_sorted.sort();
    from_code.sort();
    assert_eq!(
        documented_sorted, from_code,
        "README's grants and the code's differ"
    );
}
