//! The proxies' consistency modes (`docs/design.md`, "The proxies' consistency modes as
//! strategies") on a real sandbox: on a healthy replica each reads fresh where its product
//! would, and with r1's SQL thread stopped none reads stale there: the waiting modes fall back
//! with that cause, the routing modes pick r2 or the primary, and `gr-after` holds the write for
//! its whole timeout.

mod common;

use std::time::Duration;

use common::probe_rig::Rig;
use common::{TestSandbox, engine_spec, exact, until};
use rwtop::probe::{Outcome, ProbeResult, Prober, Strategy};
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
const ROUTING: [&str; 9] = [
    "maxscale-fast",
    "maxscale-fast-global",
    "maxscale-fast-universal",
    "maxscale-fast(monitor=100ms)",
    "maxscale-fast(monitor=1ms)",
    "maxscale-fast-global(monitor=1ms)",
    "maxscale-fast-universal(monitor=1ms)",
    "router-wait(0)",
    "proxysql-gtid",
];

/// The fast modes on rwtop's own polls: every poll was taken before the write.
const ON_POLLS: [&str; 3] = [
    "maxscale-fast",
    "maxscale-fast-global",
    "maxscale-fast-universal",
];

/// Router's check and ProxySQL's rule ask the replica itself when routing, a round trip after
/// the write: a healthy replica on loopback has nearly always applied it by then (20 of 20
/// probes each here; 15 of 20 for `proxysql-gtid` at a load average of 14), so each must read
/// a fresh replica for most of its reads.
const ASK_THE_REPLICA: [&str; 2] = ["router-wait(0)", "proxysql-gtid"];

/// The fast modes never ask: they route on their monitor's newest reading, so right after a
/// write they find it only where a reading landed between the replica's apply and the route, a
/// fraction of a millisecond. A monitor reading every millisecond does now and then (from 3 to
/// 22 probes of 30 here), one every 100 ms next to never, and rwtop's polls never (the view
/// predates the write): that is MaxScale's own warning about `fast`, and no setup of a healthy
/// replica changes it, since the read comes right after the write. What each must do instead:
/// read a replica whenever a reading had the write, and fall back only when none had it, which
/// the cause shows (the positions it routed on).
const ON_A_MONITOR: [&str; 4] = [
    "maxscale-fast(monitor=1ms)",
    "maxscale-fast-global(monitor=1ms)",
    "maxscale-fast-universal(monitor=1ms)",
    "maxscale-fast(monitor=100ms)",
];

/// The fast modes when the application reads a while after its write (`after=`): their
/// monitor has seen the write by then (its interval, a poll and a publication for rwtop's own
/// polls), so each must read a fresh replica for most of its reads; a mode that kept reading the
/// primary, or routed on the view from before the write, fails. Probes of each, fewer where the
/// delay is long. `fast_universal` wants the primary's position at read time, and the sandbox's
/// heartbeat writes it every 250 ms: against a 100 ms monitor it still finds a replica most of
/// the time, against rwtop's 1 s polls it next to never does (MaxScale's own warning), so that
/// one is held to the rule a fall back must show: no replica's position had what it wanted.
const LATER: [(&str, usize); 5] = [
    ("maxscale-fast(monitor=100ms,after=300ms)", 20),
    ("maxscale-fast-global(monitor=100ms,after=300ms)", 20),
    ("maxscale-fast-universal(monitor=50ms,after=300ms)", 20),
    ("maxscale-fast(after=1500ms)", 10),
    ("maxscale-fast-global(after=1500ms)", 10),
];

const NODES: [(&str, Role); 3] = [
    ("primary", Role::Primary),
    ("r1", Role::Replica),
    ("r2", Role::Replica),
];

/// Probes per routing mode on the healthy pair, counted by where each read went.
const PROBES: usize = 30;

