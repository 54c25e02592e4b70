//! Every channel, on real servers (`docs/design.md`, "Channels and roots"): a second replication
//! channel that cannot connect, or whose SQL thread stops, is alerted within 3 polls naming node
//! and channel while the other channel and the other replicas stay unalerted; each channel's lag
//! comes from its own root's heartbeat, and stopping one channel grows that channel's lag only.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, engine_spec, until, until_healthy};
use rwtop::alerts::{Alert, AlertKind};
use rwtop::engine::Engine;
use rwtop::mysql::ThreadControl;
use rwtop::poll::WriterState;
use rwtop::sandbox::{AGGREGATOR, SECOND_CHANNEL, SECOND_PRIMARY};
use rwtop::store::lag::Lag;
use rwtop::store::{Role, Snapshot};

const DEADLINE: Duration = Duration::from_secs(60);
/// The promise: a broken channel is alerted within this many of its node's polls.
const POLLS: u64 = 3;

/// Active alerts on `node`, with their channel.
fn alerts_on<'a>(s: &'a Snapshot, node: &str) -> Vec<&'a Alert> {
    s.alerts
        .active
        .iter()
        .filter(|a| a.node.as_deref() == Some(node))
        .collect()
}

fn channel_alert<'a>(
    s: &'a Snapshot,
    kind: AlertKind,
    node: &str,
    channel: &str,
) -> Option<&'a Alert> {
    s.alerts.active.iter().find(|a| {
        a.kind == kind && a.node.as_deref() == Some(node) && a.channel.as_deref() == Some(channel)
    })
}

fn channel_lag(s: &Snapshot, node: &str, channel: &str) -> Option<Lag> {
    Some(s.node(node)?.channel(channel)?.heartbeat_lag.clone())
}

fn exact_on(s: &Snapshot, node: &str, channel: &str) -> Option<Duration> {
    match channel_lag(s, node, channel)? {
        Lag::Exact { lag } => Some(lag),
        _ => None,
    }
}

fn sample_seq(s: &Snapshot, node: &str) -> u64 {
    s.node(node).map_or(0, |n| n.sample_seq)
}

/// A channel stopped between `begin` and `done` reads, in a snapshot built at `built`, the time
/// since the stop: off by at most the estimator's half heartbeat interval (it reads from the
/// middle of the interval the stop fell in) and a busy machine's margin, either way. The stop
/// must have taken milliseconds, so a bias of half a second fails.
fn lag_is_the_time_since(lag: Duration, built: Instant, (begin, done): (Instant, Instant)) {
    let (low, high) = (built - done, built - begin);
    let margin = Duration::from_millis(125 + 75);
    eprintln!("read {lag:?} {low:?}..{high:?} after the stop");
    assert!(
        done - begin <= Duration::from_millis(100),
        "the stop took {:?}",
        done - begin
    );
    assert!(
        lag + margin >= low && lag <= high + margin,
        "lag {lag:?} for a stop {low:?}..{high:?} before the snapshot"
    );
}

/// The engine over the multi-source sandbox with both primaries as roots.
fn multi_source_engine(t: &TestSandbox) -> Engine {
    Engine::start(&engine_spec(
        t,
        &[
            ("primary", Role::Primary),
            (SECOND_PRIMARY, Role::Primary),
            ("r1", Role::Replica),
            (AGGREGATOR, Role::Replica),
        ],
    ))
}

