//! The primary's side of replication: its current binlog coordinate and its list of binlogs.

use serde::{Deserialize, Serialize};

use super::replica_status::{BinlogPos, StatusError};
use super::row::RawRow;
use crate::gtid::GtidSet;

/// SHOW MASTER STATUS / SHOW BINARY LOG STATUS / SHOW BINLOG STATUS. The statement returns no row
/// when binary logging is off, which the caller keeps as `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BinlogStatus {
    pub position: BinlogPos,
    /// `MySQL` only; `MariaDB` reports GTIDs through variables instead.
    pub executed_gtid_set: Option<GtidSet>,
}

impl BinlogStatus {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        let executed_gtid_set = match row.optional_text(&["Executed_Gtid_Set"]) {
            None => None,
            Some(text) => Some(GtidSet::parse(text).map_err(|source| StatusError::Gtid {
                column: "Executed_Gtid_Set",
                source,
            })?),
        };
        Ok(Self {
            position: BinlogPos {
                file: row.string(&["File"])?,
                pos: row.u64(&["Position"])?,
            },
            executed_gtid_set,
        })
    }
}

/// One row of SHOW BINARY LOGS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinlogFile {
    pub name: String,
    pub size: u64,
}

impl BinlogFile {
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        Ok(Self {
            name: row.string(&["Log_name"])?,
            size: row.u64(&["File_size"])?,
        })
    }
}

/// Bytes of binlog between two coordinates on the same primary, across file boundaries, using
/// the primary's binlog list. `None` when a file is not in the list (purged, or another server's)
/// or `to` is before `from`, or when sizes a server reported add up past `u64::MAX`: an unknown
/// distance is shown as unknown, not as 0 (nor as a panic, nor wrapped around).
#[must_use]
pub fn bytes_between(files: &[BinlogFile], from: &BinlogPos, to: &BinlogPos) -> Option<u64> {
    let start = files.iter().position(|f| f.name == from.file)?;
    let end = files.iter().position(|f| f.name == to.file)?;
    if start == end {
        return to.pos.checked_sub(from.pos);
    }
    if start > end {
        return None;
    }
    let rest_of_first = files[start].size.checked_sub(from.pos)?;
    // A binlog file starts with a 4-byte magic header; offsets count from the file's start.
    files[start + 1..end]
        .iter()
        .try_fold(rest_of_first, |total, f| total.checked_add(f.size))?
        .checked_add(to.pos)
}

/// Makes `files` reach `head`, a coordinate of the same server: its file grown to it when the
/// list was read before it got there, or added when the list predates the file (the newest file's
/// size in a list is only what it was when read).
pub fn reach(files: &mut Vec<BinlogFile>, head: &BinlogPos) {
    match files.iter_mut().find(|f| f.name == head.file) {
        Some(current) => current.size = current.size.max(head.pos),
        None => files.push(BinlogFile {
            name: head.file.clone(),
            size: head.pos,
        }),
    }
}

/// A copy of `files` made to [`reach`] `head`.
#[must_use]
pub fn reached(files: &[BinlogFile], head: &BinlogPos) -> Vec<BinlogFile> {
    let mut files = files.to_vec();
    reach(&mut files, head);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(file: &str, pos: u64) -> BinlogPos {
        BinlogPos {
            file: file.into(),
            pos,
        }
    }

    #[test]
    fn distance_crosses_file_boundaries() {
        let files = [
            BinlogFile {
                name: "b.000001".into(),
                size: 1000,
            },
            BinlogFile {
                name: "b.000002".into(),
                size: 500,
            },
            BinlogFile {
                name: "b.000003".into(),
                size: 300,
            },
        ];
        assert_eq!(
            bytes_between(&files, &pos("b.000003", 100), &pos("b.000003", 300)),
            Some(200)
        );
        assert_eq!(
            bytes_between(&files, &pos("b.000001", 900), &pos("b.000003", 50)),
            Some(100 + 500 + 50)
        );
        assert_eq!(
            bytes_between(&files, &pos("b.000003", 50), &pos("b.000001", 900)),
            None
        );
        assert_eq!(
            bytes_between(&files, &pos("gone.000001", 5), &pos("b.000003", 50)),
            None
        );
        assert_eq!(
            bytes_between(&files, &pos("b.000003", 301), &pos("b.000003", 300)),
            None
        );
    }
}
