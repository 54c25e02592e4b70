//! The engine wires the floors together: it starts the store's task, a poller per node, the
//! heartbeat writer, the prober and the drain task; gives each task its own bounded channel to
//! the store; judges alerts on every snapshot; adds pollers for discovered nodes; and takes the
//! operator's requests (poll now, probe, drain, and where enabled the kill of a waiting DDL's
//! blocker).

mod clusters;
mod spec;
mod store_task;
pub mod upward;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, mpsc, watch};
use tokio::task::JoinSet;

pub use spec::{EngineSpec, TestReads};
pub use store_task::PUBLISH_EVERY;

use crate::alerts::AlertEngine;
use crate::drain::{DrainEvent, DrainRequest, KillRequest, KillSpec};
use crate::mysql::Endpoint;
use crate::poll::beat_gtid::Marks;
use crate::poll::heartbeat::{self, WriterSpec};
use crate::poll::{Feeds, PollEvent, PollerSpec, ReadPace, StartUp, WriterState, node_poller};
use crate::probe::{ProbeEvent, ProbeRequest, Prober};
use crate::store::{Discovered, Snapshot, Store};

/// Worker threads of the runtime the binary runs the engine on ([`runtime`]). One: every task
/// waits on the network or the store's channel, and at 1,000 nodes two workers spent a sixth of
/// rwtop's CPU waking each other (measured in commit `32d364d`, docs/benchmarks.md's history).
/// The TUI runs on the thread that blocks on the runtime, not on the worker.
pub const WORKERS: usize = 1;

/// A multi-thread runtime of `workers` threads with IO and timers: [`WORKERS`] for the binary;
/// the benches pass other counts to compare.
///
/// # Errors
/// The operating system refused a thread or the IO driver.
pub fn runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .enable_all()
        .build()
}

/// Events in flight between tasks and the store. Bounded: a stalled store slows pollers down
/// rather than growing memory without limit.
const EVENT_QUEUE: usize = 4096;

/// Test reads or drains waiting their turn; more presses than this are refused rather than piled
/// up.
const WORKER_QUEUE: usize = 4;

/// Results and progress in flight from the prober or the drain task to the store.
const WORKER_EVENT_QUEUE: usize = 256;

pub struct Engine {
    snapshots: watch::Receiver<Arc<Snapshot>>,
    /// One nudge per poller, by node name (configured and discovered).
    nudges: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
    /// Test-read requests to the prober task; `None` without a primary.
    probes: Option<mpsc::Sender<ProbeRequest>>,
    /// Drain requests to the drain task; `None` without a backend.
    drains: Option<mpsc::Sender<DrainRequest>>,
    /// Kill requests to the kill task; `None` unless [`Self::enable_kills`] started it.
    kills: Option<mpsc::Sender<KillRequest>>,
    /// Where the kill task reports, the drain task's way to the store.
    drain_events: mpsc::Sender<DrainEvent>,
}

impl Engine {
    /// Finds the roots above the configured nodes ([`upward::find_roots`]), says on standard
    /// error what it found and chose, then starts the engine over them.
    pub async fn start_finding_roots(spec: &mut EngineSpec) -> Self {
        let limit = spec.timeouts.connect + spec.timeouts.query * 2;
        for found in upward::find_roots(spec, limit).await {
            eprintln!("rwtop: {}", found.describe());
        }
        Self::start(spec)
    }

    /// Starts the store, a poller per node and the heartbeat writer. Must run inside a tokio
    /// runtime.
    #[must_use]
    pub fn start(spec: &EngineSpec) -> Self {
        let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE);
        let (probe_tx, probe_rx) = mpsc::channel::<ProbeEvent>(WORKER_EVENT_QUEUE);
        let (drain_tx, drain_rx) = mpsc::channel::<DrainEvent>(WORKER_EVENT_QUEUE);
        let (stop_tx, stop_rx) = watch::channel(false);
        let pace = Arc::new(ReadPace::new(spec.read_interval, spec.read_budget));
        let mut store = Store::new(spec.store_settings(&pace), &spec.nodes);
        for found in &spec.found {
            store.mark_found(&found.name);
        }
        let (snap_tx, snap_rx) = watch::channel(Arc::new(store.snapshot(Instant::now())));
        let (found_tx, found_rx) = mpsc::unbounded_channel::<Discovered>();
        let mut tasks = JoinSet::new();
        let inbox = store_task::Inbox {
            poll: events_rx,
            probe: probe_rx,
            drain: drain_rx,
        };
        // Which nodes a watched replica replicates from: set from each snapshot, read by pollers.
        let feeds = Feeds::new();
        tasks.spawn(store_task::run(
            store,
            AlertEngine::new(spec.alert_settings()),
            inbox,
            store_task::Outbox {
                snapshots: snap_tx,
                discovered: found_tx,
                feeds: Arc::clone(&feeds),
            },
            stop_rx.clone(),
        ));

