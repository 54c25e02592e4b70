//! Each strategy's wait after the write, ending in where the read goes.
//!
//! Every strategy judges the channel aimed at ([`Aim`]): its status row, its root's binlog
//! position and GTID, its lag. "The primary" below is that root: the node the marker was written
//! on, which a fallback reads.
//!
//! Every wait-function return value has a defined meaning here: success reads the replica, a
//! timeout falls back to the root with "timeout after …", and `NULL` from `MASTER_POS_WAIT`
//! falls back at once with its own cause (the SQL thread stopped, or the position is not
//! comparable on that replica), never confused with a timeout.

use std::time::{Duration, Instant};

use super::Strategy;
use super::attempt::{Attempt, ProbeError};
use super::by_lag::{lag_route, recommend_sticky};
use super::session::Session;
use super::target::Aim;
use crate::mysql::flavor::WAIT_RESULT_COLUMN;
use crate::mysql::{BinlogPos, GtidState, GtidWaitOutcome, NodeState, ReplicaStatus};
use crate::topology::Topology;
use crate::units;
use crate::units::short_duration;

/// Where the read goes once the strategy has waited.
#[derive(Debug)]
pub(super) enum Route {
    /// Read this replica: fresh or stale.
    Replica(String),
    /// The strategy reads the root by design.
    Primary,
    /// The strategy gave up on replicas: read the root, report `fell_back` with the cause.
    FallBack(String),
}

/// How often the polling strategies re-read the replica, as an application would.
const POLL_EVERY: Duration = Duration::from_millis(20);

