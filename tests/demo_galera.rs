//! `rwtop demo --galera`'s script against real galera-4 members, on the fast timeline: each
//! incident is narrated in order, and rwtop's engine names its cause while it lasts: n3
//! desynced by a backup's read lock (`galera_not_synced`, with its lag), n3 sending flow
//! control (`galera_flow_control` on n3), n2 cut off (`galera_not_primary`, its lag a bound).
//! After the round every member is back, caught up, and no alert is left.

mod common;

use std::time::{Duration, Instant};

use common::until;
use rwtop::alerts::AlertKind;
use rwtop::demo::{Demo, Timeline};
use rwtop::engine::Engine;
use rwtop::store::Snapshot;
use tokio::sync::{mpsc, watch};

const LINE_DEADLINE: Duration = Duration::from_secs(60);
const DEADLINE: Duration = Duration::from_secs(60);

/// Waits for a narration line containing `needle`; every line read is printed.
async fn narrated(rx: &mut mpsc::Receiver<String>, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let left = LINE_DEADLINE.saturating_sub(start.elapsed());
        match tokio::time::timeout(left, rx.recv()).await {
            Ok(Some(line)) => {
                eprintln!("narration: {line}");
                if line.contains(needle) {
                    return line;
                }
            }
            Ok(None) => panic!("the script ended before {needle:?}"),
            Err(tokio::time::error::Elapsed { .. }) => {
                panic!("no {needle:?} within {LINE_DEADLINE:?}")
            }
        }
    }
}

fn active(s: &Snapshot, kind: AlertKind, node: &str) -> Option<String> {
    common::alert(s, kind, Some(node)).map(|a| a.cause)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_galera_incident_is_narrated_and_named_by_its_cause() {
    let demo = tokio::task::spawn_blocking(|| Demo::start_galera(None))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"));
    let spec = demo.engine_spec();
    assert_eq!(common::galera::roles(&spec), common::galera::ONE_WRITER);
    let engine = Engine::start(&spec);
    until(
        &engine,
        "the cluster as one, caught up",
        DEADLINE,
        common::galera::healthy,
    )
    .await;

    let (tx, mut rx) = mpsc::channel(64);
    let (stop_tx, stop_rx) = watch::channel(false);
    // One round: the next would raise its alerts again.
    let once = Timeline {
        repeat: false,
        ..Timeline::fast()
    };
    let script = tokio::spawn(demo.run_script_with(once, tx, stop_rx));
    narrated(&mut rx, "demo: Galera cluster n1, n2, n3").await;

    narrated(&mut rx, "incident: a backup's read lock on n3").await;
    let (cause, _) = until(&engine, "galera_not_synced on n3", DEADLINE, |s| {
        active(s, AlertKind::GaleraNotSynced, "n3")
    })
    .await;
    eprintln!("{cause}");
    assert!(cause.contains("reads from it are stale"), "{cause}");
    narrated(&mut rx, "resolved: the lock is gone").await;

    narrated(&mut rx, "incident: n3 applies slowly").await;
    let (cause, _) = until(&engine, "galera_flow_control on n3", DEADLINE, |s| {
        active(s, AlertKind::GaleraFlowControl, "n3")
    })
    .await;
    eprintln!("{cause}");
    assert!(cause.contains("n3 sent"), "{cause}");
    assert!(cause.contains("flow-control pause request(s)"), "{cause}");
    narrated(&mut rx, "resolved: n3's limit is back to 16").await;

    narrated(&mut rx, "incident: n2 cut off from the others").await;
    let (cause, _) = until(&engine, "galera_not_primary on n2", DEADLINE, |s| {
        active(s, AlertKind::GaleraNotPrimary, "n2")
    })
    .await;
    eprintln!("{cause}");
    assert!(cause.contains("error 1047"), "{cause}");
    narrated(&mut rx, "resolved: n2 reaches the others again").await;
    narrated(&mut rx, "demo: script done").await;

    until(
        &engine,
        "every member back, caught up, no alert",
        DEADLINE,
        |s| common::galera::healthy(s).filter(|()| s.alerts.active.is_empty()),
    )
    .await;
    let _ = stop_tx.send(true);
    tokio::time::timeout(Duration::from_secs(15), script)
        .await
        .expect("the script ends promptly on a stop")
        .unwrap();
    engine.shutdown().await;
    demo.shutdown().await;
}
