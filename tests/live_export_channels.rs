//! Every channel in the outputs, on real servers (`docs/design.md`, "Channels and roots"): with
//! the SQL thread of the aggregator's channel 'p2' stopped, `/metrics` (from `rwtop serve`) and
//! `rwtop snapshot --json` (the binary) both carry agg's two channels, 'p2' stopped and falling
//! behind, the default channel healthy, each labelled with its own source.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{TestSandbox, eventually, rwtop};
use rwtop::mysql::ThreadControl;
use rwtop::sandbox::{AGGREGATOR, SECOND_CHANNEL, SECOND_PRIMARY};
use serde_json::Value;
use serve::Serve;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Loose: two cores shared by every test binary and other builds.
const DEADLINE: Duration = Duration::from_secs(90);

/// agg's default channel (from `primary`) and channel 'p2' (from the second primary `p2`).
const DEFAULT: (&str, &str) = ("primary", "");
const P2: (&str, &str) = (SECOND_PRIMARY, SECOND_CHANNEL);

/// Now on the wall clock, in Unix seconds (as `rwtop_snapshot_timestamp_seconds`).
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// A sample of the exposition: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// `GET /metrics`, parsed: every sample line.
async fn scrape(addr: SocketAddr) -> Vec<Sample> {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connecting to /metrics");
    let request = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sending");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.expect("reading");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a header block");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(sample)
        .collect()
}

/// `name{k="v",...} value`, escapes undone.
fn sample(line: &str) -> Sample {
    let (series, value) = line.rsplit_once(' ').expect("a value");
    let value = value
        .parse()
        .unwrap_or_else(|_| panic!("bad value in {line:?}"));
    let Some((name, rest)) = series.split_once('{') else {
        return (series.to_owned(), BTreeMap::new(), value);
    };
    let mut labels = BTreeMap::new();
    let mut chars = rest.chars();
    let (mut key, mut text, mut quoted) = (String::new(), String::new(), false);
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (false, '=' | ',' | '}') => {}
            (false, '"') => quoted = true,
            (false, c) => key.push(c),
            (true, '\\') => text.push(match chars.next() {
                Some('n') => '\n',
                Some(c) => c,
                None => panic!("dangling escape in {line:?}"),
            }),
            (true, '"') => {
                quoted = false;
                labels.insert(std::mem::take(&mut key), std::mem::take(&mut text));
            }
            (true, c) => text.push(c),
        }
    }
    (name.to_owned(), labels, value)
}