/// What the polling strategies wait for.
enum Until<'a> {
    SbmZero,
    Applied(&'a BinlogPos),
    Received(&'a BinlogPos),
    Gtids(&'a NodeState),
}

impl Session {
    /// Checks a strategy needs before a marker is written, so a refusal costs the primary no
    /// write. Returns the note to attach.
    pub(super) async fn before_write(
        &mut self,
        a: &mut Attempt,
        strategy: Strategy,
        aim: &Aim,
        view: &dyn Topology,
    ) -> Result<(), ProbeError> {
        if strategy.is_proxy_mode() {
            return self.check_mode(a, strategy, aim, view).await;
        }
        if let Strategy::SemisyncPos(_) = strategy {
            let primary = aim.root.clone();
            a.queries += 2;
            let semi = self.conn(&primary).await?.semisync().await?;
            if semi.source_enabled != Some(true) {
                return Err(ProbeError(format!(
                    "refused: semi-sync is off on {primary} (rpl_semi_sync_master_enabled=OFF), \
                     so a commit waits for no replica and its position promises nothing; turn \
                     it on or pick another strategy"
                )));
            }
            if semi.source_active == Some(false) {
                return Err(ProbeError(format!(
                    "refused: semi-sync is enabled on {primary} but has fallen back to async \
                     (Rpl_semi_sync_master_status=OFF): no replica acknowledges commits now"
                )));
            }
            a.note = Some(
                "semi-sync waits until one replica has received the write, not applied it, and \
                 that replica may not be this one: with several replicas a read can still be \
                 stale"
                    .into(),
            );
        }
        Ok(())
    }

    pub(super) async fn route(
        &mut self,
        a: &mut Attempt,
        strategy: Strategy,
        aim: &Aim,
        token: &str,
        view: &dyn Topology,
    ) -> Result<Route, ProbeError> {
        let replica = || Route::Replica(aim.node.clone());
        match strategy {
            Strategy::None => Ok(replica()),
            Strategy::Primary => Ok(Route::Primary),
            Strategy::Sleep(d) => {
                tokio::time::sleep(d).await;
                a.waited = d;
                Ok(replica())
            }
            Strategy::SbmZero(timeout) => self.poll_until(a, aim, &Until::SbmZero, timeout).await,
            Strategy::PosEqual(timeout) => {
                let pos = self.primary_position(a, aim).await?;
                self.poll_until(a, aim, &Until::Applied(&pos), timeout)
                    .await
            }
            Strategy::SemisyncPos(timeout) => {
                let pos = self.primary_position(a, aim).await?;
                self.poll_until(a, aim, &Until::Received(&pos), timeout)
                    .await
            }
            Strategy::GtidEqual(timeout) => {
                a.queries += 1;
                let state = self.conn(&aim.root).await?.node_state().await?;
                self.poll_until(a, aim, &Until::Gtids(&state), timeout)
                    .await
            }
            Strategy::PosWait(timeout) => {
                let pos = self.primary_position(a, aim).await?;
                self.pos_wait(a, aim, &pos, timeout).await
            }
            Strategy::GtidWait(timeout) => self.gtid_wait(a, aim, timeout).await,
            Strategy::Sticky(window) => {
                // Inside the window the application reads the root...
                let primary = aim.root.clone();
                a.primary_reads += 1;
                self.read_marker(a, &primary, token).await?;
                // ...and the first read after it goes to the replica: that is the one at risk.
                let ends = a.written.unwrap_or_else(Instant::now) + window;
                let start = Instant::now();
                tokio::time::sleep_until(ends.into()).await;
                a.waited = start.elapsed();
                a.note = recommend_sticky(view, &aim.root).map(|(p99, node, window)| {
                    format!(
                        "the worst replica, {node}, has a lag P99 of {} over 5 min: recommend sticky({})",
                        units::lag(p99),
                        short_duration(window)
                    )
                });
                Ok(replica())
            }
            Strategy::LagThreshold(max) => {
                let (route, wait, note) = lag_route(view, aim, max);
                a.note = note;
                if let Some(lag) = wait {
                    // Read once the write is older than the chosen replica's measured lag plus
                    // the heartbeat interval, the measurement's resolution: a lag of 0 only says
                    // the replica had applied the last heartbeat, up to one interval ago.
                    let start = Instant::now();
                    let due = a.written.unwrap_or(start) + lag + view.heartbeat_interval();
                    tokio::time::sleep_until(due.into()).await;
                    a.waited = start.elapsed();
                }
                Ok(route)
            }
            mode => self.route_mode(a, mode, aim, view).await,
        }
    }

    /// The root's binlog coordinate right after the write, for the position strategies,
    /// which only make sense on a channel that replicates from the root itself.
    async fn primary_position(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
    ) -> Result<BinlogPos, ProbeError> {
        let primary = aim.root.clone();
        if let Some(source) = &aim.source
            && *source != primary
        {
            return Err(ProbeError(format!(
                "{} replicates from {source}, not from {primary}: {primary}'s binlog \
                 positions mean nothing there; use gtid-wait or gtid-equal",
                aim.label()
            )));
        }
        a.queries += 1;
        let status = self.conn(&primary).await?.binlog_status().await?;
        status.map(|s| s.position).ok_or_else(|| {
            ProbeError(format!(
                "{primary} has binary logging off: there is no position to wait for"
            ))
        })
    }

    /// The aimed channel's row of the replica's status; for a plain target on a node rwtop has
    /// not polled yet, the default channel (its first row).
    pub(super) async fn status(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
    ) -> Result<ReplicaStatus, ProbeError> {
        a.queries += 1;
        let node = &aim.node;
        let mut channels = self.conn(node).await?.replica_status().await?;
        if channels.is_empty() {
            return Err(ProbeError(format!(
                "{node} is not replicating (SHOW SLAVE STATUS is empty)"
            )));
        }
        let index = channels
            .iter()
            .position(|c| c.channel.eq_ignore_ascii_case(&aim.channel))
            .or_else(|| aim.channel.is_empty().then_some(0));
        let Some(index) = index else {
            return Err(ProbeError(format!(
                "{node} no longer has channel '{}'",
                aim.channel
            )));
        };
        Ok(channels.swap_remove(index))
    }

    /// Re-reads the replica every [`POLL_EVERY`] until the condition holds or `timeout` passes.
    async fn poll_until(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        until: &Until<'_>,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let start = Instant::now();
        let deadline = start + timeout;
        loop {
            let short_of = match until {
                Until::Gtids(primary) => {
                    a.queries += 1;
                    let state = self.conn(&aim.node).await?.node_state().await?;
                    (!state.has_applied_all_of(primary)).then(|| {
                        format!(
                            "applied GTIDs {} do not include {}'s {}",
                            applied_gtids(&state),
                            aim.root,
                            written_gtids(primary)
                        )
                    })
                }
                until => {
                    let status = self.status(a, aim).await?;
                    status_short_of(until, &status)
                }
            };
            let Some(short_of) = short_of else {
                a.waited = start.elapsed();
                return Ok(Route::Replica(aim.node.clone()));
            };
            let now = Instant::now();
            if now >= deadline {
                a.waited = start.elapsed();
                return Ok(Route::FallBack(format!(
                    "timeout after {}: {short_of}",
                    short_duration(timeout)
                )));
            }
            tokio::time::sleep(POLL_EVERY.min(deadline - now)).await;
        }
    }

    /// `MASTER_POS_WAIT` / `SOURCE_POS_WAIT` on the replica for the root's position, on the
    /// aimed channel (the function's 4th argument: without it the default channel would judge a
    /// position of another root's binlog, which may well have the same file name).
    async fn pos_wait(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        pos: &BinlogPos,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let target = aim.node.as_str();
        let function = self.conn(target).await?.flavor().pos_wait_function();
        // It counts whole seconds (0 would wait forever): round up, and say so.
        let secs = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        let secs = secs.max(1);
        if Duration::from_secs(secs) != timeout {
            a.note = Some(format!(
                "{function} counts whole seconds: a {} timeout waits up to {secs}s",
                short_duration(timeout)
            ));
        }
        let sql = self
            .conn(target)
            .await?
            .flavor()
            .pos_wait_sql(pos, secs, &aim.channel);
        let within = Duration::from_secs(secs) + self.spec.timeouts.query;
        let start = Instant::now();
        let rows = self.query_within(a, target, &sql, within).await?;
        a.waited = start.elapsed();
        match wait_result(&rows)? {
            Some(-1) => Ok(Route::FallBack(format!("timeout after {secs}s"))),
            Some(_) => Ok(Route::Replica(target.to_owned())),
            None => {
                // NULL means several things; the channel's own status tells them apart.
                let status = self.status(a, aim).await?;
                Ok(Route::FallBack(if status.sql_running {
                    format!(
                        "{function} returned NULL with the SQL thread running: the primary's \
                         position {}:{} is not comparable on this replica",
                        pos.file, pos.pos
                    )
                } else {
                    format!(
                        "replication stopped: {function} returned NULL because the SQL thread \
                         is not running"
                    )
                }))
            }
        }
    }

    /// `MASTER_GTID_WAIT` (`MariaDB`, for the write's own GTID) or `WAIT_FOR_EXECUTED_GTID_SET`
    /// (`MySQL`, for the primary's executed set: see the note).
    async fn gtid_wait(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let target = aim.node.as_str();
        let primary = aim.root.clone();
        let on_primary = self.conn(&primary).await?.flavor();
        if !on_primary.written_gtids_are_the_writes_own() {
            a.note = Some(
                "MySQL: the driver cannot read the write's own GTID (no session tracking), \
                 so the probe waits for the primary's whole gtid_executed: it may over-wait, \
                 never under-wait"
                    .into(),
            );
        }
        let gtid = self.written_gtids(a, &primary).await?;
        let on_target = self.conn(target).await?.flavor().clone();
        let function = on_target.gtid_wait_function();
        let sql = on_target.gtid_wait_sql(&gtid, timeout);
        let within = timeout + self.spec.timeouts.query;
        let start = Instant::now();
        let rows = self.query_within(a, target, &sql, within).await?;
        a.waited = start.elapsed();
        let value = wait_result(&rows)?;
        match on_target.gtid_wait_outcome(value) {
            GtidWaitOutcome::Reached => return Ok(Route::Replica(target.to_owned())),
            GtidWaitOutcome::TimedOut => {}
            GtidWaitOutcome::Unexpected => {
                let got = value.map_or_else(|| "NULL".to_owned(), |n| n.to_string());
                return Ok(Route::FallBack(format!("{function} returned {got}")));
            }
        }
        // The wait function cannot tell a slow replica from a stopped one; the status can.
        let status = self.status(a, aim).await?;
        let why = if status.sql_running {
            String::new()
        } else {
            "; the SQL thread is not running".to_owned()
        };
        Ok(Route::FallBack(format!(
            "timeout after {}{why}",
            short_duration(timeout)
        )))
    }
}

/// The single integer a wait function returns, `None` for NULL.
pub(super) fn wait_result(rows: &[crate::mysql::RawRow]) -> Result<Option<i64>, ProbeError> {
    let text = rows
        .first()
        .and_then(|r| r.optional_text(&[WAIT_RESULT_COLUMN]));
    text.map(|t| {
        t.trim()
            .parse::<i64>()
            .map_err(|_| ProbeError(format!("a wait function returned {t:?}, not a number")))
    })
    .transpose()
}

/// Why the replica is not there yet, or `None` when it is.
fn status_short_of(until: &Until<'_>, status: &ReplicaStatus) -> Option<String> {
    let stopped = if status.sql_running {
        ""
    } else {
        " (the SQL thread is not running)"
    };
    match until {
        Until::SbmZero => match status.seconds_behind_source {
            Some(0) => None,
            Some(n) => Some(format!("Seconds_Behind_Master was {n}")),
            None => {
                Some("Seconds_Behind_Master was NULL (a replication thread is not running)".into())
            }
        },
        Until::Applied(pos) => (!status.applied.is_at_or_past(pos)).then(|| {
            format!(
                "applied {}:{}, the write ends at {}:{}{stopped}",
                status.applied.file, status.applied.pos, pos.file, pos.pos
            )
        }),
        Until::Received(pos) => (!status.received.is_at_or_past(pos)).then(|| {
            format!(
                "received {}:{}, the write ends at {}:{}",
                status.received.file, status.received.pos, pos.file, pos.pos
            )
        }),
        Until::Gtids(_) => None,
    }
}

fn applied_gtids(state: &NodeState) -> String {
    match &state.gtid {
        GtidState::Mysql { executed } => executed.to_string(),
        GtidState::Mariadb { slave_pos, .. } => slave_pos.to_string(),
    }
}

fn written_gtids(state: &NodeState) -> String {
    match &state.gtid {
        GtidState::Mysql { executed } => executed.to_string(),
        GtidState::Mariadb { binlog_pos, .. } => binlog_pos.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_results_keep_null_apart_from_numbers() {
        let row = |v: Option<&str>| {
            vec![crate::mysql::RawRow::new(vec![(
                "r".into(),
                v.map(str::to_owned),
            )])]
        };
        assert_eq!(wait_result(&row(None)).unwrap(), None);
        assert_eq!(wait_result(&row(Some("-1"))).unwrap(), Some(-1));
        assert_eq!(wait_result(&row(Some("3"))).unwrap(), Some(3));
        assert!(wait_result(&row(Some("x"))).is_err());
    }
}
