//! Time per full TUI frame (ratatui `TestBackend`, no terminal I/O) with 10 and 1,000 replicas,
//! at 120×40 and 200×60: what the render loop costs per snapshot.
//!
//! Run: `cargo bench --bench render`. Prints `name value unit` lines.

#[path = "support/frames.rs"]
mod frames;

use std::time::Duration;

use rwtop::store::lag::Lag;
use rwtop::store::series::Point;
use rwtop::store::testkit::Topo;
use rwtop::store::windows::{Window, WindowStats};
use rwtop::store::{ReplicaView, Snapshot};

/// Replica `i` of the bench: its own lag, full windows and a full 15-minute chart.
fn vary(i: u64, r: &mut ReplicaView) {
    let lag = Duration::from_millis((i * 37) % 5000);
    let stats = WindowStats {
        p50: lag / 2,
        p99: lag,
        max: lag,
        samples: 240,
    };
    let series: Vec<Point> = (0..900)
        .map(|s| Point {
            at_ms: s * 1000,
            heartbeat_lag_ms: Some(u32::try_from((s * 13 + i) % 4000).unwrap_or(0)),
            sbm_s: Some(0),
        })
        .collect();
    r.heartbeat_lag = Lag::Exact { lag };
    r.windows = Window::ALL.iter().map(|w| (*w, Some(stats))).collect();
    r.gtid_backlog.not_applied = Some(i % 50);
    r.bytes_behind.sql = Some(i * 100);
    r.series = series.into();
}

/// The test kit's healthy topology (`db1`, `r1`, `r2`) grown to `replicas` replicas.
fn snapshot(replicas: u64) -> Snapshot {
    let mut topo = Topo::new();
    for i in 3..=replicas {
        topo.add_replica(
            &format!("r{i}"),
            "db1",
            u32::try_from(i + 1).unwrap_or(u32::MAX),
        );
    }
    for i in 1..=replicas {
        topo.replica_mut(&format!("r{i}"), |r| vary(i, r));
    }
    topo.at(0)
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
