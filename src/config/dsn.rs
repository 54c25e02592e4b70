//! `[name=]mysql://user[:password]@host[:port]`, the one way a node is written, in the file and on
//! the command line alike; and the other names a config holds (node names, the heartbeat writer
//! id, the pt-heartbeat table), each checked here because it ends up in SQL, a table or a log.
//!
//! User and password are taken literally (no percent-decoding): a password containing `%` would
//! otherwise change meaning, and an inline password is discouraged anyway. The `@` that ends the
//! user part is the last one, so a password may contain `@` and `:`.

use std::net::Ipv6Addr;

use super::file::NodeSpec;
use super::{CliOverrides, ConfigError, NodeConfig, Origin, Role};
use crate::mysql::{Endpoint, Secret};
use crate::units::{excerpt, quoted};

/// The port the servers listen on unless told otherwise.
pub const DEFAULT_PORT: u16 = 3306;

/// The longest host name DNS can resolve (RFC 1035, in its dotted text form).
const MAX_HOST_LEN: usize = 253;

/// The accepted form, quoted by every DSN error.
pub const EXPECTED: &str =
    "[name=]mysql://user@host[:port], e.g. mysql://rwtop@db1:3306 or r1=mysql://rwtop@[::1]:3307";

/// A node name is shown in tables and used as a key in logs and JSON, so it is kept to characters
/// that need no quoting anywhere.
pub const NAME_EXPECTED: &str = "a non-empty name of ASCII letters, digits, '_', '.', ':' or '-'";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedDsn {
    pub name: Option<String>,
    /// Without brackets for IPv6 (`::1`), as the driver wants it.
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<Secret>,
}

pub fn parse_dsn(text: &str) -> Result<ParsedDsn, ConfigError> {
    parse(text).map_err(|reason| ConfigError::BadDsn {
        at: None,
        dsn: excerpt(&redact(text)),
        reason,
    })
}

fn parse(text: &str) -> Result<ParsedDsn, String> {
    let trimmed = text.trim();
    let Some(scheme_end) = trimmed.find("://") else {
        return Err("no mysql:// scheme".to_owned());
    };
    let (prefix, rest) = (&trimmed[..scheme_end], &trimmed[scheme_end + 3..]);
    // `name=` can only sit before the scheme: a `=` after it belongs to a password.
    let (name, scheme) = match prefix.rsplit_once('=') {
        Some((name, scheme)) => {
            check_name(name).map_err(|e| format!("node name: {e}"))?;
            (Some(name.to_owned()), scheme)
        }
        None => (None, prefix),
    };
    if !scheme.eq_ignore_ascii_case("mysql") {
        return Err(format!("scheme {} is not mysql://", quoted(scheme)));
    }
    // A bare trailing slash is a habit from other URLs; a database or options are not used.
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let Some((userinfo, hostport)) = rest.rsplit_once('@') else {
        return Err("no user: write user@ before the host".to_owned());
    };
    let (user, password) = match userinfo.split_once(':') {
        Some((user, password)) => (user, Some(Secret::new(password))),
        None => (userinfo, None),
    };
    if user.is_empty() {
        return Err("the user before @ is empty".to_owned());
    }
    if user
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '/')
    {
        return Err(format!(
            "user {} contains a space, '/' or control character",
            quoted(user)
        ));
    }
    let (host, port) = split_host_port(hostport)?;
    Ok(ParsedDsn {
        name,
        host,
        port,
        user: user.to_owned(),
        password,
    })
}

fn split_host_port(hostport: &str) -> Result<(String, u16), String> {
    let (host, port_text) = if let Some(bracketed) = hostport.strip_prefix('[') {
        let Some((inside, after)) = bracketed.split_once(']') else {
            return Err("'[' without a closing ']' around the IPv6 address".to_owned());
        };
        if inside.parse::<Ipv6Addr>().is_err() {
            return Err(format!("[{}] is not an IPv6 address", excerpt(inside)));
        }
        let port = match after {
            "" => None,
            _ => match after.strip_prefix(':') {
                Some(port) => Some(port),
                None => return Err(format!("unexpected {} after ]", quoted(after))),
            },
        };
        (inside.to_owned(), port)
    } else {
        if hostport.matches(':').count() > 1 {
            return Err("an IPv6 address needs brackets, as in [::1]:3306".to_owned());
        }
        let (host, port) = match hostport.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        };
        if host.is_empty() {
            return Err("the host is empty".to_owned());
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        {
            return Err(format!(
                "host {} may hold only letters, digits, '.', '-' and '_'",
                quoted(host)
            ));
        }
        if host.len() > MAX_HOST_LEN {
            return Err(format!(
                "host {} is longer than {MAX_HOST_LEN} characters, the most a host name has",
                quoted(host)
            ));
        }
        (host.to_owned(), port)
    };
    let port = match port_text {
        None => DEFAULT_PORT,
        Some(text) => parse_port(text)?,
    };
    Ok((host, port))
}