/// Both channels of the aggregator caught up by their own root's heartbeat, r1 too, no alert.
async fn until_all_flow(engine: &Engine) -> Snapshot {
    until_healthy(engine, &["r1", AGGREGATOR], DEADLINE).await;
    let (s, _) = until(engine, "both of agg's channels at lag 0", DEADLINE, |s| {
        let zero = |c| exact_on(s, AGGREGATOR, c) == Some(Duration::ZERO);
        (zero("") && zero(SECOND_CHANNEL) && s.alerts.active.is_empty()).then(|| s.clone())
    })
    .await;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_one_channel_stops_and_only_that_channel_lags_and_alerts() {
    let t = TestSandbox::start_multi_source(1);
    let mut dba = common::dba(&t, AGGREGATOR).await;
    let started = Instant::now();
    let engine = multi_source_engine(&t);
    let _load = Load::start(&t).await;
    let s = until_all_flow(&engine).await;

    // Two roots, each with its own writer and row.
    let roots: Vec<_> = s
        .heartbeat
        .roots
        .iter()
        .map(|r| (r.node.as_deref(), r.writer.clone(), r.last_seq.is_some()))
        .collect();
    assert_eq!(
        roots,
        [
            (Some("primary"), WriterState::Writing, true),
            (Some(SECOND_PRIMARY), WriterState::Writing, true),
        ],
        "{:?}",
        s.heartbeat.roots
    );
    let agg = s.node(AGGREGATOR).expect("agg");
    let sources: Vec<_> = agg
        .channels
        .iter()
        .map(|c| (c.channel.as_str(), c.source.as_deref()))
        .collect();
    assert_eq!(
        sources,
        [
            ("", Some("primary")),
            (SECOND_CHANNEL, Some(SECOND_PRIMARY))
        ]
    );

    // Channel p2's SQL thread stops; p2 keeps taking heartbeats, primary too.
    let seq_at_stop = sample_seq(&s, AGGREGATOR);
    let stop = t
        .sandbox()
        .binaries()
        .flavor
        .channel_thread_sql(ThreadControl::StopSql, SECOND_CHANNEL);
    let begin = Instant::now();
    dba.query_rows(&stop).await.unwrap();
    let done = Instant::now();
    let (s, _) = until(&engine, "sql_thread_stopped on agg/p2", DEADLINE, |s| {
        channel_alert(s, AlertKind::SqlThreadStopped, AGGREGATOR, SECOND_CHANNEL)
            .is_some()
            .then(|| s.clone())
    })
    .await;
    let polls = sample_seq(&s, AGGREGATOR) - seq_at_stop;
    assert!(
        polls <= POLLS,
        "alerted after {polls} of agg's polls, more than {POLLS}"
    );
    let alert = channel_alert(&s, AlertKind::SqlThreadStopped, AGGREGATOR, SECOND_CHANNEL)
        .expect("found above");
    assert_eq!(alert.evidence[0], ("channel".to_owned(), "p2".to_owned()));
    assert_eq!(alert.place().as_deref(), Some("agg/p2"));

    // Let the stop last: p2's lag grows with it, the default channel and r1 stay caught up,
    // and nothing else is alerted.
    let (s, _) = until(&engine, "agg/p2 lagging 3 s", DEADLINE, |s| {
        exact_on(s, AGGREGATOR, SECOND_CHANNEL)
            .is_some_and(|lag| lag >= Duration::from_secs(3))
            .then(|| s.clone())
    })
    .await;
    let lag = exact_on(&s, AGGREGATOR, SECOND_CHANNEL).expect("exact above");
    lag_is_the_time_since(lag, started + s.uptime, (begin, done));
    let small = Duration::from_secs(1);
    for (node, channel) in [(AGGREGATOR, ""), ("r1", "")] {
        let other = exact_on(&s, node, channel);
        assert!(
            other.is_some_and(|l| l < small),
            "{node}/{channel:?} lag {:?} while only agg/p2 is stopped",
            channel_lag(&s, node, channel)
        );
    }
    let others: Vec<_> = s
        .alerts
        .active
        .iter()
        .filter(|a| a.channel.as_deref() != Some(SECOND_CHANNEL))
        .collect();
    assert!(others.is_empty(), "alerts beside agg/p2: {others:#?}");

    // The thread starts again: the channel catches up and its thread alert clears (its lag
    // percentile alert, if raised, holds for its window, as for any replica).
    t.sandbox()
        .channel_threads(AGGREGATOR, SECOND_CHANNEL, ThreadControl::StartSql)
        .unwrap();
    until(
        &engine,
        "agg/p2 caught up, its thread alert cleared",
        DEADLINE,
        |s| {
            let stopped = channel_alert(s, AlertKind::SqlThreadStopped, AGGREGATOR, SECOND_CHANNEL);
            let zero = exact_on(s, AGGREGATOR, SECOND_CHANNEL) == Some(Duration::ZERO);
            (zero && stopped.is_none()).then_some(())
        },
    )
    .await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_second_channel_that_cannot_connect_is_alerted_by_name() {
    let t = TestSandbox::start_multi_source(1);
    let engine = multi_source_engine(&t);
    let s = until_all_flow(&engine).await;

    // r1 gains a connection `extra` whose source refuses connections: IO `Connecting`,
    // Last_IO_Errno 2003. The sandbox's own user, so only the address is wrong.
    let seq_at_add = sample_seq(&s, "r1");
    t.admin(
        "r1",
        "CHANGE MASTER 'extra' TO MASTER_HOST='127.0.0.1', MASTER_PORT=1, \
         MASTER_USER='rwtop', MASTER_CONNECT_RETRY=1; START SLAVE 'extra'",
    );
    // The two statements are not one step: a poll between them sees the new connection
    // stopped (IO `No`), which is alerted as a stop. Waited for: the alert on a poll that reads
    // it connecting, whose cause must then say so.
    let (s, _) = until(
        &engine,
        "io_thread_stopped on r1/extra, connecting",
        DEADLINE,
        |s| {
            let connecting = s
                .node("r1")
                .and_then(|n| n.channel("extra"))
                .is_some_and(|c| c.io_running == rwtop::mysql::IoRunning::Connecting);
            (connecting && channel_alert(s, AlertKind::IoThreadStopped, "r1", "extra").is_some())
                .then(|| s.clone())
        },
    )
    .await;
    let polls = sample_seq(&s, "r1") - seq_at_add;
    assert!(
        polls <= POLLS,
        "alerted after {polls} of r1's polls, more than {POLLS}"
    );
    let alert = channel_alert(&s, AlertKind::IoThreadStopped, "r1", "extra").expect("found");
    assert!(
        alert
            .cause
            .starts_with("IO thread cannot connect to the source"),
        "{}",
        alert.cause
    );
    let extra = s
        .node("r1")
        .and_then(|n| n.channel("extra"))
        .expect("extra");
    assert_eq!(extra.source, None, "nobody polls 127.0.0.1:1");
    assert!(
        matches!(extra.heartbeat_lag, Lag::Unknown { .. }),
        "{:?}",
        extra.heartbeat_lag
    );
    // r1's default channel, agg's channels: no alert, and r1 still reads its lag.
    let on_default: Vec<_> = alerts_on(&s, "r1")
        .into_iter()
        .filter(|a| a.channel.is_none())
        .collect();
    assert!(on_default.is_empty(), "{on_default:#?}");
    assert!(
        alerts_on(&s, AGGREGATOR).is_empty(),
        "{:#?}",
        s.alerts.active
    );
    assert!(
        exact_on(&s, "r1", "").is_some(),
        "{:?}",
        channel_lag(&s, "r1", "")
    );

    // The connection removed: its alerts go with it.
    t.admin("r1", "STOP SLAVE 'extra'; RESET SLAVE 'extra' ALL");
    until(
        &engine,
        "r1/extra gone and its alerts cleared",
        DEADLINE,
        |s| {
            let gone = s.node("r1").is_some_and(|n| n.channel("extra").is_none());
            let quiet = !s.alerts.active.iter().any(|a| a.channel.is_some());
            (gone && quiet).then_some(())
        },
    )
    .await;
    engine.shutdown().await;
}

/// A cascade keeps end-to-end lag from the root and shows each hop's own share: with r1's SQL
/// thread stopped, c1 (replicating from r1) is as far behind as r1, all of it r1's hop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_cascade_shows_each_hops_share_of_the_lag() {
    let t = TestSandbox::start_with(1, false, true);
    let engine = Engine::start(&common::primary_and(&t, &["r1", "c1"]));
    until_healthy(&engine, &["r1", "c1"], DEADLINE).await;
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    let (s, _) = until(&engine, "c1 lagging 2 s end to end", DEADLINE, |s| {
        exact_on(s, "c1", "")
            .is_some_and(|lag| lag >= Duration::from_secs(2))
            .then(|| s.clone())
    })
    .await;
    let hop = |node: &str| s.node(node).and_then(|n| n.replica()).map(|r| r.hop_lag);
    // r1 replicates from the root: its whole lag is its own hop.
    assert_eq!(hop("r1"), Some(None));
    // c1 is behind by r1's lag, give or take the moments they were read apart (each read is
    // a heartbeat interval from the next): c1's own hop holds little of it.
    let c1_hop = hop("c1").flatten().expect("c1's hop");
    assert!(
        c1_hop < Duration::from_millis(750),
        "c1's own hop {c1_hop:?} of its {:?}",
        exact_on(&s, "c1", "")
    );
    t.admin("r1", "START SLAVE SQL_THREAD");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_dead_root_is_not_succeeded_by_the_other_root() {
    let t = TestSandbox::start_multi_source(1);
    let engine = multi_source_engine(&t);
    let _load = Load::start(&t).await;
    until_all_flow(&engine).await;
    let pid = t.sandbox().pid(SECOND_PRIMARY).expect("p2 runs");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("killing p2");
    until(&engine, "p2 down", DEADLINE, |s| {
        (s.node(SECOND_PRIMARY)?.conn.name() == "down").then_some(())
    })
    .await;
    // p2's writer stays on p2 (its heartbeat goes stale); had it moved to `primary`, its row
    // would reach agg through both channels and stop the default one on a duplicate key.
    let mut polls = None;
    let (s, _) = until(&engine, "five more polls of agg", DEADLINE, |s| {
        let seq = sample_seq(s, AGGREGATOR);
        let first = *polls.get_or_insert(seq);
        (seq >= first + 5).then(|| s.clone())
    })
    .await;
    let p2_root = s
        .heartbeat
        .roots
        .iter()
        .find(|r| r.writer_id.ends_with(&format!("@{SECOND_PRIMARY}")))
        .expect("p2's root");
    assert_eq!(p2_root.node.as_deref(), Some(SECOND_PRIMARY), "{p2_root:?}");
    let agg = s.node(AGGREGATOR).unwrap().channel("").unwrap();
    assert!(
        agg.sql_running && agg.last_sql_error.is_none(),
        "agg's default channel: {agg:?}"
    );
    assert_eq!(exact_on(&s, AGGREGATOR, ""), Some(Duration::ZERO));
    engine.shutdown().await;
}
