//! Who gets the TUI's footer line during the demo: the script's narration, or a note from the
//! outputs ("report written to …", a recorder's trouble). The footer has one line, and the script
//! narrates every few seconds, so a note would be overwritten before it could be read. The rule:
//! a note holds the line for [`NOTE_HOLD`]; narration that arrives meanwhile waits, and only its
//! newest line is shown when the hold ends (a stale step is not worth reading); a later note
//! replaces the earlier one and holds again.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// How long a note holds the footer against narration: time to read a report's path.
pub const NOTE_HOLD: Duration = Duration::from_secs(10);

/// The footer's line and what waits for it, as a pure state: each method says what to show now.
#[derive(Debug, Default)]
pub struct FooterLines {
    /// Until when the shown note holds the line.
    held_until: Option<Instant>,
    /// The newest narration that arrived during a hold.
    waiting: Option<String>,
}

impl FooterLines {
    /// A note: shown at once, and it holds the line.
    pub fn note(&mut self, line: String, now: Instant) -> String {
        self.held_until = Some(now + NOTE_HOLD);
        line
    }

    /// A narration line: shown at once unless a note holds the line, else kept for later.
    pub fn narrate(&mut self, line: String, now: Instant) -> Option<String> {
        if self.held_until.is_some_and(|until| now < until) {
            self.waiting = Some(line);
            return None;
        }
        self.held_until = None;
        Some(line)
    }

    /// When [`Self::due`] may have a line to show.
    #[must_use]
    pub fn wakes_at(&self) -> Option<Instant> {
        self.held_until
    }

    /// At the end of a hold: the narration that waited, if any.
    pub fn due(&mut self, now: Instant) -> Option<String> {
        if self.held_until.is_some_and(|until| now >= until) {
            self.held_until = None;
            return self.waiting.take();
        }
        None
    }
}

/// Forwards `narration` and `notes` to the footer (`out`) by the rule above, until both have
/// ended or the footer is gone.
pub async fn forward(
    mut narration: mpsc::Receiver<String>,
    mut notes: mpsc::Receiver<String>,
    out: mpsc::Sender<String>,
) {
    let mut lines = FooterLines::default();
    let (mut narrating, mut noting) = (true, true);
    while narrating || noting {
        let wake = lines.wakes_at();
        let show = tokio::select! {
            line = notes.recv(), if noting => {
                noting = line.is_some();
                line.map(|line| lines.note(line, Instant::now()))
            }
            line = narration.recv(), if narrating => {
                narrating = line.is_some();
                line.and_then(|line| lines.narrate(line, Instant::now()))
            }
            () = sleep_until(wake), if wake.is_some() => lines.due(Instant::now()),
        };
        if let Some(line) = show
            && out.send(line).await.is_err()
        {
            return;
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_holds_the_line_against_narration_until_its_hold_ends() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut lines = FooterLines::default();
        assert_eq!(
            lines.narrate("step 1".into(), t0),
            Some("step 1".into()),
            "nothing holds the line: narration shows at once"
        );
        let note = lines.note("report written to alter.md".into(), t0 + s(1));
        assert_eq!(note, "report written to alter.md");
        // Narration during the hold waits: the note is still what the footer shows.
        assert_eq!(lines.narrate("step 2".into(), t0 + s(2)), None);
        assert_eq!(lines.narrate("step 3".into(), t0 + s(5)), None);
        assert_eq!(lines.due(t0 + s(9)), None, "the hold has not ended");
        // At its end, the newest narration only.
        assert_eq!(lines.wakes_at(), Some(t0 + s(1) + NOTE_HOLD));
        assert_eq!(lines.due(t0 + s(1) + NOTE_HOLD), Some("step 3".into()));
        assert_eq!(lines.due(t0 + s(20)), None, "shown once");
        assert_eq!(
            lines.narrate("step 4".into(), t0 + s(21)),
            Some("step 4".into())
        );
    }

    #[test]
    fn a_later_note_holds_again_and_a_hold_without_narration_shows_nothing_after() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut lines = FooterLines::default();
        lines.note("report 1".into(), t0);
        lines.note("report 2".into(), t0 + s(8));
        assert_eq!(
            lines.narrate("step".into(), t0 + s(12)),
            None,
            "held by the second"
        );
        assert_eq!(lines.due(t0 + s(18)), Some("step".into()));
        lines.note("not recording any more".into(), t0 + s(30));
        assert_eq!(lines.due(t0 + s(40)), None, "nothing waited");
        assert_eq!(lines.wakes_at(), None);
    }

    #[tokio::test]
    async fn forwarding_keeps_the_note_on_the_line_when_narration_follows_it() {
        let (narration_tx, narration_rx) = mpsc::channel(4);
        let (notes_tx, notes_rx) = mpsc::channel(4);
        let (out_tx, mut out_rx) = mpsc::channel(4);
        let task = tokio::spawn(forward(narration_rx, notes_rx, out_tx));
        notes_tx.send("report written".to_owned()).await.unwrap();
        assert_eq!(out_rx.recv().await.as_deref(), Some("report written"));
        narration_tx.send("next step".to_owned()).await.unwrap();
        // The narration waits out the hold (10 s): nothing replaces the note meanwhile.
        let early = tokio::time::timeout(Duration::from_millis(300), out_rx.recv()).await;
        assert!(early.is_err(), "narration overwrote the note: {early:?}");
        drop((narration_tx, notes_tx));
        task.abort();
    }
}
