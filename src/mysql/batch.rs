//! Several statements in one round trip, and the status poll built on it.
//!
//! Every status poll asks a node the same two to four things (replication status, its own GTID
//! and `read_only` state, and where a replica needs them its binlog coordinate and, every few
//! polls, its binlog list). Sent one by one that is a round trip each, and at 1,000 nodes the
//! round trips — loopback TCP, a wakeup of the poller's task and of the server's thread — are
//! most of rwtop's CPU. `mysql_async` opens connections with `CLIENT_MULTI_STATEMENTS`, so they
//! go as one text query and come back as consecutive result sets. A statement that fails ends
//! the batch (the server runs none after it); the error names that statement, as it would have
//! alone. The same timeout covers the whole batch (a timeout names the whole batch), and a
//! timed-out or broken batch drops the connection as a single query does.
//! Discovery and the processlist ride in the same batch; should one be refused (a missing
//! grant), the ones after it are asked again alone. The server's clock and the heartbeat read
//! ride in front of it when they are due with it ([`PollParts::clock`], [`Ask::lead`]): one round trip
//! instead of three, each still run within microseconds of the batch being sent. Once a
//! heartbeat read has found its table, later batches send it as `EXECUTE` of the same read
//! prepared on the connection (`prepared.rs`).

use std::time::{Duration, Instant};

use mysql_async::Row;
use mysql_async::prelude::Queryable;

use super::binlog::{BinlogFile, BinlogStatus};
use super::conn::{NodeConn, SqlError, first_row, judged, parse_answer, raw_rows};
use super::node_state::NodeState;
use super::processlist::Processlist;
use super::replica_hosts::ReplicaHost;
use super::replica_status::{ReplicaStatus, StatusError};
use super::row::RawRow;
use super::semisync::SemiSync;

/// Which statements a status poll adds to what every poll reads (replication status and the
/// node's own state): the one question of a poll, from the poller's cadence
/// (`poll/cadence.rs` builds it poll by poll) to the batch here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent statements of one batch, each asked or not, not a state machine"
)]
pub struct PollParts {
    /// The node's own binlog coordinate; a poll leaves it out where nobody replicates from the
    /// node (`poll/feeds.rs`).
    pub binlog: bool,
    pub binlog_files: bool,
    /// `SHOW SLAVE HOSTS` (discovery); a missing grant leaves it `None`, never fails the poll.
    pub replica_hosts: bool,
    /// One processlist scan; a missing grant leaves it `None`, never fails the poll.
    pub processes: bool,
    /// The server's UTC clock ([`CLOCK_SQL`]), first in the batch: it is read between sending
    /// and [`Status::first_answer`].
    pub clock: bool,
    /// The online schema change tools' tables, by name ([`super::osc::DETECT_SQL`]); a refusal
    /// leaves them unread, never fails the poll.
    pub osc: bool,
    /// Semi-sync's settings (one statement); a refusal leaves semi-sync unread, never fails
    /// the poll. Every poll where semi-sync is on, every 5th where it is off (the poller carries
    /// the last reading between: `poll/session.rs`).
    pub semisync: bool,
    /// Semi-sync's state and counters (`SHOW GLOBAL STATUS`, the costlier statement), with its
    /// settings: every poll where it is on; where it is off they stand still, and are read at
    /// the first poll and every 60th (the settings show a switch-on).
    pub semisync_status: bool,
    /// A Galera member's status (`galera.rs`, `MariaDB` only): every poll of a member, the
    /// first and every 60th of any other node (a server can join a cluster only by a
    /// restart, which reconnects); a refusal leaves it unread, never fails the poll.
    pub galera: bool,
}

impl PollParts {
    pub const ALL: Self = Self {
        binlog: true,
        binlog_files: true,
        replica_hosts: true,
        processes: true,
        clock: true,
        osc: true,
        semisync: true,
        semisync_status: true,
        galera: true,
    };
}

/// A status poll's question: its parts, and a read sent ahead of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ask<'a> {
    pub parts: PollParts,
    /// A read of a table that may not be there yet (the heartbeat row), sent ahead of the
    /// status: its rows come back in [`Status::lead`]; a missing schema or table reads as no
    /// rows, as [`NodeConn::query_rows_if_table`] does, and any other refusal is the read's own
    /// error there (the status is asked again without it).
    pub lead: Option<&'a str>,
}

