//! One connection's polling, as a type with named steps: what the poller has learned of its node
//! on this connection (how many status polls answered, whether it replicates, whether its
//! applied position stands for the heartbeat table, which binlog list it holds, when a DDL was
//! last seen, which tables have a key) and the steps of a tick — the status poll (with the
//! heartbeat reading and the clock sample riding in front of it when due), the lint's settings
//! when due, and a heartbeat reading on its own between polls; and, when a scan shows a DDL
//! waiting for a lock, who holds it. `node_poller::run` owns the connection's lifetime (connect,
//! back-off); the tick schedule lives in `node_poller::poll_connected`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::beat_read::{applied_of, heartbeat_event, heartbeat_sql, read_applied, reads_heartbeat};
use super::cadence::{Applying, PollParts, phase};
use super::events::{AppliedRead, ConnState, NodeSample, PollEvent};
use super::node_poller::{PollerSpec, SETTINGS_EVERY, SETTINGS_WHILE_MISMATCHED, poll_status};
use super::pt_heartbeat;
use crate::mysql::semisync::SemiSync;
use crate::mysql::{IoRunning, NodeConn, ReplicaGtid, SqlError, lock_holders};

/// Why a connection's polling ended.
pub(super) enum Ended {
    /// The engine stopped, or the store is gone: nothing is reported any more.
    Stopped,
    /// A statement failed: the connection is dropped and opened again after a back-off.
    Failed(SqlError),
    /// The account's grants changed since this connection opened: a server gives an open
    /// connection none of a global privilege granted since (nor takes one revoked), so the
    /// connection is opened again at once, without a back-off, to hold what the server lists.
    Regranted,
}

impl From<SqlError> for Ended {
    fn from(err: SqlError) -> Self {
        Self::Failed(err)
    }
}

/// A binlog list held from an earlier poll: its newest file's name (`None`: the list was empty).
struct HeldList {
    newest: Option<String>,
}

pub(super) struct Session<'a> {
    spec: &'a PollerSpec,
    pub conn: NodeConn,
    events: &'a mpsc::Sender<PollEvent>,
    /// Status polls answered on this connection.
    statuses: u32,
    /// The status polls sent, which place each in the occasional statements' cadence.
    polls: u64,
    /// When the lint's settings are read next: after the first status poll, then every few
    /// minutes (more often while a copy of rwtop's tables is not rwtop's).
    settings_due: Option<tokio::time::Instant>,
    /// The configured applier workers the last status poll showed: a change has the settings
    /// read again right after the poll that saw it, not at their next turn.
    workers_seen: Option<u64>,
    /// When the disks are read next, where the operator opted in.
    disks_due: Option<tokio::time::Instant>,
    /// A connection of the disks' own, opened after a `GRANT FILE` this one predates.
    disks_conn: Option<NodeConn>,
    is_replica: bool,
    /// Whether the last sample's applied position told which heartbeats it has applied.
    by_position: bool,
    /// Which reported host names resolve, looked up once per connection.
    resolved: HashMap<String, bool>,
    /// The poll whose scan last showed a DDL: its progress and its end are read every poll.
    ddl_seen: Option<u64>,
    /// How many polls in a row its appliers were seen applying: if few, a thinner scan cadence.
    applying: Applying,
    /// The binlog list this connection read while the node fed a replica; `None` while none is
    /// held.
    list: Option<HeldList>,
    /// Whether the tables the appliers apply row events on have a key, per table.
    keys: super::key_cache::KeyCache,
    beat_sql: String,
    phase: u64,
    /// The last sample showed the node writable and replicating from nothing: where online
    /// schema change tools run.
    writable_root: bool,
    /// The largest `SQL_Delay` of the last sample's channels: above 0, the heartbeat is read
    /// more often ([`Self::read_every`]).
    sql_delay: u64,
    osc: super::osc::OscWatch,
    /// Semi-sync as last read: carried into the polls that leave it out
    /// ([`PollParts::semisync_on`]); `None` before the first reading, or when it was refused.
    semisync: Option<SemiSync>,
    /// The account's grants as read when this connection opened (`None`: unread), and when
    /// they are read again.
    grants: Option<crate::mysql::grants::AccountGrants>,
    grants_due: tokio::time::Instant,
    /// Since when the status polls have found a running channel lacking a heartbeat written
    /// before they asked ([`super::beat_gtid::Marks::lacks`]): a link that may be stalling.
    lacking_since: Option<tokio::time::Instant>,
}

