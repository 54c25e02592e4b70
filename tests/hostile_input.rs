//! Hostile input: every parser that reads what a server, a config file or an
//! operator hands rwtop is fed random and malicious text — numbers past `u64::MAX`, `1e400`,
//! negatives, NULL in every cell, unicode, truncated GTIDs, empty and very long strings — and
//! must never panic: it parses correctly, or it refuses with a short message naming where the
//! problem is. The whole TUI is drawn from 1×1 up to 130×45 and back down, and with absurd
//! values in its snapshot.
//!
//! Complements `tests/gtid_props.rs` (GTID arithmetic against a model) and
//! `tests/fixtures_parse.rs` (what each recorded server output means): the rows here are those
//! same recordings with cells nulled, replaced by hostile text, or removed.

#[path = "common/bad_files.rs"]
mod bad_files;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use bad_files::assert_mentions;
use proptest::prelude::*;
use proptest::sample::Index;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rwtop::config::{CliOverrides, Config, ConfigError, FileSettings, Origin, parse_duration};
use rwtop::gtid::{DomainGtid, Gtid, GtidList, GtidSet};
use rwtop::mysql::galera::Wsrep;
use rwtop::mysql::{
    BinlogFile, BinlogPos, BinlogStatus, DdlStatement, Family, Identity, LockRows, NodeState,
    Processlist, RawRow, ReplicaHost, ReplicaStatus, RowError, SemiSync, StatusError, ThreadError,
    bytes_between, parse_vertical,
};
use rwtop::probe::{ProbeDefaults, Strategy as ReadStrategy};
use rwtop::store::lag::Lag;
use rwtop::store::series::Point;
use rwtop::store::{Snapshot, testkit};
use rwtop::ui::{Cover, Mode, RenderCtx, Theme, UiState};

/// Few cases each: the file runs in seconds on two cores, and CI runs it on every push.
fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(n)
    }
}

/// Longest error message any parser may produce, whatever the input's size: a message that
/// quotes a megabyte of junk buries the one word that says what is wrong. Quotes are cut by
/// characters, and an escaped one (`\u{fd608}`) prints as ten, hence the slack.
const MESSAGE_LIMIT: usize = 1500;

const MAX_GNO: u64 = (1 << 63) - 1;
const UUID: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";

// ---------------------------------------------------------------- hostile text

/// Values that have broken parsers elsewhere: around every integer limit, floats and their
/// specials, signs, digits that are not ASCII, spellings a server never uses, control and
/// bidi characters, and fragments of the formats themselves.
const HOSTILE: &[&str] = &[
    "",
    " ",
    "\t\n",
    "NULL",
    "null",
    "0",
    "-0",
    "-1",
    "+1",
    " 42 ",
    "007",
    "65535",
    "65536",
    "70000",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e3",
    "1.5",
    "-1.5",
    "37.4",
    "250",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "0x10",
    "1_000",
    "1,000",
    "\u{663}\u{664}",   // Arabic-Indic digits
    "\u{ff11}\u{ff12}", // fullwidth digits
    "\u{b2}",           // superscript two
    "Yes",
    "No",
    "yes",
    "YES ",
    "Connecting",
    "ON",
    "OFF",
    "true",
    "2",
    "\0",
    "\u{7f}",
    "\u{e9}",
    "\u{540d}\u{524d}",
    "\u{1f4a5}",
    "\u{202e}evil",
    "\u{feff}1",
    "a\nb",
    "\r\n",
    "*************************** 1. row ***************************",
    "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9223372036854775808",
    "3e11fa47-71ca-11e1-9e33-c80aa9429562:",
    "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag",
    "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,3e11fa47-71ca",
    "0-1-18446744073709551616",
    "4294967296-1-1",
    "0-1-",
    "0-1-5,",
    ":",
    ",",
    "-",
    "--",
    "ALTER TABLE t FORCE",
    "/* rwtop processlist */",
];

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(HOSTILE).prop_map(str::to_owned),
        2 => any::<String>(),
        1 => "[0-9]{18,24}",
        1 => "[+-]?[0-9]{0,6}(\\.[0-9]{0,3})?([eE][+-]?[0-9]{1,3})?",
        1 => (1_usize..200_000).prop_map(|n| "9".repeat(n)),
        1 => (1_usize..50_000, any::<char>()).prop_map(|(n, c)| c.to_string().repeat(n)),
    ]
}

/// A cell: NULL one time in five.
fn hostile_cell() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(0.8, hostile())
}

fn assert_short(message: &str) {
    assert!(
        message.chars().count() <= MESSAGE_LIMIT,
        "a {}-character message: {}...",
        message.chars().count(),
        message.chars().take(300).collect::<String>()
    );
}

/// What a cell means as a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decimal {
    /// SQL NULL, or the empty string, which servers print for "no value".
    Null,
    Number(u64),
    /// Not a non-negative integer below 2^64.
    Bad,
}

/// A cell's meaning as a `u64`, worked out without `str::parse`.
fn decimal(cell: Option<&str>) -> Decimal {
    let Some(text) = cell.map(str::trim).filter(|t| !t.is_empty()) else {
        return Decimal::Null;
    };
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Decimal::Bad;
    }
    let significant = digits.trim_start_matches('0');
    let max = u64::MAX.to_string();
    if significant.len() > max.len() || (significant.len() == max.len() && significant > &*max) {
        return Decimal::Bad;
    }
    let value = significant
        .bytes()
        .fold(0_u64, |acc, digit| acc * 10 + u64::from(digit - b'0'));
    Decimal::Number(value)
}

/// The first cell any of `names` matches, case-insensitively, as [`RawRow`] documents.
fn lookup<'a>(
    cells: &'a [(String, Option<String>)],
    names: &[&str],
) -> Option<(&'a str, Option<&'a str>)> {
    names.iter().find_map(|wanted| {
        cells
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(wanted))
            .map(|(name, value)| (name.as_str(), value.as_deref()))
    })
}

// ---------------------------------------------------------------- RawRow getters

const COLUMNS: [&str; 5] = ["Port", "PORT", "Seconds_Behind_Master", "Read_Only", "x"];
const QUERIES: [&[&str]; 4] = [
    &["Port"],
    &["Seconds_Behind_Source", "Seconds_Behind_Master"],
    &["read_only", "Port"],
    &["absent"],
];

fn cells() -> impl Strategy<Value = Vec<(String, Option<String>)>> {
    let name = prop_oneof![
        4 => prop::sample::select(&COLUMNS[..]).prop_map(str::to_owned),
        1 => hostile(),
    ];
    prop::collection::vec((name, hostile_cell()), 0..6)
}

/// Checks one getter's answer against the model: `null` is its answer for NULL (`None` where
/// NULL is refused), `fits` its answer for a number; errors must name the column and quote at
/// most 80 characters.
fn check_number<T: PartialEq + std::fmt::Debug>(
    got: &Result<T, RowError>,
    cell: Option<(&str, Option<&str>)>,
    names: &[&str],
    null: Option<&T>,
    fits: impl Fn(u64) -> Option<T>,
) {
    match (cell, got) {
        (None, Err(RowError::Missing { column })) => assert_eq!(*column, names.join("/")),
        (None, Ok(value)) => assert_eq!(Some(value), null, "missing column read"),
        (Some((_, text)), got) => match (decimal(text), got) {
            (Decimal::Null, Ok(value)) => assert_eq!(Some(value), null),
            (Decimal::Null, Err(RowError::UnexpectedNull { column, .. })) => {
                assert!(null.is_none(), "NULL refused where it is allowed");
                assert_eq!(Some(column.as_str()), cell.map(|c| c.0));
            }
            (Decimal::Number(n), Ok(value)) => {
                assert_eq!(Some(value), fits(n).as_ref(), "{text:?}");
            }
            (Decimal::Number(n), Err(RowError::BadValue { .. })) => {
                assert!(fits(n).is_none(), "{text:?} refused");
            }
            (Decimal::Bad, Err(RowError::BadValue { column, value, .. })) => {
                assert_eq!(Some(column.as_str()), cell.map(|c| c.0));
                let quoted: String = text.unwrap_or("NULL").chars().take(80).collect();
                assert_eq!(*value, quoted);
            }
            (model, got) => panic!("{text:?}: model {model:?}, got {got:?}"),
        },
        (None, Err(other)) => panic!("missing column gave {other:?}"),
    }
    if let Err(err) = got {
        assert_short(&err.to_string());
    }
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn raw_row_getters_agree_with_a_model(cells in cells()) {
        let row = RawRow::new(cells.clone());
        for names in QUERIES {
            let cell = lookup(&cells, names);
            prop_assert_eq!(row.has(names), cell.is_some());
            let text = row.text(names);
            match cell {
                None => prop_assert!(matches!(text, Err(RowError::Missing { .. })), "{:?}", text),
                Some((_, value)) => prop_assert_eq!(text, Ok(value)),
            }
            prop_assert_eq!(row.optional_text(names), cell.and_then(|c| c.1));
            prop_assert_eq!(
                row.string(names).ok(),
                cell.map(|c| c.1.unwrap_or_default().to_owned())
            );
            check_number(&row.u64(names), cell, names, None, Some);
            check_number(&row.u32(names), cell, names, None, |n| u32::try_from(n).ok());
            check_number(&row.u16(names), cell, names, None, |n| u16::try_from(n).ok());
            if cell.is_some() {
                check_number(&row.opt_u64(names), cell, names, Some(&None), |n| Some(Some(n)));
            }
            check_number(&row.optional_u64(names), cell, names, Some(&None), |n| Some(Some(n)));
            check_number(&row.optional_u32(names), cell, names, Some(&None), |n| u32::try_from(n).ok().map(Some));

            let flag = cell.and_then(|c| c.1).map(|text| {
                match text.trim().to_ascii_uppercase().as_str() {
                    "ON" | "1" | "YES" | "TRUE" => Some(true),
                    "OFF" | "0" | "NO" | "FALSE" => Some(false),
                    _ => None,
                }
            });
            match (flag, row.optional_bool(names)) {
                (None, Ok(None)) | (Some(None), Err(RowError::BadValue { .. })) => {}
                (Some(Some(want)), Ok(Some(got))) => prop_assert_eq!(want, got),
                (want, got) => prop_assert!(false, "{:?}: model {:?}, got {:?}", cell, want, got),
            }
            match (cell, row.bool(names)) {
                (None, Err(RowError::Missing { .. })) | (Some((_, None)), Err(RowError::UnexpectedNull { .. })) => {}
                (_, got) => prop_assert_eq!(got.ok(), flag.flatten()),
            }
        }
    }
}

