//! The header's semi-sync marker, one per primary whose source side is loaded: `semi-sync ON
//! 2/1 acks p99 1.2ms` (acking replicas against those required, the ACK wait's P99 over the
//! chosen window), `semi-sync FELL BACK 0/1 acks`, `semi-sync off`. Compact, `ss ON 2/1`, where
//! the line is short of room.

use ratatui::text::Span;

use crate::store::semisync::{SemiSyncState, SemiSyncView};
use crate::store::windows::Window;
use crate::store::{Role, Snapshot};
use crate::ui::Theme;
use crate::units;

/// ` │ semi-sync …` for every primary that has a source side, named when there are several.
pub(super) fn markers(
    snap: &Snapshot,
    window: Window,
    theme: &Theme,
    compact: bool,
) -> Vec<Span<'static>> {
    let primaries: Vec<(&str, &SemiSyncView)> = snap
        .nodes
        .iter()
        .filter(|n| n.role == Role::Primary)
        .filter_map(|n| Some((n.name.as_str(), n.semisync()?)))
        .filter(|(_, v)| v.state.is_some())
        .collect();
    let named = primaries.len() > 1;
    let mut spans = Vec::new();
    for (name, v) in primaries {
        spans.push(Span::styled(" │ ", theme.muted));
        if named {
            spans.push(Span::styled(format!("{name} "), theme.text));
        }
        spans.extend(marker(v, window, theme, compact));
    }
    spans
}

/// One primary's marker.
pub fn marker(
    v: &SemiSyncView,
    window: Window,
    theme: &Theme,
    compact: bool,
) -> Vec<Span<'static>> {
    let label = if compact { "ss " } else { "semi-sync " };
    let acks = match (v.clients, v.required_acks) {
        (Some(c), Some(r)) => Some((
            format!(" {c}/{r}{}", if compact { "" } else { " acks" }),
            c < r,
        )),
        _ => None,
    };
    let mut spans = vec![Span::styled(label, theme.muted)];
    match v.state {
        Some(SemiSyncState::Active) => {
            spans.push(Span::styled("ON", theme.ok));
            if let Some((text, short)) = acks {
                spans.push(Span::styled(
                    text,
                    if short { theme.critical } else { theme.ok },
                ));
            }
            if !compact && let Some(w) = v.window(window) {
                spans.push(Span::styled(
                    format!(" p99 {}", units::duration(w.p99)),
                    theme.text,
                ));
            }
            let unacked = v.interval.and_then(|i| i.no_ack_commits).unwrap_or(0);
            if unacked > 0 {
                spans.push(Span::styled(format!(" {unacked} unacked"), theme.warning));
            }
        }
        Some(SemiSyncState::FellBack) => {
            spans.push(Span::styled("FELL BACK", theme.critical));
            if let Some((text, _)) = acks {
                spans.push(Span::styled(text, theme.critical));
            }
        }
        Some(SemiSyncState::Off) => spans.push(Span::styled("off", theme.muted)),
        Some(SemiSyncState::Unknown) | None => spans.push(Span::styled("?", theme.unknown)),
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::super::render;
    use super::super::tests::{buffer_text, draw};
    use crate::store::semisync::SemiSyncState;
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;
    use crate::ui::UiState;

    fn header_with(state: SemiSyncState, clients: u64) -> String {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            live(n).semisync = Some(crate::store::semisync::SemiSyncView {
                state: Some(state),
                clients: Some(clients),
                ..crate::export::json::semisync_example()
            });
        });
        buffer_text(&draw(render, &topo.snapshot, &UiState::default(), 160, 3))
    }

    #[test]
    fn the_header_says_the_primarys_semi_sync_in_a_few_words() {
        let on = header_with(SemiSyncState::Active, 2);
        assert!(on.contains("semi-sync ON 2/1 acks p99 2ms"), "{on}");
        let short = header_with(SemiSyncState::Active, 0);
        assert!(short.contains("semi-sync ON 0/1 acks"), "{short}");
        let fell = header_with(SemiSyncState::FellBack, 0);
        assert!(fell.contains("semi-sync FELL BACK 0/1 acks"), "{fell}");
        let plain = buffer_text(&draw(
            render,
            &Topo::new().snapshot,
            &UiState::default(),
            160,
            3,
        ));
        assert!(
            !plain.contains("semi-sync"),
            "no plugin, no marker: {plain}"
        );
    }
}
