//! A node's `osc` list (docs/json-schema.md, since 1.10): each online schema change run the
//! node's tables show, as plain fields.

use serde::Serialize;

use crate::mysql::OscRun;

#[derive(Debug, Serialize)]
pub struct JsonOsc {
    /// `pt-osc`, `gh-ost` or `Spirit`.
    pub tool: &'static str,
    pub schema: String,
    pub table: String,
    /// `copy`, `checksum` or `cut-over`.
    pub phase: &'static str,
    /// Since the tool created its first table of the run.
    pub elapsed_seconds: Option<u64>,
    pub rows_copied: Option<u64>,
    /// The table's row estimate from its statistics.
    pub rows_estimate: Option<u64>,
    /// Always approximate: the estimate is the denominator.
    pub progress_percent: Option<f64>,
    /// `rows_copied` is the tool's own count (Spirit's checkpoint) rather than an estimate.
    pub rows_copied_counted: bool,
    /// The tool's throttle reason while it throttles; null when it does not, or does not say.
    pub throttled: Option<String>,
    /// Whether the tool publishes its throttle state at all (gh-ost).
    pub throttle_published: bool,
    pub eta_seconds: Option<u64>,
    /// Set when the run is recognised but its tables cannot be read: why.
    pub unreadable: Option<String>,
    /// As the banner shows it: `copy 4m12s · ~45 % · ETA ~2m00s`.
    pub text: String,
}

#[must_use]
pub fn osc(run: &OscRun) -> JsonOsc {
    JsonOsc {
        tool: run.tool.name(),
        schema: run.schema.clone(),
        table: run.table.clone(),
        phase: run.phase.name(),
        elapsed_seconds: run.elapsed_s,
        rows_copied: run.rows_copied,
        rows_estimate: run.rows_estimate,
        progress_percent: run.progress().map(|p| (p * 10.0).round() / 10.0),
        rows_copied_counted: run.copied_counted,
        throttled: run.throttled.clone(),
        throttle_published: run.throttle_published,
        eta_seconds: run.eta_s,
        unreadable: run.unreadable.clone(),
        text: run.summary(),
    }
}
