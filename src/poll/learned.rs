//! What a poller has learned of its node on one connection, and every decision it takes from
//! that without a server: what the next status poll asks (its parts, and whether the heartbeat
//! reading rides in front of it), what an answer changes (whether the node replicates, whether
//! its applied position stands for the heartbeat table, which binlog list it holds, when a DDL
//! was last seen, whether a link may be stalling), how often it polls and reads, when the
//! occasional reads are due, and what a changed grant means. `session.rs` sends the statements
//! and the events, asking this at each step; so each decision is tested here, with no server.

use std::time::Duration;

use tokio::time::Instant;

use super::beat_read::{applied_of, reads_heartbeat};
use super::cadence::{Applying, PollParts, phase};
use super::close_watch::close_watch;
use super::ended::Ended;
use super::events::{AppliedRead, NodeSample};
use super::occasional::{Due, GRANTS_EVERY, SETTINGS_EVERY, SETTINGS_WHILE_MISMATCHED};
use super::osc::OscWatch;
use super::pace::{ReadPace, read_every};
use super::spec::{HeartbeatTable, PollerSpec};
use crate::mysql::galera::Wsrep;
use crate::mysql::grants::{AccountGrants, MissingGrant, Uses, missing};
use crate::mysql::semisync::SemiSync;
use crate::mysql::{Family, IoRunning, ReplicaGtid};

/// A binlog list held from an earlier poll: its newest file's name (`None`: the list was empty).
#[derive(Debug)]
struct HeldList {
    newest: Option<String>,
}

/// What a status poll asks ([`Learned::ask`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Asked {
    /// The poll's place among this connection's status polls, from 0.
    pub poll: u64,
    pub parts: PollParts,
    /// Whether this tick's heartbeat reading is this poll's to make.
    pub reads: bool,
    /// Whether the heartbeat table is read in front of the poll; a reading without it is the
    /// applied position the poll brings, or none.
    pub lead: bool,
}

/// What a status poll's answer has the session do ([`Learned::heard`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Heard {
    /// The scan showed a DDL: the table keys known are forgotten.
    pub ddl: bool,
    /// The first status poll answered on this connection: the node is up.
    pub up: bool,
    /// The second: the failures before this connection are forgiven. A node that accepts the
    /// connection and then refuses every poll (a missing grant) is failing, not up, and backs
    /// off like any other failure.
    pub steady: bool,
    /// The applied position, when it is this poll's heartbeat reading.
    pub applied: Option<AppliedRead>,
}

#[derive(Debug)]
pub(super) struct Learned<'a> {
    spec: &'a PollerSpec,
    /// Status polls answered on this connection.
    statuses: u32,
    /// The status polls sent, which place each in the occasional statements' cadence.
    polls: u64,
    /// The lint's settings: after the first status poll, then every few minutes (more often
    /// while a copy of rwtop's tables is not rwtop's).
    settings: Due,
    /// The configured applier workers the last status poll showed: a change has the settings
    /// read again right after the poll that saw it, not at their next turn.
    workers_seen: Option<u64>,
    /// The disks, where the operator opted in.
    disks: Due,
    is_replica: bool,
    /// Whether the last sample's applied position told which heartbeats it has applied.
    by_position: bool,
    /// The poll whose scan last showed a DDL: its progress and its end are read every poll.
    ddl_seen: Option<u64>,
    /// How many polls in a row its appliers were seen applying: if few, a thinner scan cadence.
    applying: Applying,
    /// The binlog list this connection read while the node fed a replica; `None` while none is
    /// held.
    list: Option<HeldList>,
    phase: u64,
    /// The last sample showed the node writable and replicating from nothing: where online
    /// schema change tools run.
    writable_root: bool,
    /// The largest `SQL_Delay` of the last sample's channels: above 0, the heartbeat is read
    /// more often ([`super::pace::read_every`]).
    sql_delay: u64,
    osc: OscWatch,
    /// Semi-sync as last read: carried into the polls that leave it out
    /// ([`PollParts::semisync_on`]); `None` before the first reading, or when it was refused.
    semisync: Option<SemiSync>,
    /// Galera as last read: carried into the polls that leave it out; `None` before the first
    /// reading, or when it was refused.
    galera: Option<Wsrep>,
    /// The account's grants as read when this connection opened (`None`: unread).
    grants: Option<AccountGrants>,
    grants_due: Due,
    /// Since when the status polls have found a running channel lacking a heartbeat written
    /// before they asked ([`super::beat_gtid::Marks::lacks`]): a link that may be stalling.
    lacking_since: Option<Instant>,
}

