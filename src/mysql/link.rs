//! A replication link's hygiene as its status row reports it (`docs/design.md`, "The health
//! lint"): the heartbeat period, the channel's TLS, its filters, an `UNTIL` condition and a
//! pending skip. Also the statements that change them, in each flavor's words, for the fixes the
//! lint prints (the lint never asks which flavor a node runs).
//!
//! These columns only inform the lint: one the server does not send (`MySQL`'s status row has no
//! heartbeat period), sends as NULL or in a form not known here reads as `None`, "cannot tell",
//! and never fails the status row it came with.

use serde::{Deserialize, Serialize};

use super::row::{RawRow, parse_bool};
use super::settings::{Dialect, SettingNames};

/// One channel's link settings and pending one-offs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkHygiene {
    /// `Slave_heartbeat_period` (`MariaDB`), in milliseconds: how often the source sends a
    /// heartbeat while it has nothing else to send; 0: never.
    pub heartbeat_period_ms: Option<u64>,
    /// `Master_SSL_Allowed` / `Source_SSL_Allowed`.
    pub tls: Option<ChannelTls>,
    /// `Master_SSL_Verify_Server_Cert` / `Source_SSL_Verify_Server_Cert`.
    pub verify_server_cert: Option<bool>,
    /// The `Replicate_*` filters that are set, by column; `None` when the row has none of
    /// those columns.
    pub filters: Option<Vec<Filter>>,
    /// `Until_Condition` when one is set (`Gtid`, `Master`, `Relay`, `SQL_AFTER_GTIDS`, ...);
    /// `None` both for the server's `None` and for a row without the column ([`Self::until_known`]
    /// tells them apart).
    pub until: Option<String>,
    /// Whether the row has `Until_Condition` at all.
    pub until_known: bool,
    /// `Skip_Counter`: events the applier will skip before applying again.
    pub skip_counter: Option<u64>,
    /// `Relay_Log_Space`, bytes: what the relay logs hold, against `relay_log_space_limit`.
    pub relay_log_space: Option<u64>,
}

/// Whether a channel connects over TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelTls {
    Yes,
    No,
    /// Asked for, but the replica's build has no TLS: the link runs in clear.
    Ignored,
}

/// One replication filter: the status column and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    pub column: String,
    pub value: String,
}

/// The filter columns: `MariaDB` and `MySQL` name them alike; the domain filters are `MariaDB`'s,
/// the rewrite `MySQL`'s and `MariaDB` 10.11's. `Replicate_Ignore_Server_Ids` is left out: it
/// keeps a ring's own events from coming back, and drops no other source's data.
const FILTER_COLUMNS: [&str; 9] = [
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Replicate_Rewrite_DB",
    "Replicate_Do_Domain_Ids",
    "Replicate_Ignore_Domain_Ids",
];

impl LinkHygiene {
    #[must_use]
    pub fn from_row(row: &RawRow) -> Self {
        let filters = FILTER_COLUMNS.iter().any(|c| row.has(&[c])).then(|| {
            FILTER_COLUMNS
                .iter()
                .filter_map(|c| {
                    let value = row.optional_text(&[c])?.trim();
                    (!value.is_empty()).then(|| Filter {
                        column: (*c).to_owned(),
                        value: value.to_owned(),
                    })
                })
                .collect()
        });
        let until = row.optional_text(&["Until_Condition"]).map(str::trim);
        Self {
            heartbeat_period_ms: row
                .optional_text(&["Replica_heartbeat_period", "Slave_heartbeat_period"])
                .and_then(seconds_to_ms),
            tls: match row.optional_text(&["Source_SSL_Allowed", "Master_SSL_Allowed"]) {
                Some("Yes") => Some(ChannelTls::Yes),
                Some("No") => Some(ChannelTls::No),
                Some("Ignored") => Some(ChannelTls::Ignored),
                _ => None,
            },
            verify_server_cert: row
                .optional_text(&[
                    "Source_SSL_Verify_Server_Cert",
                    "Master_SSL_Verify_Server_Cert",
                ])
                .and_then(parse_bool),
            filters,
            until: until
                .filter(|u| !u.is_empty() && !u.eq_ignore_ascii_case("None"))
                .map(str::to_owned),
            until_known: until.is_some(),
            skip_counter: number(row, "Skip_Counter"),
            relay_log_space: number(row, "Relay_Log_Space"),
        }
    }
}

fn number(row: &RawRow, column: &str) -> Option<u64> {
    row.optional_text(&[column])
        .and_then(|t| t.trim().parse().ok())
}

/// `30.000` → 30 000; anything else than a non-negative number → `None`.
fn seconds_to_ms(text: &str) -> Option<u64> {
    let seconds: f64 = text.trim().parse().ok()?;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked finite, non-negative and below a year first"
    )]
    (seconds.is_finite() && (0.0..31_536_000.0).contains(&seconds))
        .then(|| (seconds * 1000.0).round() as u64)
}

