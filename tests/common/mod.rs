//! Test harness over the project's own sandbox: real servers on free ports in a temp folder,
//! killed and removed when the handle drops, even when the test fails.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the harness"
)]

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rwtop::mysql::{NodeConn, Timeouts};
use rwtop::sandbox::{Ports, Relay, Sandbox, SandboxSpec};

pub mod chromium;
pub mod engine_thread;
pub mod galera;
pub mod http;
pub mod lag_truth;
/// Integration tests only: it runs the binary cargo built for them.
#[cfg(test)]
pub mod lint;
pub mod probe_rig;
pub mod pt_heartbeat;
pub mod signals;

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn tests_root() -> PathBuf {
    std::env::temp_dir().join("rwtop-tests")
}

/// A test process killed outright (no unwinding, so no `Drop`) leaves its servers behind; the
/// next run stops those whose owner is gone. The owner's pid is the folder name's prefix, so a
/// folder is never seen without its owner (a pid file written after the folder would leave a
/// window in which a parallel test reaps a live sandbox).
fn reap_orphans() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = fs::read_dir(tests_root()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let owner = name.split('-').next().and_then(|p| p.parse::<u32>().ok());
            let alive = owner.is_some_and(|pid| {
                pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists()
            });
            if !alive {
                let _ = Sandbox::down(&entry.path().join("s"));
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    });
}

pub struct TestSandbox {
    /// Always `Some` until drop, which must stop the servers before removing the holder folder.
    sandbox: Option<Sandbox>,
    holder: PathBuf,
}

impl TestSandbox {
    pub fn start(replicas: usize, semisync: bool) -> Self {
        Self::start_with(replicas, semisync, false)
    }

    /// With `cascade`, a replica `c1` replicates from `r1`.
    pub fn start_with(replicas: usize, semisync: bool, cascade: bool) -> Self {
        Self::start_spec(replicas, |spec| {
            spec.semisync = semisync;
            spec.cascade = cascade;
        })
    }

    /// Each replica reaches the primary through its own relay, which [`Self::relay`] stalls and
    /// resumes.
    pub fn start_with_relay(replicas: usize) -> Self {
        Self::start_spec(replicas, |spec| spec.relay = true)
    }

    /// Semi-sync on, each replica reaching the primary through its own relay
    /// ([`Self::relay`]): a stalled link holds up the ACKs that travel over it.
    pub fn start_semisync_with_relay(replicas: usize) -> Self {
        Self::start_spec(replicas, |spec| {
            spec.semisync = true;
            spec.relay = true;
        })
    }

    /// A second primary `p2` (GTID domain 1) and an aggregator `agg` replicating from `primary`
    /// on the default channel and from `p2` on channel `'p2'`, every link through a relay
    /// ([`Self::channel_relay`]).
    pub fn start_multi_source(replicas: usize) -> Self {
        Self::start_spec(replicas, |spec| {
            spec.multi_source = true;
            spec.relay = true;
        })
    }

    /// [`Self::start_multi_source`] with server options of their own on some nodes (`node`,
    /// `name=value`): servers set up by different people.
    pub fn start_multi_source_with(replicas: usize, options: &[(&str, &str)]) -> Self {
        Self::start_spec(replicas, |spec| {
            spec.multi_source = true;
            spec.relay = true;
            for (node, option) in options {
                spec.server_options
                    .entry((*node).to_owned())
                    .or_default()
                    .push((*option).to_owned());
            }
        })
    }

    /// [`Self::start`] with server options of their own on some nodes.
    pub fn start_with_options(replicas: usize, options: &[(&str, &str)]) -> Self {
        Self::start_spec(replicas, |spec| {
            for (node, option) in options {
                spec.server_options
                    .entry((*node).to_owned())
                    .or_default()
                    .push((*option).to_owned());
            }
        })
    }

    /// Every replica applies with `workers` parallel workers (`rwtop sandbox up --parallel`).
    pub fn start_parallel(replicas: usize, workers: u16) -> Self {
        Self::start_spec(replicas, |spec| spec.parallel = workers)
    }

    /// [`Self::start_multi_source`] with `workers` parallel workers on every replica, `agg`
    /// included: one pool for both its channels.
    pub fn start_multi_source_parallel(replicas: usize, workers: u16) -> Self {
        Self::start_spec(replicas, |spec| {
            spec.multi_source = true;
            spec.relay = true;
            spec.parallel = workers;
        })
    }