impl Rig {
    /// Two replicas, both polled and caught up, an engine and a prober.
    async fn start() -> Self {
        let t = TestSandbox::start(2, false);
        let rig = Rig::new(t, &NODES);
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

/// Where [`PROBES`] probes of one mode on r1 read: the primary, r1 and r2, each read fresh.
#[derive(Debug, Default)]
struct Reads {
    primary: usize,
    r1: usize,
    r2: usize,
}

impl Reads {
    fn replicas(&self) -> usize {
        self.r1 + self.r2
    }
}

/// Probes `mode` on the healthy r1 `probes` times, each holding, and counts where the reads
/// went; a fall back of a fast mode must name positions of which none had the write.
async fn reads_per_target(rig: &mut Rig, mode: &str, probes: usize) -> Reads {
    let mut reads = Reads::default();
    for _ in 0..probes {
        let r = rig.probe(mode, "r1").await;
        holds(&r, None);
        match r.served_by.as_deref() {
            Some("primary") => {
                reads.primary += 1;
                if mode.starts_with("maxscale-fast") {
                    fell_back_with_no_replica_having_the_write(&r);
                }
            }
            Some("r1") => reads.r1 += 1,
            _ => reads.r2 += 1,
        }
        if r.served_by.as_deref() != Some("primary") {
            assert_eq!(r.outcome, Outcome::Fresh, "a replica read fresh: {r:#?}");
        }
    }
    eprintln!("{mode}: {reads:?} of {probes} probes");
    reads
}

/// Each domain's sequence number in a MariaDB GTID list (`0-1-65,1-4-2`).
fn seq_by_domain(list: &str) -> Vec<(u32, u64)> {
    list.split(',')
        .filter(|g| !g.trim().is_empty())
        .map(|g| {
            let parts: Vec<&str> = g.trim().split('-').collect();
            assert_eq!(parts.len(), 3, "a GTID: {g:?}");
            (parts[0].parse().unwrap(), parts[2].parse().unwrap())
        })
        .collect()
}

/// A fast mode fell back to the primary: its cause (`no replica known to have 0-1-65: r1 at
/// 0-1-64, r2 at 0-1-64`) names the GTIDs it needed and each replica's position it routed on,
/// and none of those may hold them all (else the read should have gone there).
fn fell_back_with_no_replica_having_the_write(r: &ProbeResult) {
    assert_eq!(r.outcome, Outcome::FellBack, "{r:#?}");
    let (wanted, seen) = cause(r)
        .strip_prefix("no replica known to have ")
        .and_then(|rest| rest.split_once(": "))
        .unwrap_or_else(|| panic!("a fast mode's cause: {r:#?}"));
    let wanted = seq_by_domain(wanted);
    for position in seen.split(", ") {
        if position.ends_with(" not monitored yet") {
            continue;
        }
        let (node, at) = position
            .split_once(" at ")
            .unwrap_or_else(|| panic!("{position:?} in {r:#?}"));
        let at = seq_by_domain(at);
        let has_all = wanted
            .iter()
            .all(|(d, n)| at.iter().any(|(d2, n2)| d2 == d && n2 >= n));
        assert!(
            !has_all,
            "{node}'s position had the write, and the read went to the primary: {r:#?}"
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
        fell_back_with_no_replica_having_the_write(&r);
        assert!(r.cost.position_age.is_some(), "{r:#?}");
        assert_eq!(r.cost.monitor, None);
    }
    // Asking the replica finds the write there: most reads go to a fresh replica, and a mode
    // that always reads the primary fails here.
    for mode in ASK_THE_REPLICA {
        let reads = reads_per_target(&mut rig, mode, PROBES).await;
        assert!(
            reads.replicas() * 2 > PROBES,
            "{mode} read a replica on {} of {PROBES} probes: {reads:?}",
            reads.replicas()
        );
    }
    // A monitor finds it now and then (1 ms: 3 to 22 reads of 30 here, each mode) or next to
    // never (100 ms); every fall back named positions without the write, and the 1 ms monitors
    // read a replica between them.
    let mut on_1ms = 0;
    for mode in ON_A_MONITOR {
        let reads = reads_per_target(&mut rig, mode, PROBES).await;
        if mode.ends_with("(monitor=1ms)") {
            on_1ms += reads.replicas();
        }
    }
    assert!(on_1ms > 0, "no 1 ms monitor ever had the write");
    // Read a while after the write, every fast mode finds a replica with it for most reads.
    for (mode, probes) in LATER {
        let reads = reads_per_target(&mut rig, mode, probes).await;
        assert!(
            reads.replicas() * 2 > probes,
            "{mode} read a replica on {} of {probes} probes: {reads:?}",
            reads.replicas()
        );
    }
    // `fast_universal` on rwtop's polls: each fall back named positions without the write.
    reads_per_target(&mut rig, "maxscale-fast-universal(after=1500ms)", 5).await;
    // A prober that follows no engine has no newer poll to route on: refused before writing.
    let spec = engine_spec(&rig.t, &NODES).probe_spec().expect("a primary");
    let mut bare = Prober::new(spec);
    let later: Strategy = "maxscale-fast(after=1s)".parse().expect("a strategy");
    let r = bare.run(later, "r1", rig.engine.latest().as_ref()).await;
    assert_eq!(r.outcome, Outcome::Error, "{r:#?}");
    assert!(cause(&r).contains("follows no engine"), "{r:#?}");
    assert_eq!(r.queries, 0, "refused before writing: {r:#?}");
    bare.close().await;
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
