//! Semi-synchronous replication state and counters. `MySQL` 5.7 names them
//! `rpl_semi_sync_master_*`, 8.0.26+ `rpl_semi_sync_source_*` (new plugin), `MariaDB` has them
//! built in with the old names. Absent variables mean the plugin is not loaded, which is not the
//! same as "off"; an absent, NULL or unreadable counter is unknown, never 0 (docs/semisync.md
//! lists what each flavor reports, with its unit).

use serde::{Deserialize, Serialize};

use super::replica_status::StatusError;
use super::row::{RawRow, excerpt, parse_bool};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SemiSync {
    /// `None`: the source-side plugin is not loaded.
    pub source_enabled: Option<bool>,
    pub replica_enabled: Option<bool>,
    pub source_timeout_ms: Option<u64>,
    pub source_wait_point: Option<String>,
    /// Whether the primary is semi-sync *now*; it silently falls back to async after a timeout.
    pub source_active: Option<bool>,
    pub source_clients: Option<u64>,
    pub replica_active: Option<bool>,
    /// ACKs a commit waits for (`rpl_semi_sync_source_wait_for_replica_count`, `MySQL` 5.7+);
    /// `None` where the server has no such setting (`MariaDB`: always one ACK).
    #[serde(default)]
    pub source_wait_for_count: Option<u64>,
    /// The server's running totals (status counters), each `None` when not reported.
    #[serde(default)]
    pub counters: Counters,
}

/// The status counters a primary (and a replica) keeps, as totals since the server started (or
/// since the plugin was loaded); rates and averages come from differences between polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counters {
    /// `Rpl_semi_sync_*_tx_wait_time`: microseconds commits spent waiting for an ACK, summed
    /// over the commits that got one (a commit that timed out is not in it).
    pub tx_wait_time_us: Option<u64>,
    /// `Rpl_semi_sync_*_tx_waits`: commits that waited for an ACK.
    pub tx_waits: Option<u64>,
    /// `Rpl_semi_sync_*_no_tx`: commits that got no ACK (timed out, or sent while async).
    pub no_tx: Option<u64>,
    /// `Rpl_semi_sync_*_yes_tx`: commits acknowledged by a replica.
    pub yes_tx: Option<u64>,
    /// `Rpl_semi_sync_*_no_times`: times the primary turned semi-sync off (fell back).
    pub no_times: Option<u64>,
    /// `Rpl_semi_sync_*_wait_sessions`: sessions waiting for an ACK now (a gauge).
    pub wait_sessions: Option<u64>,
    /// `Rpl_semi_sync_slave_send_ack` (`MariaDB` replicas): ACKs this replica sent.
    pub acks_sent: Option<u64>,
}

/// Turns a name of either generation into the one spelling matched below.
fn normalize(name: &str) -> String {
    name.to_ascii_lowercase()
        .replace("_master_", "_source_")
        .replace("_slave_", "_replica_")
}

