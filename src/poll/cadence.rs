//! Which of the occasional statements each status poll adds, and when: the processlist scan
//! every 3rd poll (every 15th on a replica whose appliers are idle), discovery and the clock every
//! 5th (never on a poll that scans), the binlog list when none is held and every 60th, each node
//! at a phase of its own; the binlog coordinate and list only on a node that feeds a watched
//! replica.

pub use crate::mysql::batch::PollParts;
use crate::mysql::{Processlist, ReplicaStatus};

/// Polls after the last scan that showed a DDL during which every poll still scans: the
/// statement's end is read at the next poll, and a migration's next statement at once rather
/// than at the cadence.
pub const DDL_SCAN_LINGER: u64 = 5;

/// The cadence of the occasional statements a status poll adds ([`PollParts`], the one question
/// a poll asks, defined with the batch that sends it). The node's own binlog coordinate and list
/// are read only where a watched replica needs them (`feeds.rs`). Discovery and the clock change
/// rarely (every 5th poll, moved a poll on where it would meet the scan, so that the costliest
/// parts never make one poll together). The list costs the server a file opened per binlog kept
/// (~2 µs each hot on `MariaDB` 10.11, ~1.35 ms more a cold poll at 500 files: docs/benchmarks.md,
/// "Poll path"), and changes only at a rotation or a purge: it is read when none is held
/// ([`PollParts::list_held`]), at once after a rotation (`status_poll::poll_status`), and every
/// [`LIST_EVERY`]th poll for a `PURGE`. The processlist scan answers a row per thread (on MySQL its
/// query also costs the server more than the rest of a poll, docs/benchmarks.md, "Statements
/// measured by hand"), but it is how a DDL in flight is seen: every 3rd poll, so a short ALTER is
/// not missed, and every poll while one runs and for [`DDL_SCAN_LINGER`] polls after
/// ([`PollParts::after_ddl`]). On a replica whose appliers apply nothing ([`Applying`]) the scan
/// comes every [`QUIET_SCAN_EVERY`]th poll instead ([`PollParts::when_idle`]). Each node keeps
/// these cadences at its own [`phase`], so a large topology's scans and lists are spread over the
/// seconds rather than all falling on the same poll of every node.
impl PollParts {
    /// The cadence of the `n`th status poll (0-based) of a connection, at `phase` ([`phase`]):
    /// the first poll reads the list, discovery and the clock, the first scan comes within the
    /// next three.
    #[must_use]
    pub fn for_poll(n: u64, phase: u64, discovery: bool) -> Self {
        let k = tick(n, phase) % PHASES;
        let scans = |k: u64| k % 3 == 1;
        let fifth = |k: u64| k.is_multiple_of(5);
        // The every-5th parts due at a poll that scans come a poll later (in 15, at 11 rather
        // than 10): a poll never carries the scan and the list together.
        let before = (k + PHASES - 1) % PHASES;
        let every_fifth = n == 0 || (fifth(k) && !scans(k)) || (fifth(before) && scans(before));
        // The first poll and every 60th: the binlog list's, and where semi-sync is off its status.
        let every_sixtieth = n == 0 || tick(n, phase).is_multiple_of(LIST_EVERY);
        Self {
            binlog: true,
            binlog_files: every_sixtieth,
            replica_hosts: every_fifth && discovery,
            processes: n > 0 && scans(k),
            clock: every_fifth,
            // At its own cadence, on writable roots only (`poll/osc.rs`).
            osc: false,
            semisync: every_fifth,
            semisync_status: every_sixtieth,
            galera: every_sixtieth,
        }
    }

    /// Adds Galera's status to every poll of a member (`on`): its state, queues and flow
    /// control change from one poll to the next.
    #[must_use]
    pub fn galera_on(mut self, on: bool) -> Self {
        self.galera |= on;
        self
    }

    /// Adds semi-sync's reads to every poll while the node's last reading had it `on` (either
    /// side enabled or active, or nothing read yet): a fall-back is news at once there. Where
    /// it is off, its counters stand still: its settings every 5th poll notice it switched on,
    /// and its status (the costlier `SHOW GLOBAL STATUS`) comes every [`LIST_EVERY`]th.
    #[must_use]
    pub fn semisync_on(mut self, on: bool) -> Self {
        self.semisync |= on;
        self.semisync_status |= on;
        self
    }

    /// Adds the binlog list unless this connection `held` one from the polls before (it reads
    /// one when it starts feeding a replica, or after a poll that left the coordinate out).
    #[must_use]
    pub fn list_held(mut self, held: bool) -> Self {
        self.binlog_files |= !held;
        self
    }

    /// Leaves the node's binlog coordinate and list out unless it `feeds` a watched replica.
    #[must_use]
    pub fn as_source(mut self, feeds: bool) -> Self {
        self.binlog &= feeds;
        self.binlog_files &= feeds;
        self
    }

