//! One connection of the heartbeat writer, as a type with named steps: [`Writer::open`] (refuse
//! a read-only node or a table that is not rwtop's, learn where the run starts), then at each
//! tick [`Writer::tick`]: try for the named lock when due, pass the own-table gate and write the
//! next heartbeat, or watch the holder's row move; and acknowledge each heartbeat to the store
//! and the pollers. What it keeps between ticks and decides from that alone is [`Serving`],
//! tested without a server. `heartbeat::run` owns the connection's lifetime and the move after a
//! failover; the writer's whole story is in `heartbeat.rs`'s header.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::beat_gtid::{Marks, Run};
use super::events::{PollEvent, WriterState};
use crate::gtid::DomainGtid;
use crate::mysql::{Endpoint, NodeConn, RawRow, SqlError, Timeouts, literal, own_tables};
use crate::topology::{TableGate, Topology};

/// How often an observer tries to take the lock over from a writer that may have gone away,
/// and a refused writer re-checks `read_only` (a failover can make the node writable).
pub(super) const RECHECK_EVERY: Duration = Duration::from_secs(5);

/// How long the first write waits for every node that answers to have had its copy of the
/// table read (`Topology::own_table_gate`); a node slower than this is not waited for.
const FIRST_WRITE_WAITS_AT_MOST: Duration = Duration::from_secs(10);

/// `ER_OPTION_PREVENTS_STATEMENT`: the server refused a write because of `read_only` (or
/// `super_read_only`).
const READ_ONLY_ERROR: u16 = 1290;

#[derive(Debug, Clone)]
pub struct WriterSpec {
    /// The node written to: the configured primary, then whichever took over from it.
    pub node: String,
    pub endpoint: Endpoint,
    /// Configured nodes the writer may move to; discovered ones get the primary's credentials.
    pub others: BTreeMap<String, Endpoint>,
    pub timeouts: Timeouts,
    pub interval: Duration,
    pub writer_id: String,
    /// This writer's place among the engine's writers (one per root): its events carry it.
    pub index: usize,
    /// Where it keeps its run's first GTID for the pollers.
    pub marks: Arc<Marks>,
}

impl WriterSpec {
    /// The writer's `state`, as the event that reports it.
    pub(super) fn state(&self, state: WriterState) -> PollEvent {
        PollEvent::Writer {
            writer: self.index,
            state,
        }
    }
}

/// Reads the rows of `writer_ids` (one per root), each with its writer's id.
#[must_use]
pub fn heartbeat_read_sql(writer_ids: &[String]) -> String {
    // The row's age by the reading server's clock: an upper bound on lag when the ack history
    // cannot tell (UTC on both sides, so server time zones do not matter).
    let ids: Vec<String> = writer_ids.iter().map(|id| literal(id)).collect();
    let filter = match ids.as_slice() {
        [one] => format!("= {one}"),
        many => format!("IN ({})", many.join(", ")),
    };
    format!(
        "SELECT writer_id, seq, TIMESTAMPDIFF(MICROSECOND, ts, UTC_TIMESTAMP(6)) AS age_us \
         FROM rwtop.heartbeat WHERE writer_id {filter}"
    )
}

/// Tries for the writer's named lock, and says who holds it and who asks: a holder that is
/// this writer's own earlier session (stuck in a write the server has not finished) is told
/// apart from another rwtop.
fn lock_sql(writer_id: &str) -> String {
    let name = literal(&format!("rwtop-hb-{writer_id}"));
    format!(
        "SELECT GET_LOCK({name}, 0) AS got, IS_USED_LOCK({name}) AS holder, CONNECTION_ID() AS me"
    )
}

fn write_sql(writer_id: &str, seq: u64) -> String {
    format!(
        "INSERT INTO rwtop.heartbeat (writer_id, seq, ts) VALUES ({}, {seq}, UTC_TIMESTAMP(6)) \
         ON DUPLICATE KEY UPDATE seq = VALUES(seq), ts = VALUES(ts)",
        literal(writer_id)
    )
}

/// Whether a write failed because the node turned read-only between the check and the write.
fn refused_by_read_only(err: &SqlError) -> bool {
    matches!(
        err,
        SqlError::Server {
            code: READ_ONLY_ERROR,
            ..
        }
    )
}

/// How a connection's serving ended, when it did not fail.
pub(super) enum Served {
    Stopped,
    /// The node is read-only or its table is not rwtop's: looked at again later.
    Refused,
}

/// What a serving writer listens to and reports to, and what it hands from one connection to
/// the next.
pub(super) struct Watch<'a, T> {
    pub events: &'a mpsc::Sender<PollEvent>,
    pub stop: &'a mut watch::Receiver<bool>,
    pub snapshots: &'a watch::Receiver<Arc<T>>,
    /// The server's id of the writer's last session that held the lock: when a later one finds
    /// the lock held by it, that session is this writer's own, stuck in a write.
    pub held_by: &'a mut Option<u64>,
}

