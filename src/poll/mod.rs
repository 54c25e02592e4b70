//! The tasks that watch servers: one poller per node and the heartbeat writer on the primary.
//! They send [`PollEvent`]s; the engine wires them to the store.
//!
//! The files import one another in one direction only (`tests/layers.rs` holds it): the loops
//! (`node_poller`, `heartbeat`) over the steps they run (`session`, `silence`, `beat_write`),
//! over what those decide with (`learned`, `beat_read`, `cadence`), over the plain types and
//! policies every one of them may use (`spec`, `events`, `occasional`, `close_watch`, `backoff`).

mod backoff;
pub mod beat_gtid;
mod beat_read;
mod beat_write;
mod cadence;
mod close_watch;
mod ended;
mod events;
pub mod feeds;
pub mod heartbeat;
mod key_cache;
mod learned;
pub mod node_poller;
mod occasional;
mod osc;
mod pace;
pub mod pt_heartbeat;
mod session;
mod silence;
mod spec;
mod start_up;
mod status_poll;

pub use close_watch::close_watch;
pub use events::{
    AppliedRead, BeatRow, ConnState, DiskSample, HeartbeatRead, NodeSample, PollEvent, PtRead,
    ReportedReplica, WriterState,
};
pub use feeds::Feeds;
pub use occasional::{DISKS_EVERY, GRANTS_EVERY, SETTINGS_EVERY};
pub use pace::{READ_BUDGET, ReadPace};
pub use spec::{HeartbeatTable, PollerSpec};
pub use start_up::StartUp;
