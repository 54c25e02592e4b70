//! A channel's lag split into its two parts (`docs/design.md`, "Transport and apply"):
//! **transport**, how old the newest heartbeat the replica has *received* is (it is in its relay
//! log), and **apply**, how much further behind the replica's *applied* position is than that.
//! The two add up to the channel's heartbeat lag.
//!
//! Both ages are measured the same way, by position against the heartbeats' GTIDs
//! ([`super::lag::Acks::lag_applied`]): `MariaDB`'s `Gtid_IO_Pos` (per channel, in `SHOW ALL SLAVES STATUS`)
//! is the last GTID received in each domain, as `gtid_slave_pos` is the last applied, so the
//! newest heartbeat it covers in the root's domain is the newest received. Transport is that
//! heartbeat's lag, never more than the whole; apply is the rest.
//!
//! `MySQL`'s heartbeats carry no GTID a received position could be held against; from 8.0 a
//! replica tells instead when the newest transaction in its relay log was committed on its
//! source (`mysql/queued.rs`). On the root's clock, that commit time is after every heartbeat
//! the replica has received and before the first it has not: the newest heartbeat acknowledged
//! by then (with a quarter heartbeat interval for the acknowledgement's trip and the clock
//! estimate) is the newest received, and its lag is measured as a heartbeat row's is.
//!
//! What cannot be known is said, never guessed: `MySQL` before 8.0 or a refused read, a root
//! whose clock is not estimated yet, a channel that does not replicate by GTID (`MariaDB`), a
//! channel fed by more than one root on `MySQL`, two roots writing heartbeats in one domain, and
//! a whole lag that is itself unknown.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::lag::Lag;
use super::roots::Beat;
use crate::mysql::{ReplicaGtid, ReplicaStatus};

/// A channel's lag in its two parts; each is a [`Lag`] of its own (exact, a bound, or unknown
/// with the reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LagSplit {
    /// How old the newest received heartbeat is: the time the link has yet to bring.
    pub transport: Lag,
    /// How much older the newest applied heartbeat is than the newest received: what waits in
    /// the relay log.
    pub apply: Lag,
}

impl Default for LagSplit {
    fn default() -> Self {
        Self::unknown("not in this recording")
    }
}

impl LagSplit {
    #[must_use]
    pub fn unknown(reason: &str) -> Self {
        Self {
            transport: Lag::Unknown {
                reason: reason.to_owned(),
            },
            apply: Lag::Unknown {
                reason: reason.to_owned(),
            },
        }
    }

    /// The split of `total` (the channel's heartbeat lag) given `received`, the lag of the
    /// newest heartbeat it has received. Transport never exceeds the whole (both are read a
    /// moment apart), and apply is the rest, so the two always add up to `total`.
    #[must_use]
    pub fn of(total: &Lag, received: &Lag) -> Self {
        let bounded = |lag| Lag::AtLeast { lag, upper: None };
        match (total, received) {
            (Lag::Unknown { reason }, _) => Self::unknown(reason),
            (_, Lag::Unknown { reason }) => Self {
                transport: received.clone(),
                apply: Lag::Unknown {
                    reason: format!("what arrived is not known: {reason}"),
                },
            },
            (Lag::Exact { lag: t }, Lag::Exact { lag: r }) => {
                let transport = (*r).min(*t);
                Self {
                    transport: Lag::Exact { lag: transport },
                    apply: Lag::Exact {
                        lag: t.saturating_sub(transport),
                    },
                }
            }
            // Applied less than the run's first heartbeat: at least the rest behind.
            (Lag::AtLeast { lag: t, .. }, Lag::Exact { lag: r }) => Self {
                transport: Lag::Exact { lag: *r },
                apply: bounded(t.saturating_sub(*r)),
            },
            // Not yet received the run's first heartbeat: only a bound, and then nothing can be
            // told of what waits.
            (_, Lag::AtLeast { lag: r, .. }) => Self {
                transport: bounded((*r).min(total.value().unwrap_or(*r))),
                apply: Lag::Unknown {
                    reason: "the replica has not yet received the first heartbeat rwtop can \
                             place, so only a bound is known of what arrived"
                        .to_owned(),
                },
            },
        }
    }
}

