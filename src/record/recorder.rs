//! The writing side: a header, then one frame a second at most while snapshots change.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::watch;

use super::{Chart, FRAME_PERIOD, Frame, Header};
use crate::store::Snapshot;
use crate::store::series::Point;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(
        "cannot create the recording {}: {error}: check that its folder exists and is writable, \
         or give --record another path",
        path.display()
    )]
    Create {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "recording to {} stopped after {frames} frames: {error}; those frames replay, nothing \
         after them was recorded (free some space, or give --record another path next time)",
        path.display()
    )]
    Write {
        path: PathBuf,
        frames: u64,
        error: std::io::Error,
    },
}

/// What a finished recording holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub path: PathBuf,
    /// Frames after the header.
    pub frames: u64,
    /// The whole file, header included.
    pub bytes: u64,
}

/// Where a replica's chart stood in the previous frame: its last point's time, and how many
/// points at the end share that time (the store's clock can repeat a millisecond).
#[derive(Debug, Clone, Copy)]
struct Cursor {
    last_at: u64,
    ties: usize,
}

impl Cursor {
    fn of(series: &[Point]) -> Option<Self> {
        let last_at = series.last()?.at_ms;
        let ties = series
            .iter()
            .rev()
            .take_while(|p| p.at_ms == last_at)
            .count();
        Some(Self { last_at, ties })
    }
}

/// The points of `series` that the previous frame (`cursor`) did not carry. The series is a
/// window sliding over one append-only list, so those are a suffix of it.
fn fresh(series: &[Point], cursor: Option<Cursor>) -> &[Point] {
    let Some(c) = cursor else { return series };
    let after = series.partition_point(|p| p.at_ms <= c.last_at);
    let ties = after - series.partition_point(|p| p.at_ms < c.last_at);
    series
        .get(after - ties.saturating_sub(c.ties)..)
        .unwrap_or_default()
}

/// Writes a recording. [`Recorder::run`] follows an engine's snapshots; [`Recorder::write`]
/// adds one frame by hand.
pub struct Recorder {
    path: PathBuf,
    file: File,
    cursors: HashMap<String, Cursor>,
    newest: super::lists::Newest,
    frames: u64,
    bytes: u64,
    line: Vec<u8>,
}

impl Recorder {
    /// Creates (or truncates) `path` and writes the header, without thresholds.
    pub fn create(path: &Path) -> Result<Self, RecordError> {
        Self::create_with(path, None)
    }

    /// Creates (or truncates) `path` and writes the header, with the thresholds the recording
    /// rwtop judges by.
    pub fn create_with(
        path: &Path,
        thresholds: Option<super::RecordedThresholds>,
    ) -> Result<Self, RecordError> {
        let create = |error| RecordError::Create {
            path: path.to_owned(),
            error,
        };
        let file = File::create(path).map_err(create)?;
        let mut recorder = Self {
            path: path.to_owned(),
            file,
            cursors: HashMap::new(),
            newest: super::lists::Newest::default(),
            frames: 0,
            bytes: 0,
            line: Vec::with_capacity(16 * 1024),
        };
        let header = Header {
            thresholds,
            ..Header::new(chrono::Utc::now())
        };
        recorder.put(&header).map_err(create)?;
        Ok(recorder)
    }

    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    #[must_use]
    pub fn summary(&self) -> Summary {
        Summary {
            path: self.path.clone(),
            frames: self.frames,
            bytes: self.bytes,
        }
    }

