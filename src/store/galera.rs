//! A Galera member as the store keeps it: its newest status, what its counters did since
//! the reading before (the flow-control paused share of that interval, the pause requests it
//! sent, certification failures and brute-force aborts), and its lag behind the member rwtop
//! writes the cluster's heartbeat on. Rates come from counters only: the server's own averages
//! are reset by anyone's `FLUSH STATUS` (`mysql/galera.rs`).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::carried::Carried;
use super::lag::Lag;
use super::windows::{LagWindows, Window, WindowStats};
use crate::mysql::galera::{GaleraStatus, Wsrep};

/// The newest reading of a member, the one before it for the counters' deltas, and its lag.
#[derive(Debug)]
pub struct GaleraTrack {
    last: Option<(Instant, GaleraStatus)>,
    interval: Option<GaleraInterval>,
    /// The heartbeat lag as last read, carried forward while the member applies nothing.
    lag: Carried,
    windows: LagWindows,
    /// When the newest exact reading was sent, less its lag: everything committed on the
    /// writer before then was here. What a member cut off from the component is behind from.
    complete_at: Option<Instant>,
}

impl Default for GaleraTrack {
    fn default() -> Self {
        Self {
            last: None,
            interval: None,
            lag: Carried::new("no heartbeat read on this member yet"),
            windows: LagWindows::new(),
            complete_at: None,
        }
    }
}

/// Why a member cut off before rwtop's first reading has no lag figure.
const OUT_BEFORE_FIRST_READ: &str = "out of the primary component since before rwtop's first \
    reading: its tables refuse reads (error 1047), so it serves nothing and applies nothing";

/// What the counters did between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GaleraInterval {
    /// How long the interval was, in milliseconds.
    pub ms: u64,
    /// The share of it (0–1) the member was paused by flow control, whoever asked.
    pub paused_share: Option<f64>,
    /// Pause requests this member sent in it: its own backlog held the cluster back.
    pub fc_sent: Option<u64>,
    pub cert_failures: Option<u64>,
    pub bf_aborts: Option<u64>,
}

impl GaleraTrack {
    /// Takes a poll's reading: a member's status starts a new interval against the last one;
    /// a server that is no member (or a restart's reset counters) forgets the last.
    pub fn record(&mut self, at: Instant, reading: Option<&Wsrep>) {
        let Some(reading) = reading else {
            return;
        };
        let Some(now) = reading.member() else {
            self.last = None;
            self.interval = None;
            return;
        };
        if let Some((then, last)) = &self.last {
            let elapsed = at.saturating_duration_since(*then);
            if !elapsed.is_zero() {
                self.interval = Some(interval(elapsed, last, now));
            }
        }
        self.last = Some((at, now.clone()));
    }

    /// Whether the newest poll that asked showed a member.
    #[must_use]
    pub fn is_member(&self) -> bool {
        self.last.is_some()
    }

    /// A heartbeat reading sent at `at`: the member's lag behind the cluster's writer.
    pub fn apply_lag(&mut self, at: Instant, lag: Lag) {
        if let Lag::Exact { lag } = lag {
            self.windows.record(at, lag);
            self.complete_at = at.checked_sub(lag);
        }
        self.lag.record(at, lag, false);
    }

    /// A heartbeat reading sent at `at` that the member refused with error 1047: it is out of
    /// the primary component, so it has applied nothing since its last complete reading, and
    /// is at least that far behind (never "unknown": the cause is known).
    pub fn refused_out_of_component(&mut self, at: Instant) {
        let lag = self.complete_at.map_or_else(
            || Lag::Unknown {
                reason: OUT_BEFORE_FIRST_READ.to_owned(),
            },
            |since| Lag::AtLeast {
                lag: at.saturating_duration_since(since),
                upper: None,
            },
        );
        self.lag.record(at, lag, false);
    }

    /// The member as of `now`; `None` while no poll has shown it a member.
    #[must_use]
    pub fn view(&self, now: Instant) -> Option<GaleraView> {
        let (_, status) = self.last.as_ref()?;
        Some(GaleraView {
            status: status.clone(),
            interval: self.interval,
            lag: self.lag.at(now),
            windows: Window::ALL
                .iter()
                .map(|w| (*w, self.windows.stats(now, *w)))
                .collect(),
        })
    }
}

/// A counter's growth; `None` when either reading lacks it or it went back (a restart).
fn grew(now: Option<u64>, then: Option<u64>) -> Option<u64> {
    now?.checked_sub(then?)
}

