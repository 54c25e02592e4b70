//! Playback of a recording: which frame shows when, paused or at a speed, with seeking. Time is
//! passed in, so the loop that owns the player decides when to look and tests need no clock.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Recording;
use crate::store::Snapshot;

/// A playback speed, kept in thousandths so it compares exactly and prints as typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Speed(u32);

impl Speed {
    pub const NORMAL: Self = Self(1_000);
    const MIN: u32 = 100;
    const MAX: u32 = 100_000;
    /// The steps `<` and `>` move along (a typed speed between two steps moves to the next).
    const STEPS: [u32; 11] = [
        100, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 100_000,
    ];

    #[must_use]
    pub fn faster(self) -> Self {
        Self::STEPS
            .iter()
            .find(|s| **s > self.0)
            .map_or(self, |s| Self(*s))
    }

    #[must_use]
    pub fn slower(self) -> Self {
        Self::STEPS
            .iter()
            .rev()
            .find(|s| **s < self.0)
            .map_or(self, |s| Self(*s))
    }

    /// Recording time covered in `wall` time.
    fn scale(self, wall: Duration) -> Duration {
        let nanos = wall.as_nanos() * u128::from(self.0) / 1_000;
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// Wall time that covers `recorded` time.
    fn unscale(self, recorded: Duration) -> Duration {
        let nanos = recorded.as_nanos() * 1_000 / u128::from(self.0.max(1));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

impl std::fmt::Display for Speed {
    /// `2`, `0.5`, `0.25`: the factor without trailing zeros.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (whole, thousandths) = (self.0 / 1_000, self.0 % 1_000);
        if thousandths == 0 {
            write!(f, "{whole}")
        } else {
            let fraction = format!("{thousandths:03}");
            write!(f, "{whole}.{}", fraction.trim_end_matches('0'))
        }
    }
}

impl std::str::FromStr for Speed {
    type Err = String;

    /// `1`, `2`, `0.5`, `10`, also written `2x` or `x2`; from 0.1 to 100.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || format!("{text:?}: expected a factor from 0.1 to 100, like 0.5, 1, 2 or 10");
        let bare = text
            .trim()
            .trim_start_matches(['x', '×'])
            .trim_end_matches('x');
        let (whole, fraction) = bare.split_once('.').unwrap_or((bare, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty())
            || !digits(whole)
            || !digits(fraction)
            || whole.len() > 3
        {
            return Err(err());
        }
        let whole: u32 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| err())?
        };
        let mut thousandths = 0;
        for (i, scale) in fraction.bytes().zip([100, 10, 1]) {
            thousandths += u32::from(i - b'0') * scale;
        }
        let value = whole * 1_000 + thousandths;
        if (Self::MIN..=Self::MAX).contains(&value) {
            Ok(Self(value))
        } else {
            Err(err())
        }
    }
}

/// What the replay is doing, for the TUI's status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayStatus {
    /// When the frame shown was taken.
    pub taken_at: chrono::DateTime<chrono::Utc>,
    /// The frame's time from the first frame, and the recording's length.
    pub position: Duration,
    pub length: Duration,
    pub speed: Speed,
    pub paused: bool,
    /// On the last frame (playback stops there).
    pub at_end: bool,
}

/// Plays a recording: starts on the first frame, playing; stops, paused, on the last.
#[derive(Debug)]
pub struct Player {
    recording: Recording,
    /// The frame shown, and it rebuilt.
    at: usize,
    shown: Arc<Snapshot>,
    speed: Speed,
    paused: bool,
    /// Recording time at `anchor`; playing, it advances from there at `speed`.
    position: Duration,
    anchor: Instant,
}

impl Player {
    #[must_use]
    pub fn new(recording: Recording, speed: Speed, now: Instant) -> Self {
        let shown = Arc::new(recording.frame(0).unwrap_or_else(empty));
        Self {
            recording,
            at: 0,
            shown,
            speed,
            paused: false,
            position: Duration::ZERO,
            anchor: now,
        }
    }

