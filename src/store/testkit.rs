//! Synthetic topologies for the rule, panel and export tests and the render bench: a healthy primary `db1` with replicas `r1` and `r2`
//! (MariaDB GTIDs, or MySQL with [`Topo::mysql`]); each test varies one field and steps samples.

use std::time::Duration;

use super::alert_view::{Alert, AlertKind, AlertsView};
use super::apply_rate::{CatchUp, CatchUpState};
use crate::gtid::{GtidList, GtidSet};
pub use crate::mysql::row::{fixture_row, fixture_rows};
use crate::mysql::{
    BinlogPos, DdlStatement, Endpoint, GtidState, IoRunning, NodeState, ReplicaStatus,
};
use crate::poll::{ConnState, NodeSample, WriterState};
use crate::store::backlog::{BytesBehind, GtidBacklog};
use crate::store::lag::Lag;
use crate::store::windows::{Window, WindowStats};
use crate::store::{
    ClockView, HeartbeatView, NodeView, ReplicaView, Role, ServerIdentity, Snapshot, StoreSettings,
};

const PRIMARY_UUID: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
const BASE_UPTIME_S: u64 = 100;
const BASE_SEQ: u64 = 10;

mod parts;
use parts::answering;
pub use parts::{flavor, fresh_scan, galera_member, live, scan, set_clock, set_osc, stale_scan};

/// A node at `127.0.0.1:port` as the user `rwtop`, for stores built in tests and benches.
#[must_use]
pub fn local_endpoint(port: u16) -> Endpoint {
    Endpoint {
        host: "127.0.0.1".to_owned(),
        port,
        user: "rwtop".to_owned(),
        password: None,
        tls: crate::mysql::Tls::default(),
    }
}

/// Store settings at the shipped intervals (1 s polls, 250 ms heartbeat), with discovery,
/// read-only mode and drains off: a test turns on what it checks.
#[must_use]
pub fn store_settings() -> StoreSettings {
    StoreSettings {
        read_pace: None,
        heartbeat_interval: Duration::from_millis(250),
        poll_interval: Duration::from_secs(1),
        discovery: false,
        template: None,
        writers: Vec::new(),
        pt_table: None,
        drain_backend: None,
        drain_detail: None,
        clusters: Vec::new(),
    }
}

/// An exact lag of `ms` milliseconds.
#[must_use]
pub fn exact_ms(ms: u64) -> Lag {
    Lag::Exact {
        lag: Duration::from_millis(ms),
    }
}

#[must_use]
pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[must_use]
pub fn mariadb_gtid(binlog_pos: &str) -> GtidState {
    let list = GtidList::parse(binlog_pos).unwrap_or_else(|e| panic!("{e}"));
    GtidState::Mariadb {
        binlog_pos: list.clone(),
        slave_pos: list.clone(),
        current_pos: list,
    }
}

#[must_use]
pub fn mysql_gtid(executed: &str) -> GtidState {
    GtidState::Mysql {
        executed: GtidSet::parse(executed).unwrap_or_else(|e| panic!("{e}")),
    }
}

#[must_use]
pub fn ddl(statement: &str, elapsed_s: u64, applier: bool) -> DdlStatement {
    DdlStatement {
        id: 7,
        statement: statement.to_owned(),
        elapsed_s,
        progress: None,
        applier,
        waiting_for: None,
        blockers: None,
    }
}

/// `ddl` waiting for a table's metadata lock held by an application's idle transaction, as
/// `metadata_lock_info` names it: connection 1234, `app@10.0.0.5`, idle 95 s in a transaction
/// open 97 s.
#[must_use]
pub fn blocked_ddl(statement: &str, elapsed_s: u64, applier: bool) -> DdlStatement {
    use crate::mysql::{Blockers, HolderSource, Holds, Kill, LastStatement, LockHolder};
    let holder = LockHolder {
        id: 1234,
        user: "app".to_owned(),
        host: "10.0.0.5".to_owned(),
        command: "Sleep".to_owned(),
        idle_s: Some(95),
        trx_age_s: Some(97),
        last_statement: LastStatement::NotTold,
        holds: Holds::Lock {
            mode: "MDL_SHARED_READ".to_owned(),
            object: "shop.t".to_owned(),
        },
        kill: Kill::Connection,
    };
    DdlStatement {
        waiting_for: Some("table metadata lock".to_owned()),
        blockers: Some(Blockers {
            source: HolderSource::MetadataLockInfo,
            holders: vec![holder],
        }),
        ..ddl(statement, elapsed_s, applier)
    }
}

