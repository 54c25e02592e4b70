//! The tasks that watch servers: one poller per node and the heartbeat writer on the primary.
//! They send [`PollEvent`]s; the engine wires them to the store.

pub mod beat_gtid;
mod beat_read;
mod cadence;
mod events;
pub mod feeds;
pub mod heartbeat;
mod key_cache;
pub mod node_poller;
mod osc;
mod pace;
pub mod pt_heartbeat;
mod session;
mod silence;

pub use events::{
    AppliedRead, BeatRow, ConnState, DiskSample, HeartbeatRead, NodeSample, PollEvent, PtRead,
    ReportedReplica, WriterState,
};
pub use feeds::Feeds;
pub use node_poller::{DISKS_EVERY, GRANTS_EVERY, SETTINGS_EVERY};
pub use pace::{READ_BUDGET, ReadPace};
pub use silence::StartUp;
