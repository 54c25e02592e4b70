//! The proxies' consistency modes as strategies (`docs/design.md`, the section of that name):
//! what a team would configure, reproduced on plain async replication with what rwtop reads
//! itself.
//!
//! Every mode needs a set of GTIDs the read must see, one of three:
//! * **own**: the write's own GTID (`SELECT @@last_gtid` on the writing connection; see
//!   `docs/design.md`, "Test reads", for why the OK packet cannot carry it to this driver);
//! * **global**: the own GTID merged with the newest position rwtop polled on the primary, i.e.
//!   every write the "service" has seen up to its last poll;
//! * **primary now**: the primary's `gtid_binlog_pos` read right before the read (one round
//!   trip; MaxScale reads `@@gtid_current_pos`, which on a primary that replicates from nobody
//!   is the same list).
//!
//! Then it either waits on the aimed replica (`maxscale-local/global/universal`,
//! `router-wait`, `gr-before`), picks a replica whose known position covers them, else the
//! primary (`maxscale-fast*`, `proxysql-gtid`), or holds the write until every replica applied
//! it (`gr-after`).
//!
//! | strategy | product setting | differs from the product |
//! |---|---|---|
//! | `maxscale-local(t)` | `causal_reads=local`, `causal_reads_timeout=t` | the wait and the read are two statements (MaxScale sends one multi-statement); MaxScale takes whole seconds |
//! | `maxscale-global(t)` | `causal_reads=global` | "any session's" newest GTID is rwtop's last poll of the primary |
//! | `maxscale-universal(t)` | `causal_reads=universal` | none beyond `local`'s |
//! | `maxscale-fast(monitor)` | `causal_reads=fast` + mariadbmon `monitor_interval` | the monitor is rwtop's poll, or the prober's own at `monitor=` |
//! | `maxscale-fast-global`, `maxscale-fast-universal` | `fast_global`, `fast_universal` | as `fast` and `global`/`universal` |
//! | `router-wait(t)` | MySQL Router `wait_for_my_writes`, `wait_for_my_writes_timeout=t` | on `MariaDB` `MASTER_GTID_WAIT` stands in for `WAIT_FOR_EXECUTED_GTID_SET`, and `MASTER_GTID_WAIT(g, 0)` for `GTID_SUBSET` |
//! | `proxysql-gtid` | ProxySQL `mysql_query_rules.gtid_from_hostgroup` with its binlog reader | the replica's executed GTIDs are read when routing, not streamed; ProxySQL itself tracks `MySQL` GTIDs only |
//! | `gr-before(t)` | `group_replication_consistency=BEFORE` | async replicas, so it waits for the primary's binlog position; times out to the primary instead of an error |
//! | `gr-after(t)` | `group_replication_consistency=AFTER` | the write is held by waiting on each replica after the commit returned; a replica that misses `t` is reported, not expelled |
//!
//! MaxScale's `causal_reads` needs `MariaDB` (`MASTER_GTID_WAIT`, `last_gtid`): those modes
//! are refused on a `MySQL` primary.

use std::time::{Duration, Instant};

use super::attempt::{Attempt, ProbeError};
use super::route::{Route, wait_result};
use super::session::Session;
use super::target::Aim;
use super::{Monitor, Strategy};
use crate::gtid::{GtidList, GtidSet};
use crate::mysql::{Family, GtidState, GtidWaitOutcome};
use crate::topology::{Role, Topology};
use crate::units::short_duration;

/// The GTIDs a read must see.
#[derive(Debug, Clone)]
enum Wanted {
    Mariadb(GtidList),
    Mysql(GtidSet),
}

impl Wanted {
    /// What a primary's state says it has written.
    fn written_by(state: &GtidState) -> Self {
        match state {
            GtidState::Mariadb { binlog_pos, .. } => Self::Mariadb(binlog_pos.clone()),
            GtidState::Mysql { executed } => Self::Mysql(executed.clone()),
        }
    }

    /// `self` and everything `primary` had written (per domain the higher position).
    fn merged(self, primary: &GtidState) -> Self {
        match (self, Self::written_by(primary)) {
            (Self::Mariadb(mut mine), Self::Mariadb(theirs)) => {
                for gtid in theirs.iter() {
                    if !mine.contains(gtid) {
                        mine.insert(*gtid);
                    }
                }
                Self::Mariadb(mine)
            }
            (Self::Mysql(mine), Self::Mysql(theirs)) => Self::Mysql(mine.union(&theirs)),
            (mine, _) => mine,
        }
    }

