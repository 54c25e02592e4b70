//! Values to text. Every figure is cut, never rounded up: a lag of 59.996 s reads `59.99s`, not
//! `60.00s`, and the largest byte count reads `15.9 EiB`, which it is, not `16.0 EiB`.

use std::time::Duration;

/// A duration as a short figure, precise where it is small and at most two units where it is
/// large: `0s`, `850µs`, `3.2ms`, `42ms`, `1.2s`, `12s`, `2m05s`, `1h02m`, `3d04h`.
///
/// For waits, intervals, ages and timeouts. A lag has its own form ([`lag`]), with the
/// heartbeat's hundredths of a second.
#[must_use]
pub fn duration(d: Duration) -> String {
    let (us, ms, s) = (d.as_micros(), d.as_millis(), d.as_secs());
    if d.is_zero() {
        "0s".to_owned()
    } else if us == 0 {
        "<1µs".to_owned()
    } else if ms == 0 {
        format!("{us}µs")
    } else if ms < 10 {
        tenths(us / 100, "ms")
    } else if s == 0 {
        format!("{ms}ms")
    } else if s < 10 {
        tenths(ms / 100, "s")
    } else if s < 60 {
        format!("{s}s")
    } else {
        two_units(s)
    }
}

/// Whole seconds, as servers count them (`Seconds_Behind_Master`, `SQL_Delay`, a statement's
/// elapsed time): the same text as [`duration`], `0s`, `42s`, `2m05s`.
#[must_use]
pub fn secs(s: u64) -> String {
    duration(Duration::from_secs(s))
}

/// A lag in seconds as every table, pane, alert and export shows it: hundredths below a minute
/// (the heartbeat resolves fractions of a second), then as [`duration`]: `0.00s`, `12.40s`,
/// `1m00s`, `1h02m`. At most six characters below 100 days, so a `≥` still fits in seven.
#[must_use]
pub fn lag(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}.{:02}s", d.subsec_millis() / 10)
    } else {
        two_units(s)
    }
}

/// Binary units with one decimal, in integer arithmetic so no count loses precision: `512 B`,
/// `1.5 KiB`, `12.3 MiB`, up to `15.9 EiB` for `u64::MAX`.
#[must_use]
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let n = u128::from(n);
    let (mut scale, mut unit) = (1024_u128, 0_usize);
    while unit + 1 < UNITS.len() && n >= scale * 1024 {
        scale *= 1024;
        unit += 1;
    }
    let tenths = n * 10 / scale;
    let name = UNITS.get(unit).copied().unwrap_or("EiB");
    format!("{}.{} {name}", tenths / 10, tenths % 10)
}

/// A clock offset or difference in milliseconds, signed when it is not zero: `+620ms`, `-3ms`,
/// `+1.5s`, `0s`.
#[must_use]
pub fn offset_ms(ms: i64) -> String {
    let size = duration(Duration::from_millis(ms.unsigned_abs()));
    match ms {
        0 => size,
        1.. => format!("+{size}"),
        _ => format!("-{size}"),
    }
}

/// A count as a short figure, cut to one decimal past a thousand: `0`, `999`, `1.2k`, `34.5M`,
/// `1.8G` (counters that run for months: event groups applied, transactions retried).
#[must_use]
pub fn count(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1_000_000_000_000, "T"),
        (1_000_000_000, "G"),
        (1_000_000, "M"),
        (1_000, "k"),
    ];
    match UNITS.iter().find(|(scale, _)| n >= *scale) {
        Some((scale, unit)) => tenths(u128::from(n / (scale / 10)), unit),
        None => n.to_string(),
    }
}

/// A rate per second, cut to one decimal below ten: `0/s`, `<0.1/s`, `0.3/s`, `12/s`, `1.2k/s`;
/// a rate that is not a finite, non-negative number reads `?/s`.
#[must_use]
pub fn per_second(rate: f64) -> String {
    if !rate.is_finite() || rate < 0.0 {
        return "?/s".to_owned();
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "finite and non-negative, cut on purpose; past u64::MAX saturates"
    )]
    let tenths_of = (rate * 10.0) as u64;
    if rate == 0.0 {
        "0/s".to_owned()
    } else if tenths_of == 0 {
        "<0.1/s".to_owned()
    } else if tenths_of < 100 {
        tenths(u128::from(tenths_of), "/s")
    } else {
        format!("{}/s", count(tenths_of / 10))
    }
}

/// A share of work done that rests on an estimate (a row count from table statistics): whole
/// percent with a tilde, `~45 %`.
#[must_use]
pub fn approx_percent(pct: f64) -> String {
    format!("~{:.0} %", pct.clamp(0.0, 100.0))
}

