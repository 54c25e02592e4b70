//! Statements that change replication, for the sandbox that wires topologies and the demo that
//! breaks them on purpose. rwtop's monitor never runs these.
//!
//! `MySQL` renamed them in steps: `START|STOP REPLICA` in 8.0.22, `CHANGE REPLICATION SOURCE TO`
//! with `SOURCE_*` options in 8.0.23; the old spellings are gone in 8.4. `MariaDB` (10.x and 11.x)
//! keeps `CHANGE MASTER TO` and the `SLAVE` keyword, and positions by GTID with
//! `MASTER_USE_GTID=slave_pos` instead of `MySQL`'s auto-positioning.
//!
//! A replica with several sources has one channel per source (`MariaDB`: a connection name,
//! `MySQL`: a channel name; `''` is the default one). `MariaDB` names it after the keyword
//! (`CHANGE MASTER 'p2' TO …`, `STOP SLAVE 'p2' IO_THREAD`); `MySQL` (5.7.6 and later) appends
//! `FOR CHANNEL 'p2'`. The default channel is never named, so its statements read as before.

use super::{Family, Flavor};
use crate::mysql::literal;

/// Where a replica connects to replicate, and as whom.
#[derive(Debug, Clone, Copy)]
pub struct SourceLink<'a> {
    pub host: &'a str,
    pub port: u16,
    pub user: &'a str,
    pub password: &'a str,
}

/// Which replication threads a start or stop statement acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadControl {
    Start,
    Stop,
    StartIo,
    StopIo,
    StartSql,
    StopSql,
}

impl Flavor {
    /// `REPLICA` rather than `SLAVE` in `START|STOP … [IO_THREAD]`.
    fn says_replica(&self) -> bool {
        self.mysql_at_least(8, 0, 22)
    }

    /// Whether `CHANGE REPLICATION SOURCE TO` and its `SOURCE_*` options exist.
    fn has_change_replication_source(&self) -> bool {
        self.mysql_at_least(8, 0, 23)
    }

    /// A thread-control statement for one channel (`""`: the default channel, unnamed).
    #[must_use]
    pub fn channel_thread_sql(&self, which: ThreadControl, channel: &str) -> String {
        let (verb, threads) = match which {
            ThreadControl::Start => ("START", ""),
            ThreadControl::Stop => ("STOP", ""),
            ThreadControl::StartIo => ("START", " IO_THREAD"),
            ThreadControl::StopIo => ("STOP", " IO_THREAD"),
            ThreadControl::StartSql => ("START", " SQL_THREAD"),
            ThreadControl::StopSql => ("STOP", " SQL_THREAD"),
        };
        let keyword = if self.says_replica() {
            "REPLICA"
        } else {
            "SLAVE"
        };
        if channel.is_empty() {
            return format!("{verb} {keyword}{threads}");
        }
        let name = literal(channel);
        match self.family {
            // The name goes between the keyword and the thread option.
            Family::Mariadb => format!("{verb} {keyword} {name}{threads}"),
            Family::Mysql => format!("{verb} {keyword}{threads} FOR CHANNEL {name}"),
        }
    }

    /// A thread-control statement for the default channel.
    fn thread_sql(&self, which: ThreadControl) -> String {
        self.channel_thread_sql(which, "")
    }

    /// Starts both replication threads.
    #[must_use]
    pub fn start_replica_sql(&self) -> String {
        self.thread_sql(ThreadControl::Start)
    }

    /// Stops both replication threads.
    #[must_use]
    pub fn stop_replica_sql(&self) -> String {
        self.thread_sql(ThreadControl::Stop)
    }

    /// Starts the IO (receiver) thread alone.
    #[must_use]
    pub fn start_io_thread_sql(&self) -> String {
        self.thread_sql(ThreadControl::StartIo)
    }

    /// Stops the IO (receiver) thread alone: the replica keeps applying what it has, then
    /// `Seconds_Behind_Master` reads `NULL`.
    #[must_use]
    pub fn stop_io_thread_sql(&self) -> String {
        self.thread_sql(ThreadControl::StopIo)
    }

