//! A node's own binlog coordinate (`SHOW BINLOG STATUS`) and list (`SHOW BINARY LOGS`) are read
//! only where a watched replica replicates from it (`src/poll/feeds.rs`): the primary and a
//! cascade's middle read the coordinate on every poll and the list every 5th, a leaf neither
//! once every node has answered, and the replicas' bytes behind still come from their sources'
//! coordinates. When a leaf becomes a source (a replica repointed to it), it reads them again
//! and its new replica's bytes behind follow. The servers' own counters say which node was
//! asked.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, primary_and, until};
use rwtop::store::Snapshot;
use rwtop::topology::Topology as _;

const DEADLINE: Duration = Duration::from_secs(40);
/// How long the counters are watched: six polls of every node, so at least one that reads the
/// binlog list (every 5th).
const WATCH: Duration = Duration::from_secs(6);

/// The server's global counts of `SHOW BINLOG STATUS` (`MariaDB` 10.5.2 and later) and `SHOW
/// BINARY LOGS`.
fn coordinate_reads(t: &TestSandbox, node: &str) -> Reads {
    let rows = t.admin(
        node,
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_show_binlog_status', 'Com_show_binlogs')",
    );
    let count = |name: &str| {
        rows.iter()
            .find(|r| r.optional_text(&["Variable_name"]) == Some(name))
            .and_then(|r| r.optional_u64(&["Value"]).ok().flatten())
            .unwrap_or_else(|| panic!("no {name} on {node}: {rows:?}"))
    };
    Reads {
        coordinate: count("Com_show_binlog_status"),
        list: count("Com_show_binlogs"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reads {
    coordinate: u64,
    list: u64,
}

/// Each node's reads over [`WATCH`], once the engine has published `settled`.
async fn reads_while(
    t: &TestSandbox,
    engine: &rwtop::engine::Engine,
    nodes: &[&str],
    settled: impl Fn(&Snapshot) -> bool,
) -> Vec<Reads> {
    until(engine, "the topology settled", DEADLINE, |s| {
        settled(s).then_some(())
    })
    .await;
    let before: Vec<Reads> = nodes.iter().map(|n| coordinate_reads(t, n)).collect();
    let from = Instant::now();
    until(engine, "a few polls of every node", DEADLINE, |s| {
        (from.elapsed() >= WATCH && settled(s)).then_some(())
    })
    .await;
    nodes
        .iter()
        .zip(before)
        .map(|(n, b)| {
            let now = coordinate_reads(t, n);
            Reads {
                coordinate: now.coordinate - b.coordinate,
                list: now.list - b.list,
            }
        })
        .collect()
}

/// `replica`'s bytes behind, both stages, when its source's coordinate gave them.
fn bytes_behind(s: &Snapshot, replica: &str) -> Option<(u64, u64)> {
    let r = s.node(replica)?.replica()?;
    Some((r.bytes_behind.io?, r.bytes_behind.sql?))
}

const NONE: Reads = Reads {
    coordinate: 0,
    list: 0,
};

/// A source's reads over [`WATCH`]: the coordinate on (nearly) every poll, the list at least once.
fn feeds(reads: Reads) -> bool {
    reads.coordinate >= WATCH.as_secs() - 1 && reads.list >= 1
}

fn source_of<'a>(s: &'a Snapshot, replica: &str) -> Option<&'a str> {
    s.node(replica)?.replica()?.source.as_deref()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_only_a_node_that_feeds_a_watched_replica_reads_its_binlog_coordinate() {
    let t = TestSandbox::start_with(2, false, true);
    let spec = primary_and(&t, &["r1", "r2", "c1"]);
    let engine = rwtop::engine::Engine::start(&spec);
    let _load = Load::start(&t).await;
    let nodes = ["primary", "r1", "r2", "c1"];

    let settled = |s: &Snapshot| {
        s.sources().as_deref() == Some(&["primary", "r1"][..])
            && ["r1", "r2", "c1"]
                .iter()
                .all(|r| bytes_behind(s, r).is_some())
    };
    let reads = reads_while(&t, &engine, &nodes, settled).await;
    assert!(feeds(reads[0]), "the primary feeds r1 and r2: {reads:?}");
    assert!(feeds(reads[1]), "r1 feeds c1: {reads:?}");
    assert_eq!(reads[2], NONE, "r2 feeds nobody: {reads:?}");
    assert_eq!(reads[3], NONE, "c1 feeds nobody: {reads:?}");

    // c1 is repointed at r2: r2 becomes a source and r1 a leaf.
    let r2 = t.sandbox().endpoint("r2").expect("r2's endpoint");
    t.admin(
        "c1",
        &format!(
            "STOP SLAVE; CHANGE MASTER TO MASTER_HOST = '{}', MASTER_PORT = {}, \
             MASTER_USE_GTID = slave_pos; START SLAVE",
            r2.host, r2.port
        ),
    );
    let repointed = |s: &Snapshot| {
        source_of(s, "c1") == Some("r2")
            && s.sources().as_deref() == Some(&["primary", "r2"][..])
            && bytes_behind(s, "c1").is_some()
    };
    let reads = reads_while(&t, &engine, &nodes, repointed).await;
    assert!(feeds(reads[0]), "the primary still feeds: {reads:?}");
    assert_eq!(reads[1], NONE, "r1 feeds nobody now: {reads:?}");
    assert!(feeds(reads[2]), "r2 feeds c1 now: {reads:?}");
    assert_eq!(reads[3], NONE, "c1 still feeds nobody: {reads:?}");
    engine.shutdown().await;
}
