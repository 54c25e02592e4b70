//! The store's memory per replica once its 15-minute windows (and then an hour of series points)
//! are full, and the time to take a snapshot of it: `poll_path`'s first part, run before the live
//! part in a fresh process so that memory the live part frees cannot hide part of the store's.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use rwtop::mysql::batch::Reported;
use rwtop::mysql::{
    BinlogFile, BinlogStatus, Family, NodeState, Processlist, RawRow, ReplicaStatus,
};
use rwtop::poll::node_poller::PollParts;
use rwtop::poll::{BeatRow, ConnState, HeartbeatRead, NodeSample, PollEvent};
use rwtop::store::{Role, Store, StoreSettings};

use super::procfs::{row, rss_kib};
use super::rng::Rng;

/// Replicas in the synthetic store.
const REPLICAS: usize = 200;
const HEARTBEAT_MS: u64 = 250;
const POLL_MS: u64 = 1_000;
/// A full 15-minute window plus the current minute.
const WINDOW_MINUTES: u64 = 16;
/// Then on to a full hour of series points.
const HOUR_MINUTES: u64 = 61;
const SNAPSHOT_ROUNDS: u32 = 20;

struct Fixtures {
    status: ReplicaStatus,
    replica_state: NodeState,
    primary_state: NodeState,
    binlog: BinlogStatus,
    files: Vec<BinlogFile>,
}

/// A row of a recorded MariaDB 10.11 fixture (the tests' own; a missing one panics, naming it).
fn fixture_row(name: &str) -> RawRow {
    rwtop::mysql::row::fixture_row(&format!("mariadb-10.11/{name}"))
}

fn fixtures() -> Result<Fixtures> {
    let state = |name| -> Result<NodeState> {
        Ok(NodeState::from_row(&fixture_row(name), Family::Mariadb)?)
    };
    Ok(Fixtures {
        status: ReplicaStatus::from_row(&fixture_row("show_all_slaves_status__running.txt"))?,
        replica_state: state("state__replica.txt")?,
        primary_state: state("state__primary.txt")?,
        binlog: BinlogStatus::from_row(&fixture_row("show_master_status__primary.txt"))?,
        files: vec![BinlogFile::from_row(&fixture_row(
            "show_binary_logs__primary.txt",
        ))?],
    })
}

/// Distributions this bench draws from the shared generator.
impl Rng {
    /// How many heartbeats behind a replica is: mostly none, with a Pareto tail of seconds.
    fn heartbeats_behind(&mut self) -> u64 {
        let ms = self.pareto(50.0);
        // Whole heartbeats; far below u64::MAX after the cap.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a positive value capped at 2,400"
        )]
        let behind = (ms.min(600_000.0) / HEARTBEAT_MS as f64) as u64;
        behind
    }
}

/// Feeds the store what a primary and `REPLICAS` replicas would send from `from` to `to`
/// (simulated): an ack every 250 ms, each replica's heartbeat read right after it, and every
/// node's status sample every second, with the parts the poller reads on that poll
/// (`PollParts::for_poll`, discovery off as in the store's settings).
struct Feed {
    base: Instant,
    rng: Rng,
    fixtures: Fixtures,
    heartbeat_time: Duration,
    heartbeats: u64,
    sample_time: Duration,
    samples: u64,
}

impl Feed {
    fn run(&mut self, store: &mut Store, from_ms: u64, to_ms: u64) {
        let mut now_ms = from_ms;
        let mut events = Vec::with_capacity(REPLICAS + 1);
        while now_ms < to_ms {
            let at = self.base + Duration::from_millis(now_ms);
            let seq = now_ms / HEARTBEAT_MS + 1;
            // Events are built first, as pollers would, so only the store's work is timed.
            events.push(PollEvent::Ack {
                writer: 0,
                seq,
                at,
                gtid: None,
            });
            for i in 0..REPLICAS {
                let behind = self.rng.heartbeats_behind().min(seq - 1);
                let read = HeartbeatRead {
                    sent_at: at + Duration::from_millis(2),
                    rtt: Duration::from_micros(300),
                    rows: vec![BeatRow {
                        seq: Some(seq - behind),
                        row_age_ms: i64::try_from(behind * HEARTBEAT_MS + 3).ok(),
                    }],
                };
                events.push(PollEvent::Heartbeat {
                    node: replica_name(i),
                    read,
                });
            }
            self.heartbeat_time += apply_all(store, &mut events);
            self.heartbeats += REPLICAS as u64;
            if now_ms.is_multiple_of(POLL_MS) {
                let parts = PollParts::for_poll(now_ms / POLL_MS, 0, false);
                events.push(PollEvent::Sample {
                    node: "primary".to_owned(),
                    sample: Box::new(self.sample(at, false, parts)),
                });
                for i in 0..REPLICAS {
                    events.push(PollEvent::Sample {
                        node: replica_name(i),
                        sample: Box::new(self.sample(at, true, parts)),
                    });
                }
                self.sample_time += apply_all(store, &mut events);
                self.samples += REPLICAS as u64 + 1;
            }
            now_ms += HEARTBEAT_MS;
        }
    }

