//! ProxySQL's admin interface (MySQL protocol, port 6032 by default): the replica's rows in the
//! reader hostgroups go `OFFLINE_SOFT` (no new connections, running ones finish) or back
//! `ONLINE`, then `LOAD MYSQL SERVERS TO RUNTIME` makes it take effect.
//!
//! ProxySQL is not a Debian package, so these statements are tested as text, not live.

use std::collections::BTreeMap;
use std::time::Duration;

use mysql_async::prelude::Queryable;

use super::{Action, ServerState};
use crate::mysql::{Endpoint, literal};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxysqlConfig {
    pub admin: Endpoint,
    /// The reader hostgroup(s) whose rows for the replica change.
    pub hostgroups: Vec<u32>,
}

impl ProxysqlConfig {
    fn hostgroups(&self) -> String {
        self.hostgroups
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The statements a drain or undrain sends, in order.
    #[must_use]
    pub fn statements(&self, action: Action, host: &str, port: u16) -> [String; 2] {
        let status = match action {
            Action::Drain => "OFFLINE_SOFT",
            Action::Undrain => "ONLINE",
        };
        [
            format!(
                "UPDATE mysql_servers SET status = '{status}' WHERE hostname = {} AND port = {port} \
                 AND hostgroup_id IN ({})",
                literal(host),
                self.hostgroups()
            ),
            "LOAD MYSQL SERVERS TO RUNTIME".to_owned(),
        ]
    }

    #[must_use]
    pub fn view_sql(&self) -> String {
        format!(
            "SELECT hostname, port, status FROM runtime_mysql_servers WHERE hostgroup_id IN ({}) \
             ORDER BY hostname, port",
            self.hostgroups()
        )
    }

    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "proxysql {} hostgroup(s) {}",
            self.admin.address(),
            self.hostgroups()
        )
    }

    async fn connect(&self, timeout: Duration) -> Result<mysql_async::Conn, String> {
        let opts = mysql_async::OptsBuilder::default()
            .ip_or_hostname(self.admin.host.clone())
            .tcp_port(self.admin.port)
            .user(Some(self.admin.user.clone()))
            .pass(self.admin.password.as_ref().map(|p| p.expose().to_owned()))
            .prefer_socket(false);
        match tokio::time::timeout(timeout, mysql_async::Conn::new(opts)).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(format!(
                "cannot reach ProxySQL admin at {}: {e} (check drain.proxysql.admin)",
                self.admin.address()
            )),
            Err(_) => Err(format!(
                "ProxySQL admin at {} gave no handshake within {timeout:?}",
                self.admin.address()
            )),
        }
    }

    pub async fn apply(
        &self,
        action: Action,
        host: &str,
        port: u16,
        timeout: Duration,
    ) -> Result<String, String> {
        let mut conn = self.connect(timeout).await?;
        let [update, load] = self.statements(action, host, port);
        let run = async {
            conn.query_drop(&update)
                .await
                .map_err(|e| format!("`{update}`: {e}"))?;
            if conn.affected_rows() == 0 {
                return Err(format!(
                    "ProxySQL has no server {host}:{port} in hostgroup(s) {} (or it is already in \
                     that state): nothing changed",
                    self.hostgroups()
                ));
            }
            let rows = conn.affected_rows();
            conn.query_drop(&load)
                .await
                .map_err(|e| format!("`{load}`: {e}"))?;
            Ok(format!("{rows} row(s) updated, loaded to runtime"))
        };
        let result = tokio::time::timeout(timeout, run)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "ProxySQL admin gave no answer within {}",
                    crate::units::duration(timeout)
                ))
            });
        let _ = conn.disconnect().await;
        result
    }

    /// ProxySQL's runtime status per `host:port`.
    pub async fn view(&self, timeout: Duration) -> Result<BTreeMap<String, ServerState>, String> {
        let mut conn = self.connect(timeout).await?;
        let sql = self.view_sql();
        let rows: Result<Vec<(String, u16, String)>, String> =
            tokio::time::timeout(timeout, conn.query(&sql))
                .await
                .map_err(|_| {
                    format!(
                        "ProxySQL admin gave no answer within {}",
                        crate::units::duration(timeout)
                    )
                })
                .and_then(|r| r.map_err(|e| format!("`{sql}`: {e}")));
        let _ = conn.disconnect().await;
        Ok(rows?
            .into_iter()
            .map(|(host, port, status)| {
                (format!("{host}:{port}"), ServerState::from_label(&status))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_and_undrain_send_these_statements() {
        let cfg = ProxysqlConfig {
            admin: Endpoint::default(),
            hostgroups: vec![20, 21],
        };
        assert_eq!(
            cfg.statements(Action::Drain, "10.0.0.2", 3306),
            [
                "UPDATE mysql_servers SET status = 'OFFLINE_SOFT' WHERE hostname = '10.0.0.2' \
                 AND port = 3306 AND hostgroup_id IN (20, 21)"
                    .to_owned(),
                "LOAD MYSQL SERVERS TO RUNTIME".to_owned()
            ]
        );
        assert!(
            cfg.statements(Action::Undrain, "h'x", 1)[0]
                .contains("status = 'ONLINE' WHERE hostname = 'h''x'")
        );
        assert_eq!(
            cfg.view_sql(),
            "SELECT hostname, port, status FROM runtime_mysql_servers WHERE hostgroup_id IN \
             (20, 21) ORDER BY hostname, port"
        );
    }
}
