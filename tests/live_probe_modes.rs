//! The proxies' consistency modes (`docs/design.md`, "The proxies' consistency modes as
//! strategies") on a real sandbox: on a healthy replica each reads fresh where its product
//! would, and with r1's SQL thread stopped none reads stale there: the waiting modes fall back
//! with that cause, the routing modes pick r2 or the primary, and `gr-after` holds the write for
//! its whole timeout.

mod common;

use std::time::{Duration, Instant};

use common::probe_rig::Rig;
use common::{TestSandbox, exact, until};
use rwtop::probe::{Outcome, ProbeResult};
use rwtop::store::Role;

const DEADLINE: Duration = Duration::from_secs(30);

/// The modes that wait on the aimed replica, with a short timeout for a quick test.
const WAITING: [&str; 5] = [
    "maxscale-local(500ms)",
    "maxscale-global(500ms)",
    "maxscale-universal(500ms)",
    "router-wait(500ms)",
    "gr-before(500ms)",
];

/// The modes that route without waiting.
const ROUTING: [&str; 8] = [
    "maxscale-fast",
    "maxscale-fast-global",
    "maxscale-fast-universal",
    "maxscale-fast(monitor=100ms)",
    "maxscale-fast(monitor=1ms)",
    "maxscale-fast-global(monitor=1ms)",
    "router-wait(0)",
    "proxysql-gtid",
];

/// The fast modes on rwtop's own polls: every poll was taken before the write.
const ON_POLLS: [&str; 3] = [
    "maxscale-fast",
    "maxscale-fast-global",
    "maxscale-fast-universal",
];

/// The routing modes that can know of the write on a healthy replica right after it: Router's
/// check and ProxySQL's rule ask the replica when routing, and a monitor that reads every
/// millisecond can have seen the write applied before the route. Each reads r1 at least once.
const FIND_THE_WRITE: [&str; 4] = [
    "router-wait(0)",
    "proxysql-gtid",
    "maxscale-fast(monitor=1ms)",
    "maxscale-fast-global(monitor=1ms)",
];