/// How long, in poll intervals, a node whose link may be stalling is polled at the read pace's
/// base ([`Session::every`]): long enough for its lag to pass the stalled-link alert's threshold
/// (a second) and be published; bounded, so that a heartbeat that never arrives (a filter, a
/// link that stays down) costs a few polls, not a faster pace for good.
const CLOSE_WATCH_INTERVALS: u32 = 2;

impl<'a> Session<'a> {
    /// Says the node is connected (its flavor and identity) and starts the session.
    pub async fn start(
        spec: &'a PollerSpec,
        conn: NodeConn,
        events: &'a mpsc::Sender<PollEvent>,
    ) -> Result<Self, Ended> {
        let mut session = Self {
            spec,
            events,
            statuses: 0,
            polls: 0,
            settings_due: None,
            workers_seen: None,
            disks_due: None,
            disks_conn: None,
            is_replica: false,
            by_position: false,
            resolved: HashMap::new(),
            ddl_seen: None,
            applying: Applying::default(),
            list: None,
            keys: super::key_cache::KeyCache::default(),
            beat_sql: heartbeat_sql(&spec.heartbeat),
            phase: phase(&spec.name),
            writable_root: false,
            sql_delay: 0,
            osc: super::osc::OscWatch::default(),
            semisync: None,
            grants: None,
            grants_due: tokio::time::Instant::now(),
            lacking_since: None,
            conn,
        };
        let connected = PollEvent::Connected {
            node: spec.name.clone(),
            flavor: session.conn.flavor().clone(),
            identity: session.conn.identity().clone(),
        };
        session.send(connected).await?;
        // Before the first poll, which a missing grant may fail: the note says why.
        session.grants_when_due().await?;
        Ok(session)
    }

    /// What this run needs of the node's account: from the heartbeat's mode, discovery and
    /// the disks' opt-in (a kill and the schemas of online schema changes are not checked).
    fn uses(&self) -> crate::mysql::grants::Uses {
        use super::node_poller::HeartbeatTable;
        let (writes, pt_heartbeat) = match &self.spec.heartbeat {
            HeartbeatTable::Own { .. } => (true, None),
            HeartbeatTable::Pt { table } => (false, Some(table.clone())),
        };
        crate::mysql::grants::Uses {
            writes,
            discovery: self.spec.discovery,
            pt_heartbeat,
            disks: self.spec.disks_every.is_some(),
            ..crate::mysql::grants::Uses::default()
        }
    }

    /// The account's grants, at connect and every [`super::GRANTS_EVERY`]: what this run
    /// needs and the account lacks goes to the store, each with what goes off. Grants that
    /// differ from those read at connect end the session ([`Ended::Regranted`]). A refused
    /// `SHOW GRANTS` leaves them unread.
    pub async fn grants_when_due(&mut self) -> Result<(), Ended> {
        let now = tokio::time::Instant::now();
        if now < self.grants_due {
            return Ok(());
        }
        self.grants_due = now + super::GRANTS_EVERY;
        let held = match self.conn.grants().await {
            Ok(held) => held,
            Err(SqlError::Server { .. } | SqlError::Parse { .. }) => return Ok(()),
            Err(other) => return Err(other.into()),
        };
        if let Some(before) = &self.grants {
            return if *before == held {
                Ok(())
            } else {
                Err(Ended::Regranted)
            };
        }
        let family = self.conn.flavor().family;
        let missing = crate::mysql::grants::missing(family, &self.uses(), &held);
        self.grants = Some(held);
        let node = self.spec.name.clone();
        self.send(PollEvent::Grants { node, missing }).await
    }

    async fn send(&self, event: PollEvent) -> Result<(), Ended> {
        self.events.send(event).await.map_err(|_| Ended::Stopped)
    }

    /// Whether a heartbeat reading is this node's to make now (a replica, or any node in
    /// pt-heartbeat mode).
    pub fn reads(&self) -> bool {
        reads_heartbeat(&self.spec.heartbeat, self.is_replica)
    }

    /// How long this node waits between two heartbeat readings at `pace`: more often while a
    /// channel has a `SQL_Delay` ([`super::pace::read_every`]).
    fn read_every(&self, pace: Duration) -> Duration {
        super::pace::read_every(pace, self.sql_delay > 0)
    }

