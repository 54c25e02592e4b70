//! Semi-sync health on a real semi-sync sandbox (one primary, two replicas, each link through a
//! relay): the ACK wait rwtop derives from the server's totals against commit times the test
//! measures itself while one replica's link is stalled (no semi-sync alert while that one replica
//! acks all it must), then the fall-back to async raised on the first sample that shows it,
//! within one poll and one publication of the server turning its status OFF, and cleared once
//! replicas ack again.

mod common;

use std::time::{Duration, Instant};

use common::{TestSandbox, alert, dba, primary_and, record_snapshots, until};
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, PUBLISH_EVERY};
use rwtop::mysql::NodeConn;
use rwtop::store::Snapshot;
use rwtop::store::semisync::{SemiSyncState, SemiSyncView};
use rwtop::store::windows::Window;

const DEADLINE: Duration = Duration::from_secs(30);
/// How long each stalled commit's ACK is held up.
const STALL: Duration = Duration::from_millis(600);
/// What a busy two-core machine adds to the fall-back's one poll and one publication: the poll's
/// own statements (a dozen round trips to a server that shares the cores) and the test's wake-up
/// on the published snapshot.
const BUSY_MACHINE: Duration = Duration::from_millis(400);

/// The semi-sync alerts, whichever node they are on.
const SEMISYNC_ALERTS: [AlertKind; 3] = [
    AlertKind::SemisyncFellBack,
    AlertKind::SemisyncAcksShort,
    AlertKind::SemisyncUnackedCommits,
];

fn semi(s: &Snapshot) -> Option<&SemiSyncView> {
    s.node("primary")?.semisync()
}

/// Commits one row and returns how long the commit took as the client saw it.
async fn commit(conn: &mut NodeConn) -> Duration {
    let began = Instant::now();
    conn.query_rows("INSERT INTO rwtop.semi (v) VALUES (1)")
        .await
        .unwrap_or_else(|e| panic!("commit: {e}"));
    began.elapsed()
}

