//! Rows as the server sent them, and typed access to their columns.
//!
//! Every SHOW statement answers over the text protocol, so a row is a list of column names and
//! raw values. SQL NULL stays `None` from here on: the NULL-as-zero bug (a stopped replica that
//! looks caught up) starts where a row is flattened into strings, so it never is.

use std::fmt;
use std::sync::Arc;

/// One result row: column names as the server spelled them, and raw text values. The rows of
/// one result set share one list of names: a status row has some 70 columns, and building their
/// names again for every row of every poll was a visible share of rwtop's CPU at 1,000 nodes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawRow {
    names: Arc<Vec<String>>,
    values: Vec<Option<String>>,
}

/// Why a column could not be read into the type the model needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    #[error("column {column} is missing from the server's answer")]
    Missing { column: String },
    #[error("column {column} holds {value:?}, expected {expected}")]
    BadValue {
        column: String,
        value: String,
        expected: &'static str,
    },
    #[error("column {column} is NULL, expected {expected}")]
    UnexpectedNull {
        column: String,
        expected: &'static str,
    },
}

impl RawRow {
    #[must_use]
    pub fn new(cells: Vec<(String, Option<String>)>) -> Self {
        let (names, values) = cells.into_iter().unzip();
        Self {
            names: Arc::new(names),
            values,
        }
    }

    /// A row from borrowed cells, as tests and recorded outputs write them.
    #[must_use]
    pub fn of(cells: &[(&str, Option<&str>)]) -> Self {
        Self::new(
            cells
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.map(str::to_owned)))
                .collect(),
        )
    }

    /// A row of a result set whose column names (`names`, one per value) its rows share.
    #[must_use]
    pub fn with_names(names: Arc<Vec<String>>, values: Vec<Option<String>>) -> Self {
        debug_assert_eq!(names.len(), values.len());
        Self { names, values }
    }

    pub fn push(&mut self, column: impl Into<String>, value: Option<String>) {
        Arc::make_mut(&mut self.names).push(column.into());
        self.values.push(value);
    }

    pub fn columns(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Each column's name and value, in order.
    pub fn cells(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.values.iter().map(Option::as_deref))
    }

    /// The first of `names` that the row has: servers rename columns across versions
    /// (`Master_Host` → `Source_Host`), so callers list every spelling, newest first. Case is
    /// ignored: servers and their manuals disagree on it (`Server_Id` vs `Server_id`).
    fn find(&self, names: &[&str]) -> Option<(&str, Option<&str>)> {
        names.iter().find_map(|wanted| {
            self.cells()
                .find(|(name, _)| name.eq_ignore_ascii_case(wanted))
        })
    }

    #[must_use]
    pub fn has(&self, names: &[&str]) -> bool {
        self.find(names).is_some()
    }

    fn cell(&self, names: &[&str]) -> Result<(&str, Option<&str>), RowError> {
        self.find(names).ok_or_else(|| RowError::Missing {
            column: names.join("/"),
        })
    }

    /// Text of a column that must exist; NULL is `None`.
    pub fn text(&self, names: &[&str]) -> Result<Option<&str>, RowError> {
        Ok(self.cell(names)?.1)
    }

    /// Text of a column that must exist, NULL read as the empty string. Only for columns whose
    /// NULL carries no meaning (names, messages), never for numbers.
    pub fn string(&self, names: &[&str]) -> Result<String, RowError> {
        Ok(self.text(names)?.unwrap_or_default().to_owned())
    }

    /// Text of a column that only some flavors or versions have.
    #[must_use]
    pub fn optional_text(&self, names: &[&str]) -> Option<&str> {
        self.find(names).and_then(|(_, value)| value)
    }

    /// A number that may be NULL (`Seconds_Behind_Master`): NULL and the empty string are `None`.
    pub fn opt_u64(&self, names: &[&str]) -> Result<Option<u64>, RowError> {
        let (column, value) = self.cell(names)?;
        parse_opt(column, value, "a non-negative integer or NULL")
    }

    /// A number that must be there.
    pub fn u64(&self, names: &[&str]) -> Result<u64, RowError> {
        let (column, value) = self.cell(names)?;
        parse_opt(column, value, "a non-negative integer")?.ok_or_else(|| {
            RowError::UnexpectedNull {
                column: column.to_owned(),
                expected: "a non-negative integer",
            }
        })
    }

    /// A number only some flavors have; missing column and NULL are both `None`.
    pub fn optional_u64(&self, names: &[&str]) -> Result<Option<u64>, RowError> {
        match self.find(names) {
            None => Ok(None),
            Some((column, value)) => parse_opt(column, value, "a non-negative integer or NULL"),
        }
    }

    /// A 32-bit number only some flavors have; missing column and NULL are both `None`, a value
    /// past `u32::MAX` an error rather than another `None`.
    pub fn optional_u32(&self, names: &[&str]) -> Result<Option<u32>, RowError> {
        match self.find(names) {
            None => Ok(None),
            Some((column, value)) => parse_opt(column, value, "an integer below 2^32 or NULL")?
                .map(|wide| {
                    u32::try_from(wide)
                        .map_err(|_| bad(column, value, "an integer below 2^32 or NULL"))
                })
                .transpose(),
        }
    }

    pub fn u32(&self, names: &[&str]) -> Result<u32, RowError> {
        let (column, value) = self.cell(names)?;
        let wide = self.u64(names)?;
        u32::try_from(wide).map_err(|_| bad(column, value, "an integer below 2^32"))
    }

    pub fn u16(&self, names: &[&str]) -> Result<u16, RowError> {
        let (column, value) = self.cell(names)?;
        let wide = self.u64(names)?;
        u16::try_from(wide).map_err(|_| bad(column, value, "a port number (0-65535)"))
    }

    /// A server boolean (`ON`/`OFF`, `1`/`0`, `Yes`/`No`); NULL or a missing column is `None`.
    pub fn optional_bool(&self, names: &[&str]) -> Result<Option<bool>, RowError> {
        match self.find(names) {
            None | Some((_, None)) => Ok(None),
            Some((column, Some(text))) => parse_bool(text)
                .map(Some)
                .ok_or_else(|| bad(column, Some(text), "ON/OFF, 1/0 or Yes/No")),
        }
    }

    pub fn bool(&self, names: &[&str]) -> Result<bool, RowError> {
        let (column, _) = self.cell(names)?;
        self.optional_bool(names)?
            .ok_or_else(|| RowError::UnexpectedNull {
                column: column.to_owned(),
                expected: "ON/OFF, 1/0 or Yes/No",
            })
    }
}