    /// Whether a replica in `state` has applied all of it (`MariaDB`: as `MASTER_GTID_WAIT`
    /// judges, against `gtid_slave_pos`).
    fn covered_by(&self, state: &GtidState) -> bool {
        match (self, state) {
            (Self::Mariadb(wanted), GtidState::Mariadb { slave_pos, .. }) => {
                wanted.iter().all(|g| slave_pos.contains(g))
            }
            (Self::Mysql(wanted), GtidState::Mysql { executed }) => executed.is_superset_of(wanted),
            _ => false,
        }
    }

    fn text(&self) -> String {
        match self {
            Self::Mariadb(list) => list.to_string(),
            Self::Mysql(set) => set.to_string(),
        }
    }
}

/// Where a GTID state shown in a cause came from.
fn applied(state: &GtidState) -> String {
    match state {
        GtidState::Mariadb { slave_pos, .. } => slave_pos.to_string(),
        GtidState::Mysql { executed } => executed.to_string(),
    }
}

/// The replicas a read for the aimed channel's root may go to, the aimed one first: those with
/// a channel carrying that root's writes; drained ones only when `drained`.
fn candidates(view: &dyn Topology, aim: &Aim, drained: bool) -> Vec<String> {
    let mut out = vec![aim.node.clone()];
    for node in view.members() {
        if node.role == Role::Primary || node.name == aim.node {
            continue;
        }
        let carries = view.channels(node.name).iter().any(|c| {
            view.roots_of(node.name, c.name)
                .contains(&aim.root.as_str())
        });
        if carries && (drained || !view.is_drained(node.name)) {
            out.push(node.name.to_owned());
        }
    }
    out
}

