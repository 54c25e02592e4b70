//! What the store keeps per replication channel of a node: its heartbeat lag carried forward
//! while it stalls, the lag's windows, histogram and chart, the apply rate, the appliers and the
//! relay log's growth; and the lag split into transport and apply.

use std::time::{Duration, Instant};

use super::apply_rate::ApplyHistory;
use super::carried::Carried;
use super::delay::BeyondDelay;
use super::series::{ChartRing, Point};
use super::windows::LagWindows;
use super::{lag::Lag, lag_split::LagSplit};
use crate::mysql::{NodeState, ReplicaStatus};

/// Charts look back at most this far, and the store keeps no more points than that.
const CHART_SPAN_MS: u64 = 15 * 60 * 1000;

/// What the store keeps per replication channel: its lag, the lag's windows and chart.
pub struct ChannelEntry {
    pub name: String,
    /// The heartbeat lag as last read, carried forward while the channel applies nothing.
    pub(super) lag: Carried,
    /// The lag of the newest heartbeat it has received (`store/lag_split.rs`), carried forward
    /// while nothing arrives.
    pub(super) received: Carried,
    pub(super) windows: LagWindows,
    /// Lag less `SQL_Delay`, only while the channel is delayed.
    pub(super) beyond_delay: Option<Box<BeyondDelay>>,
    pub(super) histogram: super::histogram::LagHistogram,
    /// The last seconds of polls, for the apply rate and the catch-up.
    pub(super) rate: ApplyHistory,
    /// One point per poll over the last [`CHART_SPAN_MS`]; views share its blocks.
    pub(super) chart: ChartRing,
    pub(super) applier: super::applier::ApplierTrack,
    /// `Relay_Log_Space` over the last polls.
    pub(super) relay: super::headroom::RelayHistory,
}

impl ChannelEntry {
    pub(super) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            lag: Carried::new("no heartbeat read yet"),
            received: Carried::new("no status read yet"),
            windows: LagWindows::new(),
            beyond_delay: None,
            histogram: super::histogram::LagHistogram::default(),
            rate: ApplyHistory::default(),
            chart: ChartRing::default(),
            applier: super::applier::ApplierTrack::default(),
            relay: super::headroom::RelayHistory::default(),
        }
    }

    pub(super) fn push_point(
        &mut self,
        status: &ReplicaStatus,
        state: &NodeState,
        at: Instant,
        at_ms: u64,
    ) {
        if status.sql_delay.is_some_and(|d| d > 0) {
            BeyondDelay::delay_seen(&mut self.beyond_delay, at);
        }
        let lag = self.lag_at(at);
        self.rate.record(at_ms, status, state, lag.exact());
        self.relay.record(at_ms, status.relay_log_space);
        let lag_ms = lag
            .value()
            .map(|d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX));
        let sbm = status
            .seconds_behind_source
            .map(|s| u32::try_from(s).unwrap_or(u32::MAX));
        let point = Point {
            at_ms,
            heartbeat_lag_ms: lag_ms,
            sbm_s: sbm,
        };
        self.chart.push(point, CHART_SPAN_MS);
    }

    /// Records a lag reading; `delay` is the channel's `SQL_Delay` now.
    pub(super) fn apply_lag(&mut self, at: Instant, lag: Lag, delay: u64) {
        if let Lag::Exact { lag } = lag {
            // Bounds and unknowns stay out of the percentiles: they would pull them toward
            // whatever the bound happens to be.
            self.windows.record(at, lag);
            self.histogram.observe(lag);
            BeyondDelay::track(&mut self.beyond_delay, at, lag, delay);
        }
        self.lag.record(at, lag, delay > 0);
    }

    pub(super) fn apply_received(&mut self, at: Instant, lag: Lag) {
        self.received.record(at, lag, false);
    }

    /// The lag as last read, not carried forward.
    #[cfg(test)]
    pub fn last_read(&self) -> &Lag {
        &self.lag.lag
    }

    /// When the oldest heartbeat the newest reading found missing was committed.
    pub fn missing_since(&self) -> Option<Instant> {
        self.lag.missing_since()
    }

    /// The lag at `now`: a stalled channel's reading carried forward to `now` ([`Carried::at`]).
    pub fn lag_at(&self, now: Instant) -> Lag {
        self.lag.at(now)
    }

    /// The lag split into transport and apply at `now`. When the oldest heartbeat not received
    /// is the oldest not applied, nothing waits in the relay log and the whole lag is transport,
    /// carried forward as the whole is: the two readings come from different polls, and the
    /// received one (once a status poll) would otherwise read low until the next. Two readings
    /// of the same missing heartbeat differ by at most half a heartbeat `interval` (one may be
    /// its ack, the other the middle before it); of different heartbeats, by a whole one.
    pub(super) fn split_at(&self, now: Instant, interval: Duration) -> LagSplit {
        let total = self.lag_at(now);
        let same_work = matches!(
            (self.received.missing_since(), self.lag.missing_since()),
            (Some(received), Some(applied))
                if received.saturating_duration_since(applied) <= interval * 3 / 4
        );
        let received = if same_work {
            total.clone()
        } else {
            self.received.at(now)
        };
        LagSplit::of(&total, &received)
    }
}

