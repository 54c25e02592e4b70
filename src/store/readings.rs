//! How a reading becomes a channel's lag: a heartbeat row or an applied position read on a
//! replica, measured behind each root upstream of it; the received position (the lag split's
//! transport part, `lag_split.rs`); and, when a snapshot is taken, whether a replica misses
//! anything its source has (its hop).

use std::time::{Duration, Instant};

use super::node::{ChannelEntry, NodeEntry};
use super::roots::{self, Beat};
use super::{Store, carried, lag, lag_split};
use crate::poll::WriterState;

impl Store {
    /// Each channel's lag behind the roots upstream of it, from one heartbeat reading sent at
    /// `sent_at`: `root_lag` is the lag behind one root (by writer index).
    pub(super) fn apply_lags(
        &mut self,
        node: &str,
        sent_at: Instant,
        root_lag: impl Fn(&Self, usize) -> lag::Lag,
    ) {
        if self.routes_dirty {
            self.routes = roots::routes(&self.nodes, &self.beats);
            self.routes_dirty = false;
        }
        let Some(channels) = self.routes.get(node) else {
            return;
        };
        let lags: Vec<lag::Lag> = channels
            .iter()
            .enumerate()
            .map(|(index, writers)| {
                roots::worst(writers.iter().map(|&w| root_lag(self, w))).unwrap_or_else(|| {
                    lag::Lag::Unknown {
                        reason: self.unwatched_root(node, index),
                    }
                })
            })
            .collect();
        if let Some(entry) = self.nodes.get_mut(node) {
            for (index, lag) in lags.into_iter().enumerate() {
                entry.apply_lag(index, sent_at, lag);
            }
        }
    }

    /// A Galera member's lag behind the member its cluster's heartbeat is written on, from one
    /// heartbeat reading; nothing for a node in no cluster, or in one rwtop writes nothing into.
    pub(super) fn apply_member_lag(&mut self, node: &str, read: &crate::poll::HeartbeatRead) {
        let writer = self
            .settings
            .clusters
            .iter()
            .find(|c| c.members.iter().any(|m| m == node))
            .and_then(|c| c.writer.as_deref())
            .and_then(|w| self.beats.iter().position(|b| b.node.as_deref() == Some(w)));
        let Some(writer) = writer else {
            return;
        };
        let lag = self.root_lag(writer, node, read);
        if let Some(entry) = self.nodes.get_mut(node) {
            entry.galera.apply_lag(read.sent_at, lag);
        }
    }

    /// A Galera member refused the heartbeat reading sent at `sent_at`: out of the component.
    pub(super) fn apply_out_of(&mut self, node: &str, sent_at: Instant) {
        if let Some(entry) = self.nodes.get_mut(node) {
            entry.galera.refused_out_of_component(sent_at);
        }
    }

    /// Each channel's received heartbeat (`lag_split.rs`), from the position in the status
    /// `node` just reported.
    pub(super) fn apply_received(&mut self, node: &str) {
        if self.routes_dirty {
            self.routes = roots::routes(&self.nodes, &self.beats);
            self.routes_dirty = false;
        }
        let (Some(channels), Some(entry)) = (self.routes.get(node), self.nodes.get(node)) else {
            return;
        };
        let Some(at) = entry.sample.as_ref().map(|s| s.at) else {
            return;
        };
        let interval = self.settings.heartbeat_interval;
        let received_by = |beat: &Beat, commit_us: i64| self.received_by(beat, commit_us);
        let statuses = entry.statuses();
        let lags: Vec<lag::Lag> = statuses
            .iter()
            .zip(channels)
            .map(|(status, writers)| {
                lag_split::received(
                    status,
                    writers,
                    &self.beats,
                    at,
                    |beat| beat.stale(at, interval),
                    received_by,
                )
            })
            .collect();
        let poll_interval = self.settings.poll_interval;
        let stalling = |pair| super::news::stalling(poll_interval, pair);
        if statuses.iter().zip(&lags).any(stalling) {
            self.stalling = Some(node.to_owned());
        }
        if let Some(entry) = self.nodes.get_mut(node) {
            for (index, lag) in lags.into_iter().enumerate() {
                entry.apply_received(index, at, lag);
            }
        }
    }