fn parse_port(text: &str) -> Result<u16, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "port {} is not a number from 1 to 65535",
            quoted(text)
        ));
    }
    // Only digits remain, so a parse failure is an overflow.
    match text.parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ => Err(format!("port {} is out of range 1-65535", excerpt(text))),
    }
}

/// Turns what the file or the flags say into nodes: DSNs parsed, names settled, no node twice.
pub fn build_nodes(
    specs: &[NodeSpec],
    warnings: &mut Vec<String>,
) -> Result<Vec<NodeConfig>, ConfigError> {
    let mut nodes: Vec<NodeConfig> = Vec::with_capacity(specs.len());
    let mut names: Vec<Origin> = Vec::with_capacity(specs.len());
    let mut addresses: Vec<Origin> = Vec::with_capacity(specs.len());
    for spec in specs {
        let parsed = parse(&spec.dsn).map_err(|reason| ConfigError::BadDsn {
            at: Some(spec.origin.clone()),
            dsn: excerpt(&redact(&spec.dsn)),
            reason,
        })?;
        let (name, name_at) = node_name(spec, &parsed)?;
        let address = display_address(&parsed.host, parsed.port);
        if let Some(i) = nodes.iter().position(|n| n.name == name) {
            return Err(ConfigError::DuplicateNode {
                what: "name",
                value: name,
                first: Box::new(names[i].clone()),
                second: Box::new(name_at),
            });
        }
        let same_address = |n: &NodeConfig| {
            n.endpoint.port == parsed.port && n.endpoint.host.eq_ignore_ascii_case(&parsed.host)
        };
        if let Some(i) = nodes.iter().position(same_address) {
            return Err(ConfigError::DuplicateNode {
                what: "address",
                value: address,
                first: Box::new(addresses[i].clone()),
                second: Box::new(spec.origin.clone()),
            });
        }
        if parsed.password.is_some() {
            warnings.push(format!(
                "{}: the DSN \"{}\" holds a password, which can leak through `ps`, shell \
                 history or a shared file; prefer {}, a password file or the prompt",
                spec.origin,
                redact(&spec.dsn),
                super::password::ENV_VAR,
            ));
        }
        names.push(name_at);
        addresses.push(spec.origin.clone());
        nodes.push(NodeConfig {
            name,
            role: spec.role,
            endpoint: Endpoint {
                host: parsed.host,
                port: parsed.port,
                user: parsed.user,
                password: parsed.password,
                tls: crate::mysql::Tls::default(),
            },
        });
    }
    Ok(nodes)
}

/// The `name =` key, else the DSN's `name=` prefix, else the address, which is unique anyway.
fn node_name(spec: &NodeSpec, parsed: &ParsedDsn) -> Result<(String, Origin), ConfigError> {
    match (&spec.name, &parsed.name) {
        (Some((name, at)), dsn_name) => {
            check_name(name).map_err(|message| ConfigError::Invalid {
                at: at.clone(),
                message,
            })?;
            match dsn_name {
                Some(other) if other != name => Err(ConfigError::Invalid {
                    at: at.clone(),
                    message: format!(
                        "found name {} but the DSN names the node {}; \
                         expected one name (drop the DSN's name= prefix or make them equal)",
                        quoted(name),
                        quoted(other)
                    ),
                }),
                _ => Ok((name.clone(), at.clone())),
            }
        }
        (None, Some(name)) => Ok((name.clone(), spec.origin.clone())),
        // Every character a host may hold is allowed in a name, so this name is always valid.
        (None, None) => Ok((
            format!("{}:{}", parsed.host, parsed.port),
            spec.origin.clone(),
        )),
    }
}

/// `host:port`, with IPv6 hosts in brackets so the port stays readable.
fn display_address(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Checks a node name, whether from `name =`, a `name=` DSN prefix or generated.
pub fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    if valid {
        Ok(())
    } else {
        Err(format!("found {}, expected {NAME_EXPECTED}", quoted(name)))
    }
}

/// The nodes given by `--primary` and `--replica`, which replace the file's when present.
pub fn cli_node_specs(cli: &CliOverrides) -> Vec<NodeSpec> {
    let spec = |role, flag: &str, dsn: &String| NodeSpec {
        role,
        name: None,
        dsn: dsn.clone(),
        origin: Origin::Flag(flag.to_owned()),
    };
    cli.primaries
        .iter()
        .map(|dsn| spec(Role::Primary, "--primary", dsn))
        .chain(
            cli.replicas
                .iter()
                .map(|dsn| spec(Role::Replica, "--replica", dsn)),
        )
        .collect()
}

/// The writer id is stored in a heartbeat row, so it has the row's width and nothing unprintable.
pub fn check_writer_id(id: &str) -> Result<(), String> {
    if id.chars().count() <= 64 && !id.chars().any(char::is_control) {
        Ok(())
    } else {
        Err(format!(
            "found {}, expected at most 64 printable characters (or \"\" to derive it)",
            quoted(id)
        ))
    }
}

