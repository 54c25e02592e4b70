//! A node's own binlog coordinate (`SHOW BINLOG STATUS`) and list (`SHOW BINARY LOGS`) are read
//! only where a watched replica replicates from it (`src/poll/feeds.rs`): the primary and a
//! cascade's middle read the coordinate on every poll, a leaf neither once every node has
//! answered, and the replicas' bytes behind still come from their sources' coordinates. When a
//! leaf becomes a source (a replica repointed to it), it reads them again and its new replica's
//! bytes behind follow. The list, which costs the server a file opened per binlog, is read when a
//! node begins to feed, at once after each rotation (every snapshot shows the rotated file's final
//! size) and otherwise once a minute. The servers' own counters say which node was asked.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, primary_and, until};
use rwtop::store::Snapshot;
use rwtop::topology::Topology as _;

const DEADLINE: Duration = Duration::from_secs(40);
/// How long the counters are watched: twelve polls of every node, at most one of which reads the
/// binlog list of a node that holds one (every 60th; it was every 5th, two or three in twelve).
const WATCH: Duration = Duration::from_secs(12);

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

/// A source's reads over [`WATCH`]: the coordinate on (nearly) every poll, the list at most once.
fn feeds(reads: Reads) -> bool {
    reads.coordinate >= WATCH.as_secs() - 1 && reads.list <= 1
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
    let r2_before = coordinate_reads(&t, "r2");
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
    // r2 read its list when it began to feed; r1 shows none once it stopped.
    assert!(coordinate_reads(&t, "r2").list > r2_before.list);
    let s = engine.snapshots().borrow().clone();
    let listed = |node: &str| s.node(node).map(|n| n.binlog().files.clone());
    assert!(listed("r2").is_some_and(|f| !f.is_empty()), "r2 feeds c1");
    assert_eq!(listed("r1"), Some(Vec::new()), "r1 is a leaf");
    engine.shutdown().await;
}

/// `FLUSH BINARY LOGS` in the rotation test.
const ROTATIONS: u64 = 3;

/// The primary's binlog files and their sizes, as the server lists them.
fn listed(t: &TestSandbox) -> Vec<(String, u64)> {
    t.admin("primary", "SHOW BINARY LOGS")
        .iter()
        .map(|r| {
            let name = r.optional_text(&["Log_name"]).expect("Log_name").to_owned();
            (name, r.optional_u64(&["File_size"]).unwrap().expect("size"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_the_binlog_list_follows_each_rotation_at_once_and_is_read_rarely_between() {
    let t = TestSandbox::start(1, false);
    let spec = primary_and(&t, &["r1"]);
    let engine = rwtop::engine::Engine::start(&spec);
    let _load = Load::start(&t).await;
    let settled = |s: &Snapshot| bytes_behind(s, "r1").is_some();
    let reads = reads_while(&t, &engine, &["primary"], settled).await;
    assert!(feeds(reads[0]), "no rotation, at most one list: {reads:?}");

    let before = coordinate_reads(&t, "primary");
    for _ in 0..ROTATIONS {
        t.admin("primary", "FLUSH BINARY LOGS");
        // The file rotated out is closed: its size is final. One more listing of ours below.
        let files = listed(&t);
        let [.., (closed, size), (current, _)] = files.as_slice() else {
            panic!("a rotation leaves two files at least: {files:?}");
        };
        // Every snapshot that shows the new file shows the closed one at its final size, from
        // the first on; ten of them in a row (two and a half seconds of polls).
        let mut shown = 0;
        until(&engine, "the rotation shown", DEADLINE, |s| {
            let primary = s.node("primary")?;
            if primary.binlog().head.as_ref()?.file != *current {
                return None;
            }
            let kept = primary.binlog().files.iter().find(|f| f.name == *closed);
            assert_eq!(
                kept.map(|f| f.size),
                Some(*size),
                "{closed} in the list once {current} is the coordinate: {:?}",
                primary.binlog().files
            );
            shown += 1;
            (shown >= 10).then_some(())
        })
        .await;
    }
    let lists = coordinate_reads(&t, "primary").list - before.list - ROTATIONS;
    // One read per rotation, and the minute's cadence at most once more.
    assert!(
        (ROTATIONS..=ROTATIONS + 1).contains(&lists),
        "{lists} reads of the list over {ROTATIONS} rotations"
    );
    engine.shutdown().await;
}
