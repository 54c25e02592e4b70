//! A terminal that goes away under `rwtop demo` (an SSH session dropped, a tmux session killed)
//! hangs up the process. The demo must still stop every server it started and delete its folder:
//! a monitor never leaves servers running behind it. Before the fix, the hang-up killed the
//! process at once, or its terminal restore panicked writing to the dead terminal and aborted,
//! and all six servers kept running.

#[path = "common/tmux.rs"]
mod tmux;

use std::time::{Duration, Instant};

use tmux::Tmux;

const DEADLINE: Duration = Duration::from_secs(60);

/// Processes whose command line names the demo folder of process `rwtop` (`rwtop-demo-<pid>-`).
fn servers_of(rwtop: i32) -> Vec<i32> {
    let marker = format!("rwtop-demo-{rwtop}-");
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The demo's folders of process `rwtop` still in the temp folder.
fn folders_of(rwtop: i32) -> Vec<std::path::PathBuf> {
    let prefix = format!("rwtop-demo-{rwtop}-");
    std::fs::read_dir(std::env::temp_dir())
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_demo_whose_terminal_hangs_up_stops_its_servers_and_removes_its_folder() {
    let tmux = Tmux::start(120, 40);
    tmux.send(&[env!("CARGO_BIN_EXE_rwtop"), " demo", "Enter"]);
    let rwtop = tmux.foreground_pid();
    // Up: the table shows the demo's replicas.
    tmux.wait_for(&["replicas", "c1"]);
    let servers = servers_of(rwtop);
    assert!(servers.len() >= 6, "the demo's servers: {servers:?}");
    assert!(!folders_of(rwtop).is_empty(), "no demo folder");

    drop(tmux); // tmux kill-session: the terminal goes away, the process gets SIGHUP

    let start = Instant::now();
    loop {
        let (left, folders) = (servers_of(rwtop), folders_of(rwtop));
        if left.is_empty() && folders.is_empty() {
            eprintln!(
                "servers stopped and folder removed {:?} after the hang-up",
                start.elapsed()
            );
            break;
        }
        if start.elapsed() > DEADLINE {
            // Leave nothing behind for the next test, then fail.
            for pid in &left {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
            for folder in &folders {
                let _ = std::fs::remove_dir_all(folder);
            }
            panic!(
                "{} server(s) {left:?} and folder(s) {folders:?} left {DEADLINE:?} after the hang-up",
                left.len()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
