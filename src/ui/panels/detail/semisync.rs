//! The pane's semi-sync lines: whether this replica acknowledges what it receives, and its
//! source's semi-sync (state, acking replicas against those required, the ACK wait over the
//! chosen window, commits without an ACK), the primary's figures where its replicas are looked
//! at. Nothing where neither side is loaded.

use ratatui::text::Line;

use super::wrap::{Token, wrap};
use crate::store::ReplicaView;
use crate::ui::panels::chart;
use crate::ui::panels::header::semisync::marker;
use crate::ui::{RenderCtx, ReplicaRow};
use crate::units;

pub(super) fn lines(
    row: &ReplicaRow<'_>,
    r: &ReplicaView,
    ctx: &RenderCtx<'_>,
    width: usize,
    indent: usize,
) -> Vec<Line<'static>> {
    let (t, window) = (ctx.theme, ctx.state.window);
    let mut out = Vec::new();
    if let Some(own) = row
        .node
        .semisync()
        .as_ref()
        .filter(|v| v.replica_enabled.is_some())
    {
        let mut tokens = vec![Token::new("semi-sync ".to_owned(), t.muted)];
        tokens.push(match (own.replica_enabled, own.replica_active) {
            (Some(true), Some(true)) => Token::new("acks".to_owned(), t.ok),
            (Some(true), _) => Token::new("enabled, not acking".to_owned(), t.warning),
            _ => Token::new("replica side off".to_owned(), t.muted),
        });
        if let Some(rate) = own.interval.and_then(|i| i.acks_per_s()) {
            tokens.push(Token::new(
                format!(" {} sent", units::per_second(rate)),
                t.text,
            ));
        }
        out.extend(wrap(tokens, width, indent));
    }
    let source = r
        .source
        .as_deref()
        .and_then(|s| ctx.snapshot.node(s))
        .and_then(|n| Some((n.name.clone(), n.semisync()?)))
        .filter(|(_, v)| v.state.is_some());
    let Some((name, v)) = source else {
        return out;
    };
    let mut tokens = vec![Token::new(format!("{name} "), t.muted)];
    for span in marker(v, window, t, false) {
        tokens.push(Token::new(span.content.into_owned(), span.style));
    }
    if let Some(w) = v.window(window) {
        tokens.push(Token::new(
            format!(
                " · ACK wait {} p50 {} p99 {} max {} ({} intervals)",
                chart::window_label(window),
                units::duration(w.p50),
                units::duration(w.p99),
                units::duration(w.max),
                w.intervals
            ),
            t.text,
        ));
    }
    if let Some(rate) = v.interval.and_then(|i| i.no_ack_per_s()) {
        let style = if rate > 0.0 { t.warning } else { t.muted };
        tokens.push(Token::new(
            format!(" · {} without ACK", units::per_second(rate)),
            style,
        ));
    }
    if let Some(timeout) = v.timeout {
        tokens.push(Token::new(
            format!(" · timeout {}", units::duration(timeout)),
            t.muted,
        ));
    }
    out.extend(wrap(tokens, width, indent));
    out
}