    /// Points a replica (its threads stopped, or never started) at `link`, positioned by GTID so
    /// it resumes exactly where it stopped, retrying a lost connection every second. `MySQL` 8.0
    /// asks for the source's public key, which `caching_sha2_password` needs without TLS (the
    /// option does not exist in 5.7, whose default plugin needs none).
    #[must_use]
    pub fn change_source_sql(&self, link: &SourceLink<'_>) -> String {
        self.change_channel_source_sql(link, "")
    }

    /// [`Self::change_source_sql`] for one channel of a multi-source replica (`""`: the default
    /// channel, unnamed).
    #[must_use]
    pub fn change_channel_source_sql(&self, link: &SourceLink<'_>, channel: &str) -> String {
        let (host, port, user) = (literal(link.host), link.port, literal(link.user));
        let password = literal(link.password);
        let name = (!channel.is_empty()).then(|| literal(channel));
        let for_channel = name
            .as_ref()
            .map_or_else(String::new, |name| format!(" FOR CHANNEL {name}"));
        match self.family {
            Family::Mariadb => format!(
                "CHANGE MASTER {named}TO MASTER_HOST={host}, MASTER_PORT={port}, \
                 MASTER_USER={user}, MASTER_PASSWORD={password}, \
                 MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
                named = name.map_or_else(String::new, |name| format!("{name} "))
            ),
            Family::Mysql if self.has_change_replication_source() => format!(
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST={host}, SOURCE_PORT={port}, \
                 SOURCE_USER={user}, SOURCE_PASSWORD={password}, \
                 SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1\
                 {for_channel}"
            ),
            Family::Mysql => format!(
                "CHANGE MASTER TO MASTER_HOST={host}, MASTER_PORT={port}, \
                 MASTER_USER={user}, MASTER_PASSWORD={password}, MASTER_AUTO_POSITION=1{key}, \
                 MASTER_CONNECT_RETRY=1{for_channel}",
                key = if self.mysql_at_least(8, 0, 0) {
                    ", GET_MASTER_PUBLIC_KEY=1"
                } else {
                    ""
                }
            ),
        }
    }

    /// Makes a replica apply each transaction `seconds` after its source committed it (0 turns
    /// the delay off). Runs with the replication threads stopped.
    #[must_use]
    pub fn source_delay_sql(&self, seconds: u32) -> String {
        if self.has_change_replication_source() {
            format!("CHANGE REPLICATION SOURCE TO SOURCE_DELAY={seconds}")
        } else {
            format!("CHANGE MASTER TO MASTER_DELAY={seconds}")
        }
    }

    /// The name of the delay option, for messages.
    #[must_use]
    pub fn source_delay_option(&self) -> &'static str {
        if self.has_change_replication_source() {
            "SOURCE_DELAY"
        } else {
            "MASTER_DELAY"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flavor(version: &str) -> Flavor {
        let comment = if version.contains("MariaDB") {
            "mariadb.org binary distribution"
        } else {
            "MySQL Community Server - GPL"
        };
        Flavor::detect(version, comment).unwrap()
    }

    const LINK: SourceLink<'static> = SourceLink {
        host: "127.0.0.1",
        port: 13306,
        user: "repl",
        password: "0a1b2c",
    };

