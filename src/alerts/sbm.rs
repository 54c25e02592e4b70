//! Where `Seconds_Behind_Master` disagrees with the heartbeat, in either direction.
//!
//! SBM is measured from event timestamps against the replica's clock and only over what the
//! replica has received, so it reads 0 while a stalled link leaves the replica behind, and
//! reads high for delayed replicas, skewed clocks and long row-based transactions (it counts
//! from the statement's start on the source: `docs/server-facts.md`, "What SBM says").
//! The heartbeat measures the real thing, so it is the reference; SBM NULL is the stopped-thread
//! rules' business.

use std::time::Duration;

use super::AlertSettings;
use super::format;
use super::verdict::{RuleInputs, Verdict, fact};
use crate::mysql::IoRunning;
use crate::store::lag::Lag;
use crate::store::lag_split::Holder;
use crate::store::{NodeView, ReplicaView};
use crate::units;

/// The smallest disagreement worth a word: two heartbeat intervals (the heartbeat's
/// resolution) and one second (SBM's). A configured threshold can only widen it.
pub(super) fn understate_margin(settings: &AlertSettings) -> f64 {
    (2.0 * settings.heartbeat_interval.as_secs_f64())
        .max(1.0)
        .max(settings.sbm_disagree_seconds)
}

pub fn understates(inputs: &RuleInputs<'_>, r: &ReplicaView) -> Verdict {
    let Some(sbm) = r.seconds_behind_source else {
        return Verdict::Clean;
    };
    // A lower bound works here: the replica is at least that far behind.
    let Some(lag) = r.heartbeat_lag.value() else {
        return Verdict::Unknown;
    };
    let margin = understate_margin(inputs.settings);
    let lag_s = lag.as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "SBM seconds far below 2^52")]
    let sbm_s = sbm as f64;
    if lag_s <= margin || lag_s - sbm_s <= margin {
        return Verdict::Clean;
    }
    let mut evidence = vec![
        fact("seconds_behind_source", format::sbm(Some(sbm))),
        fact("heartbeat_lag", format::lag(&r.heartbeat_lag)),
    ];
    let backlog = r.gtid_backlog;
    let mut stated = false;
    let cause = if r.io_running == IoRunning::Yes {
        let not_received = backlog.not_received.filter(|n| *n > 0);
        let bytes_io = r.bytes_behind.io.filter(|n| *n > 0);
        if not_received.is_some() || bytes_io.is_some() {
            if let Some(n) = not_received {
                evidence.push(fact("not_received", format::trx(n)));
            }
            if let Some(n) = bytes_io {
                evidence.push(fact("bytes_behind_io", units::bytes(n)));
            }
            // The source states it has what the replica lacks, and the split that none of the
            // lag waits in the relay log (two heartbeat readings found the same gap in what
            // arrived): a stall read as such, raised on its first sample.
            stated = r.lag_split.holder() == Some(Holder::Transport);
            "source link stalled: the source has transactions this replica has not \
                 received, and SBM only counts what arrived"
        } else if let Some(n) = backlog.not_applied.filter(|n| *n > 0) {
            evidence.push(fact("not_applied", format::trx(n)));
            "relay-log backlog not reflected in SBM (idle-then-burst): SBM restarts from \
                 the first event applied after an idle spell"
        } else if r.lag_split.holder() == Some(Holder::Transport) {
            "not yet received, with no backlog in sight: nothing waits in the relay log, and \
                 SBM only counts what arrived"
        } else {
            "SBM reads behind the heartbeat with no backlog in sight: SBM counts from event \
                 timestamps, which reset when the relay log is re-fetched or the source idles"
        }
    } else {
        evidence.push(fact("io_running", format::io_running(r.io_running)));
        "IO thread not connected: SBM only counts what was received before the link dropped"
    };
    // The lag in its two parts, and which holds it: the diagnosis the cause rests on.
    let split = &r.lag_split;
    if split.transport.value().is_some() || split.apply.value().is_some() {
        evidence.push(fact("transport", format::lag(&split.transport)));
        evidence.push(fact("apply", format::lag(&split.apply)));
    }
    if let Some(holder) = split.holder() {
        evidence.push(fact("split", holder.words()));
    }
    if stated {
        Verdict::stated(evidence, cause)
    } else {
        Verdict::bad(evidence, cause)
    }
}

/// The lag SBM should not exceed: exact, or the upper bound when only a range is known (a
/// lower bound cannot show that SBM is too high).
fn lag_ceiling(lag: &Lag) -> Option<Duration> {
    match lag {
        Lag::Exact { lag } => Some(*lag),
        Lag::AtLeast { upper, .. } => *upper,
        Lag::Unknown { .. } => None,
    }
}