    /// The instant on this host by which every heartbeat of `beat` acknowledged was committed
    /// before a transaction committed at `commit_us` (µs since the epoch) on its root's clock:
    /// that commit less the root's clock lead, plus a quarter heartbeat interval for the
    /// acknowledgement's trip back and the clock estimate's error. `None` while the root's
    /// clock is not estimated.
    pub(super) fn received_by(&self, beat: &Beat, commit_us: i64) -> Option<Instant> {
        let root = beat.node.as_deref().and_then(|n| self.nodes.get(n))?;
        let offset_ms = root.clock?.offset_ms;
        let (now, utc_now) = (Instant::now(), chrono::Utc::now());
        let on_host_us = commit_us.checked_sub(offset_ms.checked_mul(1_000)?)?;
        let ago_us = utc_now.timestamp_micros().saturating_sub(on_host_us).max(0);
        let committed = now.checked_sub(Duration::from_micros(u64::try_from(ago_us).ok()?))?;
        Some(committed + self.settings.heartbeat_interval / 4)
    }

    /// Why channel `index` of `node` leads to no root with a heartbeat, and what to add.
    fn unwatched_root(&self, node: &str, index: usize) -> String {
        let Some(status) = self.nodes.get(node).and_then(|n| n.statuses().get(index)) else {
            return "this channel leads to no root rwtop writes a heartbeat on".to_owned();
        };
        let address = format!("{}:{}", status.source_host, status.source_port);
        let polled = roots::SourceIndex::new(&self.nodes).source_of(status);
        match polled {
            Some(source) => format!(
                "this channel's source {source} ({address}) leads to no root rwtop writes a \
                 heartbeat on (a root found after start-up gets none): restart rwtop, or name \
                 the root with --primary NAME=mysql://USER@HOST:PORT or a [[primary]]"
            ),
            None => format!(
                "this channel's source {address} is not watched by rwtop (it did not answer at \
                 start-up, or discovery is off), so its root's heartbeat is unknown: name it \
                 with --primary NAME=mysql://USER@{address} or a [[primary]] in the config"
            ),
        }
    }

    /// Root `writer`'s heartbeat and whether it had stopped advancing by `sent_at`, when a
    /// reading sent then can be measured against it; the lag to show when not.
    pub(super) fn beat(&self, writer: usize, sent_at: Instant) -> Result<(&Beat, bool), lag::Lag> {
        let Some(beat) = self.beats.get(writer) else {
            return Err(lag::Lag::Unknown {
                reason: "no heartbeat writer for this root".to_owned(),
            });
        };
        let stale = beat.stale(sent_at, self.settings.heartbeat_interval);
        if (beat.acks.latest().is_none() || stale)
            && let Some(reason) = roots::not_writing(beat)
        {
            return Err(lag::Lag::Unknown { reason });
        }
        if beat.state == WriterState::Observing && beat.acks.latest().is_none() {
            // Another rwtop holds the writer lock, and its row has not moved yet.
            return Err(lag::Lag::Unknown {
                reason: format!(
                    "rwtop's heartbeat row on {} has not advanced since rwtop started: \
                     is the rwtop that holds its writer lock running?",
                    beat.node.as_deref().unwrap_or("the primary")
                ),
            });
        }
        Ok((beat, stale))
    }

    /// The lag behind root `writer` of a replica that showed `read`.
    pub(super) fn root_lag(
        &self,
        writer: usize,
        node: &str,
        read: &crate::poll::HeartbeatRead,
    ) -> lag::Lag {
        let (beat, stale) = match self.beat(writer, read.sent_at) {
            Ok(found) => found,
            Err(lag) => return lag,
        };
        let row = read.row(writer);
        let upper = row.row_age_ms.map(|age| {
            let age = age - self.clock_correction(node);
            Duration::from_millis(u64::try_from(age.max(0)).unwrap_or(0))
        });
        beat.acks.lag(row.seq, read.sent_at, stale, upper)
    }
}

/// Whether `replica`'s `channel` misses no heartbeat its `source` has: its oldest missing one
/// was committed no earlier than the source's. Then its hop adds nothing, whichever of the two
/// readings is newer: while a source stands still, its lag and its replica's are carried forward
/// only from each one's second reading of the same gap, and until then they differ by the age of
/// the older reading, which on a busy host can pass a second.
pub(super) fn has_all_of(replica: &NodeEntry, channel: &str, source: &NodeEntry) -> bool {
    let mine = replica
        .channels
        .iter()
        .find(|c| c.name == channel)
        .and_then(ChannelEntry::missing_since);
    let theirs = source
        .channels
        .iter()
        .filter_map(ChannelEntry::missing_since)
        .min();
    mine.zip(theirs)
        .is_some_and(|(mine, theirs)| mine + carried::STALL_JITTER >= theirs)
}
