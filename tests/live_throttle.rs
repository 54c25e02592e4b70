//! `GET`/`HEAD /throttle` over real HTTP against a real sandbox: 200 while every replica is
//! caught up; a stalled link (both threads `Yes`, `Seconds_Behind_Master` 0) to a replica rwtop
//! only discovered throttles with a reason naming it, and back to 200 once the link recovers;
//! `HEAD` gives the same status with no body (gh-ost's contract); per-request parameters
//! override the limit and the cover; bad queries get 400 with why and the server keeps
//! answering; `rwtop_throttle` on `/metrics` follows the verdict. An engine that hangs while the
//! endpoint keeps answering: "go" from its last snapshot until that snapshot is older than the
//! limit, then a refusal that says so.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::engine_thread::EngineThread;
use common::http::{Response, http, serve_throttle_from, serve_with_throttle};
use common::{Load, TestSandbox, exact, primary_and, until};
use rwtop::alerts::throttle::STALE_SNAPSHOT;
use rwtop::engine::Engine;

const DEADLINE: Duration = Duration::from_secs(60);
/// From the stall to the 503: the lag must first pass the 1 s limit (the newest heartbeat
/// through was written up to 250 ms before the stall, so 0.75–1 s after it), then a heartbeat
/// read (250 ms) and a publication (250 ms) show it: 1.5 s at most. The last second is a busy
/// two-core machine's margin (this file's queries, the test's 100 ms asking). An endpoint that
/// read `Seconds_Behind_Master` would never get there; one that let the lag run a second past
/// the limit, or waited for a run of bad readings, would come after.
const THROTTLE_WITHIN: Duration = Duration::from_millis(2500);
/// How near the stale limit the endpoint must still answer "go" from a hung engine's last
/// snapshot, and how soon past it it must refuse: the test asks every 100 ms, and an answer on a
/// busy machine can take a few hundred.
const STALE_MARGIN: Duration = Duration::from_secs(1);

