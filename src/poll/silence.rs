//! Silence: a node asked that has not answered for its poll interval is shown down at once,
//! before its query timeout (`node_poller.rs` runs each tick's statements through it).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::ended::Ended;
use super::events::{ConnState, PollEvent};
use super::spec::PollerSpec;
use super::start_up::StartUp;

/// Whether the node was said to be silent: a node asked that has not answered for one poll
/// interval, since its last answer, is news at once (from the second tick of a connection:
/// the first is held to the query timeout), though the connection waits out its query
/// timeout before it is given up (a frozen server keeps its sockets, and a slow one may still
/// answer). A tick's statements get at least half an interval and twice what the last tick
/// took, however long the node was not asked: in a large topology ticks come an interval apart,
/// and counting from the tick alone would leave a server frozen just after one answer unnoticed
/// for two intervals. Time rwtop itself did not run is not the node's silence, nor is rwtop's
/// own start-up ([`StartUp`]).
/// The node is shown `down` from then, and `up` again when the statements answer after all; a
/// timeout that follows counts as the second failure, so it stays `down` while it reconnects.
pub(super) struct Silence {
    pub(super) said: bool,
    /// When the node last answered a tick; `None` before its first tick on this connection
    /// answered.
    heard: Option<tokio::time::Instant>,
    /// How long the last tick answered took.
    took: Duration,
    node: String,
    interval: Duration,
    /// What a silent node is shown as.
    down: ConnState,
    /// rwtop's start-up, shared by every poller: no silence judged while it is under way.
    start_up: Arc<StartUp>,
}

impl Silence {
    pub(super) fn new(spec: &PollerSpec) -> Self {
        Self {
            said: false,
            heard: None,
            took: Duration::ZERO,
            node: spec.name.clone(),
            interval: spec.interval,
            down: ConnState::Down {
                next: spec.timeouts.query.saturating_sub(spec.interval),
                cause: silent_cause(spec),
            },
            start_up: Arc::clone(&spec.start_up),
        }
    }

    pub(super) async fn answer<F>(
        &mut self,
        events: &mpsc::Sender<PollEvent>,
        work: F,
    ) -> Result<(), Ended>
    where
        F: std::future::Future<Output = Result<(), Ended>>,
    {
        let mut work = std::pin::pin!(work);
        let asked = tokio::time::Instant::now();
        let Some(heard) = self.heard.filter(|_| !self.start_up.under_way()) else {
            // A connection's first tick (the status poll, the settings, the grants: three round
            // trips, and a thousand of them at once when rwtop starts; seconds over a long WAN
            // link), and every tick while rwtop starts, is held to the query timeout alone.
            let out = work.await;
            self.answered(&out, asked);
            self.start_up.ended(&self.node);
            return out;
        };
        // Half an interval at least, and twice what the last tick took: a node that has been
        // answering slowly (a busy host, a thousand connections opening) is given the time it
        // has been taking; one that answered in milliseconds and stops is silent soon.
        let least = (self.interval / 2).max(self.took.saturating_mul(2));
        let mut silent_at = (heard + self.interval).max(asked + least);
        let out = loop {
            tokio::select! {
                // An answer that is already in when a late-woken task looks is an answer in time.
                biased;
                out = &mut work => break Some(out),
                () = tokio::time::sleep_until(silent_at) => {}
            }
            // Woken well past the time: rwtop itself did not run (a saturated host starves its
            // one worker thread: at 1,000 nodes opening at once on the servers' own two cores,
            // timers fired up to 4.8 s late). It cannot tell whether the node answered in time,
            // so the node gets half an interval more from now.
            let now = tokio::time::Instant::now();
            if now.saturating_duration_since(silent_at) <= self.interval / 4 {
                break None;
            }
            silent_at = now + self.interval / 2;
        };
        let out = if let Some(out) = out {
            out
        } else {
            self.said = true;
            self.tell(events, self.down.clone()).await?;
            work.await
        };
        self.answered(&out, asked);
        if out.is_ok() && std::mem::take(&mut self.said) {
            self.tell(events, ConnState::Up).await?;
        }
        out
    }

    /// A tick asked at `asked` ended with `out`: when it answered, and how long it took.
    fn answered(&mut self, out: &Result<(), Ended>, asked: tokio::time::Instant) {
        if out.is_ok() {
            let now = tokio::time::Instant::now();
            self.heard = Some(now);
            self.took = now - asked;
        }
    }

    async fn tell(&self, events: &mpsc::Sender<PollEvent>, state: ConnState) -> Result<(), Ended> {
        let node = self.node.clone();
        events
            .send(PollEvent::Conn { node, state })
            .await
            .map_err(|_| Ended::Stopped)
    }
}

