//! Heartbeats known by their GTIDs, so that a replica's applied position tells which it has
//! applied without reading the heartbeat table (docs/benchmarks.md, "Poll path": the table read
//! is the largest part of a replica's poll on the server, ~300 µs of ~500 µs when polled cold).
//!
//! On `MariaDB` the writer reads `@@last_gtid` with each heartbeat write, in the same round
//! trip, and each acknowledgement carries that GTID. Within a replication domain transactions
//! commit in `seq` order and a replica's `@@gtid_slave_pos` moves only once a transaction is
//! committed and visible (it is what `MASTER_GTID_WAIT` waits on for read-your-writes), so a
//! replica whose position in the writer's domain reaches a heartbeat's `seq` has applied that
//! heartbeat and every one before it. The status poll reads `gtid_slave_pos` anyway, so the
//! heartbeat reading comes free with it.
//!
//! The table read stays wherever the position cannot tell: `MySQL` (no `@@last_gtid`), a
//! primary with binary logging off, an observer of another rwtop's row (it sees no GTIDs),
//! pt-heartbeat, two roots writing in one domain, and a replica that has not yet applied the
//! first heartbeat of the writer's current run, whose row's age is still the only upper bound.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::gtid::{DomainGtid, GtidList};

/// Whether heartbeat `next` follows `prev` in one run: the same domain and server, a higher
/// `seq`. Within a run a replica that applied a heartbeat applied every earlier one; a new
/// primary (another `server_id`, perhaps reusing `seq`s its predecessor wrote and it lost) or
/// another domain starts a new run.
#[must_use]
pub fn continues(prev: &DomainGtid, next: &DomainGtid) -> bool {
    prev.domain == next.domain && prev.server_id == next.server_id && next.seq > prev.seq
}

/// How far a replica at `applied` has come in `run`'s domain, counted only while the last
/// transaction it applied there came from the run's server: `seq`s are the order within a
/// domain, but a promoted primary may reuse ones its predecessor wrote and it never got.
#[must_use]
pub fn reached(applied: &GtidList, run: &DomainGtid) -> Option<u64> {
    applied
        .get(run.domain)
        .filter(|last| last.server_id == run.server_id)
        .map(|last| last.seq)
}

/// The first heartbeat of each writer's current run, by writer index, shared by the writers
/// (which set them) and the pollers (which decide from them whether to read the table); and
/// each writer's newest heartbeat, with when its write was acknowledged (which tells a poller
/// that its replica lacks one it should have: [`Marks::lacks`]).
#[derive(Debug, Default)]
pub struct Marks {
    marks: Mutex<Vec<Option<DomainGtid>>>,
    newest: Mutex<Vec<Option<(DomainGtid, Instant)>>>,
}

impl Marks {
    #[must_use]
    pub fn new(writers: usize) -> Arc<Self> {
        Arc::new(Self {
            marks: Mutex::new(vec![None; writers]),
            newest: Mutex::new(vec![None; writers]),
        })
    }

    /// Writer `writer`'s heartbeat was acknowledged: its run's `mark` when that changed, and
    /// its GTID with the instant of the acknowledgement when it got one.
    pub fn acknowledged(
        &self,
        writer: usize,
        mark: Option<Option<DomainGtid>>,
        wrote: Option<(DomainGtid, Instant)>,
    ) {
        if let Some(mark) = mark {
            self.set(writer, mark);
        }
        if wrote.is_some() {
            let mut newest = self.newest.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(slot) = newest.get_mut(writer) {
                *slot = wrote;
            }
        }
    }

    /// Whether a channel that had received up to `received` (its `Gtid_IO_Pos`) when asked at
    /// `asked` lacked a heartbeat acknowledged before then: in a domain it receives, from the
    /// server it receives that domain from ([`reached`]), a `seq` it had not reached. A replica
    /// receives a heartbeat as its writer is acknowledged, so only a link that is not passing
    /// events on (or one of a few hundred microseconds in flight) lacks one.
    /// Asked on every status poll of every replica: one lock, no allocation.
    #[must_use]
    pub fn lacks(&self, received: &GtidList, asked: Instant) -> bool {
        let newest = self.newest.lock().unwrap_or_else(PoisonError::into_inner);
        newest.iter().flatten().any(|(gtid, at)| {
            *at < asked && reached(received, gtid).is_some_and(|seq| seq < gtid.seq)
        })
    }

    pub fn set(&self, writer: usize, mark: Option<DomainGtid>) {
        let mut marks = self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = marks.get_mut(writer) {
            *slot = mark;
        }
    }

    /// Whether a replica at `applied` (its `gtid_slave_pos`) can be read by position: every
    /// writer's heartbeats carry GTIDs, in domains of their own; the replica has applied at
    /// least one writer's mark; and in every writer's domain it has, it has [`reached`] the
    /// mark (a domain it lacks is a root it does not replicate from, or one it has applied
    /// nothing of, which the store bounds as it bounds a missing row).
    /// Asked on every status poll of every replica: one lock, no allocation.
    #[must_use]
    pub fn tell(&self, applied: &GtidList) -> bool {
        let marks = self.marks.lock().unwrap_or_else(PoisonError::into_inner);
        let mut passed = false;
        for (i, mark) in marks.iter().enumerate() {
            let Some(mark) = mark else {
                return false;
            };
            let shared = marks[..i].iter().flatten().any(|m| m.domain == mark.domain);
            if shared {
                return false;
            }
            if applied.get(mark.domain).is_none() {
                continue;
            }
            if reached(applied, mark).is_none_or(|seq| seq < mark.seq) {
                return false;
            }
            passed = true;
        }
        passed
    }
}

