//! Units as people read and write them: durations parsed from config and flags, and values
//! quoted in messages. The lowest floor: it imports nothing from the rest of rwtop.

pub mod duration;
mod quote;

pub use duration::{parse_duration, parse_interval};
pub use quote::{excerpt, quoted};