fn bad(column: &str, value: Option<&str>, expected: &'static str) -> RowError {
    RowError::BadValue {
        column: column.to_owned(),
        value: excerpt(value.unwrap_or("NULL")),
        expected,
    }
}

/// At most the first 80 characters of a value, for quoting in an error: a server can send a
/// megabyte where a number belongs, and the message must stay readable.
#[must_use]
pub fn excerpt(text: &str) -> String {
    text.chars().take(80).collect()
}

fn parse_opt(
    column: &str,
    value: Option<&str>,
    expected: &'static str,
) -> Result<Option<u64>, RowError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse::<u64>()
            .map(Some)
            .map_err(|_| bad(column, value, expected)),
    }
}

/// Servers spell booleans several ways, and `@@x` and `CONCAT(@@x)` disagree on the same server.
#[must_use]
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_uppercase().as_str() {
        "ON" | "1" | "YES" | "TRUE" => Some(true),
        "OFF" | "0" | "NO" | "FALSE" => Some(false),
        _ => None,
    }
}

impl fmt::Display for RawRow {
    /// Prints the row as the `mysql --vertical` client does, so a captured row reads back with
    /// [`parse_vertical`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The client pads in bytes (`printf("%*s")`), and the parser finds the colon by byte
        // offset; `{:>width$}` would pad in characters and misalign non-ASCII names.
        let width = self.names.iter().map(String::len).max().unwrap_or(0);
        for (name, value) in self.cells() {
            let pad = " ".repeat(width - name.len());
            writeln!(f, "{pad}{name}: {}", value.unwrap_or("NULL"))?;
        }
        Ok(())
    }
}

/// A result in the `mysql --vertical --raw` client format, as recorded in fixtures and as the
/// sandbox reads the admin client's output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vertical {
    /// `-- key: value` lines before the first row (fixture provenance).
    pub meta: Vec<(String, String)>,
    pub rows: Vec<RawRow>,
}

impl Vertical {
    #[must_use]
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct VerticalError {
    pub line: usize,
    pub problem: String,
}

const SEPARATOR_STARS: &str = "***************************";

/// Reads `mysql --vertical --raw` output. The client prints the text `NULL` for SQL NULL (a
/// string value `NULL` is indistinguishable there; no replication column holds one) and prints
/// newlines inside values raw, so a line without the row's `name: ` alignment continues the
/// previous value.
pub fn parse_vertical(text: &str) -> Result<Vertical, VerticalError> {
    let mut out = Vertical::default();
    let mut current: Option<(RawRow, usize)> = None;
    let mut pending: Option<(String, String)> = None;

    let finish_cell = |row: &mut RawRow, pending: &mut Option<(String, String)>| {
        if let Some((name, value)) = pending.take() {
            let value = (value != "NULL").then_some(value);
            row.push(name, value);
        }
    };

    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if is_row_separator(line) {
            if let Some((mut row, _)) = current.take() {
                finish_cell(&mut row, &mut pending);
                out.rows.push(row);
            }
            current = Some((RawRow::default(), 0));
            continue;
        }
        let Some((row, align)) = current.as_mut() else {
            if let Some(rest) = line.strip_prefix("-- ") {
                if let Some((k, v)) = rest.split_once(':') {
                    out.meta.push((k.trim().to_owned(), v.trim().to_owned()));
                }
            } else if !(line.trim().is_empty() || line.trim() == "Empty set") {
                return Err(VerticalError {
                    line: number,
                    problem: format!("expected a row separator, found {:?}", excerpt(line)),
                });
            }
            continue;
        };
        match name_line(line, *align) {
            Some((name, value, colon)) => {
                finish_cell(row, &mut pending);
                *align = colon;
                pending = Some((name.to_owned(), value.to_owned()));
            }
            None => match pending.as_mut() {
                Some((_, value)) => {
                    value.push('\n');
                    value.push_str(line);
                }
                None => {
                    return Err(VerticalError {
                        line: number,
                        problem: format!("expected `Column: value`, found {:?}", excerpt(line)),
                    });
                }
            },
        }
    }
    if let Some((mut row, _)) = current.take() {
        finish_cell(&mut row, &mut pending);
        out.rows.push(row);
    }
    Ok(out)
}

