//! Tables without a primary or unique key, on a node whose replication carries row events: a
//! replica finds each changed row by the table's key, and without one every row event scans the
//! table (a single `UPDATE` of 50,000 rows becomes 50,000 scans on each replica). The list is
//! read with the settings (`mysql/table_keys.rs`), one query every few minutes.

use super::{LintFinding, LintSeverity, finding, replicas_of};
use crate::mysql::KeylessTables;
use crate::store::{NodeView, Snapshot};

/// Tables named in the summary; the rest are counted.
const NAMED: usize = 5;

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    for node in &s.nodes {
        let Some(list) = node
            .settings()
            .as_ref()
            .and_then(|set| set.keyless_tables.as_ref())
            .filter(|l| !l.tables.is_empty())
        else {
            continue;
        };
        let feeds = replicas_of(s, &node.name) > 0;
        // What a replica applies is in its source's format; what it feeds, in its own.
        let formats: Vec<Option<&str>> = node
            .channels
            .iter()
            .map(|c| {
                c.source
                    .as_deref()
                    .and_then(|name| s.node(name))
                    .and_then(format_of)
                    .or_else(|| format_of(node))
            })
            .chain(feeds.then(|| format_of(node)))
            .collect();
        let by_rows = formats
            .iter()
            .flatten()
            .find(|f| matches!(**f, "ROW" | "MIXED"));
        if let Some(format) = by_rows {
            out.push(judge(node, list, format));
        }
    }
}

fn format_of(node: &NodeView) -> Option<&str> {
    node.settings()?.binlog_format.as_deref()
}

fn judge(node: &NodeView, list: &KeylessTables, format: &str) -> LintFinding {
    let names: Vec<String> = list
        .tables
        .iter()
        .map(|t| format!("{}.{}", t.schema, t.table))
        .collect();
    let shown = names
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let rest = names.len().saturating_sub(NAMED);
    let more = match (rest, list.more) {
        (0, false) => String::new(),
        (n, false) => format!(" and {n} more"),
        (_, true) => " and more".to_owned(),
    };
    let count = if list.more {
        format!("{}+", names.len())
    } else {
        names.len().to_string()
    };
    let first = names.first().cloned().unwrap_or_default();
    LintFinding {
        summary: format!("{count} table(s) without a primary or unique key: {shown}{more}"),
        why: format!(
            "replication here is in {format} format: a replica finds each changed row by the \
             table's primary or unique key, and without one every row event scans the whole \
             table, so one statement that changes many rows can hold a replica back for hours"
        ),
        fix: format!(
            "add a key on the primary (it replicates), e.g. ALTER TABLE {first} ADD PRIMARY KEY \
             (<a unique NOT NULL column>), or ALTER TABLE {first} ADD COLUMN id BIGINT UNSIGNED \
             NOT NULL AUTO_INCREMENT PRIMARY KEY; with an online schema change tool on a big table"
        ),
        ..finding("table_without_key", LintSeverity::Warning, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::{KeylessTable, SafetySettings};
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;

    fn keyless(n: usize, more: bool) -> KeylessTables {
        KeylessTables {
            tables: (0..n)
                .map(|i| KeylessTable {
                    schema: "shop".into(),
                    table: format!("t{i}"),
                    engine: Some("InnoDB".into()),
                    rows_estimate: Some(50_000),
                })
                .collect(),
            more,
        }
    }

    fn settings(format: &str, tables: Option<KeylessTables>) -> SafetySettings {
        SafetySettings {
            binlog_format: Some(format.into()),
            keyless_tables: tables,
            ..SafetySettings::default()
        }
    }

    fn found(s: &Snapshot) -> Vec<LintFinding> {
        let mut out = Vec::new();
        check(s, &mut out);
        out
    }

    #[test]
    fn keyless_tables_are_listed_where_row_events_replicate() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            live(n).settings = Some(settings("ROW", Some(keyless(7, false))));
        });
        topo.node_mut("r1", |n| {
            live(n).settings = Some(settings("ROW", Some(keyless(1, false))));
        });
        let out = found(&topo.snapshot);
        let primary = out.iter().find(|f| f.node == "db1").unwrap();
        assert_eq!(primary.id, "table_without_key");
        assert_eq!(
            primary.summary,
            "7 table(s) without a primary or unique key: shop.t0, shop.t1, shop.t2, shop.t3, \
             shop.t4 and 2 more"
        );
        assert!(
            primary.fix.contains("ALTER TABLE shop.t0 ADD PRIMARY KEY"),
            "{}",
            primary.fix
        );
        assert!(primary.why.contains("ROW format"), "{}", primary.why);
        assert!(out.iter().any(|f| f.node == "r1"));
    }

    #[test]
    fn statement_format_and_an_empty_or_unread_list_find_nothing() {
        let mut topo = Topo::new();
        for name in ["db1", "r1", "r2"] {
            topo.node_mut(name, |n| {
                live(n).settings = Some(settings("STATEMENT", Some(keyless(2, false))));
            });
        }
        assert!(found(&topo.snapshot).is_empty());
        topo.node_mut("r2", |n| {
            live(n).settings = Some(settings("STATEMENT", None));
        });
        topo.node_mut("db1", |n| live(n).settings = Some(settings("MIXED", None)));
        let nodes: Vec<String> = found(&topo.snapshot).into_iter().map(|f| f.node).collect();
        // r1 applies what the primary logs (MIXED): its own STATEMENT does not matter.
        assert_eq!(nodes, ["r1"], "the primary's list is unread, r2's too");
        topo.node_mut("db1", |n| {
            live(n).settings = Some(settings("MIXED", Some(keyless(0, false))));
        });
        assert_eq!(
            found(&topo.snapshot).len(),
            1,
            "no keyless table on the primary"
        );
        topo.node_mut("db1", |n| {
            live(n).settings = Some(settings("MIXED", Some(keyless(50, true))));
        });
        let out = found(&topo.snapshot);
        assert_eq!(out.len(), 2, "{out:?}");
        let primary = out.iter().find(|f| f.node == "db1").unwrap();
        assert!(
            primary.summary.starts_with("50+ table(s)"),
            "{}",
            primary.summary
        );
        assert!(primary.summary.ends_with("and more"), "{}", primary.summary);
    }
}