    /// How often the status is polled and the heartbeat read now: every poll interval and at
    /// the read pace (more often while delayed); both at the pace's base, a small topology's
    /// pace, for [`CLOSE_WATCH_INTERVALS`] after a poll found a running link lacking a heartbeat.
    /// In a large topology a node is polled and read once a second, so a stalled link's lag
    /// would pass its alert's threshold up to a second before a poll saw it; watched closely,
    /// within a quarter of one.
    pub fn every(&self, pace: &super::ReadPace) -> (Duration, Duration) {
        let (status, read) = (self.spec.interval, self.read_every(pace.every()));
        let close_watch = self.spec.interval * CLOSE_WATCH_INTERVALS;
        let closely = self
            .lacking_since
            .is_some_and(|since| since.elapsed() < close_watch);
        if closely {
            (status.min(pace.base()), read.min(pace.base()))
        } else {
            (status, read)
        }
    }

    /// Whether a running link of `sample` lacked a heartbeat acknowledged before it was sent:
    /// the close watch of [`Self::every`] starts with the first poll that finds one.
    fn saw_links(&mut self, sample: &NodeSample) {
        let lacking = sample.reported.replication.iter().any(|c| {
            let received = match &c.gtid {
                ReplicaGtid::Mariadb { io_pos, .. } => io_pos,
                ReplicaGtid::Mysql { .. } => return false,
            };
            c.io_running == IoRunning::Yes && self.spec.marks.lacks(received, sample.at)
        });
        self.lacking_since =
            lacking.then(|| self.lacking_since.unwrap_or_else(tokio::time::Instant::now));
    }

    /// A poll that left semi-sync out reports the last reading, and one that read its settings
    /// alone the last state and counters: they stand still while semi-sync is off.
    fn carry_semisync(&mut self, parts: PollParts, sample: &mut NodeSample) {
        if parts.semisync {
            if !parts.semisync_status
                && let (Some(now), Some(last)) =
                    (sample.reported.semisync.as_mut(), self.semisync.as_ref())
            {
                now.keep_status_of(last);
            }
            self.semisync.clone_from(&sample.reported.semisync);
        } else {
            sample.reported.semisync.clone_from(&self.semisync);
        }
    }

    /// Which occasional statements this status poll adds.
    fn parts(&mut self) -> PollParts {
        let poll = self.polls;
        self.polls += 1;
        let parts = PollParts::for_poll(poll, self.phase, self.spec.discovery)
            .when_idle(poll, self.phase, self.applying)
            .after_ddl(self.ddl_seen.map(|seen| poll - seen))
            .list_held(self.list.is_some())
            .as_source(self.spec.feeds.feeds(&self.spec.name))
            .semisync_on(self.semisync.as_ref().is_none_or(SemiSync::in_use));
        let parts = self.osc.parts(parts, poll, self.phase, self.writable_root);
        if !parts.binlog {
            self.list = None;
        }
        parts
    }

