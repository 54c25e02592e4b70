//! Free disk space as the server sees it: `MariaDB`'s `information_schema.DISKS` (the `disks`
//! plugin) and the directories it writes to (`@@datadir`, the binlog's and relay log's base
//! names, `@@tmpdir`), read only where the operator opted in (`[headroom] read_disks`).
//!
//! rwtop never installs the plugin nor grants anything: where the table is missing or answers
//! nothing (the plugin shows rows only to a user with `FILE`), the read says which, and the fix.
//! `MySQL` has no such table: there the read says that, never a guess.

use serde::{Deserialize, Serialize};

use super::conn::{NodeConn, SqlError};
use super::row::RawRow;
use super::{Family, Flavor, StatusError};

/// One mounted file system as `DISKS` lists it; sizes in bytes (the table counts KiB).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disk {
    /// The device (`/dev/vda1`).
    pub disk: String,
    /// Where it is mounted.
    pub path: String,
    pub total: u64,
    pub used: u64,
    pub available: u64,
}

/// The directories a node writes to, absolute as the server reports them; `None` where the
/// variable is NULL (no binlog, no relay log configured yet).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DataDirs {
    pub datadir: Option<String>,
    /// `@@log_bin_basename`: the binlog files' path without their number.
    pub binlog: Option<String>,
    /// `@@relay_log_basename`.
    pub relay_log: Option<String>,
    /// `@@tmpdir`: where an in-place `ALTER` sorts.
    pub tmpdir: Option<String>,
}

/// Why free space cannot be read on a node, each with its fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DisksUnavailable {
    /// `information_schema.DISKS` does not exist: the plugin is not loaded.
    NoPlugin,
    /// The table answers no row to rwtop's user: it lacks `FILE`.
    NoGrant { user: String },
    /// The server refused the read for another reason.
    Refused { message: String },
    /// The flavor has no such table (`MySQL`).
    Flavor,
}

impl DisksUnavailable {
    /// What is missing and the exact fix, in one line.
    #[must_use]
    pub fn text(&self) -> String {
        match self {
            Self::NoPlugin => "information_schema.DISKS is not there: the disks plugin is not \
                               installed; an administrator can run INSTALL SONAME 'disks' (rwtop \
                               never loads plugins)"
                .to_owned(),
            Self::NoGrant { user } => format!(
                "information_schema.DISKS shows no disk to {user}: the plugin lists disks only \
                 to a user with FILE; GRANT FILE ON *.* TO {user} (rwtop sees it within 10 s, on \
                 a new connection)"
            ),
            Self::Refused { message } => {
                format!("information_schema.DISKS could not be read: {message}")
            }
            Self::Flavor => "this server has no information_schema.DISKS (MariaDB's disks \
                             plugin): free space cannot be read over SQL"
                .to_owned(),
        }
    }
}

/// One read of a node's disks: the directories and the disks, or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisksRead {
    pub dirs: DataDirs,
    pub disks: Result<Vec<Disk>, DisksUnavailable>,
}

/// `MariaDB`'s error for an unknown table (`ER_UNKNOWN_TABLE`), which a missing plugin's
/// `information_schema` table gives.
const UNKNOWN_TABLE: u16 = 1109;

impl Flavor {
    /// The disks table's statement; `None` where the flavor has none.
    #[must_use]
    pub fn disks_sql(&self) -> Option<&'static str> {
        match self.family {
            Family::Mariadb => {
                Some("SELECT Disk, Path, Total, Used, Available FROM information_schema.DISKS")
            }
            Family::Mysql => None,
        }
    }

    /// The directories the node writes to.
    #[must_use]
    pub fn data_dirs_sql(&self) -> &'static str {
        "SELECT @@global.datadir AS datadir, @@global.log_bin_basename AS log_bin_basename, \
         @@global.relay_log_basename AS relay_log_basename, @@global.tmpdir AS tmpdir"
    }
}

impl Disk {
    /// One row of `DISKS`: KiB in the table, bytes here; a NULL or a missing column is an error
    /// that names it, never a 0.
    pub fn from_row(row: &RawRow) -> Result<Self, StatusError> {
        let kib = |name: &'static str| -> Result<u64, StatusError> {
            let value = row.u64(&[name])?;
            value.checked_mul(1024).ok_or(StatusError::Value {
                column: name,
                value: value.to_string(),
                expected: "a size in KiB below 2^54",
            })
        };
        Ok(Self {
            disk: row.string(&["Disk"])?,
            path: row.string(&["Path"])?,
            total: kib("Total")?,
            used: kib("Used")?,
            available: kib("Available")?,
        })
    }
}