/// Which part holds the lag, in words, once it is worth a word (a second or more, both parts
/// exact): the diagnosis the alerts and the detail pane give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Almost all of it is transport: nothing waits in the relay log.
    Transport,
    /// Almost all of it was received and waits to be applied.
    Apply,
    /// Both parts are sizeable.
    Both,
}

impl Holder {
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Self::Transport => "all of it is transport: nothing waits in the relay log",
            Self::Apply => "received: it waits in the relay log, the applier is behind",
            Self::Both => "part not yet received, part waiting in the relay log",
        }
    }
}

/// Below this the split is not worth a word: the heartbeat's own resolution is a fraction of it.
pub const WORTH_A_WORD: Duration = Duration::from_secs(1);

impl LagSplit {
    /// Which part holds the lag, when both are exact and the whole is a second or more: a part
    /// of at most a tenth of the whole (and half a second) counts as none.
    #[must_use]
    pub fn holder(&self) -> Option<Holder> {
        let (transport, apply) = (self.transport.exact()?, self.apply.exact()?);
        let total = transport + apply;
        if total < WORTH_A_WORD {
            return None;
        }
        let small = |part: Duration| part <= (total / 10).max(Duration::from_millis(500));
        Some(match (small(transport), small(apply)) {
            (_, true) => Holder::Transport,
            (true, false) => Holder::Apply,
            (false, false) => Holder::Both,
        })
    }
}

/// The lag of the newest heartbeat a channel with `status` has received, behind the roots
/// `writers` (by index into `beats`) upstream of it, read by a status poll sent at `at`;
/// `stale(beat)` tells whether a root's writer had stopped advancing by then, and
/// `received_by(beat, commit_us)` the instant by which a heartbeat acknowledged was committed
/// before a transaction committed at `commit_us` on the root's clock (`None`: the root's clock
/// is not estimated yet).
pub fn received(
    status: &ReplicaStatus,
    writers: &[usize],
    beats: &[Beat],
    at: Instant,
    stale: impl Fn(&Beat) -> bool,
    received_by: impl Fn(&Beat, i64) -> Option<Instant>,
) -> Lag {
    let unknown = |reason: &str| Lag::Unknown {
        reason: reason.to_owned(),
    };
    let io_pos = match &status.gtid {
        ReplicaGtid::Mysql { .. } => {
            let Some(commit_us) = status.queued_commit_us else {
                return unknown(
                    "this MySQL replica does not tell when its newest received transaction was \
                     committed (MySQL 8.0 keeps it in performance_schema's \
                     replication_connection_status: grant SELECT on performance_schema.*), and \
                     rwtop's heartbeats on MySQL carry no GTID a received position could be \
                     held against",
                );
            };
            let [writer] = writers else {
                return unknown(
                    "a MySQL channel fed by more than one root: the newest transaction it \
                     received tells one root's time, not which",
                );
            };
            let Some(beat) = beats.get(*writer) else {
                return unknown("no heartbeat writer for this root");
            };
            let Some(by) = received_by(beat, commit_us) else {
                return unknown(
                    "the root's clock is not estimated yet: its commit times cannot be held \
                     against the heartbeats",
                );
            };
            return beat
                .acks
                .lag(beat.acks.newest_by(by), at, stale(beat), None);
        }
        ReplicaGtid::Mariadb { using_gtid, .. } if using_gtid.eq_ignore_ascii_case("no") => {
            return unknown(
                "the channel does not replicate by GTID (Using_Gtid: No), so its received \
                 position is not kept",
            );
        }
        ReplicaGtid::Mariadb { io_pos, .. } => io_pos,
    };
    let domains: Vec<Option<u32>> = beats.iter().map(|b| b.acks.run_domain()).collect();
    let lags = writers.iter().map(|&w| {
        let Some(beat) = beats.get(w) else {
            return unknown("no heartbeat writer for this root");
        };
        let mine = domains.get(w).copied().flatten();
        let shared = mine.is_some()
            && domains
                .iter()
                .enumerate()
                .any(|(i, d)| i != w && *d == mine);
        if shared {
            return unknown(
                "two roots write heartbeats in one GTID domain: a received position cannot \
                 tell them apart",
            );
        }
        beat.acks.lag_applied(io_pos, at, stale(beat))
    });
    super::roots::worst(lags)
        .unwrap_or_else(|| unknown("this channel leads to no root rwtop writes a heartbeat on"))
}

