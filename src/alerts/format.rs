//! How evidence values read: every alert shows numbers the same way, so an operator can compare
//! "SBM 0 s" with "heartbeat lag 12.40 s" at a glance.

use std::time::Duration;

use crate::mysql::{IoRunning, ThreadError};
use crate::store::lag::Lag;

/// Longest piece of server text (an error message, a statement) quoted in a cause line, which
/// must stay one line.
const QUOTE_CHARS: usize = 100;

/// Seconds with two decimals: the heartbeat's resolution is a fraction of a second.
pub fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

pub fn secs_f64(s: f64) -> String {
    format!("{s:.2} s")
}

/// A lag figure with its trust level: a lower bound reads "≥".
pub fn lag(lag: &Lag) -> String {
    match lag {
        Lag::Exact { lag } => secs(*lag),
        Lag::AtLeast { lag, .. } => format!("≥ {}", secs(*lag)),
        Lag::Unknown { reason } => format!("unknown ({reason})"),
    }
}

/// `Seconds_Behind_Master` as the server reported it: whole seconds, or NULL.
pub fn sbm(sbm: Option<u64>) -> String {
    sbm.map_or_else(|| "NULL".to_owned(), |s| format!("{s} s"))
}

pub fn io_running(io: IoRunning) -> &'static str {
    match io {
        IoRunning::Yes => "Yes",
        IoRunning::Connecting => "Connecting",
        IoRunning::No => "No",
    }
}

pub fn thread_error(e: &ThreadError) -> String {
    match &e.timestamp {
        Some(at) => format!("{}: {} (at {at})", e.errno, quote(&e.message)),
        None => format!("{}: {}", e.errno, quote(&e.message)),
    }
}

pub fn trx(n: u64) -> String {
    format!("{n} trx")
}

/// Binary units a DBA reads at a glance: `512 B`, `17.2 KiB`, `495.2 MiB`, `1.5 GiB`.
#[expect(clippy::cast_precision_loss, reason = "display only, one decimal")]
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

pub fn offset_ms(ms: i64) -> String {
    format!("{ms:+} ms")
}

/// Elapsed time the way processlists and stopwatches read: `00:41`, `1:02:03`.
pub fn clock(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m:02}:{s:02}")
    }
}

/// An estimate, rounded so it does not look more precise than it is.
pub fn eta(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..90 => format!("~{s} s"),
        90..5400 => format!("~{} min", (s + 30) / 60),
        _ => format!("~{} h {:02} min", s / 3600, s / 60 % 60),
    }
}

/// One line of server text, cut short: causes are single lines.
pub fn quote(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= QUOTE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(QUOTE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_like_a_dba_expects() {
        assert_eq!(secs(Duration::from_millis(12_400)), "12.40 s");
        assert_eq!(sbm(Some(0)), "0 s");
        assert_eq!(sbm(None), "NULL");
        assert_eq!(clock(41), "00:41");
        assert_eq!(clock(3723), "1:02:03");
        assert_eq!(eta(Duration::from_secs(45)), "~45 s");
        assert_eq!(eta(Duration::from_secs(130)), "~2 min");
        assert_eq!(eta(Duration::from_secs(3900)), "~65 min");
        assert_eq!(eta(Duration::from_secs(7500)), "~2 h 05 min");
        assert_eq!(offset_ms(620), "+620 ms");
        assert_eq!(offset_ms(-3), "-3 ms");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(17_612), "17.2 KiB");
        assert_eq!(bytes(519_235_732), "495.2 MiB");
        assert_eq!(quote("first\nsecond").as_str(), "first");
        assert_eq!(quote(&"x".repeat(300)).chars().count(), QUOTE_CHARS);
    }
}