    /// The status poll, with the heartbeat reading in front of it when `read_due` (or the
    /// applied position standing for it), and the clock sample when the cadence has it. True
    /// when it made this tick's heartbeat reading.
    pub async fn status_poll(&mut self, read_due: bool, failures: &mut u32) -> Result<bool, Ended> {
        let poll = self.polls;
        let parts = self.parts();
        let tail = self.list.as_ref().and_then(|held| held.newest.as_deref());
        // Whether this node reads a heartbeat, and whether its applied position stands for the
        // table, is known from its last poll; on the first, and when it just became a replica,
        // the reading follows the poll alone.
        let reads = read_due && self.reads();
        let lead = (reads && !self.by_position).then_some(self.beat_sql.as_str());
        let sent_utc = chrono::Utc::now();
        let (mut sample, ahead) = poll_status(&mut self.conn, parts, lead, tail).await?;
        let lead_asked = lead.is_some();
        self.carry_semisync(parts, &mut sample);
        if let Some(list) = sample.reported.processes.as_mut() {
            if !list.ddl.is_empty() {
                self.ddl_seen = Some(poll);
                self.keys.forget();
            }
            // Only while a scan names a table: one lookup per table not known yet.
            if !list.row_events.is_empty() {
                self.keys.fill(&mut self.conn, list, Instant::now()).await?;
            }
        }
        resolve(&mut sample, &mut self.resolved).await;
        if let Some(files) = &sample.reported.binlog_files {
            self.list = Some(HeldList {
                newest: files.last().map(|f| f.name.clone()),
            });
        }
        self.answered(failures).await;
        let workers = sample.reported.state.parallel_workers;
        if workers.is_some() && self.workers_seen.is_some() && workers != self.workers_seen {
            self.settings_due = None;
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
            self.osc.saw(poll, sample.at, runs);
        }
        self.applying.saw(
            &sample.reported.replication,
            sample.reported.processes.as_ref(),
        );
        self.saw_links(&sample);
        let position = applied_of(&self.spec.marks, &sample).filter(|_| self.is_replica);
        self.by_position = position.is_some();
        // Copied only when it is this poll's reading.
        let applied = position
            .filter(|_| reads && !lead_asked)
            .map(|applied| AppliedRead {
                sent_at: sample.at,
                applied: applied.clone(),
            });
        self.name_blockers(&mut sample).await?;
        let sent_at = sample.at;
        let node = self.spec.name.clone();
        self.send(PollEvent::Sample {
            node: node.clone(),
            sample: Box::new(sample),
        })
        .await?;
        let mut read_done = false;
        if let Some(read) = ahead.lead {
            read_done = true;
            // A refused read ends the session after the sample, as it does alone.
            let rows = read?;
            let event = heartbeat_event(self.spec, &rows, sent_at, ahead.first_answer);
            self.send(event).await?;
        } else if let Some(read) = applied {
            read_done = true;
            self.send(PollEvent::Applied {
                node: node.clone(),
                read,
            })
            .await?;
        }
        let clock = ahead
            .clock
            .as_deref()
            .and_then(|rows| pt_heartbeat::clock_offset(rows, sent_utc, ahead.first_answer));
        if let Some((offset_ms, rtt)) = clock {
            let _ = self
                .events
                .send(PollEvent::Clock {
                    node,
                    offset_ms,
                    rtt,
                })
                .await;
        }
        Ok(read_done)
    }

    /// When this poll's scan shows a DDL waiting for a lock, who holds it: one more round trip
    /// on this connection, only then (`mysql::lock_holders`). A refused or unreadable answer
    /// leaves the holders unread; a broken connection ends the session as any failed read does.
    async fn name_blockers(&mut self, sample: &mut super::events::NodeSample) -> Result<(), Ended> {
        let Some(list) = sample.reported.processes.as_mut() else {
            return Ok(());
        };
        if list.ddl.iter().all(|d| d.waiting_for.is_none()) {
            return Ok(());
        }
        let rows = match self.conn.lock_rows().await {
            Ok(rows) => rows,
            Err(SqlError::Server { .. } | SqlError::Parse { .. }) => return Ok(()),
            Err(other) => return Err(other.into()),
        };
        for ddl in &mut list.ddl {
            ddl.blockers = lock_holders::name_holders(ddl, &rows);
        }
        Ok(())
    }

    /// A status poll answered: the node is up on the first, and its failure count starts again
    /// only after a second one (a node that accepts the connection and then refuses every poll,
    /// a missing grant, is failing, not up, and backs off like any other failure).
    async fn answered(&mut self, failures: &mut u32) {
        self.statuses = self.statuses.saturating_add(1);
        if self.statuses == 1 {
            let _ = self
                .events
                .send(PollEvent::Conn {
                    node: self.spec.name.clone(),
                    state: ConnState::Up,
                })
                .await;
        } else if self.statuses == 2 {
            *failures = 0;
        }
    }

    /// The lint's settings, when due: beside the status poll (never in it), at connect and
    /// every [`SETTINGS_EVERY`] (a restart to change a static setting reconnects, so it is seen
    /// at once), every [`SETTINGS_WHILE_MISMATCHED`] while a copy of rwtop's tables is not
    /// rwtop's, and right after a poll that shows the configured applier workers changed. A statement the server refuses (a privilege, a variable an unusual build lacks)
    /// leaves them unread rather than taking the node's monitoring down.
    pub async fn settings_when_due(&mut self) -> Result<(), Ended> {
        let now = tokio::time::Instant::now();
        if self.settings_due.is_some_and(|t| now < t) {
            return Ok(());
        }
        self.settings_due = Some(now + SETTINGS_EVERY);
        match self.conn.settings().await {
            Ok(settings) => {
                if !settings.own_tables.is_empty() {
                    self.settings_due = Some(now + SETTINGS_WHILE_MISMATCHED);
                }
                let settings = Box::new(settings);
                let node = self.spec.name.clone();
                let _ = self
                    .events
                    .send(PollEvent::Settings { node, settings })
                    .await;
                Ok(())
            }
            Err(SqlError::Server { .. } | SqlError::Parse { .. }) => Ok(()),
            Err(other) => Err(other.into()),
        }
    }

