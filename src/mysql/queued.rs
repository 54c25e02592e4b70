//! What a `MySQL` 8 replica last put in its relay log, per channel: the transaction and when it
//! was committed on its original source. The lag split (`store/lag_split.rs`) holds that commit
//! time against the heartbeats' acknowledgements to tell which heartbeat the replica has
//! received, as `MariaDB`'s `Gtid_IO_Pos` tells it by position (`docs/design.md`, "Transport and
//! apply").
//!
//! `performance_schema.replication_connection_status` keeps it from 8.0 on, one row per channel.
//! The commit time is read through `UNIX_TIMESTAMP`, which returns a `TIMESTAMP` column's own
//! value whatever the session's time zone. A channel that has queued nothing shows the zero
//! timestamp: known to be nothing, read as `None`. `MySQL` 5.7 and `MariaDB` have no such
//! column; the read is asked only where the flavor has it, and a refused read (a missing grant,
//! the performance schema off) leaves the split unknown, never the poll failed.

use super::flavor::{Family, Flavor};
use super::replica_status::{ReplicaStatus, StatusError};
use super::row::RawRow;

const COMMIT: &str = "LAST_QUEUED_ORIGINAL_COMMIT";

/// The read, where the flavor has the columns.
#[must_use]
pub fn queued_sql(flavor: &Flavor) -> Option<&'static str> {
    match flavor.family {
        Family::Mysql if flavor.version.at_least(8, 0, 1) => Some(
            "SELECT CHANNEL_NAME, LAST_QUEUED_TRANSACTION, \
             UNIX_TIMESTAMP(LAST_QUEUED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP) \
             AS LAST_QUEUED_ORIGINAL_COMMIT \
             FROM performance_schema.replication_connection_status",
        ),
        _ => None,
    }
}

/// One channel's newest queued transaction: its channel and its original commit, in
/// microseconds since the epoch on the original source's clock (`None`: nothing queued yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub channel: String,
    pub commit_us: Option<i64>,
}

/// The rows of [`queued_sql`].
pub fn from_table(rows: &[RawRow]) -> Result<Vec<Queued>, StatusError> {
    rows.iter()
        .map(|row| {
            let channel = row.string(&["CHANNEL_NAME"])?;
            let commit_us = match row.optional_text(&[COMMIT]).map(str::trim) {
                None | Some("" | "NULL") => None,
                Some(text) => Some(epoch_us(text).ok_or_else(|| StatusError::Value {
                    column: COMMIT,
                    value: text.chars().take(40).collect(),
                    expected: "seconds since the epoch with up to six decimals",
                })?)
                .filter(|us| *us > 0),
            };
            Ok(Queued { channel, commit_us })
        })
        .collect()
}

/// `1733510400.250125` in microseconds (`0.000000`, the zero timestamp, is 0).
fn epoch_us(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 6 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: i64 = whole.parse().ok().filter(|s| *s >= 0)?;
    let micros: i64 = format!("{fraction:0<6}").parse().ok()?;
    seconds.checked_mul(1_000_000)?.checked_add(micros)
}

/// Gives each channel of `replication` its newest queued commit, by channel name.
pub fn attach(replication: &mut [ReplicaStatus], queued: &[Queued]) {
    for status in replication {
        status.queued_commit_us = queued
            .iter()
            .find(|q| q.channel == status.channel)
            .and_then(|q| q.commit_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::row::fixture_rows;

    #[test]
    fn each_channel_gets_its_commit_and_nothing_queued_is_none() {
        for version in ["mysql-8.0", "mysql-8.4"] {
            let rows = fixture_rows(&format!("{version}/rwtop_queued__two_channels.txt"));
            let queued = from_table(&rows).unwrap();
            assert_eq!(
                queued,
                [
                    Queued {
                        channel: String::new(),
                        commit_us: Some(1_733_510_400_250_125),
                    },
                    Queued {
                        channel: "ch_east".to_owned(),
                        commit_us: None,
                    },
                ],
                "{version}"
            );
        }
    }

    #[test]
    fn odd_values_are_named_never_read_as_zero() {
        assert_eq!(epoch_us("1733510400"), Some(1_733_510_400_000_000));
        assert_eq!(epoch_us("1733510400.5"), Some(1_733_510_400_500_000));
        assert_eq!(epoch_us("0.000000"), Some(0));
        for bad in ["-1.0", "soon", "1.1234567", "1.x"] {
            assert_eq!(epoch_us(bad), None, "{bad}");
        }
        let row = RawRow::of(&[("CHANNEL_NAME", Some("")), (COMMIT, Some("soon"))]);
        let err = from_table(&[row]).unwrap_err().to_string();
        assert!(err.contains(COMMIT), "{err}");
        // NULL (a column the server left empty) is nothing known.
        let row = RawRow::of(&[("CHANNEL_NAME", Some("")), (COMMIT, None)]);
        assert_eq!(from_table(&[row]).unwrap()[0].commit_us, None);
    }

    /// Each channel gets the commit queued on it, by name; a channel the table has no row for
    /// gets nothing, whatever it held before.
    #[test]
    fn each_channel_of_the_status_gets_its_own_commit() {
        let mut statuses: Vec<ReplicaStatus> =
            fixture_rows("mysql-8.0/show_replica_status__multi_channel.txt")
                .iter()
                .map(|row| ReplicaStatus::from_row(row).unwrap())
                .collect();
        let names: Vec<&str> = statuses.iter().map(|s| s.channel.as_str()).collect();
        assert_eq!(names, ["ch_east", "ch_west"]);
        statuses[1].queued_commit_us = Some(1);
        let queued = [
            Queued {
                channel: String::new(),
                commit_us: Some(1_733_510_400_250_125),
            },
            Queued {
                channel: "ch_east".to_owned(),
                commit_us: Some(1_733_510_399_000_000),
            },
        ];
        attach(&mut statuses, &queued);
        let commits: Vec<Option<i64>> = statuses.iter().map(|s| s.queued_commit_us).collect();
        assert_eq!(commits, [Some(1_733_510_399_000_000), None]);
    }

    #[test]
    fn asked_only_where_the_columns_are() {
        let flavor = |v: &str, c: &str| Flavor::detect(v, c).unwrap();
        assert!(queued_sql(&flavor("8.0.36", "MySQL Community Server - GPL")).is_some());
        assert!(queued_sql(&flavor("8.4.3", "MySQL Community Server - GPL")).is_some());
        assert!(queued_sql(&flavor("5.7.44-log", "MySQL Community Server (GPL)")).is_none());
        assert!(queued_sql(&flavor("10.11.6-MariaDB-0+deb12u1", "Debian 12")).is_none());
    }
}