        let nudges: Arc<Mutex<HashMap<String, Arc<Notify>>>> = Arc::default();
        // A poller's spec, with its nudge registered under its name.
        let register = {
            let (nudges, pace) = (Arc::clone(&nudges), Arc::clone(&pace));
            move |name: &str| {
                pace.add_node();
                let nudge = Arc::new(Notify::new());
                if let Ok(mut map) = nudges.lock() {
                    map.insert(name.to_owned(), Arc::clone(&nudge));
                }
                nudge
            }
        };
        // Where each root's heartbeats stand in GTID terms: set by its writer, read by pollers.
        let marks = Marks::new(spec.position_writers());
        let start_up = StartUp::new(spec.nodes.iter().map(|(name, _, _)| name.clone()));
        let poller = |name: &str, endpoint: &Endpoint, nudge| PollerSpec {
            start_up: Arc::clone(&start_up),
            nudge,
            marks: Arc::clone(&marks),
            feeds: Arc::clone(&feeds),
            name: name.to_owned(),
            endpoint: endpoint.clone(),
            timeouts: spec.timeouts,
            interval: spec.interval,
            pace: Arc::clone(&pace),
            discovery: spec.discovery,
            disks_every: spec.disks_every,
            heartbeat: spec.heartbeat_table(),
        };
        for (name, endpoint, _) in &spec.nodes {
            tasks.spawn(node_poller::run(
                poller(name, endpoint, register(name)),
                events_tx.clone(),
                stop_rx.clone(),
            ));
        }
        spawn_writer(spec, &mut tasks, &events_tx, &snap_rx, &stop_rx, &marks);

        // Test reads and drains: one request at a time each, in tasks of their own.
        let (snaps, stop) = (&snap_rx, &stop_rx);
        let task_reads = spec.test_reads == TestReads::Task;
        let probes = spec.probe_spec().filter(|_| task_reads).map(|probe| {
            let prober = Prober::new(probe);
            spawn_worker(&mut tasks, |rx| {
                crate::probe::task::run(prober, rx, snaps.clone(), probe_tx, stop.clone())
            })
        });
        let drain_events = drain_tx.clone();
        let drains = spec.drain.clone().map(|drain| {
            spawn_worker(&mut tasks, |rx| {
                crate::drain::task::run(drain, rx, snaps.clone(), drain_tx, stop.clone())
            })
        });

        // Discovered nodes get pollers like configured ones.
        // Not registered: each discovered node registers under its own name.
        let template = poller("", &Endpoint::default(), Arc::default());
        tasks.spawn(spawn_discovered(
            found_rx, template, register, events_tx, stop_rx,
        ));
        Self {
            snapshots: snap_rx,
            nudges,
            stop: stop_tx,
            tasks,
            probes,
            drains,
            kills: None,
            drain_events,
        }
    }

    /// Starts the task that kills a waiting DDL's blocker on the operator's confirmed request
    /// (`[ddl] allow_kill = true`); without it [`Self::kill`] refuses every request.
    pub fn enable_kills(&mut self, spec: KillSpec) {
        let (events, stop) = (self.drain_events.clone(), self.stop.subscribe());
        let tx = spawn_worker(&mut self.tasks, |rx| {
            crate::drain::kill::run(spec, rx, events, stop)
        });
        self.kills = Some(tx);
    }

    /// Whether kills were enabled ([`Self::enable_kills`]).
    #[must_use]
    pub fn kills_enabled(&self) -> bool {
        self.kills.is_some()
    }

    /// Queues a confirmed kill. False when kills are off or the queue is full.
    #[must_use = "false means the request was not queued"]
    pub fn kill(&self, request: KillRequest) -> bool {
        self.kills
            .as_ref()
            .is_some_and(|tx| tx.try_send(request).is_ok())
    }

    #[must_use]
    pub fn snapshots(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshots.clone()
    }

    #[must_use = "false means no poller has that name"]
    /// Polls a node now rather than at its next interval (the operator's force-probe). False
    /// when no poller has that name.
    pub fn poll_now(&self, node: &str) -> bool {
        let nudge = self
            .nudges
            .lock()
            .ok()
            .and_then(|map| map.get(node).cloned());
        nudge.is_some_and(|n| {
            n.notify_one();
            true
        })
    }

    /// Queues a test read or a bake-off. False when there is no primary to probe or the queue is
    /// full (the operator pressed faster than probes run).
    #[must_use = "false means the request was not queued"]
    pub fn probe(&self, request: ProbeRequest) -> bool {
        self.probes
            .as_ref()
            .is_some_and(|tx| tx.try_send(request).is_ok())
    }

    /// Queues a drain or undrain. False when no drain backend is configured or the queue is
    /// full.
    #[must_use = "false means the request was not queued"]
    pub fn drain(&self, request: DrainRequest) -> bool {
        self.drains
            .as_ref()
            .is_some_and(|tx| tx.try_send(request).is_ok())
    }

    #[must_use]
    pub fn latest(&self) -> Arc<Snapshot> {
        self.snapshots.borrow().clone()
    }

    /// Stops every task, closing connections politely; gives up waiting after a few seconds.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(5), drain)
            .await
            .is_err()
        {
            self.tasks.abort_all();
        }
    }
}

