//! Online schema change runs (pt-online-schema-change, gh-ost, Spirit), seen from the tables and
//! triggers each tool creates beside the table it changes (docs/osc.md).
//!
//! One cheap statement finds the tools' tables by name ([`DETECT_SQL`]: names only, so the
//! server lists its schemas' tables without opening one); only while it finds some are the
//! detail statements sent: the tables' row estimates and ages, pt-osc's triggers, gh-ost's
//! changelog rows and Spirit's newest checkpoint. Each tool's facts, as its own source defines
//! them:
//!
//! | tool | tables | what tells the run |
//! |---|---|---|
//! | pt-osc | `_<t>_new`, at the swap `_<t>_old` | triggers `pt_osc_<db>_<t>_{ins,upd,del}` |
//! | gh-ost | `_<t>_gho`, changelog `_<t>_ghc`, at cut-over `_<t>_del` | changelog rows `heartbeat`, `state`, `throttle` |
//! | Spirit | `_<t>_new`, checkpoint `_<t>_chkpnt`, at the swap `_<t>_old` | checkpoint `rows_copied`, `checksum_watermark`, `alter_statement` |
//!
//! A `_<t>_new` with neither pt-osc's triggers nor a Spirit checkpoint is nobody's run. A tool's
//! table whose columns are not the tool's makes the run unreadable, with a message saying what
//! was expected, never an error of the poll.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::conn::{NodeConn, SqlError};
use super::literal;
use super::row::RawRow;
use crate::units;
use rows::{read_changelog, read_checkpoint};

/// Marks rwtop's own statements in a processlist.
const MARKER: &str = "/* rwtop osc */";

/// Every tool's table, by name alone: `information_schema.TABLES` read for its two name columns
/// only, which the server answers from its table list without opening a table
/// (docs/benchmarks.md, "Statements measured by hand"). The same text on every flavor.
pub const DETECT_SQL: &str = "SELECT /* rwtop osc */ TABLE_SCHEMA, TABLE_NAME \
     FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') \
     AND (TABLE_NAME LIKE '\\_%\\_new' OR TABLE_NAME LIKE '\\_%\\_old' \
     OR TABLE_NAME LIKE '\\_%\\_gho' OR TABLE_NAME LIKE '\\_%\\_ghc' \
     OR TABLE_NAME LIKE '\\_%\\_del' OR TABLE_NAME LIKE '\\_%\\_chkpnt')";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OscTool {
    PtOsc,
    GhOst,
    Spirit,
}

impl OscTool {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PtOsc => "pt-osc",
            Self::GhOst => "gh-ost",
            Self::Spirit => "Spirit",
        }
    }
}

/// Where a run is: copying rows (while the tool also applies the table's changes), checking
/// the copy (Spirit), or swapping the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OscPhase {
    #[default]
    Copy,
    Checksum,
    CutOver,
}

impl OscPhase {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Copy => "copy",
            Self::Checksum => "checksum",
            Self::CutOver => "cut-over",
        }
    }
}

