//! rwtop's own objects on a server — the schema `rwtop` and its tables `heartbeat` and
//! `probe` — defined with every property spelled out, and the look before the first write.
//!
//! A table rwtop creates replicates to every replica below the server it is created on, and
//! its rows follow as row images that each replica must be able to apply to *its* copy. A
//! definition left to the server's defaults (character set, collation, engine) is a different
//! table on servers set up differently: two roots feeding one aggregator then send row images
//! the aggregator cannot convert, and its channel stops (`docs/own-tables.md` shows the case).
//! So every definition here names its character set and collation (schema, table and each
//! text column), engine, row format, column types and nullability, and the bytes of each row
//! image are the same on every server, `MariaDB` and `MySQL` alike.
//!
//! Before rwtop writes on a server it reads that server's copy of the table
//! ([`check_sql`]), creates it when it is missing, and reads it again: a copy that differs
//! from rwtop's in anything that changes the row image (a column's type, character set,
//! collation, place or nullability; a column more or less), or that is not an `InnoDB` base
//! table keyed as rwtop's, is a [`Mismatch`] — what differs and the `ALTER` that fixes it — and
//! rwtop writes nothing there. It never alters or drops a table by itself.

use serde::{Deserialize, Serialize};

use super::conn::{NodeConn, SqlError};
use super::row::RawRow;

/// The schema every object of rwtop's lives in.
pub const SCHEMA: &str = "rwtop";

/// The one character set and collation of everything rwtop creates: `utf8mb4` holds any writer
/// id a config can give, and `_bin` compares ids byte for byte on every flavor and version.
const CHARSET: &str = "utf8mb4";
const COLLATION: &str = "utf8mb4_bin";

/// The schema, with its defaults spelled out (they decide nothing of rwtop's tables, whose
/// every text column names its own, but a schema made here is the same everywhere too).
pub const CREATE_SCHEMA: &str =
    "CREATE DATABASE IF NOT EXISTS rwtop CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";

/// One column of one of rwtop's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    /// As `information_schema.COLUMNS.COLUMN_TYPE` prints it, without an integer's display
    /// width (`MariaDB` prints `bigint(20) unsigned`, `MySQL` 8.0.19+ `bigint unsigned`).
    pub kind: &'static str,
    /// Text columns only: their character set is spelled out.
    pub text: bool,
}

impl Column {
    /// The column's definition in a `CREATE TABLE` or `ALTER TABLE … MODIFY`.
    fn definition(&self) -> String {
        let charset = if self.text {
            format!(" CHARACTER SET {CHARSET} COLLATE {COLLATION}")
        } else {
            String::new()
        };
        format!(
            "{} {}{charset} NOT NULL",
            self.name,
            self.kind.to_uppercase()
        )
    }
}

/// One of rwtop's tables: its columns in order, its key, and a secondary index when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnTable {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// The primary key's one column.
    pub key: &'static str,
    /// A secondary index (`KEY name (name)`), which changes no row image and is not checked.
    pub index: Option<&'static str>,
}

/// The heartbeat: one row per writer (per root), its sequence number bumped every interval.
pub const HEARTBEAT: OwnTable = OwnTable {
    name: "heartbeat",
    columns: &[
        Column {
            name: "writer_id",
            kind: "varchar(64)",
            text: true,
        },
        Column {
            name: "seq",
            kind: "bigint unsigned",
            text: false,
        },
        Column {
            name: "ts",
            kind: "datetime(6)",
            text: false,
        },
    ],
    key: "writer_id",
    index: None,
};

/// The test reads' markers: one row per probe, deleted after ten minutes.
pub const PROBE: OwnTable = OwnTable {
    name: "probe",
    columns: &[
        Column {
            name: "token",
            kind: "varchar(128)",
            text: true,
        },
        Column {
            name: "created",
            kind: "datetime(6)",
            text: false,
        },
    ],
    key: "token",
    index: Some("created"),
};

/// Every table rwtop may create, in the order the docs list them.
pub const ALL: [&OwnTable; 2] = [&HEARTBEAT, &PROBE];

