//! MaxScale's REST API: `PUT /v1/servers/NAME/set?state=drain` and `…/clear?state=drain`, and
//! `GET /v1/servers/NAME` for its own view. Plain HTTP with basic auth (MaxScale's default on
//! its admin port); put a TLS-only admin interface behind the exec backend with `maxctrl`.
//!
//! MaxScale is not a Debian package, so the requests are tested byte for byte against a local
//! listener, not against MaxScale itself.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Action, ServerState};
use crate::mysql::Secret;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxscaleConfig {
    /// `host:port` of the REST API (8989 by default).
    pub address: String,
    pub user: String,
    pub password: Option<Secret>,
    /// MaxScale server names by replica name; a replica not listed uses its own name.
    pub servers: BTreeMap<String, String>,
}

impl MaxscaleConfig {
    #[must_use]
    pub fn server_for<'a>(&'a self, replica: &'a str) -> &'a str {
        super::server_name(&self.servers, replica)
    }

    #[must_use]
    pub fn describe(&self, replica: &str) -> String {
        format!(
            "maxscale server {} at {}",
            self.server_for(replica),
            self.address
        )
    }

    /// The full HTTP request a drain or undrain sends.
    #[must_use]
    pub fn request(&self, action: Action, replica: &str) -> String {
        let verb = match action {
            Action::Drain => "set",
            Action::Undrain => "clear",
        };
        let path = format!(
            "/v1/servers/{}/{verb}?state=drain",
            encode(self.server_for(replica))
        );
        self.http("PUT", &path)
    }

    fn http(&self, method: &str, path: &str) -> String {
        let credentials = format!(
            "{}:{}",
            self.user,
            self.password.as_ref().map_or("", Secret::expose)
        );
        format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Basic {}\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
            self.address,
            base64(credentials.as_bytes())
        )
    }

    pub async fn apply(
        &self,
        action: Action,
        replica: &str,
        timeout: Duration,
    ) -> Result<String, String> {
        let (status, body) = self.send(&self.request(action, replica), timeout).await?;
        if (200..300).contains(&status) {
            Ok(format!("MaxScale answered {status}"))
        } else {
            Err(format!(
                "MaxScale answered {status}: {}",
                first_error(&body)
            ))
        }
    }

    /// MaxScale's state string for each replica's server (`Master, Running`, `Drained, Slave,
    /// Running`).
    pub async fn view(
        &self,
        replicas: &[String],
        timeout: Duration,
    ) -> Result<BTreeMap<String, ServerState>, String> {
        let mut out = BTreeMap::new();
        for replica in replicas {
            let path = format!("/v1/servers/{}", encode(self.server_for(replica)));
            let (status, body) = self.send(&self.http("GET", &path), timeout).await?;
            if status == 200 {
                let state = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v["data"]["attributes"]["state"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                out.insert(replica.clone(), ServerState::from_label(&state));
            }
        }
        Ok(out)
    }

    async fn send(&self, request: &str, timeout: Duration) -> Result<(u16, String), String> {
        let exchange = async {
            let mut stream = tokio::net::TcpStream::connect(&self.address)
                .await
                .map_err(|e| {
                    format!(
                        "cannot reach MaxScale at {}: {e} (check drain.maxscale.url)",
                        self.address
                    )
                })?;
            stream
                .write_all(request.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            let mut answer = Vec::new();
            stream
                .read_to_end(&mut answer)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(String::from_utf8_lossy(&answer).into_owned())
        };
        let answer = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| {
                format!(
                    "MaxScale at {} gave no answer within {timeout:?}",
                    self.address
                )
            })??;
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| {
                format!(
                    "MaxScale sent no HTTP status line: {:?}",
                    answer.lines().next()
                )
            })?;
        let body = answer
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_owned();
        Ok((status, body))
    }
}

/// The first `errors[].detail` of a MaxScale error body, else the body itself.
fn first_error(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["errors"][0]["detail"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.trim().chars().take(200).collect())
}

/// Percent-encodes a path segment.
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn base64(input: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_examples() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn the_drain_request_is_a_put_with_basic_auth() {
        let cfg = MaxscaleConfig {
            address: "127.0.0.1:8989".into(),
            user: "admin".into(),
            password: Some(Secret::new("mariadb")),
            servers: [("r1".to_owned(), "server 2".to_owned())].into(),
        };
        assert_eq!(
            cfg.request(Action::Drain, "r1"),
            "PUT /v1/servers/server%202/set?state=drain HTTP/1.1\r\nHost: 127.0.0.1:8989\r\n\
             Authorization: Basic YWRtaW46bWFyaWFkYg==\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        assert!(
            cfg.request(Action::Undrain, "r2")
                .starts_with("PUT /v1/servers/r2/clear?state=drain ")
        );
        assert_eq!(
            first_error(r#"{"errors":[{"detail":"No such server"}]}"#),
            "No such server"
        );
    }
}