/// A pt-osc run copying `shop.orders`: `copied` of 400,000 estimated rows, `elapsed_s` old.
#[must_use]
pub fn osc_run(copied: u64, elapsed_s: u64) -> crate::mysql::OscRun {
    crate::mysql::OscRun {
        elapsed_s: Some(elapsed_s),
        rows_copied: Some(copied),
        rows_estimate: Some(400_000),
        ..crate::mysql::OscRun::new(crate::mysql::OscTool::PtOsc, "shop", "orders")
    }
}

#[must_use]
pub fn find<'a>(view: &'a AlertsView, kind: AlertKind, node: Option<&str>) -> Option<&'a Alert> {
    view.active
        .iter()
        .find(|a| a.kind == kind && a.node.as_deref() == node)
}

fn node(name: &str, role: Role, server_id: u32) -> NodeView {
    NodeView {
        name: name.to_owned(),
        address: format!("127.0.0.1:{}", 13_305 + server_id),
        role,
        source: None,
        configured: true,
        conn: ConnState::Up,
        identity: ServerIdentity {
            flavor: Some(flavor("10.11.19-MariaDB")),
            server_id: Some(server_id),
            server_uuid: None,
        },
        sample_age: Some(Duration::from_millis(100)),
        clock: Some(ClockView {
            offset_ms: 0,
            error_ms: 0,
        }),
        sample_seq: BASE_SEQ,
        last_gtid: Some(mariadb_gtid("0-1-100")),
        lb: None,
        channels: Vec::new(),
        missing_grants: Vec::new(),
        live: Some(answering(role == Role::Replica)),
    }
}

fn healthy_replica(source: &str) -> ReplicaView {
    let ms = Duration::from_millis;
    let pos = BinlogPos {
        file: "mysql-bin.000003".to_owned(),
        pos: 4_096,
    };
    ReplicaView {
        channel: String::new(),
        source: Some(source.to_owned()),
        source_address: format!("{source}:3306"),
        hop_lag: None,
        io_running: IoRunning::Yes,
        sql_running: true,
        io_state: "Waiting for master to send event".to_owned(),
        sql_state: "Slave has read all relay log; waiting for more updates".to_owned(),
        seconds_behind_source: Some(0),
        heartbeat_lag: Lag::Exact { lag: ms(120) },
        lag_split: crate::store::lag_split::LagSplit::of(
            &Lag::Exact { lag: ms(120) },
            &Lag::Exact { lag: ms(120) },
        ),
        windows: vec![
            (
                Window::OneMinute,
                Some(WindowStats {
                    p50: ms(80),
                    p99: ms(240),
                    max: ms(260),
                    samples: 240,
                }),
            ),
            (Window::FiveMinutes, None),
            (Window::FifteenMinutes, None),
        ],
        gtid_backlog: GtidBacklog {
            not_received: Some(0),
            not_applied: Some(0),
        },
        bytes_behind: BytesBehind {
            io: Some(0),
            sql: Some(0),
        },
        received_gtid: Some(super::exposure::Held::Mariadb {
            list: GtidList::parse("0-1-100").unwrap_or_else(|e| panic!("{e}")),
        }),
        received: pos.clone(),
        applied: pos,
        sql_delay: None,
        sql_remaining_delay: None,
        last_io_error: None,
        last_sql_error: None,
        series: crate::store::series::Chart::default(),
        lag_histogram: crate::store::histogram::LagHistogram::default(),
        beyond_delay: None,
        relay_growth: crate::store::headroom::RelayGrowth::default(),
        protection: None,
        appliers: super::ApplierView::default(),
        catch_up: CatchUp {
            state: CatchUpState::CaughtUp,
            apply_trx_per_s: Some(50.0),
            source_trx_per_s: Some(50.0),
            apply_bytes_per_s: Some(12_800.0),
            source_bytes_per_s: Some(12_800.0),
            lag_change_s_per_s: Some(0.0),
            eta: None,
            window: Some(Duration::from_secs(19)),
        },
        link: crate::mysql::LinkHygiene::default(),
    }
}

