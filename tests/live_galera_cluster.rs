//! A Galera cluster seen as one, on real galera-4 members (`rwtop sandbox up --galera`): given
//! one member's DSN and an async replica of it, rwtop finds the other two members, shows the
//! three as one cluster with the replica under its member, writes the heartbeat on one member
//! only, and measures every member's lag in seconds behind it. A backup's read lock on n3 under
//! writes has n3's lag grow about a second a second while n1's and n2's stay low; a member cut
//! off from the primary component is at least some seconds behind, never "lag unknown", and
//! rejoins; the few seconds the cluster's commits stall while it evicts the member are named as
//! that, and the heartbeat writes again after. rwtop's own writes cause no certification
//! failure anywhere.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::time::{Duration, Instant};

use common::galera::{SYNCED_LAG, exact, healthy, lag};
use common::{TestSandbox, engine_spec, until};
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::galera::{Component, MemberState};
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};

const MEMBERS: [&str; 3] = ["n1", "n2", "n3"];
const DEADLINE: Duration = Duration::from_secs(60);

/// n1 and its async replica r1, as a user would name them; discovery finds the rest.
async fn from_one_member(t: &TestSandbox) -> (EngineSpec, Engine) {
    let mut spec = engine_spec(t, &[("n1", Role::Primary), ("r1", Role::Replica)]);
    spec.discovery = true;
    let engine = Engine::start_finding_roots(&mut spec).await;
    (spec, engine)
}

/// Each member's cumulative certification failures, in `MEMBERS`' order.
fn cert_failures(s: &Snapshot) -> Option<Vec<u64>> {
    MEMBERS
        .iter()
        .map(|m| s.node(m)?.galera()?.status.cert_failures)
        .collect()
}

