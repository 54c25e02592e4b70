//! One probe as it runs: what it cost so far, and why it stopped short.

use std::time::{Duration, Instant};

use crate::mysql::SqlError;

/// Why a probe could not run to the end: becomes an `error` outcome with this as the cause.
#[derive(Debug)]
pub struct ProbeError(pub String);

impl From<SqlError> for ProbeError {
    fn from(err: SqlError) -> Self {
        Self(err.to_string())
    }
}

/// The cost and timing of one probe as it runs.
#[derive(Debug)]
pub struct Attempt {
    pub started: Instant,
    /// When the write was acknowledged; waits and windows count from here.
    pub written: Option<Instant>,
    pub waited: Duration,
    pub queries: u32,
    pub primary_reads: u32,
    pub note: Option<String>,
    /// What the proxies' modes add to the cost.
    pub cost: super::outcome::ProbeCost,
}