impl DataDirs {
    #[must_use]
    pub fn from_row(row: &RawRow) -> Self {
        let text = |name: &str| {
            row.optional_text(&[name])
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        Self {
            datadir: text("datadir"),
            binlog: text("log_bin_basename"),
            relay_log: text("relay_log_basename"),
            tmpdir: text("tmpdir"),
        }
    }

    /// Each directory rwtop watches with its role: `datadir`, `binlog`, `relay log` (on a node
    /// that `replicates`; in the datadir where `relay_log` is not set, as the server keeps it),
    /// `tmpdir`. `tmpdir` may list several paths (`:`-separated): the first is taken.
    #[must_use]
    pub fn named(&self, replicates: bool) -> Vec<(&'static str, String)> {
        let dir_of = |base: &str| match base.rsplit_once('/') {
            Some(("", _)) => "/".to_owned(),
            Some((dir, _)) => dir.to_owned(),
            None => base.to_owned(),
        };
        let mut out = Vec::new();
        if let Some(d) = &self.datadir {
            out.push(("datadir", d.clone()));
        }
        if let Some(b) = &self.binlog {
            out.push(("binlog", dir_of(b)));
        }
        match (&self.relay_log, &self.datadir) {
            (Some(r), _) if replicates => out.push(("relay log", dir_of(r))),
            (None, Some(d)) if replicates => out.push(("relay log", d.clone())),
            _ => {}
        }
        if let Some(t) = self.tmpdir.as_deref().and_then(|t| t.split(':').next()) {
            out.push(("tmpdir", t.to_owned()));
        }
        out
    }
}

/// The disk a path lies on: the one mounted at the longest prefix of it (whole path components).
#[must_use]
pub fn disk_of<'a>(disks: &'a [Disk], path: &str) -> Option<&'a Disk> {
    disks
        .iter()
        .filter(|d| {
            let mount = d.path.trim_end_matches('/');
            mount.is_empty()
                || path == mount
                || path
                    .strip_prefix(mount)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
        .max_by_key(|d| d.path.trim_end_matches('/').len())
}

impl NodeConn {
    /// The node's directories and disks, for a node whose operator opted in. A missing table or
    /// grant is the answer's own (`DisksUnavailable`), never a failed poll.
    pub async fn disks(&mut self, user: &str) -> Result<DisksRead, SqlError> {
        let dirs_sql = self.flavor().data_dirs_sql();
        let row = self.one_row(dirs_sql).await?;
        let dirs = DataDirs::from_row(&row);
        let Some(sql) = self.flavor().disks_sql() else {
            return Ok(DisksRead {
                dirs,
                disks: Err(DisksUnavailable::Flavor),
            });
        };
        let disks = match self.query_rows(sql).await {
            Ok(rows) if rows.is_empty() => Err(DisksUnavailable::NoGrant {
                user: user.to_owned(),
            }),
            Ok(rows) => {
                let parsed: Result<Vec<Disk>, StatusError> =
                    rows.iter().map(Disk::from_row).collect();
                Ok(self.parse(sql, parsed)?)
            }
            Err(SqlError::Server { code, .. }) if code == UNKNOWN_TABLE => {
                Err(DisksUnavailable::NoPlugin)
            }
            Err(SqlError::Server { message, code, .. }) => Err(DisksUnavailable::Refused {
                message: format!("{message} (error {code})"),
            }),
            Err(other) => return Err(other),
        };
        Ok(DisksRead { dirs, disks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(path: &str) -> Disk {
        Disk {
            disk: format!("/dev/{}", path.len()),
            path: path.to_owned(),
            total: 100,
            used: 50,
            available: 50,
        }
    }

    #[test]
    fn a_path_lies_on_the_disk_of_its_longest_mount() {
        let disks = [disk("/"), disk("/var/lib"), disk("/var/lib/mysql-bin")];
        let on = |p: &str| disk_of(&disks, p).map(|d| d.path.clone());
        assert_eq!(on("/var/lib/mysql/").as_deref(), Some("/var/lib"));
        assert_eq!(
            on("/var/lib/mysql-bin").as_deref(),
            Some("/var/lib/mysql-bin")
        );
        // A prefix that is not a whole component is not the mount.
        assert_eq!(on("/var/lib/mysql-binlogs").as_deref(), Some("/var/lib"));
        assert_eq!(on("/tmp").as_deref(), Some("/"));
        assert_eq!(disk_of(&disks[1..], "/tmp"), None);
    }

    #[test]
    fn a_disks_row_counts_kib_and_a_null_is_an_error_not_zero() {
        let row = RawRow::of(&[
            ("Disk", Some("/dev/vda")),
            ("Path", Some("/")),
            ("Total", Some("1000")),
            ("Used", Some("400")),
            ("Available", Some("600")),
        ]);
        let d = Disk::from_row(&row).unwrap();
        assert_eq!(
            (d.total, d.used, d.available),
            (1_024_000, 409_600, 614_400)
        );
        let null = RawRow::of(&[
            ("Disk", Some("/dev/vda")),
            ("Path", Some("/")),
            ("Total", Some("1000")),
            ("Used", Some("400")),
            ("Available", None),
        ]);
        let err = Disk::from_row(&null).unwrap_err().to_string();
        assert!(err.contains("Available"), "{err}");
    }

    #[test]
    fn directories_are_named_by_role_from_their_base_names() {
        let row = RawRow::of(&[
            ("datadir", Some("/var/lib/mysql/")),
            ("log_bin_basename", Some("/var/log/mysql/bin")),
            ("relay_log_basename", None),
            ("tmpdir", Some("/tmp:/scratch")),
        ]);
        let dirs = DataDirs::from_row(&row);
        assert_eq!(
            dirs.named(false),
            vec![
                ("datadir", "/var/lib/mysql/".to_owned()),
                ("binlog", "/var/log/mysql".to_owned()),
                ("tmpdir", "/tmp".to_owned()),
            ]
        );
        // No relay_log set: a replica keeps its relay logs in the datadir.
        assert!(
            dirs.named(true)
                .contains(&("relay log", "/var/lib/mysql/".to_owned()))
        );
    }
}
