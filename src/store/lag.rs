//! Heartbeat lag from acknowledged sequence numbers (`docs/design.md`, "Lag from the heartbeat").
//!
//! A replica that shows heartbeat N and lacks N+1 stopped applying somewhere between the
//! acknowledgements of N and N+1; it lacks nothing when N+1 was not acknowledged yet (lag 0).
//! When it lacks only N+1, the newest, it is in flight and behind by `now − ack(N+1)`; when it
//! lacks more, by `now −` the middle of `ack(N)..ack(N+1)`, which is off by at most half a
//! heartbeat interval either way (`ack(N+1)` alone reads up to a whole interval low). Both
//! instants are this process's monotonic clock, so no clock agreement between servers is needed.
//! The store carries a stalled channel's reading forward to the instant it publishes
//! (`store/node.rs`), so a reading is not also a read interval old. What this process cannot know it says: a replica
//! still missing heartbeats older than this process's history is only bounded from below, and a
//! writer that stopped advancing makes "caught up" unknowable.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::gtid::{DomainGtid, GtidList};
use crate::poll::beat_gtid::{continues, reached};
use crate::units;

/// A lag figure and how much it can be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Lag {
    Exact {
        lag: Duration,
    },
    /// The replica has not applied this process's first heartbeat: at least `lag` behind, and at
    /// most `upper` (the age of the row it shows, offset-corrected) when that can be told.
    AtLeast {
        lag: Duration,
        upper: Option<Duration>,
    },
    Unknown {
        reason: String,
    },
}

impl Lag {
    /// The number to plot or compare: exact or the lower bound.
    #[must_use]
    pub fn value(&self) -> Option<Duration> {
        match self {
            Self::Exact { lag } | Self::AtLeast { lag, .. } => Some(*lag),
            Self::Unknown { .. } => None,
        }
    }

    /// The lag when it is exact: a bound moves with the clock, not with the replica, so no
    /// trend is read from one.
    #[must_use]
    pub fn exact(&self) -> Option<Duration> {
        match self {
            Self::Exact { lag } => Some(*lag),
            _ => None,
        }
    }

    /// The figure as every output prints it: `0.12s`, or `≥3.20s` for a lower bound. `None` when
    /// it is unknown, which each place words in the room it has: `?` in a table, the reason in
    /// an alert.
    #[must_use]
    pub fn text(&self) -> Option<String> {
        match self {
            Self::Exact { lag } => Some(units::lag(*lag)),
            Self::AtLeast { lag, .. } => Some(format!("≥{}", units::lag(*lag))),
            Self::Unknown { .. } => None,
        }
    }
}

/// Acknowledged heartbeats, oldest first, bounded to the configured history.
#[derive(Debug)]
pub struct Acks {
    ring: VecDeque<Acked>,
    capacity: usize,
    /// The newest heartbeats whose GTIDs follow each other (`poll/beat_gtid.rs`), when the
    /// newest has one.
    run: Option<GtidRun>,
}

/// One acknowledged heartbeat: 32 bytes, since an hour of them is kept per writer.
#[derive(Debug, Clone, Copy)]
struct Acked {
    seq: u64,
    at: Instant,
    /// The `seq` of its GTID, in the run's domain; 0 (which `MariaDB` never writes): none.
    gtid_seq: u64,
}

#[derive(Debug, Clone, Copy)]
struct GtidRun {
    /// The heartbeat (its `seq`) that started the run.
    first: u64,
    last: DomainGtid,
}