    /// One line, in one write: a crash leaves either the whole line or a piece of it without its
    /// newline, which the reader recognises as cut short.
    fn put(&mut self, value: &impl serde::Serialize) -> std::io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, value)?;
        self.line.push(b'\n');
        self.file.write_all(&self.line)?;
        self.bytes += self.line.len() as u64;
        Ok(())
    }

    /// Appends `snapshot` as a frame: its series emptied, each replica's new points beside it.
    pub fn write(&mut self, snapshot: &Snapshot) -> Result<(), RecordError> {
        let mut stripped = snapshot.clone();
        let mut charts = BTreeMap::new();
        let mut cursors = Vec::new();
        for (node, live) in stripped.nodes.iter_mut().zip(&snapshot.nodes) {
            for (index, (channel, live_channel)) in
                node.channels.iter_mut().zip(&live.channels).enumerate()
            {
                channel.series = crate::store::series::Chart::default();
                let key = super::chart_key(live, index).into_owned();
                let cursor = self.cursors.get(&key).copied();
                // Only what the last frame may not have carried: its newest time on.
                let series: Vec<Point> = live_channel
                    .series
                    .since(cursor.map_or(0, |c| c.last_at))
                    .copied()
                    .collect();
                if let Some(next) = Cursor::of(&series) {
                    cursors.push((key.clone(), next));
                }
                charts.insert(
                    key,
                    Chart {
                        len: live_channel.series.len(),
                        new_points: fresh(&series, cursor).to_vec(),
                    },
                );
            }
        }
        let (lists, newest) = self.newest.take(&mut stripped);
        let frame = Frame {
            snapshot: &stripped,
            charts,
            lists: Some(lists),
        };
        if let Err(error) = self.put(&frame) {
            return Err(RecordError::Write {
                path: self.path.clone(),
                frames: self.frames,
                error,
            });
        }
        // Only a frame that reached the file moves the cursors on.
        self.cursors.extend(cursors);
        self.newest = newest;
        self.frames += 1;
        Ok(())
    }

    /// Records `snapshots` until their sender goes away (the engine shut down): the picture at
    /// the start, then the newest one each [`FRAME_PERIOD`] while they change. The first write
    /// error ends the recording and is returned; nothing panics.
    pub async fn run(
        mut self,
        mut snapshots: watch::Receiver<Arc<Snapshot>>,
    ) -> Result<Summary, RecordError> {
        let first = snapshots.borrow_and_update().clone();
        self.write(&first)?;
        let mut next = tokio::time::Instant::now() + FRAME_PERIOD;
        while snapshots.changed().await.is_ok() {
            // This frame's turn, or the end of the engine: its last picture is still written.
            tokio::select! {
                () = tokio::time::sleep_until(next) => {}
                () = closed(&mut snapshots) => {}
            }
            let snapshot = snapshots.borrow_and_update().clone();
            self.write(&snapshot)?;
            next = tokio::time::Instant::now() + FRAME_PERIOD;
        }
        Ok(self.summary())
    }
}

/// Resolves when the sender is gone (values seen on the way stay in the receiver).
async fn closed(snapshots: &mut watch::Receiver<Arc<Snapshot>>) {
    while snapshots.changed().await.is_ok() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(at_ms: u64) -> Point {
        Point {
            at_ms,
            heartbeat_lag_ms: Some(1),
            sbm_s: Some(0),
        }
    }

    /// A full disk (`/dev/full` answers every write with ENOSPC) ends the recording with an
    /// error naming the file, and nothing panics.
    #[tokio::test]
    async fn a_full_disk_is_reported_once_with_the_path() {
        let err = Recorder::create(Path::new("/dev/full")).err().unwrap();
        assert!(
            err.to_string()
                .starts_with("cannot create the recording /dev/full: No space left on device"),
            "{err}"
        );
        // Past the header, as when the disk fills up during a recording.
        let recorder = Recorder {
            path: PathBuf::from("/dev/full"),
            file: std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
            cursors: HashMap::new(),
            newest: super::super::lists::Newest::default(),
            frames: 0,
            bytes: 0,
            line: Vec::new(),
        };
        let (tx, rx) = watch::channel(Arc::new(crate::store::testkit::Topo::new().at(1)));
        let err = recorder.run(rx).await.err().unwrap().to_string();
        drop(tx);
        assert!(
            err.starts_with(
                "recording to /dev/full stopped after 0 frames: No space left on device"
            ) && err.contains("those frames replay"),
            "{err}"
        );
    }

    #[test]
    fn fresh_points_are_the_suffix_the_previous_frame_lacked() {
        let series: Vec<Point> = [1, 2, 3, 3, 4].map(p).to_vec();
        assert_eq!(fresh(&series, None), &series[..]);
        let cursor = Cursor::of(&series[..3]);
        assert_eq!(
            fresh(&series, cursor),
            &series[3..],
            "the repeated 3 is new"
        );
        let cursor = Cursor::of(&series[..4]);
        assert_eq!(fresh(&series, cursor), &series[4..]);
        // The window slid past old points: still only the new ones.
        let cursor = Cursor::of(&series);
        let slid: Vec<Point> = [3, 4, 5, 6].map(p).to_vec();
        assert_eq!(fresh(&slid, cursor), &slid[2..]);
        assert_eq!(fresh(&[], cursor), &[] as &[Point]);
    }
}
