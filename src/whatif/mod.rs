//! What-if, no writes (docs/whatif.md): which read-after-write setting would have served a
//! workload on this topology, judged from each replica channel's lag series alone. Pure
//! functions over series: no I/O, no clock.
//!
//! # What the model assumes
//! - **Visibility.** A write made at `w` is visible on a replica at `t` when that replica's
//!   heartbeat lag at `t` is at most `t − w` (the heartbeat lag says the replica has applied
//!   everything committed up to `t − lag`).
//! - **Lag between samples** is linear between two neighbouring samples of the series; a gap
//!   longer than 2.5 sample spacings is not bridged (reads there are *unjudged*, and counted).
//! - **Reads are spread uniformly over the series**: a write at every sample with a known lag
//!   (the series' resolution), each followed by one read per `--read-after` delay, in equal
//!   shares. Channels are pooled as reads spread evenly over the replicas.
//! - **Each setting**, for a read issued at `r = w + d`: `none` reads at `r`; `sleep(s)` at
//!   `r + s`; `sticky(win)` sends `d < win` to the primary; `lag-threshold(x)` reads the replica
//!   when the newest sample at or before `r` shows a lag ≤ `x`, else the primary;
//!   `sbm-zero(t)` reads at the first sample (from the one in force at `r`) whose
//!   `Seconds_Behind_Master` is 0, within `t`, else the primary; `gtid-wait(t)`/`pos-wait(t)`
//!   wait the remaining lag (the first instant the write is visible), else the primary after
//!   `t`, never stale; `fast(m)` (`MaxScale` `causal_reads=fast`) never waits and reads the
//!   replica when its position as the monitor last saw it (up to `m` old, eight phases
//!   averaged) covered the write, else the primary. `primary` is the reference row.
//!
//! # Error sources
//! The heartbeat estimates lag to about one heartbeat interval (`store/lag.rs`); the series
//! holds one sample per poll, so an edge (a stall starting, a catch-up ending) is placed
//! within one spacing; the reads sit on the sample grid. A verdict is exact away from edges,
//! so [`Judged::stale_error`] counts the verdict changes along each channel's reads and lets
//! each move `resolution / spacing + 1` reads, `resolution` = spacing + heartbeat interval.
//! A replica applies a write milliseconds after its commit, below anything the heartbeat
//! resolves: a replica read landing less than [`simulate::RACE_MS`] after the write became
//! visible (a read "at once" on a caught-up replica) is a race the model cannot call; such
//! reads are counted as fresh and their share ([`Judged::race`]) added to the stale error.
//! Not modelled: the wait function's own round trip (a few ms), a stopped SQL thread making
//! `pos-wait` return at once (the model waits it out), thread states a router would also check,
//! replicas chosen among several (one pooled replica per read).

mod input;
mod line;
mod report;
mod setting;
mod simulate;

pub use input::{ChannelSeries, Collector, InputError, MIN_KNOWN};
pub use line::{LagLine, Visible};
pub use report::{ChannelInfo, Goal, Row, WhatifReport, pct, run, wait};
pub use setting::{NAMES, Setting};
pub use simulate::{Judged, RACE_MS, Workload, simulate};

#[cfg(test)]
mod tests;