    #[must_use]
    pub fn recording(&self) -> &Recording {
        &self.recording
    }

    /// The frame shown (as of the last [`Player::update`]).
    #[must_use]
    pub fn current(&self) -> &Arc<Snapshot> {
        &self.shown
    }

    /// The index of the frame shown.
    #[must_use]
    pub fn index(&self) -> usize {
        self.at
    }

    fn position_at(&self, now: Instant) -> Duration {
        if self.paused {
            self.position
        } else {
            self.position + self.speed.scale(now.saturating_duration_since(self.anchor))
        }
    }

    /// Freezes the position at `now`, so a change of speed or state counts from there.
    fn rebase(&mut self, now: Instant) {
        self.position = self.position_at(now).min(self.recording.duration());
        self.anchor = now;
    }

    fn show(&mut self, index: usize) -> bool {
        if index == self.at {
            return false;
        }
        if let Some(frame) = self.recording.frame(index) {
            self.shown = Arc::new(frame);
            self.at = index;
        }
        true
    }

    /// Moves to the frame due at `now`; true when it changed. Reaching the end pauses there.
    pub fn update(&mut self, now: Instant) -> bool {
        let length = self.recording.duration();
        if !self.paused && self.position_at(now) >= length {
            self.position = length;
            self.anchor = now;
            self.paused = true;
        }
        let index = self.recording.index_at(self.position_at(now));
        self.show(index)
    }

    /// When the next frame is due; `None` while paused.
    #[must_use]
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        if self.paused {
            return None;
        }
        let next = if self.at + 1 < self.recording.len() {
            self.recording.offset(self.at + 1)
        } else {
            self.recording.duration()
        };
        let wait = next.saturating_sub(self.position_at(now));
        Some(now + self.speed.unscale(wait))
    }

    /// Space: pause, or play on; at the end, play again from the start.
    pub fn toggle_pause(&mut self, now: Instant) {
        self.rebase(now);
        if self.paused {
            if self.position >= self.recording.duration() {
                self.position = Duration::ZERO;
            }
            self.paused = false;
        } else {
            self.paused = true;
        }
        self.update(now);
    }

    /// Left and right: `step` back or forward, within the recording; pausing stays paused.
    pub fn seek(&mut self, now: Instant, forward: bool, step: Duration) {
        self.rebase(now);
        self.position = if forward {
            (self.position + step).min(self.recording.duration())
        } else {
            self.position.saturating_sub(step)
        };
        self.update(now);
    }

    /// `>` and `<`: the next speed step up or down.
    pub fn change_speed(&mut self, now: Instant, faster: bool) {
        self.rebase(now);
        self.speed = if faster {
            self.speed.faster()
        } else {
            self.speed.slower()
        };
    }

    #[must_use]
    pub fn status(&self) -> ReplayStatus {
        ReplayStatus {
            taken_at: self.shown.taken_at,
            position: self.recording.offset(self.at),
            length: self.recording.duration(),
            speed: self.speed,
            paused: self.paused,
            at_end: self.at + 1 == self.recording.len(),
        }
    }
}

