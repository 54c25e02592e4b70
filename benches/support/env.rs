//! Run settings the live benches take from the environment (`RWTOP_BENCH_*`), and how a bench's
//! run ends. Shared by the live benches.

use anyhow::{Result, anyhow};

/// `name` parsed from the environment, or `default` when it is unset; a value that does not
/// parse is an error naming the variable.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> Result<T> {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| anyhow!("{name}={text:?} is not a valid value")),
        Err(_) => Ok(default),
    }
}

/// A bench's exit: success, or its error on standard error under the bench's name.
pub fn exit(bench: &str, outcome: Result<()>) -> std::process::ExitCode {
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{bench}: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