// ---------------------------------------------------------------- `--vertical` output

/// Lines that look like the client's output, in any order.
fn vertical_line() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (1_u64..4).prop_map(|n| format!("*************************** {n}. row ***************************")),
        1 => Just("-- statement: SHOW X".to_owned()),
        1 => Just("Empty set".to_owned()),
        1 => Just(String::new()),
        4 => (0_usize..12, "[A-Za-z_ \u{e9}\u{540d}:*-]{0,12}", hostile())
            .prop_map(|(pad, name, value)| format!("{}{name}: {value}", " ".repeat(pad))),
        2 => hostile(),
    ]
}

/// Column names the client can print and the parser can tell from a continued value: no
/// colon, no control character, no leading space (the client right-aligns names).
fn column_name() -> impl Strategy<Value = String> {
    "[A-Za-z_\u{e9}\u{540d}\u{1f4a5}][A-Za-z0-9_ @.()\u{e9}\u{540d}\u{1f4a5}]{0,20}"
}

/// A value as the client prints it: anything on its first line, and continuation lines that
/// cannot pass for a `Name:` line or a row separator.
fn column_value() -> impl Strategy<Value = Option<String>> {
    let first = "[^\n\r]{0,30}";
    let more = prop::collection::vec("[^\n\r:*]{0,20}", 0..3);
    prop::option::weighted(
        0.8,
        (first, more)
            .prop_map(|(first, more)| {
                std::iter::once(first)
                    .chain(more)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .prop_filter("the text NULL is SQL NULL", |v| v != "NULL"),
    )
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn vertical_parser_never_panics_and_points_at_a_line(
        lines in prop::collection::vec(vertical_line(), 0..30),
        junk in any::<String>(),
    ) {
        for text in [lines.join("\n"), junk, lines.join("\r\n")] {
            match parse_vertical(&text) {
                Ok(parsed) => prop_assert!(parsed.rows.len() <= text.lines().count()),
                Err(err) => {
                    prop_assert!((1..=text.lines().count()).contains(&err.line), "{}", err);
                    assert_short(&err.to_string());
                }
            }
        }
    }

    /// What `RawRow`'s `Display` prints (the client's layout) reads back as the same rows,
    /// whatever the names' scripts: the client pads names in bytes, not characters.
    #[test]
    fn vertical_output_round_trips(
        rows in prop::collection::vec(prop::collection::vec((column_name(), column_value()), 0..8), 0..4),
    ) {
        let rows: Vec<RawRow> = rows.into_iter().map(RawRow::new).collect();
        let mut text = "-- statement: SHOW X\n".to_owned();
        for (index, row) in rows.iter().enumerate() {
            let stars = "*".repeat(27);
            write!(text, "{stars} {}. row {stars}\n{row}", index + 1).unwrap();
        }
        let parsed = parse_vertical(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.rows, rows, "{}", text);
    }
}

// ---------------------------------------------------------------- recorded server output

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ReplicaStatus,
    BinlogStatus,
    BinlogFiles,
    ReplicaHosts,
    SemiSync,
    /// `SHOW GLOBAL STATUS LIKE 'wsrep%'` (`mysql::galera`): a member's status, or none.
    Galera,
    NodeState,
    Identity,
    Processlist,
    Workers,
    /// `MySQL` 8's newest queued transaction per channel (`mysql::queued`).
    Queued,
    /// `SHOW GRANTS` (`mysql::grants`): one column, named for the account, read whatever its
    /// name.
    Grants,
    /// The holder read's three statements (`mysql::lock_holders`).
    LockThreads,
    LockTrx,
    LockMetadata,
}

struct Fixture {
    name: String,
    kind: Kind,
    family: Family,
    rows: Vec<RawRow>,
}

fn kind_of(statement: &str) -> Kind {
    let upper = statement.to_ascii_uppercase();
    if upper.starts_with("SHOW GRANTS") {
        Kind::Grants
    } else if upper.contains("SLAVE STATUS")
        || upper.contains("SLAVES STATUS")
        || upper.contains("REPLICA STATUS")
    {
        Kind::ReplicaStatus
    } else if upper.contains("MASTER STATUS")
        || upper.contains("BINLOG STATUS")
        || upper.contains("BINARY LOG STATUS")
    {
        Kind::BinlogStatus
    } else if upper == "SHOW BINARY LOGS" {
        Kind::BinlogFiles
    } else if upper.contains("SLAVE HOSTS") || upper == "SHOW REPLICAS" {
        Kind::ReplicaHosts
    } else if upper.contains("RPL_SEMI_SYNC") {
        Kind::SemiSync
    } else if upper.contains("'WSREP%'") {
        Kind::Galera
    } else if upper.contains("GTID_BINLOG_POS") {
        Kind::NodeState
    } else if upper.contains("RWTOP LOCK HOLDERS") {
        if upper.contains("METADATA_LOCK") {
            Kind::LockMetadata
        } else if upper.contains("INNODB_TRX") {
            Kind::LockTrx
        } else {
            Kind::LockThreads
        }
    } else if upper.contains("RWTOP PROCESSLIST") {
        Kind::Processlist
    } else if upper.contains("REPLICATION_APPLIER_STATUS_BY_WORKER") {
        Kind::Workers
    } else if upper.contains("REPLICATION_CONNECTION_STATUS") {
        Kind::Queued
    } else {
        panic!("no parser for {statement:?}")
    }
}

fn synthetic(name: &str, kind: Kind, family: Family, cells: &[(&str, Option<&str>)]) -> Fixture {
    let cells = cells
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.map(str::to_owned)))
        .collect();
    Fixture {
        name: name.to_owned(),
        kind,
        family,
        rows: vec![RawRow::new(cells)],
    }
}

/// Every recording under tests/fixtures, plus the rows no fixture records (MySQL's per-poll
/// state, both identities), built from the statements in src/mysql/flavor.rs.
fn fixtures() -> &'static [Fixture] {
    static ALL: OnceLock<Vec<Fixture>> = OnceLock::new();
    ALL.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&root)
            .expect("tests/fixtures")
            .flatten()
            .filter(|e| e.path().is_dir())
            .flat_map(|d| {
                std::fs::read_dir(d.path())
                    .expect("fixture dir")
                    .flatten()
                    .map(|e| e.path())
            })
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        paths.sort();
        let mut all: Vec<Fixture> = paths
            .iter()
            .map(|path| {
                let text = std::fs::read_to_string(path).expect("fixture");
                let parsed =
                    parse_vertical(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let server = parsed.meta("server").unwrap_or_default();
                Fixture {
                    name: path.display().to_string(),
                    kind: kind_of(parsed.meta("statement").unwrap_or_default()),
                    family: if server.starts_with("MariaDB") {
                        Family::Mariadb
                    } else {
                        Family::Mysql
                    },
                    rows: parsed.rows,
                }
            })
            .collect();
        let executed = format!("{UUID}:1-210457,a9c4e7d1-4b5d-11ee-8e02-00163e5a1b02:1-27");
        all.extend([
            synthetic(
                "mysql node state",
                Kind::NodeState,
                Family::Mysql,
                &[
                    ("gtid_executed", Some(&executed)),
                    ("read_only", Some("1")),
                    ("super_read_only", Some("0")),
                ],
            ),
            synthetic(
                "mysql identity",
                Kind::Identity,
                Family::Mysql,
                &[
                    ("server_id", Some("101")),
                    ("log_bin", Some("1")),
                    ("server_uuid", Some(UUID)),
                    ("gtid_mode", Some("ON")),
                ],
            ),
            synthetic(
                "mariadb identity",
                Kind::Identity,
                Family::Mariadb,
                &[
                    ("server_id", Some("1")),
                    ("log_bin", Some("ON")),
                    ("gtid_domain_id", Some("0")),
                    ("gtid_strict_mode", Some("OFF")),
                ],
            ),
        ]);
        assert!(all.len() >= 50, "found only {} fixtures", all.len());
        all
    })
}