/// Asks `GET target` every 100 ms until the status is `status`; returns the answer and when.
async fn until_status(addr: SocketAddr, target: &str, status: u16, what: &str) -> Response {
    let start = Instant::now();
    loop {
        let r = http(addr, "GET", target).await;
        if r.status == status {
            return r;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{what}: no {status} within {DEADLINE:?}; last {}: {}",
            r.status,
            r.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn metric(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix(name)?;
            let value = rest.rsplit(' ').next()?;
            (rest.starts_with('{') || rest.starts_with(' ')).then(|| value.to_owned())
        })
        .unwrap_or_else(|| panic!("no {name} in the scrape"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_throttle_follows_a_stalled_link_sbm_hides() {
    let t = TestSandbox::start_with_relay(2);
    // r2 is not named: rwtop finds it by discovery, and the throttle must cover it too.
    let mut spec = primary_and(&t, &["r1"]);
    spec.discovery = true;
    let engine = Engine::start(&spec);
    let (addr, server) = serve_with_throttle(&engine).await;
    let _load = Load::start(&t).await;
    until(&engine, "r2 discovered, both caught up", DEADLINE, |s| {
        let caught_up = ["r1", "r2"]
            .iter()
            .all(|r| exact(s, r) == Some(Duration::ZERO));
        (caught_up && !s.node("r2")?.configured).then_some(())
    })
    .await;

    let go = until_status(addr, "/throttle", 200, "caught up").await;
    eprintln!("caught up:\n{}", go.body);
    assert!(
        go.body
            .starts_with("go: 2 replicas at or under 1.00s heartbeat lag"),
        "{}",
        go.body
    );
    assert!(
        go.body.lines().any(|l| l.starts_with("r2 go: lag")),
        "{}",
        go.body
    );
    assert!(!go.headers.contains_key("retry-after"));
    let head = http(addr, "HEAD", "/throttle").await;
    assert_eq!((head.status, head.body.as_str()), (200, ""));
    let scrape = http(addr, "GET", "/metrics").await;
    assert_eq!(metric(&scrape.body, "rwtop_throttle"), "0");

    // The stall: the relay holds the connection open and silent.
    t.relay("r2").stall();
    let stalled = Instant::now();
    let throttled = until_status(addr, "/throttle", 503, "the stalled link").await;
    let took = stalled.elapsed();
    eprintln!("throttled {took:?} after the stall:\n{}", throttled.body);
    let first = throttled.body.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("throttle: r2 lag ") && first.contains(" > 1.00s (heartbeat"),
        "{first}"
    );
    assert!(took <= THROTTLE_WITHIN, "throttled only after {took:?}");
    assert_eq!(
        throttled.headers.get("retry-after").map(String::as_str),
        Some("1")
    );
    assert!(
        throttled.body.lines().any(|l| l.starts_with("r1 go: lag")),
        "{}",
        throttled.body
    );
    // The lie the throttle is not fooled by: r2's server says both threads run, 0 s behind.
    let status = t.admin("r2", "SHOW SLAVE STATUS");
    assert_eq!(status[0].optional_text(&["Slave_IO_Running"]), Some("Yes"));
    assert_eq!(
        status[0].optional_text(&["Seconds_Behind_Master"]),
        Some("0"),
        "{status:?}"
    );

    while_throttled(addr).await;

    // Recovery: the link forwards again, r2 catches up, and the answer is go again.
    t.relay("r2").resume();
    let resumed = Instant::now();
    let go = until_status(addr, "/throttle", 200, "the link recovered").await;
    eprintln!("go again {:?} after the link resumed", resumed.elapsed());
    assert!(go.body.starts_with("go: 2 replicas"), "{}", go.body);
    let scrape = http(addr, "GET", "/metrics").await;
    assert_eq!(metric(&scrape.body, "rwtop_throttle"), "0");

    server.shutdown().await;
    engine.shutdown().await;
}

/// What the endpoint answers while r2 throttles: `HEAD`, per-request parameters, JSON, bad
/// queries (400, and the next request still answered) and the gauge.
async fn while_throttled(addr: SocketAddr) {
    // HEAD: the same status, no body, the reason in a header.
    let head = http(addr, "HEAD", "/throttle").await;
    assert_eq!((head.status, head.body.as_str()), (503, ""));
    let header = head
        .headers
        .get("x-rwtop-throttle")
        .cloned()
        .unwrap_or_default();
    assert!(header.starts_with("r2 lag "), "{header}");

    // Per request: a looser limit, or a cover without r2, is go; JSON on request.
    for target in [
        "/throttle?max_lag=1h",
        "/throttle?skip=r2",
        "/throttle?replicas=r1",
    ] {
        let r = http(addr, "GET", target).await;
        assert_eq!(r.status, 200, "{target}: {}", r.body);
    }
    let r = http(addr, "GET", "/throttle?format=json&replicas=r1,r2").await;
    assert_eq!(r.status, 503);
    assert_eq!(
        r.headers.get("content-type").map(String::as_str),
        Some("application/json")
    );
    let doc: serde_json::Value = serde_json::from_str(&r.body).expect("JSON");
    assert_eq!(doc["throttle"], true);
    assert_eq!(doc["replicas"][0]["place"], "r2");
    assert!(
        doc["replicas"][0]["lag_seconds"].as_f64().unwrap_or(0.0) > 1.0,
        "{doc}"
    );

    // Bad queries: 400 with why, and the server keeps answering.
    for (target, why) in [
        ("/throttle?max_lag=soon", "max_lag: found \"soon\""),
        ("/throttle?max_lag=1s&max_lag=2s", "given twice"),
        ("/throttle?lag=1", "unknown parameter \"lag\""),
        ("/throttle?replicas=r9", "no node named \"r9\" is watched"),
        ("/throttle?max_lag", "has no value"),
        ("/throttle?%ZZ=1", "bad %-escape"),
    ] {
        let r = http(addr, "GET", target).await;
        assert_eq!(r.status, 400, "{target}: {}", r.body);
        assert!(
            r.body.starts_with("bad request: ") && r.body.contains(why),
            "{target}: {}",
            r.body
        );
    }
    let post = http(addr, "POST", "/throttle").await;
    assert_eq!(post.status, 405);
    assert_eq!(http(addr, "GET", "/throttle").await.status, 503);
    let scrape = http(addr, "GET", "/metrics").await;
    assert_eq!(metric(&scrape.body, "rwtop_throttle"), "1");
}

/// How old `snapshot` is now, by the wall clock it was stamped with (as the endpoint ages it).
fn age(snapshot: &rwtop::store::Snapshot) -> Duration {
    (chrono::Utc::now() - snapshot.taken_at)
        .to_std()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_throttle_refuses_once_a_hung_engines_snapshot_is_stale() {
    let t = TestSandbox::start(1, false);
    let engine = EngineThread::start(&primary_and(&t, &["r1"]));
    let (addr, server) = serve_throttle_from(engine.snapshots()).await;
    let mut rx = engine.snapshots();
    let caught_up = async {
        loop {
            if exact(&rx.borrow_and_update(), "r1") == Some(Duration::ZERO) {
                return;
            }
            rx.changed().await.expect("the engine publishes");
        }
    };
    tokio::time::timeout(DEADLINE, caught_up)
        .await
        .expect("r1 caught up");
    until_status(addr, "/throttle", 200, "caught up").await;

    // The engine hangs: nothing polls or publishes, and the endpoint still answers.
    let (hung, last) = engine.hang().await;
    let hung_at = age(&last);
    let mut answers: Vec<(Duration, u16)> = Vec::new();
    let refused = loop {
        let asked_at = age(&last);
        let r = http(addr, "GET", "/throttle").await;
        answers.push((asked_at, r.status));
        if r.status != 200 {
            break r;
        }
        assert!(
            asked_at <= STALE_SNAPSHOT + STALE_MARGIN,
            "still go with a snapshot {asked_at:?} old: {}",
            r.body
        );
        assert!(r.body.starts_with("go: "), "{}", r.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (refused_at, _) = answers[answers.len() - 1];
    let last_go = answers
        .iter()
        .rev()
        .find(|(_, status)| *status == 200)
        .map(|(at, _)| *at);
    eprintln!(
        "hung with a snapshot {hung_at:?} old; last go asked at {last_go:?}, refused asked at \
         {refused_at:?} ({} answers):\n{}",
        answers.len(),
        refused.body
    );
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(
        refused
            .body
            .starts_with("throttle: rwtop's newest snapshot is ")
            && refused.body.contains("the engine is not publishing"),
        "{}",
        refused.body
    );
    // Not before the limit: up to it, the last snapshot still stands for the replicas.
    assert!(
        refused_at + STALE_MARGIN >= STALE_SNAPSHOT,
        "refused at {refused_at:?}"
    );
    assert!(
        last_go.is_some_and(|at| at + STALE_MARGIN >= STALE_SNAPSHOT),
        "the last go was asked at {last_go:?}: {answers:?}"
    );
    let head = http(addr, "HEAD", "/throttle").await;
    assert_eq!(head.status, 503);
    let header = head.headers.get("x-rwtop-throttle").cloned();
    assert!(
        header
            .as_deref()
            .is_some_and(|h| h.starts_with("rwtop's newest snapshot is ")),
        "{header:?}"
    );
    let json = http(addr, "GET", "/throttle?format=json").await;
    let doc: serde_json::Value = serde_json::from_str(&json.body).expect("JSON");
    let said = doc["snapshot_age_seconds"].as_f64().unwrap_or_default();
    assert!(
        doc["throttle"] == true && said > STALE_SNAPSHOT.as_secs_f64(),
        "{doc}"
    );
    // Unhung, the engine publishes again and the answer follows the replicas.
    drop(hung);
    let go = until_status(addr, "/throttle", 200, "the engine publishing again").await;
    assert!(go.body.starts_with("go: 1 replica"), "{}", go.body);
    server.shutdown().await;
    engine.shutdown();
}
