//! A connection to one node, with the flavor detected at connect and every query under a timeout.
//!
//! `mysql_async` has no connect timeout, and a query future dropped on timeout leaves the `Conn`
//! returning the *previous* query's result to later queries. So connect is wrapped in a timeout,
//! and after any timeout or I/O failure the `Conn` is thrown away: later calls fail with
//! [`SqlError::Closed`] until the caller reconnects.

use std::sync::Arc;
use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder, Row, Value};

use super::binlog::{BinlogFile, BinlogStatus};
use super::endpoint::{Endpoint, Timeouts};
use super::flavor::{Flavor, FlavorError};
use super::node_state::{Identity, NodeState};
use super::prepared::Lead;
use super::replica_hosts::ReplicaHost;
use super::replica_status::{ReplicaStatus, StatusError};
use super::row::RawRow;
use super::semisync::SemiSync;

#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error("{addr}: cannot connect: {message}{hint}", hint = connect_hint(*code, message))]
    Connect {
        addr: String,
        code: Option<u16>,
        message: String,
    },
    #[error(
        "{addr}: no handshake within {within}: the server is hung or a firewall drops packets",
        within = crate::units::duration(*after)
    )]
    ConnectTimeout { addr: String, after: Duration },
    #[error("{addr}: `{sql}` failed: {message} (error {code}){hint}", hint = hint(Some(*code)))]
    Server {
        addr: String,
        sql: String,
        code: u16,
        message: String,
    },
    #[error(
        "{addr}: `{sql}` gave no answer within {within}; the connection was dropped and will be reopened",
        within = crate::units::duration(*after)
    )]
    QueryTimeout {
        addr: String,
        sql: String,
        after: Duration,
    },
    #[error("{addr}: connection lost during `{sql}`: {message}")]
    Lost {
        addr: String,
        sql: String,
        message: String,
    },
    #[error("{addr}: the connection was dropped after an earlier failure; reconnect")]
    Closed { addr: String },
    #[error("{addr}: cannot read the answer to `{sql}`: {source}")]
    Parse {
        addr: String,
        sql: String,
        source: Box<StatusError>,
    },
    #[error("{addr}: {source}")]
    Flavor { addr: String, source: FlavorError },
}

/// A TLS failure says which setting to look at.
fn tls_hint(message: &str, tls: &super::tls::Tls) -> String {
    let lower = message.to_ascii_lowercase();
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        format!(
            "{message} (TLS with ssl_mode {}{}: check ssl_ca and that the certificate names \
             this host)",
            tls.mode,
            tls.ca
                .as_ref()
                .map_or_else(String::new, |ca| format!(", ssl_ca {}", ca.display()))
        )
    } else {
        message.to_owned()
    }
}

/// What to do about a failed connect: by the server's error code, else by what the network
/// said (the driver reports those as text only).
fn connect_hint(code: Option<u16>, message: &str) -> &'static str {
    if code.is_some() {
        return hint(code);
    }
    let lower = message.to_ascii_lowercase();
    if lower.contains("failed to lookup address") || lower.contains("name or service not known") {
        " (the host name does not resolve: check the host in the DSN or config, and DNS)"
    } else if lower.contains("connection refused") {
        " (nothing listens there: check the host and port, and that the server runs)"
    } else {
        ""
    }
}

/// `ER_NO_SUCH_TABLE` and `ER_BAD_DB_ERROR`: a table or schema that is not there (yet).
const MISSING_TABLE: [u16; 2] = [1146, 1049];

/// A read of a table that may not be there yet: a missing table or schema reads as no rows,
/// anything else is kept as it came.
pub(super) fn rows_if_table(read: Result<Vec<RawRow>, SqlError>) -> Result<Vec<RawRow>, SqlError> {
    match read {
        Err(err) if is_missing_table(&err) => Ok(Vec::new()),
        other => other,
    }
}

/// Whether the server refused a statement because its table or schema is not there (yet).
pub(super) fn is_missing_table(err: &SqlError) -> bool {
    matches!(err, SqlError::Server { code, .. } if MISSING_TABLE.contains(code))
}