/// A heartbeat writer on each primary (each root of the topology), unless rwtop may write
/// nothing.
fn spawn_writer(
    spec: &EngineSpec,
    tasks: &mut JoinSet<()>,
    events_tx: &mpsc::Sender<PollEvent>,
    snapshots: &watch::Receiver<Arc<Snapshot>>,
    stop_rx: &watch::Receiver<bool>,
    marks: &Arc<Marks>,
) {
    if spec.read_only {
        let reason = format!(
            "read-only mode: rwtop writes nothing; lag comes from pt-heartbeat's {}",
            spec.pt_table
        );
        let state = WriterState::Refused { reason };
        let _ = events_tx.try_send(PollEvent::Writer { writer: 0, state });
        return;
    }
    if spec.primary().is_none() {
        let reason = "no primary configured: rwtop writes no heartbeat (lag shows only if \
                      another rwtop writes this row)"
            .to_owned();
        let state = WriterState::Refused { reason };
        let _ = events_tx.try_send(PollEvent::Writer { writer: 0, state });
    }
    for (index, ((name, endpoint), writer_id)) in spec
        .primaries()
        .into_iter()
        .zip(spec.writer_ids())
        .enumerate()
    {
        if let Some(reason) = spec.read_only_root(name) {
            let state = WriterState::Refused { reason };
            let _ = events_tx.try_send(PollEvent::Writer {
                writer: index,
                state,
            });
            continue;
        }
        let writer = WriterSpec {
            node: name.to_owned(),
            endpoint: endpoint.clone(),
            others: spec.endpoints_except(name),
            timeouts: spec.timeouts,
            interval: spec.heartbeat_interval,
            writer_id,
            index,
            marks: Arc::clone(marks),
        };
        tasks.spawn(heartbeat::run(
            writer,
            events_tx.clone(),
            snapshots.clone(),
            stop_rx.clone(),
        ));
    }
}

/// Spawns a task that serves requests from a small queue, and returns the queue's sender.
fn spawn_worker<R, F>(
    tasks: &mut JoinSet<()>,
    task: impl FnOnce(mpsc::Receiver<R>) -> F,
) -> mpsc::Sender<R>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(WORKER_QUEUE);
    tasks.spawn(task(rx));
    tx
}

/// Gives nodes the store discovered a poller like a configured one's, until the engine stops.
async fn spawn_discovered(
    mut found: mpsc::UnboundedReceiver<Discovered>,
    template: PollerSpec,
    register: impl Fn(&str) -> Arc<Notify>,
    events: mpsc::Sender<PollEvent>,
    stop: watch::Receiver<bool>,
) {
    let mut pollers = JoinSet::new();
    let mut stopped = stop.clone();
    loop {
        tokio::select! {
            node = found.recv() => {
                let Some(node) = node else { break };
                let spec = PollerSpec {
                    nudge: register(&node.name),
                    name: node.name,
                    endpoint: node.endpoint,
                    ..template.clone()
                };
                pollers.spawn(node_poller::run(spec, events.clone(), stop.clone()));
            }
            _ = stopped.changed() => break,
        }
    }
    while pollers.join_next().await.is_some() {}
}
