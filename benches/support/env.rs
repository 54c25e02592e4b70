//! Run settings the live benches take from the environment (`RWTOP_BENCH_*`). Shared by `scale`
//! and `lag_truth`.

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
