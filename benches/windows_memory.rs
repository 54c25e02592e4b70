//! Memory and time of one replica's lag windows and chart, scaled to the 1,000 replicas rwtop
//! must watch within ~300 MB, with a snapshot of every replica taken each second.
//!
//! Run with `cargo bench --bench windows_memory`; prints `name value unit` lines.

#![allow(
    clippy::cast_precision_loss,
    reason = "byte and nanosecond counts here are far below 2^52"
)]

#[path = "support/rng.rs"]
mod rng;

use rng::Rng;

use std::alloc::System;
use std::hint::black_box;
use std::time::{Duration, Instant};

use rwtop::store::series::{ChartRing, Point};
use rwtop::store::windows::{LagWindows, Window};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const REPLICAS: usize = 1_000;
/// The heartbeat is read every 250 ms.
const HEARTBEAT_MS: u64 = 250;
/// A full ring (15 complete minutes) plus a half-filled current minute.
const WINDOW_FILL_MS: u64 = 16 * 60_000 + 30_000;
/// The chart: 15 minutes of points at a 1 s poll.
const CHART_SPAN_MS: u64 = 15 * 60_000;

/// Distributions this bench draws from the shared generator.
impl Rng {
    /// Lag with a Pareto tail: mostly a few milliseconds, now and then seconds or minutes.
    fn lag(&mut self) -> Duration {
        let ms = self.pareto(2.0);
        Duration::from_secs_f64(ms.min(600_000.0) / 1_000.0)
    }
}

/// One replica's windows after `WINDOW_FILL_MS` of heartbeats, with the instant of the last one.
fn filled_windows(start: Instant, rng: &mut Rng) -> (LagWindows, Instant) {
    let mut windows = LagWindows::new();
    let mut at = start;
    for step in 0..WINDOW_FILL_MS / HEARTBEAT_MS {
        at = start + Duration::from_millis(step * HEARTBEAT_MS);
        windows.record(at, rng.lag());
    }
    (windows, at)
}

/// One replica's chart after twice its span of 1 s polls.
fn filled_chart(rng: &mut Rng) -> ChartRing {
    let mut chart = ChartRing::default();
    for second in 0..2 * CHART_SPAN_MS / 1_000 {
        let lag = rng.lag();
        let point = Point {
            at_ms: second * 1_000,
            heartbeat_lag_ms: u32::try_from(lag.as_millis()).ok(),
            sbm_s: (second % 7 != 0).then(|| u32::try_from(lag.as_secs()).unwrap_or(u32::MAX)),
        };
        chart.push(point, CHART_SPAN_MS);
    }
    chart
}

fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1_024.0
}

fn row(name: &str, value: f64, unit: &str) {
    println!("{name:<32} {value:>12.2} {unit}");
}

/// Average nanoseconds per call of `f` over `iterations` calls.
fn time_ns(iterations: u32, mut f: impl FnMut()) -> f64 {
    let began = Instant::now();
    for _ in 0..iterations {
        f();
    }
    began.elapsed().as_nanos() as f64 / f64::from(iterations)
}

fn main() {
    let start = Instant::now();
    let mut rng = Rng(0x5EED);

    // Memory of one replica, as the structures account for it.
    let (windows, last) = filled_windows(start, &mut rng);
    let chart = filled_chart(&mut rng);
    row("windows_per_replica", kib(windows.memory_bytes()), "KiB");
    row("chart_per_replica", kib(chart.memory_bytes()), "KiB");
    let total = windows.memory_bytes() + chart.memory_bytes();
    row("total_per_replica", kib(total), "KiB");

    // Memory of 1,000 replicas, as the allocator sees it.
    let region = Region::new(GLOBAL);
    let replicas: Vec<(LagWindows, ChartRing)> = (0..REPLICAS)
        .map(|_| (filled_windows(start, &mut rng).0, filled_chart(&mut rng)))
        .collect();
    let change = region.change();
    // stats_alloc already adds a growing realloc's difference to `bytes_allocated` (and a
    // shrinking one's to `bytes_deallocated`), so `bytes_reallocated` must not be added again.
    let live = change
        .bytes_allocated
        .saturating_sub(change.bytes_deallocated);
    row("allocator_1000_replicas", kib(live) / 1_024.0, "MiB");
    row("allocator_per_replica", kib(live / REPLICAS), "KiB");

    // Time of a record in steady state, ring turns and histogram rebuilds included.
    let mut steady = LagWindows::new();
    let mut step = 0_u64;
    let record_ns = time_ns(2_000_000, || {
        step += 1;
        let at = start + Duration::from_millis(step * HEARTBEAT_MS);
        steady.record(at, black_box(Duration::from_millis(step % 97)));
    });
    black_box(&steady);
    row("record", record_ns, "ns");

    // Time of the statistics a snapshot asks for.
    let mut per_snapshot_ns = 0.0;
    for window in Window::ALL {
        let ns = time_ns(200_000, || {
            black_box(windows.stats(black_box(last), window));
        });
        per_snapshot_ns += ns;
        row(&format!("stats_{window:?}"), ns / 1_000.0, "us");
    }
    // A replica that stopped reporting: `now` has left the latest minute, so no cached histogram
    // applies and the raw samples are summarised.
    let stale = last + Duration::from_secs(60);
    let ns = time_ns(20_000, || {
        black_box(windows.stats(black_box(stale), Window::FifteenMinutes));
    });
    row("stats_FifteenMinutes_stale", ns / 1_000.0, "us");

    row(
        "snapshot_1000x3_estimated",
        per_snapshot_ns * 1e-6 * REPLICAS as f64,
        "ms",
    );
    let rounds = 20;
    let ns = time_ns(rounds, || {
        for (windows, _) in &replicas {
            for window in Window::ALL {
                black_box(windows.stats(black_box(last), window));
            }
        }
    });
    row("snapshot_1000x3_measured", ns * 1e-6, "ms");
    black_box(&replicas);
}
