//! One connection's polling, as a type with named steps: the status poll (with the heartbeat
//! reading and the clock sample riding in front of it when due), the lint's settings, the
//! account's grants and the disks when due, and a heartbeat reading on its own between polls;
//! and, when a scan shows a DDL waiting for a lock, who holds it. Each step asks [`Learned`]
//! what to send and what the answer means, and sends the statements and the events itself.
//! `node_poller::run` owns the connection's lifetime (connect, back-off); the tick schedule
//! lives in `node_poller::poll_connected`.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::beat_read::{heartbeat_event, heartbeat_sql, read_applied};
use super::ended::{Ended, unless_refused};
use super::events::{ConnState, DiskSample, NodeSample, PollEvent};
use super::key_cache::KeyCache;
use super::learned::Learned;
use super::pace::ReadPace;
use super::pt_heartbeat;
use super::spec::PollerSpec;
use super::status_poll::poll_status;
use crate::mysql::galera::out_of_component;
use crate::mysql::{DisksUnavailable, NodeConn, lock_holders};

pub(super) struct Session<'a> {
    spec: &'a PollerSpec,
    pub conn: NodeConn,
    events: &'a mpsc::Sender<PollEvent>,
    learned: Learned<'a>,
    /// A connection of the disks' own, opened after a `GRANT FILE` this one predates.
    disks_conn: Option<NodeConn>,
    /// Which reported host names resolve, looked up once per connection.
    resolved: HashMap<String, bool>,
    /// Whether the tables the appliers apply row events on have a key, per table.
    keys: KeyCache,
    beat_sql: String,
}

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
            learned: Learned::new(spec),
            disks_conn: None,
            resolved: HashMap::new(),
            keys: KeyCache::default(),
            beat_sql: heartbeat_sql(&spec.heartbeat),
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

    /// The account's grants, when due ([`Learned::grants_due`]): what this run needs and the
    /// account lacks goes to the store, each with what goes off. Grants that differ from those
    /// read at connect end the session ([`Ended::Regranted`]). A refused `SHOW GRANTS` leaves
    /// them unread.
    pub async fn grants_when_due(&mut self) -> Result<(), Ended> {
        if !self.learned.grants_due(Instant::now()) {
            return Ok(());
        }
        let Some(held) = unless_refused(self.conn.grants().await)? else {
            return Ok(());
        };
        let family = self.conn.flavor().family;
        let Some(missing) = self.learned.grants_read(held, family)? else {
            return Ok(());
        };
        let node = self.spec.name.clone();
        self.send(PollEvent::Grants { node, missing }).await
    }

    async fn send(&self, event: PollEvent) -> Result<(), Ended> {
        self.events.send(event).await.map_err(|_| Ended::Stopped)
    }

    /// Whether a heartbeat reading is this node's to make now ([`Learned::reads`]).
    pub fn reads(&self) -> bool {
        self.learned.reads()
    }

    /// How often the status is polled and the heartbeat read now ([`Learned::every`]).
    pub fn every(&self, pace: &ReadPace) -> (Duration, Duration) {
        self.learned.every(pace, Instant::now())
    }

    /// The status poll, with the heartbeat reading in front of it when `read_due` (or the
    /// applied position standing for it), and the clock sample when the cadence has it. True
    /// when it made this tick's heartbeat reading.
    pub async fn status_poll(&mut self, read_due: bool, failures: &mut u32) -> Result<bool, Ended> {
        let asked = self.learned.ask(read_due);
        let lead = asked.lead.then_some(self.beat_sql.as_str());
        let sent_utc = chrono::Utc::now();
        let tail = self.learned.list_tail();
        let (mut sample, ahead) = poll_status(&mut self.conn, asked.parts, lead, tail).await?;
        let heard = self.learned.heard(&asked, &mut sample, Instant::now());
        if heard.ddl {
            self.keys.forget();
        }
        // Only while a scan names a table: one lookup per table not known yet.
        if let Some(list) = sample.reported.processes.as_mut()
            && !list.row_events.is_empty()
        {
            let now = std::time::Instant::now();
            self.keys.fill(&mut self.conn, list, now).await?;
        }
        resolve(&mut sample, &mut self.resolved).await;
        let node = self.spec.name.clone();
        if heard.up {
            let state = ConnState::Up;
            let _ = self
                .events
                .send(PollEvent::Conn {
                    node: node.clone(),
                    state,
                })
                .await;
        }
        if heard.steady {
            *failures = 0;
        }
        self.name_blockers(&mut sample).await?;
        let sent_at = sample.at;
        self.send(PollEvent::Sample {
            node: node.clone(),
            sample: Box::new(sample),
        })
        .await?;
        let mut read_done = false;
        if let Some(read) = ahead.lead {
            read_done = true;
            // A refused read ends the session after the sample, as it does alone.
            let event = self.beat_event(read, sent_at, ahead.first_answer)?;
            self.send(event).await?;
        } else if let Some(read) = heard.applied {
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
    async fn name_blockers(&mut self, sample: &mut NodeSample) -> Result<(), Ended> {
        let Some(list) = sample.reported.processes.as_mut() else {
            return Ok(());
        };
        if list.ddl.iter().all(|d| d.waiting_for.is_none()) {
            return Ok(());
        }
        let Some(rows) = unless_refused(self.conn.lock_rows().await)? else {
            return Ok(());
        };
        for ddl in &mut list.ddl {
            ddl.blockers = lock_holders::name_holders(ddl, &rows);
        }
        Ok(())
    }

    /// The lint's settings, when due ([`Learned::settings_due`]): beside the status poll
    /// (never in it). A statement the server refuses (a privilege, a variable an unusual build
    /// lacks) leaves them unread rather than taking the node's monitoring down.
    pub async fn settings_when_due(&mut self) -> Result<(), Ended> {
        let now = Instant::now();
        if !self.learned.settings_due(now) {
            return Ok(());
        }
        let Some(settings) = unless_refused(self.conn.settings().await)? else {
            return Ok(());
        };
        self.learned
            .settings_read(now, !settings.own_tables.is_empty());
        let settings = Box::new(settings);
        let node = self.spec.name.clone();
        let _ = self
            .events
            .send(PollEvent::Settings { node, settings })
            .await;
        Ok(())
    }

    /// The node's disks, when opted in and due: beside the status poll, every
    /// [`PollerSpec::disks_every`]. A missing plugin or grant is the read's own answer; a
    /// statement the server refuses otherwise leaves them unread this time.
    ///
    /// A server keeps a connection's global privileges from when it connected, so a `GRANT
    /// FILE` given since never reaches the poll's connection: where that one reads no disk, the
    /// read is made again on a new connection, kept for the disks once it reads them.
    pub async fn disks_when_due(&mut self) -> Result<(), Ended> {
        if !self.learned.disks_due(Instant::now()) {
            return Ok(());
        }
        let sent = std::time::Instant::now();
        let user = self.spec.endpoint.user.clone();
        let conn = self.disks_conn.as_mut().unwrap_or(&mut self.conn);
        let mut read = match unless_refused(conn.disks(&user).await) {
            Ok(Some(read)) => read,
            Ok(None) => return Ok(()),
            Err(_) if self.disks_conn.is_some() => {
                // Only the disks' own connection failed: opened again at the next read.
                self.disks_conn = None;
                return Ok(());
            }
            Err(end) => return Err(end),
        };
        if matches!(read.disks, Err(DisksUnavailable::NoGrant { .. })) {
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
        let sample = Box::new(DiskSample {
            read,
            at: sent,
            took: sent.elapsed(),
        });
        self.send(PollEvent::Disks { node, sample }).await
    }

    /// A heartbeat reading between status polls: the applied position where it tells (one
    /// variable), else the table.
    pub async fn heartbeat_reading(&mut self) -> Result<(), Ended> {
        if self.learned.by_position() {
            if let Some(read) = read_applied(&mut self.conn, &self.spec.marks).await? {
                let node = self.spec.name.clone();
                return self.send(PollEvent::Applied { node, read }).await;
            }
            // No longer tells: the table this once.
            self.learned.position_lost();
        }
        let sent_at = std::time::Instant::now();
        let answer = self.conn.query_lead(&self.beat_sql).await;
        let took = answer.as_ref().map_or(Duration::ZERO, |(_, answered)| {
            answered.duration_since(sent_at)
        });
        let event = self.beat_event(answer.map(|(rows, _)| rows), sent_at, took)?;
        self.send(event).await
    }

    /// The event a heartbeat read sent at `sent_at` makes. A Galera member out of the primary
    /// component refuses table reads (error 1047): news of the member, not a failed
    /// connection. Any other refusal ends the session.
    fn beat_event(
        &self,
        answer: Result<Vec<crate::mysql::RawRow>, crate::mysql::SqlError>,
        sent_at: std::time::Instant,
        rtt: Duration,
    ) -> Result<PollEvent, Ended> {
        let node = self.spec.name.clone();
        match answer {
            Err(err) if out_of_component(&err) => Ok(PollEvent::OutOfComponent { node, sent_at }),
            answer => Ok(heartbeat_event(self.spec, &answer?, sent_at, rtt)),
        }
    }
}

/// How long a reported host name may take to resolve before it counts as not resolving.
const RESOLVE_WITHIN: Duration = Duration::from_secs(1);

/// Notes the reported replicas whose host resolves from here; an address counts as resolving.
async fn resolve(sample: &mut NodeSample, known: &mut HashMap<String, bool>) {
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
