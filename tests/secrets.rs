//! A known password never leaks. The real binary runs against a real sandbox whose
//! monitor account has a known, distinctive password, and every byte it puts anywhere is searched
//! for that password (also URL-encoded, and its random core alone, which catches a cut-off
//! copy): the argv of rwtop and of every process it spawns (and their environment, which must
//! not inherit `RWTOP_PASSWORD`), stdout and stderr of each command, `/metrics`, recordings and
//! their replay, the drain audit log, and the TUI's screen. A DSN written with an inline password
//! works, but every message that quotes it shows it redacted.

mod common;
#[path = "common/leaks.rs"]
mod leaks;
#[path = "common/tmux.rs"]
mod tmux;

use std::path::Path;

use leaks::*;
use tmux::Tmux;

#[test]
fn the_search_finds_every_form_of_the_password() {
    let known = Known::new("Sekr3t");
    assert!(known.password.contains(&known.core) && known.core.len() == 16);
    assert_ne!(url_encode(&known.password), known.password);
    for form in known.forms() {
        assert!(known.leaked_in(format!("x {form} y").as_bytes()), "{form}");
    }
    let cut: String = known.password.chars().take(30).collect();
    assert!(known.leaked_in(cut.as_bytes()), "a cut-off copy is found");
    assert!(!known.leaked_in(b"mysql://rwtop:***@127.0.0.1:3306"));
}

// ---------------------------------------------------------------------------------------------
// The commands that use the password: argv, environment, output, metrics, recording, audit log.

#[test]
fn live_password_stays_out_of_argv_children_output_metrics_recordings_and_logs() {
    let live = Live::start(2);
    snapshots_leak_nothing(&live);
    probes_leak_nothing(&live);
    serve_and_its_recording_leak_nothing(&live);
    drains_leak_nothing(&live);
}

fn snapshots_leak_nothing(live: &Live) {
    let (known, cfg) = (&live.known, live.cfg());
    // snapshot --json with RWTOP_PASSWORD: every node up proves the password was used.
    let out = run(
        &["--config", cfg, "snapshot", "--json", "--duration", "3s"],
        live.env(),
    );
    assert!(out.status.success(), "snapshot: {}", out.stderr());
    let doc = json(&out, "snapshot --json");
    for name in ["primary", "r1", "r2"] {
        assert_eq!(node(&doc, name)["state"], "up", "{name}: {doc:#}");
    }
    out.assert_clean(known, "snapshot --json (RWTOP_PASSWORD)");

    // The table, with --password-file.
    let out = run(
        &["--config", cfg, "snapshot", "--duration", "2s"],
        live.file(),
    );
    assert!(out.status.success(), "snapshot: {}", out.stderr());
    assert!(
        out.stdout().lines().filter(|l| l.contains(" up ")).count() == 3,
        "every node up:\n{}",
        out.stdout()
    );
    out.assert_clean(known, "snapshot (--password-file)");
}

/// probe: a line per probe on stderr, the table on stdout; then the JSON.
fn probes_leak_nothing(live: &Live) {
    let probe = [
        "--config",
        live.cfg(),
        "probe",
        "--target",
        "r1",
        "--strategy",
        "none,primary",
        "--count",
        "2",
        "--spacing",
        "10ms",
    ];
    let out = run(&probe, live.env());
    assert!(out.status.success(), "probe: {}", out.stderr());
    assert!(
        out.stdout().contains("STRATEGY") && out.stdout().contains("primary"),
        "{}",
        out.stdout()
    );
    out.assert_clean(&live.known, "probe (RWTOP_PASSWORD)");
    let out = run(&[&probe[..], &["--json"]].concat(), live.file());
    assert!(out.status.success(), "probe --json: {}", out.stderr());
    json(&out, "probe --json");
    out.assert_clean(&live.known, "probe --json (--password-file)");
}

