//! promtool, from the Debian `prometheus` package, on what rwtop ships: a real `/metrics` from
//! `rwtop serve` on a sandbox passes `promtool check metrics` with no finding, and the rules in
//! deploy/prometheus pass `promtool check rules` and their own `promtool test rules`.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::time::Duration;

use common::TestSandbox;
use serve::{Serve, deploy, promtool};

fn said(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every family present (both replicas measured, so the histogram has samples), and promtool
/// has nothing to say about any of it: exit 0, empty output.
#[test]
fn a_real_scrape_passes_promtool_check_metrics() {
    let t = TestSandbox::start(2, false);
    let config = t.sandbox().dir().join("rwtop-cluster.toml");
    let base = std::fs::read_to_string(t.sandbox().dir().join("rwtop.toml")).expect("config");
    std::fs::write(
        &config,
        format!("{base}\n[metrics]\ncluster = \"sandbox-eu\"\n"),
    )
    .expect("writing the config");
    let serve = Serve::start(&config);
    let body = serve.scrape_until("both replicas measured", Duration::from_secs(40), |b| {
        ["r1", "r2"].iter().all(|r| {
            b.lines().any(|l| {
                l.starts_with("rwtop_replica_heartbeat_lag_state{")
                    && l.contains(&format!("replica=\"{r}\""))
                    && l.contains("state=\"exact\"")
                    && l.ends_with(" 1")
            })
        })
    });
    // `[metrics] cluster` from the file, on every sample, first.
    for line in body.lines().filter(|l| !l.starts_with('#')) {
        assert!(line.contains(r#"{cluster="sandbox-eu""#), "{line}");
    }
    let out = promtool(&["check", "metrics"], Some(&body));
    let findings = said(&out);
    assert!(out.status.success(), "{findings}\n--- scraped:\n{body}");
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool has findings: {findings}"
    );
}

/// The shipped rules are valid (`promtool check rules`) and do what their unit tests say
/// (`promtool test rules`: recorded quantiles and disagreement, alerts firing and not).
#[test]
fn the_shipped_rules_pass_check_and_their_unit_tests() {
    let rules = deploy("prometheus/rwtop.rules.yml");
    let out = promtool(&["check", "rules", rules.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SUCCESS"),
        "{}",
        said(&out)
    );
    let tests = deploy("prometheus/rwtop.rules.test.yml");
    let out = promtool(&["test", "rules", tests.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SUCCESS"),
        "{}",
        said(&out)
    );
}
