//! What the rules judge by: the configured thresholds (`[thresholds]` in the config, defaults
//! explained in `docs/design.md`, "Alerts") and the engine's timing.

use std::time::Duration;

use super::AlertKind;

/// The thresholds an operator may configure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub sbm_disagree_seconds: f64,
    pub lag_p99_seconds: f64,
    pub gtid_backlog: u64,
    pub routing_max_lag_seconds: f64,
    /// Clock difference between a replica and its source that raises `clock_skew`.
    pub clock_skew_ms: u64,
    /// How long a lag beyond the routing threshold may go without shrinking before
    /// `replica_not_recovering` is raised.
    pub not_recovering_seconds: f64,
    /// Consecutive bad samples before an alert is raised, clean ones before it clears.
    pub raise_after: u32,
    pub clear_after: u32,
    /// A disk that fills within this at the current rate raises `disk_filling`
    /// (`[headroom] disk_full_within`).
    pub disk_full_within: Duration,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            sbm_disagree_seconds: 1.0,
            lag_p99_seconds: 1.0,
            gtid_backlog: 1000,
            routing_max_lag_seconds: 1.0,
            clock_skew_ms: 500,
            not_recovering_seconds: 120.0,
            raise_after: 2,
            clear_after: 3,
            disk_full_within: Duration::from_secs(3600),
        }
    }
}

/// Thresholds and timing the rules judge by; the defaults are explained in `docs/design.md`,
/// "Alerts".
#[derive(Debug, Clone, PartialEq)]
pub struct AlertSettings {
    /// Consecutive bad samples before an alert is raised.
    pub raise_after: u32,
    /// Consecutive clean samples before a raised alert clears.
    pub clear_after: u32,
    /// One sample per this much uptime for global rules and for nodes that do not answer.
    pub poll_interval: Duration,
    /// The heartbeat's resolution: lag differences below two intervals are noise.
    pub heartbeat_interval: Duration,
    pub sbm_disagree_seconds: f64,
    pub lag_p99_seconds: f64,
    pub gtid_backlog: u64,
    pub routing_max_lag_seconds: f64,
    pub clock_skew_ms: i64,
    /// Lag beyond the routing threshold, not shrinking for this long: `replica_not_recovering`.
    pub not_recovering: Duration,
    /// A disk that fills within this at the current rate: `disk_filling`.
    pub disk_full_within: Duration,
    /// Entries the in-memory alert log keeps; the oldest go first.
    pub log_capacity: usize,
}

impl Default for AlertSettings {
    fn default() -> Self {
        Self::from_thresholds(
            &Thresholds::default(),
            Duration::from_secs(1),
            Duration::from_millis(250),
        )
    }
}

impl AlertSettings {
    /// The configured thresholds; the rest (hysteresis, clock skew, log size) are not in the
    /// config file yet and take their defaults.
    #[must_use]
    pub fn from_thresholds(
        t: &Thresholds,
        poll_interval: Duration,
        heartbeat_interval: Duration,
    ) -> Self {
        Self {
            raise_after: t.raise_after.max(1),
            clear_after: t.clear_after.max(1),
            poll_interval,
            heartbeat_interval,
            sbm_disagree_seconds: t.sbm_disagree_seconds,
            lag_p99_seconds: t.lag_p99_seconds,
            gtid_backlog: t.gtid_backlog,
            routing_max_lag_seconds: t.routing_max_lag_seconds,
            clock_skew_ms: i64::try_from(t.clock_skew_ms).unwrap_or(i64::MAX),
            not_recovering: Duration::try_from_secs_f64(t.not_recovering_seconds)
                .unwrap_or(Duration::MAX),
            disk_full_within: t.disk_full_within,
            log_capacity: 1000,
        }
    }

    /// Clean samples before a raised alert of `kind` clears. A schema change that is gone from
    /// a processlist scan has ended, a fact rather than a reading that flickers: its alert clears
    /// on the first such scan, so the banner ends with the statement (raising still takes
    /// `raise_after` scans).
    #[must_use]
    pub fn clean_samples_to_clear(&self, kind: AlertKind) -> u32 {
        match kind {
            AlertKind::DdlInFlight => 1,
            _ => self.clear_after.max(1),
        }
    }
}

#[cfg(test)]
mod settings_tests {
    use std::time::Duration;

    use super::{AlertSettings, Thresholds};

    #[test]
    fn settings_take_every_configured_threshold() {
        let t = Thresholds {
            sbm_disagree_seconds: 2.5,
            lag_p99_seconds: 3.0,
            gtid_backlog: 7,
            routing_max_lag_seconds: 4.0,
            clock_skew_ms: 900,
            not_recovering_seconds: 45.0,
            raise_after: 4,
            clear_after: 6,
            disk_full_within: Duration::from_secs(600),
        };
        let s =
            AlertSettings::from_thresholds(&t, Duration::from_secs(2), Duration::from_millis(500));
        assert_eq!(
            (
                s.raise_after,
                s.clear_after,
                s.clock_skew_ms,
                s.gtid_backlog
            ),
            (4, 6, 900, 7)
        );
        assert_eq!(
            (
                s.sbm_disagree_seconds,
                s.lag_p99_seconds,
                s.routing_max_lag_seconds
            ),
            (2.5, 3.0, 4.0)
        );
        assert_eq!(s.not_recovering, Duration::from_secs(45));
        assert_eq!(
            (s.poll_interval, s.heartbeat_interval),
            (Duration::from_secs(2), Duration::from_millis(500))
        );
    }
}
