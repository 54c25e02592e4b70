//! The wait functions a read-after-write strategy runs on a replica, and what their answers mean
//! on each flavor. Callers build no wait SQL themselves and read no return value raw.

use std::time::Duration;

use super::{Family, Flavor};
use crate::mysql::{BinlogPos, literal};

/// The column every wait statement returns its value in.
pub const WAIT_RESULT_COLUMN: &str = "r";
/// The column [`Flavor::written_gtids_sql`] returns the GTIDs in.
pub const WRITTEN_GTIDS_COLUMN: &str = "g";

/// What a GTID wait function's answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GtidWaitOutcome {
    /// The replica has applied the GTIDs.
    Reached,
    /// The timeout passed first; the replica may be slow or stopped (the function cannot tell).
    TimedOut,
    /// `NULL`, or a value the function is not documented to return here.
    Unexpected,
}

/// A proxy's read-after-write mode, as far as the server's flavor decides whether and how it
/// runs (`probe/modes.rs` maps its strategies onto these; the products' settings are there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyGtidMode {
    /// MaxScale's `causal_reads`: it waits with `MASTER_GTID_WAIT` and reads `@@last_gtid`.
    CausalReads,
    /// MySQL Router's `wait_for_my_writes`: `WAIT_FOR_EXECUTED_GTID_SET`, or `GTID_SUBSET`
    /// when its timeout is 0 (`at_once`).
    WaitForMyWrites { at_once: bool },
    /// ProxySQL's `gtid_from_hostgroup`: routing by the executed GTID sets its binlog reader
    /// streams from each replica.
    GtidFromHostgroup,
}

