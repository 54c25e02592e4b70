//! The probe runner: one marker written on the primary, read back as a strategy dictates.
//!
//! The prober keeps one connection per node it has touched, separate from the pollers' (a wait
//! function holds its connection for up to the strategy's timeout). It writes only to the
//! primary, and only after checking that the primary is writable; replicas are only read.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::marker;
use super::outcome::{Outcome, ProbeResult};
use super::route::Route;
use super::{ProbeSpec, Strategy};
use crate::mysql::{Endpoint, NodeConn, RawRow, SqlError};
use crate::topology::{Role, Topology};

/// Why a probe could not run to the end: becomes an `error` outcome with this as the cause.
#[derive(Debug)]
pub struct ProbeError(pub String);

impl From<SqlError> for ProbeError {
    fn from(err: SqlError) -> Self {
        Self(err.to_string())
    }
}

/// The cost and timing of one probe as it runs.
#[derive(Debug)]
pub(super) struct Attempt {
    pub started: Instant,
    /// When the write was acknowledged; waits and windows count from here.
    pub written: Option<Instant>,
    pub waited: Duration,
    pub queries: u32,
    pub primary_reads: u32,
    pub note: Option<String>,
}

pub struct Prober {
    pub(super) spec: ProbeSpec,
    conns: HashMap<String, NodeConn>,
    /// Whether the primary connection has passed the `read_only` check and created the table.
    primary_ready: bool,
    seq: u64,
    last_cleanup: Option<Instant>,
}

impl Prober {
    #[must_use]
    pub fn new(spec: ProbeSpec) -> Self {
        Self {
            spec,
            conns: HashMap::new(),
            primary_ready: false,
            seq: 0,
            last_cleanup: None,
        }
    }

    #[must_use]
    pub fn primary_name(&self) -> &str {
        &self.spec.primary.0
    }

    /// Runs one probe against `target` (a replica) and reports what happened; never fails.
    pub async fn run(
        &mut self,
        strategy: Strategy,
        target: &str,
        view: &dyn Topology,
    ) -> ProbeResult {
        let at = chrono::Utc::now();
        let mut attempt = Attempt {
            started: Instant::now(),
            written: None,
            waited: Duration::ZERO,
            queries: 0,
            primary_reads: 0,
            note: None,
        };
        let run = self.attempt(&mut attempt, strategy, target, view).await;
        let (outcome, served_by, cause) = match run {
            Ok(done) => done,
            Err(ProbeError(cause)) => (Outcome::Error, None, Some(cause)),
        };
        if self.spec.read_only || outcome == Outcome::Error {
            // Nothing to clean after a refusal, and a failing primary gets no extra statement.
        } else if self
            .last_cleanup
            .is_none_or(|t| t.elapsed() >= marker::CLEAN_EVERY)
        {
            self.last_cleanup = Some(Instant::now());
            let _ = self.cleanup(marker::KEEP_FOR).await;
        }
        ProbeResult {
            at,
            strategy,
            target: target.to_owned(),
            served_by,
            outcome,
            cause,
            note: attempt.note,
            waited: attempt.waited,
            total: attempt
                .written
                .map_or(Duration::ZERO, |_| attempt.started.elapsed()),
            queries: attempt.queries,
            primary_reads: attempt.primary_reads,
        }
    }

    /// Deletes the markers older than `age` on the primary.
    pub async fn cleanup(&mut self, age: Duration) -> Result<(), ProbeError> {
        let primary = self.spec.primary.0.clone();
        self.conn(&primary)
            .await?
            .query_rows(&marker::cleanup_sql(age))
            .await?;
        Ok(())
    }

    /// Closes every connection politely.
    pub async fn close(mut self) {
        for (_, conn) in self.conns.drain() {
            conn.close().await;
        }
    }

    async fn attempt(
        &mut self,
        a: &mut Attempt,
        strategy: Strategy,
        target: &str,
        view: &dyn Topology,
    ) -> Result<(Outcome, Option<String>, Option<String>), ProbeError> {
        if self.spec.read_only {
            return Err(ProbeError(
                "refused: read-only mode (--read-only) writes nothing, and a probe writes a \
                 marker row on the primary; run without --read-only to probe"
                    .into(),
            ));
        }
        self.learn(view);
        self.follow(view);
        self.check_target(target, view)?;
        // Strategies that need something before the write ask for it here.
        self.before_write(a, strategy).await?;
        let token = self.write_marker(a).await?;
        let route = self.route(a, strategy, target, &token, view).await?;
        let primary = self.spec.primary.0.clone();
        let (node, outcome, cause) = match route {
            Route::Replica(name) => {
                let seen = self.read_marker(a, &name, &token).await?;
                let outcome = if seen { Outcome::Fresh } else { Outcome::Stale };
                (name, outcome, None)
            }
            Route::Primary => {
                a.primary_reads += 1;
                let seen = self.read_marker(a, &primary, &token).await?;
                (primary.clone(), fresh_on_primary(seen)?, None)
            }
            Route::FallBack(cause) => {
                a.primary_reads += 1;
                let seen = self.read_marker(a, &primary, &token).await?;
                fresh_on_primary(seen)?;
                (primary.clone(), Outcome::FellBack, Some(cause))
            }
        };
        Ok((outcome, Some(node), cause))
    }

