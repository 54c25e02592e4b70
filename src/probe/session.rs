//! The prober's connections: one per node it has touched, separate from the pollers' (a wait
//! function holds its connection for up to the strategy's timeout), and where each node is.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::ProbeSpec;
use super::attempt::{Attempt, ProbeError};
use super::marker;
use super::monitor::Monitors;
use crate::mysql::{Endpoint, NodeConn, RawRow, own_tables};
use crate::topology::Topology;

pub(super) struct Session {
    pub spec: ProbeSpec,
    conns: HashMap<String, NodeConn>,
    /// The roots whose connection has created the marker table.
    ready: HashSet<String>,
    /// The fast modes' own monitors (`monitor=INTERVAL`).
    pub monitors: Monitors,
    /// The engine's newest snapshot, for a fast mode on rwtop's polls that reads a while after
    /// its write (`after=`); `None` for a prober that follows no engine.
    pub views: Option<Views>,
}

/// The newest snapshot of the engine a prober follows.
pub type Views = Box<dyn Fn() -> std::sync::Arc<dyn Topology> + Send + Sync>;

impl Session {
    pub fn new(spec: ProbeSpec) -> Self {
        Self {
            spec,
            conns: HashMap::new(),
            ready: HashSet::new(),
            monitors: Monitors::default(),
            views: None,
        }
    }

    /// Closes every connection politely.
    pub async fn close(mut self) {
        self.monitors = Monitors::default();
        for (_, conn) in self.conns.drain() {
            conn.close().await;
        }
    }

    /// Before every marker write on a root: refuse a read-only one (a switchover turns it
    /// read-only under a live connection, and an account with SUPER would still be let
    /// through). Once per connection: make sure the marker table is rwtop's (creating it when
    /// missing).
    pub async fn ensure_primary(&mut self, primary: &str) -> Result<(), ProbeError> {
        // A connection that timed out or broke is reopened (and set up again) by `conn`.
        let ready =
            self.ready.contains(primary) && self.conns.get(primary).is_some_and(NodeConn::is_open);
        let conn = self.conn(primary).await?;
        if conn.is_read_only().await? {
            return Err(ProbeError(format!(
                "refused: {primary} ({}) has read_only=ON; probes write their marker only to a \
                 writable primary",
                conn.address()
            )));
        }
        if !ready {
            // Look before writing, as the heartbeat writer does.
            if let Some(mismatch) = own_tables::ensure(conn, &own_tables::PROBE).await? {
                return Err(ProbeError(format!(
                    "refused: on {primary}, {}; rwtop writes no marker there until it is \
                     fixed: {}",
                    mismatch.summary(),
                    mismatch.fix
                )));
            }
            self.ready.insert(primary.to_owned());
        }
        Ok(())
    }

    /// Whether the marker is visible on `node`. A replica that has not yet applied the table's
    /// creation shows no table: that is a stale read too.
    pub async fn read_marker(
        &mut self,
        a: &mut Attempt,
        node: &str,
        token: &str,
    ) -> Result<bool, ProbeError> {
        a.queries += 1;
        a.cost.reads += 1;
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
    pub async fn query(
        &mut self,
        a: &mut Attempt,
        node: &str,
        sql: &str,
    ) -> Result<Vec<RawRow>, ProbeError> {
        let within = self.spec.timeouts.query;
        self.query_within(a, node, sql, within).await
    }

    /// What the write on `root` must be seen to have applied, read on the writing connection
    /// with the flavor's statement (`Flavor::written_gtids_sql`); an error when there is none.
    pub async fn written_gtids(
        &mut self,
        a: &mut Attempt,
        root: &str,
    ) -> Result<String, ProbeError> {
        let sql = self.conn(root).await?.flavor().written_gtids_sql();
        let rows = self.query(a, root, sql).await?;
        let text = rows
            .first()
            .and_then(|r| r.optional_text(&[crate::mysql::flavor::WRITTEN_GTIDS_COLUMN]))
            .unwrap_or_default()
            .to_owned();
        if text.is_empty() {
            return Err(ProbeError(format!(
                "{root} reports no GTID for the write: is binary logging on?"
            )));
        }
        Ok(text)
    }

    /// Runs one counted statement that may take up to `within`.
    pub async fn query_within(
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
    pub async fn conn(&mut self, node: &str) -> Result<&mut NodeConn, ProbeError> {
        if !self.conns.get(node).is_some_and(NodeConn::is_open) {
            let endpoint = self.endpoint(node)?;
            let conn = NodeConn::connect(&endpoint, self.spec.timeouts).await?;
            self.ready.remove(node);
            self.conns.insert(node.to_owned(), conn);
        }
        self.conns
            .get_mut(node)
            .ok_or_else(|| ProbeError(format!("{node}: the connection was lost; probe again")))
    }

    /// Configured nodes by name; discovered ones as [`Self::learn`] found them.
    pub fn endpoint(&self, node: &str) -> Result<Endpoint, ProbeError> {
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
    pub fn learn(&mut self, view: &dyn Topology) {
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
    pub fn follow(&mut self, view: &dyn Topology) {
        let Some(node) = view.writer_node() else {
            return;
        };
        if node == self.spec.primary.0 {
            return;
        }
        if let Some(endpoint) = self.spec.endpoints.remove(node) {
            let old = std::mem::replace(&mut self.spec.primary, (node.to_owned(), endpoint));
            self.spec.endpoints.insert(old.0, old.1);
        }
    }
}