/// How a flavor runs a [`ProxyGtidMode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeFit {
    /// As the product does.
    AsIs,
    /// With this flavor's equivalent: the note says which.
    StandIn(&'static str),
    /// Not at all: why.
    Refused(&'static str),
}

impl Flavor {
    /// Whether and how this flavor runs `mode`: `MariaDB` has none of `MySQL`'s GTID functions
    /// (`MASTER_GTID_WAIT` stands in for them) and no GTID sets to stream; `MySQL` has no
    /// `MASTER_GTID_WAIT` nor `@@last_gtid` for MaxScale to use.
    #[must_use]
    pub fn runs(&self, mode: ProxyGtidMode) -> ModeFit {
        match (mode, self.family) {
            (ProxyGtidMode::CausalReads, Family::Mariadb)
            | (
                ProxyGtidMode::WaitForMyWrites { .. } | ProxyGtidMode::GtidFromHostgroup,
                Family::Mysql,
            ) => ModeFit::AsIs,
            (ProxyGtidMode::CausalReads, Family::Mysql) => ModeFit::Refused(
                "MaxScale's causal_reads works with MariaDB servers only (it waits with \
                 MASTER_GTID_WAIT and reads last_gtid)",
            ),
            (ProxyGtidMode::WaitForMyWrites { at_once: true }, Family::Mariadb) => {
                ModeFit::StandIn(
                    "MariaDB has no GTID_SUBSET: Router's non-blocking check runs as \
                     MASTER_GTID_WAIT(gtid, 0), which answers at once",
                )
            }
            (ProxyGtidMode::WaitForMyWrites { at_once: false }, Family::Mariadb) => {
                ModeFit::StandIn(
                    "MariaDB has no WAIT_FOR_EXECUTED_GTID_SET: MASTER_GTID_WAIT, its \
                     equivalent, waits instead",
                )
            }
            (ProxyGtidMode::GtidFromHostgroup, Family::Mariadb) => ModeFit::StandIn(
                "ProxySQL tracks MySQL GTIDs only (its binlog reader): this applies its \
                 routing rule to MariaDB's gtid_slave_pos",
            ),
        }
    }

    /// The function that waits for the SQL thread to reach a source binlog position:
    /// `SOURCE_POS_WAIT` on `MySQL` 8.0.26+ (where `MASTER_POS_WAIT` is deprecated, and gone in
    /// 8.4), `MASTER_POS_WAIT` everywhere else. It counts whole seconds and answers `-1` on a
    /// timeout, `NULL` when it cannot compare (SQL thread stopped, bad file name) on every flavor.
    #[must_use]
    pub fn pos_wait_function(&self) -> &'static str {
        if self.mysql_at_least(8, 0, 26) {
            "SOURCE_POS_WAIT"
        } else {
            "MASTER_POS_WAIT"
        }
    }

    /// Waits up to `timeout_secs` whole seconds (0 would wait forever: callers round up) for the
    /// SQL thread of `channel` (`''`: the default one) to reach `pos`; the answer is in
    /// [`WAIT_RESULT_COLUMN`]. Both families take the channel (`MariaDB`: the connection name)
    /// as a 4th argument. Verified on `MariaDB` 10.11: without it the default connection is
    /// judged, and two roots' binlogs often share file names, so another root's position reads
    /// as reached; with it, a stopped SQL thread on that connection gives `NULL` at once while
    /// the default connection still answers, and an unknown name gives `NULL` too.
    #[must_use]
    pub fn pos_wait_sql(&self, pos: &BinlogPos, timeout_secs: u64, channel: &str) -> String {
        let channel = if channel.is_empty() {
            String::new()
        } else {
            format!(", {}", literal(channel))
        };
        format!(
            "SELECT {}({}, {}, {timeout_secs}{channel}) AS {WAIT_RESULT_COLUMN}",
            self.pos_wait_function(),
            literal(&pos.file),
            pos.pos
        )
    }

    /// The function that waits for GTIDs to be applied: `MariaDB`'s `MASTER_GTID_WAIT` compares
    /// with `@@gtid_slave_pos`, `MySQL`'s `WAIT_FOR_EXECUTED_GTID_SET` with `@@gtid_executed`.
    #[must_use]
    pub fn gtid_wait_function(&self) -> &'static str {
        match self.family {
            Family::Mariadb => "MASTER_GTID_WAIT",
            Family::Mysql => "WAIT_FOR_EXECUTED_GTID_SET",
        }
    }

    /// Waits up to `timeout` (to the millisecond: both functions take fractional seconds) for the
    /// replica to have applied `gtids`; the answer is in [`WAIT_RESULT_COLUMN`] and means what
    /// [`Self::gtid_wait_outcome`] says.
    #[must_use]
    pub fn gtid_wait_sql(&self, gtids: &str, timeout: Duration) -> String {
        format!(
            "SELECT {}({}, {:.3}) AS {WAIT_RESULT_COLUMN}",
            self.gtid_wait_function(),
            literal(gtids),
            timeout.as_secs_f64()
        )
    }

    /// `0` is success on both; a timeout is `-1` from `MASTER_GTID_WAIT` but `1` from
    /// `WAIT_FOR_EXECUTED_GTID_SET`, so the same number means opposite things across flavors.
    #[must_use]
    pub fn gtid_wait_outcome(&self, value: Option<i64>) -> GtidWaitOutcome {
        match (self.family, value) {
            (_, Some(0)) => GtidWaitOutcome::Reached,
            (Family::Mariadb, Some(-1)) | (Family::Mysql, Some(1)) => GtidWaitOutcome::TimedOut,
            _ => GtidWaitOutcome::Unexpected,
        }
    }

    /// A check that never waits: whether the replica has applied `gtids` already, as MySQL
    /// Router's `wait_for_my_writes_timeout=0` asks it. `MySQL`: `GTID_SUBSET` against
    /// `@@gtid_executed` (1 = applied). `MariaDB` has neither `GTID_SUBSET` nor
    /// `WAIT_FOR_EXECUTED_GTID_SET` (both ERROR 1305): `MASTER_GTID_WAIT` with a timeout of 0
    /// answers at once, `0` applied, `-1` not yet. Read with [`Self::gtid_check_outcome`].
    #[must_use]
    pub fn gtid_check_sql(&self, gtids: &str) -> String {
        match self.family {
            Family::Mariadb => format!(
                "SELECT MASTER_GTID_WAIT({}, 0) AS {WAIT_RESULT_COLUMN}",
                literal(gtids)
            ),
            Family::Mysql => format!(
                "SELECT GTID_SUBSET({}, @@global.gtid_executed) AS {WAIT_RESULT_COLUMN}",
                literal(gtids)
            ),
        }
    }

    /// What [`Self::gtid_check_sql`]'s answer means: `TimedOut` is "not applied yet".
    #[must_use]
    pub fn gtid_check_outcome(&self, value: Option<i64>) -> GtidWaitOutcome {
        match (self.family, value) {
            (Family::Mariadb, _) => self.gtid_wait_outcome(value),
            (Family::Mysql, Some(1)) => GtidWaitOutcome::Reached,
            (Family::Mysql, Some(0)) => GtidWaitOutcome::TimedOut,
            (Family::Mysql, _) => GtidWaitOutcome::Unexpected,
        }
    }

    /// Read on the primary's connection right after a write: the GTIDs a replica must have
    /// applied to have that write, in [`WRITTEN_GTIDS_COLUMN`]. `MariaDB` gives the write's own
    /// GTID (`@@last_gtid`, per session); on `MySQL` the driver cannot read the session's own
    /// GTID, so it is the primary's whole executed set, which may over-wait but never under-wait
    /// (see [`Self::written_gtids_are_the_writes_own`]).
    #[must_use]
    pub fn written_gtids_sql(&self) -> &'static str {
        match self.family {
            Family::Mariadb => "SELECT @@last_gtid AS g",
            Family::Mysql => "SELECT @@global.gtid_executed AS g",
        }
    }

    /// Whether [`Self::written_gtids_sql`] names only the write itself (else more: the wait may
    /// last longer than the write needs).
    #[must_use]
    pub fn written_gtids_are_the_writes_own(&self) -> bool {
        self.family == Family::Mariadb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flavor(version: &str, comment: &str) -> Flavor {
        Flavor::detect(version, comment).unwrap()
    }

    fn mysql_57() -> Flavor {
        flavor("5.7.44-log", "MySQL Community Server (GPL)")
    }
    fn mysql_80_old() -> Flavor {
        flavor("8.0.25", "MySQL Community Server - GPL")
    }
    fn mysql_80() -> Flavor {
        flavor("8.0.36", "MySQL Community Server - GPL")
    }
    fn mysql_84() -> Flavor {
        flavor("8.4.3", "MySQL Community Server - GPL")
    }
    fn mariadb() -> Flavor {
        flavor("10.11.19-MariaDB-0+deb12u1-log", "Debian 12")
    }

    #[test]
    fn pos_wait_is_source_pos_wait_from_mysql_8_0_26() {
        let pos = BinlogPos::new("binlog.000003", 1234);
        let cases = [
            (
                mysql_57(),
                "SELECT MASTER_POS_WAIT('binlog.000003', 1234, 2) AS r",
            ),
            (
                mysql_80_old(),
                "SELECT MASTER_POS_WAIT('binlog.000003', 1234, 2) AS r",
            ),
            (
                mysql_80(),
                "SELECT SOURCE_POS_WAIT('binlog.000003', 1234, 2) AS r",
            ),
            (
                mysql_84(),
                "SELECT SOURCE_POS_WAIT('binlog.000003', 1234, 2) AS r",
            ),
            (
                mariadb(),
                "SELECT MASTER_POS_WAIT('binlog.000003', 1234, 2) AS r",
            ),
        ];
        for (f, sql) in cases {
            assert_eq!(f.pos_wait_sql(&pos, 2, ""), sql, "{f}");
        }
        // A named channel is the 4th argument on both families.
        assert_eq!(
            mariadb().pos_wait_sql(&pos, 2, "p2"),
            "SELECT MASTER_POS_WAIT('binlog.000003', 1234, 2, 'p2') AS r"
        );
        assert_eq!(
            mysql_80().pos_wait_sql(&pos, 2, "p2"),
            "SELECT SOURCE_POS_WAIT('binlog.000003', 1234, 2, 'p2') AS r"
        );
        // The file name comes from a server: quoted, never trusted.
        let odd = BinlogPos::new("b'in", 4);
        assert_eq!(
            mariadb().pos_wait_sql(&odd, 1, ""),
            "SELECT MASTER_POS_WAIT('b''in', 4, 1) AS r"
        );
    }

    #[test]
    fn gtid_wait_and_its_answers_follow_the_family() {
        let wait = Duration::from_millis(1500);
        let uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5";
        for f in [mysql_57(), mysql_80(), mysql_84()] {
            assert_eq!(
                f.gtid_wait_sql(uuid, wait),
                format!("SELECT WAIT_FOR_EXECUTED_GTID_SET('{uuid}', 1.500) AS r"),
                "{f}"
            );
            assert_eq!(f.written_gtids_sql(), "SELECT @@global.gtid_executed AS g");
            assert!(!f.written_gtids_are_the_writes_own());
            assert_eq!(f.gtid_wait_outcome(Some(0)), GtidWaitOutcome::Reached);
            assert_eq!(f.gtid_wait_outcome(Some(1)), GtidWaitOutcome::TimedOut);
            assert_eq!(f.gtid_wait_outcome(Some(-1)), GtidWaitOutcome::Unexpected);
            assert_eq!(f.gtid_wait_outcome(None), GtidWaitOutcome::Unexpected);
        }
        let m = mariadb();
        assert_eq!(
            m.gtid_wait_sql("0-1-56187", wait),
            "SELECT MASTER_GTID_WAIT('0-1-56187', 1.500) AS r"
        );
        assert_eq!(m.written_gtids_sql(), "SELECT @@last_gtid AS g");
        assert!(m.written_gtids_are_the_writes_own());
        assert_eq!(m.gtid_wait_outcome(Some(0)), GtidWaitOutcome::Reached);
        assert_eq!(m.gtid_wait_outcome(Some(-1)), GtidWaitOutcome::TimedOut);
        assert_eq!(m.gtid_wait_outcome(Some(1)), GtidWaitOutcome::Unexpected);
        assert_eq!(m.gtid_wait_outcome(None), GtidWaitOutcome::Unexpected);
    }

    /// MaxScale's modes run on `MariaDB` only; Router's and ProxySQL's run on `MySQL` as the
    /// products do, and on `MariaDB` with `MASTER_GTID_WAIT` and `gtid_slave_pos` standing in.
    #[test]
    fn proxy_modes_run_as_the_flavor_allows() {
        let causal = ProxyGtidMode::CausalReads;
        let wait = ProxyGtidMode::WaitForMyWrites { at_once: false };
        let check = ProxyGtidMode::WaitForMyWrites { at_once: true };
        let stream = ProxyGtidMode::GtidFromHostgroup;
        for f in [mysql_57(), mysql_80(), mysql_84()] {
            assert!(
                matches!(f.runs(causal), ModeFit::Refused(why) if why.contains("MariaDB servers only")),
                "{f}"
            );
            for mode in [wait, check, stream] {
                assert_eq!(f.runs(mode), ModeFit::AsIs, "{f} {mode:?}");
            }
        }
        let m = mariadb();
        assert_eq!(m.runs(causal), ModeFit::AsIs);
        let note = |mode| match m.runs(mode) {
            ModeFit::StandIn(note) => note,
            other => panic!("{mode:?}: {other:?}"),
        };
        assert!(note(wait).contains("no WAIT_FOR_EXECUTED_GTID_SET"));
        assert!(note(check).contains("no GTID_SUBSET"));
        assert!(note(stream).contains("gtid_slave_pos"));
    }

    #[test]
    fn the_non_blocking_check_is_master_gtid_wait_0_on_mariadb() {
        assert_eq!(
            mariadb().gtid_check_sql("0-1-5"),
            "SELECT MASTER_GTID_WAIT('0-1-5', 0) AS r"
        );
        assert_eq!(
            mariadb().gtid_check_outcome(Some(-1)),
            GtidWaitOutcome::TimedOut
        );
        let m = mysql_80();
        assert_eq!(
            m.gtid_check_sql("u:1-5"),
            "SELECT GTID_SUBSET('u:1-5', @@global.gtid_executed) AS r"
        );
        assert_eq!(m.gtid_check_outcome(Some(1)), GtidWaitOutcome::Reached);
        assert_eq!(m.gtid_check_outcome(Some(0)), GtidWaitOutcome::TimedOut);
        assert_eq!(m.gtid_check_outcome(None), GtidWaitOutcome::Unexpected);
    }
}