/// One tool's run on one table, as a node's tables show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OscRun {
    pub tool: OscTool,
    pub schema: String,
    /// The table being changed.
    pub table: String,
    pub phase: OscPhase,
    /// Seconds since the tool created its first table of the run.
    #[serde(default)]
    pub elapsed_s: Option<u64>,
    /// Rows copied so far: Spirit's checkpoint count, else the copy table's row estimate.
    #[serde(default)]
    pub rows_copied: Option<u64>,
    /// The changed table's row estimate (`information_schema.TABLES.TABLE_ROWS`).
    #[serde(default)]
    pub rows_estimate: Option<u64>,
    /// `rows_copied` is the tool's own count rather than an estimate (the ratio stays
    /// approximate: its denominator is an estimate).
    #[serde(default)]
    pub copied_counted: bool,
    /// gh-ost's latest throttle word: its reason while it throttles, `None` when it does not
    /// (or the tool publishes none).
    #[serde(default)]
    pub throttled: Option<String>,
    /// Whether the tool publishes its throttle state (gh-ost only).
    #[serde(default)]
    pub throttle_published: bool,
    /// Seconds left at the copy's pace since first seen, worked out by the poller.
    #[serde(default)]
    pub eta_s: Option<u64>,
    /// Recognised but not readable: why (a tool's table with columns not the tool's, a refused
    /// read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl OscRun {
    /// A run of `tool` on `schema.table` just recognised: copying, nothing read of it yet.
    #[must_use]
    pub fn new(tool: OscTool, schema: &str, table: &str) -> Self {
        Self {
            tool,
            schema: schema.to_owned(),
            table: table.to_owned(),
            phase: OscPhase::Copy,
            elapsed_s: None,
            rows_copied: None,
            rows_estimate: None,
            copied_counted: false,
            throttled: None,
            throttle_published: false,
            eta_s: None,
            unreadable: None,
        }
    }

    /// `pt-osc on shop.orders`.
    #[must_use]
    pub fn title(&self) -> String {
        format!("{} on {}.{}", self.tool.name(), self.schema, self.table)
    }

    /// Percent copied (approximate: against a row estimate), within 0–100.
    #[must_use]
    pub fn progress(&self) -> Option<f64> {
        let (copied, total) = (self.rows_copied?, self.rows_estimate?);
        if total == 0 {
            return None;
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "row counts far below 2^52; a percentage"
        )]
        let pct = copied as f64 * 100.0 / total as f64;
        Some(pct.clamp(0.0, 100.0))
    }

    /// Where it is, one line for the banner, the alert and the report:
    /// `copy 4m12s · ~45 % · ETA ~2m00s · throttled: lag=3.2s`; `unreadable: …` when its
    /// tables cannot be read.
    #[must_use]
    pub fn summary(&self) -> String {
        if let Some(why) = &self.unreadable {
            return format!("unreadable: {why}");
        }
        let mut parts = vec![match self.elapsed_s {
            Some(s) => format!("{} {}", self.phase.name(), units::secs(s)),
            None => self.phase.name().to_owned(),
        }];
        if let Some(pct) = self.progress() {
            parts.push(units::approx_percent(pct));
        }
        if let Some(eta) = self.eta_s {
            parts.push(format!(
                "ETA {}",
                units::eta(std::time::Duration::from_secs(eta))
            ));
        }
        if let Some(why) = &self.throttled {
            parts.push(format!("throttled: {why}"));
        }
        parts.join(" · ")
    }

    /// The identity of a run across polls.
    #[must_use]
    pub fn key(&self) -> (OscTool, String, String) {
        (self.tool, self.schema.clone(), self.table.clone())
    }
}

/// What a tool's table name says: which of its tables it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Suffix {
    New,
    Old,
    Gho,
    Ghc,
    Del,
    Chkpnt,
}

const SUFFIXES: [(&str, Suffix); 6] = [
    ("_new", Suffix::New),
    ("_old", Suffix::Old),
    ("_gho", Suffix::Gho),
    ("_ghc", Suffix::Ghc),
    ("_del", Suffix::Del),
    ("_chkpnt", Suffix::Chkpnt),
];

/// One table [`DETECT_SQL`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolTable {
    pub schema: String,
    pub name: String,
}

/// The detection statement's rows.
#[must_use]
pub fn tool_tables(rows: &[RawRow]) -> Vec<ToolTable> {
    rows.iter()
        .filter_map(|r| {
            Some(ToolTable {
                schema: r.optional_text(&["TABLE_SCHEMA"])?.to_owned(),
                name: r.optional_text(&["TABLE_NAME"])?.to_owned(),
            })
        })
        .collect()
}

/// `_orders_new` → (`orders`, New). pt-osc adds underscores in front when the name is taken
/// (`__orders_new`): the base keeps them but one, and its triggers name the real table.
fn split(name: &str) -> Option<(&str, Suffix)> {
    let rest = name.strip_prefix('_')?;
    SUFFIXES.iter().find_map(|(text, suffix)| {
        let base = rest.strip_suffix(text)?;
        (!base.is_empty()).then_some((base, *suffix))
    })
}

/// The tool tables of one (schema, table).
type Candidates = BTreeMap<(String, String), Vec<Suffix>>;

fn candidates(tables: &[ToolTable]) -> Candidates {
    let mut out = Candidates::new();
    for t in tables {
        if let Some((base, suffix)) = split(&t.name) {
            out.entry((t.schema.clone(), base.to_owned()))
                .or_default()
                .push(suffix);
        }
    }
    out
}

fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn tool_table(table: &str, suffix: Suffix) -> String {
    let text = SUFFIXES
        .iter()
        .find(|(_, s)| *s == suffix)
        .map_or("", |(t, _)| t);
    format!("_{table}{text}")
}

/// The detail statements for the tables found, each with what it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Detail {
    /// Row estimates and ages of every candidate's tables.
    Sizes,
    /// pt-osc's triggers in one schema.
    Triggers(String),
    /// gh-ost's changelog of (schema, table).
    Changelog(String, String),
    /// Spirit's newest checkpoint of (schema, table).
    Checkpoint(String, String),
}

