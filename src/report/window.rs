//! Where a window opens and closes, from snapshots alone: a DDL seen running, or an online
//! schema change tool's run, opens one (from the moment the statement or the tool's first table
//! was made), and it closes once nothing has run and every replica has
//! stayed under the routing threshold for the quiet time. The operator's mark (`m`) opens one
//! that only another mark closes.

use std::time::Duration;

use super::ReportSettings;
use crate::poll::ConnState;
use crate::store::{NodeView, Snapshot};

/// What opened a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// A schema change was seen running; the window closes by itself.
    Ddl,
    /// The operator marked the start; the next mark closes it.
    Mark,
}

impl Opened {
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Ddl => "opened by a DDL",
            Self::Mark => "marked by hand",
        }
    }
}

/// A window's bounds, as store uptimes (the clock every snapshot and series point shares).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub from: Duration,
    pub to: Duration,
    pub by: Opened,
    /// The window was still open when its snapshots ended (a recording that stops mid-DDL).
    pub cut_short: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Opened { by: Opened, from: Duration },
    Closed(Bounds),
}

#[derive(Debug, Clone, Copy)]
struct Open {
    by: Opened,
    from: Duration,
    /// Since when everything has been calm, while it is.
    calm_since: Option<Duration>,
}

/// Opens and closes windows as snapshots arrive, in uptime order.
#[derive(Debug, Clone)]
pub struct Detector {
    settings: ReportSettings,
    open: Option<Open>,
    last: Option<Duration>,
}

impl Detector {
    #[must_use]
    pub fn new(settings: ReportSettings) -> Self {
        Self {
            settings,
            open: None,
            last: None,
        }
    }

    #[must_use]
    pub fn is_open(&self) -> Option<Opened> {
        self.open.map(|o| o.by)
    }

    /// Judges one snapshot; a snapshot seen before (the live view draws the same one several
    /// times) changes nothing.
    pub fn observe(&mut self, snapshot: &Snapshot) -> Option<Change> {
        if self.last.is_some_and(|last| snapshot.uptime <= last) {
            return None;
        }
        self.last = Some(snapshot.uptime);
        let Some(open) = &mut self.open else {
            let from = ddl_started(snapshot)?;
            self.open = Some(Open {
                by: Opened::Ddl,
                from,
                calm_since: None,
            });
            return Some(Change::Opened {
                by: Opened::Ddl,
                from,
            });
        };
        if open.by == Opened::Mark {
            return None;
        }
        if !calm(snapshot, self.settings.threshold) {
            open.calm_since = None;
            return None;
        }
        let since = *open.calm_since.get_or_insert(snapshot.uptime);
        if snapshot.uptime.saturating_sub(since) < self.settings.quiet {
            return None;
        }
        let bounds = Bounds {
            from: open.from,
            to: snapshot.uptime,
            by: open.by,
            cut_short: false,
        };
        self.open = None;
        Some(Change::Closed(bounds))
    }

    /// The operator's mark: closes the open window (whatever opened it), or opens one now.
    pub fn mark(&mut self, snapshot: &Snapshot) -> Change {
        if let Some(open) = self.open.take() {
            return Change::Closed(Bounds {
                from: open.from,
                to: snapshot.uptime.max(open.from),
                by: open.by,
                cut_short: false,
            });
        }
        self.open = Some(Open {
            by: Opened::Mark,
            from: snapshot.uptime,
            calm_since: None,
        });
        Change::Opened {
            by: Opened::Mark,
            from: snapshot.uptime,
        }
    }

    /// Closes a window still open when the snapshots end (`last`: the final one's uptime).
    pub fn finish(&mut self, last: Duration) -> Option<Bounds> {
        let open = self.open.take()?;
        Some(Bounds {
            from: open.from,
            to: last.max(open.from),
            by: open.by,
            cut_short: true,
        })
    }
}

/// When the oldest DDL or online schema change run in `snapshot` started (uptime), if one runs
/// anywhere (a run of unknown age from now).
fn ddl_started(snapshot: &Snapshot) -> Option<Duration> {
    let statements = snapshot
        .nodes
        .iter()
        .flat_map(NodeView::ddl)
        .map(|d| d.elapsed_s);
    let runs = snapshot
        .nodes
        .iter()
        .flat_map(NodeView::osc)
        .map(|r| r.elapsed_s.unwrap_or(0));
    statements
        .chain(runs)
        .map(|s| snapshot.uptime.saturating_sub(Duration::from_secs(s)))
        .min()
}