    /// A Galera cluster of `members` (`n1`…, `rwtop sandbox up --galera`) and `replicas` async
    /// replicas of `n1`.
    pub fn start_galera(members: usize, replicas: usize) -> Self {
        Self::start_spec(replicas, |spec| spec.galera = members)
    }

    /// Servers that offer TLS with the sandbox's own CA (see `rwtop::sandbox::tls`).
    pub fn start_with_tls(replicas: usize) -> Self {
        Self::start_spec(replicas, |spec| spec.tls = true)
    }

    /// [`Self::start_with_tls`] with server options of their own on some nodes.
    pub fn start_with_tls_options(replicas: usize, options: &[(&str, &str)]) -> Self {
        Self::start_spec(replicas, |spec| {
            spec.tls = true;
            for (node, option) in options {
                spec.server_options
                    .entry((*node).to_owned())
                    .or_default()
                    .push((*option).to_owned());
            }
        })
    }

    /// An ephemeral sandbox on free ports, with `options` applied to the spec.
    fn start_spec(replicas: usize, options: impl FnOnce(&mut SandboxSpec)) -> Self {
        reap_orphans();
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let holder = tests_root().join(format!("{}-{n}", std::process::id()));
        fs::create_dir_all(&holder).expect("creating the test sandbox folder");
        let mut spec = SandboxSpec {
            replicas,
            ports: Ports::Free,
            ephemeral: true,
            ..SandboxSpec::new(holder.join("s"))
        };
        options(&mut spec);
        // A port chosen free can be taken by a parallel test before the server binds it.
        let sandbox = match Sandbox::up(&spec) {
            Ok(sandbox) => sandbox,
            Err(first) => {
                eprintln!("sandbox up failed once ({first}); retrying on new ports");
                Sandbox::up(&spec).unwrap_or_else(|e| panic!("sandbox up failed: {e}"))
            }
        };
        Self {
            sandbox: Some(sandbox),
            holder,
        }
    }

    pub fn sandbox(&self) -> &Sandbox {
        self.sandbox
            .as_ref()
            .expect("sandbox is present until drop")
    }

    /// The relay of a replica's link; panics on a sandbox started without relays.
    pub fn relay(&self, replica: &str) -> &Relay {
        self.sandbox()
            .relay(replica)
            .unwrap_or_else(|| panic!("{replica} has no relay: use TestSandbox::start_with_relay"))
    }

    /// The relay of one channel of a replica (`""`: the default channel); panics on a sandbox
    /// started without relays.
    pub fn channel_relay(&self, replica: &str, channel: &str) -> &Relay {
        self.sandbox()
            .channel_relay(replica, channel)
            .unwrap_or_else(|| panic!("{replica} has no relay on channel '{channel}'"))
    }

    /// A table `rwtop.big` of `rows` wide rows with a secondary index on the primary (an
    /// `ALTER … ALGORITHM=COPY` of it keeps the replicas busy long enough to watch) and an
    /// application account `app` (password `app-test-only`) to run the DDL as; waits until the
    /// replicas have it all.
    pub fn load_big_table(&self, rows: u32, deadline: Duration) {
        self.admin(
            "primary",
            &format!(
                "CREATE TABLE rwtop.big (id INT PRIMARY KEY, a CHAR(255) NOT NULL, \
                 b CHAR(255) NOT NULL, KEY (a(20))) CHARSET latin1; \
                 INSERT INTO rwtop.big SELECT seq, REPEAT('x', 255), REPEAT('y', 255) \
                 FROM rwtop.seq_1_to_{rows}; \
                 CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-test-only'; \
                 GRANT ALL ON rwtop.* TO 'app'@'127.0.0.1'"
            ),
        );
        self.sandbox().wait_replicating(deadline).unwrap();
    }

