//! The GTIDs a read after a write must see, in the root's flavor's own terms (`MariaDB`'s
//! per-domain positions, `MySQL`'s GTID sets): read from what the write's connection answered,
//! merged with what a primary had written, and judged against a replica's state as each
//! flavor's wait function judges it. The read-after-write strategies (`probe/modes.rs`) hold one
//! and never look inside.

use std::fmt;

use super::{Family, Flavor};
use crate::gtid::{GtidList, GtidParseError, GtidSet};
use crate::mysql::GtidState;

/// The GTIDs a read must see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WantedGtids {
    Mariadb(GtidList),
    Mysql(GtidSet),
}

impl Flavor {
    /// The GTIDs `text` names, as [`Self::written_gtids_sql`] answered them on this flavor.
    pub fn wanted_gtids(&self, text: &str) -> Result<WantedGtids, GtidParseError> {
        Ok(match self.family {
            Family::Mariadb => WantedGtids::Mariadb(GtidList::parse(text)?),
            Family::Mysql => WantedGtids::Mysql(GtidSet::parse(text)?),
        })
    }
}

impl WantedGtids {
    /// What a primary's state says it has written.
    #[must_use]
    pub fn written_by(state: &GtidState) -> Self {
        match state {
            GtidState::Mariadb { binlog_pos, .. } => Self::Mariadb(binlog_pos.clone()),
            GtidState::Mysql { executed } => Self::Mysql(executed.clone()),
        }
    }

    /// `self` and everything `primary` had written (per domain the higher position).
    #[must_use]
    pub fn merged(self, primary: &GtidState) -> Self {
        match (self, Self::written_by(primary)) {
            (Self::Mariadb(mut mine), Self::Mariadb(theirs)) => {
                for gtid in theirs.iter() {
                    if !mine.contains(gtid) {
                        mine.insert(*gtid);
                    }
                }
                Self::Mariadb(mine)
            }
            (Self::Mysql(mine), Self::Mysql(theirs)) => Self::Mysql(mine.union(&theirs)),
            (mine, _) => mine,
        }
    }

    /// Whether a replica in `state` has applied all of it (`MariaDB`: as `MASTER_GTID_WAIT`
    /// judges, against `gtid_slave_pos`).
    #[must_use]
    pub fn covered_by(&self, state: &GtidState) -> bool {
        match (self, state) {
            (Self::Mariadb(wanted), GtidState::Mariadb { slave_pos, .. }) => {
                wanted.iter().all(|g| slave_pos.contains(g))
            }
            (Self::Mysql(wanted), GtidState::Mysql { executed }) => executed.is_superset_of(wanted),
            _ => false,
        }
    }
}

/// As the wait functions take them.
impl fmt::Display for WantedGtids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Mariadb(list) => fmt::Display::fmt(list, f),
            Self::Mysql(set) => fmt::Display::fmt(set, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mariadb(slave_pos: &str) -> GtidState {
        GtidState::Mariadb {
            binlog_pos: GtidList::parse("0-1-9,1-4-2").unwrap(),
            slave_pos: GtidList::parse(slave_pos).unwrap(),
            current_pos: GtidList::empty(),
        }
    }

    #[test]
    fn wanted_gtids_merge_per_domain_and_are_judged_as_master_gtid_wait_does() {
        let own = WantedGtids::Mariadb(GtidList::parse("0-1-10").unwrap());
        assert!(own.covered_by(&mariadb("0-1-10")));
        assert!(own.covered_by(&mariadb("0-2-11")), "server ids are ignored");
        assert!(!own.covered_by(&mariadb("0-1-9")));
        let global = own.merged(&mariadb(""));
        assert_eq!(global.to_string(), "0-1-10,1-4-2");
        assert!(
            !global.covered_by(&mariadb("0-1-10")),
            "domain 1 is missing"
        );
        assert!(global.covered_by(&mariadb("0-1-10,1-4-2")));
        let set = |t: &str| GtidSet::parse(t).unwrap();
        let mysql = WantedGtids::Mysql(set("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"));
        let executed = |t: &str| GtidState::Mysql { executed: set(t) };
        assert!(mysql.covered_by(&executed("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7")));
        assert!(!mysql.covered_by(&executed("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-4")));
        assert!(!mysql.covered_by(&mariadb("0-1-10")), "families never mix");
    }

    /// The write's GTIDs are read in the root's own terms: a `MariaDB` list, a `MySQL` set; one
    /// flavor's text is no GTID of the other's.
    #[test]
    fn written_gtids_are_read_in_the_flavors_terms() {
        let mariadb = Flavor::detect("10.11.6-MariaDB", "").unwrap();
        let mysql = Flavor::detect("8.0.36", "MySQL Community Server - GPL").unwrap();
        let uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5";
        assert_eq!(
            mariadb.wanted_gtids("0-1-10").unwrap(),
            WantedGtids::Mariadb(GtidList::parse("0-1-10").unwrap())
        );
        assert_eq!(
            mysql.wanted_gtids(uuid).unwrap(),
            WantedGtids::Mysql(GtidSet::parse(uuid).unwrap())
        );
        assert!(mariadb.wanted_gtids(uuid).is_err());
        assert!(mysql.wanted_gtids("0-1-10").is_err());
    }
}
