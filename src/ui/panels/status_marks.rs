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

/// A Galera member's state in a word of at most 8 characters, in the colour of what it means
/// for reads: `synced` serves, `donor` and `joined` serve stale reads, `non-Prim` and anything
/// not ready serves none.
pub(crate) fn member_state(
    g: &crate::mysql::galera::GaleraStatus,
    theme: &Theme,
) -> (&'static str, Style) {
    use crate::mysql::galera::{Component, MemberState};
    if g.component != Component::Primary {
        return ("non-Prim", theme.critical);
    }
    match g.state {
        MemberState::Synced if g.ready == Some(true) => ("synced", theme.ok),
        MemberState::Synced => ("not rdy", theme.critical),
        MemberState::Donor => ("donor", theme.warning),
        MemberState::Joined => ("joined", theme.warning),
        MemberState::Joining => ("joining", theme.warning),
        MemberState::Initialized => ("init", theme.critical),
        MemberState::Other => ("?", theme.unknown),
    }
}

/// `⬡ rwtop-galera 2/3`: a Galera cluster's name and its members in a primary component
/// against the members found, the hexagon in the colour of its quorum (lost at half or fewer);
/// ` SPLIT` when primary components disagree.
pub(crate) fn cluster_mark(
    c: &crate::store::cluster::ClusterView,
    theme: &Theme,
) -> [Span<'static>; 2] {
    let style = if c.split || c.in_primary.len() * 2 <= c.expected_size {
        theme.critical
    } else if c.in_primary.len() < c.expected_size {
        theme.warning
    } else {
        theme.ok
    };
    let split = if c.split { " SPLIT" } else { "" };
    [
        Span::styled("⬡ ", style),
        Span::styled(
            format!(
                "{} {}/{}{split}",
                c.name,
                c.in_primary.len(),
                c.expected_size
            ),
            theme.title,
        ),
    ]
}
