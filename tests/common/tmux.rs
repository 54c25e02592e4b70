//! A real terminal for tests: a detached tmux session running a shell, driven by keys and read
//! back from the pane, as a person would use rwtop. Included with `#[path]` where needed.

#![allow(dead_code, reason = "each test binary uses some of these helpers")]

use std::process::Command;
use std::time::{Duration, Instant};

/// The longest a pane may take to show what a test waits for.
const DEADLINE: Duration = Duration::from_secs(60);

pub struct Tmux {
    pub session: String,
}

impl Tmux {
    /// A shell in a detached session of a fixed size, so renders are comparable.
    pub fn start(width: u16, height: u16) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let session = format!("rwtop-test-{}-{n}", std::process::id());
        let ok = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .args(["bash", "--norc", "--noprofile"])
            .env("PS1", "$ ")
            .status()
            .expect("tmux must be installed (scripts/test installs it)")
            .success();
        assert!(ok, "tmux new-session failed");
        Self { session }
    }

    pub fn send(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &self.session])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The screen as it is now.
    pub fn pane(&self) -> String {
        self.capture(false)
    }

    /// The screen, and with `history` everything that scrolled off it too.
    pub fn capture(&self, history: bool) -> String {
        let mut cmd = Command::new("tmux");
        cmd.args(["capture-pane", "-p", "-t", &self.session]);
        if history {
            cmd.args(["-S", "-"]);
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    }

    /// The pid of the pane's shell.
    pub fn shell_pid(&self) -> u32 {
        let out = Command::new("tmux")
            .args(["display-message", "-p", "-t", &self.session, "#{pane_pid}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("the pane's pid")
    }

    /// Waits until the pane shows all of `texts`; returns the pane.
    pub fn wait_for(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let pane = self.pane();
            if texts.iter().all(|t| pane.contains(t)) {
                return pane;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "pane never showed {texts:?}:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until `check` accepts the pane; returns the pane.
    pub fn wait_until(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let pane = self.pane();
            if check(&pane) {
                return pane;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "pane never showed {what}:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Resizes the session's window, as a person dragging the terminal's corner would; a
    /// detached session keeps the size it is given.
    pub fn resize(&self, width: u16, height: u16) {
        let status = Command::new("tmux")
            .args(["resize-window", "-t", &self.session])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "tmux resize-window {width}x{height}");
    }

    /// The pid of the program the pane's shell is running, once it runs.
    pub fn foreground_pid(&self) -> i32 {
        let shell = self.shell_pid();
        let start = Instant::now();
        loop {
            let child = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
                .unwrap_or_default()
                .split_whitespace()
                .find_map(|pid| pid.parse::<i32>().ok());
            if let Some(pid) = child {
                return pid;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the shell {shell} started nothing"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the pane no longer shows `text`; returns the pane.
    pub fn wait_gone(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let pane = self.pane();
            if !pane.contains(text) {
                return pane;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "pane kept showing {text:?}:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .status();
    }
}