/// Runs the parser for `kind` over all rows; the answer as text, so kinds compare alike.
fn parse_rows(kind: Kind, family: Family, rows: &[RawRow]) -> Result<String, StatusError> {
    fn each<T: std::fmt::Debug>(
        rows: &[RawRow],
        f: impl Fn(&RawRow) -> Result<T, StatusError>,
    ) -> Result<String, StatusError> {
        let parsed = rows.iter().map(f).collect::<Result<Vec<T>, _>>()?;
        Ok(format!("{parsed:?}"))
    }
    match kind {
        Kind::ReplicaStatus => each(rows, ReplicaStatus::from_row),
        Kind::BinlogStatus => each(rows, BinlogStatus::from_row),
        Kind::BinlogFiles => each(rows, BinlogFile::from_row),
        Kind::ReplicaHosts => each(rows, ReplicaHost::from_row),
        Kind::NodeState => each(rows, |r| NodeState::from_row(r, family)),
        Kind::Identity => each(rows, Identity::from_row),
        Kind::SemiSync => Ok(format!("{:?}", SemiSync::from_rows(rows, &[])?)),
        // Never an error: a garbled figure is unknown, a row without a name is skipped.
        Kind::Galera => Ok(format!("{:?}", Wsrep::from_rows(rows))),
        Kind::Processlist => {
            let list = Processlist::from_rows(rows)?;
            for ddl in &list.ddl {
                assert!(
                    ddl.progress.is_none_or(|p| (0.0..=100.0).contains(&p)),
                    "progress {:?} is not a percentage",
                    ddl.progress
                );
            }
            Ok(format!("{list:?}"))
        }
        Kind::Workers => Ok(format!(
            "{:?}",
            rwtop::mysql::appliers::workers_from_table(rows)?
        )),
        Kind::Queued => Ok(format!("{:?}", rwtop::mysql::queued::from_table(rows)?)),
        Kind::Grants => Ok(format!(
            "{:?}",
            rwtop::mysql::grants::AccountGrants::from_rows(rows)
        )),
        Kind::LockThreads => Ok(format!(
            "{:?}",
            LockRows::from_rows(family, rows, None, None)?
        )),
        Kind::LockTrx => Ok(format!(
            "{:?}",
            LockRows::from_rows(family, &[], Some(rows), None)?
        )),
        Kind::LockMetadata => Ok(format!(
            "{:?}",
            LockRows::from_rows(family, &[], None, Some(rows))?
        )),
    }
}

/// The replica status columns the parser reads, in the server's spellings.
const REPLICA_STATUS_COLUMNS: &[&str] = &[
    "channel_name",
    "connection_name",
    "source_host",
    "master_host",
    "source_port",
    "master_port",
    "source_user",
    "master_user",
    "source_server_id",
    "master_server_id",
    "source_uuid",
    "master_uuid",
    "replica_io_running",
    "slave_io_running",
    "replica_sql_running",
    "slave_sql_running",
    "replica_io_state",
    "slave_io_state",
    "replica_sql_running_state",
    "slave_sql_running_state",
    "seconds_behind_source",
    "seconds_behind_master",
    "source_log_file",
    "master_log_file",
    "read_source_log_pos",
    "read_master_log_pos",
    "relay_source_log_file",
    "relay_master_log_file",
    "exec_source_log_pos",
    "exec_master_log_pos",
    "relay_log_space",
    "sql_delay",
    "sql_remaining_delay",
    "last_io_errno",
    "last_io_error",
    "last_io_error_timestamp",
    "last_sql_errno",
    "last_sql_error",
    "last_sql_error_timestamp",
    "executed_gtid_set",
    "retrieved_gtid_set",
    "auto_position",
    "gtid_io_pos",
    "gtid_slave_pos",
    "using_gtid",
    "parallel_mode",
    "retried_transactions",
    "replica_ddl_groups",
    "slave_ddl_groups",
    "replica_transactional_groups",
    "slave_transactional_groups",
    "replica_non_transactional_groups",
    "slave_non_transactional_groups",
    // The link's hygiene (`mysql/link.rs`).
    "slave_heartbeat_period",
    "replica_heartbeat_period",
    "master_ssl_allowed",
    "source_ssl_allowed",
    "master_ssl_verify_server_cert",
    "source_ssl_verify_server_cert",
    "replicate_do_db",
    "replicate_ignore_db",
    "replicate_do_table",
    "replicate_ignore_table",
    "replicate_wild_do_table",
    "replicate_wild_ignore_table",
    "replicate_rewrite_db",
    "replicate_do_domain_ids",
    "replicate_ignore_domain_ids",
    "until_condition",
    "skip_counter",
];

/// Columns each parser reads (every spelling, lowercase): a change anywhere else must not
/// change its answer.
fn reads(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::ReplicaStatus => REPLICA_STATUS_COLUMNS,
        Kind::BinlogStatus => &["file", "position", "executed_gtid_set"],
        Kind::BinlogFiles => &["log_name", "file_size"],
        Kind::ReplicaHosts => &[
            "server_id",
            "host",
            "port",
            "source_id",
            "master_id",
            "replica_uuid",
            "slave_uuid",
        ],
        Kind::SemiSync | Kind::Galera => &["variable_name", "value"],
        Kind::NodeState => &[
            "gtid_executed",
            "gtid_binlog_pos",
            "gtid_slave_pos",
            "gtid_current_pos",
            "read_only",
            "super_read_only",
        ],
        Kind::Identity => &[
            "server_id",
            "log_bin",
            "server_uuid",
            "gtid_mode",
            "gtid_domain_id",
            "gtid_strict_mode",
        ],
        Kind::Processlist => &[
            "id", "user", "db", "command", "state", "time", "info", "progress",
        ],
        Kind::Workers => &[
            "channel_name",
            "service_state",
            "applying_transaction",
            "processlist_state",
        ],
        Kind::Queued => &["channel_name", "last_queued_original_commit"],
        // Its one column is named for the account (`Grants for rwtop@%`): see the caller.
        Kind::Grants => &[],
        Kind::LockThreads => &[
            "id", "user", "host", "db", "command", "time", "state", "info", "own", "last_sql",
        ],
        Kind::LockTrx => &["id", "age"],
        Kind::LockMetadata => &["id", "kind", "mode", "schema_name", "name", "status"],
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Null,
    Replace(String),
    Remove,
    /// Renames the column in capitals: servers and manuals disagree on case.
    Shout,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => Just(Mutation::Null),
        5 => hostile().prop_map(Mutation::Replace),
        2 => Just(Mutation::Remove),
        1 => Just(Mutation::Shout),
    ]
}

/// A fixture's rows with `mutations` applied, and the columns touched (lowercase).
fn mutate(
    fixture: &Fixture,
    mutations: &[(Index, Index, Mutation)],
) -> (Vec<RawRow>, BTreeSet<String>) {
    let mut rows: Vec<Vec<(String, Option<String>)>> = fixture
        .rows
        .iter()
        .map(|row| {
            row.columns()
                .map(|c| {
                    (
                        c.to_owned(),
                        row.text(&[c]).ok().flatten().map(str::to_owned),
                    )
                })
                .collect()
        })
        .collect();
    let mut touched = BTreeSet::new();
    for (row, cell, mutation) in mutations {
        if rows.is_empty() {
            break;
        }
        let cells = &mut rows[row.index(fixture.rows.len())];
        if cells.is_empty() {
            continue;
        }
        let at = cell.index(cells.len());
        touched.insert(cells[at].0.to_ascii_lowercase());
        match mutation {
            Mutation::Null => cells[at].1 = None,
            Mutation::Replace(text) => cells[at].1 = Some(text.clone()),
            Mutation::Remove => {
                cells.remove(at);
            }
            Mutation::Shout => cells[at].0 = cells[at].0.to_ascii_uppercase(),
        }
    }
    (rows.into_iter().map(RawRow::new).collect(), touched)
}

/// A replica status number, the spellings of its column, and whether NULL is a valid answer.
type NumberField = (
    &'static [&'static str],
    fn(&ReplicaStatus) -> Option<u64>,
    bool,
);

const REPLICA_NUMBERS: &[NumberField] = &[
    (
        &["Seconds_Behind_Source", "Seconds_Behind_Master"],
        |s| s.seconds_behind_source,
        true,
    ),
    (
        &["Source_Port", "Master_Port"],
        |s| Some(u64::from(s.source_port)),
        false,
    ),
    (
        &["Read_Source_Log_Pos", "Read_Master_Log_Pos"],
        |s| Some(s.received.pos),
        false,
    ),
    (
        &["Exec_Source_Log_Pos", "Exec_Master_Log_Pos"],
        |s| Some(s.applied.pos),
        false,
    ),
    (&["Relay_Log_Space"], |s| s.relay_log_space, true),
    (&["SQL_Delay"], |s| s.sql_delay, true),
    (&["SQL_Remaining_Delay"], |s| s.sql_remaining_delay, true),
    (
        &["Source_Server_Id", "Master_Server_Id"],
        |s| s.source_server_id.map(u64::from),
        true,
    ),
];