impl OwnTable {
    /// `rwtop.<name>`.
    #[must_use]
    pub fn qualified(&self) -> String {
        format!("{SCHEMA}.{}", self.name)
    }

    /// The whole definition: the same bytes on every server, whatever its defaults.
    #[must_use]
    pub fn create_sql(&self) -> String {
        let mut parts: Vec<String> = self.columns.iter().map(Column::definition).collect();
        parts.push(format!("PRIMARY KEY ({})", self.key));
        if let Some(index) = self.index {
            parts.push(format!("KEY {index} ({index})"));
        }
        format!(
            "CREATE TABLE IF NOT EXISTS {} ({}) ENGINE=InnoDB DEFAULT CHARSET={CHARSET} \
             COLLATE={COLLATION} ROW_FORMAT=DYNAMIC",
            self.qualified(),
            parts.join(", ")
        )
    }
}

/// Reads the server's copies of `tables`: one row per column (one row with no column for a
/// table without any), none for a table the server does not have. Each row carries its table's
/// name, type and engine.
#[must_use]
pub fn check_sql(tables: &[&OwnTable]) -> String {
    let names: Vec<String> = tables.iter().map(|t| format!("'{}'", t.name)).collect();
    format!(
        "SELECT t.TABLE_NAME AS table_name, t.TABLE_TYPE AS table_type, t.ENGINE AS engine, \
         c.COLUMN_NAME AS column_name, c.COLUMN_TYPE AS column_type, \
         c.CHARACTER_SET_NAME AS charset, c.COLLATION_NAME AS collation, \
         c.IS_NULLABLE AS nullable, c.COLUMN_KEY AS column_key \
         FROM information_schema.TABLES t LEFT JOIN information_schema.COLUMNS c \
         ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME \
         WHERE t.TABLE_SCHEMA = '{SCHEMA}' AND t.TABLE_NAME IN ({}) \
         ORDER BY t.TABLE_NAME, c.ORDINAL_POSITION",
        names.join(", ")
    )
}

/// Every copy of rwtop's tables in the rows of [`check_sql`] over [`ALL`] that is not rwtop's
/// (a missing table is none: rwtop creates it before its first write).
#[must_use]
pub fn mismatches(rows: &[RawRow]) -> Vec<Mismatch> {
    ALL.iter()
        .filter_map(|table| match judge(table, rows) {
            Found::Differs(mismatch) => Some(mismatch),
            Found::Missing | Found::Same => None,
        })
        .collect()
}

/// A copy of one of rwtop's tables that rwtop will not write to: what differs from rwtop's
/// definition, and the statement that makes it rwtop's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// `rwtop.heartbeat`, `rwtop.probe`.
    pub table: String,
    /// One line per difference, e.g. "column `writer_id` is `varchar(64) latin1
    /// latin1_swedish_ci`, rwtop's is `varchar(64) utf8mb4 utf8mb4_bin`".
    pub differences: Vec<String>,
    /// The statement to run on that server (it replicates to the replicas below it).
    pub fix: String,
}

impl Mismatch {
    /// One line: the table and every difference.
    #[must_use]
    pub fn summary(&self) -> String {
        format!(
            "{} differs from rwtop's definition: {}",
            self.table,
            self.differences.join("; ")
        )
    }
}

/// What the server's copy of a table is, against rwtop's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Missing,
    Same,
    Differs(Mismatch),
}

/// One column as the server describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Described {
    name: String,
    kind: String,
    charset: Option<String>,
    collation: Option<String>,
    nullable: bool,
    key: bool,
}

impl Described {
    fn from_row(row: &RawRow) -> Option<Self> {
        let text = |name: &str| row.optional_text(&[name]).map(str::to_owned);
        Some(Self {
            name: text("column_name")?,
            kind: normalise_type(&text("column_type").unwrap_or_default()),
            charset: text("charset").map(|s| s.to_ascii_lowercase()),
            collation: text("collation").map(|s| s.to_ascii_lowercase()),
            nullable: text("nullable").is_some_and(|n| n.eq_ignore_ascii_case("YES")),
            key: text("column_key").is_some_and(|k| k.eq_ignore_ascii_case("PRI")),
        })
    }