#[cfg(test)]
mod tests {
    use super::{ChannelEntry, Lag};
    use std::time::{Duration, Instant};

    #[test]
    fn a_stalled_channel_reads_the_time_since_its_missing_work_a_moving_one_as_read() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let exact = |lag| Lag::Exact { lag };
        let mut channel = ChannelEntry::new("");
        // Missing work since t0, read at 1 s: one reading is not yet a stall.
        channel.apply_lag(t0 + ms(1000), exact(ms(1000)), 0);
        assert_eq!(channel.lag_at(t0 + ms(1300)), exact(ms(1000)));
        // The next reading finds the same work missing: the lag grows with the clock.
        channel.apply_lag(t0 + ms(1250), exact(ms(1250)), 0);
        assert_eq!(channel.lag_at(t0 + ms(1400)), exact(ms(1400)));
        // It applied some (the missing work is newer): as read until the next reading.
        channel.apply_lag(t0 + ms(1500), exact(ms(900)), 0);
        assert_eq!(channel.lag_at(t0 + ms(1700)), exact(ms(900)));
        // Caught up, then unknown: never carried forward.
        channel.apply_lag(t0 + ms(1750), exact(Duration::ZERO), 0);
        channel.apply_lag(t0 + ms(2000), exact(Duration::ZERO), 0);
        assert_eq!(channel.lag_at(t0 + ms(2200)), exact(Duration::ZERO));
        let unknown = Lag::Unknown {
            reason: "gone".to_owned(),
        };
        channel.apply_lag(t0 + ms(2250), unknown.clone(), 0);
        assert_eq!(channel.lag_at(t0 + ms(2500)), unknown);
    }

    #[test]
    fn a_split_whose_received_and_applied_lack_the_same_heartbeat_is_all_transport() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let exact = |lag| Lag::Exact { lag };
        let interval = ms(250);
        let mut channel = ChannelEntry::new("");
        // IO stopped at about t0: the status poll at 1 s found the heartbeat acked at t0 not
        // received (in flight then: its ack), the heartbeat reads found it not applied (the
        // middle before it) and the same twice, so the whole grows with the clock.
        channel.apply_received(t0 + ms(1000), exact(ms(1000)));
        channel.apply_lag(t0 + ms(1250), exact(ms(1125)), 0);
        channel.apply_lag(t0 + ms(1500), exact(ms(1375)), 0);
        let split = channel.split_at(t0 + ms(1900), interval);
        assert_eq!(
            (split.transport, split.apply),
            (exact(ms(1775)), exact(ms(0)))
        );
        // SQL stopped: everything received at the poll, the applied one lacking since t0.
        channel.apply_received(t0 + ms(2000), exact(ms(0)));
        let split = channel.split_at(t0 + ms(2100), interval);
        assert_eq!(
            (split.transport, split.apply),
            (exact(ms(0)), exact(ms(1975)))
        );
        // Received up to a heartbeat a second newer than the applied one: both parts.
        channel.apply_received(t0 + ms(2200), exact(ms(1200)));
        let split = channel.split_at(t0 + ms(2200), interval);
        assert_eq!(
            (split.transport, split.apply),
            (exact(ms(1200)), exact(ms(875)))
        );
    }
}