/// What an IO thread that waits for its applier to free relay log space says: `MariaDB` and
/// older `MySQL` "Waiting for the slave SQL thread to free enough relay log space", `MySQL` 8.0.26
/// and later "... replica SQL thread to free relay log space".
#[must_use]
pub fn waits_for_relay_space(io_state: &str) -> bool {
    io_state.starts_with("Waiting for the")
        && io_state.contains("to free")
        && io_state.ends_with("relay log space")
}

/// The statements that change one channel's link, in the node's own dialect.
impl SettingNames {
    /// `STOP SLAVE 'p2' SQL_THREAD`, `STOP REPLICA SQL_THREAD FOR CHANNEL 'p2'`; `thread`
    /// `None` stops both threads.
    #[must_use]
    pub fn stop_channel(&self, channel: &str, thread: Option<&str>) -> String {
        self.channel_verb("STOP", channel, thread)
    }

    #[must_use]
    pub fn start_channel(&self, channel: &str, thread: Option<&str>) -> String {
        self.channel_verb("START", channel, thread)
    }

    fn channel_verb(&self, verb: &str, channel: &str, thread: Option<&str>) -> String {
        let thread = thread.map(|t| format!(" {t}")).unwrap_or_default();
        match self.dialect {
            Dialect::Mariadb if channel.is_empty() => format!("{verb} SLAVE{thread}"),
            Dialect::Mariadb => format!("{verb} SLAVE {}{thread}", super::literal(channel)),
            Dialect::Mysql => format!("{verb} REPLICA{thread}{}", for_channel(channel)),
        }
    }

    /// A link option's name: `MASTER_HEARTBEAT_PERIOD`, `SOURCE_HEARTBEAT_PERIOD`.
    #[must_use]
    pub fn link_option(&self, name: &str) -> String {
        match self.dialect {
            Dialect::Mariadb => format!("MASTER_{name}"),
            Dialect::Mysql => format!("SOURCE_{name}"),
        }
    }

    /// `CHANGE MASTER 'p2' TO <options>`, `CHANGE REPLICATION SOURCE TO <options> FOR CHANNEL
    /// 'p2'`, with the channel stopped before and started after.
    #[must_use]
    pub fn change_channel(&self, channel: &str, options: &str) -> String {
        let change = match self.dialect {
            Dialect::Mariadb if channel.is_empty() => format!("CHANGE MASTER TO {options}"),
            Dialect::Mariadb => {
                format!("CHANGE MASTER {} TO {options}", super::literal(channel))
            }
            Dialect::Mysql => {
                format!(
                    "CHANGE REPLICATION SOURCE TO {options}{}",
                    for_channel(channel)
                )
            }
        };
        format!(
            "{}; {change}; {}",
            self.stop_channel(channel, None),
            self.start_channel(channel, None)
        )
    }

    /// Removes the filter in `column` from the channel, applier stopped around it.
    #[must_use]
    pub fn clear_filter(&self, channel: &str, column: &str) -> String {
        let stop = self.stop_channel(channel, Some("SQL_THREAD"));
        let start = self.start_channel(channel, Some("SQL_THREAD"));
        let upper = column.to_ascii_uppercase();
        let clear = match (self.dialect, column) {
            (Dialect::Mariadb, "Replicate_Do_Domain_Ids" | "Replicate_Ignore_Domain_Ids") => {
                let option = upper.trim_start_matches("REPLICATE_");
                return self.change_channel(channel, &format!("{option} = ()"));
            }
            (Dialect::Mariadb, _) => format!(
                "{}SET GLOBAL {} = ''",
                self.for_connection(channel),
                column.to_ascii_lowercase()
            ),
            (Dialect::Mysql, _) => {
                format!(
                    "CHANGE REPLICATION FILTER {upper} = (){}",
                    for_channel(channel)
                )
            }
        };
        format!("{stop}; {clear}; {start}")
    }

    /// Clears a pending `sql_slave_skip_counter` (`MySQL`: `sql_replica_skip_counter`, one for
    /// all channels).
    #[must_use]
    pub fn clear_skip_counter(&self, channel: &str) -> String {
        match self.dialect {
            Dialect::Mariadb => format!(
                "{}SET GLOBAL sql_slave_skip_counter = 0",
                self.for_connection(channel)
            ),
            Dialect::Mysql => "SET GLOBAL sql_replica_skip_counter = 0".to_owned(),
        }
    }

    /// `MariaDB`'s parallel mode of one connection (checked on 10.11: through the default
    /// connection, as its filters); `None` on `MySQL`, which has no such modes.
    #[must_use]
    pub fn set_parallel_mode(&self, channel: &str, mode: &str) -> Option<String> {
        (self.dialect == Dialect::Mariadb).then(|| {
            format!(
                "{}; {}SET GLOBAL slave_parallel_mode = '{mode}'; {}",
                self.stop_channel(channel, None),
                self.for_connection(channel),
                self.start_channel(channel, None)
            )
        })
    }

    /// `MariaDB` sets a named connection's filters and skip counter through the session's
    /// default connection.
    fn for_connection(&self, channel: &str) -> String {
        if channel.is_empty() || self.dialect == Dialect::Mysql {
            String::new()
        } else {
            format!(
                "SET @@default_master_connection = {}; ",
                super::literal(channel)
            )
        }
    }
}