/// No DDL runs anywhere, and every channel of every answering replica reads a lag at or under
/// `threshold`. A replica that does not answer cannot catch up and does not hold a window open.
fn calm(snapshot: &Snapshot, threshold: Duration) -> bool {
    snapshot
        .nodes
        .iter()
        .all(|n| n.ddl().is_empty() && n.osc().is_empty())
        && snapshot
            .nodes
            .iter()
            .filter(|n| n.conn == ConnState::Up)
            .flat_map(|n| &n.channels)
            .all(|c| c.heartbeat_lag.value().is_some_and(|lag| lag <= threshold))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::store::lag::Lag;
    use crate::store::testkit::scan;
    use crate::store::testkit::{Topo, ddl};

    pub fn settings() -> ReportSettings {
        ReportSettings {
            threshold: Duration::from_secs(1),
            quiet: Duration::from_secs(10),
            lead_in: Duration::ZERO,
        }
    }

    /// Sample `step` of the test topology with r1 (and r2) at `lag` seconds, and an ALTER
    /// `ddl_s` seconds old running on db1 when given.
    pub fn snap(step: u64, lag: f64, ddl_s: Option<u64>) -> Snapshot {
        let mut topo = Topo::new();
        for r in ["r1", "r2"] {
            topo.replica_mut(r, |c| {
                c.heartbeat_lag = Lag::Exact {
                    lag: Duration::from_secs_f64(lag),
                };
            });
        }
        if let Some(elapsed) = ddl_s {
            topo.node_mut("db1", |n| {
                *scan(n) = vec![ddl("ALTER TABLE t ADD COLUMN c INT", elapsed, false)];
            });
        }
        topo.at(step)
    }

    fn up(step: u64) -> Duration {
        snap(step, 0.0, None).uptime
    }

    #[test]
    fn a_ddl_opens_a_window_that_closes_after_the_quiet_time() {
        let mut detector = Detector::new(settings());
        assert_eq!(detector.observe(&snap(1, 0.1, None)), None);
        // The ALTER was 3 s old when first seen at step 10: the window starts at step 7.
        let change = detector.observe(&snap(10, 0.1, Some(3)));
        assert_eq!(
            change,
            Some(Change::Opened {
                by: Opened::Ddl,
                from: up(7)
            })
        );
        // Done on the primary, the replicas now behind: not calm.
        assert_eq!(detector.observe(&snap(20, 5.0, None)), None);
        // Calm from step 30: not closed at 39, closed at 40.
        assert_eq!(detector.observe(&snap(30, 0.2, None)), None);
        assert_eq!(detector.observe(&snap(39, 0.2, None)), None);
        let Some(Change::Closed(bounds)) = detector.observe(&snap(40, 0.2, None)) else {
            panic!("not closed");
        };
        assert_eq!(
            (bounds.from, bounds.to, bounds.by),
            (up(7), up(40), Opened::Ddl)
        );
        assert!(detector.is_open().is_none());
    }

    #[test]
    fn lag_back_above_the_threshold_restarts_the_quiet_time() {
        let mut detector = Detector::new(settings());
        detector.observe(&snap(1, 0.1, Some(0)));
        detector.observe(&snap(2, 0.1, None));
        detector.observe(&snap(8, 1.5, None));
        assert_eq!(
            detector.observe(&snap(12, 0.1, None)),
            None,
            "calm only since 12"
        );
        assert_eq!(detector.observe(&snap(21, 0.1, None)), None);
        assert!(matches!(
            detector.observe(&snap(22, 0.1, None)),
            Some(Change::Closed(_))
        ));
    }

    #[test]
    fn a_marked_window_closes_only_on_the_next_mark() {
        let mut detector = Detector::new(settings());
        assert_eq!(
            detector.mark(&snap(5, 0.1, None)),
            Change::Opened {
                by: Opened::Mark,
                from: up(5)
            }
        );
        assert_eq!(detector.observe(&snap(100, 0.1, None)), None);
        let Change::Closed(bounds) = detector.mark(&snap(101, 0.1, None)) else {
            panic!("not closed");
        };
        assert_eq!((bounds.from, bounds.to), (up(5), up(101)));
        assert_eq!(detector.finish(up(200)), None);
    }

    #[test]
    fn a_window_open_at_the_end_is_closed_as_cut_short() {
        let mut detector = Detector::new(settings());
        detector.observe(&snap(1, 0.1, Some(0)));
        detector.observe(&snap(2, 4.0, None));
        let bounds = detector.finish(up(2)).unwrap();
        assert!(bounds.cut_short);
        assert_eq!((bounds.from, bounds.to), (up(1), up(2)));
    }
}
