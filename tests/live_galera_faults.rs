//! Galera faults on real galera-4 members (`rwtop sandbox up --galera`), the engine given n1
//! alone and finding n2 and n3 itself, its heartbeat written on n1 only. A member whose backlog
//! passes its flow-control limit (n3 at `gcs.fc_limit=1` under many writers on n1, the others'
//! limits out of reach) is the one `galera_flow_control` names, by its own counters: the others
//! are paused too but sent nothing, and no alert lands on them. A member killed outright is
//! shown not answering, down, and out of a cluster that shrinks to two, while the two left keep
//! an exact lag under a second once they have evicted it, and their lag windows keep filling.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::galera::{exact, healthy, lag};
use common::{TestSandbox, engine_spec, until};
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;
use rwtop::store::lag::Lag;
use rwtop::store::windows::Window;
use rwtop::store::{Role, Snapshot};

const MEMBERS: [&str; 3] = ["n1", "n2", "n3"];
/// The members that stay healthy in both tests.
const OTHERS: [&str; 2] = ["n1", "n2"];
const DEADLINE: Duration = Duration::from_secs(60);
/// A member left in the cluster once the killed one is evicted: commits flow again.
const LEFT_LAG: Duration = Duration::from_secs(1);
/// From the first snapshot that shows the cluster of two to the first whose lags rest on a
/// heartbeat written after the eviction: the writer's stuck write ends with it, the writer
/// takes its lock again at its next tick (250 ms), writes, and each member reads it within a
/// read interval (250 ms); a busy machine gets the rest.
const RESUMED_WITHIN: Duration = Duration::from_secs(1);
/// Concurrent writers on n1: enough that n3, at `gcs.fc_limit=1`, falls behind its limit.
const WRITERS: usize = 8;
/// Inserts per client call of each writer.
const BATCH: usize = 200;

/// The engine given n1 alone, as a user would name it; discovery finds n2 and n3.
async fn from_n1(t: &TestSandbox) -> Engine {
    let mut spec = engine_spec(t, &[("n1", Role::Primary)]);
    spec.discovery = true;
    let engine = Engine::start_finding_roots(&mut spec).await;
    let found: Vec<&str> = spec.nodes.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(found, MEMBERS, "discovery found every member");
    engine
}

/// The pause requests a member sent in its last interval, while it answers.
fn fc_sent(s: &Snapshot, name: &str) -> Option<u64> {
    s.node(name)?.galera()?.interval?.fc_sent
}

/// The share of its last interval a member was paused by flow control, while it answers.
fn paused(s: &Snapshot, name: &str) -> Option<f64> {
    s.node(name)?.galera()?.interval?.paused_share
}

/// n1 and n2 sent no flow control in this snapshot, and no `galera_flow_control` alert is on
/// either: only the member whose counters rose is the sender.
fn assert_others_sent_none(s: &Snapshot) {
    for m in OTHERS {
        let sent = fc_sent(s, m);
        assert!(
            sent.is_none_or(|n| n == 0),
            "{m} sent {sent:?} pause request(s)"
        );
        let a = common::alert(s, AlertKind::GaleraFlowControl, Some(m));
        assert!(a.is_none(), "galera_flow_control on {m}: {a:?}");
    }
}

/// The lag samples in a member's 1-minute window.
fn minute_samples(s: &Snapshot, name: &str) -> Option<u64> {
    let g = s.node(name)?.galera()?;
    g.windows
        .iter()
        .find(|(w, _)| *w == Window::OneMinute)
        .and_then(|(_, stats)| stats.as_ref())
        .map(|stats| stats.samples)
}

/// Writers on `node`, each on a session of its own, inserting into `rwtop.fc` in batches of
/// [`BATCH`] until stopped (also when dropped, so a failed test leaves none running).
struct Writers {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<usize>>,
}

