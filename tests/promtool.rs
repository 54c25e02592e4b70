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

/// One judgement, two outputs: the shipped `RwtopReplicaNotRecovering` fires on exactly the
/// replicas rwtop's own `replica_not_recovering` raises, at rwtop's default settings. rwtop's
/// alert engine judges two replicas as far behind as each other, one stopped and one catching up
/// (a rule over the lag series alone cannot tell them apart); every series rwtop exposes for that
/// snapshot is fed to `promtool test rules`, held for ten minutes, and the rule must fire on the
/// stopped one at once and never on the other.
#[test]
fn the_not_recovering_rule_fires_on_rwtops_own_verdict() {
    use std::fmt::Write as _;

    let kind = rwtop::alerts::AlertKind::ReplicaNotRecovering;
    let body = judged_by_rwtop();

    // Every sample as an input series, its value held for ten minutes.
    let mut inputs = String::new();
    let mut verdict = None;
    for line in body.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let value: f64 = value.parse().expect("a number");
        let _ = writeln!(
            inputs,
            "      - series: '{}'\n        values: '{value}x10'",
            series.replace('\'', "''")
        );
        if series.starts_with("rwtop_alert_active_since_timestamp_seconds{")
            && series.contains(&format!("kind=\"{}\"", kind.name()))
        {
            assert!(verdict.is_none(), "one series per raised alert: {body}");
            verdict = Some((series.to_owned(), value));
        }
    }
    let (series, since) = verdict.unwrap_or_else(|| panic!("no verdict series in:\n{body}"));
    // The alert's labels: the series' own (an empty one is no label), `replica` named after
    // `node`, and the rule's severity.
    let inner = series
        .split_once('{')
        .and_then(|(_, rest)| rest.strip_suffix('}'))
        .expect("labels");
    let mut labels: Vec<String> = inner
        .split(',')
        .filter(|pair| !pair.ends_with("=\"\""))
        .filter(|pair| !pair.starts_with("severity="))
        .map(|pair| pair.replacen('=', ": ", 1))
        .collect();
    labels.push("replica: \"r1\"".to_owned());
    labels.push("severity: \"critical\"".to_owned());
    #[expect(clippy::cast_possible_truncation, reason = "a Unix time in seconds")]
    let since = chrono::DateTime::from_timestamp(since as i64, 0).expect("a time");
    let summary = format!(
        "r1 (eu): behind and not catching up since {} (rwtop's replica_not_recovering)",
        since.format("%Y-%m-%d %H:%M:%S +0000 UTC")
    );
    let expected = format!(
        "          - exp_labels: {{ {} }}\n            exp_annotations:\n              summary: \"{summary}\"\n",
        labels.join(", ")
    );
    let rules = deploy("prometheus/rwtop.rules.yml");
    let mut test = format!(
        "rule_files: ['{}']\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{inputs}    alert_rule_test:\n",
        rules.display()
    );
    for eval_time in ["0m", "1m", "10m"] {
        let _ = write!(
            test,
            "      - alertname: RwtopReplicaNotRecovering\n        eval_time: {eval_time}\n        \
             exp_alerts:\n{expected}"
        );
    }
    let dir = tempfile::tempdir().expect("a temp folder");
    let file = dir.path().join("not_recovering.test.yml");
    std::fs::write(&file, &test).expect("writing the test");
    let out = promtool(&["test", "rules", file.to_str().unwrap()], None);
    assert!(out.status.success(), "{}\n--- test:\n{test}", said(&out));
}

/// rwtop's exposition of a snapshot its alert engine judged at the default settings: `r1`'s SQL
/// thread stopped, its lag growing 1 s/s for longer than `not_recovering_seconds` (raised); `r2`
/// as far behind, catching up (not raised).
fn judged_by_rwtop() -> String {
    use std::sync::Arc;

    use rwtop::alerts::{AlertEngine, AlertKind, AlertSettings};
    use rwtop::store::lag::Lag;
    use rwtop::store::series::Point;
    use rwtop::store::testkit::{Topo, catching_up, falling_behind, find};

    let settings = AlertSettings::default();
    // A chart long enough for the default span, one point a second.
    let span_s = settings.not_recovering.as_secs() + 60;
    let chart = |lag: &dyn Fn(u64) -> u64| -> Arc<[Point]> {
        (0..=span_s)
            .map(|t| Point {
                at_ms: t * 1_000,
                heartbeat_lag_ms: u32::try_from(lag(t)).ok(),
                sbm_s: None,
            })
            .collect()
    };
    let mut topo = Topo::new();
    topo.snapshot.uptime = Duration::from_secs(span_s);
    let lag = Duration::from_secs(60 + span_s);
    topo.replica_mut("r1", |r| {
        r.sql_running = false;
        r.series = chart(&|t| 60_000 + t * 1_000).into();
        r.heartbeat_lag = Lag::Exact { lag };
        r.catch_up = falling_behind(0.0, 1.0);
    });
    topo.replica_mut("r2", |r| {
        r.series = chart(&|t| 60_000 + 2 * span_s * 1_000 - t * 1_000).into();
        r.heartbeat_lag = Lag::Exact { lag };
        r.catch_up = catching_up(1.0, lag);
    });
    let mut engine = AlertEngine::new(settings);
    engine.evaluate(&topo.at(1));
    let mut snapshot = topo.at(2);
    snapshot.alerts = engine.evaluate(&snapshot);
    let kind = AlertKind::ReplicaNotRecovering;
    assert!(
        find(&snapshot.alerts, kind, Some("r1")).is_some(),
        "rwtop raised it on r1"
    );
    assert!(
        find(&snapshot.alerts, kind, Some("r2")).is_none(),
        "r2 recovers"
    );
    rwtop::export::prometheus::render(&Arc::new(snapshot), "eu")
}
