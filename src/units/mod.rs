//! Units as people read and write them: one text form per unit (`format`), so a value never
//! prints two ways on two panels, in an alert and in a text export; durations parsed from config
//! and flags (`parse`); values quoted in messages (`quote`).
//!
//! Architecture Invariant: `units` imports nothing from the crate; it is the lowest floor, and
//! every floor above may use it.

pub mod format;
pub mod parse;
mod quote;

pub use format::{
    approx_percent, axis_seconds, byte_rate, byte_rate_per_hour, bytes, count, duration, eta, lag,
    lag_rate, offset_ms, per_second, secs, trx_rate,
};
pub use parse::{parse_duration, parse_interval, short_duration};
pub use quote::{excerpt, quoted};
