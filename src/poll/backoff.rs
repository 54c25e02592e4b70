//! The back-off between two attempts at a node that failed, shared by the pollers
//! (`node_poller::run`) and the heartbeat writers (`heartbeat::run`).

use std::time::Duration;

/// The wait before a retry, doubling per consecutive failure up to [`BACKOFF_CAP`] (a poller
/// tries the first failure after a healthy spell again at once: `node_poller::run`).
const BACKOFF_START: Duration = Duration::from_millis(250);
/// The longest wait between two attempts, which is also how long a node that comes back may go
/// unnoticed: the heartbeat writer waits the same (a restarted root's channels read exact again
/// only once its writer writes), so a cap of seconds kept lag unknown that long after a restart.
/// One attempt a second against a node that is down costs it a refused connection or a
/// handshake; a connect that times out spaces the attempts by its timeout as well.
pub const BACKOFF_CAP: Duration = Duration::from_secs(1);

/// The wait after the `failures`th failure in a row.
#[must_use]
pub fn backoff(failures: u32) -> Duration {
    let shift = failures.saturating_sub(1).min(16);
    BACKOFF_START.saturating_mul(1 << shift).min(BACKOFF_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff(1), Duration::from_millis(250));
        assert_eq!(backoff(2), Duration::from_millis(500));
        assert_eq!(backoff(3), Duration::from_secs(1));
        assert_eq!(backoff(4), BACKOFF_CAP);
        assert_eq!(backoff(u32::MAX), BACKOFF_CAP);
        assert_eq!(BACKOFF_CAP, Duration::from_secs(1));
    }
}