/// A channel's catch-up while its lag shrinks `rate` s/s with `eta` to go, the source writing
/// 50 trx/s.
#[must_use]
pub fn catching_up(rate: f64, eta: Duration) -> CatchUp {
    CatchUp {
        state: CatchUpState::CatchingUp,
        apply_trx_per_s: Some(50.0 * (1.0 + rate)),
        source_trx_per_s: Some(50.0),
        apply_bytes_per_s: None,
        source_bytes_per_s: None,
        lag_change_s_per_s: Some(-rate),
        eta: Some(eta),
        window: Some(Duration::from_secs(19)),
    }
}

/// A channel's catch-up while it applies `apply` trx/s against the source's 50, its lag
/// growing `growth` s/s.
#[must_use]
pub fn falling_behind(apply: f64, growth: f64) -> CatchUp {
    CatchUp {
        state: CatchUpState::FallingBehind,
        apply_trx_per_s: Some(apply),
        source_trx_per_s: Some(50.0),
        apply_bytes_per_s: None,
        source_bytes_per_s: None,
        lag_change_s_per_s: Some(growth),
        eta: None,
        window: Some(Duration::from_secs(19)),
    }
}

/// A topology under test; `snapshot` holds the state of every sample [`Topo::at`] makes.
pub struct Topo {
    pub snapshot: Snapshot,
}

impl Default for Topo {
    fn default() -> Self {
        Self::new()
    }
}

impl Topo {
    #[must_use]
    pub fn new() -> Self {
        let mut topo = Self {
            snapshot: Snapshot {
                uptime: Duration::from_secs(BASE_UPTIME_S),
                taken_at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
                heartbeat: HeartbeatView {
                    interval: Duration::from_millis(250),
                    read_every: Some(Duration::from_millis(250)),
                    writer: WriterState::Writing,
                    node: Some("db1".to_owned()),
                    last_seq: Some(4_000),
                    last_ack_age: Some(Duration::from_millis(100)),
                    stale: false,
                    roots: Vec::new(),
                },
                nodes: vec![node("db1", Role::Primary, 1)],
                alerts: AlertsView::default(),
                probes: crate::probe::ProbesView::default(),
                drain: crate::drain::DrainView::default(),
                exposure: Vec::new(),
                clusters: Vec::new(),
            },
        };
        topo.add_replica("r1", "db1", 2);
        topo.add_replica("r2", "db1", 3);
        topo
    }

    /// The same topology with MySQL GTID sets; every node has executed the primary's 1-100.
    #[must_use]
    pub fn mysql() -> Self {
        let mut topo = Self::new();
        for (i, n) in topo.snapshot.nodes.iter_mut().enumerate() {
            n.identity.flavor = Some(flavor("8.0.36"));
            n.identity.server_uuid = Some(format!("{}{}", i + 3, &PRIMARY_UUID[1..]));
            live(n).gtid = mysql_gtid(&format!("{PRIMARY_UUID}:1-100"));
            n.last_gtid = n.gtid().cloned();
            for c in &mut n.channels {
                c.received_gtid = Some(super::exposure::Held::Mysql {
                    set: GtidSet::parse(&format!("{PRIMARY_UUID}:1-100"))
                        .unwrap_or_else(|e| panic!("{e}")),
                });
            }
        }
        topo
    }

    pub fn add_replica(&mut self, name: &str, source: &str, server_id: u32) {
        let mut replica = node(name, Role::Replica, server_id);
        replica.source = Some(source.to_owned());
        replica.channels = vec![healthy_replica(source)];
        self.snapshot.nodes.push(replica);
    }

    /// Adds a second root: a writable primary replicating from nobody.
    pub fn add_primary(&mut self, name: &str, server_id: u32) {
        self.snapshot
            .nodes
            .push(node(name, Role::Primary, server_id));
    }

