//! `rwtop demo`'s script against real servers, on the fast timeline: each incident happens, in
//! order, with its real effect on the servers (and on rwtop's engine), the multi-source one on one
//! channel of the aggregator while its other channel flows; the loop starts over; a
//! stop ends it promptly; dropping the demo leaves no server and no folder. And without a server
//! binary, the demo says what to install.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::eventually;
use rwtop::alerts::AlertKind;
use rwtop::demo::{Demo, DemoError, Timeline};
use rwtop::engine::Engine;
use rwtop::gtid::GtidList;
use rwtop::mysql::RawRow;
use rwtop::sandbox::{AGGREGATOR, SECOND_CHANNEL, SandboxError};
use tokio::sync::{mpsc, watch};

/// Longest a narration line may take to come: the longest fast step (the stall, 8 s) plus the
/// build and the ALTER's catch-up on a busy two-core machine.
const LINE_DEADLINE: Duration = Duration::from_secs(60);
const DEADLINE: Duration = Duration::from_secs(30);

/// The narration so far, and a way to wait for the next line that matters.
struct Narration {
    rx: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Narration {
    /// Waits for a line containing `needle`, keeping every line read on the way.
    async fn expect(&mut self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let left = LINE_DEADLINE.saturating_sub(start.elapsed());
            match tokio::time::timeout(left, self.rx.recv()).await.ok() {
                Some(Some(line)) => {
                    eprintln!("narration: {line}");
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Some(None) => panic!("the script ended before {needle:?}; saw {:#?}", self.seen),
                None => panic!(
                    "no {needle:?} within {LINE_DEADLINE:?}; saw {:#?}",
                    self.seen
                ),
            }
        }
    }

    fn position(&self, needle: &str) -> usize {
        self.seen
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {:#?}", self.seen))
    }
}

/// Admin SQL without blocking the runtime's other tasks (the script and the engine run on it).
fn admin(demo: &Demo, node: &str, sql: &str) -> Vec<RawRow> {
    tokio::task::block_in_place(|| demo.sandbox().admin(node, sql))
        .unwrap_or_else(|e| panic!("admin SQL on {node}: {e}"))
}

fn status(demo: &Demo, node: &str, column: &str) -> Option<String> {
    admin(demo, node, "SHOW ALL SLAVES STATUS")
        .first()
        .and_then(|row| row.text(&[column]).ok().flatten().map(str::to_owned))
}

fn gtids(demo: &Demo, node: &str, variable: &str) -> GtidList {
    let rows = admin(demo, node, &format!("SELECT @@global.{variable} AS pos"));
    let text = rows[0].text(&["pos"]).unwrap().unwrap_or("");
    GtidList::parse(text).unwrap()
}

/// `(Slave_IO_Running, Slave_SQL_Running)` of one channel of `node`, by its connection name.
fn threads(demo: &Demo, node: &str, channel: &str) -> (String, String) {
    let text = |row: &RawRow, column: &str| row.text(&[column]).unwrap().unwrap_or("").to_owned();
    let rows = admin(demo, node, "SHOW ALL SLAVES STATUS");
    let row = rows
        .iter()
        .find(|row| text(row, "Connection_name") == channel)
        .unwrap_or_else(|| panic!("{node} has no channel {channel:?}"));
    (
        text(row, "Slave_IO_Running"),
        text(row, "Slave_SQL_Running"),
    )
}

/// Whether any binlog of `node` holds an event whose text contains `needle`.
fn binlog_has(demo: &Demo, node: &str, needle: &str) -> bool {
    admin(demo, node, "SHOW BINARY LOGS").iter().any(|file| {
        let name = file.text(&["Log_name"]).unwrap().unwrap().to_owned();
        admin(demo, node, &format!("SHOW BINLOG EVENTS IN '{name}'"))
            .iter()
            .any(|e| {
                e.text(&["Info"])
                    .ok()
                    .flatten()
                    .is_some_and(|i| i.contains(needle))
            })
    })
}

/// Whether `pid` is still a server of the sandbox in `dir` (a recycled pid is someone else).
fn server_alive(pid: i32, dir: &Path) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains(&*dir.to_string_lossy()))
}

/// (a) The stalled link: r2 falls behind the primary while its threads say Yes and SBM 0.
async fn stalled_link(demo: &Demo, said: &mut Narration) {
    said.expect("incident: stalling r2's source link").await;
    assert!(demo.sandbox().relay("r2").unwrap().is_stalled());
    let gap = eventually(
        "r2 behind the primary while stalled",
        DEADLINE,
        async || {
            let r2 = gtids(demo, "r2", "gtid_slave_pos");
            let primary = gtids(demo, "primary", "gtid_binlog_pos");
            let gap = primary.total_distance(&r2);
            let io = status(demo, "r2", "Slave_IO_Running");
            let sbm = status(demo, "r2", "Seconds_Behind_Master");
            (gap >= 5 && io.as_deref() == Some("Yes") && sbm.as_deref() == Some("0")).then_some(gap)
        },
    )
    .await;
    eprintln!("r2 {gap} transactions behind with SBM 0");
    said.expect("resolved: r2's link flows again").await;
    assert!(!demo.sandbox().relay("r2").unwrap().is_stalled());
}