/// What a node reported in one status poll: the one answer, carried as it is from the batch
/// through the poller's sample (`poll::NodeSample`) to the store.
#[derive(Debug, Clone)]
pub struct Reported {
    /// Every replication channel; empty on a node that replicates from nothing.
    pub replication: Vec<ReplicaStatus>,
    pub state: NodeState,
    /// The node's own binlog coordinate; `None` when binary logging is off or not asked.
    pub binlog: Option<BinlogStatus>,
    /// The binlog list, when asked for and binary logging is on.
    pub binlog_files: Option<Vec<BinlogFile>>,
    /// When asked (discovery); `None` when not read this time or not permitted.
    pub replica_hosts: Option<Vec<ReplicaHost>>,
    /// When asked; `None` when not read this time or not permitted (no `PROCESS` grant).
    pub processes: Option<Processlist>,
    /// Online schema change runs, when the tools' tables were looked for (`Some(empty)`: none
    /// found); `None` when not looked for this time.
    pub osc: Option<Vec<super::OscRun>>,
    /// Semi-sync switches and counters (both sides), when asked ([`PollParts::semisync`]);
    /// `None` when not asked, refused or unreadable. A server without the plugins reports
    /// [`SemiSync::default`].
    pub semisync: Option<SemiSync>,
    /// Galera, when asked ([`PollParts::galera`]): a member's status, or not a member; `None`
    /// when not asked or refused.
    pub galera: Option<super::galera::Wsrep>,
}

impl Reported {
    /// A poll that asked nothing occasional: the channels and the node's state alone.
    #[must_use]
    pub fn status_only(replication: Vec<ReplicaStatus>, state: NodeState) -> Self {
        Self {
            replication,
            state,
            binlog: None,
            binlog_files: None,
            replica_hosts: None,
            processes: None,
            osc: None,
            semisync: None,
            galera: None,
        }
    }
}

/// A status poll's answer: what the node reported, and what rode in front of it.
#[derive(Debug)]
pub struct Status {
    pub reported: Reported,
    /// The row of [`CLOCK_SQL`], when asked.
    pub clock: Option<Vec<RawRow>>,
    /// The lead statement's answer, when one was asked: its rows, or the server's refusal.
    pub lead: Option<Result<Vec<RawRow>, SqlError>>,
    /// How long after sending the batch its first answer came back.
    pub first_answer: Duration,
    /// The tools' tables [`PollParts::osc`] found, when asked and answered: the poller reads
    /// the runs behind them (`NodeConn::osc_runs`) into [`Reported::osc`].
    pub osc_tables: Option<Vec<super::osc::ToolTable>>,
}

/// The server's UTC clock to the microsecond.
pub const CLOCK_SQL: &str = "SELECT UTC_TIMESTAMP(6) AS now_utc";

/// The statements of one status poll, in the order they are sent: replication status first,
/// then the node's own state and binlog (a replica's GTID state read after its replication
/// status can only be newer), then the optional parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Clock,
    Lead,
    Replication,
    State,
    Binlog,
    BinlogFiles,
    ReplicaHosts,
    Processes,
    /// `MySQL` 8's worker table, read with the processlist scan (`appliers::workers_sql`).
    Workers,
    /// `MySQL` 8's newest queued transaction per channel (`queued::queued_sql`), on every poll
    /// of a replica.
    Queued,
    Osc,
    /// Semi-sync settings and status counters, two statements (`semisync.rs`).
    SemiSyncVariables,
    SemiSyncStatus,
    Galera,
}

impl Part {
    /// Whether a server error leaves the part out instead of failing the poll: any refusal of
    /// an optional part (a missing grant) or of the lead (kept as the lead's answer).
    fn skips(self) -> bool {
        matches!(
            self,
            Self::Lead
                | Self::ReplicaHosts
                | Self::Processes
                | Self::Workers
                | Self::Queued
                | Self::Osc
                | Self::SemiSyncVariables
                | Self::SemiSyncStatus
                | Self::Galera
        )
    }
}