/// A parsed replica status holds exactly the numbers its (mutated) row says: NULL stays
/// `None`, never 0, and no number is silently replaced by another or by `None`.
fn check_replica_numbers(row: &RawRow, status: &ReplicaStatus) {
    let cells: Vec<(String, Option<String>)> = row
        .columns()
        .map(|c| {
            (
                c.to_owned(),
                row.text(&[c]).ok().flatten().map(str::to_owned),
            )
        })
        .collect();
    for (names, field, nullable) in REPLICA_NUMBERS {
        let got = field(status);
        match lookup(&cells, names) {
            None => assert!(
                *nullable && got.is_none(),
                "{names:?} missing but read as {got:?}"
            ),
            Some((column, text)) => match decimal(text) {
                Decimal::Null => {
                    assert!(*nullable && got.is_none(), "{column} NULL read as {got:?}");
                }
                Decimal::Number(n) => assert_eq!(got, Some(n), "{column} = {text:?}"),
                Decimal::Bad => panic!("{column} = {text:?} accepted as {got:?}"),
            },
        }
    }
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn recorded_rows_with_hostile_cells(
        which in any::<Index>(),
        mutations in prop::collection::vec((any::<Index>(), any::<Index>(), mutation()), 1..4),
    ) {
        let fixture = &fixtures()[which.index(fixtures().len())];
        let original = parse_rows(fixture.kind, fixture.family, &fixture.rows)
            .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
        let (rows, touched) = mutate(fixture, &mutations);
        let result = parse_rows(fixture.kind, fixture.family, &rows);
        let read = reads(fixture.kind);
        let shouted_only = mutations.iter().all(|m| matches!(m.2, Mutation::Shout));
        // The grants' one column is read whatever its name, so every touch is read.
        let unread = |c: &String| fixture.kind != Kind::Grants && !read.contains(&c.as_str());
        if shouted_only || touched.iter().all(unread) {
            prop_assert_eq!(result.as_ref().ok(), Some(&original), "{}: {:?}", fixture.name, mutations);
        }
        match &result {
            Ok(_) if fixture.kind == Kind::ReplicaStatus => {
                for row in &rows {
                    check_replica_numbers(row, &ReplicaStatus::from_row(row).expect("parsed above"));
                }
            }
            Ok(_) => {}
            Err(err) => {
                let message = err.to_string();
                assert_short(&message);
                let lower = message.to_ascii_lowercase();
                prop_assert!(
                    touched.iter().any(|c| lower.contains(c.as_str())),
                    "{}: {message:?} names none of {touched:?}",
                    fixture.name
                );
            }
        }
    }

    #[test]
    fn random_rows_never_panic_any_parser(
        rows in prop::collection::vec(
            prop::collection::vec(
                (prop::sample::select(all_columns()).prop_map(str::to_owned), hostile_cell()),
                0..12,
            ),
            0..4,
        ),
    ) {
        let rows: Vec<RawRow> = rows.into_iter().map(RawRow::new).collect();
        for kind in [
            Kind::ReplicaStatus, Kind::BinlogStatus, Kind::BinlogFiles, Kind::ReplicaHosts,
            Kind::SemiSync, Kind::Galera, Kind::NodeState, Kind::Identity, Kind::Processlist,
            Kind::Workers, Kind::Queued, Kind::Grants, Kind::LockThreads, Kind::LockTrx,
            Kind::LockMetadata,
        ] {
            for family in [Family::Mysql, Family::Mariadb] {
                if let Err(err) = parse_rows(kind, family, &rows) {
                    assert_short(&err.to_string());
                }
            }
        }
    }
}

/// Every column name the parsers read, in the server's spelling.
fn all_columns() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = [
        Kind::ReplicaStatus,
        Kind::BinlogStatus,
        Kind::BinlogFiles,
        Kind::ReplicaHosts,
        Kind::SemiSync,
        Kind::Galera,
        Kind::NodeState,
        Kind::Identity,
        Kind::Processlist,
        Kind::Workers,
        Kind::Queued,
        Kind::LockThreads,
        Kind::LockTrx,
        Kind::LockMetadata,
    ]
    .iter()
    .flat_map(|k| reads(*k).iter().copied())
    .collect();
    names.sort_unstable();
    names.dedup();
    names
}

#[test]
fn hostile_numbers_in_a_replica_status_are_named() {
    let fixture = fixtures()
        .iter()
        .find(|f| {
            f.name
                .ends_with("mysql-8.0/show_replica_status__running.txt")
        })
        .expect("the MySQL 8.0 running fixture");
    let with = |column: &str, value: Option<&str>| {
        let cells: Vec<(String, Option<String>)> = fixture.rows[0]
            .columns()
            .map(|c| {
                let v = if c == column {
                    value
                } else {
                    fixture.rows[0].text(&[c]).ok().flatten()
                };
                (c.to_owned(), v.map(str::to_owned))
            })
            .collect();
        assert!(cells.iter().any(|c| c.0 == column), "{column}");
        ReplicaStatus::from_row(&RawRow::new(cells))
    };
    // NULL lag stays NULL; a NULL position is refused.
    assert_eq!(
        with("Seconds_Behind_Source", None)
            .unwrap()
            .seconds_behind_source,
        None
    );
    let cases = [
        (
            "Read_Source_Log_Pos",
            Some("18446744073709551616"),
            "Read_Source_Log_Pos",
        ),
        ("Read_Source_Log_Pos", Some("-1"), "\"-1\""),
        ("Read_Source_Log_Pos", Some("1e400"), "\"1e400\""),
        ("Read_Source_Log_Pos", None, "is NULL"),
        ("Source_Port", Some("70000"), "0-65535"),
        ("Source_Server_Id", Some("4294967296"), "Source_Server_Id"),
        ("Last_IO_Errno", Some("4294967296"), "below 2^32"),
        ("Replica_SQL_Running", Some("yes"), "Replica_SQL_Running"),
        (
            "Replica_IO_Running",
            Some("\u{1f4a5}"),
            "Replica_IO_Running",
        ),
        (
            "Executed_Gtid_Set",
            Some(&format!("{UUID}:1-9223372036854775808")),
            "above the MySQL limit",
        ),
        (
            "Executed_Gtid_Set",
            Some(&format!("{UUID}:1-5,{}", &UUID[..20])),
            "invalid server UUID",
        ),
    ];
    for (column, value, says) in cases {
        let err = with(column, value).expect_err(column).to_string();
        assert_mentions(&err, &[says]);
        assert!(err.contains(column), "{err}");
    }
    let long = "x".repeat(1 << 20);
    let err = with("Replica_SQL_Running", Some(&long))
        .expect_err("1 MiB")
        .to_string();
    assert_short(&err);
}

#[test]
fn processlist_time_and_progress_from_any_server() {
    let row = |time: &str, progress: Option<&str>| {
        RawRow::new(vec![
            ("ID".into(), Some("14".into())),
            ("USER".into(), Some("system user".into())),
            ("COMMAND".into(), Some("Query".into())),
            ("TIME".into(), Some(time.into())),
            ("INFO".into(), Some("ALTER TABLE t FORCE".into())),
            ("PROGRESS".into(), progress.map(Into::into)),
        ])
    };
    // MySQL (not Percona) prints a negative TIME for an applier whose event is stamped ahead of
    // the replica's clock: the scan still reads, the DDL as just started.
    let list = Processlist::from_rows(&[row("-3", Some("12.5"))]).expect("negative TIME");
    assert_eq!(
        (list.ddl[0].elapsed_s, list.ddl[0].progress),
        (0, Some(12.5))
    );
    for (progress, want) in [
        ("NaN", None),
        ("inf", None),
        ("-inf", None),
        ("1e400", None),
        ("-5", None),
        ("100.0", Some(100.0)),
        ("103.2", Some(100.0)),
        ("0", Some(0.0)),
        ("-0", Some(0.0)),
    ] {
        let list = Processlist::from_rows(&[row("5", Some(progress))]).expect(progress);
        assert_eq!(list.ddl[0].progress, want, "{progress}");
        assert!(
            list.ddl[0].progress.is_none_or(f64::is_sign_positive),
            "{progress}"
        );
    }
    let err = Processlist::from_rows(&[row("soon", None)]).expect_err("TIME soon");
    assert_mentions(&err.to_string(), &["TIME", "\"soon\""]);
}

/// A binlog list as a server could report it, sizes up to `u64::MAX`, and a coordinate in it.
fn binlog_files() -> impl Strategy<Value = (Vec<BinlogFile>, BinlogPos, BinlogPos)> {
    let size = prop_oneof![
        0_u64..2000,
        Just(u64::MAX),
        (u64::MAX - 5)..=u64::MAX,
        any::<u64>()
    ];
    let files = prop::collection::vec(size, 0..6).prop_map(|sizes| {
        sizes
            .into_iter()
            .enumerate()
            .map(|(i, size)| BinlogFile {
                name: format!("binlog.{:06}", i + 1),
                size,
            })
            .collect::<Vec<_>>()
    });
    let pos = (
        0_usize..7,
        prop_oneof![0_u64..2000, any::<u64>(), Just(u64::MAX)],
    )
        .prop_map(|(file, pos)| BinlogPos {
            file: format!("binlog.{:06}", file + 1),
            pos,
        });
    (files, pos.clone(), pos)
}

proptest! {
    #![proptest_config(cases(512))]

    /// Bytes between two coordinates, summed in `u128` by hand: the same number, or unknown
    /// where the list does not place both or the sum passes `u64::MAX` — never a panic or a
    /// wrapped-around distance.
    #[test]
    fn bytes_between_huge_binlogs((files, from, to) in binlog_files()) {
        let index = |pos: &BinlogPos| files.iter().position(|f| f.name == pos.file);
        let model: Option<u64> = match (index(&from), index(&to)) {
            (Some(a), Some(b)) if a == b => to.pos.checked_sub(from.pos),
            (Some(a), Some(b)) if a < b => files[a].size.checked_sub(from.pos).and_then(|rest| {
                let middle: u128 = files[a + 1..b].iter().map(|f| u128::from(f.size)).sum();
                u64::try_from(u128::from(rest) + middle + u128::from(to.pos)).ok()
            }),
            _ => None,
        };
        prop_assert_eq!(bytes_between(&files, &from, &to), model);
    }
}

