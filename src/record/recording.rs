//! The reading side: a recording checked line by line, its frames rebuilt on demand and found by
//! time.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{FORMAT_VERSION, Header, ReadFrame};
use crate::store::Snapshot;
use crate::store::series::Point;

/// A header is a hundred-odd bytes: a longer first line is not one (and is not read whole).
const MAX_HEADER: u64 = 64 * 1024;

const MAKE_ONE: &str = "make one with: rwtop --record FILE";

/// The oldest format this rwtop reads: format 1's nodes are flat, and are read into today's
/// parts (`store/snapshot_wire.rs`).
const OLDEST_READ: u64 = 1;

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot read {}: {error}: check the path given to rwtop replay", path.display())]
    Open {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{} is empty: not an rwtop recording ({MAKE_ONE})", path.display())]
    Empty { path: PathBuf },
    #[error("{} line 1: not an rwtop recording ({detail}); {MAKE_ONE}", path.display())]
    NotARecording { path: PathBuf, detail: String },
    #[error(
        "{}: recording format {found}, made by rwtop {recorded_by}; this rwtop ({}) reads \
         formats {OLDEST_READ} to {FORMAT_VERSION}: replay it with rwtop {recorded_by}",
        path.display(),
        env!("CARGO_PKG_VERSION")
    )]
    Version {
        path: PathBuf,
        found: u64,
        recorded_by: String,
    },
    #[error(
        "{} line {line}: damaged frame: {detail}; to replay the frames before it: \
         head -n {} {} > part.jsonl",
        path.display(),
        line - 1,
        path.display()
    )]
    BadFrame {
        path: PathBuf,
        line: usize,
        detail: String,
    },
    #[error(
        "{} holds a header but no frame: rwtop stopped before its first frame was written",
        path.display()
    )]
    NoFrames { path: PathBuf },
}

/// One frame as kept in memory: the snapshot without its series, and where each channel's
/// series ends in its point log and how long it is (by node, then channel index; `None`: the
/// series stayed in the snapshot, as an older recording's second channel's did).
struct Stored {
    snapshot: Snapshot,
    charts: Vec<Vec<Option<(usize, usize)>>>,
    /// Where its lists are in `lists`; `None` when the frame carried them whole.
    lists: Option<super::lists::Windows>,
}

/// A recording read and checked whole. Frames are numbered from 0; their time is their offset
/// from the first frame's.
pub struct Recording {
    path: PathBuf,
    header: Header,
    frames: Vec<Stored>,
    /// Every chart point recorded, per node, oldest first.
    logs: HashMap<String, Vec<Point>>,
    /// Every alert-log entry, test read and drain action recorded.
    lists: super::lists::Logs,
    cut_short: Option<usize>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .field("header", &self.header)
            .field("frames", &self.frames.len())
            .field("cut_short", &self.cut_short)
            .finish_non_exhaustive()
    }
}

/// Reads one line into `line` (cleared first); `Ok(false)` at the end of the file.
fn next_line(reader: &mut impl BufRead, line: &mut String) -> std::io::Result<bool> {
    line.clear();
    Ok(reader.read_line(line)? > 0)
}

fn header(path: &Path, reader: &mut impl BufRead) -> Result<Header, ReplayError> {
    let not_one = |detail: String| ReplayError::NotARecording {
        path: path.to_owned(),
        detail,
    };
    let mut line = String::new();
    match reader.by_ref().take(MAX_HEADER).read_line(&mut line) {
        Ok(0) => {
            return Err(ReplayError::Empty {
                path: path.to_owned(),
            });
        }
        Ok(_) => {}
        Err(e) => return Err(not_one(format!("not text: {e}"))),
    }
    let value: serde_json::Value = serde_json::from_str(&line)
        .map_err(|e| not_one(format!("its first line is not a JSON header: {e}")))?;
    let Some(found) = value.get("rwtop_recording") else {
        return Err(not_one(
            "its first line has no \"rwtop_recording\" key".to_owned(),
        ));
    };
    let recorded_by = value
        .get("rwtop_version")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("?")
        .to_owned();
    match found.as_u64() {
        Some(v) if (OLDEST_READ..=u64::from(FORMAT_VERSION)).contains(&v) => {}
        Some(found) => {
            return Err(ReplayError::Version {
                path: path.to_owned(),
                found,
                recorded_by,
            });
        }
        None => return Err(not_one(format!("format version {found} is not a number"))),
    }
    serde_json::from_value(value).map_err(|e| not_one(format!("a bad header: {e}")))
}

impl Recording {
    /// Reads and checks the whole file. A last line without its newline (rwtop stopped while
    /// writing it) is left out and reported by [`Recording::cut_short`]; any other bad line is
    /// an error naming the file and the line.
    pub fn open(path: &Path) -> Result<Self, ReplayError> {
        let file = File::open(path).map_err(|error| ReplayError::Open {
            path: path.to_owned(),
            error,
        })?;
        let mut reader = BufReader::new(file);
        let header = header(path, &mut reader)?;
        let mut recording = Self {
            path: path.to_owned(),
            header,
            frames: Vec::new(),
            logs: HashMap::new(),
            lists: super::lists::Logs::default(),
            cut_short: None,
        };
        let mut line = String::new();
        let mut number = 1;
        loop {
            let more = next_line(&mut reader, &mut line);
            number += 1;
            let bad = |detail: String| ReplayError::BadFrame {
                path: path.to_owned(),
                line: number,
                detail,
            };
            match more {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => return Err(bad(format!("not text: {e}"))),
            }
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<ReadFrame>(&line) {
                Ok(frame) => recording.push(frame).map_err(bad)?,
                Err(_) if !line.ends_with('\n') => {
                    recording.cut_short = Some(number);
                    break;
                }
                Err(e) => return Err(bad(recording.frame_error(&e))),
            }
        }
        if recording.frames.is_empty() {
            return Err(ReplayError::NoFrames {
                path: path.to_owned(),
            });
        }
        Ok(recording)
    }