/// A writer's current run on one connection: it moves the writer's mark when a run starts or
/// ends.
#[derive(Debug)]
pub struct Run {
    last: Option<DomainGtid>,
    /// The session's `@@last_gtid` as last read: a write that was not binary-logged (a filter
    /// on the primary, `sql_log_bin=0`) leaves it where it was.
    answered: Option<DomainGtid>,
}

impl Run {
    /// A run on a session whose `@@last_gtid` reads `answer` before its first heartbeat (the
    /// GTID of its `CREATE ... IF NOT EXISTS`, say), which is no heartbeat's.
    #[must_use]
    pub fn after(answer: Option<DomainGtid>) -> Self {
        Self {
            last: None,
            answered: answer,
        }
    }

    /// Follows the `@@last_gtid` read with a heartbeat's write (`None`: none, or this writer only
    /// observes). Returns the heartbeat's GTID (`None` when the write got none, the answer being
    /// left from before) and the mark to publish when it changed.
    pub fn next(
        &mut self,
        answer: Option<DomainGtid>,
    ) -> (Option<DomainGtid>, Option<Option<DomainGtid>>) {
        let gtid = answer.filter(|_| answer != self.answered);
        self.answered = answer;
        let changed = match (&self.last, &gtid) {
            (Some(prev), Some(next)) => !continues(prev, next),
            (None, None) => false,
            _ => true,
        };
        self.last = gtid;
        (gtid, changed.then_some(gtid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gtid(text: &str) -> DomainGtid {
        DomainGtid::parse(text).unwrap()
    }

    fn list(text: &str) -> GtidList {
        GtidList::parse(text).unwrap()
    }

    #[test]
    fn a_channel_lacks_a_heartbeat_acknowledged_before_it_was_asked() {
        let marks = Marks::new(2);
        let t0 = Instant::now();
        let later = t0 + std::time::Duration::from_millis(1);
        assert!(!marks.lacks(&list("0-1-9"), later), "nothing written yet");
        marks.acknowledged(0, None, Some((gtid("0-1-10"), t0)));
        assert!(marks.lacks(&list("0-1-9"), later));
        assert!(!marks.lacks(&list("0-1-10"), later), "received");
        assert!(!marks.lacks(&list("0-1-12"), later), "and more since");
        assert!(
            !marks.lacks(&list("0-1-9"), t0),
            "asked before the ack: in flight"
        );
        // A domain it does not receive, or one it receives from another server: not this one's.
        assert!(!marks.lacks(&list("5-1-3"), later));
        assert!(!marks.lacks(&list("0-2-9"), later));
        // Any writer's heartbeat it lacks.
        marks.acknowledged(1, None, Some((gtid("7-3-4"), t0)));
        assert!(marks.lacks(&list("0-1-10,7-3-2"), later));
    }

    #[test]
    fn a_run_is_one_server_in_one_domain_moving_forward() {
        let g = |text| Some(gtid(text));
        let mut run = Run::after(g("0-1-9"));
        assert_eq!(run.next(None), (None, None), "no GTIDs, nothing to publish");
        assert_eq!(run.next(g("0-1-10")), (g("0-1-10"), Some(g("0-1-10"))));
        assert_eq!(run.next(g("0-1-14")), (g("0-1-14"), None), "same run");
        assert_eq!(
            run.next(g("0-2-12")),
            (g("0-2-12"), Some(g("0-2-12"))),
            "a new primary, reusing seqs, starts a run"
        );
        assert_eq!(run.next(g("1-2-13")), (g("1-2-13"), Some(g("1-2-13"))));
        assert_eq!(run.next(None), (None, Some(None)), "no GTID ends it");
        assert_eq!(run.next(g("1-2-20")), (g("1-2-20"), Some(g("1-2-20"))));
        assert_eq!(
            run.next(g("1-2-20")),
            (None, Some(None)),
            "the answer left from the write before: this write was not binary-logged"
        );
        assert_eq!(run.next(g("1-2-20")), (None, None));
        assert_eq!(run.next(g("1-2-25")), (g("1-2-25"), Some(g("1-2-25"))));
        let mut fresh = Run::after(g("0-1-9"));
        assert_eq!(
            fresh.next(g("0-1-9")),
            (None, None),
            "the session's DDL, not the heartbeat"
        );
    }

    #[test]
    fn a_position_tells_once_every_mark_it_replicates_is_applied() {
        let marks = Marks::new(2);
        assert!(!marks.tell(&list("0-1-100")), "no marks yet");
        marks.set(0, Some(gtid("0-1-50")));
        assert!(!marks.tell(&list("0-1-100")), "writer 1 has no GTIDs");
        marks.set(1, Some(gtid("7-9-5")));
        assert!(marks.tell(&list("0-1-100")), "replicates root 0 only");
        assert!(marks.tell(&list("0-1-50,7-9-6")), "both applied");
        assert!(!marks.tell(&list("0-1-49")), "root 0's mark not applied");
        assert!(
            !marks.tell(&list("0-1-100,7-9-4")),
            "root 1's mark not applied: its row's age is still the bound"
        );
        assert!(!marks.tell(&list("")), "applied nothing");
        assert!(
            !marks.tell(&list("3-1-900")),
            "none of the writers' domains"
        );
        assert!(
            !marks.tell(&list("0-4-100")),
            "root 0's domain, last written by another server"
        );
        marks.set(1, Some(gtid("0-2-70")));
        assert!(
            !marks.tell(&list("0-2-100")),
            "two roots in one domain: the position cannot tell them apart"
        );
        assert!(!Marks::new(0).tell(&list("0-1-1")), "no writers");
    }
}