impl Session {
    /// Before the write: refuse a mode the root's flavor cannot run, and say where rwtop runs
    /// a flavor's equivalent instead of the product's statement.
    pub(super) async fn check_mode(
        &mut self,
        a: &mut Attempt,
        strategy: Strategy,
        aim: &Aim,
        view: &dyn Topology,
    ) -> Result<(), ProbeError> {
        if let Some(Monitor::Every(every)) = strategy.monitor() {
            // A monitor runs before the write, as a proxy's does: its first reading must not
            // be one taken after the write (that would be a wait in disguise).
            for node in candidates(view, aim, false) {
                let endpoint = self.endpoint(&node)?;
                let timeouts = self.spec.timeouts;
                self.monitors.latest(&node, endpoint, every, timeouts).await;
            }
        }
        let family = self.conn(&aim.root).await?.flavor().family;
        let maxscale = strategy.name().starts_with("maxscale-");
        match (strategy, family) {
            (_, Family::Mysql) if maxscale => Err(ProbeError(format!(
                "refused: MaxScale's causal_reads works with MariaDB servers only (it waits with \
                 MASTER_GTID_WAIT and reads last_gtid), and {} runs MySQL; router-wait and \
                 proxysql-gtid are the MySQL proxies' modes",
                aim.root
            ))),
            (Strategy::RouterWait(t), Family::Mariadb) => {
                a.note = Some(if t.is_zero() {
                    "MariaDB has no GTID_SUBSET: Router's non-blocking check runs as \
                     MASTER_GTID_WAIT(gtid, 0), which answers at once"
                        .into()
                } else {
                    "MariaDB has no WAIT_FOR_EXECUTED_GTID_SET: MASTER_GTID_WAIT, its \
                     equivalent, waits instead"
                        .into()
                });
                Ok(())
            }
            (Strategy::ProxysqlGtid, Family::Mariadb) => {
                a.note = Some(
                    "ProxySQL tracks MySQL GTIDs only (its binlog reader): this applies its \
                     routing rule to MariaDB's gtid_slave_pos"
                        .into(),
                );
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Routes one of the proxies' modes, after the write.
    pub(super) async fn route_mode(
        &mut self,
        a: &mut Attempt,
        strategy: Strategy,
        aim: &Aim,
        view: &dyn Topology,
    ) -> Result<Route, ProbeError> {
        match strategy {
            Strategy::MaxscaleLocal(t) | Strategy::RouterWait(t) => {
                let wanted = self.own(a, aim).await?;
                self.wait_or_fall_back(a, aim, &wanted, t).await
            }
            Strategy::MaxscaleGlobal(t) => {
                let wanted = self.global(a, aim, view).await?;
                self.wait_or_fall_back(a, aim, &wanted, t).await
            }
            Strategy::MaxscaleUniversal(t) | Strategy::GrBefore(t) => {
                let wanted = self.primary_now(a, aim).await?;
                self.wait_or_fall_back(a, aim, &wanted, t).await
            }
            Strategy::MaxscaleFast(m) => {
                let wanted = self.own(a, aim).await?;
                self.pick(a, aim, view, &wanted, Some(m)).await
            }
            Strategy::MaxscaleFastGlobal(m) => {
                let wanted = self.global(a, aim, view).await?;
                self.pick(a, aim, view, &wanted, Some(m)).await
            }
            Strategy::MaxscaleFastUniversal(m) => {
                let wanted = self.primary_now(a, aim).await?;
                self.pick(a, aim, view, &wanted, Some(m)).await
            }
            Strategy::ProxysqlGtid => {
                let wanted = self.own(a, aim).await?;
                self.pick(a, aim, view, &wanted, None).await
            }
            Strategy::GrAfter(t) => self.hold_write(a, aim, view, t).await,
            other => Err(ProbeError(format!("{other} is not a proxy's mode"))),
        }
    }

    /// The write's own GTIDs, read on the writing connection.
    async fn own(&mut self, a: &mut Attempt, aim: &Aim) -> Result<Wanted, ProbeError> {
        let root = aim.root.clone();
        let flavor = self.conn(&root).await?.flavor().clone();
        let text = self.written_gtids(a, &root).await?;
        let bad = |e: crate::gtid::GtidParseError| {
            ProbeError(format!("{root} reported the write's GTID as {text:?}: {e}"))
        };
        Ok(match flavor.family {
            Family::Mariadb => Wanted::Mariadb(GtidList::parse(&text).map_err(bad)?),
            Family::Mysql => Wanted::Mysql(GtidSet::parse(&text).map_err(bad)?),
        })
    }

    /// The own GTIDs and what rwtop last polled on the primary.
    async fn global(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        view: &dyn Topology,
    ) -> Result<Wanted, ProbeError> {
        let own = self.own(a, aim).await?;
        Ok(match view.polled_gtid(&aim.root) {
            Some((primary, _)) => own.merged(primary),
            None => own,
        })
    }

    /// The primary's position right now: one round trip before the read.
    async fn primary_now(&mut self, a: &mut Attempt, aim: &Aim) -> Result<Wanted, ProbeError> {
        a.queries += 1;
        let state = self.conn(&aim.root).await?.node_state().await?;
        Ok(Wanted::written_by(&state.gtid))
    }

    /// Runs the GTID wait function on `node` for up to `timeout`; 0 checks without waiting.
    async fn wait_on(
        &mut self,
        a: &mut Attempt,
        node: &str,
        wanted: &Wanted,
        timeout: Duration,
    ) -> Result<(GtidWaitOutcome, String), ProbeError> {
        let flavor = self.conn(node).await?.flavor().clone();
        let gtids = wanted.text();
        let sql = if timeout.is_zero() {
            flavor.gtid_check_sql(&gtids)
        } else {
            flavor.gtid_wait_sql(&gtids, timeout)
        };
        let within = timeout + self.spec.timeouts.query;
        let rows = self.query_within(a, node, &sql, within).await?;
        let value = wait_result(&rows)?;
        let outcome = if timeout.is_zero() {
            flavor.gtid_check_outcome(value)
        } else {
            flavor.gtid_wait_outcome(value)
        };
        let got = value.map_or_else(|| "NULL".to_owned(), |n| n.to_string());
        Ok((
            outcome,
            format!("{} returned {got}", flavor.gtid_wait_function()),
        ))
    }

    /// Waits on the aimed replica; one fallback to the primary when it is not there in time.
    async fn wait_or_fall_back(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        wanted: &Wanted,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let start = Instant::now();
        let (outcome, said) = self.wait_on(a, &aim.node, wanted, timeout).await?;
        a.waited = start.elapsed();
        match outcome {
            GtidWaitOutcome::Reached => Ok(Route::Replica(aim.node.clone())),
            GtidWaitOutcome::Unexpected => Ok(Route::FallBack(said)),
            GtidWaitOutcome::TimedOut => {
                let status = self.status(a, aim).await?;
                let why = if status.sql_running {
                    ""
                } else {
                    "; the SQL thread is not running"
                };
                Ok(Route::FallBack(if timeout.is_zero() {
                    format!("not applied yet ({} not reached){why}", wanted.text())
                } else {
                    format!("timeout after {}{why}", short_duration(timeout))
                }))
            }
        }
    }

    /// No wait: the first replica whose known position covers `wanted`, else the primary.
    /// `monitor` is where a fast mode's positions come from; `None` (ProxySQL) reads each
    /// replica's position when routing, as its streamed GTIDs would have it.
    async fn pick(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        view: &dyn Topology,
        wanted: &Wanted,
        monitor: Option<Monitor>,
    ) -> Result<Route, ProbeError> {
        let mut seen = Vec::new();
        for node in candidates(view, aim, false) {
            let position = match monitor {
                Some(Monitor::Polled) => view.polled_gtid(&node).map(|(g, age)| (g.clone(), age)),
                Some(Monitor::Every(every)) => {
                    a.cost.monitor = Some(every);
                    let endpoint = self.endpoint(&node)?;
                    let timeouts = self.spec.timeouts;
                    self.monitors
                        .latest(&node, endpoint, every, timeouts)
                        .await
                        .map(|r| (r.gtid, r.at.elapsed()))
                }
                None => {
                    a.queries += 1;
                    let state = self.conn(&node).await?.node_state().await?;
                    Some((state.gtid, Duration::ZERO))
                }
            };
            if node == aim.node && monitor.is_some() {
                a.cost.position_age = position.as_ref().map(|(_, age)| *age);
            }
            match position {
                Some((state, _)) if wanted.covered_by(&state) => {
                    if node != aim.node {
                        a.note = Some(format!(
                            "routed to {node}: {} had not shown {} yet",
                            aim.node,
                            wanted.text()
                        ));
                    }
                    return Ok(Route::Replica(node));
                }
                Some((state, _)) => seen.push(format!("{node} at {}", applied(&state))),
                None => seen.push(format!("{node} not monitored yet")),
            }
        }
        Ok(Route::FallBack(format!(
            "no replica known to have {}: {}",
            wanted.text(),
            seen.join(", ")
        )))
    }

    /// `gr-after`: the write returns only once every replica of its root applied it (each
    /// waited on in turn against one deadline, so the hold is the slowest replica's), then the
    /// aimed replica is read at once.
    async fn hold_write(
        &mut self,
        a: &mut Attempt,
        aim: &Aim,
        view: &dyn Topology,
        timeout: Duration,
    ) -> Result<Route, ProbeError> {
        let wanted = self.own(a, aim).await?;
        let start = Instant::now();
        let deadline = start + timeout;
        let mut missed = Vec::new();
        let mut aimed_missed = false;
        for node in candidates(view, aim, true) {
            let left = deadline.saturating_duration_since(Instant::now());
            let reached = match self.wait_on(a, &node, &wanted, left).await {
                Ok((GtidWaitOutcome::Reached, _)) => true,
                Ok((_, said)) => {
                    missed.push(format!("{node} ({said})"));
                    false
                }
                Err(ProbeError(e)) => {
                    missed.push(format!("{node} ({e})"));
                    false
                }
            };
            aimed_missed |= !reached && node == aim.node;
        }
        a.cost.write_wait = Some(start.elapsed());
        if !missed.is_empty() {
            a.note = Some(format!(
                "AFTER held the write {} and gave up on {}",
                short_duration(timeout),
                missed.join(", ")
            ));
        }
        if aimed_missed {
            let status = self.status(a, aim).await?;
            let why = if status.sql_running {
                ""
            } else {
                "; the SQL thread is not running"
            };
            return Ok(Route::FallBack(format!(
                "AFTER: not applied within {}{why}",
                short_duration(timeout)
            )));
        }
        Ok(Route::Replica(aim.node.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mariadb(slave_pos: &str) -> GtidState {
        GtidState::Mariadb {
            binlog_pos: GtidList::parse("0-1-9,1-4-2").unwrap(),
            slave_pos: GtidList::parse(slave_pos).unwrap(),
            current_pos: GtidList::empty(),
        }
    }

    #[test]
    fn wanted_gtids_merge_per_domain_and_are_judged_as_master_gtid_wait_does() {
        let own = Wanted::Mariadb(GtidList::parse("0-1-10").unwrap());
        assert!(own.covered_by(&mariadb("0-1-10")));
        assert!(own.covered_by(&mariadb("0-2-11")), "server ids are ignored");
        assert!(!own.covered_by(&mariadb("0-1-9")));
        let global = own.merged(&mariadb(""));
        assert_eq!(global.text(), "0-1-10,1-4-2");
        assert!(
            !global.covered_by(&mariadb("0-1-10")),
            "domain 1 is missing"
        );
        assert!(global.covered_by(&mariadb("0-1-10,1-4-2")));
        let set = |t: &str| GtidSet::parse(t).unwrap();
        let mysql = Wanted::Mysql(set("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"));
        let executed = |t: &str| GtidState::Mysql { executed: set(t) };
        assert!(mysql.covered_by(&executed("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7")));
        assert!(!mysql.covered_by(&executed("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4")));
        assert!(!mysql.covered_by(&mariadb("0-1-10")), "families never mix");
    }
}