    /// Thins the processlist scan to every [`QUIET_SCAN_EVERY`]th poll (at the node's `phase`,
    /// on polls that scan at the usual cadence too) on a replica whose appliers were seen
    /// applying at fewer than [`APPLYING_FOR`] polls in a row, past the first scan (polls 1–3);
    /// and scans at once when they have just been seen applying that long, and while they are
    /// idle but the newest scan still shows a busy worker (so the sample shows them done). A
    /// replica whose appliers apply nothing runs no replicated DDL and has no busy worker: what
    /// a scan could still find there is a statement run on the replica by hand, seen within
    /// [`QUIET_SCAN_EVERY`] polls (sooner if it holds up replication, which keeps the applier
    /// busy). Applied before [`Self::after_ddl`], which keeps scanning every poll while a DDL
    /// runs.
    #[must_use]
    pub fn when_idle(mut self, n: u64, phase: u64, applying: Applying) -> Self {
        let edge = applying.polls == APPLYING_FOR || (applying.polls == 0 && applying.busy_shown);
        if edge {
            self.processes = true;
        } else if applying.polls < APPLYING_FOR && n > 3 {
            self.processes &= tick(n, phase) % QUIET_SCAN_EVERY == 1;
        }
        self
    }

    /// Adds the processlist scan when the last scan that showed a DDL was `polls_ago` polls
    /// back, up to [`DDL_SCAN_LINGER`]; `None`: no DDL seen on this connection.
    #[must_use]
    pub fn after_ddl(mut self, polls_ago: Option<u64>) -> Self {
        self.processes |= polls_ago.is_some_and(|n| n <= DDL_SCAN_LINGER);
        self
    }
}

/// Phases of the occasional statements' cadences: every 3rd and every 5th poll both repeat in 15.
const PHASES: u64 = 15;

/// The binlog list's cadence while one is held: a `PURGE BINARY LOGS`, which changes the list
/// with no rotation, is seen within this many polls. A multiple of [`PHASES`] whose polls fall
/// at the cadences' phase 0, where nothing scans.
pub const LIST_EVERY: u64 = 60;

/// The processlist cadence on a replica whose appliers are idle ([`PollParts::when_idle`]): a
/// multiple of 3, so these scans are some of those the usual cadence takes.
pub const QUIET_SCAN_EVERY: u64 = 15;

/// The `n`th poll's place in the cadences of a node at `phase`.
fn tick(n: u64, phase: u64) -> u64 {
    n + phase % PHASES
}

/// Polls in a row at which a node's replication appliers were seen applying (not every channel
/// [`ReplicaStatus::applier_idle`]); a node that replicates from nothing counts as always
/// applying, so it keeps the usual cadence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applying {
    polls: u32,
    /// The newest scan showed a worker holding a transaction.
    busy_shown: bool,
}

/// Polls in a row that leave the quiet cadence: one is a heartbeat caught in flight.
pub const APPLYING_FOR: u32 = 2;

impl Applying {
    /// Takes the newest poll's channels and its scan, if it carried one.
    pub fn saw(&mut self, replication: &[ReplicaStatus], scan: Option<&Processlist>) {
        self.polls = if replication.is_empty() {
            u32::MAX
        } else if replication.iter().all(ReplicaStatus::applier_idle) {
            0
        } else {
            self.polls.saturating_add(1)
        };
        if let Some(scan) = scan {
            self.busy_shown = scan.workers.iter().any(|w| w.busy > 0);
        }
    }
}