impl NodeConn {
    /// Runs `sqls` as one query and returns each statement's rows, in order.
    pub async fn query_sets(&mut self, sqls: &[&str]) -> Result<Vec<Vec<RawRow>>, SqlError> {
        match self.query_sets_partly(sqls).await {
            Answered {
                sets, error: None, ..
            } => Ok(sets),
            Answered {
                error: Some(err), ..
            } => Err(err),
        }
    }

    /// [`Self::query_sets`], keeping the sets of the statements before a failing one, and the
    /// failure.
    pub(super) async fn query_sets_kept(
        &mut self,
        sqls: &[&str],
    ) -> (Vec<Vec<RawRow>>, Option<SqlError>) {
        let answered = self.query_sets_partly(sqls).await;
        (answered.sets, answered.error)
    }

    /// [`Self::query_sets`], keeping the sets of the statements before a failing one.
    async fn query_sets_partly(&mut self, sqls: &[&str]) -> Answered {
        let addr = self.addr.clone();
        let timeout = self.query_timeout;
        let sent = Instant::now();
        let mut first = None;
        let Some(conn) = self.conn.as_mut() else {
            let error = Some(SqlError::Closed { addr });
            return Answered {
                sets: Vec::new(),
                error,
                first,
            };
        };
        let joined = sqls.join(";\n");
        // What the batch had answered, for an error to name the statement it reached.
        let mut sets: Vec<Vec<RawRow>> = Vec::with_capacity(sqls.len());
        let work = async {
            let mut result = conn.query_iter(joined.as_str()).await?;
            while sets.len() < sqls.len() {
                let rows: Vec<Row> = result.collect().await?;
                first.get_or_insert_with(|| sent.elapsed());
                sets.push(raw_rows(rows));
            }
            // Anything past the statements sent (there is none) must not reach the next query.
            result.drop_result().await
        };
        let outcome = tokio::time::timeout(timeout, work).await;
        // A server error ends the batch at its statement, exactly. A timeout names the batch:
        // MariaDB 10.11 sends each statement's answer as it finishes (one `sendto` a statement
        // under strace), but where an answer was held up on the way is not known here.
        let failed = match &outcome {
            Ok(_) => sqls.get(sets.len()).copied().unwrap_or(joined.as_str()),
            Err(_) => joined.as_str(),
        };
        let error = judged(&mut self.conn, addr, timeout, failed, outcome).err();
        Answered { sets, error, first }
    }

    /// A status poll's statements in one round trip. Should an optional part fail with a
    /// server error, the optional parts after it (which the server did not run) are asked
    /// alone.
    pub async fn status(&mut self, ask: Ask<'_>) -> Result<Status, SqlError> {
        let lead_sql = ask.lead.map(|text| self.lead_sql(text));
        let status = self.status_batch(ask, lead_sql).await?;
        // A read that found rows is prepared from the next batch on.
        if let (Some(text), Some(Ok(rows))) = (ask.lead, &status.lead) {
            self.prepare_lead(text, rows).await?;
        }
        Ok(status)
    }