/// The value of `name` for one of agg's channels (`extra`: further labels); `None` when absent.
fn agg(m: &[Sample], name: &str, channel: (&str, &str), extra: &[(&str, &str)]) -> Option<f64> {
    let (source, channel) = channel;
    let want = [
        ("replica", AGGREGATOR),
        ("source", source),
        ("channel", channel),
    ];
    let found: Vec<f64> = m
        .iter()
        .filter(|(n, l, _)| {
            n == name
                && want
                    .iter()
                    .chain(extra)
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| *v)
        .collect();
    assert!(found.len() <= 1, "{name} {channel:?} {extra:?}: {found:?}");
    found.first().copied()
}

/// Every replica sample of agg carries one of its two channels' label sets, and each family
/// written for either channel is written for both (but those absent by design: SBM while NULL,
/// the upper bound of an exact lag): series join.
fn label_sets_join(m: &[Sample]) {
    let mut families: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
    for (name, labels, _) in m {
        // The failover exposure's series are a root's cluster, labelled by root, not channel
        // series: their own tests check them.
        if labels.get("replica").map(String::as_str) != Some(AGGREGATOR)
            || name.starts_with("rwtop_exposure_")
        {
            continue;
        }
        let label = |k: &str| labels.get(k).map_or("?", String::as_str);
        let place = (label("source"), label("channel"));
        assert!(place == DEFAULT || place == P2, "{name} {labels:?}");
        families.entry(name.as_str()).or_default().insert(place);
    }
    assert!(families.len() >= 14, "{families:?}");
    for (name, places) in families {
        let absent_by_design = [
            "rwtop_replica_sbm_seconds",
            "rwtop_replica_heartbeat_lag_upper_bound_seconds",
        ];
        if !absent_by_design.contains(&name) {
            assert_eq!(places.len(), 2, "{name} on one channel only: {places:?}");
        }
    }
}

fn snapshot_json(config: &Path) -> Value {
    let config = config.to_str().expect("a UTF-8 path");
    let args = ["--config", config, "snapshot", "--json", "--duration", "4s"];
    let out = rwtop(&args, &[("RWTOP_PASSWORD", None)]);
    assert!(
        out.status.success(),
        "snapshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn number(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// agg in the JSON of a new process, `since_stop` seconds after p2's SQL thread stopped: both
/// channels; p2 stopped, its lag bounded from below (this process's first heartbeat is never
/// applied) and from above by the age of the row it shows, at least the time since the stop.
fn json_shows_both_channels(doc: &Value, since_stop: f64) {
    assert_eq!(doc["schema_version"], rwtop::export::json::SCHEMA_VERSION);
    let node = doc["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["name"] == AGGREGATOR))
        .unwrap_or_else(|| panic!("no agg in {doc:#}"));
    let channels = node["channels"].as_array().expect("channels");
    let names: Vec<&Value> = channels.iter().map(|c| &c["channel"]).collect();
    assert_eq!(names, ["", SECOND_CHANNEL], "{node:#}");
    let (default, p2) = (&channels[0], &channels[1]);
    assert_eq!(default["source"], "primary");
    assert_eq!(default["sql_running"], true);
    assert_eq!(default["io_running"], "yes");
    assert_eq!(
        default["heartbeat_lag_seconds"]["kind"], "exact",
        "{default:#}"
    );
    assert!(number(&default["heartbeat_lag_seconds"]["now"]) < 2.0);
    assert_eq!(p2["source"], SECOND_PRIMARY);
    assert_eq!(p2["sql_running"], false);
    assert_eq!(p2["io_running"], "yes");
    assert_eq!(p2["seconds_behind_source"], Value::Null, "NULL stays null");
    let lag = &p2["heartbeat_lag_seconds"];
    assert_eq!(lag["kind"], "at_least", "{p2:#}");
    assert!(number(&lag["now"]) > 0.0, "{lag}");
    assert!(
        number(&lag["upper_bound"]) >= since_stop - 1.0,
        "{lag} {since_stop}"
    );
    assert!(
        p2["source_address"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:")),
        "{p2:#}"
    );
    // The 1.3 fields describe the default channel.
    assert_eq!(node["sql_running"], true);
    assert_eq!(node["heartbeat_lag_seconds"]["kind"], "exact");
    let alerts = doc["alerts"].as_array().expect("alerts");
    assert!(
        alerts.iter().any(|a| a["kind"] == "sql_thread_stopped"
            && a["node"] == AGGREGATOR
            && a["channel"] == SECOND_CHANNEL),
        "{alerts:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_stopped_channel_shows_beside_the_healthy_one_in_metrics_and_json() {
    let t = TestSandbox::start_multi_source(1);
    let config: PathBuf = t.sandbox().dir().join("rwtop.toml");
    let serve = Serve::start(&config);
    let addr = serve.addr;

    // Both channels measured and caught up, each under its own source.
    eventually(
        "agg's two channels caught up in /metrics",
        DEADLINE,
        async || {
            let m = scrape(addr).await;
            let ok = [DEFAULT, P2].iter().all(|c| {
                let exact = [("state", "exact")];
                agg(&m, "rwtop_replica_heartbeat_lag_state", *c, &exact) == Some(1.0)
                    && agg(&m, "rwtop_replica_heartbeat_lag_seconds", *c, &[])
                        .is_some_and(|l| l < 0.5)
                    && agg(&m, "rwtop_replica_sql_thread_running", *c, &[]) == Some(1.0)
            });
            ok.then_some(())
        },
    )
    .await;

    // p2's SQL thread stops from a connection already open (an account of the test's own on
    // agg, unlogged): the stop takes the statement's milliseconds, timed on the wall clock the
    // snapshot's timestamp is on.
    t.admin(
        AGGREGATOR,
        "SET sql_log_bin = 0; \
         CREATE USER 'dba'@'127.0.0.1' IDENTIFIED BY 'dba-test-only'; \
         GRANT ALL ON *.* TO 'dba'@'127.0.0.1'",
    );
    let mut dba = t
        .connect_as(
            AGGREGATOR,
            ("dba", "dba-test-only"),
            Duration::from_secs(10),
        )
        .await;
    let stop = t
        .sandbox()
        .binaries()
        .flavor
        .channel_thread_sql(ThreadControl::StopSql, SECOND_CHANNEL);
    let stopped_at = Instant::now();
    let begin = unix_now();
    dba.query_rows(&stop)
        .await
        .expect("stopping p2's SQL thread");
    let done = unix_now();
    let behind = |m: &[Sample]| agg(m, "rwtop_replica_heartbeat_lag_seconds", P2, &[]);
    let (m, first) = eventually(
        "p2 stopped and 2 s behind, '' healthy",
        DEADLINE,
        async || {
            let m = scrape(addr).await;
            let healthy = agg(&m, "rwtop_replica_sql_thread_running", DEFAULT, &[]) == Some(1.0)
                && agg(&m, "rwtop_replica_heartbeat_lag_seconds", DEFAULT, &[])
                    .is_some_and(|l| l < 2.0);
            let stopped = agg(&m, "rwtop_replica_sql_thread_running", P2, &[]) == Some(0.0);
            let lag = behind(&m).filter(|lag| *lag >= 2.0)?;
            let alerted = m.iter().any(|(n, l, _)| {
                n == "rwtop_alert_active_since_timestamp_seconds"
                    && l.get("kind").map(String::as_str) == Some("sql_thread_stopped")
                    && l.get("node").map(String::as_str) == Some(AGGREGATOR)
                    && l.get("channel").map(String::as_str) == Some(SECOND_CHANNEL)
            });
            (healthy && stopped && alerted).then_some((m, lag))
        },
    )
    .await;
    // The time since the stop when the snapshot was taken, within the estimator's half
    // heartbeat interval and a busy machine's margin either way: a bias of half a second
    // fails.
    let taken = m
        .iter()
        .find(|(n, _, _)| n == "rwtop_snapshot_timestamp_seconds")
        .map(|(_, _, v)| *v)
        .expect("the snapshot's timestamp");
    let (low, high) = (taken - done, taken - begin);
    eprintln!("p2's lag {first} s, stopped {low:.3}..{high:.3} s before the snapshot");
    assert!(done - begin <= 0.1, "the stop took {:.3} s", done - begin);
    assert!(
        first >= low - 0.2 && first <= high + 0.2,
        "p2's lag {first} s for a stop {low:.3}..{high:.3} s before the snapshot"
    );
    assert_eq!(agg(&m, "rwtop_replica_sbm_null", P2, &[]), Some(1.0));
    assert_eq!(agg(&m, "rwtop_replica_sbm_null", DEFAULT, &[]), Some(0.0));
    let io = [("state", "yes")];
    assert_eq!(agg(&m, "rwtop_replica_io_thread_state", P2, &io), Some(1.0));
    label_sets_join(&m);

    // And it keeps growing while the default channel stays caught up.
    eventually("p2's lag growing by 1 s", DEADLINE, async || {
        let m = scrape(addr).await;
        let healthy = agg(&m, "rwtop_replica_sql_thread_running", DEFAULT, &[]) == Some(1.0);
        (healthy && behind(&m)? >= first + 1.0).then_some(())
    })
    .await;
    assert!(serve.stop().success(), "serve ends cleanly on SIGTERM");

    // The JSON of a new process.
    let since_stop = stopped_at.elapsed().as_secs_f64();
    let doc = tokio::task::spawn_blocking(move || snapshot_json(&config))
        .await
        .expect("the snapshot ran");
    json_shows_both_channels(&doc, since_stop);

    t.sandbox()
        .channel_threads(AGGREGATOR, SECOND_CHANNEL, ThreadControl::StartSql)
        .expect("starting p2's SQL thread");
}