/// When the primary's `Rpl_semi_sync_master_status` first reads `want`, watched every 20 ms on a
/// connection of its own.
fn status_turns(t: &TestSandbox, want: &'static str) -> tokio::task::JoinHandle<Instant> {
    let endpoint = t.sandbox().endpoint("primary").expect("endpoint");
    tokio::spawn(async move {
        let mut conn = NodeConn::connect(&endpoint, rwtop::mysql::Timeouts::default())
            .await
            .expect("connecting the watcher");
        let deadline = Instant::now() + DEADLINE;
        loop {
            let rows = conn
                .query_rows("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_status'")
                .await
                .expect("reading the status");
            let value = rows
                .first()
                .and_then(|r| r.optional_text(&["Value"]))
                .unwrap_or_default()
                .to_owned();
            if value == want {
                return Instant::now();
            }
            assert!(Instant::now() < deadline, "status never read {want}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

/// The semi-sync alerts active in `s`, as `kind: cause`.
fn semisync_alerts(s: &Snapshot) -> Vec<String> {
    s.alerts
        .active
        .iter()
        .filter(|a| SEMISYNC_ALERTS.contains(&a.kind))
        .map(|a| format!("{}: {}", a.kind.name(), a.cause))
        .collect()
}

fn sorted(mut v: Vec<Duration>) -> Vec<Duration> {
    v.sort_unstable();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one sandbox, one scenario, read top to bottom"
)]
async fn live_semisync_ack_wait_and_fall_back() {
    let t = TestSandbox::start_semisync_with_relay(2);
    t.admin(
        "primary",
        "SET GLOBAL rpl_semi_sync_master_timeout = 1500; \
         CREATE TABLE rwtop.semi (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT); \
         CREATE DATABASE percona; \
         CREATE TABLE percona.heartbeat (ts VARCHAR(26) NOT NULL, \
           server_id INT UNSIGNED NOT NULL PRIMARY KEY); \
         GRANT SELECT ON percona.* TO 'rwtop'@'127.0.0.1'",
    );
    let (mut r1, mut r2) = (dba(&t, "r1").await, dba(&t, "r2").await);
    // No heartbeat writer (read-only mode, over an empty pt-heartbeat table): the test's
    // commits are the only ones, so each poll interval's average is of commits it timed.
    let mut spec = primary_and(&t, &["r1", "r2"]);
    spec.read_only = true;
    let engine = Engine::start(&spec);
    // The fall-back is stated by the server and read on every poll: it shows on the next poll
    // after the status turns OFF, and the store publishes that poll within one publication.
    let raise_within = spec.interval + PUBLISH_EVERY + BUSY_MACHINE;
    let mut app = t.connect("primary").await;
    until(
        &engine,
        "semi-sync active with 2 acking replicas",
        DEADLINE,
        |s| {
            let v = semi(s)?;
            (v.state == Some(SemiSyncState::Active) && v.clients == Some(2)).then_some(())
        },
    )
    .await;

    // Unhindered commits, about ten a second for 6 s.
    let mut quick = Vec::new();
    for _ in 0..60 {
        quick.push(commit(&mut app).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let quick = sorted(quick);
    let (before, _) = until(&engine, "ACK waits of the quick commits", DEADLINE, |s| {
        semi(s)?
            .window(Window::OneMinute)
            .filter(|w| w.intervals >= 5)
    })
    .await;
    eprintln!(
        "quick commits: client median {:?} max {:?}; rwtop ACK wait P50 {:?} P99 {:?} over {} \
         intervals",
        quick[quick.len() / 2],
        quick[quick.len() - 1],
        before.p50,
        before.p99,
        before.intervals
    );
    // The server's wait is part of the client's commit time.
    assert!(before.p99 <= quick[quick.len() - 1], "{before:?}");

    // Only r1 acks now, and its link is stalled for each of four commits.
    r2.query_rows("STOP SLAVE IO_THREAD").await.unwrap();
    until(&engine, "one acking replica", DEADLINE, |s| {
        (semi(s)?.clients == Some(1)).then_some(())
    })
    .await;
    // One replica acks every commit within the timeout: one ACK is all a commit needs, so no
    // semi-sync alert may be raised from here to the end of the phase.
    let (phase_over, one_acking) = record_snapshots(&engine, semisync_alerts);
    let at_start = semisync_alerts(&engine.latest());
    assert!(at_start.is_empty(), "{at_start:?}");
    let mut stalled = Vec::new();
    for _ in 0..4 {
        t.relay("r1").stall();
        let resume = tokio::spawn(async {
            tokio::time::sleep(STALL).await;
        });
        let took = {
            let commit = commit(&mut app);
            tokio::pin!(commit);
            tokio::select! {
                took = &mut commit => took,
                _ = resume => {
                    t.relay("r1").resume();
                    commit.await
                }
            }
        };
        t.relay("r1").resume();
        stalled.push(took);
        tokio::time::sleep(Duration::from_millis(1200)).await;
    }
    let stalled = sorted(stalled);
    let (after, _) = until(&engine, "ACK waits of the stalled commits", DEADLINE, |s| {
        semi(s)?
            .window(Window::OneMinute)
            .filter(|w| w.intervals >= before.intervals + 4)
    })
    .await;
    let _ = phase_over.send(());
    let raised = one_acking.await.unwrap();
    assert!(
        raised.is_empty(),
        "a semi-sync alert while one replica acked every commit: {raised:?}"
    );
    eprintln!(
        "stalled commits: client {stalled:?}; rwtop ACK wait P50 {:?} P99 {:?} max {:?} over {} \
         intervals",
        after.p50, after.p99, after.max, after.intervals
    );
    let (least, most) = (stalled[0], stalled[stalled.len() - 1]);
    assert!(least >= STALL, "a stalled commit took {least:?}");
    // P99 of the per-interval averages is the worst interval: one stalled commit alone, which
    // waited all but the client's own round trip and statement of its time.
    assert!(
        after.p99 <= most && after.p99 + Duration::from_millis(150) >= least,
        "P99 {:?} against stalled commits of {least:?}..{most:?}",
        after.p99
    );
    // The median stays with the quick intervals, which outnumber the stalled ones.
    assert!(
        after.p50 <= quick[quick.len() * 9 / 10] + Duration::from_millis(5),
        "P50 {:?} against quick commits up to {:?}",
        after.p50,
        quick[quick.len() * 9 / 10]
    );

    // Every replica stops receiving, and one commit waits out the timeout.
    r2.query_rows("START SLAVE IO_THREAD").await.unwrap();
    until(&engine, "two acking replicas again", DEADLINE, |s| {
        (semi(s)?.clients == Some(2)).then_some(())
    })
    .await;
    t.admin("primary", "SET GLOBAL rpl_semi_sync_master_timeout = 1000");
    r1.query_rows("STOP SLAVE IO_THREAD").await.unwrap();
    r2.query_rows("STOP SLAVE IO_THREAD").await.unwrap();
    // Every snapshot from before the fall-back: whether it shows the state, and the alert.
    let (seen_enough, shown) = record_snapshots(&engine, |s| {
        let fell_back = semi(s).and_then(|v| v.state) == Some(SemiSyncState::FellBack);
        let raised = alert(s, AlertKind::SemisyncFellBack, Some("primary")).is_some();
        Some((fell_back, raised))
    });
    let off = status_turns(&t, "OFF");
    let waited = commit(&mut app).await;
    let off = off.await.unwrap();
    let (fell, _) = until(&engine, "semisync_fell_back", DEADLINE, |s| {
        alert(s, AlertKind::SemisyncFellBack, Some("primary"))
    })
    .await;
    let delay = Instant::now().saturating_duration_since(off);
    let _ = seen_enough.send(());
    let shown = shown.await.unwrap();
    eprintln!(
        "the commit waited {waited:?}; fell-back alert {delay:?} after the status read OFF \
         (bound {raise_within:?}): {}",
        fell.cause
    );
    assert!(waited >= Duration::from_millis(950), "{waited:?}");
    // Raised on its first sample: the first snapshot that shows the state OFF carries the alert.
    let first = shown.iter().position(|(fell_back, _)| *fell_back);
    assert!(
        first.is_some_and(|i| shown[i].1),
        "the first snapshot showing the fall-back has no alert (fell back, raised): {shown:?}"
    );
    assert!(delay <= raise_within, "raised {delay:?} after OFF");
    assert!(
        fell.cause.contains("primary") && fell.cause.contains("0 of 1"),
        "{}",
        fell.cause
    );

    // Commits go out without an ACK while it is async: the symptoms join the fall-back's incident.
    for _ in 0..12 {
        assert!(commit(&mut app).await < Duration::from_millis(500));
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (folded, _) = until(
        &engine,
        "unacked commits under the fall-back",
        DEADLINE,
        |s| {
            let unacked = alert(s, AlertKind::SemisyncUnackedCommits, Some("primary"))?;
            let short = alert(s, AlertKind::SemisyncAcksShort, Some("primary"))?;
            Some((unacked, short))
        },
    )
    .await;
    for a in [&folded.0, &folded.1] {
        assert_eq!(
            a.membership.caused_by.as_deref(),
            Some("semisync_fell_back:primary"),
            "{a:?}"
        );
    }
    eprintln!("unacked: {}", folded.0.cause);

    // Replicas back: the primary acks again and the alert clears.
    r1.query_rows("START SLAVE IO_THREAD").await.unwrap();
    r2.query_rows("START SLAVE IO_THREAD").await.unwrap();
    let on = status_turns(&t, "ON");
    commit(&mut app).await;
    let on = on.await.unwrap();
    until(&engine, "fall-back cleared", DEADLINE, |s| {
        alert(s, AlertKind::SemisyncFellBack, Some("primary"))
            .is_none()
            .then_some(())
    })
    .await;
    let cleared = Instant::now().saturating_duration_since(on);
    eprintln!("cleared {cleared:?} after the status read ON");
    assert!(cleared <= Duration::from_secs(6), "{cleared:?}");
    engine.shutdown().await;
}