    /// Adds a Galera cluster `name` of synced `members` (writer the first), each caught up, as
    /// the store shows them: role member, no channels.
    pub fn add_cluster(&mut self, name: &str, members: &[&str]) {
        for (id, member) in (40..).zip(members) {
            let mut node = node(member, Role::Member, id);
            node.live
                .get_or_insert_with(|| parts::answering(false))
                .galera = Some(galera_member());
            self.snapshot.nodes.push(node);
        }
        self.recount_clusters(name, members);
    }

    /// Works the cluster's view out again from its members' views, after a test changed them.
    pub fn recount_clusters(&mut self, name: &str, members: &[&str]) {
        let spec = crate::store::cluster::ClusterSpec {
            name: name.to_owned(),
            members: members.iter().map(|m| (*m).to_owned()).collect(),
            writer: members.first().map(|m| (*m).to_owned()),
        };
        let view = crate::store::cluster::ClusterView::of(&spec, &self.snapshot.nodes);
        self.snapshot.clusters.retain(|c| c.name != name);
        self.snapshot.clusters.push(view);
    }

    /// Adds a named channel to `name`, healthy, replicating from `source`.
    pub fn add_channel(&mut self, name: &str, channel: &str, source: &str) {
        let mut added = healthy_replica(source);
        channel.clone_into(&mut added.channel);
        self.node_mut(name, |n| n.channels.push(added));
    }

    /// Points `name` (its first channel) at `source`.
    pub fn set_source(&mut self, name: &str, source: &str) {
        self.node_mut(name, |n| {
            n.source = Some(source.to_owned());
            if let Some(first) = n.channels.first_mut() {
                first.source = Some(source.to_owned());
            }
        });
    }

    pub fn node_mut(&mut self, name: &str, change: impl FnOnce(&mut NodeView)) {
        let node = self.snapshot.nodes.iter_mut().find(|n| n.name == name);
        change(node.unwrap_or_else(|| panic!("no node {name}")));
    }

    /// Changes `name`'s first channel.
    pub fn replica_mut(&mut self, name: &str, change: impl FnOnce(&mut ReplicaView)) {
        self.channel_mut(name, "", change);
    }

    /// Changes one channel of `name` (`''` the default).
    pub fn channel_mut(
        &mut self,
        name: &str,
        channel: &str,
        change: impl FnOnce(&mut ReplicaView),
    ) {
        self.node_mut(name, |n| {
            let found = n.channels.iter_mut().find(|c| c.channel == channel);
            change(found.unwrap_or_else(|| panic!("{name} has no channel {channel:?}")));
        });
    }

    /// `name` stops answering, as the store shows such a node: down, its own live values gone,
    /// and every channel it had kept, each [`ReplicaView::unanswered`].
    pub fn stop_answering(&mut self, name: &str) {
        self.node_mut(name, |n| {
            n.conn = ConnState::Down {
                next: Duration::from_secs(4),
                cause: "connection refused".to_owned(),
            };
            n.live = None;
            let reason = format!("node is {}", n.conn.name());
            n.channels = std::mem::take(&mut n.channels)
                .into_iter()
                .map(|c| c.unanswered(reason.clone()))
                .collect();
        });
    }

    /// The state as sample `step`: every node has a new sample, one poll (1 s) apart.
    #[must_use]
    pub fn at(&self, step: u64) -> Snapshot {
        let mut snapshot = self.snapshot.clone();
        snapshot.uptime += Duration::from_secs(step);
        snapshot.taken_at += chrono::Duration::seconds(i64::try_from(step).unwrap_or(0));
        // Every read keeps its place against the newest sample: a fresh scan stays fresh.
        for n in &mut snapshot.nodes {
            n.sample_seq += step;
            if let Some(live) = n.live.as_mut() {
                if let Some(scan) = live.scan.as_mut() {
                    scan.sample += step;
                }
                if let Some(osc) = live.osc.as_mut() {
                    osc.sample += step;
                }
            }
        }
        snapshot
    }
}

