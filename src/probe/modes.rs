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
use super::strategy::Fast;
use super::target::Aim;
use super::{Monitor, Strategy};
use crate::mysql::{GtidState, GtidWaitOutcome, ModeFit, ProxyGtidMode, WantedGtids as Wanted};
use crate::topology::{Role, Topology};
use crate::units::short_duration;

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

/// What the root's flavor must offer for `strategy`, when it is a proxy's mode that rests on
/// its GTIDs.
fn gtid_mode(strategy: Strategy) -> Option<ProxyGtidMode> {
    match strategy {
        _ if strategy.name().starts_with("maxscale-") => Some(ProxyGtidMode::CausalReads),
        Strategy::RouterWait(t) => Some(ProxyGtidMode::WaitForMyWrites {
            at_once: t.is_zero(),
        }),
        Strategy::ProxysqlGtid => Some(ProxyGtidMode::GtidFromHostgroup),
        _ => None,
    }
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
        if let Some(fast) = strategy.fast()
            && fast.monitor == Monitor::Polled
            && !fast.after.is_zero()
            && self.views.is_none()
        {
            return Err(ProbeError(format!(
                "refused: {strategy} routes on rwtop's polls as they are after the delay, and \
                 this prober follows no engine; give it its own monitor \
                 ({}(monitor=100ms,after={}))",
                strategy.name(),
                crate::units::short_duration(fast.after)
            )));
        }
        if let Some(Monitor::Every(every)) = strategy.monitor() {
            // A monitor runs before the write, as a proxy's does: its first reading must not
            // be one taken after the write (that would be a wait in disguise).
            for node in candidates(view, aim, false) {
                let endpoint = self.endpoint(&node)?;
                let timeouts = self.spec.timeouts;
                self.monitors.latest(&node, endpoint, every, timeouts).await;
            }
        }
        let Some(mode) = gtid_mode(strategy) else {
            return Ok(());
        };
        let flavor = self.conn(&aim.root).await?.flavor();
        match flavor.runs(mode) {
            ModeFit::AsIs => Ok(()),
            ModeFit::StandIn(note) => {
                a.note = Some(note.into());
                Ok(())
            }
            ModeFit::Refused(why) => Err(ProbeError(format!(
                "refused: {why}, and {} runs {}; router-wait and proxysql-gtid are the MySQL \
                 proxies' modes",
                aim.root,
                flavor.family.name()
            ))),
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
            Strategy::MaxscaleFast(fast)
            | Strategy::MaxscaleFastGlobal(fast)
            | Strategy::MaxscaleFastUniversal(fast) => {
                // The application reads `after` its write: what the mode wants and what the
                // monitor knows are both taken then.
                let newest = self.after(fast).await;
                let view = newest.as_deref().unwrap_or(view);
                let wanted = match strategy {
                    Strategy::MaxscaleFast(_) => self.own(a, aim).await?,
                    Strategy::MaxscaleFastGlobal(_) => self.global(a, aim, view).await?,
                    _ => self.primary_now(a, aim).await?,
                };
                self.pick(a, aim, view, &wanted, Some(fast.monitor)).await
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
        let text = self.written_gtids(a, &root).await?;
        let flavor = self.conn(&root).await?.flavor();
        flavor
            .wanted_gtids(&text)
            .map_err(|e| ProbeError(format!("{root} reported the write's GTID as {text:?}: {e}")))
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
        let gtids = wanted.to_string();
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
                    format!("not applied yet ({wanted} not reached){why}")
                } else {
                    format!("timeout after {}{why}", short_duration(timeout))
                }))
            }
        }
    }

    /// A fast mode whose application reads a while after its write (`fast.after`): waits that
    /// long, and then, on rwtop's own polls, hands back the engine's newest snapshot to route
    /// on (the prober's own monitors keep reading meanwhile).
    async fn after(&self, fast: Fast) -> Option<std::sync::Arc<dyn Topology>> {
        if fast.after.is_zero() {
            return None;
        }
        tokio::time::sleep(fast.after).await;
        match fast.monitor {
            Monitor::Polled => self.views.as_ref().map(|latest| latest()),
            Monitor::Every(_) => None,
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
                            "routed to {node}: {} had not shown {wanted} yet",
                            aim.node
                        ));
                    }
                    return Ok(Route::Replica(node));
                }
                Some((state, _)) => seen.push(format!("{node} at {}", applied(&state))),
                None => seen.push(format!("{node} not monitored yet")),
            }
        }
        Ok(Route::FallBack(format!(
            "no replica known to have {wanted}: {}",
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
