//! The marks of a node's status that several panels draw: a replica's lag and its
//! `Seconds_Behind_Source` under one colour rule, and a node's connection state as one glyph per
//! state, so the same value never reads two ways on two panels.

use ratatui::style::Style;
use ratatui::text::Span;

use crate::poll::ConnState;
use crate::store::lag::Lag;
use crate::ui::Theme;
use crate::units;

/// Lag and SBM thresholds shared by every panel: under a second is healthy, under ten is worth
/// watching, beyond that reads are visibly stale.
pub(crate) fn lag_style(ms: u128, theme: &Theme) -> Style {
    match ms {
        0..1_000 => theme.ok,
        1_000..10_000 => theme.warning,
        _ => theme.critical,
    }
}

/// Heartbeat lag now: exact, a lower bound (`≥`), or `?` when it cannot be told.
pub(crate) fn lag_span(lag: &Lag, theme: &Theme) -> Span<'static> {
    match (lag.text(), lag.value()) {
        (Some(text), Some(d)) => Span::styled(text, lag_style(d.as_millis(), theme)),
        _ => Span::styled("?", theme.unknown),
    }
}

/// `Seconds_Behind_Source` as the server said it; NULL (a stopped thread) stays NULL.
pub(crate) fn sbm_span(sbm: Option<u64>, theme: &Theme) -> Span<'static> {
    match sbm {
        Some(s) => Span::styled(
            units::secs(s),
            lag_style(u128::from(s).saturating_mul(1_000), theme),
        ),
        None => Span::styled("NULL", theme.unknown),
    }
}

/// One glyph per connection state, distinct in shape as well as colour.
pub(crate) fn conn_glyph(conn: &ConnState, theme: &Theme) -> Span<'static> {
    match conn {
        ConnState::Up => Span::styled("●", theme.ok),
        ConnState::Connecting => Span::styled("◌", theme.unknown),
        ConnState::Retrying { .. } => Span::styled("◐", theme.warning),
        ConnState::Down { .. } => Span::styled("✖", theme.critical),
    }
}
