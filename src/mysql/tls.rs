//! TLS to servers, with the modes MySQL's and MariaDB's clients use (`--ssl-mode`):
//!
//! | mode | encrypts | checks the certificate | checks the host name |
//! |---|---|---|---|
//! | `disabled` | no | – | – |
//! | `preferred` (default) | when the server offers TLS | no | no |
//! | `required` | always, or the connection fails | no | no |
//! | `verify-ca` | always | against `ssl_ca` (else the public roots) | no |
//! | `verify-identity` | always | yes | yes |

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use mysql_async::SslOpts;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsMode {
    Disabled,
    #[default]
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

/// How to reach one server over TLS.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tls {
    pub mode: TlsMode,
    /// PEM file of the CA(s) to trust for `verify-ca` / `verify-identity`.
    pub ca: Option<PathBuf>,
}

pub const MODES: &str = "disabled, preferred, required, verify-ca or verify-identity";

impl FromStr for TlsMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "disabled" => Ok(Self::Disabled),
            "preferred" => Ok(Self::Preferred),
            "required" => Ok(Self::Required),
            "verify-ca" => Ok(Self::VerifyCa),
            "verify-identity" => Ok(Self::VerifyIdentity),
            _ => Err(format!("found {text:?}, expected {MODES}")),
        }
    }
}

impl fmt::Display for TlsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Disabled => "disabled",
            Self::Preferred => "preferred",
            Self::Required => "required",
            Self::VerifyCa => "verify-ca",
            Self::VerifyIdentity => "verify-identity",
        })
    }
}

impl Tls {
    /// The driver's options for the first attempt; `None` for plain TCP.
    #[must_use]
    pub fn ssl_opts(&self) -> Option<SslOpts> {
        match self.mode {
            TlsMode::Disabled => None,
            TlsMode::Preferred | TlsMode::Required => Some(
                SslOpts::default()
                    .with_danger_accept_invalid_certs(true)
                    .with_danger_skip_domain_validation(true),
            ),
            TlsMode::VerifyCa => Some(
                SslOpts::default()
                    .with_root_certs(self.ca.iter().map(|p| p.clone().into()).collect())
                    .with_danger_skip_domain_validation(true),
            ),
            TlsMode::VerifyIdentity => Some(
                SslOpts::default()
                    .with_root_certs(self.ca.iter().map(|p| p.clone().into()).collect()),
            ),
        }
    }

    /// Whether a server without TLS may be talked to in plain text.
    #[must_use]
    pub fn falls_back(&self) -> bool {
        self.mode == TlsMode::Preferred
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_the_mysql_client_writes_them() {
        for (text, mode) in [
            ("DISABLED", TlsMode::Disabled),
            ("preferred", TlsMode::Preferred),
            ("Required", TlsMode::Required),
            ("VERIFY_CA", TlsMode::VerifyCa),
            ("verify-identity", TlsMode::VerifyIdentity),
        ] {
            assert_eq!(text.parse::<TlsMode>(), Ok(mode));
            assert_eq!(mode.to_string().parse::<TlsMode>(), Ok(mode));
        }
        assert!("on".parse::<TlsMode>().unwrap_err().contains("verify-ca"));
        assert!(Tls::default().ssl_opts().is_some(), "preferred by default");
        let off = Tls {
            mode: TlsMode::Disabled,
            ca: None,
        };
        assert!(off.ssl_opts().is_none());
    }
}
