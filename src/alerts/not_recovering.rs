//! A replica that is behind and not getting less behind: `replica_not_recovering`.
//!
//! Bad when, over the last `not_recovering_seconds` (2 minutes by default) of the channel's
//! lag chart, every known reading was beyond the routing threshold, the lag now is no smaller
//! than at the start of that time (less two heartbeat intervals of noise), and the channel's
//! catch-up ([`crate::store::apply_rate`]) does not say it is catching up now. All of it on the
//! lag beyond `SQL_Delay`: a delayed replica is as far behind as it was told to be. Clean as soon
//! as the lag shrinks, falls under the threshold, or the catch-up says it is catching up (a
//! restarted SQL thread working through its backlog is recovering, however far behind it still
//! is); unknown until the chart covers that time, and while the catch-up itself is unknown
//! (the first seconds after a thread restarts). Prometheus pages on this verdict itself
//! (`RwtopReplicaNotRecovering` in `deploy/prometheus/rwtop.rules.yml` fires on the alert's
//! `rwtop_alert_active_since_timestamp_seconds` series), not on a judgement of its own.

use std::time::Duration;

use super::AlertSettings;
use super::format;
use super::verdict::{Verdict, fact};
use crate::store::ReplicaView;
use crate::store::apply_rate::CatchUpState;
use crate::units;

