//! Stopping the demo's script: every step of it can be cut short by the caller or the demo.

use std::time::Duration;

use tokio::sync::watch;

/// The script stopped on request; every step returns it so `?` ends the script at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped;

/// The stop signal: the caller's (the TUI quitting) or the demo's own (the [`super::Demo`]
/// dropping). A sender that is gone counts as stop, so a script can never outlive both.
#[derive(Clone)]
pub(crate) struct Stop {
    caller: watch::Receiver<bool>,
    demo: watch::Receiver<bool>,
}

impl Stop {
    pub(crate) fn new(caller: watch::Receiver<bool>, demo: watch::Receiver<bool>) -> Self {
        Self { caller, demo }
    }

    /// Resolves once either side says stop (or hangs up).
    pub(super) async fn requested(&mut self) {
        tokio::select! {
            _ = self.caller.wait_for(|stop| *stop) => {}
            _ = self.demo.wait_for(|stop| *stop) => {}
        }
    }

    /// Runs `work` unless a stop comes first; the stop wins a tie, so nothing new starts after it.
    pub(super) async fn or_stop<F: Future>(&mut self, work: F) -> Result<F::Output, Stopped> {
        tokio::select! {
            biased;
            () = self.requested() => Err(Stopped),
            out = work => Ok(out),
        }
    }

    pub(super) async fn sleep(&mut self, how_long: Duration) -> Result<(), Stopped> {
        self.or_stop(tokio::time::sleep(how_long)).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[tokio::test]
    async fn a_stop_ends_a_sleep_at_once_and_a_dropped_sender_counts() {
        let (caller_tx, caller_rx) = watch::channel(false);
        let (_demo_tx, demo_rx) = watch::channel(false);
        let mut stop = Stop::new(caller_rx, demo_rx);
        let started = Instant::now();
        let sleeper = tokio::spawn(async move { stop.sleep(Duration::from_secs(60)).await });
        let _ = caller_tx.send(true);
        assert_eq!(sleeper.await.ok(), Some(Err(Stopped)));
        assert!(started.elapsed() < Duration::from_secs(5));

        let (caller_tx, caller_rx) = watch::channel(false);
        let (_demo_tx, demo_rx) = watch::channel(false);
        let mut stop = Stop::new(caller_rx, demo_rx);
        drop(caller_tx);
        assert_eq!(stop.sleep(Duration::from_secs(60)).await, Err(Stopped));
    }
}