    /// Runs [`BIG_TABLE_ALTER`] on the primary as `app`, as an application would, and returns the
    /// connection it ran on with when it was sent and when it ended there. On the primary and on
    /// each of `replicas` its end is held back until it has run [`ALTER_RUNS_AT_LEAST`] there (on
    /// a replica, counted from the primary's end, when its applier gets it):
    /// a transaction that read the table keeps the ALTER waiting for its metadata lock. However
    /// fast this machine copies the table, the statement stays in every node's processlist that
    /// long. On a busy machine the copy can take longer than that:
    /// a hold is released only once the node has also shown the ALTER waiting for the lock for
    /// [`SEEN_WAITING_AT_LEAST`], so every node's scans see it wait, however slow the copy.
    pub async fn alter_big_table(&self, replicas: &[&str]) -> (NodeConn, Instant, Instant) {
        let primary_hold = (
            self.hold_big_table("primary").await,
            self.connect("primary").await,
        );
        let mut replica_holds = Vec::new();
        for replica in replicas {
            replica_holds.push((
                self.hold_big_table(replica).await,
                self.connect(replica).await,
            ));
        }
        let mut conn = self
            .connect_as("primary", APP, Duration::from_secs(600))
            .await;
        let sql = BIG_TABLE_ALTER;
        let started = Instant::now();
        let run = tokio::spawn(async move {
            conn.query_rows(sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            (conn, Instant::now())
        });
        release_at(primary_hold, started + ALTER_RUNS_AT_LEAST).await;
        let (conn, ended) = run.await.unwrap();
        for hold in replica_holds {
            tokio::spawn(release_at(hold, ended + ALTER_RUNS_AT_LEAST));
        }
        (conn, started, ended)
    }

    /// A connection to `node` as `app` in a transaction that has read `rwtop.big`: until it ends,
    /// an ALTER of the table there waits for its metadata lock before it can finish.
    pub async fn hold_big_table(&self, node: &str) -> NodeConn {
        let mut hold = self.connect_as(node, APP, Duration::from_secs(10)).await;
        for sql in ["START TRANSACTION", "SELECT id FROM rwtop.big WHERE id = 1"] {
            hold.query_rows(sql)
                .await
                .unwrap_or_else(|e| panic!("{node}: {sql}: {e}"));
        }
        hold
    }

    /// Starts again the servers that were killed.
    pub fn restart_stopped(&mut self) {
        self.sandbox
            .as_mut()
            .expect("sandbox is present until drop")
            .start_stopped()
            .unwrap_or_else(|e| panic!("restarting stopped servers: {e}"));
    }

    pub fn admin(&self, node: &str, sql: &str) -> Vec<rwtop::mysql::RawRow> {
        self.sandbox()
            .admin(node, sql)
            .unwrap_or_else(|e| panic!("admin SQL on {node} failed: {e}"))
    }

    /// Makes `node` apply rows of `table` at most ~250 a second, whatever the machine does: it
    /// runs triggers for row events and a trigger of its own (not on the primary, not logged)
    /// sleeps 4 ms per row. Its SQL thread is left stopped (a trigger is created with the
    /// applier idle).
    pub fn slow_applier(&self, node: &str, table: &str) {
        let trigger = format!("slow_apply_{}", table.rsplit('.').next().unwrap_or(table));
        self.admin(
            node,
            &format!(
                "STOP SLAVE SQL_THREAD; SET GLOBAL slave_run_triggers_for_rbr = YES; \
                 SET SESSION sql_log_bin = 0; \
                 CREATE TRIGGER rwtop.{trigger} BEFORE INSERT ON {table} FOR EACH ROW \
                 SET @slow = SLEEP(0.004)"
            ),
        );
    }

    pub async fn connect(&self, node: &str) -> NodeConn {
        let endpoint = self.sandbox().endpoint(node).expect("endpoint");
        NodeConn::connect(&endpoint, Timeouts::default())
            .await
            .unwrap_or_else(|e| panic!("connecting to {node}: {e}"))
    }

    /// A connection to `node` as an account the test created (an application or a DBA, not
    /// rwtop's monitor user), whose statements may run up to `query`.
    pub async fn connect_as(
        &self,
        node: &str,
        (user, password): (&str, &str),
        query: Duration,
    ) -> NodeConn {
        let endpoint = rwtop::mysql::Endpoint {
            user: user.to_owned(),
            password: Some(rwtop::mysql::Secret::new(password)),
            ..self.sandbox().endpoint(node).expect("endpoint")
        };
        let timeouts = Timeouts {
            connect: Duration::from_secs(3),
            query,
        };
        NodeConn::connect(&endpoint, timeouts)
            .await
            .unwrap_or_else(|e| panic!("connecting to {node} as {user}: {e}"))
    }

    /// A server status counter of `node` (`SHOW GLOBAL STATUS`), such as `Com_show_processlist`.
    pub fn counter(&self, node: &str, name: &str) -> u64 {
        let rows = self.admin(node, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        rows.first()
            .and_then(|r| r.optional_u64(&["Value"]).ok().flatten())
            .unwrap_or_else(|| panic!("no {name} on {node}: {rows:?}"))
    }

    /// Writes one row on the primary (rwtop's schema exists there from the start).
    pub fn write(&self, id: u64) {
        self.admin(
            "primary",
            &format!(
                "CREATE TABLE IF NOT EXISTS rwtop.t (id BIGINT PRIMARY KEY); \
                 INSERT INTO rwtop.t VALUES ({id})"
            ),
        );
    }
}

/// Rows of `rwtop.big` for the DDL tests: about 20 MB, so that a suite's sandboxes fit on a
/// machine with little disk to spare (the data, the binary logs and a rebuild's copy on every
/// node). Its `ALGORITHM=COPY` rebuild takes under a second; [`TestSandbox::alter_big_table`]
/// holds it on its metadata lock to make it last.
pub const BIG_TABLE_ROWS: u32 = 40_000;
/// The DDL the tests run on `rwtop.big` ([`TestSandbox::alter_big_table`]).
pub const BIG_TABLE_ALTER: &str = "ALTER TABLE rwtop.big ENGINE=InnoDB, ALGORITHM=COPY";
/// How long [`BIG_TABLE_ALTER`] runs at least on every node. On the primary: up to 3 polls until
/// a scan meets it (every 3rd poll) and a poll more for the alert's second bad sample; on a
/// replica: two polls that see its applier busy, then two scans. Held 5 s, the primary's alert
/// came 3.7–4.0 s in; unheld, a replica's ~0.7 s before its end.
const ALTER_RUNS_AT_LEAST: Duration = Duration::from_secs(8);

/// The account `TestSandbox::load_big_table` creates for the application's DDL.
pub const APP: (&str, &str) = ("app", "app-test-only");

/// Sends `sql` on `conn` in the background (a statement that may wait long for a lock) and gives
/// the connection back when it is done; fails the test if the statement fails.
pub fn in_background(mut conn: NodeConn, sql: &'static str) -> tokio::task::JoinHandle<NodeConn> {
    tokio::spawn(async move {
        conn.query_rows(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        conn
    })
}

/// How long a node must have shown [`BIG_TABLE_ALTER`] waiting for its metadata lock before the
/// hold on the table is released ([`TestSandbox::alter_big_table`]): scans come every poll while a
/// DDL runs, so several of them see it wait.
const SEEN_WAITING_AT_LEAST: Duration = Duration::from_millis(2500);

/// Ends `hold`'s transaction at `at`, or later, once `watch` (a connection to the same node that
/// sees every thread) has shown the ALTER waiting for the table's metadata lock for
/// [`SEEN_WAITING_AT_LEAST`]. Fails if the ALTER never waits there within two minutes.
async fn release_at((mut hold, mut watch): (NodeConn, NodeConn), at: Instant) {
    let sql = format!(
        "SELECT ID FROM information_schema.PROCESSLIST \
         WHERE STATE = 'Waiting for table metadata lock' AND INFO LIKE '{}%'",
        BIG_TABLE_ALTER.replace('\'', "''")
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut waiting_since: Option<Instant> = None;
    loop {
        let now = Instant::now();
        let waiting = !watch
            .query_rows(&sql)
            .await
            .unwrap_or_else(|e| panic!("watching the ALTER's wait: {e}"))
            .is_empty();
        waiting_since = waiting.then(|| waiting_since.unwrap_or(now));
        if now >= at && waiting_since.is_some_and(|s| now - s >= SEEN_WAITING_AT_LEAST) {
            break;
        }
        assert!(
            now < deadline,
            "the ALTER was not seen waiting for its metadata lock for {SEEN_WAITING_AT_LEAST:?} \
             within 120 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    hold.query_rows("COMMIT").await.unwrap();
    hold.close().await;
    watch.close().await;
}

impl Drop for TestSandbox {
    fn drop(&mut self) {
        // The sandbox's own Drop kills the servers and removes its folder; then the holder goes.
        drop(self.sandbox.take());
        let _ = fs::remove_dir(&self.holder);
    }
}

/// Short timeouts, so a frozen server turns into an error quickly (the shipped defaults are
/// 3 s / 2 s): what the fault suites poll with.
pub const SHORT: Timeouts = Timeouts {
    connect: Duration::from_secs(1),
    query: Duration::from_secs(1),
};

/// An open connection as a test-only `dba` account made on `node` unlogged (it replicates
/// nowhere): how the lag tests stop and start a replica's threads within a few ms, where a
/// spawned client takes tens of ms that a lag bound would have to allow for.
pub async fn dba(t: &TestSandbox, node: &str) -> NodeConn {
    t.admin(
        node,
        "SET sql_log_bin = 0; \
         CREATE USER 'dba'@'127.0.0.1' IDENTIFIED BY 'dba-test-only'; \
         GRANT ALL ON *.* TO 'dba'@'127.0.0.1'",
    );
    t.connect_as(node, ("dba", "dba-test-only"), Duration::from_secs(10))
        .await
}

/// A node of a `snapshot --json` document, by name; panics naming it when absent.
pub fn json_node<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["name"] == name))
        .unwrap_or_else(|| panic!("no node {name} in {doc:#}"))
}

/// An engine over some of the sandbox's nodes with the shipped defaults (1 s polls, 250 ms
/// heartbeat, no discovery, writes allowed); tests change what their scenario needs.
pub fn engine_spec(
    t: &TestSandbox,
    nodes: &[(&str, rwtop::store::Role)],
) -> rwtop::engine::EngineSpec {
    rwtop::engine::EngineSpec {
        nodes: nodes
            .iter()
            .map(|(n, role)| {
                (
                    (*n).to_owned(),
                    t.sandbox().endpoint(n).expect("endpoint"),
                    *role,
                )
            })
            .collect(),
        timeouts: Timeouts::default(),
        interval: Duration::from_secs(1),
        heartbeat_interval: Duration::from_millis(250),
        read_interval: Duration::from_millis(250),
        read_budget: None,
        writer_id: "rwtop-test".to_owned(),
        discovery: false,
        read_only: false,
        pt_table: "percona.heartbeat".to_owned(),
        by_position: true,
        thresholds: rwtop::config::Thresholds::default(),
        drain: None,
        found_roots: rwtop::engine::upward::FoundRoots::Write,
        found: Vec::new(),
        clusters: Vec::new(),
        test_reads: rwtop::engine::TestReads::Task,
        disks_every: None,
    }
}

/// Polls `check` until it returns `Some` or the deadline passes; never a fixed sleep.
pub async fn eventually<T>(
    what: &str,
    deadline: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The engine spec of the sandbox's primary and the named replicas.
pub fn primary_and(t: &TestSandbox, replicas: &[&str]) -> rwtop::engine::EngineSpec {
    let mut nodes = vec![("primary", rwtop::store::Role::Primary)];
    nodes.extend(replicas.iter().map(|r| (*r, rwtop::store::Role::Replica)));
    engine_spec(t, &nodes)
}

/// The active alert of `kind` on `node` (`None`: topology-wide).
pub fn alert(
    s: &rwtop::store::Snapshot,
    kind: rwtop::alerts::AlertKind,
    node: Option<&str>,
) -> Option<rwtop::alerts::Alert> {
    s.alerts
        .active
        .iter()
        .find(|a| a.kind == kind && a.node.as_deref() == node)
        .cloned()
}

/// One piece of an alert's evidence, by name; panics naming it when absent.
pub fn evidence<'a>(a: &'a rwtop::alerts::Alert, name: &str) -> &'a str {
    a.evidence.iter().find(|(k, _)| k == name).map_or_else(
        || panic!("no evidence {name:?} in {a:?}"),
        |(_, v)| v.as_str(),
    )
}

/// Waits, up to `deadline`, for an engine snapshot that `check` accepts; returns what `check`
/// found and how long it took. The one wait on the engine's snapshots: a check that only says
/// yes or no returns `then(|| s.clone())` to keep the snapshot it accepted.
pub async fn until<T>(
    engine: &rwtop::engine::Engine,
    what: &str,
    deadline: Duration,
    mut check: impl FnMut(&rwtop::store::Snapshot) -> Option<T>,
) -> (T, Duration) {
    let start = Instant::now();
    let mut rx = engine.snapshots();
    let found = eventually(what, deadline, async || {
        let _ = rx.changed().await;
        let s = rx.borrow().clone();
        check(&s)
    })
    .await;
    (found, start.elapsed())
}

/// Waits, up to `deadline`, until every one of `replicas` reads an exact lag of 0 and no alert
/// is active: the healthy start a fault or a scene is measured from.
pub async fn until_healthy(engine: &rwtop::engine::Engine, replicas: &[&str], deadline: Duration) {
    until(engine, "caught up and no alerts", deadline, |s| {
        let caught_up = replicas.iter().all(|r| exact(s, r) == Some(Duration::ZERO));
        (caught_up && s.alerts.active.is_empty()).then_some(())
    })
    .await;
}

/// A replica's heartbeat lag as the snapshot shows it; `None` for a node without replica data.
pub fn lag(s: &rwtop::store::Snapshot, node: &str) -> Option<rwtop::store::lag::Lag> {
    Some(s.node(node)?.replica()?.heartbeat_lag.clone())
}

/// A replica's heartbeat lag when it is exact; `None` when it is a bound, unknown or absent.
pub fn exact(s: &rwtop::store::Snapshot, node: &str) -> Option<Duration> {
    match lag(s, node)? {
        rwtop::store::lag::Lag::Exact { lag } => Some(lag),
        _ => None,
    }
}

/// Runs the rwtop binary these tests were built with to its end. `env` sets (`Some`) or removes
/// (`None`) variables of the environment it otherwise inherits from the test. Integration tests
/// only: cargo sets `CARGO_BIN_EXE_rwtop` for them, not for the snapshot recorder that shares
/// this file.
#[cfg(test)]
pub fn rwtop(args: &[&str], env: &[(&str, Option<&str>)]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rwtop"));
    cmd.args(args);
    for (name, value) in env {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    cmd.output().expect("running rwtop")
}

/// Steady writes on the primary (every 50 ms, as the monitor user in rwtop's schema) until
/// dropped: replicas have something to apply, as in production. A lost connection (the primary
/// killed and restarted) is reopened; a refused write (`read_only`) is skipped.
pub struct Load(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Load {
    pub async fn start(t: &TestSandbox) -> Self {
        Self::start_on(t, "primary").await
    }

    /// The load on another root (`rwtop.load_<node>`: two roots feeding one replica must not
    /// write the same keys).
    pub async fn start_on(t: &TestSandbox, node: &str) -> Self {
        use std::sync::atomic::Ordering;
        let endpoint = t.sandbox().endpoint(node).expect("endpoint");
        let table = if node == "primary" {
            "rwtop.load".to_owned()
        } else {
            format!("rwtop.load_{node}")
        };
        let mut conn = NodeConn::connect(&endpoint, Timeouts::default())
            .await
            .expect("connecting the load");
        conn.query_rows(&format!(
            "CREATE TABLE IF NOT EXISTS {table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)"
        ))
        .await
        .expect("creating the load table");
        let insert = format!("INSERT INTO {table} (v) VALUES (1)");
        let running = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let flag = std::sync::Arc::clone(&running);
        tokio::spawn(async move {
            while flag.load(Ordering::Relaxed) {
                if conn.is_open() {
                    let _ = conn.query_rows(&insert).await;
                } else if let Ok(again) = NodeConn::connect(&endpoint, Timeouts::default()).await {
                    conn = again;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        Self(running)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What `keep` finds in every snapshot the engine publishes, from now until the returned
/// sender is used (or the engine stops); the task hands back all of it.
pub fn record_snapshots<T, I>(
    engine: &rwtop::engine::Engine,
    keep: impl Fn(&rwtop::store::Snapshot) -> I + Send + 'static,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Vec<T>>,
)
where
    T: Send + 'static,
    I: IntoIterator<Item = T>,
{
    let mut rx = engine.snapshots();
    let (stop, mut stopped) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut out = Vec::new();
        loop {
            tokio::select! {
                // A snapshot published before the stop (the one the caller waited for) may not
                // have reached this task yet: take it before returning.
                _ = &mut stopped => {
                    if rx.has_changed().unwrap_or(false) {
                        let s = rx.borrow_and_update().clone();
                        out.extend(keep(&s));
                    }
                    return out;
                }
                changed = rx.changed() => {
                    if changed.is_err() {
                        return out;
                    }
                    let s = rx.borrow_and_update().clone();
                    out.extend(keep(&s));
                }
            }
        }
    });
    (stop, task)
}
