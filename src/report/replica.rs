//! One replica's lag over a window, judged against the routing threshold: the worst it got,
//! each stretch above the threshold, and how long it took to catch up once the primary was done.

/// A stretch above the threshold, in seconds from the window's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossing {
    /// The first point above the threshold.
    pub above_at: f64,
    /// The first point back at or under it; `None`: still above at the window's end.
    pub back_at: Option<f64>,
    /// The worst lag in the stretch, seconds.
    pub peak: f64,
}

/// How a replica caught up after the primary finished its statement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CaughtUp {
    /// It was never above the threshold after the primary finished.
    NeverBehind,
    /// Back under the threshold for good this many seconds after the primary finished.
    After(f64),
    /// Still above the threshold when the window ended.
    NotYet,
    /// The primary's end was not seen (a marked window without a DDL, one cut short).
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaLag {
    pub name: String,
    /// `(seconds from the window's start, lag in seconds)`; `None` where the heartbeat could
    /// not be read.
    pub points: Vec<(f64, Option<f64>)>,
    /// The worst lag and when, seconds from the window's start.
    pub max: Option<(f64, f64)>,
    pub crossings: Vec<Crossing>,
    pub catch_up: CaughtUp,
}

/// Judges `points` (in time order) against `threshold`; `primary_done` is when the primary
/// finished, seconds from the window's start.
#[must_use]
pub fn judge(
    name: String,
    points: Vec<(f64, Option<f64>)>,
    threshold: f64,
    primary_done: Option<f64>,
) -> ReplicaLag {
    let mut max: Option<(f64, f64)> = None;
    let mut crossings: Vec<Crossing> = Vec::new();
    for &(t, lag) in &points {
        let Some(lag) = lag else { continue };
        if max.is_none_or(|(_, m)| lag > m) {
            max = Some((t, lag));
        }
        let open = crossings.last_mut().filter(|c| c.back_at.is_none());
        match (open, lag > threshold) {
            (Some(c), true) => c.peak = c.peak.max(lag),
            (Some(c), false) => c.back_at = Some(t),
            (None, true) => crossings.push(Crossing {
                above_at: t,
                back_at: None,
                peak: lag,
            }),
            (None, false) => {}
        }
    }
    let catch_up = match (primary_done, crossings.last()) {
        (_, Some(Crossing { back_at: None, .. })) => CaughtUp::NotYet,
        (None, _) => CaughtUp::Unknown,
        (
            Some(done),
            Some(Crossing {
                back_at: Some(back),
                ..
            }),
        ) if *back > done => CaughtUp::After(back - done),
        (Some(_), _) => CaughtUp::NeverBehind,
    };
    ReplicaLag {
        name,
        points,
        max,
        crossings,
        catch_up,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lags(values: &[f64]) -> Vec<(f64, Option<f64>)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    f64::from(u32::try_from(i).unwrap()),
                    (*v >= 0.0).then_some(*v),
                )
            })
            .collect()
    }

    #[test]
    fn crossings_peaks_and_the_catch_up_after_the_primary() {
        // Above 1 s from 2 to 5 (back at 5), a gap (-1: unreadable), above again at 7 to 8.
        let r = judge(
            "r1".into(),
            lags(&[0.1, 0.5, 1.5, 4.0, 2.0, 0.3, -1.0, 1.2, 0.2]),
            1.0,
            Some(3.0),
        );
        assert_eq!(r.max, Some((3.0, 4.0)));
        assert_eq!(
            r.crossings,
            vec![
                Crossing {
                    above_at: 2.0,
                    back_at: Some(5.0),
                    peak: 4.0
                },
                Crossing {
                    above_at: 7.0,
                    back_at: Some(8.0),
                    peak: 1.2
                },
            ]
        );
        assert_eq!(r.catch_up, CaughtUp::After(5.0));
    }

    #[test]
    fn still_behind_never_behind_and_no_primary_end() {
        assert_eq!(
            judge("r".into(), lags(&[0.1, 3.0]), 1.0, Some(0.0)).catch_up,
            CaughtUp::NotYet
        );
        assert_eq!(
            judge("r".into(), lags(&[2.0, 0.1, 0.1]), 1.0, Some(1.5)).catch_up,
            CaughtUp::NeverBehind
        );
        assert_eq!(
            judge("r".into(), lags(&[0.1]), 1.0, None).catch_up,
            CaughtUp::Unknown
        );
        assert_eq!(judge("r".into(), lags(&[-1.0]), 1.0, None).max, None);
    }
}
