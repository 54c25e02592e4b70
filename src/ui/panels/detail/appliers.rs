//! The selected channel's parallel appliers, for a replica that has them:
//! `workers 4 (optimistic): 2 busy, 1 waiting on commit order (3s ago)` then
//! `retries 0.3/s · groups ddl 3 trx 1.2k non-trx 0`. A replica with one applier thread gets no
//! line: at 80×24 every row of the pane is spoken for.

use ratatui::text::Line;

use super::wrap::{Token, wrap};
use crate::store::ApplierView;
use crate::ui::Theme;
use crate::units;

const INDENT: usize = 2;

/// Only when parallel replication is on (configured workers, or workers seen in a scan). Each
/// line in full where it fits on one row, else shorter (no mode, `1 commit wait`, no `groups`
/// word), so that in the 46 columns of an 80×24 pane the two lines take two rows.
pub(super) fn lines(a: &ApplierView, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let parallel = a.workers.is_some_and(|n| n > 0) || a.busy.is_some_and(|b| b.workers > 0);
    if !parallel {
        return Vec::new();
    }
    let mut lines = fitted(|wide| workers_line(a, t, wide), width);
    lines.extend(fitted(|wide| counters_line(a, t, wide), width));
    lines
}

/// The wide form when it takes one row, else the short one wrapped.
fn fitted(tokens: impl Fn(bool) -> Vec<Token>, width: usize) -> Vec<Line<'static>> {
    let wide = wrap(tokens(true), width, INDENT);
    if wide.len() <= 1 {
        return wide;
    }
    wrap(tokens(false), width, INDENT)
}

fn count(n: Option<u64>) -> String {
    n.map_or_else(|| "?".to_owned(), units::count)
}

/// `workers 4 (optimistic): 2 busy, 1 waiting on commit order (3s ago)`.
fn workers_line(a: &ApplierView, t: &Theme, wide: bool) -> Vec<Token> {
    let configured = a.workers.or(a.busy.map(|b| u64::from(b.workers)));
    let mut head = Token::new("workers ", t.muted).and(count(configured), t.text);
    if let Some(mode) = a.mode.as_ref().filter(|_| wide) {
        head = head.and(format!(" ({mode})"), t.muted);
    }
    let mut tokens = vec![head.and(":", t.muted)];
    let Some(b) = a.busy else {
        tokens.push(Token::new("busy ?", t.unknown));
        return tokens;
    };
    let style = if b.busy > 0 { t.text } else { t.muted };
    let busy = Token::new(b.busy.to_string(), style);
    match b.commit_order_waits.filter(|n| *n > 0) {
        Some(waits) => {
            let what = if wide {
                " waiting on commit order"
            } else {
                " commit wait"
            };
            tokens.push(busy.and(" busy,", t.muted));
            tokens.push(Token::new(waits.to_string(), t.warning).and(what, t.muted));
        }
        None => tokens.push(busy.and(" busy", t.muted)),
    }
    if b.shared {
        tokens.push(Token::new("(all channels)", t.muted));
    }
    tokens.push(Token::new(
        format!("({} ago)", units::duration(b.age)),
        t.muted,
    ));
    tokens
}

/// `retries 0.3/s · groups ddl 3 trx 1.2k non-trx 0`.
fn counters_line(a: &ApplierView, t: &Theme, wide: bool) -> Vec<Token> {
    let retries = match a.retries_per_second {
        Some(rate) => Token::new("retries ", t.muted).and(units::per_second(rate), t.text),
        None => Token::new("retries ", t.muted).and("?", t.unknown),
    };
    let g = &a.groups;
    let group = |label: &str, n: Option<u64>| {
        Token::new(format!("{label} "), t.muted).and(count(n), t.text)
    };
    vec![
        retries,
        Token::new(if wide { "· groups" } else { "·" }, t.muted),
        group("ddl", g.ddl),
        group("trx", g.transactional),
        group("non-trx", g.non_transactional),
    ]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::{ApplierGroups, BusyWorkers};

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    fn parallel() -> ApplierView {
        ApplierView {
            workers: Some(4),
            mode: Some("optimistic".to_owned()),
            preserve_commit_order: None,
            busy: Some(BusyWorkers {
                workers: 4,
                busy: 2,
                commit_order_waits: Some(1),
                age: Duration::from_secs(3),
                shared: false,
            }),
            retried_transactions: Some(12),
            retries_per_second: Some(0.3),
            groups: ApplierGroups {
                ddl: Some(3),
                transactional: Some(1_234),
                non_transactional: Some(0),
            },
        }
    }

    #[test]
    fn workers_busy_retries_and_groups_on_two_lines() {
        let t = Theme::builtin();
        assert_eq!(
            text(&lines(&parallel(), &t, 80)),
            [
                "workers 4 (optimistic): 2 busy, 1 waiting on commit order (3s ago)",
                "retries 0.3/s · groups ddl 3 trx 1.2k non-trx 0",
            ]
        );
        // The 46 columns of an 80×24 pane: shorter, still a row each, nothing cut.
        assert_eq!(
            text(&lines(&parallel(), &t, 46)),
            [
                "workers 4: 2 busy, 1 commit wait (3s ago)",
                "retries 0.3/s · ddl 3 trx 1.2k non-trx 0",
            ]
        );
    }

    #[test]
    fn unknowns_read_as_such_and_a_serial_replica_has_no_line() {
        let t = Theme::builtin();
        let unknown = ApplierView {
            workers: Some(4),
            ..ApplierView::default()
        };
        assert_eq!(
            text(&lines(&unknown, &t, 80)),
            [
                "workers 4: busy ?",
                "retries ? · groups ddl ? trx ? non-trx ?"
            ]
        );
        let serial = ApplierView {
            workers: Some(0),
            ..parallel()
        };
        let serial = ApplierView {
            busy: None,
            ..serial
        };
        assert!(lines(&serial, &t, 80).is_empty());
        assert!(lines(&ApplierView::default(), &t, 80).is_empty());
    }
}