/// What a node silent for its poll interval is shown with.
fn silent_cause(spec: &PollerSpec) -> String {
    format!(
        "no answer for {} (the poll interval); waiting up to the {} query timeout before \
         reconnecting",
        crate::units::duration(spec.interval),
        crate::units::duration(spec.timeouts.query)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn silence(interval: Duration) -> Silence {
        Silence {
            said: false,
            heard: Some(tokio::time::Instant::now()),
            took: Duration::ZERO,
            node: "r1".to_owned(),
            interval,
            down: ConnState::Down {
                next: Duration::from_secs(1),
                cause: "silent".to_owned(),
            },
            start_up: Arc::default(),
        }
    }

    /// A tick whose statements answer `after` it is asked.
    async fn answers_after(after: Duration) -> Result<(), Ended> {
        tokio::time::sleep(after).await;
        Ok(())
    }

    /// How long after it is asked a node that never answers is shown down.
    async fn shown_down_after(silence: &mut Silence) -> Duration {
        let (events, mut shown) = mpsc::channel(4);
        let asked = tokio::time::Instant::now();
        let never = std::future::pending::<Result<(), Ended>>();
        let task = async {
            let _ = silence.answer(&events, never).await;
        };
        tokio::select! {
            () = task => panic!("an answer that never comes"),
            event = shown.recv() => {
                let Some(PollEvent::Conn { state: ConnState::Down { .. }, .. }) = event else {
                    panic!("shown down, not {event:?}");
                };
            }
        }
        tokio::time::Instant::now() - asked
    }

    /// Silence counts from the node's last answer: a tick right after one waits the whole
    /// interval, a tick an interval after it (a large topology's pace) waits half of one, never
    /// less. Counted from the tick alone, the second would wait a whole interval as well.
    #[tokio::test(start_paused = true)]
    async fn silence_counts_from_the_last_answer_with_half_an_interval_at_least() {
        let second = Duration::from_secs(1);
        let mut s = silence(second);
        assert_eq!(shown_down_after(&mut s).await, second);
        let mut s = silence(second);
        tokio::time::advance(Duration::from_millis(250)).await;
        assert_eq!(shown_down_after(&mut s).await, Duration::from_millis(750));
        let mut s = silence(second);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(shown_down_after(&mut s).await, Duration::from_millis(500));
    }

    /// An answer within the time is no news, and moves the silence's start to it; an answer
    /// after the node was shown down shows it up again.
    #[tokio::test(start_paused = true)]
    async fn an_answer_in_time_is_no_news_and_a_late_one_shows_the_node_up() {
        let second = Duration::from_secs(1);
        let (events, mut shown) = mpsc::channel(4);
        let mut s = silence(second);
        tokio::time::advance(Duration::from_secs(3)).await;
        let quick = answers_after(Duration::from_millis(400));
        assert!(s.answer(&events, quick).await.is_ok());
        assert!(
            shown.try_recv().is_err(),
            "nothing said of an answer in time"
        );
        assert_eq!(s.heard, Some(tokio::time::Instant::now()));
        let late = answers_after(Duration::from_millis(1_500));
        assert!(s.answer(&events, late).await.is_ok());
        let states: Vec<String> = std::iter::from_fn(|| shown.try_recv().ok())
            .map(|e| match e {
                PollEvent::Conn { state, .. } => state.name().to_owned(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(states, ["down", "up"]);
    }

    /// A wake-up well past the deadline is rwtop held up, not the node: the node gets half an
    /// interval more from then, and answers in it.
    #[tokio::test(start_paused = true)]
    async fn rwtop_woken_late_does_not_call_the_node_silent() {
        let (events, mut shown) = mpsc::channel(4);
        let mut s = silence(Duration::from_secs(1));
        tokio::time::advance(Duration::from_secs(5)).await;
        let (answer, answered) = tokio::sync::oneshot::channel::<()>();
        let work = async {
            let _ = answered.await;
            Ok(())
        };
        let starve = async {
            // The runtime's clock jumps 2 s at once past the 0.5 s deadline, as a starved
            // worker thread sees it; the answer is in 0.1 s later.
            tokio::time::advance(Duration::from_secs(2)).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let _ = answer.send(());
        };
        let (out, ()) = tokio::join!(s.answer(&events, work), starve);
        assert!(out.is_ok());
        assert!(shown.try_recv().is_err(), "not called silent");
    }

    /// A connection's first tick is held to the query timeout alone: slow, it says nothing.
    #[tokio::test(start_paused = true)]
    async fn a_first_tick_is_not_judged_silent() {
        let (events, mut shown) = mpsc::channel(4);
        let mut s = silence(Duration::from_secs(1));
        s.heard = None;
        let slow = answers_after(Duration::from_millis(1_800));
        assert!(s.answer(&events, slow).await.is_ok());
        assert!(shown.try_recv().is_err(), "nothing said of a first tick");
        assert_eq!(s.heard, Some(tokio::time::Instant::now()));
    }

    /// While a node configured at start has not had its first attempt, no node is judged
    /// silent: a slow tick of a node that has answered says nothing. The node's own first tick
    /// ends its part of the start-up; once every part has ended, silence is judged again.
    #[tokio::test(start_paused = true)]
    async fn no_node_is_judged_silent_while_rwtop_starts() {
        let (events, mut shown) = mpsc::channel(4);
        let start_up = StartUp::new(["r1".to_owned(), "r2".to_owned()]);
        let mut s = silence(Duration::from_secs(1));
        s.start_up = Arc::clone(&start_up);
        s.heard = None;
        // r1's first tick ends its part; r2 has not answered yet.
        assert!(
            s.answer(&events, answers_after(Duration::from_millis(50)))
                .await
                .is_ok()
        );
        assert!(start_up.under_way());
        let slow = answers_after(Duration::from_millis(1_800));
        assert!(s.answer(&events, slow).await.is_ok());
        assert!(shown.try_recv().is_err(), "nothing said while rwtop starts");
        // r2's first attempt fails (refused): the start-up is over, silence judged again, at
        // twice what r1's last tick took.
        start_up.ended("r2");
        assert!(!start_up.under_way());
        assert_eq!(shown_down_after(&mut s).await, Duration::from_millis(3_600));
    }
}