pub fn verdict(settings: &AlertSettings, uptime: Duration, r: &ReplicaView) -> Verdict {
    let delay = Duration::from_secs(r.sql_delay.unwrap_or(0));
    // The same lag now that the incidents' after-effects judge it by.
    let Some(now) = super::incidents::now_beyond_delay(r) else {
        return Verdict::Unknown;
    };
    let threshold =
        Duration::try_from_secs_f64(settings.routing_max_lag_seconds).unwrap_or(Duration::MAX);
    match r.catch_up.state {
        _ if now <= threshold => return Verdict::Clean,
        // Caught up beyond a delay, its own or its source's (a cascade under a delayed replica).
        CatchUpState::CatchingUp | CatchUpState::CaughtUp => return Verdict::Clean,
        // Whether it recovers now cannot be told (a thread just restarted, say): no judgement.
        CatchUpState::Unknown => return Verdict::Unknown,
        _ => {}
    }
    let span = settings.not_recovering;
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let from_ms = ms(uptime).saturating_sub(ms(span));
    let beyond = |lag_ms: u32| Duration::from_millis(u64::from(lag_ms)).saturating_sub(delay);
    let mut readings = r
        .series
        .iter()
        .filter(|p| p.at_ms >= from_ms)
        .filter_map(|p| Some((p.at_ms, beyond(p.heartbeat_lag_ms?))));
    let Some((start_ms, start)) = readings.next() else {
        return Verdict::Unknown;
    };
    // The chart must reach back to the start of the time (within two polls) to say the lag
    // stayed up all along.
    let slack = ms(settings.poll_interval * 2).max(2_000);
    if ms(uptime) < ms(span) || start_ms > from_ms.saturating_add(slack) {
        return Verdict::Unknown;
    }
    if start <= threshold || readings.any(|(_, lag)| lag <= threshold) {
        return Verdict::Clean;
    }
    if now + settings.heartbeat_interval * 2 < start {
        return Verdict::Clean;
    }
    let c = &r.catch_up;
    let rate =
        |v: Option<f64>, text: fn(f64) -> String| v.map_or_else(|| "unknown".to_owned(), text);
    let mut evidence = vec![
        fact("lag", units::lag(now)),
        fact(
            &format!("lag_{}_ago", units::duration(span)),
            units::lag(start),
        ),
        fact(
            "threshold",
            format::lag_secs(settings.routing_max_lag_seconds),
        ),
        fact("not_recovering_after", units::duration(span)),
        fact("catch_up", c.text()),
        fact("apply_rate", rate(c.apply_trx_per_s, units::trx_rate)),
        fact("source_rate", rate(c.source_trx_per_s, units::trx_rate)),
    ];
    if let Some(change) = c.lag_change_s_per_s {
        let sign = if change < 0.0 { "-" } else { "+" };
        evidence.push(fact(
            "lag_change",
            format!("{sign}{}", units::lag_rate(change)),
        ));
    }
    if !delay.is_zero() {
        evidence.push(fact("sql_delay", units::duration(delay)));
    }
    let why = match (r.sql_running, c.deficit_trx_per_s()) {
        (false, _) => "the SQL thread is stopped".to_owned(),
        (true, Some(d)) if d > 0.0 => format!(
            "it applies {} below its source's write rate",
            units::trx_rate(d)
        ),
        (true, _) => "the lag grows or holds".to_owned(),
    };
    let cause = format!(
        "{} behind and not shrinking for {} (was {}): {why}; at this rate never",
        units::lag(now),
        units::duration(span),
        units::lag(start),
    );
    Verdict::bad(evidence, cause)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::alerts::testkit::Judge;
    use crate::alerts::{AlertEngine, AlertKind, AlertSettings};
    use crate::store::apply_rate::CatchUp;
    use crate::store::lag::Lag;
    use crate::store::series::Point;
    use crate::store::testkit::{Topo, catching_up, falling_behind, find, secs};

    const KIND: AlertKind = AlertKind::ReplicaNotRecovering;

    /// `Topo::at(step)` is `100 s + step` of uptime; one point a second from 0 s, lag `lag(t)`.
    fn chart(lag: impl Fn(u64) -> Option<u32>) -> Arc<[Point]> {
        (0..=110)
            .map(|t| Point {
                at_ms: t * 1_000,
                heartbeat_lag_ms: lag(t),
                sbm_s: None,
            })
            .collect()
    }

    fn settings() -> AlertSettings {
        AlertSettings {
            not_recovering: Duration::from_secs(60),
            ..AlertSettings::default()
        }
    }

    /// A replica whose SQL thread stopped 90 s ago: its lag grew 1 s/s since.
    fn stopped() -> Topo {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.sql_running = false;
            r.series = chart(|t| u32::try_from(t.saturating_sub(12) * 1_000).ok()).into();
            r.heartbeat_lag = Lag::Exact { lag: secs(90.0) };
            r.catch_up = falling_behind(0.0, 1.0);
        });
        topo
    }

    fn judge(topo: &Topo, settings: AlertSettings) -> Option<crate::alerts::Alert> {
        let mut engine = AlertEngine::new(settings);
        engine.evaluate(&topo.at(1));
        find(&engine.evaluate(&topo.at(2)), KIND, Some("r1")).cloned()
    }

    #[test]
    fn a_lag_that_only_grows_raises_with_then_and_now_and_the_rate() {
        let alert = judge(&stopped(), settings()).unwrap_or_else(|| panic!("not raised"));
        assert_eq!(
            alert.cause,
            "1m30s behind and not shrinking for 1m00s (was 30.00s): the SQL thread is \
             stopped; at this rate never"
        );
        for (name, value) in [
            ("lag", "1m30s"),
            ("lag_1m00s_ago", "30.00s"),
            ("catch_up", "falling behind 50 trx/s"),
            ("apply_rate", "0 trx/s"),
            ("source_rate", "50 trx/s"),
            ("lag_change", "+1.0 s/s"),
        ] {
            assert!(
                alert
                    .evidence
                    .contains(&(name.to_owned(), value.to_owned())),
                "{name}: {:?}",
                alert.evidence
            );
        }
        // The default is two minutes: the chart's 110 s do not cover it yet.
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&stopped().at(1));
        assert!(find(&engine.evaluate(&stopped().at(2)), KIND, Some("r1")).is_none());
    }

    #[test]
    fn catching_up_is_recovering_however_far_behind() {
        let mut topo = stopped();
        topo.replica_mut("r1", |r| {
            r.sql_running = true;
            r.catch_up = catching_up(0.4, secs(225.0));
        });
        assert!(judge(&topo, settings()).is_none());
        // Just restarted: too soon to say, so neither raised nor cleared.
        let mut engine = AlertEngine::new(settings());
        engine.evaluate(&stopped().at(1));
        engine.evaluate(&stopped().at(2));
        topo.replica_mut("r1", |r| r.catch_up = CatchUp::default());
        for step in 3..8 {
            assert!(find(&engine.evaluate(&topo.at(step)), KIND, Some("r1")).is_some());
        }
    }

    #[test]
    fn a_lag_that_shrank_or_dipped_under_the_threshold_is_clean() {
        // Falling over the minute although the last 20 s look flat to the catch-up.
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.series = chart(|t| u32::try_from(200_000 - t * 1_000).ok()).into();
            r.heartbeat_lag = Lag::Exact { lag: secs(90.0) };
            r.catch_up = falling_behind(49.0, 0.0);
        });
        assert!(judge(&topo, settings()).is_none());
        // Up for the last 30 s only: a new episode, not yet a minute old.
        let mut topo = stopped();
        topo.replica_mut("r1", |r| {
            r.series = chart(|t| Some(if t < 70 { 200 } else { 40_000 })).into();
        });
        assert!(judge(&topo, settings()).is_none());
        // A flat lag all minute long is not shrinking.
        let mut topo = stopped();
        topo.replica_mut("r1", |r| {
            r.series = chart(|_| Some(90_000)).into();
        });
        assert!(judge(&topo, settings()).is_some());
    }

    #[test]
    fn a_delay_is_not_lag_and_unknown_lag_is_no_judgement() {
        // 100 s of SQL_Delay, holding at 101 s: 1 s beyond the delay, within the threshold.
        let mut topo = stopped();
        topo.replica_mut("r1", |r| {
            r.sql_delay = Some(100);
            r.series = chart(|_| Some(101_000)).into();
            r.heartbeat_lag = Lag::Exact { lag: secs(101.0) };
        });
        assert!(judge(&topo, settings()).is_none());
        // Under a delayed source: its catch-up says caught up beyond that delay.
        let mut topo = stopped();
        topo.replica_mut("r1", |r| {
            r.series = chart(|_| Some(5_200)).into();
            r.heartbeat_lag = Lag::Exact { lag: secs(5.2) };
            r.catch_up.state = crate::store::apply_rate::CatchUpState::CaughtUp;
        });
        assert!(judge(&topo, settings()).is_none());
        let mut topo = stopped();
        topo.replica_mut("r1", |r| {
            r.heartbeat_lag = Lag::Unknown {
                reason: "no heartbeat".to_owned(),
            };
        });
        assert!(judge(&topo, settings()).is_none());
    }

    #[test]
    fn healthy_replicas_are_quiet() {
        Topo::new().assert_quiet(KIND);
    }
}