/// Serves one connection until it fails, the node refuses, or the engine stops: a [`Writer`]
/// opened on it, ticking every `interval`.
pub(super) async fn serve<T: Topology>(
    spec: &WriterSpec,
    conn: NodeConn,
    watch: Watch<'_, T>,
    failures: &mut u32,
) -> Result<Served, SqlError> {
    let Watch {
        events,
        stop,
        snapshots,
        held_by,
    } = watch;
    let mut writer = match Writer::open(spec, conn, events, *held_by).await? {
        Opened::Serving(writer) => writer,
        Opened::Done(served) => return Ok(served),
    };
    let mut ticker = tokio::time::interval(spec.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.changed() => {
                writer.conn.close().await;
                return Ok(Served::Stopped);
            }
        }
        let outcome = writer.tick(snapshots, failures).await;
        if let Some(me) = writer.serving.held_by_me {
            *held_by = Some(me);
        }
        match outcome? {
            Ticked::Next => {}
            Ticked::Refuse => return Ok(refuse(spec, writer.conn, events).await),
            Ticked::Stopped => return Ok(Served::Stopped),
        }
    }
}

/// Says why nothing is written and closes the connection; the caller re-checks later.
async fn refuse(spec: &WriterSpec, conn: NodeConn, events: &mpsc::Sender<PollEvent>) -> Served {
    let reason = format!(
        "{} has read_only=ON: rwtop writes its heartbeat only to a writable primary",
        spec.endpoint.address()
    );
    let _ = events
        .send(spec.state(WriterState::Refused { reason }))
        .await;
    conn.close().await;
    Served::Refused
}

/// Look before writing: a copy of the table that is not rwtop's would send row images a replica
/// below may not be able to apply. Says what differs, closes the connection; the caller looks
/// again later.
async fn refuse_table(
    spec: &WriterSpec,
    conn: NodeConn,
    events: &mpsc::Sender<PollEvent>,
    mismatch: own_tables::Mismatch,
) -> Served {
    let _ = events
        .send(spec.state(WriterState::Unsafe { mismatch }))
        .await;
    conn.close().await;
    Served::Refused
}

/// How an opened connection goes on.
enum Opened<'a> {
    Serving(Box<Writer<'a>>),
    Done(Served),
}

/// What a tick leaves the connection to do.
enum Ticked {
    Next,
    /// The node turned read-only: refused, the connection closed.
    Refuse,
    /// The store is gone.
    Stopped,
}

/// What a tick's write came to.
enum Wrote {
    /// The own-table gate holds the writes back this tick.
    Held,
    /// The node is read-only.
    Refused,
    /// Heartbeat `seq` written, with its GTID where the write's round trip asked it.
    Beat(u64, Option<DomainGtid>),
}

/// A writer serving one connection.
struct Writer<'a> {
    spec: &'a WriterSpec,
    conn: NodeConn,
    events: &'a mpsc::Sender<PollEvent>,
    /// Each write's GTID is asked in its round trip with this, where the flavor tells a session
    /// its own (`Flavor::own_last_gtid_sql`).
    asks_gtid: Option<&'static str>,
    serving: Serving,
}