impl<'a> Learned<'a> {
    /// Nothing learned yet: a new connection.
    pub fn new(spec: &'a PollerSpec) -> Self {
        Self {
            spec,
            statuses: 0,
            polls: 0,
            settings: Due::default(),
            workers_seen: None,
            disks: Due::default(),
            is_replica: false,
            by_position: false,
            ddl_seen: None,
            applying: Applying::default(),
            list: None,
            phase: phase(&spec.name),
            writable_root: false,
            sql_delay: 0,
            osc: OscWatch::default(),
            semisync: None,
            galera: None,
            grants: None,
            grants_due: Due::default(),
            lacking_since: None,
        }
    }

    /// Whether a heartbeat reading is this node's to make now (a replica, a Galera member, or
    /// any node in pt-heartbeat mode).
    pub fn reads(&self) -> bool {
        reads_heartbeat(&self.spec.heartbeat, self.is_replica || self.is_member())
    }

    /// Whether the last Galera reading showed a member: its lag is read from the row rwtop
    /// writes on one member of its cluster.
    fn is_member(&self) -> bool {
        self.galera.as_ref().is_some_and(|g| g.member().is_some())
    }

    /// Whether the last sample's applied position stands for the heartbeat table.
    pub fn by_position(&self) -> bool {
        self.by_position
    }

    /// The applied position read alone no longer tells: the table is read instead until a
    /// status poll says otherwise.
    pub fn position_lost(&mut self) {
        self.by_position = false;
    }

    /// How often the status is polled and the heartbeat read at `now`: every poll interval and
    /// at the read pace (more often while delayed); both at the pace's base, a small topology's
    /// pace, for the close watch ([`close_watch`]) after a poll found a running link lacking a
    /// heartbeat. In a large topology a node is polled and read once a second, so a stalled
    /// link's lag would pass its alert's threshold up to a second before a poll saw it; watched
    /// closely, within a quarter of one.
    pub fn every(&self, pace: &ReadPace, now: Instant) -> (Duration, Duration) {
        let status = self.spec.interval;
        let read = read_every(pace.every(), self.sql_delay > 0);
        let closely = self.lacking_since.is_some_and(|since| {
            now.saturating_duration_since(since) < close_watch(self.spec.interval)
        });
        if closely {
            (status.min(pace.base()), read.min(pace.base()))
        } else {
            (status, read)
        }
    }

    /// What the next status poll asks, with `read_due` when this tick's heartbeat reading is
    /// due. Whether this node reads a heartbeat, and whether its applied position stands for
    /// the table, is known from its last poll; on the first, and when it just became a
    /// replica, the reading follows the poll alone.
    pub fn ask(&mut self, read_due: bool) -> Asked {
        let poll = self.polls;
        self.polls += 1;
        let parts = PollParts::for_poll(poll, self.phase, self.spec.discovery)
            .when_idle(poll, self.phase, self.applying)
            .after_ddl(self.ddl_seen.map(|seen| poll - seen))
            .list_held(self.list.is_some())
            .as_source(self.spec.feeds.feeds(&self.spec.name))
            .semisync_on(self.semisync.as_ref().is_none_or(SemiSync::in_use))
            .galera_on(self.is_member());
        let parts = self.osc.parts(parts, poll, self.phase, self.writable_root);
        if !parts.binlog {
            self.list = None;
        }
        let reads = read_due && self.reads();
        Asked {
            poll,
            parts,
            reads,
            lead: reads && !self.by_position,
        }
    }

    /// The newest file of the binlog list held, for the status poll to see a rotation by.
    pub fn list_tail(&self) -> Option<&str> {
        self.list.as_ref().and_then(|held| held.newest.as_deref())
    }

    /// Takes the answer `sample` to the poll `asked`, answered by `now`: what it changes here,
    /// what it has the session do, and the semi-sync reading and the online schema change runs'
    /// pace filled into it.
    pub fn heard(&mut self, asked: &Asked, sample: &mut NodeSample, now: Instant) -> Heard {
        self.carry_semisync(asked.parts, sample);
        carry(
            asked.parts.galera,
            &mut self.galera,
            &mut sample.reported.galera,
        );
        let ddl = sample
            .reported
            .processes
            .as_ref()
            .is_some_and(|list| !list.ddl.is_empty());
        if ddl {
            self.ddl_seen = Some(asked.poll);
        }
        if let Some(files) = &sample.reported.binlog_files {
            self.list = Some(HeldList {
                newest: files.last().map(|f| f.name.clone()),
            });
        }
        self.statuses = self.statuses.saturating_add(1);
        let workers = sample.reported.state.parallel_workers;
        if workers.is_some() && self.workers_seen.is_some() && workers != self.workers_seen {
            self.settings.now();
        }
        self.workers_seen = workers;
        self.is_replica = !sample.reported.replication.is_empty();
        self.writable_root = !self.is_replica && !sample.reported.state.read_only;
        self.sql_delay = sample
            .reported
            .replication
            .iter()
            .filter_map(|c| c.sql_delay)
            .max()
            .unwrap_or(0);
        if let Some(runs) = sample.reported.osc.as_mut() {
            self.osc.saw(asked.poll, sample.at, runs);
        }
        self.applying.saw(
            &sample.reported.replication,
            sample.reported.processes.as_ref(),
        );
        self.saw_links(sample, now);
        let position = applied_of(&self.spec.marks, sample).filter(|_| self.is_replica);
        self.by_position = position.is_some();
        // Copied only when it is this poll's reading.
        let applied = position
            .filter(|_| asked.reads && !asked.lead)
            .map(|applied| AppliedRead {
                sent_at: sample.at,
                applied: applied.clone(),
            });
        Heard {
            ddl,
            up: self.statuses == 1,
            steady: self.statuses == 2,
            applied,
        }
    }

