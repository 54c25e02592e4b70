//! `MariaDB`'s optimistic parallel applier retrying transactions: in optimistic (and aggressive)
//! mode workers apply transactions of one group commit side by side, and one that turns out to
//! conflict with an earlier one is rolled back and run again. Retries on tables that never
//! conflict in the application (the gap and next-key locks of the workers' own inserts, a
//! sequence table) cost apply throughput and no safety: a note with the rate and the fix.

use super::{LintFinding, LintSeverity, finding};
use crate::store::Snapshot;
use crate::units;

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    for node in &s.nodes {
        let Some(set) = node.settings() else {
            continue;
        };
        for c in &node.channels {
            let a = &c.appliers;
            let Some(mode) = a.mode.as_deref().filter(|m| {
                m.eq_ignore_ascii_case("optimistic") || m.eq_ignore_ascii_case("aggressive")
            }) else {
                continue;
            };
            let Some(rate) = a.retries_per_second.filter(|r| *r > 0.0) else {
                continue;
            };
            let Some(fix) = set.names.set_parallel_mode(&c.channel, "conservative") else {
                continue;
            };
            let total = a
                .retried_transactions
                .map(|n| format!(", {} since the replica started", units::format::count(n)))
                .unwrap_or_default();
            let mut tables: Vec<String> = a
                .row_events
                .iter()
                .filter_map(crate::mysql::RowApply::qualified)
                .collect();
            tables.sort_unstable();
            tables.dedup();
            let on = if tables.is_empty() {
                String::new()
            } else {
                format!(
                    "; the workers were applying {} at the last scan",
                    tables.join(", ")
                )
            };
            out.push(LintFinding {
                channel: Some(c.channel.clone()),
                summary: format!(
                    "{mode} parallel mode retries {} transactions{total}{on}",
                    units::format::per_second(rate)
                ),
                why: "each retry rolls back work a worker did and runs it again: the applier \
                      does the same transactions more than once, which slows a catch-up; where \
                      the tables never conflict in the application, the retries come from the \
                      workers' own locks, not from real conflicts"
                    .to_owned(),
                fix: format!(
                    "{fix}; and in my.cnf: slave_parallel_mode = conservative (or keep \
                     optimistic and look at the tables above for a hot row or a gap lock)"
                ),
                ..finding("parallel_retries", LintSeverity::Info, node)
            });
        }
    }
}
