//! The what-if as text: what was read, a row per setting, the recommendation and why.

use std::fmt::Write as _;

use rwtop::whatif::{WhatifReport, pct, wait};

#[must_use]
pub fn text(r: &WhatifReport) -> String {
    let mut out = String::new();
    let channels: Vec<String> = r
        .channels
        .iter()
        .map(|c| format!("{} ({:.0} s of lag)", c.target, c.known_s))
        .collect();
    let _ = writeln!(out, "What-if over {}: {}", r.source, channels.join(", "));
    if !r.without_lag.is_empty() {
        let _ = writeln!(out, "No lag measured on: {}", r.without_lag.join(", "));
    }
    let delays: Vec<String> = r
        .workload
        .read_after
        .iter()
        .map(|d| rwtop::units::duration(*d))
        .collect();
    let _ = writeln!(
        out,
        "Workload: {} read(s) per write, read {} after the write. Goal: ≤ {} stale, primary ≤ {} of reads in any minute.",
        r.workload.reads_per_write,
        delays.join(" / "),
        pct(r.goal.max_stale),
        pct(r.goal.primary_budget),
    );
    let _ = writeln!(
        out,
        "Resolution: a sample every {}, heartbeat every {} (docs/whatif.md).\n",
        wait(r.spacing_ms),
        wait(r.heartbeat_ms)
    );
    let _ = writeln!(
        out,
        "{:<22} {:>8} {:>7} {:>8} {:>9} {:>8} {:>8} {:>7}  goal",
        "setting", "stale", "±", "primary", "peak/min", "wait p50", "wait p99", "reads"
    );
    for row in &r.rows {
        let j = &row.judged;
        let _ = writeln!(
            out,
            "{:<22} {:>8} {:>7} {:>8} {:>9} {:>8} {:>8} {:>7}  {}",
            j.setting.to_string(),
            pct(j.stale),
            pct(j.stale_error),
            pct(j.primary),
            pct(j.primary_peak_minute),
            wait(j.wait_p50_ms),
            wait(j.wait_p99_ms),
            j.reads,
            if row.meets_goal { "meets" } else { "-" },
        );
    }
    let _ = writeln!(
        out,
        "\nRecommended: {}",
        r.recommended
            .map_or_else(|| "none qualifies".to_owned(), |s| s.to_string())
    );
    let _ = writeln!(out, "Why: {}", r.why);
    out
}
