//! What the live benches share about the machine they run on: a sandbox started on free ports
//! (retried once, since a port found free can be taken before the server binds it) and the
//! load average printed beside every figure. Shared by `lag_truth`, `scale` and `time_to_alert`.

use std::path::Path;

use anyhow::{Context, Result};
use rwtop::sandbox::{Ports, Sandbox, SandboxSpec};

/// A throwaway sandbox of a primary and `replicas` replicas under `dir`, each replica's source
/// link through a stallable relay when `relay`; `bench` names the bench in its messages.
pub fn start(dir: &Path, replicas: usize, relay: bool, bench: &str) -> Result<Sandbox> {
    let mut spec = SandboxSpec::new(dir.join("sb"));
    spec.replicas = replicas;
    spec.ports = Ports::Free;
    spec.ephemeral = true;
    spec.relay = relay;
    Sandbox::up(&spec)
        .or_else(|first| {
            eprintln!("{bench}: sandbox up failed once ({first}); retrying on new ports");
            Sandbox::up(&spec)
        })
        .with_context(|| {
            format!(
                "cannot start a sandbox of 1 primary + {replicas} replicas (is MariaDB or MySQL \
                 installed?)"
            )
        })
}

/// The machine's load average over 1, 5 and 15 minutes, or "unknown".
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_owned(),
        |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}