/// A node's phase in the occasional statements' cadences, from its name (FNV-1a, then mixed so
/// that names differing in a digit land far apart): the same for a node across reconnects and
/// runs, and spread evenly over many nodes.
#[must_use]
pub fn phase(node: &str) -> u64 {
    let mut h = node.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h % PHASES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occasional_reads_follow_their_cadence() {
        let polls: Vec<PollParts> = (0..20).map(|n| PollParts::for_poll(n, 0, true)).collect();
        assert_eq!(
            polls.iter().filter(|p| p.processes).count(),
            7,
            "every 3rd poll"
        );
        assert_eq!(
            polls.iter().filter(|p| p.clock).count(),
            4,
            "every 5th poll"
        );
        assert!(
            polls[1].processes && !polls[0].processes,
            "first scan on the second poll"
        );
        assert!(!PollParts::for_poll(0, 0, false).replica_hosts);
        // Semi-sync: with the clock where it is off, every poll where it is on.
        let off: Vec<bool> = polls
            .iter()
            .map(|p| p.semisync_on(false).semisync)
            .collect();
        assert_eq!(off, polls.iter().map(|p| p.clock).collect::<Vec<_>>());
        assert!(off[0], "the first poll reads it");
        assert!(polls.iter().all(|p| p.semisync_on(true).semisync));
        // Its status, the costlier statement, every 60th poll where it is off.
        let status: Vec<u64> = (0..180)
            .filter(|&n| {
                PollParts::for_poll(n, 7, true)
                    .semisync_on(false)
                    .semisync_status
            })
            .collect();
        assert_eq!(status, [0, 53, 113, 173]);
        assert!((0..180).all(|n| {
            let parts = PollParts::for_poll(n, 7, true).semisync_on(false);
            !parts.semisync_status || parts.semisync
        }));
        assert!((0..180).all(|n| {
            PollParts::for_poll(n, 7, true)
                .semisync_on(true)
                .semisync_status
        }));
    }

    #[test]
    fn galera_is_asked_at_the_first_poll_and_every_60th_and_every_poll_of_a_member() {
        for phase in [0, 7] {
            let asked: Vec<u64> = (0..130)
                .filter(|&n| PollParts::for_poll(n, phase, false).galera)
                .collect();
            assert_eq!(asked.len(), 3, "phase {phase}: {asked:?}");
            assert_eq!(asked[0], 0);
            assert_eq!(asked[2] - asked[1], LIST_EVERY, "phase {phase}: {asked:?}");
            assert!((0..130).all(|n| PollParts::for_poll(n, phase, false).galera_on(true).galera));
        }
    }

    #[test]
    fn each_phase_keeps_the_cadence_and_the_phases_spread_it() {
        for phase in 0..PHASES {
            let polls: Vec<(u64, PollParts)> = (0..60)
                .map(|n| (n, PollParts::for_poll(n, phase, true)))
                .collect();
            let at = |part: fn(&PollParts) -> bool| -> Vec<u64> {
                polls
                    .iter()
                    .filter(|(_, p)| part(p))
                    .map(|(n, _)| *n)
                    .collect()
            };
            let scans = at(|p| p.processes);
            assert!(scans[0] >= 1 && scans[0] <= 3, "{phase}: {scans:?}");
            assert!(
                scans.windows(2).all(|w| w[1] - w[0] == 3),
                "{phase}: {scans:?}"
            );
            let fifths = at(|p| p.clock);
            assert_eq!(fifths[0], 0, "{phase}: the first poll reads everything");
            assert!(fifths[1] <= 6, "{phase}: {fifths:?}");
            // Every 5th on average (4 in 20), never more than 6 apart.
            assert!(
                fifths[1..]
                    .windows(2)
                    .all(|w| (4..=6).contains(&(w[1] - w[0]))),
                "{phase}: {fifths:?}"
            );
            assert!((12..=13).contains(&fifths.len()), "{phase}: {fifths:?}");
            // The scan and the every-5th parts never ride in one poll.
            assert!(scans.iter().all(|n| !fifths.contains(n)), "{phase}");
            assert_eq!(at(|p| p.replica_hosts), fifths, "{phase}");
        }
        // On any poll past the first, a third of the phases scan and a fifth sample the clock.
        for n in 1..30 {
            let of = |part: fn(&PollParts) -> bool| {
                (0..PHASES)
                    .filter(|&phase| part(&PollParts::for_poll(n, phase, true)))
                    .count()
            };
            assert_eq!(of(|p| p.processes), 5, "poll {n}");
            assert_eq!(of(|p| p.clock), 3, "poll {n}");
        }
        // Names spread over the phases: no phase holds more than twice its share of 1,000.
        let mut counts = vec![0_u32; usize::try_from(PHASES).unwrap()];
        for i in 0..1_000 {
            counts[usize::try_from(phase(&format!("r{}#{i:03}", i % 10 + 1))).unwrap()] += 1;
        }
        assert!(counts.iter().all(|&c| c > 30 && c < 134), "{counts:?}");
    }

    #[test]
    fn the_list_comes_when_none_is_held_then_every_60th_poll_off_the_scan() {
        for phase in 0..PHASES {
            let lists = |held: fn(u64) -> bool| -> Vec<u64> {
                (0..200)
                    .filter(|&n| {
                        PollParts::for_poll(n, phase, true)
                            .list_held(held(n))
                            .binlog_files
                    })
                    .collect()
            };
            // Held from the first poll on: the first, then every 60th.
            let held = lists(|n| n > 0);
            assert_eq!(held[0], 0, "{phase}: {held:?}");
            assert!(held[1] <= LIST_EVERY, "{phase}: {held:?}");
            assert!(
                held[1..].windows(2).all(|w| w[1] - w[0] == LIST_EVERY),
                "{phase}: {held:?}"
            );
            // Never with the scan: on a poll of the every-5th parts.
            for &n in &held {
                let parts = PollParts::for_poll(n, phase, true);
                assert!(!parts.processes && parts.clock, "{phase}: poll {n}");
            }
            // Not held (a node that has just begun to feed a replica): every poll until one is.
            assert_eq!(
                lists(|n| n >= 7).len(),
                7 + held.iter().filter(|&&n| n >= 7).count()
            );
            // A node that feeds nobody reads none, held or not.
            assert!((0..200).all(|n| {
                !PollParts::for_poll(n, phase, true)
                    .list_held(false)
                    .as_source(false)
                    .binlog_files
            }));
        }
    }

    #[test]
    fn a_ddl_is_scanned_every_poll_for_a_while_then_at_the_cadence() {
        let scans = |ddl_seen: Option<u64>| -> Vec<u64> {
            (20..40)
                .filter(|&n| {
                    PollParts::for_poll(n, 0, true)
                        .after_ddl(ddl_seen.map(|seen| n - seen))
                        .processes
                })
                .collect()
        };
        // Without a DDL the cost stays at every 3rd poll.
        assert_eq!(scans(None), vec![22, 25, 28, 31, 34, 37]);
        // Last seen on poll 20: every poll up to 25, then every 3rd again.
        let after = scans(Some(20));
        assert_eq!(&after[..6], &[20, 21, 22, 23, 24, 25]);
        assert_eq!(&after[6..], &[28, 31, 34, 37]);
    }

    fn applying(polls: u32) -> Applying {
        Applying {
            polls,
            busy_shown: false,
        }
    }

    #[test]
    fn an_idle_replica_scans_every_15th_poll_and_at_once_when_seen_applying() {
        let scans = |phase: u64, applying: Applying| -> Vec<u64> {
            (1..61)
                .filter(|&n| {
                    PollParts::for_poll(n, phase, true)
                        .when_idle(n, phase, applying)
                        .processes
                })
                .collect()
        };
        for phase in 0..PHASES {
            let usual = scans(phase, applying(u32::MAX));
            assert_eq!(usual.len(), 20, "{phase}: every 3rd");
            for quiet in [applying(0), applying(APPLYING_FOR - 1)] {
                let thin = scans(phase, quiet);
                // The first scan as usual (polls 1-3), then every 15th.
                assert_eq!(thin[0], usual[0], "{phase}: {thin:?}");
                assert!(
                    thin[1..]
                        .windows(2)
                        .all(|w| w[1] - w[0] == QUIET_SCAN_EVERY),
                    "{phase}: {thin:?}"
                );
                assert!((4..=6).contains(&thin.len()), "{phase}: {thin:?}");
                assert!(thin.iter().all(|n| usual.contains(n)), "{phase}");
            }
            assert_eq!(
                scans(phase, applying(APPLYING_FOR + 1)),
                usual,
                "{phase}: applying for long: every 3rd"
            );
        }
        // Just seen applying long enough: this poll scans, whatever the cadence says.
        assert_eq!(scans(0, applying(APPLYING_FOR)).len(), 60);
        // Idle, but the newest scan still shows a busy worker: this poll scans.
        let stale = Applying {
            polls: 0,
            busy_shown: true,
        };
        assert_eq!(scans(0, stale).len(), 60);
        // A DDL seen on an idle replica is still followed every poll.
        assert!((20..=25).all(|n| {
            PollParts::for_poll(n, 0, true)
                .when_idle(n, 0, applying(0))
                .after_ddl(Some(n - 20))
                .processes
        }));
    }

    #[test]
    fn applying_counts_polls_in_a_row_with_any_channel_applying() {
        let status = crate::mysql::replica_status::from_fixture;
        let waiting = status("mariadb-10.11/show_all_slaves_status__running.txt");
        let delayed = status("mariadb-10.11/show_all_slaves_status__delayed.txt");
        let scan = |busy: u32| Processlist {
            workers: vec![crate::mysql::WorkerSample {
                channel: None,
                workers: 4,
                busy,
                commit_order_waits: None,
            }],
            ..Processlist::default()
        };
        let mut seen = Applying::default();
        seen.saw(&[waiting.clone(), delayed.clone()], None);
        assert_eq!(seen, applying(1), "one channel applies");
        seen.saw(std::slice::from_ref(&delayed), Some(&scan(3)));
        assert_eq!((seen.polls, seen.busy_shown), (2, true));
        seen.saw(&[waiting.clone(), waiting.clone()], None);
        assert_eq!(
            (seen.polls, seen.busy_shown),
            (0, true),
            "idle, the scan stale"
        );
        seen.saw(std::slice::from_ref(&waiting), Some(&scan(0)));
        assert_eq!(seen, applying(0), "a scan shows them done");
        seen.saw(&[], Some(&Processlist::default()));
        assert_eq!(seen, applying(u32::MAX), "replicates from nothing");
        seen.saw(&[delayed], None);
        assert_eq!(seen, applying(u32::MAX));
    }
}