pub fn overstates(inputs: &RuleInputs<'_>, node: &NodeView, r: &ReplicaView) -> Verdict {
    let Some(sbm) = r.seconds_behind_source else {
        return Verdict::Clean;
    };
    let Some(lag) = lag_ceiling(&r.heartbeat_lag) else {
        return Verdict::Unknown;
    };
    let margin = (2.0 * inputs.settings.sbm_disagree_seconds).max(2.0);
    #[expect(clippy::cast_precision_loss, reason = "SBM seconds far below 2^52")]
    let sbm_s = sbm as f64;
    if sbm_s < lag.as_secs_f64() + margin {
        return Verdict::Clean;
    }
    let mut evidence = vec![
        fact("seconds_behind_source", format::sbm(Some(sbm))),
        fact("heartbeat_lag", format::lag(&r.heartbeat_lag)),
    ];
    let skew = inputs.source_of(node).and_then(|source| {
        let diff = node
            .clock?
            .offset_ms
            .saturating_sub(source.clock?.offset_ms);
        Some((source, diff))
    });
    let cause = match (r.sql_delay.filter(|d| *d > 0), skew) {
        (Some(delay), _) => {
            evidence.push(fact("sql_delay", units::secs(delay)));
            "SQL_Delay configured: SBM includes the intended delay".to_owned()
        }
        (None, Some((source, diff))) if diff.abs() > inputs.settings.clock_skew_ms => {
            evidence.push(fact("clock_difference", units::offset_ms(diff)));
            format!(
                "clock skew: {}'s clock differs from {}'s by {}, and SBM subtracts one \
                     from the other",
                node.name,
                source.name,
                units::duration(Duration::from_millis(diff.unsigned_abs()))
            )
        }
        _ => "long transaction timestamps: on row-based events SBM counts from the \
                  statement's start on the source, not its commit"
            .to_owned(),
    };
    Verdict::bad(evidence, cause)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::AlertKind;
    use crate::alerts::testkit::Judge;
    use crate::mysql::ThreadError;
    use crate::store::testkit::set_clock;
    use crate::store::testkit::{Topo, secs};

    const KIND: AlertKind = AlertKind::SbmUnderstatesLag;

    /// One field changed on a replica that is otherwise behind with SBM saying 1 s.
    type Vary = fn(&mut crate::store::ReplicaView);

    #[test]
    fn understated_lag_blames_a_stalled_source_link() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(0);
            r.heartbeat_lag = Lag::Exact { lag: secs(12.4) };
            r.gtid_backlog.not_received = Some(40);
        });
        let alert = topo.raise(KIND, Some("r1"));
        assert_eq!(alert.evidence[0], fact("seconds_behind_source", "0s"));
        assert_eq!(alert.evidence[1], fact("heartbeat_lag", "12.40s"));
        assert_eq!(alert.evidence[2], fact("not_received", "40 trx"));
        assert!(
            alert.cause.starts_with("source link stalled"),
            "{}",
            alert.cause
        );
    }

    /// A stall the source and the split both state raises on its first sample; the same lag
    /// with part of it waiting in the relay log is a reading, raised after the usual run.
    #[test]
    fn a_stalled_link_with_all_its_lag_in_transport_raises_at_once() {
        let stalled = |received: f64| {
            let mut topo = Topo::new();
            topo.replica_mut("r1", |r| {
                r.seconds_behind_source = Some(0);
                r.heartbeat_lag = Lag::Exact { lag: secs(1.6) };
                r.gtid_backlog.not_received = Some(12);
                r.lag_split = crate::store::lag_split::LagSplit::of(
                    &Lag::Exact { lag: secs(1.6) },
                    &Lag::Exact {
                        lag: secs(received),
                    },
                );
            });
            topo
        };
        assert!(stalled(1.6).raises_at_once(KIND, Some("r1")));
        assert!(!stalled(0.2).raises_at_once(KIND, Some("r1")));
        assert!(
            stalled(0.2)
                .raise(KIND, Some("r1"))
                .cause
                .starts_with("source link stalled")
        );
    }

    #[test]
    fn understated_lag_says_which_part_holds_it() {
        let split = |t: f64, a: f64| {
            crate::store::lag_split::LagSplit::of(
                &Lag::Exact { lag: secs(t + a) },
                &Lag::Exact { lag: secs(t) },
            )
        };
        // A stalled link that the source's state does not show (its state not read yet): the
        // split alone says that nothing waits in the relay log.
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(0);
            r.heartbeat_lag = Lag::Exact { lag: secs(41.0) };
            r.lag_split = split(41.0, 0.0);
        });
        let alert = topo.raise(KIND, Some("r1"));
        assert!(
            alert.cause.starts_with("not yet received"),
            "{}",
            alert.cause
        );
        assert!(alert.evidence.contains(&fact("transport", "41.00s")));
        assert!(alert.evidence.contains(&fact("apply", "0.00s")));
        assert!(
            alert.evidence.contains(&fact(
                "split",
                "all of it is transport: nothing waits in the relay log"
            )),
            "{:?}",
            alert.evidence
        );
        // An idle-then-burst backlog: received, waiting for the applier.
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(1);
            r.heartbeat_lag = Lag::Exact { lag: secs(9.0) };
            r.lag_split = split(0.0, 9.0);
            r.gtid_backlog.not_applied = Some(300);
        });
        let alert = topo.raise(KIND, Some("r1"));
        assert!(
            alert.cause.starts_with("relay-log backlog"),
            "{}",
            alert.cause
        );
        assert!(alert.evidence.contains(&fact("apply", "9.00s")));
        assert!(alert.evidence.contains(&fact(
            "split",
            "received: it waits in the relay log, the applier is behind"
        )));
    }

    #[test]
    fn understated_lag_causes_by_evidence() {
        let cases: [(&str, Vary); 4] = [
            ("IO thread not connected", |r| {
                r.io_running = IoRunning::Connecting;
            }),
            ("source link stalled", |r| r.bytes_behind.io = Some(4096)),
            ("relay-log backlog", |r| {
                r.gtid_backlog.not_applied = Some(17);
            }),
            ("SBM reads behind", |_| {}),
        ];
        for (expected, vary) in cases {
            let mut topo = Topo::new();
            topo.replica_mut("r2", |r| {
                r.seconds_behind_source = Some(1);
                r.heartbeat_lag = Lag::Exact { lag: secs(5.0) };
                vary(r);
            });
            let alert = topo.raise(KIND, Some("r2"));
            assert!(
                alert.cause.starts_with(expected),
                "{expected}: {}",
                alert.cause
            );
        }
    }

    #[test]
    fn sbm_null_or_agreeing_never_raises_understated() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = None;
            r.io_running = IoRunning::No;
            r.heartbeat_lag = Lag::Exact { lag: secs(30.0) };
        });
        topo.replica_mut("r2", |r| {
            r.seconds_behind_source = Some(12);
            r.heartbeat_lag = Lag::Exact { lag: secs(12.4) };
        });
        topo.assert_quiet(KIND);
        topo.assert_quiet(AlertKind::SbmOverstatesLag);
        assert!(
            topo.raise(AlertKind::IoThreadStopped, Some("r1")).evidence[0]
                == fact("seconds_behind_source", "NULL")
        );
    }

    #[test]
    fn below_the_margin_is_quiet() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(0);
            r.heartbeat_lag = Lag::Exact { lag: secs(0.9) };
        });
        topo.assert_quiet(KIND);
    }

    #[test]
    fn overstated_lag_causes() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(300);
            r.sql_delay = Some(300);
        });
        topo.replica_mut("r2", |r| r.seconds_behind_source = Some(4));
        topo.node_mut("r2", |n| set_clock(n, 3_900));
        let kind = AlertKind::SbmOverstatesLag;
        let (first, second) = (topo.raise(kind, Some("r1")), topo.raise(kind, Some("r2")));
        assert!(
            first.cause.starts_with("SQL_Delay configured"),
            "{}",
            first.cause
        );
        assert_eq!(first.evidence[2], fact("sql_delay", "5m00s"));
        assert!(second.cause.starts_with("clock skew"), "{}", second.cause);
        assert_eq!(second.evidence[2], fact("clock_difference", "+3.9s"));

        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(3);
            r.last_sql_error = Some(ThreadError {
                errno: 1,
                message: "x".to_owned(),
                timestamp: None,
            });
        });
        let third = topo.raise(kind, Some("r1"));
        assert!(
            third.cause.starts_with("long transaction"),
            "{}",
            third.cause
        );
    }

    #[test]
    fn a_lower_bound_cannot_show_sbm_too_high() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.seconds_behind_source = Some(60);
            r.heartbeat_lag = Lag::AtLeast {
                lag: secs(2.0),
                upper: None,
            };
        });
        topo.assert_quiet(AlertKind::SbmOverstatesLag);
    }
}
