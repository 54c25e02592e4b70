//! The fault suite: servers killed, frozen and restarted, a failover, connections
//! that cannot be made, a missing grant, and replication links cut — against real servers.
//!
//! In each, the engine keeps running, marks the faulty node honestly (its `ConnState`, no last
//! lag shown as current, the alert that names the problem), leaves the other nodes alone, and
//! recovers by itself once the fault is gone. Every wait is a condition with a deadline; the
//! bounds on how fast things happen are loose enough for a busy two-core CI machine and tight
//! enough that a poller without timeouts, or one that blocks its neighbours, fails them.

mod common;

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{
    Load, SHORT, TestSandbox, alert, evidence, exact, lag, primary_and, until, until_healthy,
};
use rwtop::alerts::AlertKind;
use rwtop::engine::{Engine, EngineSpec};
use rwtop::mysql::{Endpoint, Family, IoRunning, Secret, grants::monitor_grants};
use rwtop::poll::{ConnState, WriterState};
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};

/// The longest any single wait may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(30);
/// A refused connection is seen at the next heartbeat read (250 ms), the node is `down` after a
/// second failure, and `node_down` is raised after two samples at the 1 s poll interval: about
/// 3 s. The rest is the store's publication period and a busy machine.
const RAISE_WITHIN: Duration = Duration::from_secs(6);
/// The poller's back-off is capped at 1 s: a node that answers again is polled within that; the
/// rest is a busy machine.
const RECOVER_WITHIN: Duration = Duration::from_secs(10);
/// How stale another node's newest sample may get while one node is failing: one poll interval
/// plus slack. A poller that waited on the failing node's timeouts would exceed it.
const MAX_CONTROL_AGE: Duration = Duration::from_secs(2);

fn spec(t: &TestSandbox, replicas: &[&str]) -> EngineSpec {
    EngineSpec {
        timeouts: SHORT,
        ..primary_and(t, replicas)
    }
}

fn cause(s: &Snapshot, node: &str) -> String {
    match &s
        .node(node)
        .unwrap_or_else(|| panic!("no node {node}"))
        .conn
    {
        ConnState::Retrying { cause, .. } | ConnState::Down { cause, .. } => cause.clone(),
        other => panic!("{node} is {other:?}, not failing"),
    }
}

/// What a fault may honestly leave behind once it is over: the last minute's lag P99 still
/// holds the lag of the fault.
const AFTERMATH: &[AlertKind] = &[AlertKind::LagP99High];

/// No alert active but the fault's aftermath.
fn quiet(s: &Snapshot) -> bool {
    s.alerts.active.iter().all(|a| AFTERMATH.contains(&a.kind))
}

/// Nodes that must not notice another node's fault: up, sampled on time, replicas with an exact
/// lag, and no alert about them.
struct Control {
    nodes: Vec<String>,
    snapshots: u32,
    worst_age: Duration,
    inexact: Vec<String>,
}

impl Control {
    fn new(nodes: &[&str]) -> Self {
        Self {
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
            snapshots: 0,
            worst_age: Duration::ZERO,
            inexact: Vec::new(),
        }
    }

    fn observe(&mut self, s: &Snapshot) {
        self.snapshots += 1;
        for name in &self.nodes {
            let node = s.node(name).unwrap_or_else(|| panic!("no node {name}"));
            assert_eq!(node.conn, ConnState::Up, "{name} must stay up");
            self.worst_age = self.worst_age.max(node.sample_age.unwrap_or_default());
            if node.role == Role::Replica && exact(s, name).is_none() {
                self.inexact.push(format!("{name}: {:?}", lag(s, name)));
            }
            let about: Vec<_> = s
                .alerts
                .active
                .iter()
                .filter(|a| a.node.as_deref() == Some(name.as_str()))
                .collect();
            assert!(about.is_empty(), "alerts about {name}: {about:?}");
        }
    }

    fn check(&self) {
        assert!(self.snapshots > 0, "no snapshot observed");
        assert!(
            self.worst_age <= MAX_CONTROL_AGE,
            "{:?} delayed: sample age reached {:?}",
            self.nodes,
            self.worst_age
        );
        // A scheduling hiccup on a busy machine may cost one reading; more is a real effect.
        assert!(
            self.inexact.len() * 10 <= self.snapshots as usize,
            "lag not exact in {} of {} snapshots: {:?}",
            self.inexact.len(),
            self.snapshots,
            self.inexact
        );
    }
}

/// Restarts the killed servers without stalling the engine's tasks on this worker thread.
fn restart(t: &mut TestSandbox) {
    tokio::task::block_in_place(|| t.restart_stopped());
}