    /// A probe targets a replica that rwtop knows, and never the primary itself.
    fn check_target(&self, target: &str, view: &dyn Topology) -> Result<(), ProbeError> {
        let primary = &self.spec.primary.0;
        if target == primary {
            return Err(ProbeError(format!(
                "{target} is the primary: aim a probe at a replica (the strategy decides when \
                 to read the primary)"
            )));
        }
        match view.member(target) {
            None if !self.spec.endpoints.contains_key(target) => Err(ProbeError(format!(
                "no node named {target:?}: pick one of {}",
                view.members()
                    .iter()
                    .filter(|n| n.role != Role::Primary)
                    .map(|n| n.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            Some(node) if node.role == Role::Primary => Err(ProbeError(format!(
                "{target} is a primary now: aim a probe at a replica"
            ))),
            _ => Ok(()),
        }
    }

    async fn write_marker(&mut self, a: &mut Attempt) -> Result<String, ProbeError> {
        let primary = self.spec.primary.0.clone();
        self.ensure_primary(&primary).await?;
        self.seq += 1;
        let token = format!(
            "{}-{}-{}-{}",
            self.spec.token_prefix,
            std::process::id(),
            chrono::Utc::now().timestamp_micros(),
            self.seq
        );
        a.started = Instant::now();
        self.query(a, &primary, &marker::insert_sql(&token)).await?;
        a.written = Some(Instant::now());
        Ok(token)
    }

    /// Before every marker write: refuse a read-only primary (a switchover turns it read-only
    /// under a live connection, and an account with SUPER would still be let through). Once per
    /// connection: create the marker table.
    async fn ensure_primary(&mut self, primary: &str) -> Result<(), ProbeError> {
        // A connection that timed out or broke is reopened (and set up again) by `conn`.
        let ready = self.primary_ready && self.conns.get(primary).is_some_and(NodeConn::is_open);
        let conn = self.conn(primary).await?;
        if conn.is_read_only().await? {
            return Err(ProbeError(format!(
                "refused: {primary} ({}) has read_only=ON; probes write their marker only to a \
                 writable primary",
                conn.address()
            )));
        }
        if !ready {
            conn.query_rows(marker::CREATE_SCHEMA).await?;
            conn.query_rows(marker::CREATE_TABLE).await?;
            self.primary_ready = true;
        }
        Ok(())
    }

    /// Whether the marker is visible on `node`. A replica that has not yet applied the table's
    /// creation shows no table: that is a stale read too.
    pub(super) async fn read_marker(
        &mut self,
        a: &mut Attempt,
        node: &str,
        token: &str,
    ) -> Result<bool, ProbeError> {
        a.queries += 1;
        let rows = self
            .conn(node)
            .await?
            .query_rows_if_table(&marker::read_sql(token))
            .await?;
        Ok(rows
            .first()
            .and_then(|r| r.optional_u64(&["n"]).ok().flatten())
            .is_some_and(|n| n > 0))
    }

    /// Runs one counted statement on `node` under the query timeout.
    pub(super) async fn query(
        &mut self,
        a: &mut Attempt,
        node: &str,
        sql: &str,
    ) -> Result<Vec<RawRow>, ProbeError> {
        let within = self.spec.timeouts.query;
        self.query_within(a, node, sql, within).await
    }

    /// Runs one counted statement that may take up to `within`.
    pub(super) async fn query_within(
        &mut self,
        a: &mut Attempt,
        node: &str,
        sql: &str,
        within: Duration,
    ) -> Result<Vec<RawRow>, ProbeError> {
        a.queries += 1;
        Ok(self
            .conn(node)
            .await?
            .query_rows_within(sql, within)
            .await?)
    }

    /// The open connection to `node`, connecting first when needed.
    pub(super) async fn conn(&mut self, node: &str) -> Result<&mut NodeConn, ProbeError> {
        if !self.conns.get(node).is_some_and(NodeConn::is_open) {
            let endpoint = self.endpoint(node)?;
            let conn = NodeConn::connect(&endpoint, self.spec.timeouts).await?;
            if node == self.spec.primary.0 {
                self.primary_ready = false;
            }
            self.conns.insert(node.to_owned(), conn);
        }
        self.conns
            .get_mut(node)
            .ok_or_else(|| ProbeError(format!("{node}: the connection was lost; probe again")))
    }

    /// Configured nodes by name; discovered ones as [`Self::learn`] found them.
    fn endpoint(&self, node: &str) -> Result<Endpoint, ProbeError> {
        if node == self.spec.primary.0 {
            return Ok(self.spec.primary.1.clone());
        }
        if let Some(endpoint) = self.spec.endpoints.get(node) {
            return Ok(endpoint.clone());
        }
        Err(ProbeError(format!(
            "{node}: no address known for this node"
        )))
    }

    /// Learns the endpoints of discovered nodes from the snapshot.
    fn learn(&mut self, view: &dyn Topology) {
        for node in view.members() {
            if node.name == self.spec.primary.0 || self.spec.endpoints.contains_key(node.name) {
                continue;
            }
            if let Some(endpoint) = self.spec.primary.1.at(node.address) {
                self.spec.endpoints.insert(node.name.to_owned(), endpoint);
            }
        }
    }

    /// Writes where the heartbeat writer writes: after a failover, the node that took over (the
    /// writer moves only on evidence, [`Topology::successor_of`]; the `read_only` check still
    /// runs on the new connection).
    fn follow(&mut self, view: &dyn Topology) {
        let Some(node) = view.writer_node() else {
            return;
        };
        if node == self.spec.primary.0 {
            return;
        }
        if let Some(endpoint) = self.spec.endpoints.remove(node) {
            let old = std::mem::replace(&mut self.spec.primary, (node.to_owned(), endpoint));
            self.spec.endpoints.insert(old.0, old.1);
            self.primary_ready = false;
        }
    }
}

fn fresh_on_primary(seen: bool) -> Result<Outcome, ProbeError> {
    if seen {
        Ok(Outcome::Fresh)
    } else {
        Err(ProbeError(
            "the primary does not show the marker it just acknowledged: is the probe \
             connection pointed at the primary?"
                .into(),
        ))
    }
}