    /// Whether a running link of `sample` lacked a heartbeat acknowledged before it was sent:
    /// the close watch of [`Self::every`] starts with the first poll that finds one.
    fn saw_links(&mut self, sample: &NodeSample, now: Instant) {
        let lacking = sample.reported.replication.iter().any(|c| {
            let received = match &c.gtid {
                ReplicaGtid::Mariadb { io_pos, .. } => io_pos,
                ReplicaGtid::Mysql { .. } => return false,
            };
            c.io_running == IoRunning::Yes && self.spec.marks.lacks(received, sample.at)
        });
        self.lacking_since = lacking.then(|| self.lacking_since.unwrap_or(now));
    }

    /// A poll that left semi-sync out reports the last reading, and one that read its settings
    /// alone the last state and counters: they stand still while semi-sync is off.
    fn carry_semisync(&mut self, parts: PollParts, sample: &mut NodeSample) {
        if parts.semisync
            && !parts.semisync_status
            && let (Some(now), Some(last)) =
                (sample.reported.semisync.as_mut(), self.semisync.as_ref())
        {
            now.keep_status_of(last);
        }
        carry(
            parts.semisync,
            &mut self.semisync,
            &mut sample.reported.semisync,
        );
    }

    /// Whether the lint's settings are due at `now`: at connect, every [`SETTINGS_EVERY`] (a
    /// restart to change a static setting reconnects, so it is seen at once), and right after
    /// a poll that shows the configured applier workers changed.
    pub fn settings_due(&mut self, now: Instant) -> bool {
        self.settings.take(now, SETTINGS_EVERY)
    }

    /// The settings asked at `now` were read: while a copy of rwtop's tables is not rwtop's
    /// (`mismatched`), again every [`SETTINGS_WHILE_MISMATCHED`].
    pub fn settings_read(&mut self, now: Instant, mismatched: bool) {
        if mismatched {
            self.settings.at(now + SETTINGS_WHILE_MISMATCHED);
        }
    }

    /// Whether the opted-in disks are due at `now` (never without the opt-in).
    pub fn disks_due(&mut self, now: Instant) -> bool {
        self.spec
            .disks_every
            .is_some_and(|every| self.disks.take(now, every))
    }

    /// Whether the account's grants are due at `now`: at connect and every [`GRANTS_EVERY`].
    pub fn grants_due(&mut self, now: Instant) -> bool {
        self.grants_due.take(now, GRANTS_EVERY)
    }

    /// The account's grants as the server lists them now, on a `family` server: at connect,
    /// what this run needs and the account lacks; later, nothing while they stand as they were,
    /// and the end of the connection once they differ ([`Ended::Regranted`]).
    pub fn grants_read(
        &mut self,
        held: AccountGrants,
        family: Family,
    ) -> Result<Option<Vec<MissingGrant>>, Ended> {
        if let Some(before) = &self.grants {
            return if *before == held {
                Ok(None)
            } else {
                Err(Ended::Regranted)
            };
        }
        let missing = missing(family, &self.uses(), &held);
        self.grants = Some(held);
        Ok(Some(missing))
    }

    /// What this run needs of the node's account: from the heartbeat's mode, discovery and
    /// the disks' opt-in (a kill and the schemas of online schema changes are not checked).
    fn uses(&self) -> Uses {
        let (writes, pt_heartbeat) = match &self.spec.heartbeat {
            HeartbeatTable::Own { .. } => (true, None),
            HeartbeatTable::Pt { table } => (false, Some(table.clone())),
        };
        Uses {
            writes,
            discovery: self.spec.discovery,
            pt_heartbeat,
            disks: self.spec.disks_every.is_some(),
            ..Uses::default()
        }
    }
}

/// A part read only on some polls: a poll that `asked` keeps its reading, one that did not
/// reports the last one.
fn carry<T: Clone>(asked: bool, last: &mut Option<T>, now: &mut Option<T>) {
    if asked {
        last.clone_from(now);
    } else {
        now.clone_from(last);
    }
}

#[cfg(test)]
#[path = "learned_tests.rs"]
mod tests;
