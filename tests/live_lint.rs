//! `rwtop lint` against real servers: a finding with its fix that clears once fixed, binlog
//! retention warned before the purge and an error after it, and the exit codes.

mod common;

use std::time::{Duration, Instant};

use common::TestSandbox;
use common::lint::{finding, lint};
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(60);

/// Runs the lint until `check` holds, or fails at the deadline with the last document.
fn lint_until<T>(
    t: &TestSandbox,
    what: &str,
    mut check: impl FnMut(i32, &Value) -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        let (code, doc) = lint(t);
        if let Some(found) = check(code, &doc) {
            return found;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{what}: not within {DEADLINE:?}; last (exit {code}): {doc:#}"
        );
    }
}

#[test]
fn live_lint_flags_relay_log_recovery_with_its_fix_and_clears_once_on() {
    let t = TestSandbox::start(1, false);
    // The sandbox's replicas start with the server default, OFF.
    let off = t.admin("r1", "SELECT @@global.relay_log_recovery AS v");
    assert_eq!(off[0].optional_text(&["v"]), Some("0"));
    let f = lint_until(&t, "relay_log_recovery flagged on r1", |code, doc| {
        assert_eq!(code, 0, "only warnings on a fresh sandbox: {doc:#}");
        finding(doc, "relay_log_recovery", "r1").cloned()
    });
    assert_eq!(f["severity"], "warning");
    let fix = f["fix"].as_str().unwrap();
    assert!(fix.contains("SET GLOBAL relay_log_recovery = ON"), "{fix}");
    assert!(fix.contains("relay_log_recovery = ON"), "{fix}");
    // The primary replicates from nobody: never flagged for it.
    assert!(finding(&lint(&t).1, "relay_log_recovery", "primary").is_none());

    // Dynamic on MariaDB 10.11 (checked): the fix as printed, and the finding goes.
    t.admin("r1", "SET GLOBAL relay_log_recovery = ON");
    lint_until(&t, "relay_log_recovery cleared on r1", |_, doc| {
        finding(doc, "relay_log_recovery", "r1")
            .is_none()
            .then_some(())
    });
}

#[test]
fn live_lint_warns_before_a_needed_binlog_is_purged_and_errors_after() {
    let t = TestSandbox::start(1, false);
    // Kept forever by default: no retention finding even with the replica stopped.
    t.admin("r1", "STOP SLAVE IO_THREAD");
    t.admin("primary", "FLUSH BINARY LOGS");
    let (code, doc) = lint(&t);
    assert_eq!(code, 0, "{doc:#}");
    assert!(finding(&doc, "binlog_retention", "r1").is_none(), "{doc:#}");

    // An hour's retention: nothing is old enough to go yet, but the next rotations may take
    // the files r1 still needs.
    t.admin("primary", "SET GLOBAL binlog_expire_logs_seconds = 3600");
    t.admin("primary", "FLUSH BINARY LOGS");
    t.admin("primary", "FLUSH BINARY LOGS");
    let before = t.admin("primary", "SHOW BINARY LOGS");
    let oldest = before[0].optional_text(&["Log_name"]).unwrap().to_owned();
    let newest = before
        .last()
        .unwrap()
        .optional_text(&["Log_name"])
        .unwrap()
        .to_owned();
    let f = lint_until(&t, "retention warning on r1", |code, doc| {
        let f = finding(doc, "binlog_retention", "r1")?.clone();
        assert_eq!(code, 0, "a warning alone exits 0: {doc:#}");
        Some(f)
    });
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["channel"], "");
    let summary = f["summary"].as_str().unwrap();
    assert!(summary.contains(&newest), "{summary}");
    // The warning came while the source still had every file.
    let still = t.admin("primary", "SHOW BINARY LOGS");
    assert_eq!(still[0].optional_text(&["Log_name"]), Some(oldest.as_str()));

    // Purged: the file r1 must fetch next is gone, an error, and the lint exits 1.
    t.admin("primary", &format!("PURGE BINARY LOGS TO '{newest}'"));
    let f = lint_until(&t, "purged-binlog error on r1", |code, doc| {
        let f = finding(doc, "binlog_purged", "r1")?.clone();
        assert_eq!(code, 1, "an error finding exits 1: {doc:#}");
        Some(f)
    });
    assert_eq!(f["severity"], "error");
    assert!(f["fix"].as_str().unwrap().contains("rebuild r1"));
}
