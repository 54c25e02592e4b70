//! The marker rows probes write on the primary, in rwtop's own table `rwtop.probe` (defined in
//! `mysql::own_tables`).

use std::time::Duration;

use crate::mysql::literal;

/// How old a marker gets before the prober deletes it, and how often it looks.
pub const KEEP_FOR: Duration = Duration::from_secs(600);
pub const CLEAN_EVERY: Duration = Duration::from_secs(60);

#[must_use]
pub fn insert_sql(token: &str) -> String {
    format!(
        "INSERT INTO rwtop.probe (token, created) VALUES ({}, UTC_TIMESTAMP(6))",
        literal(token)
    )
}

/// One row with `n` = 1 when the marker is visible, 0 when not.
#[must_use]
pub fn read_sql(token: &str) -> String {
    format!(
        "SELECT COUNT(*) AS n FROM rwtop.probe WHERE token = {}",
        literal(token)
    )
}

/// Deletes markers older than `age`, a bounded batch at a time so a long-neglected table never
/// turns into one huge transaction on the primary.
#[must_use]
pub fn cleanup_sql(age: Duration) -> String {
    format!(
        "DELETE FROM rwtop.probe WHERE created < UTC_TIMESTAMP(6) - INTERVAL {} MICROSECOND \
         ORDER BY created LIMIT 10000",
        age.as_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped() {
        assert_eq!(
            read_sql("a'b"),
            "SELECT COUNT(*) AS n FROM rwtop.probe WHERE token = 'a''b'"
        );
        assert!(cleanup_sql(Duration::from_secs(2)).contains("INTERVAL 2000000 MICROSECOND"));
    }
}
