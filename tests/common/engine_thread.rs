//! The engine on a thread and a runtime of its own, which a test can hang: while hung, no task of
//! the engine runs (no poll, no heartbeat, no publication) yet its snapshot channel stays open,
//! so whatever serves from it keeps answering with the last snapshot published, growing older.
//! That is rwtop whose engine is stuck, not stopped: a stopped engine closes the channel and
//! takes its servers down with it.
#![allow(dead_code, reason = "each test binary uses part of this file")]

use std::sync::Arc;
use std::sync::mpsc as blocking;

use rwtop::engine::{Engine, EngineSpec};
use rwtop::store::Snapshot;
use tokio::sync::{mpsc, oneshot, watch};

enum Command {
    /// Block the engine's only thread until the sender of this channel drops; say so first.
    Hang(blocking::Receiver<()>, oneshot::Sender<()>),
}

pub struct EngineThread {
    snapshots: watch::Receiver<Arc<Snapshot>>,
    /// Dropped to shut the engine down.
    commands: Option<mpsc::UnboundedSender<Command>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The engine hung until this drops.
pub struct Hung(blocking::Sender<()>);

impl EngineThread {
    /// Starts the engine of `spec` on a single-threaded runtime of its own thread.
    pub fn start(spec: &EngineSpec) -> Self {
        let spec = spec.clone();
        let (commands, mut inbox) = mpsc::unbounded_channel();
        let (started, snapshots) = blocking::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the engine's runtime");
            runtime.block_on(async move {
                let engine = Engine::start(&spec);
                started.send(engine.snapshots()).expect("the test waits");
                while let Some(command) = inbox.recv().await {
                    match command {
                        Command::Hang(until, hung) => {
                            let _ = hung.send(());
                            // A blocking wait on the runtime's one thread: every task stands.
                            let _ = until.recv();
                        }
                    }
                }
                engine.shutdown().await;
            });
        });
        let snapshots = snapshots.recv().expect("the engine started");
        Self {
            snapshots,
            commands: Some(commands),
            thread: Some(thread),
        }
    }

    pub fn snapshots(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshots.clone()
    }

    /// Hangs the engine; returns once none of its tasks runs any more, with the snapshot it
    /// published last (the one everything served from it keeps showing).
    pub async fn hang(&self) -> (Hung, Arc<Snapshot>) {
        let (release, until) = blocking::channel();
        let (hung, is_hung) = oneshot::channel();
        self.commands
            .as_ref()
            .expect("the engine runs")
            .send(Command::Hang(until, hung))
            .unwrap_or_else(|_| panic!("the engine's thread ended"));
        is_hung.await.expect("the engine hangs");
        let last = Arc::clone(&self.snapshots.borrow());
        (Hung(release), last)
    }

    /// Shuts the engine down and waits for its thread (a hung engine is released first: drop
    /// the [`Hung`] before).
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        drop(self.commands.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for EngineThread {
    fn drop(&mut self) {
        self.stop();
    }
}