/// Runs admin SQL without stalling the engine's tasks on this worker thread.
fn admin(t: &TestSandbox, node: &str, sql: &str) -> Vec<rwtop::mysql::RawRow> {
    tokio::task::block_in_place(|| t.admin(node, sql))
}

/// The lag of a node that does not answer is never shown: its channels' lag is unknown.
fn assert_no_stale_lag(s: &Snapshot, node: &str) {
    let n = s.node(node).unwrap();
    if n.conn != ConnState::Up {
        assert!(
            matches!(lag(s, node), None | Some(Lag::Unknown { .. })),
            "{node} is {} but shows lag {:?}",
            n.conn.name(),
            lag(s, node)
        );
    }
}

/// r1 answers again: exact lag within [`RECOVER_WITHIN`], then caught up with `node_down`
/// cleared, the control nodes watched all along.
async fn r1_recovers(engine: &Engine, control: &mut Control, how: &str) {
    let ((), took) = until(engine, "r1 up with an exact lag", DEADLINE, |s| {
        control.observe(s);
        assert_no_stale_lag(s, "r1");
        (s.node("r1")?.conn == ConnState::Up && exact(s, "r1").is_some()).then_some(())
    })
    .await;
    eprintln!("r1 {how}: exact lag again after {took:?}");
    assert!(took <= RECOVER_WITHIN, "recovered after {took:?}");
    until(
        engine,
        "r1 caught up and node_down cleared",
        DEADLINE,
        |s| {
            control.observe(s);
            (exact(s, "r1") == Some(Duration::ZERO) && quiet(s)).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_killed_replica_is_down_without_lag_and_recovers() {
    let mut t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["r1", "r2"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    t.kill_server("r1");
    let mut control = Control::new(&["primary", "r2"]);
    let ((a, s), took) = until(&engine, "node_down on r1", DEADLINE, |s| {
        control.observe(s);
        assert_no_stale_lag(s, "r1");
        alert(s, AlertKind::NodeDown, Some("r1")).map(|a| (a, s.clone()))
    })
    .await;
    eprintln!("r1 killed: node_down after {took:?}: {}", a.cause);
    assert!(took <= RAISE_WITHIN, "node_down after {took:?}");
    let r1 = s.node("r1").unwrap();
    assert_eq!(r1.conn.name(), "down");
    assert_eq!(r1.role, Role::Replica, "a dead replica stays in the tree");
    // Its channel stays, with no last values: the lag unknown, nothing live.
    let kept = r1.replica().expect("a dead replica keeps its channel");
    assert!(
        matches!(kept.heartbeat_lag, Lag::Unknown { .. })
            && kept.seconds_behind_source.is_none()
            && !kept.sql_running,
        "last values for a dead node: {kept:?}"
    );
    let why = cause(&s, "r1");
    let address = t.sandbox().endpoint("r1").unwrap().address();
    assert!(
        why.contains(&address) && why.contains("cannot connect"),
        "{why}"
    );
    assert!(a.cause.starts_with("rwtop cannot poll r1: "), "{}", a.cause);

    restart(&mut t);
    r1_recovers(&engine, &mut control, "restarted").await;
    control.check();
    engine.shutdown().await;
}

/// A frozen node is `down` once a poll has gone unanswered for one interval: that interval, the
/// heartbeat read period before it, the store's publication period and a busy machine. Waiting
/// for the shipped query timeout (2 s) and then a connect timeout (3 s) instead takes over 6 s.
const SILENT_WITHIN: Duration = Duration::from_secs(4);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_frozen_replica_is_down_within_an_interval_and_recovers() {
    let t = TestSandbox::start(2, false);
    // The shipped timeouts: the news must not wait for them.
    let spec = primary_and(&t, &["r1", "r2"]);
    let engine = Engine::start(&spec);
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    // A frozen server keeps its sockets: nothing fails, queries hang. A poll unanswered past its
    // interval is the news, and a hung query must not hold up the other pollers.
    let frozen = t.freeze("r1");
    let mut control = Control::new(&["primary", "r2"]);
    let (s, took) = until(&engine, "node_down on frozen r1", DEADLINE, |s| {
        control.observe(s);
        assert_no_stale_lag(s, "r1");
        alert(s, AlertKind::NodeDown, Some("r1")).map(|_| s.clone())
    })
    .await;
    let why = cause(&s, "r1");
    eprintln!("r1 frozen: node_down after {took:?}: {why}");
    assert!(took <= SILENT_WITHIN, "node_down after {took:?}");
    assert!(
        took < spec.timeouts.query,
        "waited for the query timeout: {took:?}"
    );
    assert!(
        why.starts_with("no answer for 1s (the poll interval)"),
        "the silence, not a timeout: {why}"
    );
    assert_eq!(s.node("r1").unwrap().conn.name(), "down");

    // Past the query timeout the connection is dropped and reopened; r1 stays down meanwhile.
    let ((), _) = until(&engine, "r1's query timed out", DEADLINE, |s| {
        control.observe(s);
        assert_no_stale_lag(s, "r1");
        let n = s.node("r1")?;
        assert!(
            !matches!(n.conn, ConnState::Up | ConnState::Retrying { .. }),
            "r1 frozen but {:?}",
            n.conn
        );
        assert!(alert(s, AlertKind::NodeDown, Some("r1")).is_some());
        cause(s, "r1").contains("within 2s").then_some(())
    })
    .await;

    drop(frozen);
    r1_recovers(&engine, &mut control, "thawed").await;
    control.check();
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_killed_primary_stops_lag_honestly_and_recovers() {
    let mut t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["r1", "r2"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    t.kill_server("primary");
    let killed = Instant::now();
    let (s, took) = until(
        &engine,
        "node_down, heartbeat_stale and both IO threads reconnecting",
        DEADLINE,
        |s| {
            assert_no_stale_lag(s, "primary");
            let raised = alert(s, AlertKind::NodeDown, Some("primary")).is_some()
                && alert(s, AlertKind::HeartbeatStale, None).is_some()
                && ["r1", "r2"]
                    .iter()
                    .all(|r| alert(s, AlertKind::IoThreadStopped, Some(r)).is_some());
            raised.then(|| s.clone())
        },
    )
    .await;
    eprintln!("primary killed: alerts after {took:?}");
    assert!(took <= RAISE_WITHIN, "raised after {took:?}");
    // The replicas answer, but nothing they show can be called caught up: the heartbeat stopped.
    for r in ["r1", "r2"] {
        let replica = s.node(r).unwrap().replica().unwrap();
        assert_eq!(replica.io_running, IoRunning::Connecting, "{r}");
        assert_eq!(replica.seconds_behind_source, None, "{r}");
        assert!(
            !matches!(replica.heartbeat_lag, Lag::Exact { lag } if lag < killed.elapsed() / 2),
            "{r}: {:?} while the primary is dead",
            replica.heartbeat_lag
        );
        // Its IO thread's alert is folded under the primary's: the one cause is the dead primary.
        let a = alert(&s, AlertKind::IoThreadStopped, Some(r)).unwrap();
        assert_eq!(
            a.cause,
            format!("{r}: cannot reach its source because primary does not answer"),
        );
    }
    assert!(
        matches!(&s.heartbeat.writer, WriterState::Failing { .. }),
        "{:?}",
        s.heartbeat.writer
    );

    restart(&mut t);
    let ((), took) = until(
        &engine,
        "heartbeat written and exact again",
        DEADLINE,
        |s| {
            let back = s.heartbeat.writer == WriterState::Writing
                && !s.heartbeat.stale
                && ["r1", "r2"].iter().all(|r| exact(s, r).is_some());
            back.then_some(())
        },
    )
    .await;
    eprintln!("primary restarted: exact lag again after {took:?}");
    assert!(took <= RECOVER_WITHIN, "recovered after {took:?}");
    until(
        &engine,
        "caught up and every alert cleared",
        DEADLINE,
        |s| {
            let caught_up = ["r1", "r2"]
                .iter()
                .all(|r| exact(s, r) == Some(Duration::ZERO));
            (caught_up && quiet(s)).then_some(())
        },
    )
    .await;
    engine.shutdown().await;
}

/// `SELECT seq` of rwtop's heartbeat row on a node, as the admin reads it.
fn heartbeat_seq(t: &TestSandbox, node: &str, writer_id: &str) -> Option<u64> {
    let rows = admin(
        t,
        node,
        &format!("SELECT seq FROM rwtop.heartbeat WHERE writer_id = '{writer_id}'"),
    );
    rows.first()
        .and_then(|r| r.optional_u64(&["seq"]).ok().flatten())
}

/// A switchover, as a DBA runs it: stop writes on the old primary, let the replicas apply
/// everything, promote r1, point r2 at it. Returns the last heartbeat the old primary got.
fn switch_over_to_r1(t: &TestSandbox, writer_id: &str) -> Option<u64> {
    admin(t, "primary", "SET GLOBAL read_only = 1");
    let last_written = heartbeat_seq(t, "primary", writer_id);
    assert!(
        last_written.is_some(),
        "the writer wrote before the switchover"
    );
    tokio::task::block_in_place(|| t.sandbox().wait_replicating(DEADLINE))
        .unwrap_or_else(|e| panic!("replicas catching up: {e}"));
    let r1_port = t.sandbox().port("r1").unwrap();
    admin(
        t,
        "r1",
        "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = 0",
    );
    admin(
        t,
        "r2",
        &format!(
            "STOP SLAVE; CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={r1_port}, \
             MASTER_USE_GTID=slave_pos; START SLAVE"
        ),
    );
    last_written
}

/// Both replicas discovered under the primary, caught up, and no alert active.
async fn discovered(engine: &Engine, replicas: [&str; 2]) {
    until(
        engine,
        "both replicas discovered under the primary",
        DEADLINE,
        |s| {
            let under = replicas
                .iter()
                .all(|r| s.node(r).and_then(|n| n.source.as_deref()) == Some("primary"));
            let caught_up = replicas.iter().all(|r| exact(s, r) == Some(Duration::ZERO));
            (under && caught_up && s.alerts.active.is_empty()).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_failover_is_followed_and_nothing_is_written_to_read_only_nodes() {
    let t = TestSandbox::start(2, false);
    // Only the primary is configured: discovery finds the replicas, as with `--primary`, named
    // by the `report_host` each sandbox replica reports.
    let mut spec = spec(&t, &[]);
    spec.discovery = true;
    let writer_id = spec.writer_id.clone();
    let (r1, r2) = ("r1".to_owned(), "r2".to_owned());
    let engine = Engine::start(&spec);
    let _load = Load::start(&t).await;
    discovered(&engine, [&r1, &r2]).await;

    let last_written = switch_over_to_r1(&t, &writer_id);
    let switched = Instant::now();

    let (s, took) = until(
        &engine,
        "topology_changed for r2 and the primary",
        DEADLINE,
        |s| {
            let followed = s.node(&r2)?.source.as_deref() == Some(r1.as_str())
                && s.node(&r1)?.role == Role::Primary;
            let raised = alert(s, AlertKind::TopologyChanged, Some(&r2)).is_some()
                && alert(s, AlertKind::TopologyChanged, None).is_some();
            (followed && raised).then(|| s.clone())
        },
    )
    .await;
    eprintln!("failover followed after {took:?}");
    let r2_link = s.node(&r2).unwrap().replica().unwrap();
    assert_eq!(r2_link.io_running, IoRunning::Yes, "r2 replicates from r1");
    assert!(r2_link.sql_running);
    let moved = alert(&s, AlertKind::TopologyChanged, Some(&r2)).unwrap();
    assert_eq!(evidence(&moved, "previous_source"), "primary");
    assert_eq!(evidence(&moved, "source"), r1);
    let promoted = alert(&s, AlertKind::TopologyChanged, None).unwrap();
    assert_eq!(
        promoted.cause,
        format!("{r1} is now the primary (was primary): failover or switchover"),
        "the read-only old primary is not counted as a second primary"
    );
    assert!(
        s.alerts
            .active
            .iter()
            .all(|a| a.kind != AlertKind::WritableReplica),
        "the promoted node is no writable replica: {:?}",
        s.alerts.active
    );

    // The writer refused the read-only old primary, then moved to the promoted node once r2
    // replicated from it; lag rests on the heartbeat again, now written on r1.
    let (_, took) = until(
        &engine,
        "the writer writing on the promoted node",
        DEADLINE,
        |s| {
            let moved = s.heartbeat.node.as_deref() == Some(r1.as_str())
                && s.heartbeat.writer == WriterState::Writing
                && !s.heartbeat.stale;
            (moved && exact(s, &r2).is_some()).then(|| s.clone())
        },
    )
    .await;
    eprintln!("writer moved {took:?} after topology_changed");
    let moved_at = heartbeat_seq(&t, "r1", &writer_id).expect("the writer's row on r1");
    assert!(
        moved_at > last_written.unwrap(),
        "r1 holds newer heartbeats ({moved_at}) than the old primary's last ({last_written:?})"
    );
    // r2 follows the new writer: its heartbeat sequence passes what it read before the move.
    until(
        &engine,
        "r2 reads the new primary's heartbeats",
        DEADLINE,
        |s| {
            (heartbeat_seq(&t, "r2", &writer_id)? > moved_at && exact(s, &r2).is_some())
                .then_some(())
        },
    )
    .await;

    // Test reads follow the writer: the marker goes to r1, and r2 shows it.
    assert!(engine.probe(rwtop::probe::ProbeRequest::One {
        strategy: rwtop::probe::Strategy::GtidWait(Duration::from_secs(5)),
        target: r2.clone(),
    }));
    let (probe, _) = until(&engine, "a probe after the failover", DEADLINE, |s| {
        s.probes.recent.first().cloned()
    })
    .await;
    assert_eq!(
        probe.outcome,
        rwtop::probe::Outcome::Fresh,
        "probe after the failover: {probe:?}"
    );

    // Nothing was written to the read-only old primary since the switchover began.
    let seen = engine.latest().node("primary").unwrap().sample_seq;
    until(
        &engine,
        "two more samples of the old primary",
        DEADLINE,
        |s| (s.node("primary")?.sample_seq >= seen + 2).then_some(()),
    )
    .await;
    eprintln!("{:?} after the switchover began", switched.elapsed());
    assert_eq!(heartbeat_seq(&t, "primary", &writer_id), last_written);

    split_brain_leaves_the_writer_where_it_is(&engine, &t, &writer_id, ("r1", &r1)).await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_switchover_with_configured_roles_promotes_r1_without_false_alarms() {
    let t = TestSandbox::start(2, false);
    // Every node configured with its role, as a rwtop.toml lists them; no discovery.
    let spec = spec(&t, &["r1", "r2"]);
    let writer_id = spec.writer_id.clone();
    let engine = Engine::start(&spec);
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;
    switch_over_to_r1(&t, &writer_id);

    // The configured replica r1 now takes writes and replicates from nobody: it is shown as a
    // primary, the writer moves to it, r2 reads exact lag again, and no `writable_replica` is
    // raised on it.
    let (s, took) = until(
        &engine,
        "r1 a primary with the writer on it",
        DEADLINE,
        |s| {
            let promoted = s.node("r1")?.role == Role::Primary;
            let writing = s.heartbeat.node.as_deref() == Some("r1")
                && s.heartbeat.writer == WriterState::Writing;
            (promoted && writing && exact(s, "r2").is_some()).then(|| s.clone())
        },
    )
    .await;
    eprintln!("configured roles: promotion followed after {took:?}");
    assert_eq!(s.node("r2").unwrap().source.as_deref(), Some("r1"));
    // Judged over a few more samples: a false alarm needs two to be raised.
    let seen = s.node("r1").unwrap().sample_seq;
    let (s, _) = until(&engine, "three more samples of r1", DEADLINE, |s| {
        (s.node("r1")?.sample_seq >= seen + 3).then(|| s.clone())
    })
    .await;
    assert!(
        alert(&s, AlertKind::WritableReplica, Some("r1")).is_none(),
        "{:?}",
        s.alerts.active
    );
    assert_eq!(s.node("r1").unwrap().role, Role::Primary);
    engine.shutdown().await;
}

/// The old primary turns writable again after the writer moved to `promoted` (sandbox and
/// engine names; a split brain):
/// the writer stays where it writes, on a primary that answers and is writable, and writes
/// nothing to the old one.
async fn split_brain_leaves_the_writer_where_it_is(
    engine: &Engine,
    t: &TestSandbox,
    writer_id: &str,
    (promoted, promoted_name): (&str, &str),
) {
    let (old_seq, new_seq) = (
        heartbeat_seq(t, "primary", writer_id),
        heartbeat_seq(t, promoted, writer_id),
    );
    admin(t, "primary", "SET GLOBAL read_only = 0");
    let seen = engine.latest().node("primary").unwrap().sample_seq;
    let (s, _) = until(
        engine,
        "two samples of the writable old primary",
        DEADLINE,
        |s| {
            let old = s.node("primary")?;
            (old.sample_seq >= seen + 2 && old.read_only() == Some(false)).then(|| s.clone())
        },
    )
    .await;
    assert_eq!(s.heartbeat.node.as_deref(), Some(promoted_name));
    assert_eq!(s.heartbeat.writer, WriterState::Writing);
    assert!(heartbeat_seq(t, promoted, writer_id) > new_seq);
    assert_eq!(heartbeat_seq(t, "primary", writer_id), old_seq);
}

/// Creates an account on the primary with the monitor grants, each passed through `edit` (to
/// add or take away a privilege), and waits until it has replicated.
fn monitor_account(t: &TestSandbox, user: &str, password: &str, edit: impl Fn(String) -> String) {
    let account = format!("'{user}'@'127.0.0.1'");
    let mut sql = vec![format!("CREATE USER {account} IDENTIFIED BY '{password}'")];
    sql.extend(
        monitor_grants(Family::Mariadb, &account)
            .into_iter()
            .map(edit),
    );
    admin(t, "primary", &sql.join("; "));
    tokio::task::block_in_place(|| t.sandbox().wait_replicating(DEADLINE))
        .unwrap_or_else(|e| panic!("{account} replicating: {e}"));
}

fn as_user(endpoint: Endpoint, user: &str, password: &str) -> Endpoint {
    Endpoint {
        user: user.to_owned(),
        password: Some(Secret::new(password)),
        ..endpoint
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_writer_never_writes_to_a_read_only_primary_even_when_it_could() {
    let t = TestSandbox::start(1, false);
    // A monitor account that read_only does not stop (READ_ONLY ADMIN; SUPER or root too): only
    // rwtop's own check keeps its heartbeat off a node turned read-only.
    let (user, password) = ("rwtop_ro_admin", "ro-admin-test-only");
    monitor_account(&t, user, password, |grant| {
        grant.replace("GRANT PROCESS,", "GRANT READ_ONLY ADMIN, PROCESS,")
    });
    let mut spec = spec(&t, &["r1"]);
    for node in &mut spec.nodes {
        node.1 = as_user(node.1.clone(), user, password);
    }
    let writer_id = spec.writer_id.clone();
    let engine = Engine::start(&spec);
    until_healthy(&engine, &["r1"], DEADLINE).await;
    assert_eq!(engine.latest().heartbeat.writer, WriterState::Writing);
    // A test read while writable: the prober's primary connection is open and set up.
    let probe = one_probe(&engine, 1).await;
    assert_eq!(probe.outcome, rwtop::probe::Outcome::Fresh, "{probe:?}");

    admin(&t, "primary", "SET GLOBAL read_only = 1");
    let made_read_only = heartbeat_seq(&t, "primary", &writer_id);
    let (reason, took) = until(&engine, "the writer refuses", DEADLINE, |s| {
        match &s.heartbeat.writer {
            WriterState::Refused { reason } => Some(reason.clone()),
            _ => None,
        }
    })
    .await;
    eprintln!("writer refused {took:?} after read_only=1: {reason}");
    assert!(reason.contains("read_only=ON"), "{reason}");
    // The next heartbeat (250 ms) is the one that must not be written.
    assert!(took <= Duration::from_secs(3), "refused after {took:?}");
    let (s, _) = until(&engine, "heartbeat_stale", DEADLINE, |s| {
        alert(s, AlertKind::HeartbeatStale, None).map(|_| s.clone())
    })
    .await;
    assert!(
        matches!(lag(&s, "r1"), Some(Lag::Unknown { .. })),
        "{:?}",
        lag(&s, "r1")
    );
    assert_eq!(
        heartbeat_seq(&t, "primary", &writer_id),
        made_read_only,
        "written to a read-only node"
    );
    // Test reads check too, on the connection they already hold: refused, no marker written.
    let markers = || {
        let rows = admin(&t, "primary", "SELECT COUNT(*) AS n FROM rwtop.probe");
        rows[0].optional_u64(&["n"]).ok().flatten()
    };
    let before = markers();
    let probe = one_probe(&engine, 2).await;
    assert_eq!(probe.outcome, rwtop::probe::Outcome::Error, "{probe:?}");
    assert!(
        probe
            .cause
            .as_deref()
            .is_some_and(|c| c.contains("read_only=ON")),
        "{probe:?}"
    );
    assert_eq!(markers(), before, "a marker written to a read-only node");

    // Writable again: the writer takes up again by itself.
    admin(&t, "primary", "SET GLOBAL read_only = 0");
    until(
        &engine,
        "writing again, caught up, alerts cleared",
        DEADLINE,
        |s| {
            let writing = s.heartbeat.writer == WriterState::Writing;
            (writing && exact(s, "r1") == Some(Duration::ZERO) && quiet(s)).then_some(())
        },
    )
    .await;
    assert!(heartbeat_seq(&t, "primary", &writer_id) > made_read_only);
    engine.shutdown().await;
}

/// Runs a `gtid-wait` test read on `r1` and waits until it is the `nth` result recorded.
async fn one_probe(engine: &Engine, nth: usize) -> rwtop::probe::ProbeResult {
    assert!(engine.probe(rwtop::probe::ProbeRequest::One {
        strategy: rwtop::probe::Strategy::GtidWait(Duration::from_secs(5)),
        target: "r1".to_owned(),
    }));
    let (result, _) = until(engine, "the test read's result", DEADLINE, |s| {
        (s.probes.recent.len() >= nth).then(|| s.probes.recent[0].clone())
    })
    .await;
    result
}

/// A TCP server that accepts connections and never says a word (a hung server, a black hole
/// behind a proxy): the MySQL handshake never comes. Stops when dropped.
struct Silent {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Silent {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => held.push(stream),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(_) => return,
                }
            }
        });
        Self {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_unreachable_and_refused_nodes_are_per_node_errors() {
    let t = TestSandbox::start(2, false);
    // r2 is monitored by an account without SLAVE MONITOR: it connects, then its replica status
    // is refused.
    let (user, password) = ("rwtop_no_slave_monitor", "no-grant-test-only");
    monitor_account(&t, user, password, |grant| {
        grant.replace(", SLAVE MONITOR", "")
    });
    let silent = Silent::start();
    // A port nothing listens on: connections are refused at once.
    let closed_port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut spec = spec(&t, &["r1"]);
    let r2 = t.sandbox().endpoint("r2").unwrap();
    let wrong = "not-the-password";
    let at = |port| Endpoint { port, ..r2.clone() };
    // Each bad node, and what its error must say: the problem and the fix.
    let bad = [
        (
            "r2",
            as_user(r2.clone(), user, password),
            "SLAVE MONITOR privilege(s) for this operation (error 1227) (missing privilege",
        ),
        (
            "badpass",
            as_user(r2.clone(), "rwtop", wrong),
            "(wrong user or password",
        ),
        ("hung", at(silent.port), "no handshake within 1s"),
        ("closed", at(closed_port), "(nothing listens there"),
        (
            "nodns",
            Endpoint {
                host: "no-such-host.invalid".to_owned(),
                ..at(3306)
            },
            "(the host name does not resolve",
        ),
    ];
    for (name, endpoint, _) in &bad {
        spec.nodes
            .push(((*name).to_owned(), endpoint.clone(), Role::Replica));
    }
    let engine = Engine::start(&spec);
    let mut control = Control::new(&["primary", "r1"]);
    let (s, took) = until(&engine, "node_down on every bad node", DEADLINE, |s| {
        // Once the writer runs, r1 must read exact lag: the bad nodes cannot hold it up.
        if exact(s, "r1").is_some() {
            control.observe(s);
        }
        for (name, _, _) in &bad {
            assert_no_stale_lag(s, name);
        }
        bad.iter()
            .all(|(name, _, _)| alert(s, AlertKind::NodeDown, Some(name)).is_some())
            .then(|| s.clone())
    })
    .await;
    eprintln!("every bad node down after {took:?}");
    for (name, endpoint, says) in &bad {
        let why = cause(&s, name);
        eprintln!("{name}: {why}");
        assert_eq!(s.node(name).unwrap().conn.name(), "down", "{name}");
        assert!(
            why.contains(&endpoint.address()) && why.contains(says),
            "{name}: names its address and {says:?}: {why}"
        );
        assert!(!why.contains(wrong), "{name}: a password shown: {why}");
    }
    // The good nodes kept working all along, for a while longer.
    let seen = s.node("r1").unwrap().sample_seq;
    until(&engine, "three more samples of r1", DEADLINE, |s| {
        control.observe(s);
        (s.node("r1")?.sample_seq >= seen + 3).then_some(())
    })
    .await;
    control.check();
    drop(silent);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_stopped_io_thread_grows_lag_then_clears() {
    let t = TestSandbox::start(2, false);
    let engine = Engine::start(&spec(&t, &["r1", "r2"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    admin(&t, "r1", "STOP SLAVE IO_THREAD");
    let mut control = Control::new(&["primary", "r2"]);
    let mut lags = Vec::new();
    let (s, took) = until(
        &engine,
        "io_thread_stopped and 2 s of lag on r1",
        DEADLINE,
        |s| {
            control.observe(s);
            // Past half a second the relay log is applied: from there lag only grows.
            lags.extend(exact(s, "r1").filter(|l| *l > Duration::from_millis(500)));
            let grown = exact(s, "r1")? > Duration::from_secs(2);
            (grown && alert(s, AlertKind::IoThreadStopped, Some("r1")).is_some()).then(|| s.clone())
        },
    )
    .await;
    eprintln!("IO thread stopped: raised, lag over 2 s after {took:?}");
    let r1 = s.node("r1").unwrap().replica().unwrap();
    assert_eq!(r1.io_running, IoRunning::No);
    assert_eq!(r1.seconds_behind_source, None);
    assert!(
        r1.gtid_backlog.not_received.unwrap_or(0) > 0,
        "{:?}",
        r1.gtid_backlog
    );
    assert!(
        lags.is_sorted(),
        "lag only grows while nothing arrives: {lags:?}"
    );
    let a = alert(&s, AlertKind::IoThreadStopped, Some("r1")).unwrap();
    assert_eq!(evidence(&a, "io_running"), "No");
    assert!(a.cause.starts_with("IO thread stopped"), "{}", a.cause);

    admin(&t, "r1", "START SLAVE IO_THREAD");
    until(&engine, "caught up and cleared", DEADLINE, |s| {
        control.observe(s);
        (exact(s, "r1") == Some(Duration::ZERO) && quiet(s)).then_some(())
    })
    .await;
    control.check();
    engine.shutdown().await;
}

/// The id of r1's replication connection on the primary (r1 replicates as `repl_r1`).
fn dump_thread(t: &TestSandbox) -> Option<u64> {
    admin(
        t,
        "primary",
        "SELECT ID FROM information_schema.PROCESSLIST \
         WHERE COMMAND = 'Binlog Dump' AND USER = 'repl_r1'",
    )
    .first()
    .and_then(|r| r.optional_u64(&["ID"]).ok().flatten())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_fault_killed_replication_connection_reconnects_or_is_shown_connecting() {
    let t = TestSandbox::start(2, false);
    // An account of its own for r1's link, so its Binlog Dump thread can be told apart.
    admin(
        &t,
        "primary",
        "CREATE USER 'repl_r1'@'127.0.0.1' IDENTIFIED BY 'repl-r1-test-only'; \
         GRANT REPLICATION SLAVE ON *.* TO 'repl_r1'@'127.0.0.1'",
    );
    admin(
        &t,
        "r1",
        "STOP SLAVE; CHANGE MASTER TO MASTER_USER='repl_r1', MASTER_PASSWORD='repl-r1-test-only'; \
         START SLAVE",
    );
    tokio::task::block_in_place(|| t.sandbox().wait_replicating(DEADLINE)).unwrap();
    let engine = Engine::start(&spec(&t, &["r1", "r2"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;
    let mut control = Control::new(&["primary", "r2"]);

    // A connection killed while the source still accepts the replica: the IO thread reconnects
    // at once, and there is nothing to alert about.
    let first = dump_thread(&t).expect("r1's Binlog Dump thread");
    admin(&t, "primary", &format!("KILL {first}"));
    let seen = engine.latest().node("r1").unwrap().sample_seq;
    let mut redumped = None;
    until(
        &engine,
        "a new dump thread and three clean samples",
        DEADLINE,
        |s| {
            control.observe(s);
            if redumped.is_none() {
                redumped = dump_thread(&t).filter(|id| *id != first);
            }
            let r1 = s.node("r1")?;
            let clean = r1.replica()?.io_running == IoRunning::Yes && exact(s, "r1").is_some();
            (redumped.is_some() && clean && r1.sample_seq >= seen + 3).then_some(())
        },
    )
    .await;
    let log = engine.latest().alerts.log.clone();
    assert!(
        log.iter().all(|e| e.node.as_deref() != Some("r1")),
        "a reconnect that healed itself: {log:?}"
    );

    // Killed while the source refuses the replica (the network or the account is gone): the
    // IO thread keeps trying, and rwtop says so while the lag grows.
    admin(
        &t,
        "primary",
        "ALTER USER 'repl_r1'@'127.0.0.1' ACCOUNT LOCK",
    );
    let dump = dump_thread(&t).expect("r1's Binlog Dump thread");
    admin(&t, "primary", &format!("KILL {dump}"));
    let mut lags = Vec::new();
    let (s, took) = until(
        &engine,
        "r1 connecting, alerts raised, lag over 2 s",
        DEADLINE,
        |s| {
            control.observe(s);
            // Past half a second the relay log is applied: from there lag only grows.
            lags.extend(exact(s, "r1").filter(|l| *l > Duration::from_millis(500)));
            let grown = exact(s, "r1")? > Duration::from_secs(2);
            let raised = alert(s, AlertKind::IoThreadStopped, Some("r1")).is_some()
                && alert(s, AlertKind::ReplicationError, Some("r1")).is_some();
            (grown && raised).then(|| s.clone())
        },
    )
    .await;
    eprintln!("link refused: alerts and 2 s of lag after {took:?}");
    let r1 = s.node("r1").unwrap().replica().unwrap();
    assert_eq!(r1.io_running, IoRunning::Connecting);
    assert!(r1.io_state.contains("Reconnecting"), "{:?}", r1.io_state);
    let error = r1.last_io_error.as_ref().expect("Last_IO_Error");
    assert_eq!(error.errno, 4151, "{error:?}");
    assert!(
        lags.is_sorted(),
        "lag only grows while nothing arrives: {lags:?}"
    );
    let a = alert(&s, AlertKind::IoThreadStopped, Some("r1")).unwrap();
    assert_eq!(evidence(&a, "io_running"), "Connecting");
    assert!(
        a.cause
            .starts_with("IO thread cannot connect to the source: error 4151"),
        "{}",
        a.cause
    );

    admin(
        &t,
        "primary",
        "ALTER USER 'repl_r1'@'127.0.0.1' ACCOUNT UNLOCK",
    );
    let ((), took) = until(&engine, "reconnected, caught up, cleared", DEADLINE, |s| {
        control.observe(s);
        (exact(s, "r1") == Some(Duration::ZERO) && quiet(s)).then_some(())
    })
    .await;
    eprintln!("link allowed again: clear after {took:?}");
    control.check();
    engine.shutdown().await;
}