    async fn status_batch(
        &mut self,
        ask: Ask<'_>,
        lead_sql: Option<&str>,
    ) -> Result<Status, SqlError> {
        let flavor = self.flavor();
        let family = flavor.family;
        let log_bin = self.identity().log_bin;
        // Built only on the polls that scan (one in three).
        let processlist_sql = if ask.parts.processes {
            super::processlist::processlist_sql(flavor)
        } else {
            String::new()
        };
        let workers_sql = super::appliers::workers_sql(flavor);
        // One row per channel; none on a node that replicates from nothing.
        let queued_sql = super::queued::queued_sql(flavor);
        let sql = |part: Part| -> &str {
            match part {
                Part::Clock => CLOCK_SQL,
                Part::Lead => lead_sql.unwrap_or_default(),
                Part::Replication => flavor.replica_status_sql(),
                Part::State => flavor.state_sql(),
                Part::Binlog => flavor.binlog_status_sql(),
                Part::BinlogFiles => flavor.binlog_list_sql(),
                Part::ReplicaHosts => flavor.replica_hosts_sql(),
                Part::Processes => &processlist_sql,
                Part::Workers => workers_sql.unwrap_or_default(),
                Part::Queued => queued_sql.unwrap_or_default(),
                Part::Osc => super::osc::DETECT_SQL,
                Part::SemiSyncVariables => flavor.semisync_variables_sql(),
                Part::SemiSyncStatus => flavor.semisync_status_sql(),
                Part::Galera => super::galera::STATUS_SQL,
            }
        };
        // The status only ever with the settings.
        let semisync_status = ask.parts.semisync && ask.parts.semisync_status;
        let parts: Vec<Part> = [
            (Part::Clock, ask.parts.clock),
            (Part::Lead, ask.lead.is_some()),
            (Part::Replication, true),
            (Part::State, true),
            (Part::Binlog, log_bin && ask.parts.binlog),
            (Part::BinlogFiles, log_bin && ask.parts.binlog_files),
            (Part::ReplicaHosts, ask.parts.replica_hosts),
            (Part::Processes, ask.parts.processes),
            (Part::Workers, ask.parts.processes && workers_sql.is_some()),
            (Part::Queued, queued_sql.is_some()),
            (Part::Osc, ask.parts.osc),
            (Part::SemiSyncVariables, ask.parts.semisync),
            (Part::SemiSyncStatus, semisync_status),
            (
                Part::Galera,
                ask.parts.galera && family == super::Family::Mariadb,
            ),
        ]
        .into_iter()
        .filter_map(|(part, asked)| asked.then_some(part))
        .collect();
        let sqls: Vec<String> = parts.iter().map(|p| sql(*p).to_owned()).collect();
        let mut answers = Answers {
            semisync_status_asked: semisync_status,
            ..Answers::default()
        };
        let mut from = 0;
        while from < parts.len() {
            let batch: Vec<&str> = sqls[from..].iter().map(String::as_str).collect();
            let Answered { sets, error, first } = self.query_sets_partly(&batch).await;
            if from == 0 {
                answers.first = first;
            }
            let answered = sets.len();
            for (part, rows) in parts[from..].iter().zip(sets) {
                answers.keep(*part, rows);
            }
            from += answered;
            match error {
                None => break,
                Some(err @ SqlError::Server { .. }) if parts[from].skips() => {
                    // The lead answers as it does alone (a missing table is no rows, another
                    // refusal the read's error); a refused optional part is unread.
                    if parts[from] == Part::Lead {
                        let err = super::prepared::named(err, ask.lead.unwrap_or_default());
                        answers.lead = Some(super::conn::rows_if_table(Err(err)));
                    }
                    from += 1;
                }
                Some(err) => return Err(err),
            }
        }
        let sql_of = |part| sqls[parts.iter().position(|p| *p == part).unwrap_or(0)].as_str();
        answers.parse(self.address(), family, sql_of)
    }
}

/// A batch's answers: each statement's rows up to a failing one, the error, and how long after
/// sending the first set came back.
struct Answered {
    sets: Vec<Vec<RawRow>>,
    error: Option<SqlError>,
    first: Option<Duration>,
}

/// Each part's rows as they came back; `None`: not asked, or left out.
#[derive(Default)]
struct Answers {
    clock: Option<Vec<RawRow>>,
    lead: Option<Result<Vec<RawRow>, SqlError>>,
    /// When the first batch's first set came back.
    first: Option<Duration>,
    replication: Vec<RawRow>,
    state: Vec<RawRow>,
    binlog: Option<Vec<RawRow>>,
    binlog_files: Option<Vec<RawRow>>,
    replica_hosts: Option<Vec<RawRow>>,
    processes: Option<Vec<RawRow>>,
    workers: Option<Vec<RawRow>>,
    queued: Option<Vec<RawRow>>,
    osc: Option<Vec<RawRow>>,
    semisync_variables: Option<Vec<RawRow>>,
    semisync_status: Option<Vec<RawRow>>,
    galera: Option<Vec<RawRow>>,
    /// Whether the status was asked with the settings: a settings-only read leaves the state
    /// and counters unread (the poller carries them), an unanswered status leaves all unknown.
    semisync_status_asked: bool,
}