/// serve: /metrics with both replicas measured, and a recording beside it.
fn serve_and_its_recording_leak_nothing(live: &Live) {
    let known = &live.known;
    let recording = live.dir().join("serve.jsonl");
    let serving = start(
        &[
            "--config",
            live.cfg(),
            "serve",
            "--metrics-listen",
            "127.0.0.1:0",
            "--record",
            recording.to_str().unwrap(),
        ],
        live.env(),
    );
    let addr = wait_for("the line naming the metrics URL", || {
        let said = serving.stderr_so_far();
        let (_, rest) = said.split_once("serving Prometheus metrics at http://")?;
        rest.split_once("/metrics").map(|(addr, _)| addr.to_owned())
    });
    let body = wait_for("both replicas measured in /metrics", || {
        let response = http_get(&addr, "/metrics")?;
        let exact = |replica: &str| {
            response.lines().any(|l| {
                l.starts_with("rwtop_replica_heartbeat_lag_state{")
                    && l.contains(&format!("replica=\"{replica}\""))
                    && l.contains("state=\"exact\"")
                    && l.ends_with(" 1")
            })
        };
        (exact("r1") && exact("r2")).then_some(response)
    });
    known.assert_absent("/metrics", body.as_bytes());
    // The page searched must be the server's answer, not an empty string standing in for one.
    let not_found = http_get(&addr, "/secret").expect("GET /secret answers");
    assert!(
        not_found.starts_with("HTTP/1.1 404"),
        "GET /secret: {not_found}"
    );
    known.assert_absent("a 404 page", not_found.as_bytes());
    wait_for("three frames recorded", || {
        let text = std::fs::read_to_string(&recording).ok()?;
        (text.lines().count() >= 4).then_some(())
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(serving.child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = serving.finish();
    assert!(out.status.success(), "serve: {}", out.stderr());
    assert!(out.stderr().contains("recorded "), "{}", out.stderr());
    out.assert_clean(known, "serve --record (RWTOP_PASSWORD)");
    known.assert_absent("the recording", &std::fs::read(&recording).unwrap());
}

/// drain / undrain through the exec backend: the one command rwtop runs on the operator's
/// behalf must neither see the password in its argv nor inherit `RWTOP_PASSWORD`.
fn drains_leak_nothing(live: &Live) {
    let known = &live.known;
    for (action, via) in [("drain", live.env()), ("undrain", live.file())] {
        let out = run(&["--config", live.cfg(), action, "r1"], via);
        assert!(out.status.success(), "{action}: {}", out.stderr());
        assert!(
            out.stdout()
                .contains(&format!("exec backend: {action} r1 done")),
            "{}",
            out.stdout()
        );
        let what = format!("rwtop {action}");
        let children = assert_procs_clean(known, &what, &out.seen);
        assert!(children > 0, "{what}: the exec command was never seen");
        out.assert_clean(known, &what);
        assert_exec_dump_clean(known, live.dir(), action, &what);
    }
    let audit = std::fs::read_to_string(live.dir().join("audit.log")).unwrap();
    assert_eq!(audit.lines().count(), 2, "{audit}");
    known.assert_absent("the audit log", audit.as_bytes());
}

/// What the exec command recorded of itself: no password, no `RWTOP_PASSWORD`.
fn assert_exec_dump_clean(known: &Known, dir: &Path, action: &str, what: &str) {
    let environ = std::fs::read(dir.join(format!("exec-{action}.environ"))).unwrap();
    assert!(
        contains(&environ, b"PATH="),
        "the dump holds the environment"
    );
    known.assert_absent(&format!("{what}: the command's environment"), &environ);
    assert!(
        !contains(&environ, b"RWTOP_PASSWORD="),
        "{what}: the exec command inherited RWTOP_PASSWORD"
    );
    let cmdline = std::fs::read(dir.join(format!("exec-{action}.cmdline"))).unwrap();
    known.assert_absent(&format!("{what}: the command's argv"), &cmdline);
}

// ---------------------------------------------------------------------------------------------
// The TUI, a drain from it, its recording and the replay, on a real terminal.

#[test]
fn live_tui_drain_recording_and_replay_never_show_the_password() {
    let live = Live::start(2);
    let (known, dir) = (&live.known, live.dir());
    let recording = dir.join("tui.jsonl");

    let tmux = Tmux::start(140, 45);
    // The shell reads the password from the file into RWTOP_PASSWORD for rwtop alone: neither
    // the typed line nor the shell's argv holds it.
    tmux.send(&[
        &format!(
            "RWTOP_PASSWORD=\"$(cat {})\" {BIN} --config {} --record {} ; echo EXIT=$?",
            live.password_file.display(),
            live.cfg(),
            recording.display()
        ),
        "Enter",
    ]);
    let mut screens = vec![tmux.wait_for(&["r1", "r2", "primary", " quit"])];
    let rwtop = wait_for("rwtop under the pane's shell", || {
        descendants(tmux.shell_pid()).into_iter().find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with(BIN.as_bytes()))
        })
    });
    let environ = std::fs::read(format!("/proc/{rwtop}/environ")).unwrap();
    assert!(
        contains(&environ, b"RWTOP_PASSWORD="),
        "rwtop got the password from the environment"
    );
    let watcher = Watcher::start(rwtop);

    tmux.send(&["?"]);
    screens.push(tmux.wait_for(&["any key closes"]));
    tmux.send(&["x"]);
    tmux.send(&["r"]);
    tmux.wait_for(&["test reads · r1"]);
    tmux.send(&["t"]);
    screens.push(tmux.wait_for(&["last "]));
    tmux.send(&["d"]);
    screens.push(tmux.wait_for(&["Drain r1", "through exec"]));
    tmux.send(&["y"]);
    wait_for("the drain in the audit log", || {
        std::fs::read_to_string(dir.join("audit.log"))
            .ok()
            .filter(|log| log.contains("exec backend: drain r1 done"))
    });
    screens.push(tmux.capture(false));
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);
    let seen = watcher.finish();
    assert!(
        assert_procs_clean(known, "the TUI", &seen) > 0,
        "the drain command was never seen under rwtop"
    );
    assert_exec_dump_clean(known, dir, "drain", "the TUI's drain");
    screens.push(tmux.capture(true));
    known.assert_absent(
        "the audit log",
        &std::fs::read(dir.join("audit.log")).unwrap(),
    );
    known.assert_absent("the TUI's recording", &std::fs::read(&recording).unwrap());

    tmux.send(&[
        &format!("{BIN} replay {} ; echo EXIT=$?", recording.display()),
        "Enter",
    ]);
    screens.push(tmux.wait_for(&["REPLAY", "r1", "r2"]));
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);
    screens.push(tmux.capture(true));
    for (i, screen) in screens.iter().enumerate() {
        known.assert_absent(&format!("screen {i}"), screen.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// A DSN with an inline password: it works, and every message quoting it shows `***`.