fn interval(elapsed: Duration, last: &GaleraStatus, now: &GaleraStatus) -> GaleraInterval {
    let (fc, was) = (&now.flow_control, &last.flow_control);
    let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    GaleraInterval {
        ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        #[expect(
            clippy::cast_precision_loss,
            reason = "nanoseconds of a poll interval are far below 2^52"
        )]
        paused_share: grew(fc.paused_ns, was.paused_ns)
            .map(|paused| (paused as f64 / ns as f64).clamp(0.0, 1.0)),
        fc_sent: grew(fc.sent, was.sent),
        cert_failures: grew(now.cert_failures, last.cert_failures),
        bf_aborts: grew(now.bf_aborts, last.bf_aborts),
    }
}

/// A Galera member in the node's view: its newest status (state, component, the cluster as it
/// sees it, queues), and what its counters did in the last interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GaleraView {
    pub status: GaleraStatus,
    /// `None` until two readings.
    pub interval: Option<GaleraInterval>,
    /// Behind the member rwtop writes the cluster's heartbeat on, measured as an async
    /// replica's is; unknown in recordings made before it existed.
    #[serde(default = "unrecorded")]
    pub lag: Lag,
    /// The lag's distributions over the sliding windows.
    #[serde(default)]
    pub windows: Vec<(Window, Option<WindowStats>)>,
}

fn unrecorded() -> Lag {
    Lag::Unknown {
        reason: "not recorded".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::RawRow;

    fn member(paused_ns: u64, sent: u64, failures: u64) -> Wsrep {
        let pairs = [
            ("wsrep_provider_name", "Galera".to_owned()),
            ("wsrep_local_state", "4".to_owned()),
            ("wsrep_cluster_status", "Primary".to_owned()),
            ("wsrep_flow_control_paused_ns", paused_ns.to_string()),
            ("wsrep_flow_control_sent", sent.to_string()),
            ("wsrep_local_cert_failures", failures.to_string()),
        ];
        let rows: Vec<RawRow> = pairs
            .iter()
            .map(|(n, v)| RawRow::of(&[("Variable_name", Some(n)), ("Value", Some(v))]))
            .collect();
        Wsrep::from_rows(&rows)
    }

    #[test]
    fn the_interval_comes_from_counters_and_a_restart_or_a_non_member_starts_over() {
        let t0 = Instant::now();
        let mut track = GaleraTrack::default();
        assert_eq!(track.view(t0), None);
        track.record(t0, Some(&member(1_000_000_000, 10, 2)));
        assert_eq!(
            track.view(t0).unwrap().interval,
            None,
            "one reading: no rate"
        );
        // 400 ms of pause in a second, 3 requests sent, one more certification failure.
        track.record(
            t0 + Duration::from_secs(1),
            Some(&member(1_400_000_000, 13, 3)),
        );
        let i = track.view(t0).unwrap().interval.unwrap();
        assert_eq!(i.ms, 1000);
        assert!((i.paused_share.unwrap() - 0.4).abs() < 1e-9, "{i:?}");
        assert_eq!((i.fc_sent, i.cert_failures), (Some(3), Some(1)));
        // A poll that did not ask keeps everything as it was.
        track.record(t0 + Duration::from_secs(2), None);
        assert_eq!(track.view(t0).unwrap().interval, Some(i));
        // Counters that went back (a restart) give no rate rather than a huge one.
        track.record(t0 + Duration::from_secs(3), Some(&member(5, 0, 0)));
        let i = track.view(t0).unwrap().interval.unwrap();
        assert_eq!(
            (i.paused_share, i.fc_sent, i.cert_failures),
            (None, None, None)
        );
        track.record(t0 + Duration::from_secs(4), Some(&Wsrep::NotMember));
        assert_eq!(track.view(t0), None);
    }

    #[test]
    fn a_member_cut_off_is_behind_from_its_last_complete_reading_never_unknown() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let mut track = GaleraTrack::default();
        track.record(t0, Some(&member(0, 0, 0)));
        track.refused_out_of_component(t0);
        let before = track.view(t0).unwrap().lag;
        assert!(
            matches!(&before, Lag::Unknown { reason } if reason.contains("error 1047")),
            "{before:?}"
        );
        // Complete up to 0.2 s before the reading at 1 s, then cut off: at 5 s, 4.2 s behind
        // at least.
        track.apply_lag(
            t0 + secs(1),
            Lag::Exact {
                lag: Duration::from_millis(200),
            },
        );
        track.refused_out_of_component(t0 + secs(5));
        let view = track.view(t0 + secs(5)).unwrap();
        assert_eq!(
            view.lag,
            Lag::AtLeast {
                lag: Duration::from_millis(4_200),
                upper: None
            }
        );
        let one_minute = view.windows[0].1.unwrap();
        assert_eq!(
            one_minute.p99,
            Duration::from_millis(200),
            "only exact readings count"
        );
    }
}
