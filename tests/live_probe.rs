//! Test reads against a real sandbox: which read-after-write strategies hold when a replica's
//! SQL thread is stopped, when it is caught up under writes, and when replication stops in the
//! middle of a wait; and that no probe ever writes to a replica.

mod common;

use std::time::Duration;

use common::probe_rig::Rig;
use common::{Load, TestSandbox, engine_spec, eventually, exact, lag, until};
use rwtop::engine::Engine;
use rwtop::mysql::IoRunning;
use rwtop::probe::{Outcome, ProbeResult, Prober, Strategy};
use rwtop::store::{Role, Snapshot};

const DEADLINE: Duration = Duration::from_secs(30);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

impl Rig {
    /// A sandbox with two replicas, an engine watching all three and a prober of its own.
    async fn start() -> Self {
        let t = TestSandbox::start(2, false);
        let nodes = [
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ];
        let rig = Self::new(t, &nodes);
        until(
            &rig.engine,
            "r1 and r2 with a measured lag",
            DEADLINE,
            |s| {
                ["r1", "r2"]
                    .iter()
                    .all(|n| exact(s, n).is_some())
                    .then_some(())
            },
        )
        .await;
        rig
    }

    /// Every `domain-server-seq` of a node's binlog state was written by the primary (server 1):
    /// a probe that wrote to a replica would leave that replica's own server id there.
    fn assert_no_local_writes(&self, replica: &str) {
        let rows = self.t.admin(
            replica,
            "SELECT @@gtid_binlog_state AS s, @@server_id AS id",
        );
        let state = rows[0].optional_text(&["s"]).unwrap_or_default().to_owned();
        let own = rows[0].optional_text(&["id"]).unwrap().to_owned();
        assert!(
            !state.is_empty(),
            "{replica} has logged the primary's writes"
        );
        for gtid in state.split(',') {
            let server = gtid.trim().split('-').nth(1).expect("domain-server-seq");
            assert_eq!(
                server, "1",
                "{replica} (server {own}) logged {gtid}: not the primary's"
            );
        }
    }
}

fn lag_over(s: &Snapshot, node: &str, over: Duration) -> bool {
    lag(s, node)
        .and_then(|l| l.value())
        .is_some_and(|lag| lag > over)
}

/// Whether lag-threshold routing with `max` may read `node` in this snapshot: both threads
/// running and an exact lag within `max`.
fn routable(s: &Snapshot, node: &str, max: Duration) -> bool {
    let running = s
        .node(node)
        .and_then(|n| n.replica())
        .is_some_and(|r| r.sql_running && r.io_running == IoRunning::Yes);
    running && exact(s, node).is_some_and(|l| l <= max)
}

fn assert_outcome(r: &ProbeResult, outcome: Outcome, served_by: &str) {
    assert_eq!(r.outcome, outcome, "{r:#?}");
    assert_eq!(r.served_by.as_deref(), Some(served_by), "{r:#?}");
}

