//! Where and as whom to connect to a node, and how long to wait for it: what a connection is
//! opened from, kept apart from the connection itself (`conn.rs`).

use std::fmt;
use std::time::Duration;

/// A password that never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    #[must_use]
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<Secret>,
    pub tls: super::tls::Tls,
}

impl Endpoint {
    /// `host:port`, the name errors use (never the password).
    #[must_use]
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The same account, TLS settings and all, at another `host:port` (a node found in the
    /// topology rather than configured); `None` when `address` has no port.
    #[must_use]
    pub fn at(&self, address: &str) -> Option<Self> {
        let (host, port) = address.rsplit_once(':')?;
        Some(Self {
            host: host.to_owned(),
            port: port.parse().ok()?,
            ..self.clone()
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub query: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(3),
            query: Duration::from_secs(2),
        }
    }
}
