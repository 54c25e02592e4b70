//! The lag percentile rule, and why a deliberate delay does not trip it.
//!
//! A replica with `SQL_Delay` (`MASTER_DELAY`) is as far behind as it was told to be: alerting on
//! its lag would keep `lag_p99_high` up for as long as the delay is configured. So a delayed
//! replica is judged on its lag *beyond* the delay (each reading less the delay in force when it
//! was read: [`crate::store::LagBeyondDelay`]), while its evidence still shows the true lag and
//! names the delay taken off. Routing is another matter: a delayed replica serves reads as stale
//! as its lag, so `all_replicas_lagging` (global.rs) and the DDL banner's lagging replicas keep
//! the true lag.
//!
//! A lag whose appliers apply row events on a table without a primary or unique key names that
//! table in its cause: under ROW format each such event scans the table.

use std::time::Duration;

use super::AlertSettings;
use super::format;
use super::verdict::{Verdict, fact};
use crate::store::ReplicaView;
use crate::store::windows::{Window, WindowStats};
use crate::units;

pub fn p99_high(settings: &AlertSettings, r: &ReplicaView) -> Verdict {
    explained_by_keyless_table(judge_p99(settings, r), r)
}

/// A lag whose appliers are applying row events on a table without a primary or unique key:
/// that table is the likeliest cause (each of its row events scans it), named in the evidence
/// and the cause.
fn explained_by_keyless_table(verdict: Verdict, r: &ReplicaView) -> Verdict {
    let (Verdict::Bad(mut diagnosis), Some(apply)) = (verdict.clone(), r.appliers.scanning_table())
    else {
        return verdict;
    };
    let table = apply.qualified().unwrap_or_default();
    diagnosis
        .evidence
        .push(fact("applying_row_events_on", table.clone()));
    diagnosis.evidence.push(fact("table_key", "none"));
    diagnosis.cause = format!(
        "{}; the appliers are applying row events on {table}, which has no primary or unique \
         key: each row event scans the table",
        diagnosis.cause
    );
    Verdict::Bad(diagnosis)
}

fn judge_p99(settings: &AlertSettings, r: &ReplicaView) -> Verdict {
    let shown = r
        .windows
        .iter()
        .find(|(w, _)| *w == Window::OneMinute)
        .and_then(|(_, s)| *s);
    let judged = match r.beyond_delay {
        Some(beyond) => beyond.one_minute,
        None => shown,
    };
    let Some(stats) = judged else {
        return Verdict::Unknown;
    };
    let limit = settings.lag_p99_seconds;
    if stats.p99.as_secs_f64() <= limit {
        return Verdict::Clean;
    }
    // What the minute says is only true of now while the replica is still behind: once it is
    // back under the threshold, the minute's P99 is the memory of a spike, not a replica that
    // cannot keep up.
    let now = super::incidents::now_beyond_delay(r);
    let high = match now {
        Some(now) if now.as_secs_f64() <= limit => format!(
            "was high in the last minute but is {} now: the replica caught up and this \
             clears when the spike leaves the minute (recovering)",
            units::lag(now)
        ),
        _ if stats.p50.as_secs_f64() > limit
            && r.catch_up.state == crate::store::apply_rate::CatchUpState::CatchingUp =>
        {
            format!(
                "stayed high for most of the last minute and is catching up now ({})",
                r.catch_up.text()
            )
        }
        _ if stats.p50.as_secs_f64() > limit => "stayed high for most of the last minute: the \
             replica cannot keep up with the writes"
            .to_owned(),
        _ => "spiked in the last minute: write bursts or large transactions".to_owned(),
    };
    let lag_now = fact(
        "lag_now",
        now.map_or_else(|| "unknown".to_owned(), units::lag),
    );
    if r.beyond_delay.is_none() {
        let evidence = vec![
            fact("lag_p99_1m", units::lag(stats.p99)),
            fact("threshold", format::lag_secs(limit)),
            fact("lag_p50_1m", units::lag(stats.p50)),
            fact("lag_max_1m", units::lag(stats.max)),
            fact("samples", stats.samples.to_string()),
            lag_now,
        ];
        return Verdict::bad(evidence, format!("lag {high}"));
    }
    let delay = units::secs(r.sql_delay.unwrap_or(0));
    let true_lag = |pick: fn(&WindowStats) -> Duration| {
        shown.map_or_else(|| "unknown".to_owned(), |s| units::lag(pick(&s)))
    };
    let evidence = vec![
        fact("lag_p99_1m", true_lag(|s| s.p99)),
        fact("sql_delay", delay.clone()),
        fact("lag_p99_beyond_delay_1m", units::lag(stats.p99)),
        fact("threshold", format::lag_secs(limit)),
        fact("lag_p50_beyond_delay_1m", units::lag(stats.p50)),
        fact("lag_max_1m", true_lag(|s| s.max)),
        fact("samples", stats.samples.to_string()),
        lag_now,
    ];
    Verdict::bad(evidence, format!("lag beyond the {delay} SQL_Delay {high}"))
}

#[cfg(test)]
mod tests {
    use crate::alerts::AlertKind;
    use crate::alerts::testkit::Judge;
    use crate::store::LagBeyondDelay;
    use crate::store::lag::Lag;
    use crate::store::testkit::{Topo, secs};
    use crate::store::windows::{Window, WindowStats};

