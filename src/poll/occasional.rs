//! How often the occasional reads beside a connection's status polls come (the lint's settings,
//! the account's grants, the disks), and [`Due`], when one of them is due next.

use std::time::Duration;

use tokio::time::Instant;

/// How often the health lint's settings are read again after the one read at connect.
pub const SETTINGS_EVERY: Duration = Duration::from_secs(300);
/// How soon they are read again while the node holds a copy of rwtop's tables that is not
/// rwtop's: a root above writes nothing until it is fixed, and the fix should be seen at once.
pub const SETTINGS_WHILE_MISMATCHED: Duration = Duration::from_secs(5);
/// How often the account's grants are read again after the read at connect (`session.rs`,
/// `grants_when_due`): a `GRANT` or `REVOKE` is seen within this, and the connection reopened
/// so that it holds what the server now lists. One `SHOW GRANTS` a node, as often as the disks.
pub const GRANTS_EVERY: Duration = Duration::from_secs(10);
/// How often an opted-in node's disks are read (`mysql/disks.rs`): free space moves slowly, and
/// a rate of minutes to a full disk needs no finer grain (docs/benchmarks.md, "Statements measured
/// by hand").
pub const DISKS_EVERY: Duration = Duration::from_secs(10);

/// When an occasional read is due next on a connection: at once on a new one (`Due::default`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Due(Option<Instant>);

impl Due {
    /// Whether the read is due at `now`; when it is, the next one is `every` later.
    pub fn take(&mut self, now: Instant, every: Duration) -> bool {
        if self.0.is_some_and(|next| now < next) {
            return false;
        }
        self.0 = Some(now + every);
        true
    }

    /// The next read comes at `next`, whatever was due before.
    pub fn at(&mut self, next: Instant) {
        self.0 = Some(next);
    }

    /// The read is due again at once.
    pub fn now(&mut self) {
        self.0 = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_due_at_once_then_every_so_often() {
        let start = Instant::now();
        let every = Duration::from_secs(10);
        let mut due = Due::default();
        assert!(due.take(start, every), "due at once on a new connection");
        assert!(!due.take(start + Duration::from_millis(9_999), every));
        assert!(due.take(start + every, every));
        due.now();
        assert!(due.take(start + every, every), "due again at once");
        due.at(start + Duration::from_secs(25));
        assert!(!due.take(start + Duration::from_secs(24), every));
        assert!(due.take(start + Duration::from_secs(25), every));
    }
}
