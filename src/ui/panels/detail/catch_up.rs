//! The catch-up in the TUI: the replica table's cell and the detail pane's line, where the
//! channel stands against its lag and the two rates behind it (`store/apply_rate.rs` works
//! them out).
//!
//! `catch-up catching up 1.1 s/s, ~11s · apply 219 trx/s · source 104 trx/s`, or with bytes
//! for a replica without GTIDs; a caught-up one says only its apply rate (`catch-up caught up ·
//! applying 50 trx/s`); an unknown rate reads `?`, never 0, and with no rate at all the line
//! says only `catch-up unknown`.

use ratatui::style::Style;
use ratatui::text::Line;
#[cfg(test)]
use std::time::Duration;

use super::wrap::{Token, wrap};
use crate::store::ReplicaView;
use crate::store::apply_rate::{CatchUp, CatchUpState};
use crate::ui::Theme;
use crate::units;

/// The style of a catch-up's words, the same in the table.
pub(crate) fn style(c: &CatchUp, t: &Theme) -> Style {
    match c.state {
        CatchUpState::CaughtUp => t.muted,
        CatchUpState::CatchingUp => t.ok,
        CatchUpState::FallingBehind => t.critical,
        CatchUpState::NotShrinking => t.warning,
        CatchUpState::Unknown => t.unknown,
    }
}

/// The catch-up in the replica table's 16 columns: `▼1.1 s/s ~11s` (catching up: how fast the
/// lag shrinks, how long to go), `▲104 trx/s` (falling behind by that much; `▲1.0 s/s` without
/// the rates), `not shrinking`, `caught up`, `?`. The pane's line says it in words.
pub(crate) fn cell(c: &CatchUp) -> String {
    match c.state {
        CatchUpState::CatchingUp => match (c.lag_change_s_per_s, c.eta) {
            (Some(rate), Some(eta)) => format!("▼{} {}", units::lag_rate(rate), units::eta(eta)),
            _ => "▼".to_owned(),
        },
        CatchUpState::FallingBehind => match (c.deficit_trx_per_s(), c.lag_change_s_per_s) {
            (Some(d), _) if d > 0.0 => format!("▲{}", units::trx_rate(d)),
            (_, Some(rate)) => format!("▲{}", units::lag_rate(rate)),
            _ => "▲".to_owned(),
        },
        CatchUpState::NotShrinking => "not shrinking".to_owned(),
        CatchUpState::CaughtUp => "caught up".to_owned(),
        CatchUpState::Unknown => "?".to_owned(),
    }
}

pub(super) fn lines(r: &ReplicaView, t: &Theme, width: usize, indent: usize) -> Vec<Line<'static>> {
    let c = &r.catch_up;
    let mut tokens = vec![Token::new("catch-up", t.muted)];
    tokens.push(match c.state {
        CatchUpState::Unknown => Token::new("unknown", t.unknown),
        _ => Token::new(c.text(), style(c, t)),
    });
    if matches!(
        c.state,
        CatchUpState::FallingBehind | CatchUpState::NotShrinking
    ) {
        tokens.push(Token::new("· at this rate never", t.muted));
    }
    let rate = |label: &str, value: Option<f64>, text: fn(f64) -> String| match value {
        Some(v) => Token::new(format!("· {label} "), t.muted).and(text(v), t.text),
        None => Token::new(format!("· {label} "), t.muted).and("?", t.unknown),
    };
    let trx = c.apply_trx_per_s.is_some() || c.source_trx_per_s.is_some();
    let bytes = c.apply_bytes_per_s.is_some() || c.source_bytes_per_s.is_some();
    if !trx && !bytes {
        // Nothing measured yet (or a recording from before catch-up existed).
    } else if c.state == CatchUpState::CaughtUp {
        // Nothing to close: the apply rate alone, so a narrow pane keeps it on one line.
        if trx {
            tokens.push(rate("applying", c.apply_trx_per_s, units::trx_rate));
        } else {
            tokens.push(rate("applying", c.apply_bytes_per_s, units::byte_rate));
        }
    } else if trx {
        tokens.push(rate("apply", c.apply_trx_per_s, units::trx_rate));
        tokens.push(rate("source", c.source_trx_per_s, units::trx_rate));
    } else {
        tokens.push(rate("apply", c.apply_bytes_per_s, units::byte_rate));
        tokens.push(rate("source", c.source_bytes_per_s, units::byte_rate));
    }
    wrap(tokens, width, indent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testkit::{Topo, catching_up, falling_behind};

    fn text(r: &ReplicaView, width: usize) -> Vec<String> {
        let lines = lines(r, &Theme::builtin(), width, 2);
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_state_in_words_then_both_rates_wrapped_to_the_pane() {
        let mut topo = Topo::new();
        topo.replica_mut("r1", |r| {
            r.catch_up = catching_up(1.1, Duration::from_secs(11));
        });
        topo.replica_mut("r2", |r| r.catch_up = falling_behind(0.0, 1.0));
        let s = topo.snapshot;
        let replica = |name: &str| s.node(name).and_then(|n| n.replica()).cloned();
        let (Some(r1), Some(r2)) = (replica("r1"), replica("r2")) else {
            panic!("no r1 or r2")
        };
        assert_eq!(
            text(&r1, 80),
            ["catch-up catching up 1.1 s/s, ~11s · apply 105 trx/s · source 50 trx/s"]
        );
        assert_eq!(
            text(&r2, 46),
            [
                "catch-up falling behind 50 trx/s",
                "  · at this rate never · apply 0 trx/s",
                "  · source 50 trx/s"
            ]
        );
        let mut unknown = r2.clone();
        unknown.catch_up = CatchUp::default();
        assert_eq!(text(&unknown, 46), ["catch-up unknown"]);
        // Bytes only, for a replica without GTIDs.
        let mut bytes = r2;
        bytes.catch_up.apply_trx_per_s = None;
        bytes.catch_up.source_trx_per_s = None;
        bytes.catch_up.apply_bytes_per_s = Some(2_048.0);
        assert_eq!(
            text(&bytes, 90),
            ["catch-up falling behind 1.0 s/s · at this rate never · apply 2.0 KiB/s · source ?"]
        );
        let styled = lines(&bytes, &Theme::builtin(), 80, 2);
        let words = styled
            .first()
            .and_then(|l| l.spans.iter().find(|s| s.content.starts_with("falling")))
            .map(|s| s.style);
        assert_eq!(words, Some(Theme::builtin().critical));
    }
}
