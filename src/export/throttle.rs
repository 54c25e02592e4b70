//! `GET`/`HEAD /throttle` on the metrics address: the throttle verdict
//! ([`crate::alerts::throttle`]) on the newest snapshot, as an online schema change tool asks it
//! (`docs/throttle.md`).
//!
//! 200 is "go"; 503 with `Retry-After: 1` is "throttle" (gh-ost's `--throttle-http` throttles on
//! any status but 200, and 503 says "not now, ask again" where 429 would blame the caller's
//! rate); 400 is a request this endpoint cannot answer as asked, with why. The body's first
//! line is the verdict and its one-line reason; one line per covered replica follows, or the same
//! as JSON with `?format=json`. The answer is read from the snapshot already published: no
//! server is queried and the engine never waits on a request.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::alerts::throttle::{Judged, Throttle, ThrottleSettings, judge};
use crate::store::Snapshot;
use crate::store::lag::Lag;
use crate::units;

/// The path of the throttle endpoint.
pub const THROTTLE_PATH: &str = "/throttle";

/// How many node names a 400 lists before it cuts the list.
const NAMES_SHOWN: usize = 20;

/// What a request asks for beyond the configured settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// The answer: a status and a body of the given format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// 200, 503 or 400.
    pub status: u16,
    pub body: String,
    pub json: bool,
    /// The reason line, for a header a `HEAD` caller can read.
    pub reason: String,
}

/// Answers `query` (the part after `?`, if any) from `snapshot`, published `age` ago, with
/// `configured` as the settings a parameter does not override.
#[must_use]
pub fn answer(
    snapshot: &Snapshot,
    configured: &ThrottleSettings,
    query: Option<&str>,
    age: Duration,
) -> Answer {
    let (settings, format) = match parse(query.unwrap_or(""), configured, snapshot) {
        Ok(asked) => asked,
        Err(why) => {
            let reason = format!("bad request: {why}");
            return Answer {
                status: 400,
                body: format!("{reason}\n"),
                json: false,
                reason,
            };
        }
    };
    let verdict = judge(snapshot, &settings, age);
    let status = if verdict.go { 200 } else { 503 };
    let body = match format {
        Format::Text => text(&verdict),
        Format::Json => json(&verdict, age),
    };
    Answer {
        status,
        body,
        json: format == Format::Json,
        reason: verdict.reason,
    }
}

/// The parameters: `max_lag`, `replicas`, `skip` and `format`, each at most once.
fn parse(
    query: &str,
    configured: &ThrottleSettings,
    snapshot: &Snapshot,
) -> Result<(ThrottleSettings, Format), String> {
    let mut settings = configured.clone();
    let mut format = Format::Text;
    let mut seen: Vec<String> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            format!(
                "parameter {} has no value: write e.g. max_lag=1s",
                units::quoted(&decode(pair).unwrap_or_else(|_| pair.to_owned()))
            )
        })?;
        let key = decode(key)?;
        let value = decode(value)?;
        if seen.contains(&key) {
            return Err(format!("{key} is given twice: give it once"));
        }
        match key.as_str() {
            "max_lag" => {
                settings.max_lag =
                    units::parse_duration(&value).map_err(|why| format!("max_lag: {why}"))?;
            }
            "replicas" => settings.replicas = names(&key, &value, snapshot)?,
            "skip" => settings.skip = names(&key, &value, snapshot)?,
            "format" => {
                format = match value.as_str() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    other => {
                        return Err(format!(
                            "format: found {}, expected text or json",
                            units::quoted(other)
                        ));
                    }
                };
            }
            other => {
                return Err(format!(
                    "unknown parameter {}: /throttle takes max_lag, replicas, skip and format",
                    units::quoted(other)
                ));
            }
        }
        seen.push(key);
    }
    Ok((settings, format))
}

/// Comma-separated node names, each one rwtop watches now.
fn names(key: &str, value: &str, snapshot: &Snapshot) -> Result<Vec<String>, String> {
    let names: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    if names.is_empty() {
        return Err(format!(
            "{key} names no node: give node names separated by commas, or leave it out"
        ));
    }
    if let Some(unknown) = names.iter().find(|n| snapshot.node(n).is_none()) {
        let watched: Vec<&str> = snapshot.nodes.iter().map(|n| n.name.as_str()).collect();
        let mut list = watched
            .iter()
            .take(NAMES_SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if watched.len() > NAMES_SHOWN {
            let _ = write!(list, " and {} more", watched.len() - NAMES_SHOWN);
        }
        return Err(format!(
            "{key}: no node named {} is watched; rwtop watches {list}",
            units::quoted(unknown)
        ));
    }
    Ok(names)
}

/// Undoes percent-encoding (and `+` for a space, as forms send it).
fn decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        format!(
                            "{} has a bad %-escape: write %XX with two hex digits",
                            units::quoted(text)
                        )
                    })?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| format!("{} is not UTF-8", units::quoted(text)))
}

/// `go: <reason>` or `throttle: <reason>`, then a line per covered replica.
fn text(verdict: &Throttle) -> String {
    let word = |go: bool| if go { "go" } else { "throttle" };
    let mut out = format!("{}: {}\n", word(verdict.go), verdict.reason);
    for j in &verdict.judged {
        let _ = writeln!(out, "{} {}: {}", j.place, word(j.go), j.why);
    }
    out
}

#[derive(Serialize)]
struct JsonVerdict<'a> {
    throttle: bool,
    reason: &'a str,
    max_lag_seconds: f64,
    snapshot_age_seconds: f64,
    replicas: Vec<JsonReplica<'a>>,
}

#[derive(Serialize)]
struct JsonReplica<'a> {
    place: &'a str,
    throttle: bool,
    /// `exact`, `at_least`, `unknown`, or `none` when there is no channel to read.
    lag_kind: &'static str,
    /// The exact lag or the lower bound, beyond any `SQL_Delay`; absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    lag_seconds: Option<f64>,
    why: &'a str,
}

fn json(verdict: &Throttle, age: Duration) -> String {
    let doc = JsonVerdict {
        throttle: !verdict.go,
        reason: &verdict.reason,
        max_lag_seconds: verdict.max_lag.as_secs_f64(),
        snapshot_age_seconds: age.as_secs_f64(),
        replicas: verdict.judged.iter().map(json_replica).collect(),
    };
    let mut text = serde_json::to_string(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn json_replica(j: &Judged) -> JsonReplica<'_> {
    JsonReplica {
        place: &j.place,
        throttle: !j.go,
        lag_kind: match &j.lag {
            Some(Lag::Exact { .. }) => "exact",
            Some(Lag::AtLeast { .. }) => "at_least",
            Some(Lag::Unknown { .. }) => "unknown",
            None => "none",
        },
        lag_seconds: j.lag.as_ref().and_then(Lag::value).map(|d| d.as_secs_f64()),
        why: &j.why,
    }
}

#[cfg(test)]
mod tests;
