//! Time per full TUI frame (ratatui `TestBackend`, no terminal I/O) with 10 and 1,000 replicas,
//! at 120×40 and 200×60: what the render loop costs per snapshot.
//!
//! Run: `cargo bench --bench render`. Prints `name value unit` lines.

#[path = "support/frames.rs"]
mod frames;

use std::sync::Arc;
use std::time::Duration;

use rwtop::alerts::AlertsView;
use rwtop::gtid::GtidList;
use rwtop::mysql::{BinlogPos, GtidState, IoRunning};
use rwtop::poll::{ConnState, WriterState};
use rwtop::store::backlog::{BytesBehind, GtidBacklog};
use rwtop::store::lag::Lag;
use rwtop::store::series::Point;
use rwtop::store::windows::{Window, WindowStats};
use rwtop::store::{HeartbeatView, NodeView, ReplicaView, Role, Snapshot};

fn node(name: &str, role: Role, source: Option<&str>, replica: Option<ReplicaView>) -> NodeView {
    NodeView {
        name: name.to_owned(),
        address: format!("10.0.0.1:{}", 3306),
        role,
        source: source.map(str::to_owned),
        configured: true,
        conn: ConnState::Up,
        flavor: Some("MariaDB 10.11.19".to_owned()),
        version: Some("10.11.19-MariaDB".to_owned()),
        server_id: Some(1),
        read_only: Some(role == Role::Replica),
        sample_age: Some(Duration::from_millis(400)),
        clock_offset_ms: Some(0),
        processes: None,
        ddl: Vec::new(),
        sample_seq: 100,
        server_uuid: None,
        gtid: Some(GtidState::Mariadb {
            binlog_pos: GtidList::parse("0-1-1000").unwrap_or_default(),
            slave_pos: GtidList::parse("0-1-990").unwrap_or_default(),
            current_pos: GtidList::parse("0-1-990").unwrap_or_default(),
        }),
        lb: None,
        replica,
    }
}

fn replica(i: u64) -> ReplicaView {
    let lag = Duration::from_millis((i * 37) % 5000);
    let stats = WindowStats {
        p50: lag / 2,
        p99: lag,
        max: lag,
        samples: 240,
    };
    // A full 15-minute chart at the poll interval.
    let series: Vec<Point> = (0..900)
        .map(|s| Point {
            at_ms: s * 1000,
            heartbeat_lag_ms: Some(u32::try_from((s * 13 + i) % 4000).unwrap_or(0)),
            sbm_s: Some(0),
        })
        .collect();
    ReplicaView {
        channel: String::new(),
        io_running: IoRunning::Yes,
        sql_running: true,
        io_state: "Waiting for master to send event".to_owned(),
        sql_state: "Slave has read all relay log; waiting for more updates".to_owned(),
        seconds_behind_source: Some(0),
        heartbeat_lag: Lag::Exact { lag },
        windows: Window::ALL.iter().map(|w| (*w, Some(stats))).collect(),
        gtid_backlog: GtidBacklog {
            not_received: Some(0),
            not_applied: Some(i % 50),
        },
        bytes_behind: BytesBehind {
            io: Some(0),
            sql: Some(i * 100),
        },
        received: BinlogPos {
            file: "binlog.000042".to_owned(),
            pos: 79_904_418,
        },
        applied: BinlogPos {
            file: "binlog.000042".to_owned(),
            pos: 79_904_000,
        },
        sql_delay: Some(0),
        sql_remaining_delay: None,
        last_io_error: None,
        last_sql_error: None,
        series: Arc::from(series),
        lag_histogram: rwtop::store::histogram::LagHistogram::default(),
    }
}

fn snapshot(replicas: u64) -> Snapshot {
    let mut nodes = vec![node("primary", Role::Primary, None, None)];
    nodes.extend((0..replicas).map(|i| {
        node(
            &format!("r{i}"),
            Role::Replica,
            Some("primary"),
            Some(replica(i)),
        )
    }));
    Snapshot {
        uptime: Duration::from_secs(3600),
        taken_at: chrono::Utc::now(),
        heartbeat: HeartbeatView {
            interval: Duration::from_millis(250),
            read_every: Some(Duration::from_millis(250)),
            writer: WriterState::Writing,
            node: Some("primary".to_owned()),
            last_seq: Some(14_400),
            last_ack_age: Some(Duration::from_millis(100)),
            stale: false,
        },
        nodes,
        alerts: AlertsView::default(),
        probes: rwtop::probe::ProbesView::default(),
        drain: rwtop::drain::DrainView::default(),
    }
}

fn main() {
    for replicas in [10, 1000] {
        let snap = snapshot(replicas);
        for (w, h) in [(120, 40), (200, 60)] {
            let frames = if replicas > 100 { 200 } else { 1000 };
            // Warm up, then time.
            let times = frames::frame_times(&snap, (w, h), 20, frames);
            let per = times.iter().sum::<Duration>() / frames;
            println!(
                "frame_{replicas}_replicas_{w}x{h}  {:>10.3} ms",
                per.as_secs_f64() * 1000.0
            );
        }
    }
}