/// (b) r1's IO thread stopped, then running again; (c) r1 delayed, then not.
async fn io_thread_and_delay(demo: &Demo, said: &mut Narration) {
    said.expect("incident: r1's IO thread stopped").await;
    assert_eq!(
        status(demo, "r1", "Slave_IO_Running").as_deref(),
        Some("No")
    );
    said.expect("resolved: r1's IO thread is running again")
        .await;
    assert_ne!(
        status(demo, "r1", "Slave_IO_Running").as_deref(),
        Some("No")
    );

    said.expect("incident: r1 runs with MASTER_DELAY=2").await;
    assert_eq!(status(demo, "r1", "SQL_Delay").as_deref(), Some("2"));
    said.expect("resolved: r1's MASTER_DELAY is back to 0")
        .await;
    assert_eq!(status(demo, "r1", "SQL_Delay").as_deref(), Some("0"));
}

/// (d) The rebuilding ALTER, after the background build, replayed down to c1.
async fn rebuilding_alter(demo: &Demo, said: &mut Narration) {
    said.expect("incident: the app runs ALTER TABLE rwtop.demo_big")
        .await;
    said.expect("progress: the primary rebuilt").await;
    said.expect("resolved: every replica replayed the ALTER")
        .await;
    for node in ["r1", "r2", "c1", AGGREGATOR] {
        assert!(
            binlog_has(
                demo,
                node,
                "ALTER TABLE rwtop.demo_big ENGINE=InnoDB, ALGORITHM=COPY"
            ),
            "{node} replayed the ALTER"
        );
        let rows = admin(demo, node, "SELECT COUNT(*) AS n FROM rwtop.demo_big");
        assert_eq!(rows[0].u64(&["n"]).unwrap(), 20_000, "{node}");
    }
}

/// (e) agg's channel from p2 stops applying: on the server its SQL thread alone is stopped;
/// in rwtop agg/p2's lag grows and alerts while agg's default channel (from the primary) stays
/// near 0; then both channels run again.
async fn one_channel_stopped(demo: &Demo, engine: &Engine, said: &mut Narration) {
    said.expect("incident: agg's channel p2 stopped applying (STOP SLAVE 'p2' SQL_THREAD)")
        .await;
    let yes = |io: &str, sql: &str| (io.to_owned(), sql.to_owned());
    assert_eq!(threads(demo, AGGREGATOR, SECOND_CHANNEL), yes("Yes", "No"));
    assert_eq!(threads(demo, AGGREGATOR, ""), yes("Yes", "Yes"));
    let (stopped, flowing) = eventually(
        "agg/p2 behind and alerting while agg's default channel flows",
        DEADLINE,
        async || {
            let s = engine.latest();
            let agg = s.node(AGGREGATOR)?;
            let (p2, default) = (agg.channel(SECOND_CHANNEL)?, agg.channel("")?);
            let lags = (p2.heartbeat_lag.value()?, default.heartbeat_lag.value()?);
            let alerting = s.alerts.active.iter().any(|a| {
                a.node.as_deref() == Some(AGGREGATOR)
                    && a.channel.as_deref() == Some(SECOND_CHANNEL)
            });
            (!p2.sql_running
                && default.sql_running
                && alerting
                && lags.0 >= Duration::from_secs(3)
                && lags.1 < Duration::from_secs(1))
            .then_some(lags)
        },
    )
    .await;
    eprintln!("agg/p2 {stopped:?} behind while agg's default channel is {flowing:?} behind");
    said.expect("resolved: agg's channel p2 applies again")
        .await;
    assert_eq!(threads(demo, AGGREGATOR, SECOND_CHANNEL), yes("Yes", "Yes"));
}

/// The order of the narration, and nothing failed on the way (the load included).
fn in_order_without_errors(said: &Narration) {
    let order = [
        "demo: primary with replicas",
        "setup: filling rwtop.demo_big",
        "incident: stalling r2",
        "resolved: r2's link",
        "incident: r1's IO thread stopped",
        "resolved: r1's IO thread",
        "incident: r1 runs with MASTER_DELAY",
        "resolved: r1's MASTER_DELAY",
        "incident: agg's channel p2 stopped applying",
        "resolved: agg's channel p2 applies again",
        "incident: the app runs ALTER",
        "resolved: every replica replayed",
        "demo: round 2",
    ];
    let at: Vec<usize> = order.iter().map(|n| said.position(n)).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{order:?} at {at:?}");
    assert!(
        said.position("setup: rwtop.demo_big ready")
            < said.position("incident: the app runs ALTER")
    );
    assert!(
        said.seen
            .iter()
            .all(|l| !l.starts_with("error:") && !l.starts_with("load:")),
        "{:#?}",
        said.seen
    );
}

