//! What the account holds, read from `SHOW GRANTS`: each `GRANT` line's privileges by scope,
//! parsed the same for both families (`MariaDB` quotes names with backticks; `MySQL` 5.7 quotes
//! the account with single quotes, 8.0 prints dynamic privileges on lines of their own).
//!
//! `MariaDB`'s `SHOW GRANTS` lists the current role's grants as well; `MySQL`'s lists a role
//! granted to the account without its privileges, so those are kept by name and said to be
//! unread rather than taken as held. Routine, proxy and column privileges grant no read rwtop
//! makes and are skipped; so is anything that does not parse (never a panic): an unparsed line
//! can only make a privilege look missing, never present.

use std::collections::BTreeSet;

use super::Scope;
use crate::mysql::{NodeConn, RawRow, SqlError};

/// The account's own grants, and on `MariaDB` its current role's.
pub const GRANTS_SQL: &str = "SHOW GRANTS";

impl NodeConn {
    /// What this connection's account holds, as the server lists it now. A server applies a
    /// global privilege granted or revoked since to new connections only: this connection's
    /// own may differ from what it lists (`poll::session` reconnects on such a change).
    pub async fn grants(&mut self) -> Result<AccountGrants, SqlError> {
        Ok(AccountGrants::from_rows(
            &self.query_rows(GRANTS_SQL).await?,
        ))
    }
}

/// The privileges an account holds, by scope.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountGrants {
    global: BTreeSet<String>,
    /// A schema name or pattern (`%`, `_`, `\_` as the server prints them) and its privileges.
    schemas: Vec<(String, BTreeSet<String>)>,
    tables: Vec<(String, String, BTreeSet<String>)>,
    /// Roles granted to the account whose privileges `SHOW GRANTS` did not list.
    pub roles: Vec<String>,
    /// The account as the server names it (`` `rwtop`@`%` ``), for the fix.
    account: Option<String>,
}

impl AccountGrants {
    /// Reads `SHOW GRANTS`'s rows: one column, one statement per row.
    #[must_use]
    pub fn from_rows(rows: &[RawRow]) -> Self {
        let lines: Vec<String> = rows
            .iter()
            .filter_map(|row| {
                let name = row.columns().next()?.to_owned();
                row.optional_text(&[name.as_str()]).map(str::to_owned)
            })
            .collect();
        Self::parse(lines.iter().map(String::as_str))
    }

    /// Reads the statements `SHOW GRANTS` prints.
    pub fn parse<'a>(lines: impl IntoIterator<Item = &'a str>) -> Self {
        let mut grants = Self::default();
        let mut granted_roles = Vec::new();
        let mut grantees = BTreeSet::new();
        for line in lines {
            match grant_line(line) {
                Some(Line::Privileges {
                    privileges,
                    object,
                    grantee,
                }) => {
                    grants.account.get_or_insert_with(|| grantee.clone());
                    grantees.insert(grantee);
                    match object {
                        Object::Global => grants.global.extend(privileges),
                        Object::Schema(db) => grants.schemas.push((db, privileges)),
                        Object::Table(db, table) => grants.tables.push((db, table, privileges)),
                        Object::Other => {}
                    }
                }
                Some(Line::Role { role, grantee }) => {
                    grants.account.get_or_insert(grantee);
                    granted_roles.push(role);
                }
                None => {}
            }
        }
        // A role whose own grants were listed too (MariaDB's current role) has been read.
        grants.roles = granted_roles
            .into_iter()
            .filter(|role| !grantees.contains(role))
            .collect();
        grants
    }

    /// The account as the server names it, or a placeholder where no line named it.
    #[must_use]
    pub fn account(&self) -> &str {
        self.account.as_deref().unwrap_or("<account>")
    }

    /// Whether the account holds `privilege` on `scope`: granted there or on a scope above it,
    /// by its name, an alias, or `ALL PRIVILEGES`.
    #[must_use]
    pub fn covers(&self, privilege: &str, scope: &Scope) -> bool {
        if grants(&self.global, privilege) {
            return true;
        }
        let (db, table) = match scope {
            Scope::Global => return false,
            Scope::Schema(db) => (db, None),
            Scope::Table(db, table) => (db, Some(table)),
        };
        let in_schema = self
            .schemas
            .iter()
            .any(|(pattern, set)| matches(pattern, db) && grants(set, privilege));
        in_schema
            || table.is_some_and(|table| {
                self.tables
                    .iter()
                    .any(|(d, t, set)| d == db && t == table && grants(set, privilege))
            })
    }
}

/// The names one privilege goes by, and what else grants it: `MariaDB` 10.5 renamed
/// `REPLICATION CLIENT` to `BINLOG MONITOR` and accepts `REPLICA MONITOR` for `SLAVE MONITOR`;
/// `SUPER` allows the status statements (`MariaDB` 10.11 names it beside them in its refusal)
/// and a `KILL`, though not `SHOW SLAVE HOSTS`.
fn grants(set: &BTreeSet<String>, privilege: &str) -> bool {
    let aliases: &[&str] = match privilege {
        "BINLOG MONITOR" => &["REPLICATION CLIENT", "SUPER"],
        "SLAVE MONITOR" => &["REPLICA MONITOR", "SUPER"],
        "REPLICATION CLIENT" | "CONNECTION ADMIN" | "CONNECTION_ADMIN" => &["SUPER"],
        _ => &[],
    };
    set.contains(privilege)
        || set.contains("ALL PRIVILEGES")
        || set.contains("ALL")
        || aliases.iter().any(|a| set.contains(*a))
}

