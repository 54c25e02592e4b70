//! The endpoint's answers to good and bad queries over synthetic snapshots: the status, the
//! reason line, the per-replica lines and the JSON form; every bad parameter a 400 saying why.

use std::time::Duration;

use super::answer;
use crate::alerts::throttle::ThrottleSettings;
use crate::store::lag::Lag;
use crate::store::testkit::{Topo, secs};

const FRESH: Duration = Duration::from_millis(200);

fn topo() -> Topo {
    let mut t = Topo::new();
    t.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(0.1) });
    t.replica_mut("r2", |r| r.heartbeat_lag = Lag::Exact { lag: secs(4.2) });
    t
}

fn ask(query: Option<&str>) -> super::Answer {
    answer(&topo().snapshot, &ThrottleSettings::default(), query, FRESH)
}

#[test]
fn throttle_is_503_with_the_worst_first() {
    let a = ask(None);
    assert_eq!(a.status, 503);
    assert_eq!(a.reason, "r2 lag 4.20s > 1.00s (heartbeat)");
    assert_eq!(
        a.body,
        "throttle: r2 lag 4.20s > 1.00s (heartbeat)\n\
         r2 throttle: lag 4.20s > 1.00s (heartbeat)\n\
         r1 go: lag 0.10s ≤ 1.00s\n"
    );
}

#[test]
fn max_lag_replicas_and_skip_per_request() {
    let a = ask(Some("max_lag=5s"));
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(
        a.body.starts_with("go: 2 replicas at or under 5.00s"),
        "{}",
        a.body
    );
    assert_eq!(ask(Some("max_lag=4200ms")).status, 200);
    assert_eq!(ask(Some("max_lag=4.1")).status, 503);
    assert_eq!(ask(Some("replicas=r1")).status, 200);
    assert_eq!(ask(Some("replicas=r1%2Cr2")).status, 503);
    assert_eq!(ask(Some("skip=r2&max_lag=500ms")).status, 200);
    assert_eq!(ask(Some("&&max_lag=1s&")).status, 503);
}

#[test]
fn json_on_request() {
    let a = ask(Some("format=json"));
    assert_eq!(a.status, 503);
    assert!(a.json);
    let doc: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(doc["throttle"], true);
    assert_eq!(doc["reason"], "r2 lag 4.20s > 1.00s (heartbeat)");
    assert_eq!(doc["max_lag_seconds"], 1.0);
    assert_eq!(doc["replicas"][0]["place"], "r2");
    assert_eq!(doc["replicas"][0]["lag_kind"], "exact");
    assert_eq!(doc["replicas"][0]["lag_seconds"], 4.2);
    assert_eq!(doc["replicas"][1]["throttle"], false);
}

#[test]
fn bad_requests_are_400_with_why() {
    let cases = [
        ("max_lag=fast", "max_lag: found \"fast\""),
        ("max_lag=-1s", "it must be positive"),
        ("max_lag=0", "more than zero"),
        ("max_lag=", "max_lag: found \"\""),
        ("max_lag", "parameter \"max_lag\" has no value"),
        ("max_lag=1s&max_lag=2s", "max_lag is given twice"),
        (
            "lag=1s",
            "unknown parameter \"lag\": /throttle takes max_lag",
        ),
        (
            "replicas=r9",
            "replicas: no node named \"r9\" is watched; rwtop watches db1, r1, r2",
        ),
        ("skip=r1,nope", "skip: no node named \"nope\""),
        ("replicas=,", "replicas names no node"),
        ("format=xml", "format: found \"xml\", expected text or json"),
        ("max_lag=%zz", "bad %-escape"),
        ("max_lag=%ff", "is not UTF-8"),
        ("%3Cscript%3E=1", "unknown parameter \"<script>\""),
    ];
    for (query, expected) in cases {
        let a = ask(Some(query));
        assert_eq!(a.status, 400, "{query}: {}", a.body);
        assert!(a.body.starts_with("bad request: "), "{query}: {}", a.body);
        assert!(a.body.contains(expected), "{query}: {}", a.body);
        assert_eq!(a.body.lines().count(), 1, "{query}: {}", a.body);
    }
}

#[test]
fn a_long_value_is_quoted_cut() {
    let long = "x".repeat(10_000);
    let a = ask(Some(&format!("max_lag={long}")));
    assert_eq!(a.status, 400);
    assert!(a.body.len() < 1_000, "{}", a.body.len());
}