// ---------------------------------------------------------------- GTIDs

/// GTID texts as servers print them, from the recordings.
fn recorded_gtid_texts() -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for fixture in fixtures() {
        for row in &fixture.rows {
            for column in row.columns() {
                let lower = column.to_ascii_lowercase();
                let Some(text) = row.text(&[column]).ok().flatten() else {
                    continue;
                };
                if text.is_empty() {
                    continue;
                }
                if lower == "executed_gtid_set"
                    || lower == "retrieved_gtid_set"
                    || lower == "gtid_executed"
                {
                    out.push((true, text.to_owned()));
                } else if lower.starts_with("gtid_") && lower.ends_with("_pos") {
                    out.push((false, text.to_owned()));
                }
            }
        }
    }
    assert!(
        out.iter().any(|g| g.0) && out.iter().any(|g| !g.0),
        "{out:?}"
    );
    out
}

/// Every cut of `text` on a character boundary.
fn prefixes(text: &str) -> impl Iterator<Item = &str> {
    text.char_indices()
        .map(|(i, _)| &text[..i])
        .chain(std::iter::once(text))
}

#[test]
fn truncated_gtid_text_is_refused_or_a_smaller_position() {
    for (is_set, text) in recorded_gtid_texts() {
        if is_set {
            let whole = GtidSet::parse(&text).expect("recorded set");
            for cut in prefixes(&text) {
                match GtidSet::parse(cut) {
                    Ok(set) => assert_eq!(GtidSet::parse(&set.to_string()), Ok(set), "{cut:?}"),
                    Err(err) => assert_short(&err.to_string()),
                }
            }
            // A cut inside a server UUID, or right after a ':' or '-', never reads as a
            // smaller set: the entry it leaves is refused.
            for cut in prefixes(&text) {
                let last = cut.rsplit(',').next().unwrap_or_default().trim_ascii();
                if !last.is_empty() && (!last.contains(':') || last.ends_with([':', '-'])) {
                    assert!(GtidSet::parse(cut).is_err(), "{cut:?} accepted");
                }
            }
            assert!(whole.count() > 0);
        } else {
            let whole = GtidList::parse(&text).expect("recorded list");
            for cut in prefixes(&text) {
                let last = cut.rsplit(',').next().unwrap_or_default().trim_ascii();
                if cut.contains(',') && last.is_empty()
                    || !last.is_empty() && (last.matches('-').count() < 2 || last.ends_with('-'))
                {
                    assert!(GtidList::parse(cut).is_err(), "{cut:?} accepted");
                }
                match GtidList::parse(cut) {
                    // Only the last sequence number can lose digits: never a later position.
                    Ok(shorter) => {
                        for gtid in &shorter {
                            assert!(
                                whole.seq(gtid.domain).is_some_and(|seq| seq >= gtid.seq),
                                "{cut:?}"
                            );
                        }
                        assert_eq!(shorter.total_distance(&whole), 0, "{cut:?}");
                    }
                    Err(err) => assert_short(&err.to_string()),
                }
            }
        }
    }
}

#[test]
fn gtid_numbers_past_their_limits_are_refused_by_name() {
    let cases: [(&str, &str); 10] = [
        ("0-1-18446744073709551616", "above 18446744073709551615"),
        (
            "0-1-99999999999999999999999999",
            "above 18446744073709551615",
        ),
        ("4294967296-1-1", "domain is above 4294967295"),
        ("0-4294967296-1", "server_id is above 4294967295"),
        ("0--1-5", "three"),
        ("-0-1", "domain is missing"),
        ("0-1-1e400", "not a decimal number"),
        ("0-1-\u{663}", "not a decimal number"),
        ("0-1-5,,1-1-1", "empty entry"),
        ("0-1-", "sequence number is missing"),
    ];
    for (text, says) in cases {
        assert_mentions(&GtidList::parse(text).unwrap_err().to_string(), &[says]);
    }
    let set_cases = [
        (
            format!("{UUID}:9223372036854775808"),
            "above the MySQL limit",
        ),
        (
            format!("{UUID}:1-18446744073709551616"),
            "above the MySQL limit",
        ),
        (format!("{UUID}:0"), "start at 1"),
        (format!("{UUID}:-1"), "missing number"),
        (format!("{UUID}:5-3"), "start is after end"),
        (format!("{UUID}:1e400"), "not a decimal number"),
        (format!("{UUID}:\u{ff11}"), "tag"),
        (format!("{UUID}:{}:1", "t".repeat(33)), "at most 32"),
        (format!("{UUID}:tag"), "no interval"),
        (
            format!("{}:1", UUID.replace('e', "\u{e9}")),
            "invalid server UUID",
        ),
    ];
    for (text, says) in &set_cases {
        let message = GtidSet::parse(text).unwrap_err().to_string();
        assert_mentions(&message, &[says]);
        assert_short(&message);
    }
    assert!(Gtid::parse(&format!("{UUID}:{}", u64::MAX)).is_err());
    let huge = format!("{UUID}:{}", "9".repeat(100_000));
    assert_short(&GtidSet::parse(&huge).unwrap_err().to_string());
    assert_short(
        &GtidList::parse(&format!("0-1-{}", "9".repeat(100_000)))
            .unwrap_err()
            .to_string(),
    );
}

/// Intervals anywhere in the whole GNO range, including its ends.
fn huge_set() -> impl Strategy<Value = GtidSet> {
    let gno = prop_oneof![
        Just(1),
        Just(MAX_GNO),
        Just(MAX_GNO - 1),
        1..=MAX_GNO,
        (MAX_GNO - 3)..=MAX_GNO,
    ];
    let uuid = prop::sample::select(vec![UUID, "ffffffff-ffff-ffff-ffff-ffffffffffff"]);
    prop::collection::vec((uuid, gno.clone(), gno), 0..6).prop_map(|runs| {
        let entries: Vec<String> = runs
            .into_iter()
            .map(|(uuid, a, b)| format!("{uuid}:{}-{}", a.min(b), a.max(b)))
            .collect();
        GtidSet::parse(&entries.join(",")).expect("in range")
    })
}

fn huge_list() -> impl Strategy<Value = GtidList> {
    let seq = prop_oneof![Just(0), Just(u64::MAX), Just(u64::MAX - 1), any::<u64>()];
    let domain = prop_oneof![0_u32..3, Just(u32::MAX)];
    prop::collection::vec((domain, any::<u32>(), seq), 0..6).prop_map(|entries| {
        let text: Vec<String> = entries
            .iter()
            .map(|(d, s, q)| format!("{d}-{s}-{q}"))
            .collect();
        GtidList::parse(&text.join(",")).expect("in range")
    })
}

proptest! {
    #![proptest_config(cases(256))]

    /// Counting and combining sets that span nearly 2^63 transactions never overflows: the
    /// sizes add up as sets do.
    #[test]
    fn arithmetic_on_huge_sets_does_not_overflow(a in huge_set(), b in huge_set()) {
        let (union, both, diff) = (a.union(&b), a.intersection(&b), a.subtract(&b));
        prop_assert_eq!(union.count() + both.count(), a.count() + b.count());
        prop_assert_eq!(diff.count() + both.count(), a.count());
        prop_assert!(union.is_superset_of(&a) && union.is_superset_of(&b));
        prop_assert_eq!(b.subtract(&a).count() + diff.count() + both.count(), union.count());
        for set in [&union, &both, &diff] {
            prop_assert_eq!(&GtidSet::parse(&set.to_string()), &Ok(set.clone()));
        }
        let mut grown = a.clone();
        grown.add(&Gtid { uuid: rwtop::gtid::ServerUuid::parse(UUID).unwrap(), tag: None, gno: MAX_GNO });
        grown.add(&Gtid { uuid: rwtop::gtid::ServerUuid::parse(UUID).unwrap(), tag: None, gno: u64::MAX });
        prop_assert!(grown.is_superset_of(&a));
    }

    #[test]
    fn distances_between_huge_lists_saturate(a in huge_list(), b in huge_list()) {
        let rows = a.distance_from(&b);
        let total = a.total_distance(&b);
        let sum: u128 = rows.iter().map(|r| u128::from(r.transactions)).sum();
        prop_assert_eq!(u128::from(total), sum.min(u128::from(u64::MAX)));
        for row in &rows {
            let want = a.seq(row.domain).unwrap_or(0).saturating_sub(b.seq(row.domain).unwrap_or(0));
            prop_assert_eq!(row.transactions, want);
        }
        let errant: Vec<DomainGtid> = a.ahead_of(&b);
        prop_assert!(errant.iter().all(|g| !b.contains(g)));
        prop_assert_eq!(GtidList::parse(&a.to_string()), Ok(a));
    }
}

// ---------------------------------------------------------------- config files