fn is_row_separator(line: &str) -> bool {
    let line = line.trim();
    line.starts_with(SEPARATOR_STARS) && line.ends_with(SEPARATOR_STARS) && line.contains(". row")
}

/// `   Name: value` with the colon in the row's alignment column (names are right-aligned); the
/// first line of a row sets the alignment.
fn name_line(line: &str, align: usize) -> Option<(&str, &str, usize)> {
    let colon = line
        .find(": ")
        .or_else(|| line.strip_suffix(':').map(str::len))?;
    if align != 0 && colon != align {
        return None;
    }
    let name = line[..colon].trim_start();
    // Aliases may hold spaces and punctuation (`Grants for rwtop@127.0.0.1`); the alignment
    // column is what tells a name from a continued value.
    let is_name = !name.is_empty() && !name.contains(':') && !name.chars().any(char::is_control);
    if !is_name {
        return None;
    }
    let value = line.get(colon + 2..).unwrap_or("");
    Some((name, value, colon))
}

/// The rows of a recorded `--vertical` fixture under `tests/fixtures/`: for the unit tests, and
/// with the `testkit` feature for the benches; never in the shipped binary.
///
/// # Panics
/// When the fixture is missing or does not parse: a test's own data is wrong.
#[cfg(any(test, feature = "testkit"))]
#[must_use]
pub fn fixture_rows(path: &str) -> Vec<RawRow> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    parse_vertical(&text)
        .unwrap_or_else(|e| panic!("{full}: {e}"))
        .rows
}

/// The first row of a recorded fixture (a status, a state): what most tests read.
///
/// # Panics
/// As [`fixture_rows`], and when the fixture has no row.
#[cfg(any(test, feature = "testkit"))]
#[must_use]
pub fn fixture_row(path: &str) -> RawRow {
    fixture_rows(path)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{path}: no row"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertical_keeps_null_empty_and_multiline_values() {
        let text = "-- statement: SHOW X\n\
            *************************** 1. row ***************************\n\
            \x20   n: NULL\n\
            \x20  nl: a:1-5,\n\
            b:1-3\n\
            empty: \n\
            \x20Port: 3306\n";
        let parsed = parse_vertical(text).unwrap();
        assert_eq!(parsed.meta("statement"), Some("SHOW X"));
        let row = &parsed.rows[0];
        assert_eq!(row.text(&["n"]).unwrap(), None);
        assert_eq!(row.text(&["nl"]).unwrap(), Some("a:1-5,\nb:1-3"));
        assert_eq!(row.text(&["empty"]).unwrap(), Some(""));
        assert_eq!(row.u16(&["Port"]).unwrap(), 3306);
    }

    #[test]
    fn display_round_trips_through_the_parser() {
        let row = RawRow::new(vec![
            ("Seconds_Behind_Master".into(), None),
            ("Gtid_IO_Pos".into(), Some("0-1-5,\n1-2-7".into())),
            ("Host".into(), Some(String::new())),
        ]);
        let text = format!("{SEPARATOR_STARS} 1. row {SEPARATOR_STARS}\n{row}");
        assert_eq!(parse_vertical(&text).unwrap().rows, vec![row]);
    }

    #[test]
    fn numbers_report_the_column_and_value() {
        let row = RawRow::new(vec![("Port".into(), Some("99999".into()))]);
        let err = row.u16(&["Port"]).unwrap_err().to_string();
        assert!(err.contains("Port") && err.contains("99999"), "{err}");
        let null = RawRow::new(vec![("Pos".into(), None)]);
        assert!(matches!(
            null.u64(&["Pos"]),
            Err(RowError::UnexpectedNull { .. })
        ));
        assert_eq!(null.opt_u64(&["Pos"]).unwrap(), None);
        assert!(matches!(null.u64(&["Nope"]), Err(RowError::Missing { .. })));
    }
}