impl Rig {
    /// Two replicas, both polled and caught up, an engine and a prober.
    async fn start() -> Self {
        let t = TestSandbox::start(2, false);
        let nodes = [
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ];
        let rig = Rig::new(t, &nodes);
        until(&rig.engine, "r1 and r2 polled, caught up", DEADLINE, |s| {
            let ready = ["r1", "r2"].iter().all(|n| {
                exact(s, n) == Some(Duration::ZERO) && s.node(n).is_some_and(|v| v.gtid().is_some())
            });
            ready.then_some(())
        })
        .await;
        rig
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn cause(r: &ProbeResult) -> &str {
    r.cause.as_deref().unwrap_or_default()
}

/// Never stale, never an error, one marker read on a node of the sandbox, and never on `not_on`.
fn holds(r: &ProbeResult, not_on: Option<&str>) {
    assert!(
        matches!(r.outcome, Outcome::Fresh | Outcome::FellBack),
        "{r:#?}"
    );
    assert!(
        matches!(r.served_by.as_deref(), Some("primary" | "r1" | "r2")),
        "served by a node of the sandbox: {r:#?}"
    );
    if let Some(node) = not_on {
        assert_ne!(r.served_by.as_deref(), Some(node), "{r:#?}");
    }
    assert_eq!(r.cost.reads, 1, "one marker read: {r:#?}");
}

/// Probes `mode` on the healthy r1 until a read is served by r1 itself, each probe holding
/// meanwhile: a mode that always reads the primary times out here. Returns the probes it took.
async fn reads_r1_at_least_once(rig: &mut Rig, mode: &str) -> u32 {
    let start = Instant::now();
    let mut probes = 0;
    loop {
        let r = rig.probe(mode, "r1").await;
        probes += 1;
        if r.served_by.as_deref() == Some("r1") {
            assert_eq!(r.outcome, Outcome::Fresh, "{r:#?}");
            assert_eq!(r.cost.reads, 1, "one marker read: {r:#?}");
            return probes;
        }
        holds(&r, None);
        assert!(
            start.elapsed() < DEADLINE,
            "{mode} never read the healthy r1 in {probes} probes: {r:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxies_modes_read_fresh_when_healthy_and_never_stale_past_a_stopped_sql_thread() {
    let mut rig = Rig::start().await;

    // Healthy: every waiting mode reads r1 itself, fresh, well within its timeout.
    for mode in WAITING.into_iter().chain(["gr-after(2s)"]) {
        let r = rig.probe(mode, "r1").await;
        assert_eq!(r.outcome, Outcome::Fresh, "{r:#?}");
        assert_eq!(r.served_by.as_deref(), Some("r1"), "{r:#?}");
        assert!(r.waited < ms(500), "{r:#?}");
        assert_eq!(r.primary_reads, 0, "{r:#?}");
    }
    let r = rig.probe("router-wait(500ms)", "r1").await;
    assert!(
        r.note
            .as_deref()
            .unwrap_or_default()
            .contains("MASTER_GTID_WAIT"),
        "MariaDB runs Router's wait with its own function, and says so: {r:#?}"
    );
    // AFTER held the write until both replicas had it: measured, and short on a healthy pair.
    let r = rig.probe("gr-after(2s)", "r1").await;
    let held = r
        .cost
        .write_wait
        .expect("gr-after measures the write's hold");
    assert!(held < ms(1500), "{r:#?}");
    assert_eq!(
        r.waited,
        Duration::ZERO,
        "the read itself waits for nothing"
    );

    // rwtop's polls were taken before the write: a fast mode on them can only send the read to
    // the primary, which is what MaxScale does when its monitor has not seen the write yet.
    for mode in ON_POLLS {
        let r = rig.probe(mode, "r1").await;
        assert_eq!(r.outcome, Outcome::FellBack, "{r:#?}");
        assert_eq!(r.served_by.as_deref(), Some("primary"), "{r:#?}");
        assert!(cause(&r).contains("no replica known to have"), "{r:#?}");
        assert!(r.cost.position_age.is_some(), "{r:#?}");
        assert_eq!(r.cost.monitor, None);
    }
    for mode in ROUTING {
        holds(&rig.probe(mode, "r1").await, None);
    }
    for mode in FIND_THE_WRITE {
        let probes = reads_r1_at_least_once(&mut rig, mode).await;
        eprintln!("{mode} read the healthy r1 after {probes} probes");
    }
    let r = rig.probe("maxscale-fast(monitor=100ms)", "r1").await;
    assert_eq!(r.cost.monitor, Some(ms(100)), "{r:#?}");
    let age = r
        .cost
        .position_age
        .expect("the monitor's reading has an age");
    assert!(
        age < ms(1000),
        "the prober's monitor reads every 100ms: {r:#?}"
    );

    r1_stopped(&mut rig).await;
    rig.prober.close().await;
    rig.engine.shutdown().await;
}

/// r1's SQL thread stops, r2 stays healthy: nothing reads r1 stale.
async fn r1_stopped(rig: &mut Rig) {
    // r1's SQL thread stops; r2 stays healthy.
    rig.t.admin("r1", "STOP SLAVE SQL_THREAD");
    until(&rig.engine, "r1's SQL thread seen stopped", DEADLINE, |s| {
        let stopped = s
            .node("r1")
            .and_then(|n| n.replica())
            .is_some_and(|r| !r.sql_running);
        stopped.then_some(())
    })
    .await;
    for mode in WAITING {
        let r = rig.probe(mode, "r1").await;
        assert_eq!(r.outcome, Outcome::FellBack, "{r:#?}");
        assert_eq!(r.served_by.as_deref(), Some("primary"), "{r:#?}");
        assert!(
            cause(&r).contains("timeout after 500ms; the SQL thread is not running"),
            "{r:#?}"
        );
        assert!(r.waited >= ms(450), "waited its timeout: {r:#?}");
        assert_eq!(r.primary_reads, 1);
    }
    for mode in ROUTING {
        holds(&rig.probe(mode, "r1").await, Some("r1"));
    }
    // AFTER: r1 cannot apply the write, so the write is held for the whole timeout, and the
    // read r1 was aimed at goes to the primary.
    let r = rig.probe("gr-after(500ms)", "r1").await;
    assert_eq!(r.outcome, Outcome::FellBack, "{r:#?}");
    assert!(cause(&r).contains("SQL thread is not running"), "{r:#?}");
    let held = r.cost.write_wait.expect("measured");
    assert!(held >= ms(450), "{r:#?}");
    assert!(
        r.note
            .as_deref()
            .unwrap_or_default()
            .contains("gave up on r1"),
        "{r:#?}"
    );
    // Aimed at the healthy r2, AFTER still holds every write for r1: the cost of one bad member.
    let r = rig.probe("gr-after(500ms)", "r2").await;
    assert_eq!(r.outcome, Outcome::Fresh, "{r:#?}");
    assert_eq!(r.served_by.as_deref(), Some("r2"), "{r:#?}");
    assert!(r.cost.write_wait.is_some_and(|d| d >= ms(450)), "{r:#?}");
}