    /// Why a complete line did not read, with the versions when they differ (the snapshot's
    /// layout is that of the rwtop that recorded it).
    fn frame_error(&self, e: &serde_json::Error) -> String {
        let ours = env!("CARGO_PKG_VERSION");
        if self.header.rwtop_version == ours {
            e.to_string()
        } else {
            format!(
                "{e} (recorded by rwtop {}, this is {ours})",
                self.header.rwtop_version
            )
        }
    }

    fn push(&mut self, frame: ReadFrame) -> Result<(), String> {
        let ReadFrame {
            mut snapshot,
            mut charts,
            lists,
        } = frame;
        if let Some(last) = self.frames.last()
            && snapshot.uptime < last.snapshot.uptime
        {
            return Err(format!(
                "its snapshot ({:?} after start) is older than the one before it ({:?}): \
                     frames from two runs were joined",
                snapshot.uptime, last.snapshot.uptime
            ));
        }
        let mut stored = Vec::with_capacity(snapshot.nodes.len());
        for node in &mut snapshot.nodes {
            let mut channels = Vec::with_capacity(node.channels.len());
            for index in 0..node.channels.len() {
                let key = super::chart_key(node, index).into_owned();
                let first = node.replica_index() == Some(index);
                let Some(chart) = charts.remove(&key) else {
                    if first {
                        return Err(format!("no chart for the replica {key}"));
                    }
                    channels.push(None);
                    continue;
                };
                node.channels[index].series = crate::store::series::Chart::default();
                let log = self.logs.entry(key.clone()).or_default();
                log.extend(chart.new_points);
                if chart.len > log.len() {
                    return Err(format!(
                        "the chart of {key} has {} points but only {} were recorded",
                        chart.len,
                        log.len()
                    ));
                }
                channels.push(Some((log.len(), chart.len)));
            }
            stored.push(channels);
        }
        let lists = lists.map(|l| self.lists.push(l)).transpose()?;
        self.frames.push(Stored {
            snapshot,
            charts: stored,
            lists,
        });
        Ok(())
    }

    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Frames, at least one.
    #[must_use]
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Never true for an opened recording; here for clippy's `len_without_is_empty`.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The line number of a last line cut short (left out), when rwtop stopped mid-write.
    #[must_use]
    pub fn cut_short(&self) -> Option<usize> {
        self.cut_short
    }

    /// The warning to show about a cut-short last line.
    #[must_use]
    pub fn warning(&self) -> Option<String> {
        self.cut_short.map(|line| {
            format!(
                "{} line {line} was cut short (rwtop stopped, or the disk filled up, while \
                 writing it): replaying the {} frames before it",
                self.path.display(),
                self.frames.len()
            )
        })
    }

    /// Frame `index`'s time from the first frame (zero past the end).
    #[must_use]
    pub fn offset(&self, index: usize) -> Duration {
        match (self.frames.first(), self.frames.get(index)) {
            (Some(first), Some(frame)) => {
                frame.snapshot.uptime.saturating_sub(first.snapshot.uptime)
            }
            _ => Duration::ZERO,
        }
    }

    /// From the first frame to the last.
    #[must_use]
    pub fn duration(&self) -> Duration {
        self.offset(self.frames.len().saturating_sub(1))
    }

    /// The frame shown at `offset`: the last one at or before it.
    #[must_use]
    pub fn index_at(&self, offset: Duration) -> usize {
        let first = self
            .frames
            .first()
            .map_or(Duration::ZERO, |f| f.snapshot.uptime);
        self.frames
            .partition_point(|f| f.snapshot.uptime.saturating_sub(first) <= offset)
            .saturating_sub(1)
    }

    /// Frame `index` as it was recorded, each replica's series rebuilt.
    #[must_use]
    pub fn frame(&self, index: usize) -> Option<Snapshot> {
        let stored = self.frames.get(index)?;
        let mut snapshot = stored.snapshot.clone();
        if let Some(windows) = stored.lists {
            self.lists.fill(&mut snapshot, windows);
        }
        for (node, charts) in snapshot.nodes.iter_mut().zip(&stored.charts) {
            for (index, chart) in charts.iter().enumerate() {
                let Some((end, len)) = chart else {
                    continue;
                };
                let key = super::chart_key(node, index);
                let points = self
                    .logs
                    .get(key.as_ref())
                    .and_then(|log| log.get(end - len..*end))
                    .unwrap_or_default();
                if let Some(channel) = node.channels.get_mut(index) {
                    channel.series = crate::store::series::Chart::from(points);
                }
            }
        }
        Some(snapshot)
    }
}

#[cfg(test)]
pub(crate) mod tests;