impl Writers {
    fn start(t: &TestSandbox, node: &str, count: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let batch = "INSERT INTO rwtop.fc (v) VALUES (1);".repeat(BATCH);
        let threads = (0..count)
            .map(|_| {
                let sandbox = rwtop::sandbox::Sandbox::open(t.sandbox().dir()).unwrap();
                let (node, batch, stop) = (node.to_owned(), batch.clone(), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut batches = 0;
                    while !stop.load(Ordering::Relaxed) {
                        match sandbox.admin(&node, &batch) {
                            Ok(_) => batches += 1,
                            // A failed test stops the writers, then its servers, mid-batch.
                            Err(_) if stop.load(Ordering::Relaxed) => break,
                            Err(e) => panic!("{node}: {e}"),
                        }
                    }
                    batches
                })
            })
            .collect();
        Self { stop, threads }
    }

    /// Stops the writers after their current batch; the rows they wrote.
    fn finish(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let batches: usize = std::mem::take(&mut self.threads)
            .into_iter()
            .map(|w| w.join().expect("a writer failed"))
            .sum();
        batches * BATCH
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_control_names_the_member_that_sent_it() {
    let t = TestSandbox::start_galera(3, 0);
    let engine = from_n1(&t).await;
    until(&engine, "three members caught up", DEADLINE, healthy).await;

    t.admin(
        "n1",
        "CREATE TABLE rwtop.fc (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)",
    );
    // n3 pauses the cluster as soon as one write-set waits there. n1 and n2 get a limit their
    // queues never reach: at the default (16, scaled by the cluster's size) n2, with its two
    // applier threads, sent a few pause requests itself in two runs of seven under 8 or 16
    // writers (its receive queue at 26; its server's own wsrep_flow_control_sent agreed).
    t.admin("n3", "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=1'");
    for m in OTHERS {
        t.admin(
            m,
            "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=10000'",
        );
    }
    let start = Instant::now();
    let writers = Writers::start(&t, "n1", WRITERS);
    // In every snapshot: what n3 sent, that n1 and n2 sent nothing, and who was paused.
    let mut first_sent: Option<(u64, Duration)> = None;
    let mut most_sent = 0;
    let mut most_paused = [0.0_f64; 3];
    let mut watch = |s: &Snapshot| {
        assert_others_sent_none(s);
        let sent = fc_sent(s, "n3").unwrap_or(0);
        if sent > 0 {
            first_sent.get_or_insert((sent, start.elapsed()));
            most_sent = most_sent.max(sent);
        }
        for (most, m) in most_paused.iter_mut().zip(MEMBERS) {
            *most = most.max(paused(s, m).unwrap_or(0.0));
        }
    };
    let (alert, _) = until(&engine, "galera_flow_control on n3", DEADLINE, |s| {
        watch(s);
        common::alert(s, AlertKind::GaleraFlowControl, Some("n3"))
    })
    .await;
    eprintln!(
        "galera_flow_control on n3 {:?} after the writes began: {}",
        start.elapsed(),
        alert.cause
    );
    assert!(
        alert.cause.starts_with("n3: n3 sent ")
            && alert.cause.contains("flow-control pause request(s)"),
        "{}",
        alert.cause
    );
    let requests: u64 = common::evidence(&alert, "flow_control_sent")
        .parse()
        .expect("a count");
    assert!(requests > 0, "{alert:?}");
    // A few more polls under the writes: n3 keeps sending, the others still send nothing.
    let alerted = Instant::now();
    until(&engine, "3 s more of flow control", DEADLINE, |s| {
        watch(s);
        (alerted.elapsed() >= Duration::from_secs(3)).then_some(())
    })
    .await;
    let (first, first_at) = first_sent.expect("n3's fc_sent rose");
    eprintln!(
        "n3 sent {first} pause request(s) in the interval read {first_at:?} in, at most {most_sent} \
         in one; paused at most n1 {:.0} %, n2 {:.0} %, n3 {:.0} %",
        most_paused[0] * 100.0,
        most_paused[1] * 100.0,
        most_paused[2] * 100.0
    );
    assert!(most_sent > 0);
    for (m, most) in MEMBERS.iter().zip(most_paused) {
        assert!(most > 0.0, "{m} never read as paused while n3 sent");
    }

    let rows = writers.finish();
    for m in MEMBERS {
        t.admin(m, "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=16'");
    }
    let ((), back) = until(
        &engine,
        "caught up again, galera_flow_control cleared",
        DEADLINE,
        |s| {
            assert_others_sent_none(s);
            let cleared = common::alert(s, AlertKind::GaleraFlowControl, Some("n3")).is_none();
            healthy(s).filter(|()| cleared)
        },
    )
    .await;
    eprintln!("{rows} rows written on n1; caught up and the alert cleared {back:?} after");
    assert_others_sent_none(&engine.latest());
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_member_shrinks_the_cluster_and_the_others_keep_their_lag() {
    let t = TestSandbox::start_galera(3, 0);
    let engine = from_n1(&t).await;
    let (before, _) = until(&engine, "three members caught up", DEADLINE, |s| {
        healthy(s)?;
        Some([minute_samples(s, "n1")?, minute_samples(s, "n2")?])
    })
    .await;

    let pid = t.sandbox().pid("n3").expect("n3's server runs");
    let kill = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(kill.success(), "kill -9 {pid}: {kill}");
    let killed = Instant::now();

    let mut gone: Option<Duration> = None;
    let mut shrunk: Option<Duration> = None;
    let mut down: Option<Duration> = None;
    // n1's and n2's lag in every snapshot, and the worst once n3 was evicted.
    let mut series: Vec<(Duration, [Option<Lag>; 2])> = Vec::new();
    let mut worst_after = Duration::ZERO;
    let (after, _) = until(
        &engine,
        "n3 not answering, down, and the cluster of 2 for 5 s",
        DEADLINE,
        |s| {
            let at = killed.elapsed();
            series.push((at, OTHERS.map(|m| lag(s, m))));
            let c = s.clusters.first().expect("the cluster in every snapshot");
            assert_eq!(c.expected_size, 3, "{c:?}");
            let n3 = "n3".to_owned();
            if c.silent.contains(&n3) || c.outside.contains(&n3) {
                gone.get_or_insert(at);
            }
            if c.size == Some(2) {
                shrunk.get_or_insert(at);
            }
            if common::alert(s, AlertKind::NodeDown, Some("n3")).is_some() {
                down.get_or_insert(at);
            }
            if shrunk.is_some() {
                assert_eq!(c.size, Some(2), "the cluster grew back: {c:?}");
                assert!(!c.in_primary.contains(&n3), "{c:?}");
            }
            // The members' polls may show the eviction before the first heartbeat written after
            // it was read: judged from a moment later.
            if shrunk.is_some_and(|t| at >= t + RESUMED_WITHIN) {
                for m in OTHERS {
                    let l = exact(s, m).unwrap_or_else(|| {
                        panic!(
                            "{m} {at:?} after the kill, the cluster of 2 since {shrunk:?}: \
                             {:?}; heartbeat writer {:?}, last ack {:?} ago",
                            lag(s, m),
                            s.heartbeat.writer,
                            s.heartbeat.last_ack_age
                        )
                    });
                    assert!(l < LEFT_LAG, "{m} {l:?} behind {at:?} after the kill");
                    worst_after = worst_after.max(l);
                }
            }
            let settled = shrunk.is_some_and(|t| at >= t + Duration::from_secs(5));
            (gone.is_some() && down.is_some() && settled).then(|| {
                OTHERS.map(|m| {
                    minute_samples(s, m).unwrap_or_else(|| panic!("{m}'s 1-minute window"))
                })
            })
        },
    )
    .await;
    let (gone, shrunk, down) = (gone.unwrap(), shrunk.unwrap(), down.unwrap());
    eprintln!(
        "after the kill: n3 not answering {gone:?}, node_down {down:?}, the cluster of 2 \
         {shrunk:?}; n1 and n2 at most {worst_after:?} behind from then on"
    );
    for (at, lags) in &series {
        let [n1, n2] = lags
            .clone()
            .map(|l| l.and_then(|l| l.text()).unwrap_or_else(|| "?".to_owned()));
        eprintln!("  {at:>12.3?}  n1 {n1:>8}  n2 {n2:>8}");
    }
    for ((m, was), now) in OTHERS.iter().zip(before).zip(after) {
        eprintln!("{m}'s 1-minute window: {was} samples before the kill, {now} after");
        assert!(
            now > was,
            "{m}'s 1-minute window stopped filling: {was} → {now}"
        );
    }
    engine.shutdown().await;
}
