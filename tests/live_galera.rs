//! A Galera member as rwtop reads it, on real galera-4 members (`rwtop sandbox up --galera`):
//! each member's state, component and cluster, in the view and the JSON; a backup's read lock
//! on n3 under writes on n1 shows n3 desynced with write-sets waiting, while n1 and n2 stay
//! synced, and n3 serves again once the lock goes. An async replica is no member.

mod common;

use std::time::Duration;

use common::{TestSandbox, engine_spec, until};
use rwtop::alerts::AlertKind;
use rwtop::mysql::galera::{Component, GaleraStatus, MemberState};
use rwtop::store::Role;

const MEMBERS: [&str; 3] = ["n1", "n2", "n3"];
const DEADLINE: Duration = Duration::from_secs(60);

fn member<'a>(s: &'a rwtop::store::Snapshot, name: &str) -> Option<&'a GaleraStatus> {
    Some(&s.node(name)?.galera()?.status)
}

/// Every member synced in one primary component of three, each with an interval read: the
/// cluster's state UUID.
fn one_cluster(s: &rwtop::store::Snapshot) -> Option<String> {
    let views: Vec<&GaleraStatus> = MEMBERS
        .iter()
        .map(|m| member(s, m))
        .collect::<Option<_>>()?;
    let one = views.iter().all(|g| {
        g.state == MemberState::Synced
            && g.component == Component::Primary
            && g.cluster_size == Some(3)
            && g.ready == Some(true)
            && g.cluster_uuid == views[0].cluster_uuid
            && g.conf_id.is_some()
            && g.conf_id == views[0].conf_id
    });
    let intervals = MEMBERS
        .iter()
        .all(|m| s.node(m).and_then(|n| n.galera()?.interval).is_some());
    let one = one && intervals;
    one.then(|| views[0].cluster_uuid.clone())
}

/// Every member synced in one cluster of three, listing every member; the replica no member.
async fn one_cluster_of_three(t: &TestSandbox, engine: &rwtop::engine::Engine) {
    let mut ports: Vec<String> = MEMBERS
        .iter()
        .map(|m| format!("127.0.0.1:{}", t.sandbox().port(m).unwrap()))
        .collect();
    ports.sort();
    let (uuid, _) = until(
        engine,
        "three synced members, one cluster",
        DEADLINE,
        one_cluster,
    )
    .await;
    assert_eq!(uuid.len(), 36, "{uuid}");
    let s = engine.latest();
    for m in MEMBERS {
        let mut listed = member(&s, m).unwrap().incoming.clone();
        listed.sort();
        assert_eq!(listed, ports, "{m} lists every member's SQL address");
    }
    assert!(
        s.node("r1").is_some_and(|n| n.galera().is_none()),
        "an async replica is no member"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_member_is_read_and_a_read_lock_shows_its_member_desynced() {
    let t = TestSandbox::start_galera(3, 1);
    // One heartbeat writer, on n1: the other members are watched without writing.
    let spec = engine_spec(
        &t,
        &[
            ("n1", Role::Primary),
            ("n2", Role::Replica),
            ("n3", Role::Replica),
            ("r1", Role::Replica),
        ],
    );
    let engine = rwtop::engine::Engine::start(&spec);
    one_cluster_of_three(&t, &engine).await;

    // Writes on n1 while a backup's read lock holds n3.
    let (lock, load) = common::galera::read_lock_under_writes(&t, 8, 150);
    let (desynced, after) = until(&engine, "n3 desynced with a backlog", DEADLINE, |s| {
        let n3 = member(s, "n3")?;
        (n3.state == MemberState::Donor && n3.recv_queue.is_some_and(|q| q >= 10))
            .then(|| n3.clone())
    })
    .await;
    eprintln!(
        "n3 {} after {after:?}: receive queue {:?}, desyncs {:?}, committed {:?}",
        desynced.state_comment, desynced.recv_queue, desynced.desync_count, desynced.last_committed
    );
    assert_eq!(desynced.state_comment, "Donor/Desynced");
    assert_eq!(desynced.desync_count, Some(1));
    assert_eq!(
        desynced.component,
        Component::Primary,
        "still in the component"
    );
    let s = engine.latest();
    for m in ["n1", "n2"] {
        let g = member(&s, m).unwrap();
        assert_eq!(g.state, MemberState::Synced, "{m}: {g:?}");
        // Synced members apply as they receive: less waits there than on the locked n3.
        assert!(g.recv_queue < desynced.recv_queue, "{m}: {g:?}");
    }
    // Behind the others by the cluster's own sequence numbers. The members are polled at
    // different moments, so n1's newest reading may predate most of the writes: waited for.
    until(&engine, "n3 behind n1 by 10 committed", DEADLINE, |s| {
        let (n1, n3) = (member(s, "n1")?, member(s, "n3")?);
        let behind = n3.last_committed? + 10 <= n1.last_committed?;
        (behind && n3.state == MemberState::Donor).then_some(())
    })
    .await;
    // One alert, on n3, says its reads are stale; nothing on the synced members.
    let (stale, _) = until(&engine, "galera_not_synced on n3", DEADLINE, |s| {
        common::alert(s, AlertKind::GaleraNotSynced, Some("n3"))
    })
    .await;
    eprintln!("{}", stale.cause);
    assert!(
        stale.cause.contains("reads from it are stale"),
        "{}",
        stale.cause
    );
    let s = engine.latest();
    let galera_alerts: Vec<_> = s
        .alerts
        .active
        .iter()
        .filter(|a| a.kind.name().starts_with("galera_"))
        .map(|a| (a.kind, a.node.clone()))
        .collect();
    assert_eq!(
        galera_alerts,
        [(AlertKind::GaleraNotSynced, Some("n3".to_owned()))],
        "a desynced member sends no flow control, and the others are synced"
    );
    // The same in the JSON snapshot.
    let doc = serde_json::to_value(rwtop::export::json::from_snapshot(&s)).unwrap();
    let json = &common::json_node(&doc, "n3")["galera"];
    assert_eq!(json["state"], "donor", "{json:#}");
    assert_eq!(json["component"], "primary");
    assert_eq!(
        common::json_node(&doc, "r1")["galera"],
        serde_json::Value::Null
    );

    load.join().unwrap();
    lock.join().unwrap();
    until(
        &engine,
        "n3 synced and caught up, its alert cleared",
        DEADLINE,
        |s| {
            let n3 = member(s, "n3")?;
            let cleared = common::alert(s, AlertKind::GaleraNotSynced, Some("n3")).is_none();
            (n3.state == MemberState::Synced && n3.recv_queue == Some(0) && cleared).then_some(())
        },
    )
    .await;
    engine.shutdown().await;
}