/// What a key takes, to tell a valid value from a bad one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Duration,
    /// A duration of at most an hour.
    Interval,
    Bool,
    /// Any string (theme, `[keys]`).
    Text,
    /// Up to 64 printable characters.
    WriterId,
    PtTable,
    /// A non-empty path.
    Path,
    /// A finite number of seconds, 0 or more.
    Seconds,
    /// A whole number, 0 or more.
    Count,
    /// A whole number, 1 or more.
    Samples,
    /// A whole number from 1 to 2^32 - 1.
    Probes,
    Strategy,
}

use Takes::{
    Bool, Count, Duration as Dur, Interval, Path as PathKey, Probes, PtTable, Samples, Seconds,
    Strategy as Strat, Text, WriterId,
};

/// Every key of rwtop.toml outside the nodes and `[drain]`: (table, key, what it takes).
const KEYS: &[(&str, &str, Takes)] = &[
    ("", "interval", Interval),
    ("", "connect_timeout", Dur),
    ("", "query_timeout", Dur),
    ("", "discovery", Bool),
    ("", "read_only", Bool),
    ("", "theme", Text),
    ("", "password_file", PathKey),
    ("heartbeat", "interval", Interval),
    ("heartbeat", "read_interval", Interval),
    ("heartbeat", "writer_id", WriterId),
    ("heartbeat", "pt_table", PtTable),
    ("thresholds", "sbm_disagree_seconds", Seconds),
    ("thresholds", "lag_p99_seconds", Seconds),
    ("thresholds", "routing_max_lag_seconds", Seconds),
    ("thresholds", "not_recovering_seconds", Seconds),
    ("thresholds", "gtid_backlog", Count),
    ("thresholds", "clock_skew_ms", Count),
    ("thresholds", "raise_after", Samples),
    ("thresholds", "clear_after", Samples),
    ("probe", "strategy", Strat),
    ("probe", "timeout", Dur),
    ("probe", "sleep", Dur),
    ("probe", "sticky_window", Dur),
    ("probe", "max_lag", Dur),
    ("probe", "spacing", Dur),
    ("probe", "count", Probes),
    ("throttle", "max_lag", Dur),
    ("keys", "quit", Text),
];

/// Strings any string key takes.
const ANY_TEXT: &[Takes] = &[Text, WriterId, PathKey];
/// Strings that are also a plain table name.
const IDENT: &[Takes] = &[Text, WriterId, PathKey, PtTable];

/// TOML values, hostile and not, with the keys each is valid for.
const VALUES: &[(&str, &[Takes])] = &[
    (
        "\"250ms\"",
        &[Dur, Interval, Text, WriterId, PathKey, PtTable],
    ),
    (
        "\"1.5s\"",
        &[Dur, Interval, Text, WriterId, PathKey, PtTable],
    ),
    ("\"2h\"", &[Dur, Text, WriterId, PathKey, PtTable]),
    ("\"1e400s\"", IDENT),
    ("\"-1s\"", ANY_TEXT),
    ("\"-250ms\"", ANY_TEXT),
    ("\"0ms\"", IDENT),
    ("\"1000000000000000h\"", IDENT),
    ("\"18446744073709551616\"", IDENT),
    ("\"\u{663}s\"", ANY_TEXT),
    ("\"1.2.3s\"", ANY_TEXT),
    ("\"nan\"", IDENT),
    ("5", &[Dur, Interval, Seconds, Count, Samples, Probes]),
    ("0", &[Seconds, Count]),
    ("-5", &[]),
    ("-0", &[Seconds, Count]),
    ("0.5", &[Dur, Interval, Seconds]),
    ("-0.5", &[]),
    ("1e300", &[Seconds]),
    ("nan", &[]),
    ("inf", &[]),
    ("-inf", &[]),
    ("1e400", &[]),
    ("99999999999999999999", &[]),
    ("9223372036854775807", &[Seconds, Count, Samples]),
    ("4294967295", &[Seconds, Count, Samples, Probes]),
    ("4294967296", &[Seconds, Count, Samples]),
    ("true", &[Bool]),
    ("\"true\"", IDENT),
    ("[]", &[]),
    ("[1, \"a\"]", &[]),
    ("{}", &[]),
    ("{ a = { b = 1 } }", &[]),
    ("1979-05-27T07:32:00Z", &[]),
    ("\"\"", &[Text, WriterId]),
    ("\"gtid-wait\"", &[Text, WriterId, PathKey, Strat]),
    ("\"sleep(1.5ms)\"", &[Text, WriterId, PathKey, Strat]),
    ("\"sleep(1e400s)\"", ANY_TEXT),
    ("\"sticky(1000000000000000h)\"", ANY_TEXT),
    ("\"none,gtid-wait\"", ANY_TEXT),
    ("\"all\"", IDENT),
    ("\"percona.heartbeat\"", &[Text, WriterId, PathKey, PtTable]),
    ("\"x; DROP TABLE y\"", ANY_TEXT),
    ("\"\u{1f4a5}\u{540d}\u{202e}\"", ANY_TEXT),
    ("\"a\\u0000b\"", &[Text, PathKey]),
    ("'''\nmulti\nline'''", &[Text, PathKey]),
    ("\"mysql://u@h:70000\"", ANY_TEXT),
];

/// One `key = value` line of a generated file.
#[derive(Debug, Clone)]
struct Entry {
    table: &'static str,
    key: String,
    value: String,
    valid: bool,
}

fn entry() -> impl Strategy<Value = Entry> {
    let known = (any::<Index>(), any::<Index>()).prop_map(|(k, v)| {
        let (table, key, takes) = KEYS[k.index(KEYS.len())];
        let (value, valid_for) = VALUES[v.index(VALUES.len())];
        Entry {
            table,
            key: key.to_owned(),
            value: value.to_owned(),
            valid: valid_for.contains(&takes),
        }
    });
    let long = (any::<Index>(), 65_usize..20_000).prop_map(|(k, n)| {
        let (table, key, takes) = KEYS[k.index(KEYS.len())];
        Entry {
            table,
            key: key.to_owned(),
            value: format!("\"{}\"", "\u{540d}".repeat(n)),
            valid: matches!(takes, Text | PathKey),
        }
    });
    // Keys nobody defined, in any script, and tables where a value belongs.
    let unknown = (
        prop::sample::select(vec!["", "heartbeat", "thresholds", "probe"]),
        prop_oneof![
            Just("\"\u{43a}\u{43b}\u{44e}\u{447}\"".to_owned()),
            Just("\"\u{1f4a5}\"".to_owned()),
            Just("intervall".to_owned()),
            Just("\"\"".to_owned()),
            "[a-z_]{1,12}".prop_filter("known", |k| !KEYS.iter().any(|(_, known, _)| known == k)),
        ],
    )
        .prop_map(|(table, key)| Entry {
            table,
            key,
            value: "1".to_owned(),
            valid: false,
        });
    let table_as_value =
        prop::sample::select(vec!["heartbeat", "thresholds", "probe", "keys", "drain"]).prop_map(
            |key| Entry {
                table: "",
                key: key.to_owned(),
                value: "5".to_owned(),
                valid: false,
            },
        );
    prop_oneof![12 => known, 1 => long, 1 => unknown, 1 => table_as_value]
}

/// The file's text, and for each line the dotted key it sets.
fn document(entries: &[Entry]) -> (String, Vec<Option<String>>) {
    let mut text = String::new();
    let mut keys: Vec<Option<String>> = Vec::new();
    let mut line = |text: &mut String, key: Option<String>, content: &str| {
        text.push_str(content);
        text.push('\n');
        keys.push(key);
        // A multi-line value spans several lines, each naming the key.
        for _ in content.matches('\n') {
            keys.push(keys.last().cloned().flatten());
        }
    };
    let mut tables: Vec<&str> = entries.iter().map(|e| e.table).collect();
    tables.sort_unstable();
    tables.dedup();
    for table in tables {
        if !table.is_empty() {
            line(&mut text, Some(table.to_owned()), &format!("[{table}]"));
        }
        for e in entries.iter().filter(|e| e.table == table) {
            let bare = e.key.trim_matches('"');
            let dotted = if table.is_empty() {
                bare.to_owned()
            } else {
                format!("{table}.{bare}")
            };
            line(&mut text, Some(dotted), &format!("{} = {}", e.key, e.value));
        }
    }
    (text, keys)
}

/// Whether the entries make a file rwtop must accept: every value valid, no key twice.
fn acceptable(entries: &[Entry]) -> bool {
    let mut seen = BTreeSet::new();
    entries
        .iter()
        .all(|e| e.valid && seen.insert((e.table, e.key.clone())))
}

/// A refusal names the file and, when it knows where, the line and the key set there.
fn check_refusal(err: &ConfigError, path: &Path, keys: &[Option<String>]) {
    let message = err.to_string();
    assert_eq!(err.exit_code(), 2);
    assert!(
        message.contains(&path.display().to_string()),
        "no file in {message}"
    );
    // The toml crate quotes the offending line whole (` 1 | key = ...`); that is its report.
    // A strategy's refusal quotes the whole text (src/probe/strategy.rs, not a config module).
    let own: String = message.lines().filter(|l| !l.contains(" | ")).collect();
    if !own.contains("key `probe.strategy`") {
        assert_short(&own);
    }
    let at = match err {
        ConfigError::Syntax { at, .. }
        | ConfigError::Invalid { at, .. }
        | ConfigError::BadDuration { at, .. } => Some(at),
        ConfigError::BadDsn { at, .. } => at.as_ref(),
        _ => None,
    };
    if let Some(Origin::File {
        path: named,
        position,
        key,
    }) = at
    {
        assert_eq!(named, path);
        if let Some((line, _)) = position {
            let line = usize::try_from(*line).expect("line");
            assert!(
                (1..=keys.len() + 1).contains(&line),
                "line {line} of {}: {message}",
                keys.len()
            );
            assert!(message.contains(&format!("line {line},")), "{message}");
            if let Some(Some(expected)) = keys.get(line - 1) {
                assert_eq!(key.as_deref(), Some(expected.as_str()), "{message}");
                assert!(message.contains(&format!("key `{expected}`")), "{message}");
            }
        }
    }
}