    fn sample(&self, at: Instant, replica: bool, parts: PollParts) -> NodeSample {
        let f = &self.fixtures;
        NodeSample {
            at: at + Duration::from_millis(5),
            reported: Reported {
                replication: if replica {
                    vec![f.status.clone()]
                } else {
                    Vec::new()
                },
                state: if replica {
                    f.replica_state.clone()
                } else {
                    f.primary_state.clone()
                },
                // As the poller reads them: the primary feeds the replicas, which feed nobody.
                binlog: (parts.binlog && !replica).then(|| f.binlog.clone()),
                binlog_files: (parts.binlog_files && !replica).then(|| f.files.clone()),
                replica_hosts: None,
                processes: parts.processes.then(Processlist::default),
                osc: parts.osc.then(Vec::new),
                semisync: None,
                galera: None,
            },
            resolving: std::collections::BTreeSet::new(),
            took: Duration::from_micros(900),
        }
    }
}

/// Applies and empties `events`; returns the time the store took.
fn apply_all(store: &mut Store, events: &mut Vec<PollEvent>) -> Duration {
    let began = Instant::now();
    for event in events.drain(..) {
        black_box(store.apply(event));
    }
    began.elapsed()
}

fn replica_name(i: usize) -> String {
    format!("replica-{i:04}")
}

pub fn store_memory() -> Result<()> {
    let fixtures = fixtures()?;
    // The fixture's replica replicates from 127.0.0.1:26306: make that the store's primary, so
    // snapshots resolve every replica's source and compute backlog and bytes behind.
    let endpoint = rwtop::store::testkit::local_endpoint;
    let mut nodes = vec![("primary".to_owned(), endpoint(26_306), Role::Primary)];
    for i in 0..REPLICAS {
        let port = u16::try_from(30_000 + i)?;
        nodes.push((replica_name(i), endpoint(port), Role::Replica));
    }
    let settings = StoreSettings {
        heartbeat_interval: Duration::from_millis(HEARTBEAT_MS),
        poll_interval: Duration::from_millis(POLL_MS),
        ..rwtop::store::testkit::store_settings()
    };

    let rss_before = rss_kib()?;
    let mut store = Store::new(settings, &nodes);
    for (name, _, _) in &nodes {
        store.apply(PollEvent::Conn {
            node: name.clone(),
            state: ConnState::Up,
        });
    }
    let rss_empty = rss_kib()?;
    let mut feed = Feed {
        base: Instant::now(),
        rng: Rng(0x5EED),
        fixtures,
        heartbeat_time: Duration::ZERO,
        heartbeats: 0,
        sample_time: Duration::ZERO,
        samples: 0,
    };
    let window_ms = WINDOW_MINUTES * 60_000;
    feed.run(&mut store, 0, window_ms);
    let rss_window = rss_kib()?;
    let per_replica = |rss: u64| rss.saturating_sub(rss_before) as f64 / REPLICAS as f64;

    row("store_rss_empty_per_replica", per_replica(rss_empty), "KiB");
    row(
        "store_rss_16min_per_replica",
        per_replica(rss_window),
        "KiB",
    );
    row(
        "store_rss_16min_total",
        rss_window.saturating_sub(rss_before) as f64 / 1_024.0,
        "MiB",
    );
    let now = feed.base + Duration::from_millis(window_ms);
    // Not kept: a snapshot shares each replica's chart, and would keep old ones alive.
    let full = store
        .snapshot(now)
        .nodes
        .iter()
        .filter_map(|n| n.replica())
        .filter(|r| {
            r.windows
                .iter()
                .all(|(_, s)| s.is_some_and(|s| s.samples > 0))
        })
        .count();
    if full != REPLICAS {
        bail!("{full} of {REPLICAS} replicas have all lag windows after {WINDOW_MINUTES} minutes");
    }
    time_snapshots(&store, now, "16min");

    // On to a full hour, so the 1-hour series is full too (windows stay at 15 minutes).
    let hour_ms = HOUR_MINUTES * 60_000;
    feed.run(&mut store, window_ms, hour_ms);
    let rss_hour = rss_kib()?;
    row("store_rss_61min_per_replica", per_replica(rss_hour), "KiB");
    row(
        "store_rss_61min_total",
        rss_hour.saturating_sub(rss_before) as f64 / 1_024.0,
        "MiB",
    );
    row(
        "store_rss_61min_per_1000_replicas",
        per_replica(rss_hour) * 1_000.0 / 1_024.0,
        "MiB",
    );
    time_snapshots(&store, feed.base + Duration::from_millis(hour_ms), "61min");

    row(
        "store_apply_heartbeat",
        feed.heartbeat_time.as_nanos() as f64 / feed.heartbeats as f64,
        "ns/event",
    );
    row(
        "store_apply_sample",
        feed.sample_time.as_nanos() as f64 / feed.samples as f64 / 1_000.0,
        "us/event",
    );
    black_box(&store);
    Ok(())
}

fn time_snapshots(store: &Store, now: Instant, label: &str) {
    // One untimed round to fault in whatever a snapshot touches first.
    black_box(store.snapshot(now));
    let began = Instant::now();
    for _ in 0..SNAPSHOT_ROUNDS {
        black_box(store.snapshot(black_box(now)));
    }
    let ms = began.elapsed().as_secs_f64() * 1e3 / f64::from(SNAPSHOT_ROUNDS);
    row(&format!("snapshot_{label}_{REPLICAS}_replicas"), ms, "ms");
    row(
        &format!("snapshot_{label}_per_1000_replicas"),
        ms * 1_000.0 / REPLICAS as f64,
        "ms",
    );
}