fn for_channel(channel: &str) -> String {
    if channel.is_empty() {
        String::new()
    } else {
        format!(" FOR CHANNEL {}", super::literal(channel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::Family;
    use crate::mysql::row::fixture_row;

    #[test]
    fn mariadb_running_row_reads_its_link() {
        let link = LinkHygiene::from_row(&fixture_row(
            "mariadb-10.11/show_all_slaves_status__running.txt",
        ));
        assert_eq!(link.heartbeat_period_ms, Some(30_000));
        assert_eq!(link.tls, Some(ChannelTls::No));
        assert_eq!(link.verify_server_cert, Some(false));
        assert_eq!(link.filters, Some(Vec::new()));
        assert_eq!((link.until.as_deref(), link.until_known), (None, true));
        assert_eq!(link.skip_counter, Some(0));
    }

    #[test]
    fn mysql_row_has_no_heartbeat_period_and_reads_source_columns() {
        let link =
            LinkHygiene::from_row(&fixture_row("mysql-8.4/show_replica_status__hygiene.txt"));
        assert_eq!(link.heartbeat_period_ms, None, "MySQL: cannot tell");
        assert_eq!(link.tls, Some(ChannelTls::Yes));
        assert_eq!(link.verify_server_cert, Some(false));
        let filters: Vec<(&str, &str)> = link
            .filters
            .iter()
            .flatten()
            .map(|f| (f.column.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            filters,
            [
                ("Replicate_Do_DB", "app"),
                ("Replicate_Wild_Ignore_Table", "app.tmp\\_%")
            ]
        );
        assert_eq!(link.until.as_deref(), Some("SQL_AFTER_GTIDS"));
        assert_eq!(link.skip_counter, Some(2));
    }

    #[test]
    fn missing_null_or_unknown_columns_cannot_tell() {
        let link = LinkHygiene::from_row(&RawRow::of(&[
            ("Slave_heartbeat_period", None),
            ("Master_SSL_Allowed", Some("Maybe")),
            ("Master_SSL_Verify_Server_Cert", None),
            ("Skip_Counter", Some("lots")),
        ]));
        assert_eq!(link, LinkHygiene::default());
        assert_eq!(seconds_to_ms("-1"), None);
        assert_eq!(seconds_to_ms("NaN"), None);
        assert_eq!(seconds_to_ms("0.500"), Some(500));
    }

    #[test]
    fn relay_space_waits_in_both_spellings() {
        assert!(waits_for_relay_space(
            "Waiting for the slave SQL thread to free enough relay log space"
        ));
        assert!(waits_for_relay_space(
            "Waiting for the replica SQL thread to free relay log space"
        ));
        assert!(!waits_for_relay_space("Waiting for master to send event"));
    }

    #[test]
    fn statements_follow_the_dialect_and_the_channel() {
        let maria = SettingNames::of(Family::Mariadb);
        let mysql = SettingNames::of(Family::Mysql);
        assert_eq!(
            maria.change_channel("", "MASTER_HEARTBEAT_PERIOD = 10"),
            "STOP SLAVE; CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 10; START SLAVE"
        );
        assert_eq!(
            maria.change_channel("p2", "MASTER_SSL = 1"),
            "STOP SLAVE 'p2'; CHANGE MASTER 'p2' TO MASTER_SSL = 1; START SLAVE 'p2'"
        );
        assert_eq!(
            mysql.change_channel("ch", "SOURCE_SSL = 1"),
            "STOP REPLICA FOR CHANNEL 'ch'; CHANGE REPLICATION SOURCE TO SOURCE_SSL = 1 \
             FOR CHANNEL 'ch'; START REPLICA FOR CHANNEL 'ch'"
        );
        assert_eq!(
            maria.clear_filter("", "Replicate_Do_DB"),
            "STOP SLAVE SQL_THREAD; SET GLOBAL replicate_do_db = ''; START SLAVE SQL_THREAD"
        );
        assert_eq!(
            maria.clear_filter("p2", "Replicate_Wild_Ignore_Table"),
            "STOP SLAVE 'p2' SQL_THREAD; SET @@default_master_connection = 'p2'; \
             SET GLOBAL replicate_wild_ignore_table = ''; START SLAVE 'p2' SQL_THREAD"
        );
        assert_eq!(
            maria.clear_filter("", "Replicate_Do_Domain_Ids"),
            "STOP SLAVE; CHANGE MASTER TO DO_DOMAIN_IDS = (); START SLAVE"
        );
        assert_eq!(
            mysql.clear_filter("", "Replicate_Do_DB"),
            "STOP REPLICA SQL_THREAD; CHANGE REPLICATION FILTER REPLICATE_DO_DB = (); \
             START REPLICA SQL_THREAD"
        );
        assert_eq!(
            maria.clear_skip_counter("p2"),
            "SET @@default_master_connection = 'p2'; SET GLOBAL sql_slave_skip_counter = 0"
        );
        assert_eq!(
            mysql.link_option("HEARTBEAT_PERIOD"),
            "SOURCE_HEARTBEAT_PERIOD"
        );
    }
}