fn no_prompt(_: &str) -> std::io::Result<String> {
    Err(std::io::Error::other("no prompt in tests"))
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn config_files_with_hostile_values(entries in prop::collection::vec(entry(), 0..8)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rwtop.toml");
        let (text, keys) = document(&entries);
        std::fs::write(&path, &text).expect("write config");
        match FileSettings::from_file(&path) {
            Ok(settings) => {
                prop_assert!(acceptable(&entries), "accepted:\n{}\n{:?}", text, settings);
                // Whatever was accepted is usable: durations stay far from overflowing.
                for d in [settings.interval, settings.timeouts.connect, settings.probe.spacing,
                          settings.probe.defaults.timeout, settings.probe.defaults.sticky_window] {
                    prop_assert!(d > Duration::ZERO && d <= Duration::from_secs(366 * 86_400), "{:?}", d);
                }
                let printed = settings.probe.strategy.to_string();
                prop_assert_eq!(ReadStrategy::parse(&printed, &settings.probe.defaults), Ok(settings.probe.strategy));
            }
            Err(err) => {
                prop_assert!(!acceptable(&entries), "refused:\n{}\n{}", text, err);
                check_refusal(&err, &path, &keys);
            }
        }
    }

    #[test]
    fn config_nodes_with_hostile_names_and_dsns(
        name in prop::option::of(prop_oneof![
            Just("\"primary\"".to_owned()),
            Just("\"pr\u{ed}mary\"".to_owned()),
            Just("\"my primary\"".to_owned()),
            Just("\"\"".to_owned()),
            Just("5".to_owned()),
            hostile().prop_map(|h| toml_string(&h)),
        ]),
        dsn in prop_oneof![
            Just("mysql://rwtop@db1:3306".to_owned()),
            Just("mysql://rwtop@db1:70000".to_owned()),
            Just("mysql://rwtop@db1:0".to_owned()),
            Just("mysql://rwtop@db1:-1".to_owned()),
            Just("mysql://rwtop@db1:18446744073709551616".to_owned()),
            Just("mysql://rwtop@d\u{e9}1".to_owned()),
            Just("mysql://rwtop:hunter2@[::1]:3306".to_owned()),
            Just("\u{540d}=mysql://rwtop@db1".to_owned()),
            hostile().prop_map(|h| format!("mysql://rwtop@{h}")),
            hostile(),
        ],
        interval in prop::option::of(hostile()),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rwtop.toml");
        let mut text = "[primary]\n".to_owned();
        let mut keys = vec![Some("primary".to_owned())];
        if let Some(name) = &name {
            writeln!(text, "name = {name}").expect("a String takes any text");
            keys.push(Some("primary.name".to_owned()));
        }
        writeln!(text, "dsn = {}", toml_string(&dsn)).expect("a String takes any text");
        keys.push(Some("primary.dsn".to_owned()));
        std::fs::write(&path, &text).expect("write config");
        let cli = CliOverrides { config: Some(path.clone()), interval: interval.clone(), ..CliOverrides::default() };
        match Config::load_from(&cli, &[], Some("pw".to_owned()), &mut no_prompt) {
            Ok(config) => {
                let node = &config.nodes[0];
                prop_assert!(node.endpoint.port > 0);
                prop_assert!(node.name.chars().all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c)), "{}", node.name);
                prop_assert!(config.settings.interval <= Duration::from_secs(3600));
            }
            Err(err) => {
                let message = err.to_string();
                prop_assert!(!message.contains("hunter2"), "{}", message);
                if message.starts_with("flag --interval") {
                    prop_assert!(interval.is_some());
                    assert_short(&message);
                } else {
                    check_refusal(&err, &path, &keys);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(cases(256))]

    /// Any text or bytes as a config file, any text as the node flags: an answer, or a refusal
    /// that names the file or the flag.
    #[test]
    fn config_files_and_flags_of_arbitrary_text(
        text in prop_oneof![any::<String>(), "[a-z_\\[\\]=\" .\n0-9{},'#-]{0,120}"],
        bytes in prop::collection::vec(any::<u8>(), 0..64),
        flag in hostile(),
        with_interval in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rwtop.toml");
        let shown = path.display().to_string();
        for content in [text.as_bytes(), &bytes] {
            std::fs::write(&path, content).expect("write config");
            if let Err(err) = FileSettings::from_file(&path) {
                prop_assert!(err.to_string().contains(&shown), "{}", err);
                prop_assert_eq!(err.exit_code(), 2);
            }
        }
        let cli = CliOverrides {
            primaries: vec![flag.clone()],
            replicas: vec![flag.clone(), format!("r={flag}")],
            interval: with_interval.then_some(flag),
            ..CliOverrides::default()
        };
        if let Err(err) = Config::load_from(&cli, &[], Some("pw".to_owned()), &mut no_prompt) {
            let message = err.to_string();
            prop_assert!(message.contains("flag --"), "{}", message);
            assert_short(&message);
        }
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = "\"".to_owned();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => write!(out, "\\u{:04x}", u32::from(c)).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[test]
fn deeply_nested_config_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("deep.toml");
    for depth in [64, 10_000, 200_000] {
        for text in [
            format!("interval = {}{}", "[".repeat(depth), "]".repeat(depth)),
            format!(
                "interval = {}1{}",
                "{ a = ".repeat(depth),
                " }".repeat(depth)
            ),
            format!("[{}]\nx = 1\n", vec!["heartbeat"; depth].join(".")),
            format!("{} = 1\n", vec!["k"; depth].join(".")),
        ] {
            std::fs::write(&path, &text).expect("write config");
            let err = FileSettings::from_file(&path).expect_err("nested");
            let message = err.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
            assert_eq!(err.exit_code(), 2);
        }
    }
}

// ---------------------------------------------------------------- strategies

fn strategy_text() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "none",
        "primary",
        "sleep",
        "sbm-zero",
        "pos-equal",
        "gtid-equal",
        "semisync-pos",
        "pos-wait",
        "gtid-wait",
        "sticky",
        "lag-threshold",
        "all",
        "",
        "Sleep",
        "gtid_wait",
        "\u{540d}",
    ]);
    let param = prop_oneof![
        Just(String::new()),
        Just("()".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just("((1s))".to_owned()),
        prop::sample::select(vec![
            "250ms",
            "1.5ms",
            "1.0005s",
            "0.0000015s",
            "1e400s",
            "-1s",
            "0s",
            "18446744073709551616s",
            "1000000000000000h",
            "5124095576030431h",
            "",
            " 2 m ",
            "\u{663}s",
            "1.5",
            "nan",
        ])
        .prop_map(|d| format!("({d})")),
        hostile().prop_map(|h| format!("({h})")),
    ];
    let one = (name, param).prop_map(|(n, p)| format!("{n}{p}"));
    prop_oneof![
        4 => prop::collection::vec(one, 1..4).prop_map(|parts| parts.join(",")),
        1 => hostile(),
    ]
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn strategies_parse_print_and_reparse(text in strategy_text()) {
        let defaults = ProbeDefaults::default();
        let check = |s: &ReadStrategy| -> Result<(), TestCaseError> {
            let printed = s.to_string();
            let again = ReadStrategy::parse(&printed, &defaults)
                .map_err(|e| TestCaseError::fail(format!("{s:?} prints as {printed:?}: {e}")))?;
            // `short_duration` prints whole microseconds, so a finer parameter reads back
            // rounded down (src/probe/strategy.rs): only parsing is required of those.
            if s.param().is_none_or(|d| d.subsec_nanos() % 1000 == 0) {
                prop_assert_eq!(again, *s, "{}", printed);
            }
            prop_assert!(s.param().is_none_or(|d| d <= Duration::from_secs(366 * 86_400)), "{:?}", s);
            Ok(())
        };
        match ReadStrategy::parse(&text, &defaults) {
            Ok(s) => check(&s)?,
            Err(message) => prop_assert!(message.contains("strateg"), "{}", message),
        }
        match ReadStrategy::parse_list(&text, &defaults) {
            Ok(list) => {
                prop_assert!(!list.is_empty());
                for s in &list {
                    check(s)?;
                }
            }
            Err(message) => prop_assert!(message.contains("strateg"), "{}", message),
        }
    }

    #[test]
    fn durations_parse_or_explain(text in prop_oneof![hostile(), "[0-9.]{0,25}(us|ms|s|m|h|d|)"]) {
        match parse_duration(&text) {
            Ok(d) => {
                prop_assert!(d > Duration::ZERO && d <= Duration::from_secs(366 * 86_400), "{:?} from {:?}", d, text);
            }
            Err(message) => {
                prop_assert!(message.contains("\"250ms\""), "{}", message);
            }
        }
    }
}