    const KIND: AlertKind = AlertKind::LagP99High;

    fn minute(p50: f64, p99: f64, max: f64) -> WindowStats {
        WindowStats {
            p50: secs(p50),
            p99: secs(p99),
            max: secs(max),
            samples: 240,
        }
    }

    /// r1 as `MASTER_DELAY=5` leaves it: 4.8–5.0 s behind, its lag beyond the delay 0.
    fn delayed(topo: &mut Topo, beyond: Option<WindowStats>) {
        topo.replica_mut("r1", |r| {
            r.sql_delay = Some(5);
            r.heartbeat_lag = Lag::Exact { lag: secs(4.9) };
            r.windows[0] = (Window::OneMinute, Some(minute(4.9, 5.0, 5.0)));
            r.beyond_delay = Some(LagBeyondDelay { one_minute: beyond });
        });
    }

    #[test]
    fn a_replica_as_far_behind_as_its_delay_raises_nothing() {
        let mut topo = Topo::new();
        delayed(&mut topo, Some(minute(0.0, 0.0, 0.0)));
        topo.assert_quiet(KIND);
        // Without the delay the same lag is an alert: the rule is not simply blind to it.
        topo.replica_mut("r1", |r| (r.sql_delay, r.beyond_delay) = (None, None));
        let alert = topo.raise(KIND, Some("r1"));
        assert_eq!(alert.evidence[0], ("lag_p99_1m".into(), "5.00s".into()));
        assert!(
            alert.cause.starts_with("lag stayed high"),
            "{}",
            alert.cause
        );
    }

    #[test]
    fn lag_beyond_the_delay_raises_with_the_true_lag_and_the_delay_named() {
        let mut topo = Topo::new();
        // Stopped for a while on top of its delay: 3.5 s beyond it at P99.
        delayed(&mut topo, Some(minute(0.2, 3.5, 3.9)));
        topo.replica_mut("r1", |r| {
            r.heartbeat_lag = Lag::Exact { lag: secs(8.5) };
            r.windows[0] = (Window::OneMinute, Some(minute(5.0, 8.5, 8.9)));
        });
        let alert = topo.raise(KIND, Some("r1"));
        let evidence: Vec<(&str, &str)> = alert
            .evidence
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            evidence[..4],
            [
                ("lag_p99_1m", "8.50s"),
                ("sql_delay", "5s"),
                ("lag_p99_beyond_delay_1m", "3.50s"),
                ("threshold", "1.00s"),
            ]
        );
        assert_eq!(
            alert.cause,
            "lag beyond the 5s SQL_Delay spiked in the last minute: write bursts or large \
             transactions"
        );
    }

    #[test]
    fn a_replica_catching_up_is_not_said_to_fall_behind() {
        // Its link flowed again after a stall: 27 s behind, but applying faster than the source
        // writes.
        let mut topo = Topo::new();
        topo.replica_mut("r2", |r| {
            r.heartbeat_lag = Lag::Exact { lag: secs(27.6) };
            r.windows[0] = (Window::OneMinute, Some(minute(14.6, 27.1, 27.4)));
            r.catch_up = crate::store::testkit::catching_up(2.5, secs(11.0));
        });
        let alert = topo.raise(KIND, Some("r2"));
        assert!(
            alert
                .cause
                .starts_with("lag stayed high for most of the last minute and is catching up now"),
            "{}",
            alert.cause
        );
        assert!(!alert.cause.contains("cannot keep up"), "{}", alert.cause);
    }

    #[test]
    fn a_delayed_replica_without_readings_beyond_its_delay_is_not_judged() {
        // The delay was just seen; no reading has been taken less it yet: the true lag (which
        // includes the delay) must not be judged instead.
        let mut topo = Topo::new();
        delayed(&mut topo, None);
        topo.assert_quiet(KIND);
    }

    #[test]
    fn a_keyless_table_being_applied_is_named_as_the_cause() {
        use crate::mysql::{NamedBy, RowApply, RowEvent};
        let apply = |has_key| RowApply {
            thread_id: 10,
            event: RowEvent::Update,
            schema: Some("shop".into()),
            table: Some("events".into()),
            named_by: Some(NamedBy::Statement),
            has_key,
        };
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.windows[0] = (Window::OneMinute, Some(minute(5.0, 8.5, 8.9)));
            r.appliers.row_events = vec![apply(Some(false))];
        });
        let alert = topo.raise(KIND, Some("r1"));
        assert!(
            alert
                .evidence
                .contains(&("applying_row_events_on".into(), "shop.events".into())),
            "{:?}",
            alert.evidence
        );
        assert!(
            alert.cause.ends_with(
                "applying row events on shop.events, which has no primary or unique key: each \
                 row event scans the table"
            ),
            "{}",
            alert.cause
        );
        // With a key, or a key not known, the table explains nothing.
        for has_key in [Some(true), None] {
            let mut topo = Topo::new();
            topo.replica_mut("r1", |r| {
                r.windows[0] = (Window::OneMinute, Some(minute(5.0, 8.5, 8.9)));
                r.appliers.row_events = vec![apply(has_key)];
            });
            let alert = topo.raise(KIND, Some("r1"));
            assert!(!alert.cause.contains("events"), "{}", alert.cause);
            assert!(alert.evidence.iter().all(|(k, _)| k != "table_key"));
        }
    }
}