#[cfg(test)]
mod tests {
    use super::LagSplit;
    use crate::store::lag::Lag;
    use std::time::Duration;

    use crate::store::testkit::exact_ms as exact;

    #[test]
    fn the_parts_add_up_to_the_whole() {
        // Link stalled: all of it is transport.
        let split = LagSplit::of(&exact(41_000), &exact(41_000));
        assert_eq!((split.transport, split.apply), (exact(41_000), exact(0)));
        // SQL stopped: everything received, all of it waits to be applied.
        let split = LagSplit::of(&exact(9_000), &exact(0));
        assert_eq!((split.transport, split.apply), (exact(0), exact(9_000)));
        // Some of each.
        let split = LagSplit::of(&exact(9_000), &exact(2_500));
        assert_eq!((split.transport, split.apply), (exact(2_500), exact(6_500)));
        // The received reading a moment newer than the whole: transport never exceeds it.
        let split = LagSplit::of(&exact(1_000), &exact(1_200));
        assert_eq!((split.transport, split.apply), (exact(1_000), exact(0)));
    }

    #[test]
    fn the_part_that_holds_the_lag_is_named_once_it_is_worth_a_word() {
        use super::Holder;
        let holder = |t, a| LagSplit::of(&exact(t + a), &exact(t)).holder();
        assert_eq!(holder(41_000, 0), Some(Holder::Transport));
        assert_eq!(
            holder(40_000, 400),
            Some(Holder::Transport),
            "a tenth or less"
        );
        assert_eq!(holder(0, 9_000), Some(Holder::Apply));
        assert_eq!(holder(300, 9_000), Some(Holder::Apply));
        assert_eq!(holder(3_000, 6_000), Some(Holder::Both));
        assert_eq!(holder(300, 400), None, "under a second");
        let unknown = LagSplit::unknown("MySQL");
        assert_eq!(unknown.holder(), None);
    }

    #[test]
    fn what_cannot_be_known_says_why() {
        let unknown = |reason: &str| Lag::Unknown {
            reason: reason.to_owned(),
        };
        let split = LagSplit::of(&unknown("node is down"), &exact(0));
        assert_eq!(split, LagSplit::unknown("node is down"));
        let split = LagSplit::of(&exact(5_000), &unknown("MySQL"));
        assert_eq!(split.transport, unknown("MySQL"));
        assert!(
            matches!(&split.apply, Lag::Unknown { reason } if reason.contains("MySQL")),
            "{split:?}"
        );
        // Not yet applied the run's first heartbeat, but received all: the rest is a bound.
        let bound = |ms| Lag::AtLeast {
            lag: Duration::from_millis(ms),
            upper: None,
        };
        let split = LagSplit::of(&bound(3_000), &exact(500));
        assert_eq!((split.transport, split.apply), (exact(500), bound(2_500)));
        // Not yet received it: transport a bound, apply unknown.
        let split = LagSplit::of(&bound(3_000), &bound(3_000));
        assert_eq!(split.transport, bound(3_000));
        assert!(matches!(split.apply, Lag::Unknown { .. }));
    }
}

/// The split on `MySQL` 8: the newest queued transaction's commit time against the heartbeats'
/// acknowledgements.
#[cfg(test)]
mod mysql_tests {
    use super::received;
    use crate::mysql::ReplicaStatus;
    use crate::store::lag::Lag;
    use crate::store::roots::Beat;
    use crate::store::testkit::fixture_row;
    use std::time::{Duration, Instant};

    const BASE_US: i64 = 1_733_510_400_000_000;