/// What rwtop made of it: the lie and the stops were caught (agg's on its channel p2 only), and
/// c1 was discovered under r1.
fn engine_saw_it(demo: &Demo, engine: &Engine) {
    let s = engine.latest();
    let raised = |kind: AlertKind, node: &str| {
        s.alerts
            .log
            .iter()
            .any(|e| e.raised && e.kind == kind && e.node.as_deref() == Some(node))
    };
    assert!(
        raised(AlertKind::SbmUnderstatesLag, "r2"),
        "{:#?}",
        s.alerts.log
    );
    assert!(
        raised(AlertKind::IoThreadStopped, "r1"),
        "{:#?}",
        s.alerts.log
    );
    let on_agg = |channel: Option<&str>| {
        s.alerts.log.iter().any(|e| {
            e.raised
                && e.kind == AlertKind::SqlThreadStopped
                && e.node.as_deref() == Some(AGGREGATOR)
                && e.channel.as_deref() == channel
        })
    };
    assert!(on_agg(Some(SECOND_CHANNEL)), "{:#?}", s.alerts.log);
    assert!(!on_agg(None), "{:#?}", s.alerts.log);
    // Named c1 as the narration calls it (its `report_host`), reached at its own port.
    let c1 = s
        .node("c1")
        .unwrap_or_else(|| panic!("c1 not discovered: {:?}", s.nodes));
    assert!(!c1.configured);
    assert_eq!(
        c1.address,
        format!("127.0.0.1:{}", demo.sandbox().port("c1").unwrap())
    );
    assert_eq!(c1.source.as_deref(), Some("r1"));
}

/// Dropping the demo leaves no server of its sandbox and no folder.
async fn torn_down(demo: Demo) {
    let dir: PathBuf = demo.dir().to_owned();
    let pids: Vec<i32> = demo
        .sandbox()
        .state()
        .nodes
        .iter()
        .filter_map(|n| demo.sandbox().pid(&n.name))
        .collect();
    assert_eq!(
        pids.len(),
        6,
        "primary, r1, r2, c1, p2 and agg were running"
    );
    tokio::task::block_in_place(|| drop(demo));
    eventually("servers gone and folder removed", DEADLINE, async || {
        (pids.iter().all(|pid| !server_alive(*pid, &dir)) && !dir.exists()).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_script_runs_real_incidents_in_order_then_tears_down() {
    let demo = tokio::task::spawn_blocking(|| Demo::start(None))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("demo start: {e}"));
    let engine = Engine::start(&demo.engine_spec());
    let (events_tx, events_rx) = mpsc::channel(64);
    let (stop_tx, stop_rx) = watch::channel(false);
    let script = tokio::spawn(demo.run_script_with(Timeline::fast(), events_tx, stop_rx));
    let mut said = Narration {
        rx: events_rx,
        seen: Vec::new(),
    };
    said.expect("demo: primary with replicas").await;
    stalled_link(&demo, &mut said).await;
    io_thread_and_delay(&demo, &mut said).await;
    one_channel_stopped(&demo, &engine, &mut said).await;
    rebuilding_alter(&demo, &mut said).await;
    said.expect("demo: round 2").await;
    in_order_without_errors(&said);
    engine_saw_it(&demo, &engine);

    // A stop ends the script promptly, even mid-incident (round 2 stalls r2 again).
    said.expect("incident: stalling r2's source link").await;
    let stopped = Instant::now();
    stop_tx.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(5), script)
        .await
        .expect("the script stops within 5 s of a stop")
        .unwrap();
    eprintln!("script stopped in {:?}", stopped.elapsed());
    assert!(
        !demo.sandbox().relay("r2").unwrap().is_stalled(),
        "a stopped script leaves no link stalled"
    );
    engine.shutdown().await;
    torn_down(demo).await;
}

/// The child half of [`demo_without_a_server_says_what_to_install`]: run in a separate process
/// because the server search path comes from the environment.
const CHILD: &str = "RWTOP_DEMO_TEST_NO_SERVER";

#[test]
fn demo_without_a_server_says_what_to_install() {
    if std::env::var_os(CHILD).is_some() {
        match Demo::start(None) {
            Err(e @ DemoError::Sandbox(SandboxError::NoServer { .. })) => println!("{e}"),
            Err(other) => panic!("expected NoServer, got {other}"),
            Ok(_) => panic!("a demo started with no server binary"),
        }
        // Nothing was created for it.
        let prefix = format!("rwtop-demo-{}-", std::process::id());
        let leftovers = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .count();
        assert_eq!(leftovers, 0);
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "demo_without_a_server_says_what_to_install",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RWTOP_SERVER_DIR", empty.path())
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("apt-get install mariadb-server mariadb-client"),
        "{stdout}"
    );
}