    /// Each row: version, start, stop, stop IO thread, CHANGE …, delay of 5 s.
    #[test]
    fn replication_control_follows_the_flavor_matrix() {
        let cases = [
            (
                "5.7.44-log",
                "START SLAVE",
                "STOP SLAVE",
                "STOP SLAVE IO_THREAD",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_AUTO_POSITION=1, \
                 MASTER_CONNECT_RETRY=1",
                "CHANGE MASTER TO MASTER_DELAY=5",
            ),
            (
                "8.0.21",
                "START SLAVE",
                "STOP SLAVE",
                "STOP SLAVE IO_THREAD",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_AUTO_POSITION=1, \
                 GET_MASTER_PUBLIC_KEY=1, MASTER_CONNECT_RETRY=1",
                "CHANGE MASTER TO MASTER_DELAY=5",
            ),
            (
                "8.0.22",
                "START REPLICA",
                "STOP REPLICA",
                "STOP REPLICA IO_THREAD",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_AUTO_POSITION=1, \
                 GET_MASTER_PUBLIC_KEY=1, MASTER_CONNECT_RETRY=1",
                "CHANGE MASTER TO MASTER_DELAY=5",
            ),
            (
                "8.0.23",
                "START REPLICA",
                "STOP REPLICA",
                "STOP REPLICA IO_THREAD",
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=13306, \
                 SOURCE_USER='repl', SOURCE_PASSWORD='0a1b2c', SOURCE_AUTO_POSITION=1, \
                 GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1",
                "CHANGE REPLICATION SOURCE TO SOURCE_DELAY=5",
            ),
            (
                "8.4.3",
                "START REPLICA",
                "STOP REPLICA",
                "STOP REPLICA IO_THREAD",
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=13306, \
                 SOURCE_USER='repl', SOURCE_PASSWORD='0a1b2c', SOURCE_AUTO_POSITION=1, \
                 GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1",
                "CHANGE REPLICATION SOURCE TO SOURCE_DELAY=5",
            ),
            (
                "10.11.19-MariaDB-0+deb12u1-log",
                "START SLAVE",
                "STOP SLAVE",
                "STOP SLAVE IO_THREAD",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_USE_GTID=slave_pos, \
                 MASTER_CONNECT_RETRY=1",
                "CHANGE MASTER TO MASTER_DELAY=5",
            ),
            (
                "11.4.2-MariaDB",
                "START SLAVE",
                "STOP SLAVE",
                "STOP SLAVE IO_THREAD",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_USE_GTID=slave_pos, \
                 MASTER_CONNECT_RETRY=1",
                "CHANGE MASTER TO MASTER_DELAY=5",
            ),
        ];
        for (version, start, stop, stop_io, change, delay) in cases {
            let f = flavor(version);
            assert_eq!(f.start_replica_sql(), start, "{version}");
            assert_eq!(f.stop_replica_sql(), stop, "{version}");
            assert_eq!(f.stop_io_thread_sql(), stop_io, "{version}");
            assert_eq!(
                f.start_io_thread_sql(),
                stop_io.replacen("STOP", "START", 1),
                "{version}"
            );
            assert_eq!(f.change_source_sql(&LINK), change, "{version}");
            assert_eq!(f.source_delay_sql(5), delay, "{version}");
            assert!(delay.contains(f.source_delay_option()), "{version}");
        }
    }

