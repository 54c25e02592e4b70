//! The selected channel's parallel appliers, for a replica that has them:
//! `workers 4 (optimistic): 2 busy, 1 waiting on commit order (3s ago)` then
//! `retries 0.3/s · groups ddl 3 trx 1.2k non-trx 0`. A replica with one applier thread gets no
//! line: at 80×24 every row of the pane is spoken for. Any replica whose appliers are applying
//! row events gets a line per table: `applying row events on shop.events (no primary or unique
//! key: each row event scans the table)`.

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

/// Tables the appliers apply row events on, shown at most: one line each.
const TABLES_SHOWN: usize = 2;

/// A line per table the newest scan showed row events applied on, a table without a key first
/// (it is what makes a replica lag); nothing while none are applied.
pub(super) fn row_event_lines(a: &ApplierView, t: &Theme, width: usize) -> Vec<Line<'static>> {
    let mut applies: Vec<&crate::mysql::RowApply> = Vec::new();
    let keyless_first = a
        .row_events
        .iter()
        .filter(|r| r.scans_table())
        .chain(a.row_events.iter().filter(|r| !r.scans_table()));
    for apply in keyless_first {
        let same = |r: &&crate::mysql::RowApply| r.schema == apply.schema && r.table == apply.table;
        if !applies.iter().any(same) {
            applies.push(apply);
        }
    }
    applies
        .into_iter()
        .take(TABLES_SHOWN)
        .flat_map(|apply| {
            let mut tokens = vec![Token::new("applying row events", t.muted)];
            match (apply.qualified(), apply.schema.as_deref()) {
                (Some(table), _) => {
                    tokens.push(Token::new("on", t.muted));
                    tokens.push(Token::new(table, t.text));
                }
                (None, Some(schema)) => {
                    tokens.push(Token::new("in", t.muted));
                    tokens.push(Token::new(schema.to_owned(), t.text));
                    tokens.push(Token::new("(table not shown)", t.unknown));
                }
                (None, None) => tokens.push(Token::new("(table not shown)", t.unknown)),
            }
            if apply.scans_table() {
                tokens.extend(super::wrap::words(
                    "(no primary or unique key: each row event scans the table)",
                    t.warning,
                ));
            }
            wrap(tokens, width, INDENT)
        })
        .collect()
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
            row_events: Vec::new(),
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

    #[test]
    fn a_keyless_table_being_applied_gets_its_line_first() {
        use crate::mysql::{NamedBy, RowApply, RowEvent};
        let t = Theme::builtin();
        let apply = |id, table: Option<&str>, has_key| RowApply {
            thread_id: id,
            event: RowEvent::Update,
            schema: Some("shop".into()),
            table: table.map(Into::into),
            named_by: table.map(|_| NamedBy::Statement),
            has_key,
        };
        let view = ApplierView {
            row_events: vec![
                apply(7, Some("orders"), Some(true)),
                apply(8, Some("events"), Some(false)),
                apply(9, Some("events"), Some(false)),
            ],
            ..ApplierView::default()
        };
        assert_eq!(
            text(&row_event_lines(&view, &t, 200)),
            [
                "applying row events on shop.events (no primary or unique key: each row event \
                 scans the table)",
                "applying row events on shop.orders",
            ]
        );
        let unnamed = ApplierView {
            row_events: vec![apply(7, None, None)],
            ..ApplierView::default()
        };
        assert_eq!(
            text(&row_event_lines(&unnamed, &t, 200)),
            ["applying row events in shop (table not shown)"]
        );
        assert!(row_event_lines(&ApplierView::default(), &t, 80).is_empty());
    }
}
