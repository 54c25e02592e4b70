//! Reports from a recording (`rwtop report RECORDING`): its frames walked through the same
//! [`Detector`] and [`Gatherer`] as the live view, or one window given by its bounds.

use std::path::PathBuf;
use std::time::Duration;

use super::ReportSettings;
use super::facts::{Facts, Gatherer};
use super::window::{Bounds, Change, Detector, Opened};
use crate::record::Recording;
use crate::units;

/// A window given by hand: offsets from the recording's first frame (either end open: the
/// recording's own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub from: Option<Duration>,
    pub to: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    #[error(
        "{}: no DDL was seen running in its {length} ({frames} frames), so no window opened by \
         itself; give one with --from T --to T (offsets such as 90s, or UTC times such as \
         {example})",
        path.display()
    )]
    NoWindow {
        path: PathBuf,
        length: String,
        frames: usize,
        example: String,
    },
    #[error(
        "{}: the window {from} – {to} holds no lag reading (the recording runs from 0s to \
         {length}); give --from and --to inside it, --from before --to",
        path.display()
    )]
    NoData {
        path: PathBuf,
        from: String,
        to: String,
        length: String,
    },
    #[error(
        "{what} {}: expected an offset into the recording (90s, 2m, 1h) or a UTC time of \
         day (12:03:05)",
        units::quoted(text)
    )]
    BadTime { what: &'static str, text: String },
}

/// `--from`/`--to` as written: an offset (`90s`, `2m`) or a UTC time of day (`12:03:05`, as the
/// replay's footer shows it), turned into an offset from the recording's first frame. A time
/// before the first frame's is taken as the next day's (a recording over midnight).
pub fn parse_time(
    what: &'static str,
    text: &str,
    recording: &Recording,
) -> Result<Duration, OfflineError> {
    let bad = || OfflineError::BadTime {
        what,
        text: text.to_owned(),
    };
    if let Ok(time) = chrono::NaiveTime::parse_from_str(text.trim(), "%H:%M:%S") {
        let first = recording.frame(0).ok_or_else(bad)?.taken_at;
        let mut at = first.date_naive().and_time(time).and_utc();
        if at < first - chrono::Duration::seconds(1) {
            at += chrono::Duration::days(1);
        }
        return Ok((at - first).to_std().unwrap_or_default());
    }
    if text.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    units::parse_duration(text).map_err(|_| bad())
}

/// Every window in `recording`: the one `span` gives, or each the detector finds.
pub fn from_recording(
    recording: &Recording,
    span: Option<Span>,
    settings: &ReportSettings,
) -> Result<Vec<Facts>, OfflineError> {
    let first = recording.frame(0).map_or(Duration::ZERO, |f| f.uptime);
    let Some(span) = span else {
        return found(recording, settings);
    };
    let length = recording.duration();
    let from = first + span.from.unwrap_or(Duration::ZERO);
    let to = first + span.to.unwrap_or(length);
    let no_data = || OfflineError::NoData {
        path: recording.path().to_owned(),
        from: units::duration(from.saturating_sub(first)),
        to: units::duration(to.saturating_sub(first)),
        length: units::duration(length),
    };
    if to <= from {
        return Err(no_data());
    }
    let mut gatherer = Gatherer::new(settings.clone(), from);
    let mut frames = 0;
    for index in 0..recording.len() {
        let Some(snapshot) = recording.frame(index) else {
            continue;
        };
        if snapshot.uptime >= from && snapshot.uptime <= to {
            gatherer.observe(&snapshot);
            frames += 1;
        }
    }
    let facts = gatherer.finish(Bounds {
        from,
        to,
        by: Opened::Mark,
        cut_short: false,
    });
    if frames == 0 || facts.replicas.iter().all(|r| r.max.is_none()) {
        return Err(no_data());
    }
    Ok(vec![facts])
}

fn found(recording: &Recording, settings: &ReportSettings) -> Result<Vec<Facts>, OfflineError> {
    let mut detector = Detector::new(settings.clone());
    let mut open: Option<Gatherer> = None;
    let mut windows = Vec::new();
    let mut last = Duration::ZERO;
    for index in 0..recording.len() {
        let Some(snapshot) = recording.frame(index) else {
            continue;
        };
        last = snapshot.uptime;
        match detector.observe(&snapshot) {
            Some(Change::Opened { from, .. }) => {
                open = Some(Gatherer::new(settings.clone(), from));
            }
            Some(Change::Closed(bounds)) => {
                if let Some(mut gatherer) = open.take() {
                    gatherer.observe(&snapshot);
                    windows.push(gatherer.finish(bounds));
                }
                continue;
            }
            None => {}
        }
        if let Some(gatherer) = &mut open {
            gatherer.observe(&snapshot);
        }
    }
    if let (Some(gatherer), Some(bounds)) = (open, detector.finish(last)) {
        windows.push(gatherer.finish(bounds));
    }
    if windows.is_empty() {
        let example = recording
            .frame(0)
            .map(|f| f.taken_at.format("%H:%M:%S").to_string())
            .unwrap_or_default();
        return Err(OfflineError::NoWindow {
            path: recording.path().to_owned(),
            length: units::duration(recording.duration()),
            frames: recording.len(),
            example,
        });
    }
    Ok(windows)
}
