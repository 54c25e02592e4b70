//! How long a schema change waited for a lock, from the scans that saw it: what a DDL window's
//! hand-over and a replica's catch-up estimate both need to tell waiting from working.

use super::processlist::DdlStatement;

/// The seconds a statement spent waiting for a lock, as far as its scans tell: each scan that
/// shows it waiting adds the statement's time since the scan before it (since its start, for the
/// first scan). A wait is so counted from at most one scan before it began, and its end at most
/// one scan late; while a DDL runs the scan comes every poll (`poll/cadence.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DdlWait {
    /// The statement's run time at the newest scan seen (0 before the first).
    last_elapsed: u64,
    pub waited_s: u64,
    /// The newest lock it was seen waiting for.
    pub lock: Option<String>,
}

impl DdlWait {
    /// Takes one scan's sight of the statement; a repeat of the same scan adds nothing.
    pub fn observe(&mut self, ddl: &DdlStatement) {
        let since = ddl.elapsed_s.saturating_sub(self.last_elapsed);
        if let Some(lock) = &ddl.waiting_for {
            self.waited_s += since;
            self.lock = Some(lock.clone());
        }
        self.last_elapsed = self.last_elapsed.max(ddl.elapsed_s);
    }

    /// The seconds waited and the lock, when the scans saw a wait that lasted.
    #[must_use]
    pub fn waited(&self) -> Option<(u64, &str)> {
        let lock = self.lock.as_deref()?;
        (self.waited_s > 0).then_some((self.waited_s, lock))
    }

    /// Of `elapsed` seconds, those not spent waiting.
    #[must_use]
    pub fn worked(&self, elapsed: u64) -> u64 {
        elapsed.saturating_sub(self.waited_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(elapsed_s: u64, lock: Option<&str>) -> DdlStatement {
        DdlStatement {
            id: 5,
            statement: "ALTER TABLE t FORCE".to_owned(),
            elapsed_s,
            progress: None,
            applier: false,
            waiting_for: lock.map(str::to_owned),
            blockers: None,
        }
    }

    #[test]
    fn waits_count_between_scans_and_repeats_add_nothing() {
        let mdl = Some("table metadata lock");
        // Waiting from the start (first seen at 3 s), then working from 7 s on.
        let mut wait = DdlWait::default();
        for (elapsed, lock) in [(3, mdl), (3, mdl), (4, mdl), (6, mdl), (7, None), (9, None)] {
            wait.observe(&seen(elapsed, lock));
        }
        assert_eq!(wait.waited_s, 6);
        assert_eq!(wait.waited(), Some((6, "table metadata lock")));
        assert_eq!(wait.worked(9), 3);
        // Working, then waiting at the end (a copy's last step), seen at 10 and 12 s.
        let mut wait = DdlWait::default();
        for (elapsed, lock) in [
            (2, None),
            (8, None),
            (10, Some("backup lock")),
            (12, Some("backup lock")),
        ] {
            wait.observe(&seen(elapsed, lock));
        }
        assert_eq!((wait.waited_s, wait.worked(12)), (4, 8));
        // Never waiting.
        let mut wait = DdlWait::default();
        wait.observe(&seen(30, None));
        assert_eq!(
            (wait.waited_s, wait.lock.as_deref(), wait.worked(30)),
            (0, None, 30)
        );
    }
}