fn cause(r: &ProbeResult) -> &str {
    r.cause.as_deref().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_sql_thread_shows_which_strategies_hold() {
    let mut rig = Rig::start().await;
    rig.t.admin("r1", "STOP SLAVE SQL_THREAD");
    // lag-threshold routes on measured lag: wait until the store has seen r1 fall behind.
    until(&rig.engine, "r1 more than 1 s behind", DEADLINE, |s| {
        lag_over(s, "r1", ms(1000)).then_some(())
    })
    .await;

    let r = rig.probe("none", "r1").await;
    assert_outcome(&r, Outcome::Stale, "r1");
    assert_eq!(r.primary_reads, 0);
    assert_eq!(r.queries, 2, "one write and one read");

    let r = rig.probe("sleep(100ms)", "r1").await;
    assert_outcome(&r, Outcome::Stale, "r1");
    assert!(r.waited >= ms(100), "{r:?}");

    // MASTER_POS_WAIT returns NULL at once on a stopped SQL thread: its own cause, no timeout.
    let r = rig.probe("pos-wait(500ms)", "r1").await;
    assert_outcome(&r, Outcome::FellBack, "primary");
    assert!(cause(&r).starts_with("replication stopped"), "{r:?}");
    assert!(
        r.waited < ms(1000),
        "returned at once, not after its 1 s timeout: {r:?}"
    );
    assert_eq!(r.primary_reads, 1);

    // MASTER_GTID_WAIT keeps waiting on a stopped SQL thread and times out.
    let r = rig.probe("gtid-wait(500ms)", "r1").await;
    assert_outcome(&r, Outcome::FellBack, "primary");
    assert!(cause(&r).starts_with("timeout after 500ms"), "{r:?}");
    assert!(cause(&r).contains("SQL thread is not running"), "{r:?}");
    assert!(
        r.waited >= ms(450),
        "the wait function ran to its timeout: {r:?}"
    );

    let r = rig.probe("primary", "r1").await;
    assert_outcome(&r, Outcome::Fresh, "primary");
    assert_eq!(r.primary_reads, 1);

    for strategy in ["sbm-zero(300ms)", "pos-equal(300ms)", "gtid-equal(300ms)"] {
        let r = rig.probe(strategy, "r1").await;
        assert_outcome(&r, Outcome::FellBack, "primary");
        assert!(cause(&r).starts_with("timeout after 300ms"), "{r:?}");
        assert!(r.waited >= ms(280), "{r:?}");
        assert!(r.queries > 4, "polled the replica more than once: {r:?}");
    }
    let r = rig.probe("sbm-zero(300ms)", "r1").await;
    assert!(cause(&r).contains("NULL"), "{r:?}");

    let r = rig.probe("sticky(200ms)", "r1").await;
    assert_outcome(&r, Outcome::Stale, "r1");
    assert_eq!(r.primary_reads, 1, "the read inside the window");

    let r = rig.probe("semisync-pos", "r1").await;
    assert_eq!(r.outcome, Outcome::Error);
    assert!(cause(&r).starts_with("refused: semi-sync is off"), "{r:?}");

    // Lag-threshold routing never reads the stopped replica. In a view where r1 is stopped and
    // r2 runs within the threshold, the route is r2, and r2 has the marker once the router
    // waited out r2's lag plus a heartbeat interval.
    for _ in 0..5 {
        let view = until(
            &rig.engine,
            "r1 stopped, r2 routable within 1 s",
            DEADLINE,
            |s| {
                let r1_stopped = s
                    .node("r1")
                    .and_then(|n| n.replica())
                    .is_some_and(|r| !r.sql_running);
                (r1_stopped && routable(s, "r2", ms(1000))).then(|| s.clone())
            },
        )
        .await
        .0;
        let r = rig.probe_on("lag-threshold(1s)", "r1", &view).await;
        assert_outcome(&r, Outcome::Fresh, "r2");
        assert_eq!(r.primary_reads, 0, "{r:?}");
        assert!(
            r.note
                .as_deref()
                .unwrap_or_default()
                .starts_with("routed to r2"),
            "{r:?}"
        );
    }

    // Once r1 applies again, the markers arrive and nothing was written there by a probe.
    rig.t.admin("r1", "START SLAVE SQL_THREAD");
    let primary_rows = rig
        .t
        .admin("primary", "SELECT COUNT(*) AS n FROM rwtop.probe")[0]
        .u64(&["n"])
        .unwrap();
    for replica in ["r1", "r2"] {
        let t = &rig.t;
        eventually("the markers on the replica", DEADLINE, async || {
            let n = t.admin(replica, "SELECT COUNT(*) AS n FROM rwtop.probe")[0]
                .u64(&["n"])
                .unwrap();
            (n == primary_rows).then_some(())
        })
        .await;
        rig.assert_no_local_writes(replica);
    }
    rig.engine.shutdown().await;
    rig.prober.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caught_up_replica_under_writes_reads_fresh_with_short_waits() {
    let mut rig = Rig::start().await;
    let _load = Load::start(&rig.t).await;
    for strategy in ["gtid-wait(2s)", "pos-wait(2s)"] {
        let mut book = rwtop::probe::ProbeBook::default();
        for _ in 0..10 {
            let r = rig.probe(strategy, "r1").await;
            assert_outcome(&r, Outcome::Fresh, "r1");
            book.record(r);
        }
        let tally = &book.view().tallies[0];
        let waits = tally.wait_ms.expect("waits");
        // Loopback replication applies a row in about a millisecond; a busy CI machine gets
        // ample room, while a wait that ran to its timeout (2 s) still fails.
        assert!(waits.p99 < 500.0, "{tally:?}");
        assert_eq!(tally.primary_reads, 0);
    }

    // Through the engine: the request reaches the prober task and the result the snapshot.
    let strategy = Strategy::GtidWait(Duration::from_secs(1));
    assert!(rig.engine.probe(rwtop::probe::ProbeRequest::One {
        strategy,
        target: "r2".into()
    }));
    let (s, _) = until(
        &rig.engine,
        "the probe's tally in a snapshot",
        DEADLINE,
        |s| {
            s.probes
                .for_replica("r2")
                .any(|t| t.strategy == strategy && t.probes == 1)
                .then(|| s.clone())
        },
    )
    .await;
    assert_eq!(s.probes.recent[0].outcome, Outcome::Fresh);

    rig.assert_no_local_writes("r1");
    rig.assert_no_local_writes("r2");

    // Old markers are cleaned up on the primary, and the delete replicates.
    rig.prober.cleanup(Duration::ZERO).await.expect("cleanup");
    let t = &rig.t;
    for node in ["primary", "r1", "r2"] {
        eventually("no marker left", DEADLINE, async || {
            let n = t.admin(node, "SELECT COUNT(*) AS n FROM rwtop.probe")[0]
                .u64(&["n"])
                .unwrap();
            (n == 0).then_some(())
        })
        .await;
    }
    rig.engine.shutdown().await;
    rig.prober.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_stopped_during_a_pos_wait_is_reported_as_such() {
    let rig = Rig::start().await;
    // With the IO thread stopped, the write never arrives and the wait is still running...
    rig.t.admin("r1", "STOP SLAVE IO_THREAD");
    let view = rig.engine.latest();
    let spec = engine_spec(&rig.t, &[("primary", Role::Primary), ("r1", Role::Replica)])
        .probe_spec()
        .unwrap();
    let waiting = tokio::spawn(async move {
        let mut prober = Prober::new(spec);
        let r = prober
            .run(
                Strategy::PosWait(Duration::from_secs(20)),
                "r1",
                view.as_ref(),
            )
            .await;
        prober.close().await;
        r
    });
    // ...until the SQL thread stops under it.
    let t = &rig.t;
    eventually("MASTER_POS_WAIT running on r1", DEADLINE, async || {
        let rows = t.admin(
            "r1",
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST \
             WHERE INFO LIKE 'SELECT MASTER_POS_WAIT%'",
        );
        (rows[0].u64(&["n"]).unwrap() > 0).then_some(())
    })
    .await;
    let stopped_at = std::time::Instant::now();
    rig.t.admin("r1", "STOP SLAVE SQL_THREAD");
    let r = waiting.await.unwrap();
    eprintln!("{r:?}");
    assert_outcome(&r, Outcome::FellBack, "primary");
    assert!(cause(&r).starts_with("replication stopped"), "{r:?}");
    assert!(
        stopped_at.elapsed() < Duration::from_secs(10),
        "returned when the thread stopped, not at the 20 s timeout"
    );
    rig.t.admin("r1", "START SLAVE");
    rig.engine.shutdown().await;
    rig.prober.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semisync_positions_are_tried_and_explained_when_semisync_is_on() {
    let t = TestSandbox::start(2, true);
    let spec = engine_spec(
        &t,
        &[
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ],
    );
    let engine = Engine::start(&spec);
    let mut prober = Prober::new(spec.probe_spec().unwrap());
    let t = &t;
    eventually(
        "semi-sync active with both replicas",
        DEADLINE,
        async || {
            let rows = t.admin(
                "primary",
                "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'",
            );
            (rows[0].optional_text(&["Value"]) == Some("2")).then_some(())
        },
    )
    .await;
    // r1 receives (and acknowledges) every write but applies none: semi-sync's position says
    // the write reached r1, which is all it promises, so the read goes to r1 and is stale.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    let r = prober
        .run(
            Strategy::SemisyncPos(Duration::from_secs(2)),
            "r1",
            engine.latest().as_ref(),
        )
        .await;
    eprintln!("{r:?}");
    assert_outcome(&r, Outcome::Stale, "r1");
    assert!(
        r.waited < Duration::from_secs(2),
        "r1 received the write before the timeout: {r:?}"
    );
    assert_eq!(r.primary_reads, 0, "{r:?}");
    assert!(
        r.note.as_deref().unwrap_or_default().contains("received"),
        "{r:?}"
    );
    engine.shutdown().await;
    prober.close().await;
}