impl Detail {
    fn sql(&self, found: &Candidates) -> String {
        match self {
            Self::Sizes => {
                let mut by_schema: BTreeMap<&str, Vec<String>> = BTreeMap::new();
                for ((schema, table), suffixes) in found {
                    let names = by_schema.entry(schema).or_default();
                    names.push(literal(table));
                    names.extend(suffixes.iter().map(|s| literal(&tool_table(table, *s))));
                }
                let conds: Vec<String> = by_schema
                    .iter()
                    .map(|(schema, names)| {
                        format!(
                            "(TABLE_SCHEMA = {} AND TABLE_NAME IN ({}))",
                            literal(schema),
                            names.join(", ")
                        )
                    })
                    .collect();
                format!(
                    "SELECT {MARKER} TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, \
                     TIMESTAMPDIFF(SECOND, CREATE_TIME, NOW()) AS AGE_S \
                     FROM information_schema.TABLES WHERE {}",
                    conds.join(" OR ")
                )
            }
            Self::Triggers(schema) => format!(
                "SELECT {MARKER} TRIGGER_NAME, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS \
                 WHERE TRIGGER_SCHEMA = {} AND TRIGGER_NAME LIKE 'pt\\_osc\\_%'",
                literal(schema)
            ),
            Self::Changelog(schema, table) => format!(
                "SELECT {MARKER} hint, value FROM {}.{} \
                 WHERE hint IN ('heartbeat', 'state', 'throttle')",
                ident(schema),
                ident(&tool_table(table, Suffix::Ghc))
            ),
            Self::Checkpoint(schema, table) => format!(
                "SELECT {MARKER} rows_copied, checksum_watermark, alter_statement FROM {}.{} \
                 ORDER BY id DESC LIMIT 1",
                ident(schema),
                ident(&tool_table(table, Suffix::Chkpnt))
            ),
        }
    }
}

fn details(found: &Candidates) -> Vec<Detail> {
    let mut out = vec![Detail::Sizes];
    let mut schemas: Vec<&str> = Vec::new();
    for ((schema, table), suffixes) in found {
        let has = |s: Suffix| suffixes.contains(&s);
        if has(Suffix::Ghc) {
            out.push(Detail::Changelog(schema.clone(), table.clone()));
        }
        if has(Suffix::Chkpnt) {
            out.push(Detail::Checkpoint(schema.clone(), table.clone()));
        } else if (has(Suffix::New) || has(Suffix::Old)) && !schemas.contains(&schema.as_str()) {
            schemas.push(schema);
        }
    }
    out.extend(schemas.into_iter().map(|s| Detail::Triggers(s.to_owned())));
    out
}

/// One detail statement's answer: its rows, or why it could not be read.
pub type DetailAnswer = Result<Vec<RawRow>, String>;

/// What the detail statements said, by statement.
#[derive(Debug, Default)]
struct Answers {
    /// (schema, table) → (row estimate, age in seconds).
    sizes: BTreeMap<(String, String), (Option<u64>, Option<u64>)>,
    /// schema → (trigger, the table it is on).
    triggers: BTreeMap<String, Vec<(String, String)>>,
    changelogs: BTreeMap<(String, String), DetailAnswer>,
    checkpoints: BTreeMap<(String, String), DetailAnswer>,
}

impl Answers {
    fn keep(&mut self, detail: &Detail, answer: DetailAnswer) {
        match detail {
            Detail::Sizes => {
                for r in answer.unwrap_or_default() {
                    let (Some(schema), Some(name)) = (
                        r.optional_text(&["TABLE_SCHEMA"]),
                        r.optional_text(&["TABLE_NAME"]),
                    ) else {
                        continue;
                    };
                    let number = |c: &str| {
                        r.optional_text(&[c])
                            .and_then(|t| t.trim().parse::<i64>().ok())
                            .and_then(|n| u64::try_from(n).ok())
                    };
                    self.sizes.insert(
                        (schema.to_owned(), name.to_owned()),
                        (number("TABLE_ROWS"), number("AGE_S")),
                    );
                }
            }
            Detail::Triggers(schema) => {
                let list = answer
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|r| {
                        Some((
                            r.optional_text(&["TRIGGER_NAME"])?.to_owned(),
                            r.optional_text(&["EVENT_OBJECT_TABLE"])?.to_owned(),
                        ))
                    })
                    .collect();
                self.triggers.insert(schema.clone(), list);
            }
            Detail::Changelog(s, t) => {
                self.changelogs.insert((s.clone(), t.clone()), answer);
            }
            Detail::Checkpoint(s, t) => {
                self.checkpoints.insert((s.clone(), t.clone()), answer);
            }
        }
    }

    fn size(&self, schema: &str, table: &str) -> (Option<u64>, Option<u64>) {
        self.sizes
            .get(&(schema.to_owned(), table.to_owned()))
            .copied()
            .unwrap_or_default()
    }
}