impl Acks {
    /// The whole history is allocated and written at once (an hour at 250 ms: 14,400 acks,
    /// 450 KiB per writer), so that memory does not creep for the hour it takes to fill, nor
    /// step as a growing ring doubles (a heap profile of the demo's soak found it growing:
    /// commit `32d364d`, docs/benchmarks.md's history).
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(2);
        let blank = Acked {
            seq: 0,
            at: Instant::now(),
            gtid_seq: 0,
        };
        let mut ring = VecDeque::from(vec![blank; capacity]);
        ring.clear();
        Self {
            ring,
            capacity,
            run: None,
        }
    }

    /// Records an acknowledgement and the GTID its write got, when known. Sequence numbers
    /// only grow; a repeated or older one (an observer re-reading the row) is ignored.
    pub fn push(&mut self, seq: u64, at: Instant, gtid: Option<DomainGtid>) {
        if self.ring.back().is_some_and(|last| last.seq >= seq) {
            return;
        }
        if self.ring.len() == self.capacity {
            self.ring.pop_front();
        }
        self.run = match (self.run, gtid) {
            (Some(run), Some(next)) if continues(&run.last, &next) => {
                Some(GtidRun { last: next, ..run })
            }
            (_, Some(next)) => Some(GtidRun {
                first: seq,
                last: next,
            }),
            (_, None) => None,
        };
        let gtid_seq = gtid.map_or(0, |g| g.seq);
        self.ring.push_back(Acked { seq, at, gtid_seq });
    }

    /// The newest heartbeat acknowledged at or before `t`; `None` when none was.
    #[must_use]
    pub fn newest_by(&self, t: Instant) -> Option<u64> {
        let after = self.ring.partition_point(|b| b.at <= t);
        after.checked_sub(1).map(|i| self.ring[i].seq)
    }

    #[must_use]
    pub fn latest(&self) -> Option<(u64, Instant)> {
        self.ring.back().map(|b| (b.seq, b.at))
    }

    /// The GTID domain of the current run's heartbeats, when they carry GTIDs.
    #[must_use]
    pub fn run_domain(&self) -> Option<u32> {
        self.run.map(|r| r.last.domain)
    }

    fn ack_of(&self, seq: u64) -> Option<Instant> {
        self.ring
            .binary_search_by_key(&seq, |b| b.seq)
            .ok()
            .map(|i| self.ring[i].at)
    }

    /// Lag of a replica whose applied position (`gtid_slave_pos`), read at `at`, tells which
    /// heartbeats of the current run it has applied: the newest of them is the one it shows.
    /// One that has applied none of the run is behind at least since the run's first; that is
    /// all a position can say (the poller reads the row, whose age bounds it from above, until
    /// a replica has applied the run's first heartbeat).
    #[must_use]
    pub fn lag_applied(&self, applied: &GtidList, at: Instant, stale: bool) -> Lag {
        let Some(run) = self.run else {
            return Lag::Unknown {
                reason: "the newest heartbeat's GTID is not known, so the replica's position \
                         cannot tell whether it applied it"
                    .to_owned(),
            };
        };
        let start = self.ring.partition_point(|b| b.seq < run.first);
        let reached = reached(applied, &run.last);
        // Before the run counts as applied; within it, a prefix is (it commits in order).
        let shown = self
            .ring
            .partition_point(|b| b.seq < run.first || reached.is_some_and(|s| s >= b.gtid_seq));
        match shown.checked_sub(1).filter(|&i| i >= start) {
            Some(i) => self.lag(Some(self.ring[i].seq), at, stale, None),
            None => Lag::AtLeast {
                lag: at.saturating_duration_since(self.ring[start.min(self.ring.len() - 1)].at),
                upper: None,
            },
        }
    }

    /// When the oldest work a replica showing heartbeat `n` lacks was committed, given that
    /// `n + 1` was acknowledged at `next`. A replica that lacks two or more acknowledged
    /// heartbeats stopped applying somewhere between `n` and `n + 1`: the middle of that
    /// interval is off by at most half an interval either way, where `next` alone reads up to a
    /// whole interval low. A replica that lacks only the newest heartbeat is in flight, a few
    /// milliseconds behind, and `next` is the better estimate.
    fn missing_since(&self, n: u64, next: Instant, latest: u64) -> Instant {
        match self.ack_of(n) {
            Some(prev) if latest >= n + 2 && prev < next => prev + (next - prev) / 2,
            _ => next,
        }
    }

    /// Lag of a replica that showed heartbeat `shown` (None: no row yet) in a read sent at `at`.
    /// `stale` is set when the writer has stopped advancing; `upper` is the shown row's age, used
    /// when only a lower bound is known.
    #[must_use]
    pub fn lag(
        &self,
        shown: Option<u64>,
        at: Instant,
        stale: bool,
        upper: Option<Duration>,
    ) -> Lag {
        let Some(&Acked {
            seq: first_seq,
            at: first_at,
            ..
        }) = self.ring.front()
        else {
            return Lag::Unknown {
                reason: "no heartbeat written yet".to_owned(),
            };
        };
        let latest = self.ring.back().map_or(0, |b| b.seq);
        let since = |t: Instant| at.saturating_duration_since(t);
        let bounded = |lag: Duration| Lag::AtLeast {
            lag,
            upper: upper.map(|u| u.max(lag)),
        };
        match shown {
            None => bounded(since(first_at)),
            Some(n) if n >= latest && stale => Lag::Unknown {
                reason: "the heartbeat is not advancing on the primary".to_owned(),
            },
            Some(n) if n >= latest => Lag::Exact {
                lag: Duration::ZERO,
            },
            Some(n) if n + 1 < first_seq => bounded(since(first_at)),
            Some(n) => match self.ack_of(n + 1) {
                Some(t) => Lag::Exact {
                    lag: since(self.missing_since(n, t, latest)),
                },
                // A gap in the history (acks dropped): bound by the next one we have.
                None => self.ring.iter().find(|b| b.seq > n).map_or(
                    Lag::Exact {
                        lag: Duration::ZERO,
                    },
                    |b| bounded(since(b.at)),
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_time_since_the_first_unapplied_heartbeat() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut acks = Acks::with_capacity(100);
        assert!(matches!(
            acks.lag(Some(5), t0, false, None),
            Lag::Unknown { .. }
        ));
        for seq in 10..=20 {
            acks.push(seq, t0 + ms(250 * (seq - 10)), None);
        }
        let now = t0 + ms(3000);
        // Caught up: shows the latest.
        assert_eq!(
            acks.lag(Some(20), now, false, None),
            Lag::Exact {
                lag: Duration::ZERO
            }
        );
        // Shows 14 and lacks 15 (acked at 1250 ms) and more: it stopped between 14 (1000 ms)
        // and 15, so the middle of that interval, 1125 ms.
        assert_eq!(
            acks.lag(Some(14), now, false, None),
            Lag::Exact { lag: ms(1875) }
        );
        // Lacks only the newest (20, acked at 2500 ms): in flight, measured from that ack.
        assert_eq!(
            acks.lag(Some(19), now, false, None),
            Lag::Exact { lag: ms(500) }
        );
        // Older than our history, or no row at all: only a lower bound.
        assert_eq!(
            acks.lag(Some(3), now, false, None),
            Lag::AtLeast {
                lag: ms(3000),
                upper: None
            }
        );
        assert_eq!(
            acks.lag(None, now, false, None),
            Lag::AtLeast {
                lag: ms(3000),
                upper: None
            }
        );
        // The row's age bounds it from above, never below the lower bound.
        let bounded = |upper| Lag::AtLeast {
            lag: ms(3000),
            upper: Some(upper),
        };
        assert_eq!(
            acks.lag(Some(3), now, false, Some(ms(9000))),
            bounded(ms(9000))
        );
        assert_eq!(
            acks.lag(Some(3), now, false, Some(ms(100))),
            bounded(ms(3000))
        );
        // N+1 == first: exact.
        assert_eq!(
            acks.lag(Some(9), now, false, None),
            Lag::Exact { lag: ms(3000) }
        );
        // Writer stalled: "caught up" is unknowable, real lag still exact.
        assert!(matches!(
            acks.lag(Some(20), now, true, None),
            Lag::Unknown { .. }
        ));
        assert_eq!(
            acks.lag(Some(14), now, true, None),
            Lag::Exact { lag: ms(1875) }
        );
        // A read sent before the ack cannot be behind it.
        assert_eq!(
            acks.lag(Some(19), t0, false, None),
            Lag::Exact {
                lag: Duration::ZERO
            }
        );
    }

    #[test]
    fn a_position_shows_the_newest_heartbeat_of_the_run_it_reached() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let gtid = |text: &str| Some(DomainGtid::parse(text).unwrap());
        let pos = |text: &str| GtidList::parse(text).unwrap();
        let mut acks = Acks::with_capacity(100);
        let now = t0 + ms(3000);
        assert!(matches!(
            acks.lag_applied(&pos("0-1-5"), now, false),
            Lag::Unknown { .. }
        ));
        // Heartbeats 1..=3 had no GTID (an observer), 4..=9 are writes 0-1-108 ..= 0-1-118,
        // with other transactions of the domain between them.
        for seq in 1..=3 {
            acks.push(seq, t0 + ms(250 * seq), None);
        }
        for seq in 4..=9 {
            acks.push(
                seq,
                t0 + ms(250 * seq),
                gtid(&format!("0-1-{}", 100 + 2 * seq)),
            );
        }
        let lag = |acks: &Acks, text: &str| acks.lag_applied(&pos(text), now, false);
        // Caught up, or past the newest: shows 9.
        assert_eq!(lag(&acks, "0-1-118"), Lag::Exact { lag: ms(0) });
        assert_eq!(lag(&acks, "0-1-130,5-5-5"), Lag::Exact { lag: ms(0) });
        // Between 0-1-110 (heartbeat 5) and 0-1-112: shows 5, lacks 6.. (the table read's
        // answer for seq 5).
        assert_eq!(lag(&acks, "0-1-111"), acks.lag(Some(5), now, false, None));
        assert_eq!(lag(&acks, "0-1-110"), acks.lag(Some(5), now, false, None));
        assert_ne!(lag(&acks, "0-1-110"), lag(&acks, "0-1-112"));
        // Has not reached the run's first (heartbeat 4, acked at 1 s): at least 2 s behind.
        let before = Lag::AtLeast {
            lag: ms(2000),
            upper: None,
        };
        assert_eq!(lag(&acks, "0-1-107"), before);
        assert_eq!(lag(&acks, "3-1-900"), before, "the domain is absent");
        // A new primary in the domain (other server_id, reused seqs) starts a run at 10.
        acks.push(10, t0 + ms(2500), gtid("0-2-112"));
        assert_eq!(lag(&acks, "0-2-112"), Lag::Exact { lag: ms(0) });
        assert_eq!(
            lag(&acks, "0-1-118"),
            Lag::AtLeast {
                lag: ms(500),
                upper: None
            },
            "the old primary's position, not yet at the new run's first"
        );
        // A heartbeat without a GTID ends the run: the position cannot tell any more.
        acks.push(11, t0 + ms(2750), None);
        assert!(matches!(lag(&acks, "0-2-200"), Lag::Unknown { .. }));
    }

    #[test]
    fn text_marks_a_lower_bound_and_leaves_unknown_to_the_reader() {
        let ms = Duration::from_millis;
        let exact = Lag::Exact { lag: ms(120) };
        let bound = Lag::AtLeast {
            lag: ms(3_200),
            upper: Some(ms(9_000)),
        };
        let unknown = Lag::Unknown {
            reason: "no heartbeat written yet".to_owned(),
        };
        assert_eq!(exact.text().as_deref(), Some("0.12s"));
        assert_eq!(bound.text().as_deref(), Some("≥3.20s"));
        assert_eq!(unknown.text(), None);
    }

    #[test]
    fn history_is_bounded_and_monotonic() {
        let t0 = Instant::now();
        let mut acks = Acks::with_capacity(3);
        for seq in [1, 2, 2, 1, 3, 4] {
            acks.push(seq, t0, None);
        }
        assert_eq!(
            acks.ring.iter().map(|b| b.seq).collect::<Vec<_>>(),
            vec![2, 3, 4]
        );
    }

    #[test]
    fn filling_the_history_never_grows_it() {
        let t0 = Instant::now();
        let mut acks = Acks::with_capacity(14_400);
        let allocated = acks.ring.capacity();
        for seq in 1..=14_410 {
            acks.push(seq, t0, None);
            assert_eq!(acks.ring.capacity(), allocated, "grew at ack {seq}");
        }
        assert_eq!(acks.ring.len(), 14_400);
        assert_eq!(acks.ring.front().map(|b| b.seq), Some(11));
    }
}