    /// `varchar(64) latin1 latin1_swedish_ci NULL`: the parts that make a row image.
    fn shown(&self) -> String {
        let mut out = self.kind.clone();
        for part in [&self.charset, &self.collation].into_iter().flatten() {
            out.push(' ');
            out.push_str(part);
        }
        if self.nullable {
            out.push_str(" NULL");
        }
        out
    }
}

fn wanted(column: &Column) -> Described {
    Described {
        name: column.name.to_owned(),
        kind: column.kind.to_owned(),
        charset: column.text.then(|| CHARSET.to_owned()),
        collation: column.text.then(|| COLLATION.to_owned()),
        nullable: false,
        key: false,
    }
}

/// Lower case, and an integer type's display width dropped: `BIGINT(20) UNSIGNED` and
/// `bigint unsigned` are one type.
fn normalise_type(raw: &str) -> String {
    const INTEGERS: [&str; 5] = ["tinyint", "smallint", "mediumint", "bigint", "int"];
    let lower = raw.trim().to_ascii_lowercase();
    for integer in INTEGERS {
        if let Some(rest) = lower.strip_prefix(integer)
            && let Some(inner) = rest.strip_prefix('(')
            && let Some((digits, tail)) = inner.split_once(')')
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
        {
            return format!("{integer}{tail}");
        }
    }
    lower
}

/// Judges `table` by its rows among those of [`check_sql`].
#[must_use]
pub fn judge(table: &OwnTable, rows: &[RawRow]) -> Found {
    let rows: Vec<&RawRow> = rows
        .iter()
        .filter(|r| {
            r.optional_text(&["table_name"])
                .is_none_or(|name| name.eq_ignore_ascii_case(table.name))
        })
        .collect();
    let Some(first) = rows.first() else {
        return Found::Missing;
    };
    let qualified = table.qualified();
    let kind = first.optional_text(&["table_type"]).unwrap_or_default();
    if !kind.eq_ignore_ascii_case("BASE TABLE") {
        let kind = if kind.is_empty() {
            "no base table"
        } else {
            kind
        };
        let drop = if kind.eq_ignore_ascii_case("VIEW") {
            format!("DROP VIEW {qualified}; ")
        } else {
            String::new()
        };
        return Found::Differs(Mismatch {
            table: qualified,
            differences: vec![format!(
                "it is a {}, where rwtop keeps a table",
                kind.to_ascii_lowercase()
            )],
            fix: format!("{drop}{}", table.create_sql()),
        });
    }
    let mut differences = Vec::new();
    let engine = first.optional_text(&["engine"]).unwrap_or("none");
    if !engine.eq_ignore_ascii_case("InnoDB") {
        differences.push(format!("its engine is {engine}, rwtop's is InnoDB"));
    }
    let found: Vec<Described> = rows.iter().filter_map(|r| Described::from_row(r)).collect();
    compare_columns(table, &found, &mut differences);
    let keys: Vec<&str> = found
        .iter()
        .filter(|c| c.key)
        .map(|c| c.name.as_str())
        .collect();
    if keys != [table.key] {
        differences.push(format!(
            "its primary key is ({}), rwtop's is ({})",
            keys.join(", "),
            table.key
        ));
    }
    if differences.is_empty() {
        return Found::Same;
    }
    Found::Differs(Mismatch {
        fix: alter_sql(table, &found, engine, &keys),
        table: qualified,
        differences,
    })
}

