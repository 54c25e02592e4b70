//! Faults made with signals on a sandbox's servers: killed outright, or frozen until the guard
//! drops (so a failing test never leaves a server stopped).
#![allow(dead_code, reason = "each test binary uses part of this file")]

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::TestSandbox;

/// A server frozen with SIGSTOP until this drops.
pub struct Frozen(Pid);

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

impl TestSandbox {
    fn pid(&self, node: &str) -> Pid {
        Pid::from_raw(
            self.sandbox()
                .pid(node)
                .unwrap_or_else(|| panic!("{node} runs")),
        )
    }

    /// Kills `node`'s server with SIGKILL: no shutdown, as a crash or the OOM killer would.
    pub fn kill_server(&self, node: &str) {
        kill(self.pid(node), Signal::SIGKILL).expect("SIGKILL");
    }

    /// Freezes `node`'s server with SIGSTOP until the returned guard drops.
    pub fn freeze(&self, node: &str) -> Frozen {
        let pid = self.pid(node);
        kill(pid, Signal::SIGSTOP).expect("SIGSTOP");
        Frozen(pid)
    }
}