/// The JSON and `/metrics` of a snapshot where n3 is desynced and at least 3 s behind: the
/// cluster as one, n3's lag in seconds, each member labelled with its cluster; promtool finds
/// nothing to fault in the families.
fn outputs_show_n3_behind(s: &std::sync::Arc<Snapshot>) {
    let doc = serde_json::to_value(rwtop::export::json::from_snapshot(s)).unwrap();
    let cluster = &doc["clusters"][0];
    assert_eq!(cluster["name"], "rwtop-galera", "{cluster:#}");
    assert_eq!(cluster["writer"], "n1");
    assert_eq!(cluster["members"], serde_json::json!(MEMBERS));
    let json_lag = &common::json_node(&doc, "n3")["galera"]["lag_seconds"];
    assert_eq!(json_lag["kind"], "exact", "{json_lag:#}");
    assert!(json_lag["now"].as_f64().unwrap() >= 3.0, "{json_lag:#}");
    // And in /metrics, each member labelled with its cluster; promtool finds nothing to fault.
    let body = rwtop::export::prometheus::render(s, "test");
    let sample = |family: &str, labels: &[&str]| -> f64 {
        let line = body
            .lines()
            .find(|l| {
                l.starts_with(&format!("{family}{{"))
                    && labels.iter().all(|want| l.contains(want))
                    && l.contains(r#"galera_cluster="rwtop-galera""#)
            })
            .unwrap_or_else(|| panic!("no {family} {labels:?} in:\n{body}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(sample("rwtop_galera_lag_seconds", &[r#"node="n3""#]) >= 3.0);
    assert!(sample("rwtop_galera_lag_seconds", &[r#"node="n1""#]) < 0.5);
    let donor = [r#"node="n3""#, r#"state="donor""#];
    assert!((sample("rwtop_galera_member_state", &donor) - 1.0).abs() < f64::EPSILON);
    assert!(sample("rwtop_galera_recv_queue", &[r#"node="n3""#]) >= 1.0);
    assert!((sample("rwtop_galera_cluster_size", &[]) - 3.0).abs() < f64::EPSILON);
    let out = serve::promtool(&["check", "metrics"], Some(&body));
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_members_dsn_finds_the_cluster_and_each_member_lags_in_seconds() {
    let t = TestSandbox::start_galera(3, 1);
    let (spec, engine) = from_one_member(&t).await;

    // Found at start-up: n2 and n3 by their own names, one cluster, one writer.
    assert_eq!(
        common::galera::roles(&spec),
        common::galera::ONE_WRITER,
        "n1 is the cluster's one heartbeat root"
    );
    assert_eq!(spec.clusters.len(), 1, "{:?}", spec.clusters);
    assert_eq!(spec.clusters[0].name, "rwtop-galera");
    assert_eq!(spec.clusters[0].members, MEMBERS);
    assert_eq!(spec.clusters[0].writer.as_deref(), Some("n1"));

    let ((), after) = until(&engine, "three members caught up", DEADLINE, healthy).await;
    eprintln!("three members in one component, caught up, {after:?} after start");
    let s = engine.latest();
    let c = &s.clusters[0];
    assert_eq!((c.size, c.expected_size), (Some(3), 3));
    assert_eq!(
        s.heartbeat.roots.len(),
        1,
        "one heartbeat row for the cluster"
    );
    assert_eq!(s.heartbeat.node.as_deref(), Some("n1"));
    for m in MEMBERS {
        assert_eq!(s.node(m).unwrap().role, Role::Member, "{m}");
    }
    let r1 = s.node("r1").unwrap();
    assert_eq!(r1.role, Role::Replica);
    assert_eq!(r1.replica().unwrap().source.as_deref(), Some("n1"));
    let baseline = cert_failures(&s).expect("every member's certification failures");

    // Writes on n1 while a backup's read lock holds n3 for 10 s.
    let (lock, load) = common::galera::read_lock_under_writes(&t, 10, 200);
    let (first, _) = until(&engine, "n3 3 s behind", DEADLINE, |s| {
        exact(s, "n3").filter(|l| *l >= Duration::from_secs(3))
    })
    .await;
    let t0 = Instant::now();
    // n3's lag grows with the clock for the next 3 s, while n1 and n2 stay caught up.
    let mut worst = Duration::ZERO;
    let (last, _) = until(&engine, "3 s more of n3 behind", DEADLINE, |s| {
        for m in ["n1", "n2"] {
            let l = exact(s, m).unwrap_or_else(|| panic!("{m}: {:?}", lag(s, m)));
            worst = worst.max(l);
        }
        let n3 = exact(s, "n3")?;
        (t0.elapsed() >= Duration::from_secs(3)).then(|| (n3, t0.elapsed()))
    })
    .await;
    let (n3_then, elapsed) = last;
    let rate = (n3_then.as_secs_f64() - first.as_secs_f64()) / elapsed.as_secs_f64();
    eprintln!(
        "n3 {first:?} → {n3_then:?} in {elapsed:?}: {rate:.2} s/s; n1 and n2 at most {worst:?}"
    );
    assert!(
        (0.7..=1.3).contains(&rate),
        "n3's lag grew {rate:.2} s a second"
    );
    assert!(worst < SYNCED_LAG, "a synced member read {worst:?} behind");
    let s = engine.latest();
    let n3 = s.node("n3").unwrap().galera().unwrap();
    assert_eq!(n3.status.state, MemberState::Donor);
    outputs_show_n3_behind(&s);

    load.join().unwrap();
    lock.join().unwrap();
    until(&engine, "n3 caught up again", DEADLINE, healthy).await;
    let s = engine.latest();
    let after = cert_failures(&s).expect("every member's certification failures");
    assert_eq!(
        after, baseline,
        "rwtop's heartbeat, written on n1 only, failed certification somewhere"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_cut_off_is_out_of_the_component_never_lag_unknown_and_rejoins() {
    let t = TestSandbox::start_galera(3, 0);
    let mut spec = engine_spec(&t, &[("n1", Role::Primary)]);
    spec.discovery = true;
    let engine = Engine::start_finding_roots(&mut spec).await;
    until(&engine, "three members caught up", DEADLINE, healthy).await;

    t.admin(
        "n2",
        "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'",
    );
    let cut = Instant::now();
    // While the others have not evicted n2, the cluster commits nothing: n1's heartbeat stalls.
    let mut stall: Option<(Duration, String)> = None;
    let mut watch_stall = |s: &Snapshot| {
        let age = s.heartbeat.last_ack_age.unwrap_or_default();
        if let Some(a) = common::alert(s, AlertKind::HeartbeatStale, None) {
            let longest = stall.as_ref().map_or(Duration::ZERO, |(d, _)| *d);
            stall = Some((age.max(longest), a.cause));
        }
    };
    let (behind, after) = until(
        &engine,
        "n2 out, at least some seconds behind",
        DEADLINE,
        |s| {
            watch_stall(s);
            let g = s.node("n2")?.galera()?;
            match &g.lag {
                Lag::AtLeast { lag, .. } if g.status.component != Component::Primary => Some(*lag),
                _ => None,
            }
        },
    )
    .await;
    eprintln!("n2 out of the component, at least {behind:?} behind, {after:?} after the cut");
    // Watched for a few seconds: the member answers, its lag is a bound (never unknown), and
    // the alert names the component.
    let (alert, _) = until(&engine, "galera_not_primary on n2", DEADLINE, |s| {
        watch_stall(s);
        let g = s.node("n2").and_then(|n| n.galera());
        if let Some(Lag::Unknown { reason }) = g.map(|g| &g.lag) {
            panic!("n2's lag is unknown while out of the component: {reason}");
        }
        assert_eq!(s.node("n2").unwrap().conn.name(), "up", "n2 answers");
        common::alert(s, AlertKind::GaleraNotPrimary, Some("n2"))
    })
    .await;
    eprintln!("{}", alert.cause);
    // n1 and n3 report the component of two at their own next polls, up to a poll after n2
    // reported itself out.
    let (c, _) = until(
        &engine,
        "the others report a component of two",
        DEADLINE,
        |s| {
            let c = s.clusters.first()?;
            (c.size == Some(2)).then(|| c.clone())
        },
    )
    .await;
    assert_eq!(c.outside, ["n2"], "{c:?}");
    assert_eq!(c.expected_size, 3, "{c:?}");
    let s = engine.latest();
    let grown = match &s.node("n2").unwrap().galera().unwrap().lag {
        Lag::AtLeast { lag, .. } => *lag,
        other => panic!("n2: {other:?}"),
    };
    assert!(
        grown + Duration::from_secs(2) >= cut.elapsed(),
        "n2 shown {grown:?} behind, {:?} after it was cut off",
        cut.elapsed()
    );

    t.admin(
        "n2",
        "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'",
    );
    // Back, caught up, and n1's writer writing with no stale heartbeat (the rejoin's own view
    // change may stall the commits again for a moment).
    let ((), back) = until(&engine, "n2 back, caught up, n1 writing", DEADLINE, |s| {
        let cleared = common::alert(s, AlertKind::GaleraNotPrimary, Some("n2")).is_none()
            && common::alert(s, AlertKind::HeartbeatStale, None).is_none();
        let writing = s.heartbeat.writer == rwtop::poll::WriterState::Writing;
        healthy(s).filter(|()| cleared && writing)
    })
    .await;
    eprintln!("n2 rejoined and caught up, n1 writing, {back:?} after the isolation ended");
    match stall {
        Some((longest, cause)) => {
            eprintln!(
                "the cluster's commits stalled, the heartbeat {longest:?} old at most: {cause}"
            );
            assert!(
                cause.contains("the Galera cluster rwtop-galera's commits are stalled"),
                "{cause}"
            );
        }
        None => eprintln!("the cluster's commits did not stall long enough for an alert"),
    }
    engine.shutdown().await;
}