impl<'a> Writer<'a> {
    /// Opens a run on `conn`: nothing on a read-only node or one whose table is not rwtop's;
    /// else the session's last GTID before its first heartbeat, and the row's sequence number.
    async fn open(
        spec: &'a WriterSpec,
        mut conn: NodeConn,
        events: &'a mpsc::Sender<PollEvent>,
        held_before: Option<u64>,
    ) -> Result<Opened<'a>, SqlError> {
        // A new connection starts a new run, and until it writes no position can be read by it.
        spec.marks.set(spec.index, None);
        if conn.is_read_only().await? {
            return Ok(Opened::Done(refuse(spec, conn, events).await));
        }
        if let Some(mismatch) = own_tables::ensure(&mut conn, &own_tables::HEARTBEAT).await? {
            return Ok(Opened::Done(
                refuse_table(spec, conn, events, mismatch).await,
            ));
        }
        let asks_gtid = conn.flavor().own_last_gtid_sql();
        let answer = match asks_gtid {
            Some(sql) => {
                let rows = conn.query_rows(sql).await?;
                conn.flavor().own_last_gtid(&rows)
            }
            None => None,
        };
        let last_seen = row_seq(&mut conn, spec).await?;
        let mut serving = Serving::new(Run::after(answer), last_seen, Instant::now());
        serving.held_before = held_before;
        Ok(Opened::Serving(Box::new(Self {
            spec,
            conn,
            events,
            asks_gtid,
            serving,
        })))
    }

    /// One tick: the lock when due, then the write or the watch, and the acknowledgement of a
    /// heartbeat written or seen.
    async fn tick<T: Topology>(
        &mut self,
        snapshots: &watch::Receiver<Arc<T>>,
        failures: &mut u32,
    ) -> Result<Ticked, SqlError> {
        if self.serving.lock_due(Instant::now()) {
            self.take_lock().await?;
        }
        let acked = if self.serving.writing {
            match self.write_next(snapshots).await? {
                Wrote::Held => return Ok(Ticked::Next),
                Wrote::Refused => return Ok(Ticked::Refuse),
                Wrote::Beat(seq, gtid) => Some((seq, gtid)),
            }
        } else {
            self.observe().await?
        };
        Ok(match acked {
            Some((seq, answer)) => self.acknowledge(seq, answer, failures).await,
            None => Ticked::Next,
        })
    }

    /// Tries for the named lock: whoever holds it writes, the others watch its row (or wait for
    /// this writer's own earlier session to let go).
    async fn take_lock(&mut self) -> Result<(), SqlError> {
        let got = self
            .conn
            .query_rows(&lock_sql(&self.spec.writer_id))
            .await?;
        let state = self.serving.locked(&got);
        let _ = self.events.send(self.spec.state(state)).await;
        Ok(())
    }

    /// Writes the next heartbeat when the gate lets it through and the node is writable.
    async fn write_next<T: Topology>(
        &mut self,
        snapshots: &watch::Receiver<Arc<T>>,
    ) -> Result<Wrote, SqlError> {
        let table = own_tables::HEARTBEAT.qualified();
        let answer = snapshots.borrow().own_table_gate(&self.spec.node, &table);
        let gated = self.serving.gate(answer, &self.spec.node, Instant::now());
        if let Some(state) = gated.report {
            let _ = self.events.try_send(self.spec.state(state));
        }
        if !gated.open {
            return Ok(Wrote::Held);
        }
        if self.conn.is_read_only().await? {
            return Ok(Wrote::Refused);
        }
        let seq = self.serving.next_seq();
        match self.write(seq).await {
            Ok(gtid) => Ok(Wrote::Beat(seq, gtid)),
            Err(err) if refused_by_read_only(&err) => Ok(Wrote::Refused),
            Err(err) => Err(err),
        }
    }

    /// Writes heartbeat `seq`; where the flavor tells a session its own last GTID, reads it in
    /// the same round trip ([`Run::next`] tells whether the write got one).
    async fn write(&mut self, seq: u64) -> Result<Option<DomainGtid>, SqlError> {
        let write = write_sql(&self.spec.writer_id, seq);
        let Some(ask) = self.asks_gtid else {
            self.conn.query_rows(&write).await?;
            return Ok(None);
        };
        let sets = self.conn.query_sets(&[&write, ask]).await?;
        Ok(sets
            .get(1)
            .and_then(|rows| self.conn.flavor().own_last_gtid(rows)))
    }

    /// Observing: the instant a new sequence number is first seen bounds its commit time from
    /// above by one interval.
    async fn observe(&mut self) -> Result<Option<(u64, Option<DomainGtid>)>, SqlError> {
        let seq = row_seq(&mut self.conn, self.spec).await?;
        Ok(self.serving.moved(seq).map(|seq| (seq, None)))
    }

    /// Heartbeat `seq` was written or seen, the session's last GTID then being `answer`: the
    /// store gets the acknowledgement, then the pollers the run's mark, so that a poller that
    /// reads by it sends its reading after the store has the ack.
    async fn acknowledge(
        &mut self,
        seq: u64,
        answer: Option<DomainGtid>,
        failures: &mut u32,
    ) -> Ticked {
        *failures = 0;
        let at = Instant::now();
        let writer = self.spec.index;
        let (gtid, mark) = self.serving.acked(seq, answer);
        let ack = PollEvent::Ack {
            writer,
            seq,
            at,
            gtid,
        };
        if self.events.send(ack).await.is_err() {
            return Ticked::Stopped;
        }
        self.spec
            .marks
            .acknowledged(writer, mark, gtid.map(|gtid| (gtid, at)));
        Ticked::Next
    }
}

/// The sequence number of the writer's own row; `None` while there is none.
async fn row_seq(conn: &mut NodeConn, spec: &WriterSpec) -> Result<Option<u64>, SqlError> {
    let rows = conn
        .query_rows(&heartbeat_read_sql(std::slice::from_ref(&spec.writer_id)))
        .await?;
    Ok(rows
        .first()
        .and_then(|r| r.optional_u64(&["seq"]).ok().flatten()))
}

