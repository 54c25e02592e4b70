//! The real binary in a real terminal (tmux) against a real sandbox, driven by keys like a person:
//! it starts, shows both replicas, reacts to keys, runs a test read, and quitting leaves the terminal sane.

mod common;

use std::process::Command;

use common::TestSandbox;

#[path = "common/tmux.rs"]
mod tmux;

use tmux::Tmux;

/// Types the command that starts rwtop on the sandbox's config, echoing its exit status
/// when it ends, as a person would in a shell.
fn run_rwtop(tmux: &Tmux, t: &TestSandbox) {
    let config = t.sandbox().dir().join("rwtop.toml");
    let command = format!(
        "{} --config {} ; echo EXIT=$?",
        env!("CARGO_BIN_EXE_rwtop"),
        config.display()
    );
    tmux.send(&[&command, "Enter"]);
}

#[test]
fn live_tui_in_tmux_shows_replicas_reacts_to_keys_and_quits_cleanly() {
    let t = TestSandbox::start(2, false);
    let tmux = Tmux::start(120, 40);
    run_rwtop(&tmux, &t);
    // Both replicas, live: their rows and the topology tree.
    let pane = tmux.wait_for(&["r1", "r2", "primary", " quit"]);
    assert!(!pane.contains("EXIT="), "still running:\n{pane}");

    // The help screen comes from the key table, and any key closes it.
    tmux.send(&["?"]);
    tmux.wait_for(&["any key closes", "drain or undrain"]);
    tmux.send(&["x"]);
    tmux.wait_gone("any key closes");
    // The health lint in the detail pane's place: the sandbox's replicas keep
    // relay_log_recovery at its default (OFF), and the fix is on screen; l again brings the
    // detail back.
    tmux.send(&["l"]);
    tmux.wait_for(&[
        "health lint · ",
        "relay_log_recovery is OFF on a replica on r1, r2",
        "fix: SET GLOBAL relay_log_recovery = ON",
    ]);
    tmux.send(&["l"]);
    tmux.wait_gone("health lint · ");
    // A key the footer answers.
    tmux.send(&["d"]);
    tmux.wait_for(&["no drain backend: add a [drain] section"]);

    // Test reads: r shows the pane and its hint; t runs one with the default strategy, which
    // on an idle sandbox reads the marker on r1 itself; o hides the topology tree.
    tmux.send(&["r"]);
    tmux.wait_for(&["test reads · r1 · gtid-wait(1s)", "no test reads on r1 yet"]);
    tmux.send(&["t"]);
    tmux.wait_for(&["queued a gtid-wait(1s) test read on r1"]);
    let pane = tmux.wait_for(&["last "]);
    assert!(
        pane.contains("last fresh  gtid-wait(1s)  read on r1"),
        "the test read did not come back fresh from r1:\n{pane}"
    );
    assert!(pane.contains("╭ topology"), "{pane}");
    tmux.send(&["o"]);
    tmux.wait_gone("╭ topology");

    tmux.send(&["q"]);
    let pane = tmux.wait_for(&["EXIT=0"]);
    // Back on the shell's screen (the alternate screen is gone) with a sane line discipline.
    assert!(!pane.contains("│"), "TUI left on screen:\n{pane}");
    tmux.send(&[
        "stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo STTY",
        "Enter",
    ]);
    let pane = tmux.wait_for(&["STTY"]);
    let line = pane
        .lines()
        .rev()
        .find(|l| l.contains("icanon"))
        .unwrap_or_default();
    assert!(
        line.contains("icanon") && !line.contains("-icanon"),
        "raw mode left on: {line}"
    );
    assert!(!line.contains("-echo"), "echo left off: {line}");
}

#[test]
fn tiny_terminal_shows_a_notice_not_a_panic() {
    let t = TestSandbox::start(1, false);
    let tmux = Tmux::start(60, 15);
    run_rwtop(&tmux, &t);
    tmux.wait_for(&["terminal too small", "60×15"]);
    tmux.send(&["q"]);
    tmux.wait_for(&["EXIT=0"]);
}

/// What the pane shows once rwtop has drawn at a size.
#[derive(Debug)]
enum Drawn {
    /// All of it, blanks aside.
    Exactly(&'static str),
    /// Somewhere, with every blank and line break removed (text wrapped a letter a line).
    Joined(&'static str),
    Shows(&'static str),
}

impl Drawn {
    fn on(&self, pane: &str) -> bool {
        match self {
            Self::Exactly(text) => pane.trim() == *text,
            Self::Joined(text) => pane.split_whitespace().collect::<String>().contains(text),
            Self::Shows(text) => pane.contains(text),
        }
    }
}

/// Alive and not a zombie (a zombie still has its /proc entry).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

#[test]
fn resized_to_one_cell_and_odd_shapes_and_back_it_redraws_and_quits_cleanly() {
    let t = TestSandbox::start(2, false);
    let tmux = Tmux::start(120, 40);
    run_rwtop(&tmux, &t);
    let dashboard = ["r1", "r2", "primary", " quit"];
    let pane = tmux.wait_for(&dashboard);
    assert!(!pane.contains("EXIT="), "still running:\n{pane}");
    let rwtop = tmux.foreground_pid();
    let cmdline = std::fs::read(format!("/proc/{rwtop}/cmdline")).unwrap_or_default();
    assert!(
        cmdline.starts_with(env!("CARGO_BIN_EXE_rwtop").as_bytes()),
        "{rwtop} is not rwtop: {}",
        String::from_utf8_lossy(&cmdline)
    );

    // Each size is waited on until rwtop has drawn for it: the start of its notice where only a
    // cell or two fit, the size it names where the notice fits (wrapped one letter a line in a
    // single column).
    let steps = [
        (1, 1, Drawn::Exactly("t")),
        (2, 1, Drawn::Exactly("te")),
        (1, 50, Drawn::Joined("thisis1×50")),
        (300, 3, Drawn::Shows("this is 300×3")),
        (1, 1, Drawn::Exactly("t")),
        (79, 24, Drawn::Shows("this is 79×24")),
    ];
    for (width, height, drawn) in steps {
        tmux.resize(width, height);
        // A dead rwtop ends the wait at once, and the assertion below says so.
        let pane = tmux.wait_until(&format!("{drawn:?} at {width}×{height}"), |p| {
            drawn.on(p) || !alive(rwtop)
        });
        assert!(alive(rwtop), "rwtop died at {width}×{height}:\n{pane}");
        assert!(
            !pane.contains("EXIT="),
            "rwtop exited at {width}×{height}:\n{pane}"
        );
    }

    tmux.resize(120, 40);
    let pane = tmux.wait_for(&dashboard);
    assert!(alive(rwtop), "rwtop died back at 120×40:\n{pane}");
    assert!(!pane.contains("terminal too small"), "{pane}");
    tmux.send(&["q"]);
    let pane = tmux.wait_for(&["EXIT=0"]);
    let history = Command::new("tmux")
        .args(["capture-pane", "-p", "-S", "-", "-t", &tmux.session])
        .output()
        .unwrap();
    let history = String::from_utf8_lossy(&history.stdout);
    assert!(
        !history.contains("panicked") && !history.contains("RUST_BACKTRACE"),
        "a panic on the way:\n{history}"
    );
    assert!(!pane.contains("│"), "TUI left on screen:\n{pane}");
    assert!(!alive(rwtop), "rwtop still running after q");
}
