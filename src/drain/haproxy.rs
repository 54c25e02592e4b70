//! HAProxy's runtime API over its admin socket (`stats socket … level admin`): one command per
//! connection, the answer read to EOF.
//!
//! `set server B/S state drain|ready` answers nothing on success and a message on failure
//! ("No such backend.", "No such server."), so any text back is a failure worth showing.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Action, ServerState};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaproxyConfig {
    /// A unix socket path, or `host:port` for `stats socket ipv4@…`.
    pub socket: String,
    /// The HAProxy backend that holds the replicas.
    pub backend: String,
    /// HAProxy server names by replica name; a replica not listed uses its own name.
    pub servers: BTreeMap<String, String>,
}

impl HaproxyConfig {
    #[must_use]
    pub fn server_for<'a>(&'a self, replica: &'a str) -> &'a str {
        super::server_name(&self.servers, replica)
    }

    #[must_use]
    pub fn set_command(&self, action: Action, replica: &str) -> String {
        let state = match action {
            Action::Drain => "drain",
            Action::Undrain => "ready",
        };
        format!(
            "set server {}/{} state {state}",
            self.backend,
            self.server_for(replica)
        )
    }

    #[must_use]
    pub fn describe(&self, replica: &str) -> String {
        format!(
            "haproxy {}/{} via {}",
            self.backend,
            self.server_for(replica),
            self.socket
        )
    }

    pub async fn apply(
        &self,
        action: Action,
        replica: &str,
        timeout: Duration,
    ) -> Result<String, String> {
        let command = self.set_command(action, replica);
        let answer = send(&self.socket, &command, timeout).await?;
        let answer = answer.trim();
        if answer.is_empty() {
            Ok(format!("`{command}` accepted"))
        } else {
            Err(format!("HAProxy refused `{command}`: {answer}"))
        }
    }

    /// HAProxy's own state of every server of the backend, by replica name where mapped.
    pub async fn view(&self, timeout: Duration) -> Result<BTreeMap<String, ServerState>, String> {
        let command = format!("show servers state {}", self.backend);
        let answer = send(&self.socket, &command, timeout).await?;
        let by_server = parse_servers_state(&answer)
            .map_err(|e| format!("HAProxy's answer to `{command}`: {e}"))?;
        let replica_of = |server: &str| {
            self.servers
                .iter()
                .find(|(_, s)| s.as_str() == server)
                .map_or(server, |(r, _)| r.as_str())
                .to_owned()
        };
        Ok(by_server
            .into_iter()
            .map(|(server, state)| (replica_of(&server), state))
            .collect())
    }
}

/// Sends one command and reads the answer to EOF (non-interactive mode closes after it).
async fn send(socket: &str, command: &str, timeout: Duration) -> Result<String, String> {
    let exchange = async {
        if socket.starts_with('/') || socket.starts_with('.') {
            let stream = tokio::net::UnixStream::connect(socket).await;
            converse(stream.map_err(|e| connect_error(socket, &e))?, command).await
        } else {
            let stream = tokio::net::TcpStream::connect(socket).await;
            converse(stream.map_err(|e| connect_error(socket, &e))?, command).await
        }
    };
    tokio::time::timeout(timeout, exchange).await.map_err(|_| {
        format!(
            "HAProxy admin socket {socket} gave no answer within {}",
            crate::units::duration(timeout)
        )
    })?
}

/// One command line out, the whole answer back.
async fn converse(
    mut stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    command: &str,
) -> Result<String, String> {
    stream
        .write_all(format!("{command}\n").as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

fn connect_error(socket: &str, err: &std::io::Error) -> String {
    format!(
        "cannot reach HAProxy's admin socket {socket}: {err} (check `stats socket {socket} level \
         admin` in haproxy.cfg and drain.haproxy.socket in rwtop.toml)"
    )
}

/// Parses `show servers state`: a version line, a `#` header naming the columns, then one row
/// per server. The state shown is HAProxy's: MAINT and DRAIN from the admin flags, else the
/// operational state.
pub fn parse_servers_state(text: &str) -> Result<BTreeMap<String, ServerState>, String> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let version = lines.next().ok_or("empty answer")?;
    if version != "1" {
        return Err(format!("unknown format version {version:?} (expected 1)"));
    }
    let header: Vec<&str> = lines
        .next()
        .and_then(|l| l.strip_prefix('#'))
        .ok_or("no column header")?
        .split_whitespace()
        .collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .ok_or_else(|| format!("no column {name}"))
    };
    let (name_at, op_at, admin_at) = (
        column("srv_name")?,
        column("srv_op_state")?,
        column("srv_admin_state")?,
    );
    let mut out = BTreeMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let field = |i: usize| {
            fields
                .get(i)
                .copied()
                .ok_or_else(|| format!("short row {line:?}"))
        };
        let number = |i: usize| {
            field(i)?
                .parse::<u32>()
                .map_err(|_| format!("not a number in {line:?}"))
        };
        let (op, admin) = (number(op_at)?, number(admin_at)?);
        // Admin flags (src/server.h): FMAINT 0x01, IMAINT 0x02, CMAINT 0x04, FDRAIN 0x08,
        // IDRAIN 0x10, RMAINT 0x20, HMAINT 0x40.
        let state = if admin & 0x67 != 0 {
            ServerState::Maint
        } else if admin & 0x18 != 0 {
            ServerState::Drain
        } else {
            match op {
                2 => ServerState::Ready,
                1 | 3 => ServerState::Other(if op == 1 { "STARTING" } else { "STOPPING" }.into()),
                _ => ServerState::Down,
            }
        };
        out.insert(field(name_at)?.to_owned(), state);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_state_reads_admin_flags_before_operational_state() {
        // The shape HAProxy 2.6 prints (columns trimmed after srv_admin_state's neighbours).
        let text = "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state \
                    srv_uweight\n3 replicas 1 r1 127.0.0.1 2 8 1\n3 replicas 2 r2 127.0.0.1 2 0 1\n\
                    3 replicas 3 r3 127.0.0.1 0 1 1\n3 replicas 4 r4 127.0.0.1 0 0 1\n";
        let states = parse_servers_state(text).unwrap();
        assert_eq!(states["r1"], ServerState::Drain);
        assert_eq!(states["r2"], ServerState::Ready);
        assert_eq!(states["r3"], ServerState::Maint);
        assert_eq!(states["r4"], ServerState::Down);
        assert!(
            parse_servers_state("2\n# x\n")
                .unwrap_err()
                .contains("version")
        );
        assert!(
            parse_servers_state("1\n# srv_name\n")
                .unwrap_err()
                .contains("srv_op_state")
        );
    }

    #[test]
    fn commands_name_backend_and_mapped_server() {
        let cfg = HaproxyConfig {
            socket: "/run/haproxy.sock".into(),
            backend: "mysql_ro".into(),
            servers: [("r1".to_owned(), "db2".to_owned())].into(),
        };
        assert_eq!(
            cfg.set_command(Action::Drain, "r1"),
            "set server mysql_ro/db2 state drain"
        );
        assert_eq!(
            cfg.set_command(Action::Undrain, "r2"),
            "set server mysql_ro/r2 state ready"
        );
    }
}