/// When something will be done, rounded as an estimate deserves: whole seconds below 90 s,
/// whole minutes above (`~18s`, `~2m00s`, `~1h05m`).
#[must_use]
pub fn eta(d: Duration) -> String {
    let s = d.as_secs();
    let rounded = if s < 90 { s } else { (s + 30) / 60 * 60 };
    format!("~{}", secs(rounded))
}

/// Seconds of lag gained (positive) or lost (negative) per second, with two significant digits
/// where it is small: `2.3 s/s`, `0.45 s/s`, `-1.0 s/s`, `12 s/s`. Magnitude only: the words
/// around it ("catching up", "falling behind") say which way.
#[must_use]
pub fn lag_rate(s_per_s: f64) -> String {
    let size = s_per_s.abs();
    if !size.is_finite() {
        return "? s/s".to_owned();
    }
    if size < 1.0 {
        format!("{size:.2} s/s")
    } else if size < 10.0 {
        format!("{size:.1} s/s")
    } else {
        format!("{size:.0} s/s")
    }
}

/// Transactions per second, whole below a thousand, then in thousands with one decimal:
/// `0 trx/s`, `40 trx/s`, `1.2k trx/s`. Magnitude only.
#[must_use]
pub fn trx_rate(per_s: f64) -> String {
    let size = per_s.abs();
    if !size.is_finite() {
        "? trx/s".to_owned()
    } else if size < 1_000.0 {
        format!("{size:.0} trx/s")
    } else {
        format!("{:.1}k trx/s", size / 1_000.0)
    }
}

/// Bytes per second in [`bytes`]' units: `512 B/s`, `1.5 MiB/s`. Magnitude only.
#[must_use]
pub fn byte_rate(per_s: f64) -> String {
    if !per_s.is_finite() {
        return "? B/s".to_owned();
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a magnitude, cut to whole bytes; saturates at u64::MAX"
    )]
    let whole = per_s.abs() as u64;
    format!("{}/s", bytes(whole))
}

/// Bytes per hour in [`bytes`]' units, from a rate per second: `512 B/h`, `1.5 GiB/h`.
/// Magnitude only.
#[must_use]
pub fn byte_rate_per_hour(per_s: f64) -> String {
    if !per_s.is_finite() {
        return "? B/h".to_owned();
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a magnitude, cut to whole bytes; saturates at u64::MAX"
    )]
    let whole = (per_s.abs() * 3600.0) as u64;
    format!("{}/h", bytes(whole))
}

/// `n` tenths of `unit`, the decimal left out when it is zero: `1.2s`, `3s`.
fn tenths(n: u128, unit: &str) -> String {
    if n.is_multiple_of(10) {
        format!("{}{unit}", n / 10)
    } else {
        format!("{}.{}{unit}", n / 10, n % 10)
    }
}

/// The two largest units of a span of at least a minute: `2m05s`, `1h02m`, `3d04h`.
fn two_units(s: u64) -> String {
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    if h == 0 {
        format!("{m}m{:02}s", s % 60)
    } else if d == 0 {
        format!("{h}h{:02}m", m % 60)
    } else {
        format!("{d}d{:02}h", h % 24)
    }
}