/// Never shown: an opened recording has a first frame.
fn empty() -> Snapshot {
    Snapshot {
        uptime: Duration::ZERO,
        taken_at: chrono::DateTime::default(),
        heartbeat: crate::store::HeartbeatView {
            interval: Duration::ZERO,
            read_every: None,
            writer: crate::poll::WriterState::Starting,
            node: None,
            last_seq: None,
            last_ack_age: None,
            stale: false,
            roots: Vec::new(),
        },
        nodes: Vec::new(),
        alerts: crate::alerts::AlertsView::default(),
        probes: crate::probe::ProbesView::default(),
        drain: crate::drain::DrainView::default(),
        exposure: Vec::new(),
        clusters: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Recorder;
    use crate::record::recording::tests::frames;

    fn player(n: u64, speed: &str) -> (Player, Instant, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        let mut recorder = Recorder::create(&path).unwrap();
        for s in frames(n) {
            recorder.write(&s).unwrap();
        }
        let now = Instant::now();
        let recording = Recording::open(&path).unwrap();
        (
            Player::new(recording, speed.parse().unwrap(), now),
            now,
            dir,
        )
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn speeds_parse_print_and_step() {
        for (text, shown) in [
            ("1", "1"),
            ("2", "2"),
            ("0.5", "0.5"),
            ("10", "10"),
            ("x4", "4"),
        ] {
            assert_eq!(text.parse::<Speed>().unwrap().to_string(), shown);
        }
        assert_eq!(".25".parse::<Speed>().unwrap().to_string(), "0.25");
        for bad in ["0", "-1", "fast", "", ".", "1e3", "1000", "0.05", "1.2.3"] {
            let err = bad.parse::<Speed>().unwrap_err();
            assert!(err.contains("from 0.1 to 100"), "{bad}: {err}");
        }
        let ten: Speed = "10".parse().unwrap();
        assert_eq!(
            (ten.faster().to_string(), ten.slower().to_string()),
            ("16".into(), "8".into())
        );
        let max: Speed = "100".parse().unwrap();
        assert_eq!(max.faster(), max);
        assert_eq!("0.1".parse::<Speed>().unwrap().slower().to_string(), "0.1");
    }

    #[test]
    fn plays_at_its_speed_and_pauses_on_the_last_frame() {
        let (mut p, t0, _dir) = player(5, "2");
        assert_eq!((p.index(), p.status().paused), (0, false));
        // Frames are 1 s apart: at ×2 the next is due in half a second.
        assert_eq!(p.next_due(t0), Some(t0 + secs(0.5)));
        assert!(!p.update(t0 + secs(0.4)));
        assert!(p.update(t0 + secs(0.5)));
        assert_eq!(p.index(), 1);
        assert!(p.update(t0 + secs(1.2)));
        assert_eq!(p.index(), 2);
        // Four seconds of recording take two: then it stops on the last frame, paused.
        p.update(t0 + secs(9.0));
        let status = p.status();
        assert_eq!((p.index(), status.paused, status.at_end), (4, true, true));
        assert_eq!((status.position, status.length), (secs(4.0), secs(4.0)));
        assert_eq!(p.next_due(t0 + secs(9.0)), None);
        assert_eq!(p.current().uptime, Duration::from_secs(104));
        // Space at the end plays again from the start.
        p.toggle_pause(t0 + secs(10.0));
        assert_eq!((p.index(), p.status().paused), (0, false));
    }

    #[test]
    fn pause_seek_and_speed_move_from_the_position_shown() {
        let (mut p, t0, _dir) = player(30, "1");
        p.update(t0 + secs(3.5));
        p.toggle_pause(t0 + secs(3.5));
        assert!(p.status().paused);
        // Paused, time passes and nothing moves.
        assert!(!p.update(t0 + secs(60.0)));
        assert_eq!(p.index(), 3);
        p.seek(t0 + secs(61.0), true, secs(10.0));
        assert_eq!((p.index(), p.status().paused), (13, true));
        p.seek(t0 + secs(62.0), false, secs(20.0));
        assert_eq!(p.index(), 0, "seeking back stops at the start");
        p.seek(t0 + secs(63.0), true, secs(100.0));
        assert_eq!(p.index(), 29, "and forward at the end");
        p.seek(t0 + secs(64.0), false, secs(10.0));
        assert_eq!(p.index(), 19);
        // Play on at ×4: four frames a second from where it was.
        p.toggle_pause(t0 + secs(65.0));
        p.change_speed(t0 + secs(65.0), true);
        p.change_speed(t0 + secs(65.0), true);
        assert_eq!(p.status().speed.to_string(), "4");
        p.update(t0 + secs(66.0));
        assert_eq!(p.index(), 23);
        p.change_speed(t0 + secs(66.0), false);
        p.update(t0 + secs(67.0));
        assert_eq!(p.index(), 25);
        // The frames shown carry their rebuilt series.
        let r2 = p.current().node("r2").unwrap().replica().unwrap();
        assert_eq!(r2.series.len(), 26);
    }
}