/// pt-osc's trigger prefix for `db`.`table`: non-word characters become `_`, cut at 60.
fn pt_osc_prefix(schema: &str, table: &str) -> String {
    let raw = format!("pt_osc_{schema}_{table}");
    raw.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect()
}

/// The runs the answers show.
fn runs(found: &Candidates, answers: &Answers) -> Vec<OscRun> {
    let mut out = Vec::new();
    for ((schema, table), suffixes) in found {
        let has = |s: Suffix| suffixes.contains(&s);
        let age = |s: Suffix| answers.size(schema, &tool_table(table, s)).1;
        let oldest = |list: &[Suffix]| list.iter().filter_map(|s| age(*s)).max();
        let base_rows = answers.size(schema, table).0;
        if has(Suffix::Gho) || has(Suffix::Ghc) {
            let mut run = OscRun::new(OscTool::GhOst, schema, table);
            run.elapsed_s = oldest(&[Suffix::Gho, Suffix::Ghc]);
            run.rows_estimate = base_rows;
            run.rows_copied = answers.size(schema, &tool_table(table, Suffix::Gho)).0;
            run.throttle_published = true;
            if has(Suffix::Del) {
                run.phase = OscPhase::CutOver;
            }
            if let Some(answer) = answers.changelogs.get(&(schema.clone(), table.clone())) {
                read_changelog(&mut run, answer);
            }
            out.push(run);
        }
        if has(Suffix::Chkpnt) {
            let mut run = OscRun::new(OscTool::Spirit, schema, table);
            run.elapsed_s = oldest(&[Suffix::New, Suffix::Chkpnt]);
            run.rows_estimate = base_rows;
            run.rows_copied = answers.size(schema, &tool_table(table, Suffix::New)).0;
            if let Some(answer) = answers.checkpoints.get(&(schema.clone(), table.clone())) {
                read_checkpoint(&mut run, answer);
            }
            if has(Suffix::Old) {
                run.phase = OscPhase::CutOver;
            }
            out.push(run);
        } else if has(Suffix::New) || has(Suffix::Old) {
            // pt-osc: its triggers, on the table (or, swapped, on `_<t>_old`).
            let prefix = pt_osc_prefix(schema, table);
            let triggers = answers.triggers.get(schema).map(Vec::as_slice);
            let ours = triggers.unwrap_or_default().iter().any(|(name, _)| {
                name.strip_prefix(&prefix)
                    .is_some_and(|rest| matches!(rest, "_ins" | "_upd" | "_del"))
            });
            if !ours {
                continue;
            }
            let mut run = OscRun::new(OscTool::PtOsc, schema, table);
            run.elapsed_s = oldest(&[Suffix::New, Suffix::Old]);
            run.rows_estimate = base_rows;
            run.rows_copied = answers.size(schema, &tool_table(table, Suffix::New)).0;
            if has(Suffix::Old) || !has(Suffix::New) {
                run.phase = OscPhase::CutOver;
            }
            out.push(run);
        }
    }
    out
}

impl NodeConn {
    /// The runs behind the tool tables [`DETECT_SQL`] found: a few statements, sent only while
    /// it finds some. A statement the server refuses (a table dropped at the swap, columns not
    /// the tool's, a missing grant) marks what it reads unreadable; only a broken connection is
    /// an error.
    pub async fn osc_runs(&mut self, tables: &[ToolTable]) -> Result<Vec<OscRun>, SqlError> {
        let found = candidates(tables);
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let mut answers = Answers::default();
        for detail in details(&found) {
            let answer = match self.query_rows(&detail.sql(&found)).await {
                Ok(rows) => Ok(rows),
                // Dropped since it was found (the swap, the tool's clean-up): nothing to read.
                Err(err) if super::conn::is_missing_table(&err) => Ok(Vec::new()),
                Err(SqlError::Server { code, message, .. }) => {
                    Err(format!("{message} (error {code})"))
                }
                Err(other) => return Err(other),
            };
            answers.keep(&detail, answer);
        }
        Ok(runs(&found, &answers))
    }
}

mod rows;
#[cfg(test)]
mod tests;