    /// Heartbeats 1..=8 acknowledged every 250 ms from `t0`, each committed 1 ms before.
    fn beat(t0: Instant) -> Beat {
        let mut beat = Beat::new("w@db1".to_owned(), Some("db1".to_owned()), 100);
        for seq in 1..=8_u64 {
            beat.acks
                .push(seq, t0 + Duration::from_millis(250 * seq), None);
        }
        beat
    }

    fn status(commit_us: Option<i64>) -> ReplicaStatus {
        let row = fixture_row("mysql-8.0/show_replica_status__running.txt");
        let mut status = ReplicaStatus::from_row(&row).unwrap();
        status.queued_commit_us = commit_us;
        status
    }

    #[test]
    fn the_newest_queued_commit_tells_the_newest_heartbeat_received() {
        let t0 = Instant::now();
        let beats = [beat(t0), beat(t0)];
        let at = t0 + Duration::from_secs(3);
        // The root's clock maps BASE_US to t0; a quarter interval of slack, as the store adds.
        let by = |_: &Beat, us: i64| {
            Some(t0 + Duration::from_micros(u64::try_from(us - BASE_US).ok()?))
                .map(|t| t + Duration::from_millis(62))
        };
        let heartbeat = |seq: u64| BASE_US + i64::try_from(250_000 * seq).unwrap() - 1_000;
        let read = |commit: Option<i64>, writers: &[usize]| {
            received(&status(commit), writers, &beats, at, |_| false, by)
        };
        // The relay log ends with heartbeat 5 (or a write just after it): read as its row.
        let as_row = beats[0].acks.lag(Some(5), at, false, None);
        assert!(matches!(as_row, Lag::Exact { .. }), "{as_row:?}");
        assert_eq!(read(Some(heartbeat(5)), &[0]), as_row);
        assert_eq!(read(Some(heartbeat(5) + 40_000), &[0]), as_row);
        // Everything acknowledged is in: nothing to bring.
        assert_eq!(
            read(Some(heartbeat(8) + 100_000), &[0]),
            Lag::Exact {
                lag: Duration::ZERO
            }
        );
        // Older than every heartbeat kept: at least since the first.
        assert!(matches!(read(Some(BASE_US), &[0]), Lag::AtLeast { .. }));
        let why = |lag: Lag| match lag {
            Lag::Unknown { reason } => reason,
            other => panic!("{other:?}"),
        };
        assert!(why(read(None, &[0])).contains("performance_schema"));
        assert!(why(read(Some(heartbeat(5)), &[0, 1])).contains("more than one root"));
        let unclocked = received(
            &status(Some(heartbeat(5))),
            &[0],
            &beats,
            at,
            |_| false,
            |_, _| None,
        );
        assert!(why(unclocked).contains("clock is not estimated"));
    }
}

/// The split on `MariaDB`: the channel's `Gtid_IO_Pos` against the heartbeats' GTIDs.
#[cfg(test)]
mod mariadb_tests {
    use super::received;
    use crate::gtid::{DomainGtid, GtidList};
    use crate::mysql::replica_status::from_fixture;
    use crate::mysql::{ReplicaGtid, ReplicaStatus};
    use crate::store::lag::Lag;
    use crate::store::roots::Beat;
    use std::time::{Duration, Instant};

    /// Heartbeats 1..=8 acknowledged every 250 ms from `t0`, written as GTIDs `D-S-(100 + 2n)`
    /// (another transaction of the domain between each two).
    fn beat(t0: Instant, domain: u32, server_id: u32) -> Beat {
        let mut beat = Beat::new(format!("w{domain}"), Some("db1".to_owned()), 100);
        for seq in 1..=8_u64 {
            let gtid = DomainGtid {
                domain,
                server_id,
                seq: 100 + 2 * seq,
            };
            beat.acks
                .push(seq, t0 + Duration::from_millis(250 * seq), Some(gtid));
        }
        beat
    }