/// A replica's status sample taken at `at`, one channel per status, on a `MariaDB` node whose
/// own position is `0-1-100`.
#[must_use]
pub fn replica_sample(at: std::time::Instant, replication: Vec<ReplicaStatus>) -> NodeSample {
    NodeSample {
        at,
        reported: crate::mysql::batch::Reported::status_only(
            replication,
            NodeState {
                gtid: mariadb_gtid("0-1-100"),
                read_only: true,
                super_read_only: None,
                parallel_workers: None,
            },
        ),
        resolving: std::collections::BTreeSet::new(),
        took: Duration::from_millis(2),
    }
}

/// The status of a running `MariaDB` replica (recorded), on channel `channel`, replicating
/// from 127.0.0.1:`source_port`.
///
/// # Panics
/// When the fixture does not parse.
#[must_use]
pub fn running_status(channel: &str, source_port: u16) -> ReplicaStatus {
    let row = fixture_row("mariadb-10.11/show_all_slaves_status__running.txt");
    let mut status = ReplicaStatus::from_row(&row).unwrap_or_else(|e| panic!("{e}"));
    channel.clone_into(&mut status.channel);
    "127.0.0.1".clone_into(&mut status.source_host);
    status.source_port = source_port;
    status
}

/// A store (no engine) over two roots, `db1` (port 3306) and `db2` (3308), and `r2` (3307)
/// replicating from `db1` on `''` and from `db2` on `p2`: up, sampled once, and each channel's
/// lag read exactly from its own root's heartbeat, 50 ms behind it.
#[must_use]
pub fn multi_source_store() -> super::Store {
    use crate::poll::{BeatRow, HeartbeatRead, PollEvent};
    let nodes = [("db1", 3306, Role::Primary), ("db2", 3308, Role::Primary)];
    let mut nodes: Vec<_> = nodes
        .iter()
        .map(|(name, port, role)| ((*name).to_owned(), local_endpoint(*port), *role))
        .collect();
    nodes.push(("r2".to_owned(), local_endpoint(3307), Role::Replica));
    let settings = StoreSettings {
        writers: vec![
            ("w@db1".to_owned(), "db1".to_owned()),
            ("w@db2".to_owned(), "db2".to_owned()),
        ],
        ..store_settings()
    };
    let mut store = super::Store::new(settings, &nodes);
    let t0 = std::time::Instant::now();
    let node = || "r2".to_owned();
    store.apply(PollEvent::Conn {
        node: node(),
        state: ConnState::Up,
    });
    let statuses = vec![running_status("", 3306), running_status("p2", 3308)];
    store.apply(PollEvent::Sample {
        node: node(),
        sample: Box::new(replica_sample(t0, statuses)),
    });
    for writer in 0..2 {
        for seq in 1..=2 {
            let at = t0 + Duration::from_millis(250 * seq);
            let gtid = None;
            store.apply(PollEvent::Ack {
                writer,
                seq,
                at,
                gtid,
            });
        }
    }
    // Both rows at 1, and 2 acknowledged 50 ms before the read.
    let row = BeatRow {
        seq: Some(1),
        row_age_ms: None,
    };
    store.apply(PollEvent::Heartbeat {
        node: node(),
        read: HeartbeatRead {
            sent_at: t0 + Duration::from_millis(550),
            rtt: Duration::from_millis(1),
            rows: vec![row, row],
        },
    });
    store
}

/// A SQL-thread alert on `r2`, raised twice from a fixed instant, on `channel` (`None`: the
/// default channel or the node), as the exporters' channel tests need one.
#[must_use]
pub fn sql_stopped_alert(channel: Option<&str>) -> Alert {
    let since = chrono::DateTime::from_timestamp(1_699_999_990, 0).unwrap_or_default();
    Alert {
        kind: AlertKind::SqlThreadStopped,
        node: Some("r2".to_owned()),
        channel: channel.map(str::to_owned),
        severity: AlertKind::SqlThreadStopped.severity(),
        since,
        last_seen: since,
        count: 2,
        evidence: channel
            .map(|c| vec![("channel".to_owned(), c.to_owned())])
            .unwrap_or_default(),
        cause: "test".to_owned(),
        membership: super::alert_view::Membership::default(),
    }
}
