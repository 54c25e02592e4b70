//! Outputs beside the TUI, all built from store snapshots.

pub mod json;
