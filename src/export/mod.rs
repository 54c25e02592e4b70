//! Outputs beside the TUI, all built from store snapshots.

pub mod http;
pub mod json;
pub mod prometheus;
pub mod throttle;