/// Column by column: what the server has against what rwtop's definition says, in place order.
fn compare_columns(table: &OwnTable, found: &[Described], differences: &mut Vec<String>) {
    for (place, column) in table.columns.iter().enumerate() {
        let want = wanted(column);
        match found
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(column.name))
        {
            None => differences.push(format!("column {} is missing", column.name)),
            Some(at) => {
                let have = &found[at];
                let have_shown = have.shown();
                if have_shown != want.shown() {
                    differences.push(format!(
                        "column {} is {have_shown}, rwtop's is {}",
                        column.name,
                        want.shown()
                    ));
                }
                if at != place {
                    differences.push(format!(
                        "column {} is column {} of {}, rwtop's is column {} of {}",
                        column.name,
                        at + 1,
                        found.len(),
                        place + 1,
                        table.columns.len()
                    ));
                }
            }
        }
    }
    for extra in found.iter().filter(|c| {
        !table
            .columns
            .iter()
            .any(|w| w.name.eq_ignore_ascii_case(&c.name))
    }) {
        differences.push(format!(
            "column {} is not rwtop's (its rows would carry it)",
            extra.name
        ));
    }
}

/// One `ALTER TABLE` that makes the server's copy rwtop's: one statement, so rows that arrive
/// meanwhile wait for it rather than meet a table half changed.
fn alter_sql(table: &OwnTable, found: &[Described], engine: &str, keys: &[&str]) -> String {
    let mut parts = Vec::new();
    if !engine.eq_ignore_ascii_case("InnoDB") {
        parts.push("ENGINE=InnoDB".to_owned());
    }
    parts.push(format!("DEFAULT CHARSET={CHARSET} COLLATE={COLLATION}"));
    for extra in found.iter().filter(|c| {
        !table
            .columns
            .iter()
            .any(|w| w.name.eq_ignore_ascii_case(&c.name))
    }) {
        parts.push(format!("DROP COLUMN {}", extra.name));
    }
    let mut after: Option<&str> = None;
    for column in table.columns {
        let present = found
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(column.name));
        let verb = if present { "MODIFY" } else { "ADD" };
        let place = after.map_or_else(|| "FIRST".to_owned(), |a| format!("AFTER {a}"));
        parts.push(format!("{verb} {} {place}", column.definition()));
        after = Some(column.name);
    }
    if keys != [table.key] {
        if !keys.is_empty() {
            parts.push("DROP PRIMARY KEY".to_owned());
        }
        parts.push(format!("ADD PRIMARY KEY ({})", table.key));
    }
    format!("ALTER TABLE {} {}", table.qualified(), parts.join(", "))
}

/// Makes sure `table` on the server behind `conn` is rwtop's before anything is written to it:
/// reads it, creates it (and the schema) when missing, and reads it again, since a server may
/// have created something else (an enforced engine, say). `Err` is a failed statement;
/// `Ok(Some)` a copy rwtop must not write to.
///
/// # Errors
/// A statement failed (no grant, the server went away).
pub async fn ensure(conn: &mut NodeConn, table: &OwnTable) -> Result<Option<Mismatch>, SqlError> {
    let check = check_sql(&[table]);
    if judge(table, &conn.query_rows(&check).await?) == Found::Missing {
        conn.query_rows(CREATE_SCHEMA).await?;
        conn.query_rows(&table.create_sql()).await?;
    }
    Ok(match judge(table, &conn.query_rows(&check).await?) {
        Found::Same => None,
        Found::Differs(mismatch) => Some(mismatch),
        Found::Missing => Some(Mismatch {
            table: table.qualified(),
            differences: vec!["the server did not keep the table rwtop created".to_owned()],
            fix: table.create_sql(),
        }),
    })
}

/// The name in an error text of a table in rwtop's schema (`'rwtop.heartbeat'`,
/// `` `rwtop`.`probe` ``), when it names one: a replication error rwtop's own rows caused.
#[must_use]
pub fn named_in(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    for prefix in ["rwtop.", "`rwtop`.`"] {
        let mut from = 0;
        while let Some(found) = lower[from..].find(prefix) {
            let start = from + found;
            from = start + prefix.len();
            // A schema named like `myrwtop` is not rwtop's.
            let before = lower[..start].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = lower[from..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                return Some(format!("{SCHEMA}.{name}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
