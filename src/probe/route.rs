//! Each strategy's wait after the write, ending in where the read goes.
//!
//! Every wait-function return value has a defined meaning here: success reads the replica, a
//! timeout falls back to the primary with "timeout after …", and `NULL` from `MASTER_POS_WAIT`
//! falls back at once with its own cause (the SQL thread stopped, or the position is not
//! comparable on that replica), never confused with a timeout.

use std::time::{Duration, Instant};

use super::attempt::{Attempt, ProbeError};
use super::session::Session;
use super::{Strategy, short_duration};
use crate::mysql::flavor::{WAIT_RESULT_COLUMN, WRITTEN_GTIDS_COLUMN};
use crate::mysql::{BinlogPos, GtidState, GtidWaitOutcome, NodeState, ReplicaStatus};
use crate::topology::{Role, Topology};
use crate::units;

/// Where the read goes once the strategy has waited.
#[derive(Debug)]
pub(super) enum Route {
    /// Read this replica: fresh or stale.
    Replica(String),
    /// The strategy reads the primary by design.
    Primary,
    /// The strategy gave up on replicas: read the primary, report `fell_back` with the cause.
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
    ) -> Result<(), ProbeError> {
        if let Strategy::SemisyncPos(_) = strategy {
            let primary = self.spec.primary.0.clone();
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
        target: &str,
        token: &str,
        view: &dyn Topology,
    ) -> Result<Route, ProbeError> {
        let replica = || Route::Replica(target.to_owned());
        match strategy {
            Strategy::None => Ok(replica()),
            Strategy::Primary => Ok(Route::Primary),
            Strategy::Sleep(d) => {
                tokio::time::sleep(d).await;
                a.waited = d;
                Ok(replica())
            }
            Strategy::SbmZero(timeout) => {
                self.poll_until(a, target, &Until::SbmZero, timeout).await
            }
            Strategy::PosEqual(timeout) => {
                let pos = self.primary_position(a, target, view).await?;
                self.poll_until(a, target, &Until::Applied(&pos), timeout)
                    .await
            }
            Strategy::SemisyncPos(timeout) => {
                let pos = self.primary_position(a, target, view).await?;
                self.poll_until(a, target, &Until::Received(&pos), timeout)
                    .await
            }
            Strategy::GtidEqual(timeout) => {
                let primary = self.spec.primary.0.clone();
                a.queries += 1;
                let state = self.conn(&primary).await?.node_state().await?;
                self.poll_until(a, target, &Until::Gtids(&state), timeout)
                    .await
            }
            Strategy::PosWait(timeout) => {
                let pos = self.primary_position(a, target, view).await?;
                self.pos_wait(a, target, &pos, timeout).await
            }
            Strategy::GtidWait(timeout) => self.gtid_wait(a, target, timeout).await,
            Strategy::Sticky(window) => {
                // Inside the window the application reads the primary...
                let primary = self.spec.primary.0.clone();
                a.primary_reads += 1;
                self.read_marker(a, &primary, token).await?;
                // ...and the first read after it goes to the replica: that is the one at risk.
                let ends = a.written.unwrap_or_else(Instant::now) + window;
                let start = Instant::now();
                tokio::time::sleep_until(ends.into()).await;
                a.waited = start.elapsed();
                a.note = recommend_sticky(view).map(|(p99, node, window)| {
                    format!(
                        "the worst replica, {node}, has a lag P99 of {} over 5 min: recommend sticky({})",
                        units::lag(p99),
                        short_duration(window)
                    )
                });
                Ok(replica())
            }
            Strategy::LagThreshold(max) => {
                let (route, wait, note) = lag_route(view, target, max);
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
        }
    }

    /// The primary's binlog coordinate right after the write, for the position strategies,
    /// which only make sense on a replica of the primary itself.
    async fn primary_position(
        &mut self,
        a: &mut Attempt,
        target: &str,
        view: &dyn Topology,
    ) -> Result<BinlogPos, ProbeError> {
        let primary = self.spec.primary.0.clone();
        if let Some(source) = view.member(target).and_then(|n| n.source)
            && source != primary
        {
            return Err(ProbeError(format!(
                "{target} replicates from {source}, not from {primary}: the primary's binlog \
                     positions mean nothing there; use gtid-wait or gtid-equal"
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

    async fn status(&mut self, a: &mut Attempt, node: &str) -> Result<ReplicaStatus, ProbeError> {
        a.queries += 1;
        let mut channels = self.conn(node).await?.replica_status().await?;
        if channels.is_empty() {
            return Err(ProbeError(format!(
                "{node} is not replicating (SHOW SLAVE STATUS is empty)"
            )));
        }
        Ok(channels.swap_remove(0))
    }

    /// Re-reads the replica every [`POLL_EVERY`] until the condition holds or `timeout` passes.
    async fn poll_until(
        &mut self,
        a: &mut Attempt,
        target: &str,
        until: &Until<'_>,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let start = Instant::now();
        let deadline = start + timeout;
        loop {
            let short_of = match until {
                Until::Gtids(primary) => {
                    a.queries += 1;
                    let state = self.conn(target).await?.node_state().await?;
                    (!state.has_applied_all_of(primary)).then(|| {
                        format!(
                            "applied GTIDs {} do not include the primary's {}",
                            applied_gtids(&state),
                            written_gtids(primary)
                        )
                    })
                }
                until => {
                    let status = self.status(a, target).await?;
                    status_short_of(until, &status)
                }
            };
            let Some(short_of) = short_of else {
                a.waited = start.elapsed();
                return Ok(Route::Replica(target.to_owned()));
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

    /// `MASTER_POS_WAIT` / `SOURCE_POS_WAIT` on the replica for the primary's position.
    async fn pos_wait(
        &mut self,
        a: &mut Attempt,
        target: &str,
        pos: &BinlogPos,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
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
        let sql = self.conn(target).await?.flavor().pos_wait_sql(pos, secs);
        let within = Duration::from_secs(secs) + self.spec.timeouts.query;
        let start = Instant::now();
        let rows = self.query_within(a, target, &sql, within).await?;
        a.waited = start.elapsed();
        match wait_result(&rows)? {
            Some(-1) => Ok(Route::FallBack(format!("timeout after {secs}s"))),
            Some(_) => Ok(Route::Replica(target.to_owned())),
            None => {
                // NULL means several things; the replica's own status tells them apart.
                let status = self.status(a, target).await?;
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
        target: &str,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let primary = self.spec.primary.0.clone();
        let on_primary = self.conn(&primary).await?.flavor();
        let capture = on_primary.written_gtids_sql();
        if !on_primary.written_gtids_are_the_writes_own() {
            a.note = Some(
                "MySQL: the driver cannot read the write's own GTID (no session tracking), \
                 so the probe waits for the primary's whole gtid_executed: it may over-wait, \
                 never under-wait"
                    .into(),
            );
        }
        let rows = self.query(a, &primary, capture).await?;
        let gtid = rows
            .first()
            .and_then(|r| r.optional_text(&[WRITTEN_GTIDS_COLUMN]))
            .unwrap_or_default()
            .to_owned();
        if gtid.is_empty() {
            return Err(ProbeError(format!(
                "{primary} reports no GTID for the write: is binary logging on?"
            )));
        }
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
        let status = self.status(a, target).await?;
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
fn wait_result(rows: &[crate::mysql::RawRow]) -> Result<Option<i64>, ProbeError> {
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

/// Lag-threshold routing over the replicas that are not drained: the target when its measured
/// lag is within `max`, else the replica
/// with the least lag within `max`, else the primary. Returns the route, the chosen replica's
/// measured lag and a note when it routed away from the target.
fn lag_route(
    view: &dyn Topology,
    target: &str,
    max: Duration,
) -> (Route, Option<Duration>, Option<String>) {
    let mut eligible = Vec::new();
    let mut refused = Vec::new();
    for node in view
        .members()
        .into_iter()
        .filter(|n| n.role != Role::Primary)
    {
        let Some(health) = view.health(node.name) else {
            continue;
        };
        if view.is_drained(node.name) {
            refused.push(format!("{} drained", node.name));
            continue;
        }
        let running = health.running;
        match health.lag {
            Some(lag) if running && lag <= max => eligible.push((lag, node.name)),
            Some(lag) => refused.push(format!(
                "{} {}{}",
                node.name,
                units::lag(lag),
                if running { "" } else { " (a thread stopped)" }
            )),
            None => refused.push(format!("{} unknown", node.name)),
        }
    }
    eligible.sort_unstable();
    let chosen = eligible
        .iter()
        .find(|(_, name)| *name == target)
        .or_else(|| eligible.first());
    match chosen {
        Some((lag, name)) => {
            let note = (*name != target).then(|| {
                format!(
                    "routed to {name} (lag {}): {target} is not within {}",
                    units::lag(*lag),
                    short_duration(max)
                )
            });
            (Route::Replica((*name).to_owned()), Some(*lag), note)
        }
        None => (
            Route::FallBack(format!(
                "no replica within {}: {}",
                short_duration(max),
                if refused.is_empty() {
                    "no replica measured".to_owned()
                } else {
                    refused.join(", ")
                }
            )),
            None,
            None,
        ),
    }
}

/// The sticky window the measured lag suggests: the worst replica's 5-minute P99 plus one
/// heartbeat interval (the measurement's resolution), rounded up to 100 ms.
fn recommend_sticky(view: &dyn Topology) -> Option<(Duration, String, Duration)> {
    let (p99, node) = view
        .members()
        .into_iter()
        .filter_map(|n| Some((view.health(n.name)?.lag_p99_5m?, n.name.to_owned())))
        .max()?;
    let raw = p99 + view.heartbeat_interval();
    let step = 100u128;
    let ms = raw.as_millis().div_ceil(step) * step;
    let window = Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX));
    Some((p99, node, window))
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