/// What a writer keeps between the ticks of one connection, and what it decides from that
/// alone: when to try for the lock, whether the gate lets a write through, which sequence
/// number comes next, and whether a watched row moved.
#[derive(Debug)]
struct Serving {
    /// This connection holds the named lock and writes; else it watches the holder's row.
    writing: bool,
    /// The newest sequence number written or seen.
    last_seen: Option<u64>,
    run: Run,
    /// When the connection opened: the first write waits at most
    /// [`FIRST_WRITE_WAITS_AT_MOST`] from then for the gate.
    since: Instant,
    /// Why the gate holds the writes back, as last reported; `None`: it lets them through.
    blocked: Option<String>,
    last_lock_try: Option<Instant>,
    /// The server's id of the writer's session before this one that held the lock.
    held_before: Option<u64>,
    /// This session's id once it holds the lock.
    held_by_me: Option<u64>,
    /// The lock is held by the writer's own earlier session: tried again every tick, since it
    /// goes the moment that session's write ends.
    own_holder: bool,
}

/// The own-table gate's answer for one tick ([`Serving::gate`]).
#[derive(Debug, PartialEq, Eq)]
struct Gated {
    /// The tick may write.
    open: bool,
    /// The writer's state to report, when the answer changed.
    report: Option<WriterState>,
}

impl Serving {
    fn new(run: Run, last_seen: Option<u64>, since: Instant) -> Self {
        Self {
            writing: false,
            last_seen,
            run,
            since,
            blocked: None,
            last_lock_try: None,
            held_before: None,
            held_by_me: None,
            own_holder: false,
        }
    }

    /// Whether to try for the lock at `now`: never while holding it, else at once and every
    /// [`RECHECK_EVERY`] (the holder may have gone away); a try counts from `now`.
    fn lock_due(&mut self, now: Instant) -> bool {
        let tried_lately = !self.own_holder
            && self
                .last_lock_try
                .is_some_and(|t| now.saturating_duration_since(t) < RECHECK_EVERY);
        if self.writing || tried_lately {
            return false;
        }
        self.last_lock_try = Some(now);
        true
    }

    /// The lock statement answered `rows`: this connection writes when it got the lock, and
    /// watches its holder's row when not (or when the answer is unreadable).
    fn locked(&mut self, rows: &[RawRow]) -> WriterState {
        let number = |name: &str| {
            rows.first()
                .and_then(|r| r.optional_u64(&[name]).ok().flatten())
        };
        self.writing = number("got") == Some(1);
        let holder = number("holder");
        self.own_holder = !self.writing && holder.is_some() && holder == self.held_before;
        if self.writing {
            self.held_by_me = number("me");
            WriterState::Writing
        } else if self.own_holder {
            WriterState::Failing {
                cause: "the writer's previous session still holds its lock, in a write the \
                        server has not finished (a Galera cluster stalling its commits, or a \
                        long lock wait): writing again as soon as it ends"
                    .to_owned(),
            }
        } else {
            WriterState::Observing
        }
    }

    /// Whether this tick may write on `node`, by the topology's `answer` at `now`: the nodes
    /// below the root hold copies that take rwtop's rows. A change of answer is reported as the
    /// writer's state.
    fn gate(&mut self, answer: TableGate, node: &str, now: Instant) -> Gated {
        let waited = now.saturating_duration_since(self.since);
        let reason = match answer {
            TableGate::Wait if waited < FIRST_WRITE_WAITS_AT_MOST => {
                return Gated {
                    open: false,
                    report: None,
                };
            }
            TableGate::Open | TableGate::Wait => None,
            TableGate::Unsafe(why) => Some(format!(
                "{why}: its channel would stop, so rwtop writes no heartbeat on {node} until \
                 that copy is fixed (rwtop lint: own_table)"
            )),
        };
        let report = (self.blocked != reason).then(|| match &reason {
            Some(reason) => WriterState::Refused {
                reason: reason.clone(),
            },
            None => WriterState::Writing,
        });
        self.blocked.clone_from(&reason);
        Gated {
            open: reason.is_none(),
            report,
        }
    }

    /// The sequence number the next write gives the row: one past the newest written or seen.
    fn next_seq(&self) -> u64 {
        self.last_seen.unwrap_or(0) + 1
    }

    /// The watched row's `seq`, when it moved since the last tick.
    fn moved(&self, seq: Option<u64>) -> Option<u64> {
        (seq != self.last_seen).then_some(seq).flatten()
    }

    /// Heartbeat `seq` was written or seen, the session's last GTID then being `answer`: its
    /// GTID, and the run's mark when that changed ([`Run::next`]).
    #[expect(
        clippy::option_option,
        reason = "`Run::next`'s mark as it is: `None` unchanged, `Some(None)` no run to read by"
    )]
    fn acked(
        &mut self,
        seq: u64,
        answer: Option<DomainGtid>,
    ) -> (Option<DomainGtid>, Option<Option<DomainGtid>>) {
        self.last_seen = Some(seq);
        self.run.next(answer)
    }
}

#[cfg(test)]
#[path = "beat_write_tests.rs"]
mod tests;