impl SemiSync {
    /// From the rows of `SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%'` (or one row whose
    /// columns are the variables, `MariaDB`'s read by name) and `SHOW GLOBAL STATUS LIKE
    /// 'Rpl_semi_sync%'`. A switch or setting that does not read as one is an error naming it;
    /// a counter that does not read as a number (NULL, empty) is unknown.
    pub fn from_rows(variables: &[RawRow], status: &[RawRow]) -> Result<Self, StatusError> {
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for row in variables.iter().chain(status) {
            if row.has(&["Variable_name"]) {
                let name = row.string(&["Variable_name"])?;
                pairs.push((name, row.text(&["Value"])?.map(str::to_owned)));
            } else {
                let cells = row
                    .cells()
                    .map(|(n, v)| (n.to_owned(), v.map(str::to_owned)));
                pairs.extend(cells);
            }
        }
        let mut out = Self::default();
        for (name, value) in pairs {
            let name = normalize(&name);
            let flag = || {
                value
                    .as_deref()
                    .and_then(parse_bool)
                    .map(Some)
                    .ok_or_else(|| StatusError::Value {
                        column: "Value",
                        value: format!("{name}={}", excerpt(value.as_deref().unwrap_or("NULL"))),
                        expected: "ON or OFF",
                    })
            };
            let number = || {
                value
                    .as_deref()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Some)
                    .ok_or_else(|| StatusError::Value {
                        column: "Value",
                        value: format!("{name}={}", excerpt(value.as_deref().unwrap_or("NULL"))),
                        expected: "a non-negative integer",
                    })
            };
            let counter = || value.as_deref().and_then(|v| v.trim().parse::<u64>().ok());
            let c = &mut out.counters;
            match name.as_str() {
                "rpl_semi_sync_source_enabled" => out.source_enabled = flag()?,
                "rpl_semi_sync_replica_enabled" => out.replica_enabled = flag()?,
                "rpl_semi_sync_source_timeout" => out.source_timeout_ms = number()?,
                "rpl_semi_sync_source_wait_point" => out.source_wait_point.clone_from(&value),
                "rpl_semi_sync_source_wait_for_replica_count" => {
                    out.source_wait_for_count = number()?;
                }
                "rpl_semi_sync_source_status" => out.source_active = flag()?,
                "rpl_semi_sync_source_clients" => out.source_clients = counter(),
                "rpl_semi_sync_replica_status" => out.replica_active = flag()?,
                "rpl_semi_sync_source_tx_wait_time" => c.tx_wait_time_us = counter(),
                "rpl_semi_sync_source_tx_waits" => c.tx_waits = counter(),
                "rpl_semi_sync_source_no_tx" => c.no_tx = counter(),
                "rpl_semi_sync_source_yes_tx" => c.yes_tx = counter(),
                "rpl_semi_sync_source_no_times" => c.no_times = counter(),
                "rpl_semi_sync_source_wait_sessions" => c.wait_sessions = counter(),
                "rpl_semi_sync_replica_send_ack" => c.acks_sent = counter(),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Whether either side is switched on or says it is semi-sync now: its state and counters
    /// can change from poll to poll.
    #[must_use]
    pub fn in_use(&self) -> bool {
        [
            self.source_enabled,
            self.replica_enabled,
            self.source_active,
            self.replica_active,
        ]
        .contains(&Some(true))
    }

    /// Takes the state and counters from `last`, for a reading of the settings alone: they stand
    /// still while semi-sync is off, and the poller reads them with the settings once it is on.
    pub fn keep_status_of(&mut self, last: &Self) {
        self.source_active = last.source_active;
        self.replica_active = last.replica_active;
        self.source_clients = last.source_clients;
        self.counters = last.counters;
    }

    /// ACKs a commit needs: the server's setting, or one where it has none (`MariaDB`, whose
    /// primary waits for the first replica to acknowledge). `None` while the source side is not
    /// loaded.
    #[must_use]
    pub fn required_acks(&self) -> Option<u64> {
        self.source_enabled?;
        Some(self.source_wait_for_count.unwrap_or(1))
    }

    /// Whether the source side is loaded and reports anything at all.
    #[must_use]
    pub fn has_source_side(&self) -> bool {
        self.source_enabled.is_some() || self.source_active.is_some()
    }

    /// Whether the replica side is loaded.
    #[must_use]
    pub fn has_replica_side(&self) -> bool {
        self.replica_enabled.is_some() || self.replica_active.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(pairs: &[(&str, Option<&str>)]) -> Vec<RawRow> {
        pairs
            .iter()
            .map(|(name, value)| RawRow::of(&[("Variable_name", Some(name)), ("Value", *value)]))
            .collect()
    }

    #[test]
    fn counters_missing_null_or_garbled_read_unknown_never_zero() {
        let variables = rows(&[("rpl_semi_sync_master_enabled", Some("ON"))]);
        let status = rows(&[
            ("Rpl_semi_sync_master_status", Some("ON")),
            ("Rpl_semi_sync_master_tx_wait_time", None),
            ("Rpl_semi_sync_master_tx_waits", Some("")),
            ("Rpl_semi_sync_master_no_tx", Some("12")),
            ("Rpl_semi_sync_master_clients", Some("x")),
        ]);
        let s = SemiSync::from_rows(&variables, &status).unwrap();
        assert_eq!(s.counters.tx_wait_time_us, None, "NULL");
        assert_eq!(s.counters.tx_waits, None, "empty");
        assert_eq!(s.counters.yes_tx, None, "missing");
        assert_eq!(s.source_clients, None, "garbled");
        assert_eq!(s.counters.no_tx, Some(12));
        assert_eq!(s.required_acks(), Some(1), "MariaDB waits for one ACK");
    }

    #[test]
    fn mariadbs_row_of_variables_reads_as_the_show_does() {
        let show = rows(&[
            ("rpl_semi_sync_master_enabled", Some("ON")),
            ("rpl_semi_sync_slave_enabled", Some("OFF")),
            ("rpl_semi_sync_master_timeout", Some("10000")),
            ("rpl_semi_sync_master_wait_point", Some("AFTER_SYNC")),
        ]);
        let by_name = [RawRow::of(&[
            ("rpl_semi_sync_master_enabled", Some("1")),
            ("rpl_semi_sync_slave_enabled", Some("0")),
            ("rpl_semi_sync_master_timeout", Some("10000")),
            ("rpl_semi_sync_master_wait_point", Some("AFTER_SYNC")),
        ])];
        let status = rows(&[("Rpl_semi_sync_master_status", Some("ON"))]);
        let a = SemiSync::from_rows(&show, &status).unwrap();
        assert_eq!(SemiSync::from_rows(&by_name, &status).unwrap(), a);
        assert_eq!(a.source_timeout_ms, Some(10_000));
        assert_eq!(a.source_enabled, Some(true));
    }

    #[test]
    fn in_use_where_either_side_is_on_or_active() {
        let off = rows(&[
            ("rpl_semi_sync_master_enabled", Some("OFF")),
            ("rpl_semi_sync_slave_enabled", Some("OFF")),
        ]);
        let quiet = rows(&[("Rpl_semi_sync_master_status", Some("OFF"))]);
        assert!(!SemiSync::from_rows(&off, &quiet).unwrap().in_use());
        assert!(!SemiSync::default().in_use(), "no plugin");
        let replica = rows(&[("rpl_semi_sync_slave_enabled", Some("ON"))]);
        assert!(SemiSync::from_rows(&replica, &[]).unwrap().in_use());
        let active = rows(&[("Rpl_semi_sync_master_status", Some("ON"))]);
        assert!(SemiSync::from_rows(&off, &active).unwrap().in_use());
    }

    #[test]
    fn a_switch_that_is_not_on_or_off_is_an_error_naming_it() {
        let status = rows(&[("Rpl_semi_sync_master_status", None)]);
        let err = SemiSync::from_rows(&[], &status).unwrap_err().to_string();
        assert!(err.contains("rpl_semi_sync_source_status=NULL"), "{err}");
    }

    #[test]
    fn mysql_8_names_and_the_replica_count_are_read() {
        let variables = rows(&[
            ("rpl_semi_sync_source_enabled", Some("ON")),
            ("rpl_semi_sync_source_wait_for_replica_count", Some("2")),
        ]);
        let status = rows(&[("Rpl_semi_sync_source_tx_wait_time", Some("86734412"))]);
        let s = SemiSync::from_rows(&variables, &status).unwrap();
        assert_eq!(s.required_acks(), Some(2));
        assert_eq!(s.counters.tx_wait_time_us, Some(86_734_412));
        assert_eq!(SemiSync::default().required_acks(), None);
    }
}
