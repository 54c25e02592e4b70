//! Units as an operator reads them: one text form per unit, so a value never prints two ways on
//! two panels, in an alert and in a text export.
//!
//! Architecture Invariant: `units` imports nothing from the crate; it is the lowest floor, and
//! every floor above may use it.

pub mod format;

pub use format::{bytes, duration, lag, offset_ms, secs};