    /// A replica whose SQL thread is stopped, having received up to `io_pos` and applied far
    /// less (`0-1-101`: none of the heartbeats).
    fn status(io_pos: &str, using_gtid: &str) -> ReplicaStatus {
        let mut status = from_fixture("mariadb-10.11/show_all_slaves_status__sql_stopped.txt");
        status.gtid = ReplicaGtid::Mariadb {
            using_gtid: using_gtid.to_owned(),
            io_pos: GtidList::parse(io_pos).unwrap(),
            slave_pos: Some(GtidList::parse("0-1-101").unwrap()),
        };
        status
    }

    fn why(lag: Lag) -> String {
        match lag {
            Lag::Unknown { reason } => reason,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_received_position_tells_the_newest_heartbeat_received() {
        let t0 = Instant::now();
        let beats = [beat(t0, 0, 1)];
        let at = t0 + Duration::from_secs(3);
        let read = |io_pos: &str| {
            received(
                &status(io_pos, "Slave_Pos"),
                &[0],
                &beats,
                at,
                |_| false,
                |_, _| None,
            )
        };
        // Received up to heartbeat 5 (0-1-110), or the transaction after it: read as its row.
        let as_row = beats[0].acks.lag(Some(5), at, false, None);
        assert!(matches!(as_row, Lag::Exact { .. }), "{as_row:?}");
        assert_eq!(read("0-1-110"), as_row);
        assert_eq!(read("0-1-111"), as_row);
        assert_ne!(read("0-1-112"), as_row);
        // Every heartbeat received (the position may list other domains): nothing to bring,
        // however little was applied.
        assert_eq!(
            read("0-1-116,3-9-40"),
            Lag::Exact {
                lag: Duration::ZERO
            }
        );
        // None of the run received: at least since its first (acknowledged at 250 ms).
        assert_eq!(
            read("0-1-101"),
            Lag::AtLeast {
                lag: Duration::from_millis(2_750),
                upper: None,
            }
        );
        // A writer that stopped advancing: "received the newest" no longer means caught up.
        let stale = received(
            &status("0-1-116", "Slave_Pos"),
            &[0],
            &beats,
            at,
            |_| true,
            |_, _| None,
        );
        assert!(why(stale).contains("not advancing"));
    }

    #[test]
    fn two_roots_give_the_worse_of_their_received_heartbeats() {
        let t0 = Instant::now();
        let beats = [beat(t0, 0, 1), beat(t0, 1, 2)];
        let at = t0 + Duration::from_secs(3);
        let lag = received(
            &status("0-1-116,1-2-108", "Slave_Pos"),
            &[0, 1],
            &beats,
            at,
            |_| false,
            |_, _| None,
        );
        assert_eq!(lag, beats[1].acks.lag(Some(4), at, false, None));
        assert!(
            matches!(lag, Lag::Exact { lag } if lag > Duration::ZERO),
            "{lag:?}"
        );
    }

    #[test]
    fn what_a_position_cannot_tell_says_why() {
        let t0 = Instant::now();
        let at = t0 + Duration::from_secs(3);
        let read = |status: &ReplicaStatus, writers: &[usize], beats: &[Beat]| {
            why(received(status, writers, beats, at, |_| false, |_, _| None))
        };
        let one = [beat(t0, 0, 1)];
        let by_file = status("0-1-116", "No");
        assert!(read(&by_file, &[0], &one).contains("Using_Gtid: No"));
        let gtid = status("0-1-116", "Current_Pos");
        assert!(read(&gtid, &[], &one).contains("leads to no root"));
        assert!(read(&gtid, &[3], &one).contains("no heartbeat writer"));
        // Two roots writing heartbeats in the same domain cannot be told apart by position.
        let shared = [beat(t0, 0, 1), beat(t0, 0, 2)];
        assert!(read(&gtid, &[0], &shared).contains("one GTID domain"));
        // Heartbeats without GTIDs (an observer's): a position cannot place them.
        let mut plain = Beat::new("w".to_owned(), None, 100);
        plain.acks.push(1, t0, None);
        assert!(read(&gtid, &[0], &[plain]).contains("GTID is not known"));
    }
}