    /// Each row: version, the named channel's CHANGE …, then its start, stop, stop IO thread and
    /// stop SQL thread.
    #[test]
    fn a_named_channel_follows_the_flavor_matrix() {
        let cases = [
            (
                "5.7.44-log",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_AUTO_POSITION=1, \
                 MASTER_CONNECT_RETRY=1 FOR CHANNEL 'p2'",
                "START SLAVE FOR CHANNEL 'p2'",
                "STOP SLAVE FOR CHANNEL 'p2'",
                "STOP SLAVE IO_THREAD FOR CHANNEL 'p2'",
                "STOP SLAVE SQL_THREAD FOR CHANNEL 'p2'",
            ),
            (
                "8.0.21",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_AUTO_POSITION=1, \
                 GET_MASTER_PUBLIC_KEY=1, MASTER_CONNECT_RETRY=1 FOR CHANNEL 'p2'",
                "START SLAVE FOR CHANNEL 'p2'",
                "STOP SLAVE FOR CHANNEL 'p2'",
                "STOP SLAVE IO_THREAD FOR CHANNEL 'p2'",
                "STOP SLAVE SQL_THREAD FOR CHANNEL 'p2'",
            ),
            (
                "8.0.22",
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_AUTO_POSITION=1, \
                 GET_MASTER_PUBLIC_KEY=1, MASTER_CONNECT_RETRY=1 FOR CHANNEL 'p2'",
                "START REPLICA FOR CHANNEL 'p2'",
                "STOP REPLICA FOR CHANNEL 'p2'",
                "STOP REPLICA IO_THREAD FOR CHANNEL 'p2'",
                "STOP REPLICA SQL_THREAD FOR CHANNEL 'p2'",
            ),
            (
                "8.4.3",
                "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=13306, \
                 SOURCE_USER='repl', SOURCE_PASSWORD='0a1b2c', SOURCE_AUTO_POSITION=1, \
                 GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1 FOR CHANNEL 'p2'",
                "START REPLICA FOR CHANNEL 'p2'",
                "STOP REPLICA FOR CHANNEL 'p2'",
                "STOP REPLICA IO_THREAD FOR CHANNEL 'p2'",
                "STOP REPLICA SQL_THREAD FOR CHANNEL 'p2'",
            ),
            (
                "10.11.19-MariaDB-0+deb12u1-log",
                "CHANGE MASTER 'p2' TO MASTER_HOST='127.0.0.1', MASTER_PORT=13306, \
                 MASTER_USER='repl', MASTER_PASSWORD='0a1b2c', MASTER_USE_GTID=slave_pos, \
                 MASTER_CONNECT_RETRY=1",
                "START SLAVE 'p2'",
                "STOP SLAVE 'p2'",
                "STOP SLAVE 'p2' IO_THREAD",
                "STOP SLAVE 'p2' SQL_THREAD",
            ),
        ];
        for (version, change, start, stop, stop_io, stop_sql) in cases {
            let f = flavor(version);
            let named = |which| f.channel_thread_sql(which, "p2");
            assert_eq!(
                f.change_channel_source_sql(&LINK, "p2"),
                change,
                "{version}"
            );
            assert_eq!(named(ThreadControl::Start), start, "{version}");
            assert_eq!(named(ThreadControl::Stop), stop, "{version}");
            assert_eq!(named(ThreadControl::StopIo), stop_io, "{version}");
            assert_eq!(named(ThreadControl::StopSql), stop_sql, "{version}");
            assert_eq!(
                named(ThreadControl::StartIo),
                stop_io.replacen("STOP", "START", 1),
                "{version}"
            );
            assert_eq!(
                named(ThreadControl::StartSql),
                stop_sql.replacen("STOP", "START", 1),
                "{version}"
            );
            // The default channel is never named: its statements read as they always did.
            assert_eq!(
                f.change_channel_source_sql(&LINK, ""),
                f.change_source_sql(&LINK),
                "{version}"
            );
            assert_eq!(
                f.channel_thread_sql(ThreadControl::StopSql, ""),
                stop_sql.split(" FOR").next().unwrap().replace(" 'p2'", ""),
                "{version}"
            );
        }
    }

    #[test]
    fn channel_names_are_quoted() {
        let mariadb = flavor("10.11.19-MariaDB");
        assert_eq!(
            mariadb.channel_thread_sql(ThreadControl::StopIo, "it's"),
            "STOP SLAVE 'it''s' IO_THREAD"
        );
        assert!(
            mariadb
                .change_channel_source_sql(&LINK, "it's")
                .starts_with("CHANGE MASTER 'it''s' TO "),
        );
        let mysql = flavor("8.4.3");
        assert!(
            mysql
                .change_channel_source_sql(&LINK, "it's")
                .ends_with(" FOR CHANNEL 'it''s'"),
        );
    }

    #[test]
    fn link_values_are_quoted() {
        let link = SourceLink {
            user: "o'brien",
            ..LINK
        };
        let sql = flavor("10.11.19-MariaDB").change_source_sql(&link);
        assert!(sql.contains("MASTER_USER='o''brien'"), "{sql}");
    }
}