    /// The node's disks, when opted in and due: beside the status poll, every
    /// [`super::node_poller::PollerSpec::disks_every`]. A missing plugin or grant is the read's own answer;
    /// a statement the server refuses otherwise leaves them unread this time.
    ///
    /// A server keeps a connection's global privileges from when it connected, so a `GRANT
    /// FILE` given since never reaches the poll's connection: where that one reads no disk, the
    /// read is made again on a new connection, kept for the disks once it reads them.
    pub async fn disks_when_due(&mut self) -> Result<(), Ended> {
        let Some(every) = self.spec.disks_every else {
            return Ok(());
        };
        let now = tokio::time::Instant::now();
        if self.disks_due.is_some_and(|t| now < t) {
            return Ok(());
        }
        self.disks_due = Some(now + every);
        let sent = Instant::now();
        let user = self.spec.endpoint.user.clone();
        let conn = self.disks_conn.as_mut().unwrap_or(&mut self.conn);
        let mut read = match conn.disks(&user).await {
            Ok(read) => read,
            Err(SqlError::Server { .. } | SqlError::Parse { .. }) => return Ok(()),
            Err(_) if self.disks_conn.is_some() => {
                // Only the disks' own connection failed: opened again at the next read.
                self.disks_conn = None;
                return Ok(());
            }
            Err(other) => return Err(other.into()),
        };
        if matches!(
            read.disks,
            Err(crate::mysql::DisksUnavailable::NoGrant { .. })
        ) {
            self.disks_conn = None;
            let fresh = NodeConn::connect(&self.spec.endpoint, self.spec.timeouts).await;
            if let Ok(mut fresh) = fresh
                && let Ok(again) = fresh.disks(&user).await
            {
                if again.disks.is_ok() {
                    self.disks_conn = Some(fresh);
                }
                read = again;
            }
        }
        let node = self.spec.name.clone();
        let sample = Box::new(super::events::DiskSample {
            read,
            at: sent,
            took: sent.elapsed(),
        });
        self.send(PollEvent::Disks { node, sample }).await
    }

    /// A heartbeat reading between status polls: the applied position where it tells (one
    /// variable), else the table.
    pub async fn heartbeat_reading(&mut self) -> Result<(), Ended> {
        if self.by_position {
            if let Some(read) = read_applied(&mut self.conn, &self.spec.marks).await? {
                let node = self.spec.name.clone();
                return self.send(PollEvent::Applied { node, read }).await;
            }
            // No longer tells: the table this once.
            self.by_position = false;
        }
        let sent_at = Instant::now();
        let (rows, answered) = self.conn.query_lead(&self.beat_sql).await?;
        let took = answered.duration_since(sent_at);
        self.send(heartbeat_event(self.spec, &rows, sent_at, took))
            .await
    }
}

/// How long a reported host name may take to resolve before it counts as not resolving.
const RESOLVE_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

/// Notes the reported replicas whose host resolves from here; an address counts as resolving.
async fn resolve(sample: &mut super::events::NodeSample, known: &mut HashMap<String, bool>) {
    for reported in sample.reported.replica_hosts.iter().flatten() {
        let host = &reported.host;
        let resolves = if host.parse::<std::net::IpAddr>().is_ok() {
            true
        } else if let Some(&resolves) = known.get(host) {
            resolves
        } else {
            let lookup = tokio::net::lookup_host((host.as_str(), reported.port));
            let resolves = match tokio::time::timeout(RESOLVE_WITHIN, lookup).await {
                Ok(Ok(mut addrs)) => addrs.next().is_some(),
                _ => false,
            };
            known.insert(host.clone(), resolves);
            resolves
        };
        if resolves {
            sample.resolving.insert(host.clone());
        }
    }
}
