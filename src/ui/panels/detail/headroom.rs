//! The pane's headroom lines (`store/headroom.rs`, `store/protection.rs`): the channel's relay
//! log and how fast it grows, its source's binlog rate, and a delayed channel's protection
//! window.
//!
//! `relay 12.3 MiB growing 1.2 MiB/s · source binlog 3.4 GiB/h`, and on a delayed channel
//! `protect ≥8.00s to STOP SLAVE SQL_THREAD · data at 21:03:05 UTC`. A figure rwtop cannot tell
//! reads `?`, never 0.

use ratatui::text::Line;

use super::wrap::{Token, wrap};
use crate::store::protection::ProtectionState;
use crate::store::{ReplicaView, Snapshot};
use crate::ui::Theme;
use crate::units;

const INDENT: usize = 2;

/// Growth smaller than this either way reads as steady: a relay log that only takes in the
/// heartbeat grows a few hundred bytes a second between purges.
const STEADY_BYTES_PER_S: f64 = 1024.0;

/// The relay log line; `None` where the server reports no relay log space. With `brief` (the
/// pane is short of rows), only while it grows.
pub(super) fn relay_lines(
    r: &ReplicaView,
    source: Option<&str>,
    snapshot: &Snapshot,
    t: &Theme,
    width: usize,
    brief: bool,
) -> Vec<Line<'static>> {
    let g = &r.relay_growth;
    let Some(space) = g.space else {
        return Vec::new();
    };
    let growing = g.bytes_per_s.is_some_and(|b| b >= STEADY_BYTES_PER_S);
    if brief && !growing {
        return Vec::new();
    }
    let mut tokens =
        vec![Token::new("relay", t.muted).and(format!(" {}", units::bytes(space)), t.text)];
    tokens.push(match g.bytes_per_s {
        None => Token::new("growth", t.muted).and(" ?", t.unknown),
        Some(b) if b >= STEADY_BYTES_PER_S => {
            Token::new("growing", t.muted).and(format!(" {}", units::byte_rate(b)), t.warning)
        }
        Some(b) if b <= -STEADY_BYTES_PER_S => {
            Token::new("shrinking", t.muted).and(format!(" {}", units::byte_rate(b)), t.ok)
        }
        Some(_) => Token::new("steady", t.muted),
    });
    let binlog = source
        .and_then(|name| snapshot.node(name))
        .and_then(|n| n.binlog().rate);
    if let Some(rate) = binlog {
        let value = rate.bytes_per_s.map_or_else(
            || ("?".to_owned(), t.unknown),
            |b| (units::byte_rate_per_hour(b), t.text),
        );
        tokens.push(Token::new("· source binlog", t.muted).and(format!(" {}", value.0), value.1));
    }
    wrap(tokens, width, INDENT)
}

/// The disks holding the node's directories, where they are read: `disk / 12.3 GiB free (relay
/// log, datadir) full in ~12m at 3.0 MiB/s`, or why they cannot be read. Nothing where the
/// operator has not opted in.
pub(super) fn disk_lines(
    node: &crate::store::NodeView,
    t: &Theme,
    width: usize,
    brief: bool,
) -> Vec<Line<'static>> {
    let Some(d) = &node.disks() else {
        return Vec::new();
    };
    if let Some(why) = &d.unavailable {
        let mut tokens = vec![Token::new("disk", t.muted), Token::new("?", t.unknown)];
        tokens.extend(super::wrap::words(&why.text(), t.unknown));
        return wrap(tokens, width, INDENT);
    }
    let mut lines = Vec::new();
    for k in &d.disks {
        if brief && k.full_in.is_none() {
            continue;
        }
        let mut tokens = vec![
            Token::new("disk", t.muted).and(format!(" {}", k.path), t.text),
            Token::new(format!("{} free", units::bytes(k.available)), t.text),
            Token::new(format!("({})", k.holds.join(", ")), t.muted),
        ];
        let style = if k.full_in.is_some() {
            t.warning
        } else {
            t.muted
        };
        tokens.extend(super::wrap::words(&k.outlook(), style));
        lines.extend(wrap(tokens, width, INDENT));
    }
    lines
}

/// A delayed channel's protection window: how long to stop its applier, and the primary time its
/// data stands at.
pub(super) fn protection_lines(
    r: &ReplicaView,
    snapshot: &Snapshot,
    t: &Theme,
    width: usize,
) -> Vec<Line<'static>> {
    let Some(p) = r.protection else {
        return Vec::new();
    };
    let mut tokens = vec![Token::new("protect", t.muted)];
    match (p.state, p.window) {
        (ProtectionState::Counting, Some(w)) => {
            tokens.push(Token::new(format!("≥{}", units::lag(w)), t.ok));
            tokens.push(Token::new("to STOP SLAVE SQL_THREAD", t.muted));
            if let Some(late) = p.late() {
                tokens.push(
                    Token::new("· applier", t.muted)
                        .and(format!(" {} behind its delay", units::lag(late)), t.warning),
                );
            }
        }
        (ProtectionState::ApplierStopped, _) => {
            tokens.push(Token::new("held:", t.ok));
            tokens.push(Token::new("applier stopped", t.text));
        }
        (ProtectionState::ReceiverStopped, _) => {
            tokens.push(Token::new("receiver stopped:", t.warning));
            tokens.push(Token::new("nothing new arrives", t.text));
        }
        _ => tokens.push(Token::new("? (lag unknown)", t.unknown)),
    }
    if let Some(at) = p.stands_at(snapshot.taken_at) {
        let prefix = if p.behind_at_least { "≤" } else { "" };
        tokens.push(
            Token::new("· data at", t.muted)
                .and(format!(" {prefix}{} UTC", at.format("%H:%M:%S")), t.text),
        );
    }
    wrap(tokens, width, INDENT)
}