/// The table name is put into SQL, so only plain identifiers pass.
pub fn check_pt_table(table: &str) -> Result<(), String> {
    let ident = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    };
    let valid = match table.split_once('.') {
        Some((schema, name)) => ident(schema) && ident(name),
        None => ident(table),
    };
    if valid {
        Ok(())
    } else {
        Err(format!(
            "found {}, expected schema.table made of letters, digits, '_' or '$' \
             (such as \"percona.heartbeat\")",
            quoted(table)
        ))
    }
}

/// The DSN with any password replaced by `***`, the only form an error or warning may quote.
///
/// It works on malformed text too, since that is exactly when it gets quoted: whatever sits
/// between the first `:` and the last `@` of the part after the scheme is masked, and without
/// any `@`, a non-numeric text after the last `:` is masked as well, since it may be a password
/// whose host was forgotten.
#[must_use]
pub fn redact(text: &str) -> String {
    let (head, rest) = match text.find("://") {
        Some(i) => text.split_at(i + 3),
        None => ("", text),
    };
    if let Some((userinfo, hostport)) = rest.rsplit_once('@') {
        return match userinfo.split_once(':') {
            Some((user, _)) => format!("{head}{user}:***@{hostport}"),
            None => text.to_owned(),
        };
    }
    match rest.rsplit_once(':') {
        Some((before, after))
            if !after.is_empty()
                && !after
                    .trim_end_matches('/')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            format!("{head}{before}:***")
        }
        _ => text.to_owned(),
    }
}

/// `text`, a message that may quote a config line or value verbatim (the toml crate's report
/// shows the offending line; serde's `invalid type: string "..."` shows the value), with every
/// DSN in it passed through [`redact`].
///
/// A DSN is found by its `://` and runs to the quote that opened it (`"` or `'`; an escaped
/// `\"` does not end it), else to the end of its line: a password holding spaces, `#` or quotes
/// is masked whole, at worst with some text after it.
#[must_use]
pub fn redact_quoted(text: &str) -> String {
    text.split_inclusive('\n').map(redact_line).collect()
}

fn redact_line(line: &str) -> String {
    let body = line.trim_end_matches(['\n', '\r']);
    let mut out = String::with_capacity(line.len());
    let mut rest = body;
    while let Some(scheme) = rest.find("://") {
        let opener = rest[..scheme].rfind(['"', '\'']);
        let start = opener.map_or(0, |i| i + 1);
        let after = scheme + 3;
        let end = opener
            .and_then(|i| closing_quote(&rest[after..], rest.as_bytes()[i]))
            .map_or(rest.len(), |i| after + i);
        out.push_str(&rest[..start]);
        out.push_str(&redact(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.push_str(&line[body.len()..]);
    out
}

/// Byte offset of the first `quote` in `text` not escaped by a backslash.
fn closing_quote(text: &str, quote: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_dsns_quoted_in_messages() {
        let toml = "2 | dsn = \"mysql://u:p w#d@h:1\" x\n  |  ^\n";
        assert_eq!(
            redact_quoted(toml),
            "2 | dsn = \"mysql://u:***@h:1\" x\n  |  ^\n"
        );
        assert_eq!(
            redact_quoted("invalid type: string \"r=mysql://u:a\\\"b@h\", expected x"),
            "invalid type: string \"r=mysql://u:***@h\", expected x"
        );
        // Unterminated: to the end of the line, which may hold the rest of the password.
        assert_eq!(
            redact_quoted("dsn = 'mysql://u:pw@h:1\nnext"),
            "dsn = 'mysql://u:***@h:1\nnext"
        );
        assert_eq!(
            redact_quoted("a \"mysql://u:x@h\" b 'mysql://v:y@i' c mysql://w@j"),
            "a \"mysql://u:***@h\" b 'mysql://v:***@i' c mysql://w@j"
        );
        assert_eq!(
            redact_quoted("no dsn here: \"a:b@c\""),
            "no dsn here: \"a:b@c\""
        );
    }

    #[test]
    fn redacts_everywhere_a_password_can_hide() {
        assert_eq!(redact("mysql://u:pw@h:1"), "mysql://u:***@h:1");
        assert_eq!(redact("mysql://u:p@ss:w@h"), "mysql://u:***@h");
        assert_eq!(redact("r=u:pw@h"), "r=u:***@h");
        assert_eq!(redact("mysql://u:secret"), "mysql://u:***");
        assert_eq!(redact("mysql://h:3306"), "mysql://h:3306");
        assert_eq!(redact("mysql://u@h"), "mysql://u@h");
    }

    #[test]
    fn names() {
        assert!(check_name("db-1.eu:a_b").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a b").is_err());
    }
}