/// The hint a refused login (server error 1045) carries.
const LOGIN_REFUSED_HINT: &str =
    " (wrong user or password: check the DSN user and RWTOP_PASSWORD / password file)";

/// Whether a connection failure, as text (a node's connection state keeps only that), is the
/// server refusing rwtop's user and password: a node that answers, not one that is down.
#[must_use]
pub fn is_login_refused(cause: &str) -> bool {
    cause.contains(LOGIN_REFUSED_HINT)
}

/// What to do about the server errors an operator can fix.
fn hint(code: Option<u16>) -> &'static str {
    match code {
        Some(1045) => LOGIN_REFUSED_HINT,
        Some(1044 | 1142 | 1227 | 1370) => {
            " (missing privilege: `rwtop grants` prints what the monitor user needs; docs/grants.md)"
        }
        Some(1130) => {
            " (this host may not connect: create the monitor user for this client address)"
        }
        _ => "",
    }
}

impl SqlError {
    /// Whether the connection is unusable after this error.
    #[must_use]
    pub fn drops_connection(&self) -> bool {
        !matches!(self, Self::Server { .. } | Self::Parse { .. })
    }
}

/// An open connection to one node, with what was learnt at connect.
pub struct NodeConn {
    pub(super) addr: String,
    pub(super) conn: Option<Conn>,
    flavor: Flavor,
    identity: Identity,
    pub(super) query_timeout: Duration,
    /// Whether the heartbeat read is prepared on this connection (`prepared.rs`).
    pub(super) lead: Lead,
}

