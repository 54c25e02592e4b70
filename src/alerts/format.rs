//! How evidence values read: numbers in the units every panel uses (`crate::units`), so an
//! operator can compare "SBM 0s" with "heartbeat lag 12.40s" at a glance; here only what is
//! particular to alerts (NULL, unknown with its reason, estimates, quoted server text).

use std::time::Duration;

use crate::mysql::{IoRunning, ThreadError};
use crate::store::lag::Lag;
use crate::units;

/// Longest piece of server text (an error message, a statement) quoted in a cause line, which
/// must stay one line.
const QUOTE_CHARS: usize = 100;

/// A threshold from the settings (seconds as a float), as lags read.
pub fn lag_secs(s: f64) -> String {
    units::lag(Duration::try_from_secs_f64(s).unwrap_or_default())
}

/// A lag figure with its trust level: a lower bound reads "≥", an unknown one gives its reason.
pub fn lag(lag: &Lag) -> String {
    match lag {
        Lag::Unknown { reason } => format!("unknown ({reason})"),
        known => known.text().unwrap_or_default(),
    }
}

/// `Seconds_Behind_Master` as the server reported it: whole seconds, or NULL.
pub fn sbm(sbm: Option<u64>) -> String {
    sbm.map_or_else(|| "NULL".to_owned(), units::secs)
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
        assert_eq!(sbm(Some(0)), "0s");
        assert_eq!(sbm(None), "NULL");
        assert_eq!(lag_secs(1.5), "1.50s");
        assert_eq!(lag_secs(-1.0), "0.00s");
        let unknown = Lag::Unknown {
            reason: "no heartbeat written yet".to_owned(),
        };
        assert_eq!(lag(&unknown), "unknown (no heartbeat written yet)");
        let bound = Lag::AtLeast {
            lag: Duration::from_secs(5),
            upper: None,
        };
        assert_eq!(lag(&bound), "≥5.00s");
        assert_eq!(quote("first\nsecond").as_str(), "first");
        assert_eq!(quote(&"x".repeat(300)).chars().count(), QUOTE_CHARS);
    }
}
