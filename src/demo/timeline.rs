//! How long the demo's incidents last and how fast its load writes.

use std::time::Duration;

/// How long each incident lasts, the pauses between them, and the load's pace.
///
/// [`Timeline::default`] is the real demo (about three and a half minutes a round, first incident after 8 s);
/// [`Timeline::fast`] runs every incident for a few seconds so a test sees a whole round quickly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// Quiet time before the first incident: long enough to see a healthy topology first,
    /// short enough that something happens within the first ten seconds.
    pub lead_in: Duration,
    /// Between incidents, so the previous one's alerts clear (3 clean samples) before the next.
    pub pause: Duration,
    /// How long r2's source link stays stalled. Under `slave_net_timeout` (60 s) and the
    /// primary's `net_write_timeout` (60 s), so neither side drops the connection: SBM keeps
    /// reading 0, which is the point.
    pub stall: Duration,
    /// How long r1's IO thread stays stopped.
    pub io_stop: Duration,
    /// How long r1 keeps its `MASTER_DELAY`.
    pub delay: Duration,
    /// How long agg's channel from p2 stays stopped while its default channel flows: long
    /// enough for that channel's lag to grow well past the alert threshold.
    pub channel_stop: Duration,
    /// The `MASTER_DELAY` r1 gets, in seconds.
    pub master_delay_secs: u32,
    /// Rows in the table the ALTER rebuilds (wide latin1 rows: 1,000,000 take ~10 s to copy).
    pub big_rows: u32,
    /// How long to wait for the replicas to replay the ALTER before moving on anyway.
    pub catch_up: Duration,
    /// One INSERT of the write load every this often.
    pub load_every: Duration,
    /// Start the incidents over after the last one (the demo); otherwise idle until stopped.
    pub repeat: bool,
}

impl Default for Timeline {
    fn default() -> Self {
        Self {
            lead_in: Duration::from_secs(8),
            pause: Duration::from_secs(15),
            stall: Duration::from_secs(25),
            io_stop: Duration::from_secs(15),
            delay: Duration::from_secs(30),
            channel_stop: Duration::from_secs(20),
            master_delay_secs: 5,
            big_rows: 1_000_000,
            catch_up: Duration::from_secs(180),
            load_every: Duration::from_millis(100),
            repeat: true,
        }
    }
}

impl Timeline {
    /// Every incident for a few seconds and a small table: a whole round in under a minute,
    /// for tests. The incidents are the same real ones.
    #[must_use]
    pub fn fast() -> Self {
        Self {
            lead_in: Duration::from_secs(1),
            pause: Duration::from_secs(2),
            stall: Duration::from_secs(8),
            io_stop: Duration::from_secs(4),
            delay: Duration::from_secs(5),
            channel_stop: Duration::from_secs(8),
            master_delay_secs: 2,
            big_rows: 20_000,
            catch_up: Duration::from_secs(30),
            load_every: Duration::from_millis(100),
            repeat: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_timeline_is_the_same_script_shorter() {
        let (real, fast) = (Timeline::default(), Timeline::fast());
        assert!(fast.stall < real.stall && fast.big_rows < real.big_rows);
        assert!(fast.channel_stop < real.channel_stop);
        // The first incident comes within ten seconds, and a round lasts a few minutes.
        assert!(real.lead_in <= Duration::from_secs(10));
        let round = real.stall + real.io_stop + real.delay + real.channel_stop + 5 * real.pause;
        assert!(round >= Duration::from_secs(120) && round <= Duration::from_secs(240));
        // The stall stays under the timeouts that would turn it into a disconnect.
        assert!(real.stall < Duration::from_secs(60));
    }
}