impl NodeConn {
    pub async fn connect(endpoint: &Endpoint, timeouts: Timeouts) -> Result<Self, SqlError> {
        let addr = endpoint.address();
        let opts = |ssl: Option<mysql_async::SslOpts>| {
            OptsBuilder::default()
                .ip_or_hostname(endpoint.host.clone())
                .tcp_port(endpoint.port)
                .user(Some(endpoint.user.clone()))
                .pass(endpoint.password.as_ref().map(|p| p.expose().to_owned()))
                // The driver otherwise switches to the unix socket it finds for local servers,
                // which would bypass the TCP endpoint (and its grants) the operator configured.
                .prefer_socket(false)
                .ssl_opts(ssl)
        };
        let mut attempt =
            tokio::time::timeout(timeouts.connect, Conn::new(opts(endpoint.tls.ssl_opts()))).await;
        // ssl-mode=preferred: a server without TLS is talked to in plain text, as the clients do.
        if let Ok(Err(mysql_async::Error::Driver(
            mysql_async::DriverError::NoClientSslFlagFromServer,
        ))) = &attempt
            && endpoint.tls.falls_back()
        {
            attempt = tokio::time::timeout(timeouts.connect, Conn::new(opts(None))).await;
        }
        let conn = match attempt {
            Err(_) => {
                return Err(SqlError::ConnectTimeout {
                    addr,
                    after: timeouts.connect,
                });
            }
            Ok(Err(err)) => {
                let (code, message) = match &err {
                    mysql_async::Error::Server(server) => {
                        (Some(server.code), server.message.clone())
                    }
                    mysql_async::Error::Driver(
                        mysql_async::DriverError::NoClientSslFlagFromServer,
                    ) => (
                        None,
                        format!(
                            "the server does not offer TLS, and ssl_mode is {}: enable TLS on \
                             the server or lower ssl_mode",
                            endpoint.tls.mode
                        ),
                    ),
                    other => (None, tls_hint(&other.to_string(), &endpoint.tls)),
                };
                return Err(SqlError::Connect {
                    addr,
                    code,
                    message,
                });
            }
            Ok(Ok(conn)) => conn,
        };
        let mut slot = Some(conn);
        let version_sql = "SELECT @@version AS version, @@version_comment AS version_comment";
        let row = first_row(
            &addr,
            version_sql,
            run_query(&mut slot, addr.clone(), timeouts.query, version_sql).await?,
        )?;
        let text = |name: &str| row.optional_text(&[name]).unwrap_or_default().to_owned();
        let flavor =
            Flavor::detect(&text("version"), &text("version_comment")).map_err(|source| {
                SqlError::Flavor {
                    addr: addr.clone(),
                    source,
                }
            })?;
        let identity_sql = flavor.identity_sql();
        let row = first_row(
            &addr,
            identity_sql,
            run_query(&mut slot, addr.clone(), timeouts.query, identity_sql).await?,
        )?;
        let identity = parse_answer(&addr, identity_sql, Identity::from_row(&row))?;
        if flavor.family == super::Family::Mariadb {
            // On a Galera member, reads that never wait for the cluster (`galera.rs`); a
            // server built without wsrep refuses the variable, and needs nothing.
            let sql = super::galera::NO_SYNC_WAIT_SQL;
            match run_query(&mut slot, addr.clone(), timeouts.query, sql).await {
                Ok(_) | Err(SqlError::Server { .. }) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(Self {
            addr,
            conn: slot,
            flavor,
            identity,
            query_timeout: timeouts.query,
            lead: Lead::default(),
        })
    }

    #[must_use]
    pub fn flavor(&self) -> &Flavor {
        &self.flavor
    }

    #[must_use]
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    #[must_use]
    pub fn address(&self) -> &str {
        &self.addr
    }

    /// Whether the connection is still usable (no timeout or I/O failure so far).
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.conn.is_some()
    }

    /// Runs one statement under the query timeout and returns its rows, NULL kept as `None`.
    pub async fn query_rows(&mut self, sql: &str) -> Result<Vec<RawRow>, SqlError> {
        run_query(&mut self.conn, self.addr.clone(), self.query_timeout, sql).await
    }

    /// Runs a statement that may legitimately take longer than the query timeout (a wait
    /// function given its own timeout): `within` replaces the configured query timeout.
    pub async fn query_rows_within(
        &mut self,
        sql: &str,
        within: Duration,
    ) -> Result<Vec<RawRow>, SqlError> {
        run_query(&mut self.conn, self.addr.clone(), within, sql).await
    }

    /// The query timeout this connection was opened with.
    #[must_use]
    pub fn query_timeout(&self) -> Duration {
        self.query_timeout
    }

    /// Rows of a read from a table that may not exist yet (rwtop's heartbeat before the writer
    /// reached this node, a pt-heartbeat table): a missing schema or table is no rows, not an
    /// error of the node.
    pub async fn query_rows_if_table(&mut self, sql: &str) -> Result<Vec<RawRow>, SqlError> {
        rows_if_table(self.query_rows(sql).await)
    }

    pub(super) async fn one_row(&mut self, sql: &str) -> Result<RawRow, SqlError> {
        let rows = self.query_rows(sql).await?;
        first_row(&self.addr, sql, rows)
    }

    pub(super) fn parse<T>(
        &self,
        sql: &str,
        parsed: Result<T, StatusError>,
    ) -> Result<T, SqlError> {
        parse_answer(&self.addr, sql, parsed)
    }

    async fn rows_as<T>(
        &mut self,
        sql: &str,
        from_row: impl Fn(&RawRow) -> Result<T, StatusError>,
    ) -> Result<Vec<T>, SqlError> {
        let rows = self.query_rows(sql).await?;
        let parsed = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>();
        self.parse(sql, parsed)
    }

    /// Every replication channel/connection of this node; empty on a node that replicates from
    /// nothing.
    pub async fn replica_status(&mut self) -> Result<Vec<ReplicaStatus>, SqlError> {
        let sql = self.flavor.replica_status_sql();
        self.rows_as(sql, ReplicaStatus::from_row).await
    }

    /// The node's own binlog coordinate; `None` when binary logging is off.
    pub async fn binlog_status(&mut self) -> Result<Option<BinlogStatus>, SqlError> {
        let sql = self.flavor.binlog_status_sql();
        Ok(self
            .rows_as(sql, BinlogStatus::from_row)
            .await?
            .into_iter()
            .next())
    }

    pub async fn binlog_files(&mut self) -> Result<Vec<BinlogFile>, SqlError> {
        let sql = self.flavor.binlog_list_sql();
        self.rows_as(sql, BinlogFile::from_row).await
    }

    pub async fn node_state(&mut self) -> Result<NodeState, SqlError> {
        let sql = self.flavor.state_sql();
        let family = self.flavor.family;
        let row = self.one_row(sql).await?;
        self.parse(sql, NodeState::from_row(&row, family))
    }

    /// The health lint's settings, one statement (see [`Flavor::settings_sql`]).
    pub async fn settings(&mut self) -> Result<super::SafetySettings, SqlError> {
        let sql = self.flavor.settings_sql();
        let family = self.flavor.family;
        let row = self.one_row(sql).await?;
        let mut settings = self.parse(sql, super::SafetySettings::from_row(&row, family))?;
        // The node's copies of rwtop's tables, whether or not rwtop writes here: a replica's
        // copy must take the rows its roots send. Unread when refused (a missing grant).
        let check = super::own_tables::check_sql(&super::own_tables::ALL);
        match self.query_rows(&check).await {
            Ok(rows) => settings.own_tables = super::own_tables::mismatches(&rows),
            Err(SqlError::Server { .. }) => {}
            Err(other) => return Err(other),
        }
        // Tables without a key, for the lint (`table_keys.rs`); unread when refused.
        match self.keyless_tables().await {
            Ok(tables) => settings.keyless_tables = Some(tables),
            Err(SqlError::Server { .. }) => {}
            Err(other) => return Err(other),
        }
        Ok(settings)
    }

    /// Whether the node refuses writes now, asked right before a write (a switchover turns a
    /// primary read-only under a live connection); a value that cannot be read counts as
    /// read-only.
    pub async fn is_read_only(&mut self) -> Result<bool, SqlError> {
        let rows = self
            .query_rows("SELECT @@global.read_only AS read_only")
            .await?;
        Ok(rows
            .first()
            .and_then(|r| r.optional_bool(&["read_only"]).ok().flatten())
            .unwrap_or(true))
    }

    pub async fn replica_hosts(&mut self) -> Result<Vec<ReplicaHost>, SqlError> {
        let sql = self.flavor.replica_hosts_sql();
        self.rows_as(sql, ReplicaHost::from_row).await
    }

    /// One processlist scan: summary, DDL in flight and the appliers' workers (on `MySQL` 8 from
    /// its worker table, read with the scan; a refusal of that table leaves the workers unread).
    pub async fn processes(&mut self) -> Result<super::Processlist, SqlError> {
        let sql = super::processlist::processlist_sql(&self.flavor);
        let rows = self.query_rows(&sql).await?;
        let mut list = self.parse(&sql, super::Processlist::from_rows(&rows))?;
        if let Some(sql) = super::appliers::workers_sql(&self.flavor) {
            match self.query_rows(sql).await {
                Ok(rows) => {
                    list.workers = self.parse(sql, super::appliers::workers_from_table(&rows))?;
                }
                Err(SqlError::Server { .. }) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(list)
    }

    pub async fn semisync(&mut self) -> Result<SemiSync, SqlError> {
        let variables_sql = self.flavor.semisync_variables_sql();
        let variables = self.query_rows(variables_sql).await?;
        let status_sql = self.flavor.semisync_status_sql();
        let status = self.query_rows(status_sql).await?;
        self.parse(status_sql, SemiSync::from_rows(&variables, &status))
    }

    /// Closes politely; a connection that is already gone is fine.
    pub async fn close(mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = tokio::time::timeout(self.query_timeout, conn.disconnect()).await;
        }
    }
}

/// Runs one statement on the connection in `slot`, emptying the slot when the connection can no
/// longer be trusted.
async fn run_query(
    slot: &mut Option<Conn>,
    addr: String,
    timeout: Duration,
    sql: &str,
) -> Result<Vec<RawRow>, SqlError> {
    let Some(conn) = slot.as_mut() else {
        return Err(SqlError::Closed { addr });
    };
    let outcome = tokio::time::timeout(timeout, conn.query::<Row, _>(sql)).await;
    judged(slot, addr, timeout, sql, outcome).map(raw_rows)
}

/// A statement's outcome under its timeout as an [`SqlError`] naming `sql`; the connection in
/// `slot` is emptied when it can no longer be trusted (a timeout, a connection broken mid-way).
pub(super) fn judged<T>(
    slot: &mut Option<Conn>,
    addr: String,
    timeout: Duration,
    sql: &str,
    outcome: Result<Result<T, mysql_async::Error>, tokio::time::error::Elapsed>,
) -> Result<T, SqlError> {
    let sql_text = || sql.to_owned();
    let error = match outcome {
        Ok(Ok(answer)) => return Ok(answer),
        Ok(Err(mysql_async::Error::Server(server))) => SqlError::Server {
            addr,
            sql: sql_text(),
            code: server.code,
            message: server.message,
        },
        Ok(Err(other)) => SqlError::Lost {
            addr,
            sql: sql_text(),
            message: other.to_string(),
        },
        Err(_) => SqlError::QueryTimeout {
            addr,
            sql: sql_text(),
            after: timeout,
        },
    };
    if error.drops_connection() {
        // Never reuse a connection whose query was cancelled or broke mid-way.
        *slot = None;
    }
    Err(error)
}

pub(super) fn first_row(addr: &str, sql: &str, rows: Vec<RawRow>) -> Result<RawRow, SqlError> {
    rows.into_iter().next().ok_or_else(|| SqlError::Lost {
        addr: addr.to_owned(),
        sql: sql.to_owned(),
        message: "the statement returned no row".to_owned(),
    })
}

pub(super) fn parse_answer<T>(
    addr: &str,
    sql: &str,
    parsed: Result<T, StatusError>,
) -> Result<T, SqlError> {
    parsed.map_err(|source| SqlError::Parse {
        addr: addr.to_owned(),
        sql: sql.to_owned(),
        source: Box::new(source),
    })
}

/// One result set's rows, sharing one list of column names. Text-protocol rows carry bytes or
/// NULL; the binary-protocol variants are rendered as text so one parser serves both.
pub(super) fn raw_rows(rows: Vec<Row>) -> Vec<RawRow> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let names: Arc<Vec<String>> = Arc::new(
        first
            .columns_ref()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect(),
    );
    rows.into_iter()
        .map(|row| {
            let values = row
                .unwrap_raw()
                .into_iter()
                .map(|value| match value {
                    None | Some(Value::NULL) => None,
                    Some(Value::Bytes(bytes)) => Some(
                        String::from_utf8(bytes)
                            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
                    ),
                    Some(other) => Some(other.as_sql(true).trim_matches('\'').to_owned()),
                })
                .collect();
            RawRow::with_names(Arc::clone(&names), values)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_login_is_told_from_other_failures_by_its_text() {
        let refused = SqlError::Connect {
            addr: "127.0.0.1:3306".into(),
            code: Some(1045),
            message: "Access denied for user 'rwtop'@'127.0.0.1' (using password: YES)".into(),
        };
        assert!(is_login_refused(&refused.to_string()), "{refused}");
        let closed = SqlError::Connect {
            addr: "127.0.0.1:1".into(),
            code: None,
            message: "Connection refused (os error 111)".into(),
        };
        let no_grant = SqlError::Server {
            addr: "127.0.0.1:3306".into(),
            sql: "SHOW SLAVE HOSTS".into(),
            code: 1227,
            message: "Access denied; you need (at least one of) the REPLICATION MASTER ADMIN \
                      privilege(s) for this operation"
                .into(),
        };
        for other in [closed, no_grant] {
            assert!(!is_login_refused(&other.to_string()), "{other}");
        }
    }
}