/// A chart axis value with its unit and at most one decimal: `0.5s`, `30s`, `-60s`, `2.5m`,
/// `2h`. The TUI's lag chart and the report's SVG label their axes with it.
#[must_use]
pub fn axis_seconds(seconds: f64) -> String {
    let sign = if seconds < 0.0 { "-" } else { "" };
    let seconds = seconds.abs();
    let (value, unit) = if seconds < 120.0 {
        (seconds, "s")
    } else if seconds < 7200.0 {
        (seconds / 60.0, "m")
    } else {
        (seconds / 3600.0, "h")
    };
    let text = format!("{value:.1}");
    format!("{sign}{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    const fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn durations_are_short_and_never_rounded_up() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(1), "<1µs"),
            (Duration::from_nanos(999), "<1µs"),
            (Duration::from_micros(1), "1µs"),
            (Duration::from_micros(850), "850µs"),
            (Duration::from_micros(999), "999µs"),
            (ms(1), "1ms"),
            (Duration::from_micros(3_250), "3.2ms"),
            (Duration::from_micros(9_999), "9.9ms"),
            (ms(10), "10ms"),
            (ms(850), "850ms"),
            (ms(999), "999ms"),
            (s(1), "1s"),
            (ms(1_250), "1.2s"),
            (ms(9_999), "9.9s"),
            (s(10), "10s"),
            (ms(59_999), "59s"),
            (s(60), "1m00s"),
            (s(125), "2m05s"),
            (s(3_599), "59m59s"),
            (s(3_600), "1h00m"),
            (s(3_720), "1h02m"),
            (s(86_399), "23h59m"),
            (s(86_400), "1d00h"),
            (s(3 * 86_400 + 4 * 3_600 + 59), "3d04h"),
            (Duration::MAX, "213503982334601d07h"),
        ];
        for (d, want) in cases {
            assert_eq!(duration(d), want, "{d:?}");
        }
        assert_eq!(
            [0, 42, 125, 3_600].map(secs),
            ["0s", "42s", "2m05s", "1h00m"]
        );
    }

    #[test]
    fn lags_keep_hundredths_below_a_minute() {
        let cases = [
            (Duration::ZERO, "0.00s"),
            (Duration::from_micros(300), "0.00s"),
            (ms(9), "0.00s"),
            (ms(120), "0.12s"),
            (ms(12_400), "12.40s"),
            (ms(59_996), "59.99s"),
            (s(60), "1m00s"),
            (ms(123_450), "2m03s"),
            (s(7_380), "2h03m"),
            (s(86_399), "23h59m"),
            (s(99 * 86_400 + 23 * 3_600), "99d23h"),
        ];
        for (d, want) in cases {
            assert_eq!(lag(d), want, "{d:?}");
        }
        for n in [0, 59, 60, 3_599, 3_600, 86_399, 100 * 86_400 - 1] {
            assert!(lag(s(n)).chars().count() <= 6, "{}", lag(s(n)));
        }
    }

    #[test]
    fn bytes_in_binary_units_cut_to_a_tenth() {
        let cases = [
            (0, "0 B"),
            (512, "512 B"),
            (1_023, "1023 B"),
            (1_024, "1.0 KiB"),
            (1_536, "1.5 KiB"),
            (17_612, "17.1 KiB"),
            (1_048_575, "1023.9 KiB"),
            (6 * 1_024 * 1_024, "6.0 MiB"),
            (12_900_000, "12.3 MiB"),
            (1 << 30, "1.0 GiB"),
            (1 << 40, "1.0 TiB"),
            (1 << 50, "1.0 PiB"),
            (1 << 60, "1.0 EiB"),
            (u64::MAX, "15.9 EiB"),
        ];
        for (n, want) in cases {
            assert_eq!(bytes(n), want, "{n}");
        }
    }

    #[test]
    fn rates_and_estimates() {
        let etas = [s(18), s(89), s(95), s(130), s(3_900), s(7_500)].map(eta);
        assert_eq!(
            etas,
            ["~18s", "~1m29s", "~2m00s", "~2m00s", "~1h05m", "~2h05m"]
        );
        assert_eq!(
            [2.34, -0.456, -1.0, 12.6, f64::NAN].map(lag_rate),
            ["2.3 s/s", "0.46 s/s", "1.0 s/s", "13 s/s", "? s/s"]
        );
        assert_eq!(
            [0.2, 40.4, -40.0, 1_234.0].map(trx_rate),
            ["0 trx/s", "40 trx/s", "40 trx/s", "1.2k trx/s"]
        );
        assert_eq!(
            [512.9, 1_572_864.0].map(byte_rate),
            ["512 B/s", "1.5 MiB/s"]
        );
        assert_eq!(
            [0.1, -1_000.0, 1_000_000.0, f64::NAN].map(byte_rate_per_hour),
            ["360 B/h", "3.4 MiB/h", "3.3 GiB/h", "? B/h"]
        );
    }

    #[test]
    fn offsets_carry_their_sign() {
        let got = [0, 620, -3, 1_500, i64::MIN].map(offset_ms);
        assert_eq!(got, ["0s", "+620ms", "-3ms", "+1.5s", "-106751991167d07h"]);
    }

    #[test]
    fn counts_and_rates_are_short_and_cut() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1k");
        assert_eq!(count(1_299), "1.2k");
        assert_eq!(count(34_567_890), "34.5M");
        assert_eq!(count(u64::MAX), "18446744T");
        assert_eq!(per_second(0.0), "0/s");
        assert_eq!(per_second(0.04), "<0.1/s");
        assert_eq!(per_second(0.35), "0.3/s");
        assert_eq!(per_second(12.0), "12/s");
        assert_eq!(per_second(1_250.0), "1.2k/s");
        assert_eq!(per_second(f64::NAN), "?/s");
        assert_eq!(per_second(-1.0), "?/s");
    }
}