/// A schema grant's name against a schema: `%` any run, `_` any one character, `\` escapes.
fn matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('%', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some(('_', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some(('\\', rest)) if !rest.is_empty() => {
                n.first() == rest.first() && go(&rest[1..], &n[1..])
            }
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    go(&p, &n)
}

#[derive(Debug, PartialEq, Eq)]
enum Object {
    Global,
    Schema(String),
    Table(String, String),
    /// A routine, a proxy user, anything rwtop needs no privilege on.
    Other,
}

#[derive(Debug, PartialEq, Eq)]
enum Line {
    Privileges {
        privileges: BTreeSet<String>,
        object: Object,
        grantee: String,
    },
    Role {
        role: String,
        grantee: String,
    },
}

/// One `GRANT …` line; `None` for anything else (`SET DEFAULT ROLE`, `REVOKE`, garbage).
fn grant_line(line: &str) -> Option<Line> {
    let rest = strip_word(line.trim(), "GRANT")?;
    let on = top_level(rest, " ON ");
    let to = top_level(rest, " TO ")?;
    let grantee = grantee(&rest[to + 4..]);
    let Some(on) = on.filter(|on| *on < to) else {
        let role = rest[..to].trim().to_owned();
        return Some(Line::Role { role, grantee });
    };
    let privileges = split_top(&rest[..on])
        .into_iter()
        .map(str::trim)
        // A column list (`SELECT (a, b)`) grants those columns only: not the table.
        .filter(|p| !p.contains('('))
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .map(|p| p.to_ascii_uppercase())
        .collect();
    let object = object(rest[on + 4..to].trim());
    Some(Line::Privileges {
        privileges,
        object,
        grantee,
    })
}

fn strip_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(' ')).then(|| rest.trim_start())
}

/// Where `needle` (upper case, with its spaces) first occurs outside quotes and parentheses,
/// ignoring case.
fn top_level(text: &str, needle: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut depth = 0_u32;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '`' | '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, _) if depth == 0 => {
                let at = text.get(i..i + needle.len());
                if at.is_some_and(|s| s.eq_ignore_ascii_case(needle)) {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A privilege list split at its commas outside parentheses.
fn split_top(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0_u32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out
}

/// The grantee, up to what follows it (`IDENTIFIED BY PASSWORD …`, `WITH GRANT OPTION`, …).
fn grantee(text: &str) -> String {
    let text = text.trim();
    let end = [" IDENTIFIED ", " WITH ", " REQUIRE ", " PASSWORD ", " VIA "]
        .iter()
        .filter_map(|word| top_level(text, word))
        .min()
        .unwrap_or(text.len());
    text[..end].trim().to_owned()
}

/// `*.*`, `` `db`.* ``, `` `db`.`t` ``, optionally after `TABLE`; routines and anything else
/// are [`Object::Other`].
fn object(text: &str) -> Object {
    let text = strip_word(text, "TABLE").unwrap_or(text);
    let routine = ["FUNCTION", "PROCEDURE", "PACKAGE"]
        .iter()
        .any(|word| strip_word(text, word).is_some());
    if routine {
        return Object::Other;
    }
    let Some((db, rest)) = name(text) else {
        return Object::Other;
    };
    let Some(rest) = rest.strip_prefix('.') else {
        return Object::Other;
    };
    let Some((table, tail)) = name(rest) else {
        return Object::Other;
    };
    if !tail.trim().is_empty() {
        return Object::Other;
    }
    match (db, table) {
        (Name::Star, Name::Star) => Object::Global,
        (Name::Text(db), Name::Star) => Object::Schema(db),
        (Name::Text(db), Name::Text(table)) => Object::Table(db, table),
        (Name::Star, Name::Text(_)) => Object::Other,
    }
}

enum Name {
    Star,
    Text(String),
}

/// One name at the start of `text` (`*`, `` `quoted` `` with ``` `` ``` for a backtick, or bare)
/// and what follows it.
fn name(text: &str) -> Option<(Name, &str)> {
    if let Some(rest) = text.strip_prefix('*') {
        return Some((Name::Star, rest));
    }
    if let Some(body) = text.strip_prefix('`') {
        let mut out = String::new();
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().is_some_and(|(_, next)| *next == '`') {
                    chars.next();
                    out.push('`');
                } else {
                    return Some((Name::Text(out), &body[i + 1..]));
                }
            } else {
                out.push(c);
            }
        }
        return None;
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '%' || c == '\\'))
        .unwrap_or(text.len());
    (end > 0).then(|| (Name::Text(text[..end].to_owned()), &text[end..]))
}

#[cfg(test)]
mod tests;
