//! The pane for a Galera member: what it means for reads first (its state, its lag behind the
//! cluster's writer, and why when that is a bound), then the cluster as it sees it, what waits
//! to be applied and how far it is from the newest member, flow control (whether this member
//! sent it: only the sender holds the cluster back), parallelism against the applier threads,
//! conflicts, and the lag's percentiles over the chosen window.

use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use super::wrap::{Token, words, wrap};
use crate::mysql::galera::{Component, MemberState};
use crate::store::galera::GaleraView;
use crate::store::lag::Lag;
use crate::ui::panels::status_marks::{lag_span, member_state};
use crate::ui::{RenderCtx, ReplicaRow};
use crate::units;

const INDENT: usize = 2;

pub(super) fn lines(
    row: &ReplicaRow<'_>,
    g: &GaleraView,
    ctx: &RenderCtx<'_>,
    width: usize,
) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let s = &g.status;
    let cluster = ctx
        .snapshot
        .clusters
        .iter()
        .find(|c| c.members.contains(&row.node.name));
    let mut out = Vec::new();

    // Lag and state, then what they mean for a read sent here now.
    let bold = Style::new().fg(t.lag).add_modifier(Modifier::BOLD);
    let (word, style) = member_state(s, t);
    let lag = lag_span(&g.lag, t);
    let mut tokens = vec![
        Token::new("lag".to_owned(), t.muted),
        Token::new(lag.content.into_owned(), bold.patch(lag.style)),
        Token::new("·".to_owned(), t.muted),
        Token::new(word.to_owned(), style),
        Token::new(format!("({})", s.state_comment), t.muted),
    ];
    match cluster.and_then(|c| c.writer.as_deref()) {
        Some(writer) if writer == row.node.name => {
            tokens.push(Token::new(
                "· rwtop writes the heartbeat here".to_owned(),
                t.muted,
            ));
        }
        Some(writer) => tokens.push(Token::new(format!("· behind {writer}"), t.muted)),
        None => {}
    }
    out.extend(wrap(tokens, width, INDENT));
    if let Lag::Unknown { reason } = &g.lag {
        let mut tokens = vec![Token::new("why:".to_owned(), t.muted)];
        tokens.extend(words(reason, t.unknown));
        out.extend(wrap(tokens, width, INDENT));
    }
    out.extend(wrap(words(reads(g), style), width, INDENT));
    out.extend(cluster_lines(row, g, cluster, ctx, width));
    out.extend(flow_lines(g, ctx, width));
    out.push(super::text::window_line(&g.windows, ctx.state.window, t));
    out
}

/// The cluster as this member sees it, what waits, and how far from the newest member.
fn cluster_lines(
    row: &ReplicaRow<'_>,
    g: &GaleraView,
    cluster: Option<&crate::store::cluster::ClusterView>,
    ctx: &RenderCtx<'_>,
    width: usize,
) -> Vec<Line<'static>> {
    let (t, s) = (ctx.theme, &g.status);
    let mut out = Vec::new();
    let mut tokens = vec![Token::new("component".to_owned(), t.muted)];
    tokens.push(match s.component {
        Component::Primary => Token::new("Primary".to_owned(), t.ok),
        Component::NonPrimary => Token::new("non-Primary".to_owned(), t.critical),
        Component::Disconnected => Token::new("disconnected".to_owned(), t.critical),
        Component::Other => Token::new("?".to_owned(), t.unknown),
    });
    let size = s.cluster_size.map_or("?".to_owned(), |n| n.to_string());
    match cluster {
        Some(c) => tokens.push(Token::new(
            format!("· size {size} of {} · {}", c.expected_size, c.name),
            t.text,
        )),
        None => tokens.push(Token::new(format!("· size {size}"), t.text)),
    }
    if s.ready != Some(true) {
        tokens.push(Token::new("· not ready".to_owned(), t.critical));
    }
    out.extend(wrap(tokens, width, INDENT));

    // What waits, and how far behind the newest member.
    let count = |n: Option<u64>| n.map_or("?".to_owned(), |n| n.to_string());
    let behind = cluster
        .and_then(|c| c.behind(row.node))
        .map_or("?".to_owned(), |n| n.to_string());
    out.extend(wrap(
        vec![
            Token::new("queue".to_owned(), t.muted),
            Token::new(
                format!(
                    "recv {} send {} · {behind} write-set(s) behind the newest",
                    count(s.recv_queue),
                    count(s.send_queue)
                ),
                t.text,
            ),
        ],
        width,
        INDENT,
    ));

    out
}

/// Flow control (who sent it is who stalls the writes), conflicts and parallelism.
fn flow_lines(g: &GaleraView, ctx: &RenderCtx<'_>, width: usize) -> Vec<Line<'static>> {
    let (t, s) = (ctx.theme, &g.status);
    let count = |n: Option<u64>| n.map_or("?".to_owned(), |n| n.to_string());
    let mut out = Vec::new();
    let mut tokens = vec![Token::new("flow control".to_owned(), t.muted)];
    match g.interval {
        Some(i) => {
            let sent = i.fc_sent.unwrap_or(0);
            let paused = i
                .paused_share
                .map_or("?".to_owned(), |p| format!("{:.0}%", p * 100.0));
            let seconds = units::duration(std::time::Duration::from_millis(i.ms));
            tokens.push(Token::new(format!("paused {paused} of {seconds}"), t.text));
            tokens.push(if sent > 0 {
                Token::new(
                    format!("· sent {sent}: its backlog pauses every member's writes"),
                    t.warning,
                )
            } else {
                Token::new("· sent none".to_owned(), t.muted)
            });
            let conflicts = i.cert_failures.unwrap_or(0) + i.bf_aborts.unwrap_or(0);
            let style = if conflicts > 0 { t.warning } else { t.muted };
            out.extend(wrap(tokens, width, INDENT));
            tokens = vec![Token::new(
                format!(
                    "conflicts {} cert failures, {} BF aborts",
                    count(i.cert_failures),
                    count(i.bf_aborts)
                ),
                style,
            )];
        }
        None => tokens.push(Token::new("after two polls".to_owned(), t.unknown)),
    }
    if let (Some(d), Some(threads)) = (s.cert_deps_distance, s.applier_threads) {
        tokens.push(Token::new(
            format!("· parallel {d:.1} of {threads} appliers"),
            t.muted,
        ));
    }
    out.extend(wrap(tokens, width, INDENT));
    out
}

/// What the member's state means for a read sent to it now.
fn reads(g: &GaleraView) -> &'static str {
    let s = &g.status;
    if s.component != Component::Primary || s.ready != Some(true) {
        return "serves no reads: its tables refuse them (error 1047) until it rejoins";
    }
    match s.state {
        MemberState::Synced => "serves reads at its lag",
        MemberState::Donor => {
            "reads here are stale: desynced (a donor, or a backup's read lock), it falls behind \
             without holding the cluster back"
        }
        MemberState::Joined => "reads here are stale: it is catching up after a state transfer",
        MemberState::Joining => "serves no reads: receiving a state transfer",
        MemberState::Initialized | MemberState::Other => "serves no reads",
    }
}