impl Answers {
    /// The parts' rows parsed, each error naming its statement (`sql_of`).
    fn parse<'a>(
        self,
        addr: &str,
        family: super::Family,
        sql_of: impl Fn(Part) -> &'a str,
    ) -> Result<Status, SqlError> {
        let mut replication = parse_all(
            addr,
            sql_of(Part::Replication),
            &self.replication,
            ReplicaStatus::from_row,
        )?;
        if let Some(rows) = &self.queued {
            let queued = parse_answer(addr, sql_of(Part::Queued), super::queued::from_table(rows))?;
            super::queued::attach(&mut replication, &queued);
        }
        let state_sql = sql_of(Part::State);
        let state_row = first_row(addr, state_sql, self.state)?;
        let state = parse_answer(addr, state_sql, NodeState::from_row(&state_row, family))?;
        let asked_binlog = self.binlog.is_some();
        let binlog = match self.binlog {
            Some(rows) => parse_all(addr, sql_of(Part::Binlog), &rows, BinlogStatus::from_row)?
                .into_iter()
                .next(),
            None => None,
        };
        // No list where the server gave no coordinate it was asked for (binary logging off).
        let coordinate_missing = asked_binlog && binlog.is_none();
        let binlog_files = match self.binlog_files {
            Some(rows) if !coordinate_missing => Some(parse_all(
                addr,
                sql_of(Part::BinlogFiles),
                &rows,
                BinlogFile::from_row,
            )?),
            _ => None,
        };
        let replica_hosts = match self.replica_hosts {
            Some(rows) => Some(parse_all(
                addr,
                sql_of(Part::ReplicaHosts),
                &rows,
                ReplicaHost::from_row,
            )?),
            None => None,
        };
        let mut processes = match self.processes {
            Some(rows) => Some(parse_answer(
                addr,
                sql_of(Part::Processes),
                Processlist::from_rows(&rows),
            )?),
            None => None,
        };
        // The worker table fills the scan's workers; a refused table leaves them unread.
        if let (Some(list), Some(rows)) = (processes.as_mut(), self.workers) {
            let sql = sql_of(Part::Workers);
            list.workers = parse_answer(addr, sql, super::appliers::workers_from_table(&rows))?;
        }
        // Both statements asked or neither: a refused one leaves semi-sync unknown. The
        // settings alone, where the status was not asked, leave its state and counters unread.
        // A switch that reads as neither ON nor OFF fails the poll naming it, as every other
        // part does; counters that do not read as numbers are unknown (`semisync.rs`).
        let semisync = match (self.semisync_variables, self.semisync_status) {
            (Some(variables), Some(status)) => Some(parse_answer(
                addr,
                sql_of(Part::SemiSyncStatus),
                SemiSync::from_rows(&variables, &status),
            )?),
            (Some(variables), None) if !self.semisync_status_asked => Some(parse_answer(
                addr,
                sql_of(Part::SemiSyncVariables),
                SemiSync::from_rows(&variables, &[]),
            )?),
            _ => None,
        };
        Ok(Status {
            reported: Reported {
                replication,
                state,
                binlog,
                binlog_files,
                replica_hosts,
                processes,
                osc: None,
                semisync,
                galera: self.galera.as_deref().map(super::galera::Wsrep::from_rows),
            },
            clock: self.clock,
            lead: self.lead,
            first_answer: self.first.unwrap_or_default(),
            osc_tables: self.osc.as_deref().map(super::osc::tool_tables),
        })
    }

    fn keep(&mut self, part: Part, rows: Vec<RawRow>) {
        match part {
            Part::Clock => self.clock = Some(rows),
            Part::Lead => self.lead = Some(Ok(rows)),
            Part::Replication => self.replication = rows,
            Part::State => self.state = rows,
            Part::Binlog => self.binlog = Some(rows),
            Part::BinlogFiles => self.binlog_files = Some(rows),
            Part::ReplicaHosts => self.replica_hosts = Some(rows),
            Part::Processes => self.processes = Some(rows),
            Part::Workers => self.workers = Some(rows),
            Part::Queued => self.queued = Some(rows),
            Part::Osc => self.osc = Some(rows),
            Part::SemiSyncVariables => self.semisync_variables = Some(rows),
            Part::SemiSyncStatus => self.semisync_status = Some(rows),
            Part::Galera => self.galera = Some(rows),
        }
    }
}

fn parse_all<T>(
    addr: &str,
    sql: &str,
    rows: &[RawRow],
    parse: fn(&RawRow) -> Result<T, StatusError>,
) -> Result<Vec<T>, SqlError> {
    parse_answer(addr, sql, rows.iter().map(parse).collect())
}