// ---------------------------------------------------------------- the terminal

const SCENARIOS: [&str; 4] = ["healthy", "sql_stopped", "stalled_link", "ddl_window"];

fn recorded(scenario: &str) -> Snapshot {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/ui_snapshots/{scenario}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The views an operator can reach: each mode, the test-reads pane, every pane toggled off,
/// the last replica selected, GTID sets expanded.
fn views(replicas: usize) -> Vec<UiState> {
    let mut states = Vec::new();
    for mode in [Mode::Normal, Mode::Help] {
        let mut state = UiState {
            mode,
            ..UiState::default()
        };
        states.push(state.clone());
        state.selected = replicas.saturating_sub(1);
        state.panes.cover = Some(Cover::TestReads);
        state.panes.expand_gtid = true;
        states.push(state.clone());
        state.panes.topology = false;
        state.panes.alerts = false;
        states.push(state.clone());
        state.panes.detail = false;
        state.panes.cover = None;
        states.push(state);
    }
    states
}

/// Sizes from 1×1 to 130×45 on one terminal resized between draws, as a real one is, each
/// meeting another scenario and view; then each scenario in each view dragged from 130×45 down
/// to 1×1 and back up. Nothing may panic, and every draw fills the resized screen.
#[test]
fn whole_ui_survives_every_size() {
    let theme = Theme::plain();
    let snapshots: Vec<Snapshot> = SCENARIOS.iter().map(|s| recorded(s)).collect();
    let mut screens: Vec<(usize, UiState)> = Vec::new();
    for (index, snapshot) in snapshots.iter().enumerate() {
        let replicas = UiState::default().rows(snapshot).len();
        screens.extend(views(replicas).into_iter().map(|view| (index, view)));
    }
    let mut terminal = Terminal::new(TestBackend::new(1, 1)).expect("test terminal");
    let mut draw = |(scenario, state): &(usize, UiState), (w, h): (u16, u16)| {
        let ctx = RenderCtx {
            snapshot: &snapshots[*scenario],
            state,
            theme: &theme,
        };
        terminal.backend_mut().resize(w, h);
        terminal
            .draw(|frame| rwtop::ui::render::render(frame, &ctx))
            .unwrap_or_else(|e| panic!("{} {w}×{h}: {e}", SCENARIOS[*scenario]));
        assert_eq!(
            terminal.backend().buffer().area,
            ratatui::layout::Rect::new(0, 0, w, h)
        );
    };

    // Up, row by row; the scenario and the view change at every draw. Every size below 80×24
    // (the notice); from there, a new size costs a full layout solve (~12 ms unoptimized, as
    // each misses ratatui's layout cache), so the edges of that range and a lattice that meets
    // every width and every height in it: 231 of its 1,122 sizes.
    let mut drawn = 0_usize;
    for h in 1..=45_u16 {
        for w in 1..=130_u16 {
            let full = w >= 80 && h >= 24;
            let edge = matches!(w, 80 | 130) || matches!(h, 24 | 45);
            if full && !edge && (w + 2 * h) % 11 != 0 {
                continue;
            }
            draw(&screens[drawn % screens.len()], (w, h));
            drawn += 1;
        }
    }
    // Then each scenario in each view, dragged down to 1×1 and back up.
    for screen in &screens {
        for size in [
            (130, 45),
            (100, 33),
            (80, 24),
            (79, 24),
            (80, 23),
            (40, 12),
            (1, 1),
            (80, 24),
            (130, 45),
        ] {
            draw(screen, size);
        }
    }
}

/// A recorded snapshot with every value a server or an operator could make absurd: names in
/// wide scripts, with combining marks, bidi overrides and terminal escapes; numbers at their
/// type's limit; messages of thousands of lines; a DDL with NaN progress.
fn hostile_snapshot(scenario: &str, variant: u8) -> Snapshot {
    let mut snapshot = recorded(scenario);
    let rename = |name: &str| match variant {
        0 => format!("{name}-{}", "\u{6570}\u{636e}\u{5e93}".repeat(20)),
        1 => format!("{name}\u{202e}\u{1b}[31m\t\n"),
        2 => format!("{name}{}", "\u{301}".repeat(50)),
        _ => name.to_owned(),
    };
    for node in &mut snapshot.nodes {
        node.name = rename(&node.name);
        node.source = node.source.as_deref().map(rename);
        if variant == 3 {
            node.address = "h".repeat(300);
            node.identity.flavor = Some(rwtop::mysql::Flavor {
                version_string: "\u{1b}[2J\u{7}".into(),
                ..testkit::flavor("10.11.19-MariaDB")
            });
            testkit::set_clock(node, i64::MIN);
            node.sample_age = Some(Duration::MAX);
            node.identity.server_uuid = Some("\u{1f4a5}".repeat(100));
        }
        if variant == 4 {
            testkit::scan(node).push(DdlStatement {
                id: u64::MAX,
                statement: "ALTER TABLE \u{540d}\n\t\u{1b}x ".repeat(30),
                elapsed_s: u64::MAX,
                progress: Some(f64::NAN),
                applier: true,
                waiting_for: Some("\u{1b}[2J\u{7} lock\n".repeat(40)),
                blockers: Some(hostile_blockers()),
            });
            testkit::scan(node).push(DdlStatement {
                id: 0,
                statement: String::new(),
                elapsed_s: 0,
                progress: Some(f64::INFINITY),
                applier: false,
                waiting_for: Some(String::new()),
                blockers: None,
            });
        }
        let Some(r) = node.replica_mut().filter(|_| variant >= 3) else {
            continue;
        };
        r.seconds_behind_source = Some(u64::MAX);
        r.heartbeat_lag = if variant == 3 {
            Lag::Exact { lag: Duration::MAX }
        } else {
            Lag::AtLeast {
                lag: Duration::MAX,
                upper: Some(Duration::ZERO),
            }
        };
        (r.sql_delay, r.sql_remaining_delay) = (Some(u64::MAX), Some(u64::MAX));
        r.received = rwtop::mysql::BinlogPos {
            file: "f".repeat(500),
            pos: u64::MAX,
        };
        r.io_state = "\u{1b}[0m\u{72b6}\u{614b}".repeat(40);
        r.gtid_backlog.not_received = Some(u64::MAX);
        r.gtid_backlog.not_applied = Some(u64::MAX);
        r.bytes_behind.io = Some(u64::MAX);
        r.last_io_error = Some(ThreadError {
            errno: u32::MAX,
            message: "err\n".repeat(3000),
            timestamp: Some("\0".into()),
        });
        for stats in r.windows.iter_mut().filter_map(|w| w.1.as_mut()) {
            (stats.p50, stats.p99, stats.max, stats.samples) =
                (Duration::MAX, Duration::MAX, Duration::MAX, u64::MAX);
        }
        let points: Vec<Point> = (0..50)
            .map(|i| Point {
                at_ms: if i % 2 == 0 { u64::MAX - i } else { i },
                heartbeat_lag_ms: Some(u32::MAX),
                sbm_s: Some(u32::MAX),
            })
            .collect();
        r.series = points.into();
    }
    snapshot
}

/// No absurd value panics the UI, and no control character (a terminal escape in a server's
/// text) reaches the screen.
#[test]
fn hostile_values_in_a_snapshot_draw() {
    let theme = Theme::plain();
    for scenario in SCENARIOS {
        for variant in 0..6 {
            let snapshot = hostile_snapshot(scenario, variant);
            for state in views(snapshot.nodes.len()) {
                let ctx = RenderCtx {
                    snapshot: &snapshot,
                    state: &state,
                    theme: &theme,
                };
                for (w, h) in [(80, 24), (130, 45)] {
                    let mut terminal =
                        Terminal::new(TestBackend::new(w, h)).expect("test terminal");
                    terminal
                        .draw(|frame| rwtop::ui::render::render(frame, &ctx))
                        .unwrap_or_else(|e| panic!("{scenario} variant {variant} {w}×{h}: {e}"));
                    let buffer = terminal.backend().buffer();
                    assert!(
                        buffer
                            .content()
                            .iter()
                            .all(|cell| !cell.symbol().contains(char::is_control)),
                        "{scenario} variant {variant} {w}×{h}: a control character on screen"
                    );
                }
            }
        }
    }
}

/// Holders of a waiting DDL's lock as a hostile server could name them: control characters,
/// huge ids and times, in every text field.
fn hostile_blockers() -> rwtop::mysql::Blockers {
    use rwtop::mysql::{Blockers, HolderSource, Holds, Kill, LastStatement, LockHolder};
    let bad = "\u{1b}[2J\u{7}\n\t\u{540d}".repeat(30);
    let holder = |id: u64, holds: Holds, last: LastStatement| LockHolder {
        id,
        user: bad.clone(),
        host: bad.clone(),
        command: bad.clone(),
        idle_s: Some(u64::MAX),
        trx_age_s: Some(u64::MAX),
        last_statement: last,
        holds,
        kill: Kill::Connection,
    };
    Blockers {
        source: HolderSource::TransactionsAndProcesslist,
        holders: vec![
            holder(
                u64::MAX,
                Holds::Lock {
                    mode: bad.clone(),
                    object: bad.clone(),
                },
                LastStatement::Running(bad.clone()),
            ),
            holder(0, Holds::IdleSinceBefore, LastStatement::Last(bad.clone())),
        ],
    }
}
