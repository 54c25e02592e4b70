//! Raise after N consecutive bad samples, clear after M consecutive clean ones, per (kind, node)
//! (M is 1 for a schema change, whose end is a fact: [`AlertSettings::clean_samples_to_clear`]).
//!
//! One poll can catch a replica mid-reconnect or a source sampled a moment before its replica;
//! an alert that fires on that trains the operator to ignore alerts. Only readings flicker: a
//! verdict [`Standing::Stated`] (a thread stopped on an error, a node refused or silent past its
//! poll interval) is raised on its first sample, a second poll later would only be late. A sample the rule cannot
//! judge (its inputs are missing) neither extends nor breaks a run: a node that stopped
//! answering has its own alert, and its last verdicts stay as they were.

use chrono::{DateTime, Utc};

use super::verdict::{Standing, Verdict};
use super::{Alert, AlertKind, AlertSettings};

/// What one sample did to an alert.
#[derive(Debug, PartialEq)]
pub enum Transition {
    Nothing,
    Raised,
    Cleared(Alert),
}

#[derive(Debug, Default)]
pub struct Tracker {
    /// Consecutive samples on which the condition held.
    bad: u32,
    /// Consecutive clean samples while raised.
    clean: u32,
    /// First sample of the current bad run: what `since` reports once raised.
    run_since: Option<DateTime<Utc>>,
    active: Option<Alert>,
}

impl Tracker {
    pub fn active(&self) -> Option<&Alert> {
        self.active.as_ref()
    }

    /// Nothing worth keeping: no run in progress and nothing raised.
    pub fn is_idle(&self) -> bool {
        self.bad == 0 && self.active.is_none()
    }

    /// Takes the raised alert away without waiting for clean samples (its node left the
    /// topology, so no sample will ever come).
    pub fn take(&mut self) -> Option<Alert> {
        std::mem::take(self).active
    }

    pub fn observe(
        &mut self,
        kind: AlertKind,
        (node, channel): (Option<&str>, Option<&str>),
        verdict: Verdict,
        at: DateTime<Utc>,
        settings: &AlertSettings,
    ) -> Transition {
        match verdict {
            Verdict::Unknown => Transition::Nothing,
            Verdict::Clean => {
                self.bad = 0;
                self.run_since = None;
                if self.active.is_none() {
                    return Transition::Nothing;
                }
                self.clean += 1;
                if self.clean < settings.clean_samples_to_clear(kind) {
                    return Transition::Nothing;
                }
                self.clean = 0;
                self.active
                    .take()
                    .map_or(Transition::Nothing, Transition::Cleared)
            }
            Verdict::Bad(finding) => {
                self.clean = 0;
                self.bad = self.bad.saturating_add(1);
                let since = *self.run_since.get_or_insert(at);
                if let Some(alert) = &mut self.active {
                    alert.last_seen = at;
                    alert.count += 1;
                    alert.evidence = finding.evidence;
                    alert.cause = finding.cause;
                    return Transition::Nothing;
                }
                let needed = match finding.standing {
                    Standing::Stated => 1,
                    Standing::Reading => settings.raise_after.max(1),
                };
                if self.bad < needed {
                    return Transition::Nothing;
                }
                self.active = Some(Alert {
                    kind,
                    node: node.map(str::to_owned),
                    channel: channel.map(str::to_owned),
                    severity: kind.severity(),
                    since,
                    last_seen: at,
                    count: u64::from(self.bad),
                    evidence: finding.evidence,
                    cause: finding.cause,
                    membership: super::Membership::default(),
                });
                Transition::Raised
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::verdict::Diagnosis;

    fn bad(cause: &str) -> Verdict {
        Verdict::Bad(Diagnosis {
            evidence: vec![("x".to_owned(), cause.to_owned())],
            cause: cause.to_owned(),
            standing: Standing::Reading,
        })
    }

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default()
    }

    #[test]
    fn raises_on_the_second_bad_sample_and_clears_on_the_third_clean() {
        let settings = AlertSettings::default();
        let mut t = Tracker::default();
        let kind = AlertKind::NodeDown;
        let mut step = |v, s| t.observe(kind, (Some("r1"), None), v, at(s), &settings);
        assert_eq!(step(bad("a"), 0), Transition::Nothing);
        assert_eq!(step(Verdict::Unknown, 1), Transition::Nothing);
        assert_eq!(step(bad("b"), 2), Transition::Raised);
        assert_eq!(step(bad("c"), 3), Transition::Nothing);
        assert_eq!(step(Verdict::Clean, 4), Transition::Nothing);
        assert_eq!(step(Verdict::Clean, 5), Transition::Nothing);
        // A bad sample while clearing keeps the same alert and restarts the clean count.
        assert_eq!(step(bad("d"), 6), Transition::Nothing);
        assert_eq!(step(Verdict::Clean, 7), Transition::Nothing);
        assert_eq!(step(Verdict::Clean, 8), Transition::Nothing);
        let Transition::Cleared(alert) = step(Verdict::Clean, 9) else {
            panic!("expected a clear");
        };
        assert_eq!(
            (alert.since, alert.last_seen, alert.count),
            (at(0), at(6), 4)
        );
        assert_eq!(alert.cause, "d");
        assert!(t.is_idle());
    }

    #[test]
    fn a_clean_sample_resets_the_raise_count() {
        let settings = AlertSettings::default();
        let mut t = Tracker::default();
        let kind = AlertKind::NodeDown;
        let mut step = |v, s| t.observe(kind, (None, None), v, at(s), &settings);
        assert_eq!(step(bad("a"), 0), Transition::Nothing);
        assert_eq!(step(Verdict::Clean, 1), Transition::Nothing);
        assert_eq!(step(bad("a"), 2), Transition::Nothing);
        assert_eq!(step(bad("a"), 3), Transition::Raised);
        assert_eq!(t.active().map(|a| a.since), Some(at(2)));
    }

    #[test]
    fn a_stated_verdict_raises_on_its_first_sample_and_clears_as_any() {
        let settings = AlertSettings::default();
        let mut t = Tracker::default();
        let kind = AlertKind::NodeDown;
        let stated = || Verdict::stated(vec![("conn".to_owned(), "down".to_owned())], "gone");
        let mut step = |v, s| t.observe(kind, (Some("r1"), None), v, at(s), &settings);
        assert_eq!(step(stated(), 0), Transition::Raised);
        assert_eq!(step(Verdict::Clean, 1), Transition::Nothing);
        assert_eq!(step(Verdict::Clean, 2), Transition::Nothing);
        assert!(matches!(step(Verdict::Clean, 3), Transition::Cleared(_)));
        // A reading of the same kind still waits for its run.
        assert_eq!(step(bad("a"), 4), Transition::Nothing);
        assert_eq!(step(stated(), 5), Transition::Raised);
    }
}
