//! Settings that let a replica's data drift from its source without an error: an applier that
//! ignores the errors telling it the data no longer matches (`slave_exec_mode = IDEMPOTENT`,
//! `slave_skip_errors`), and events waiting to be skipped (`Skip_Counter`).
//!
//! The first two are errors on a replica: every later mismatch is swallowed and nobody is told.
//! On a node that replicates from nobody they are warnings: they act once it does (a failover).
//! A pending skip is a warning: an operator chose it, for a number of events, once.

use super::{LintFinding, LintSeverity, finding, set_and_persist};
use crate::store::Snapshot;

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    for node in &s.nodes {
        let Some(set) = node.settings() else {
            continue;
        };
        let replicates = !node.channels.is_empty();
        let severity = if replicates {
            LintSeverity::Error
        } else {
            LintSeverity::Warning
        };
        let latent = if replicates {
            ""
        } else {
            " (it acts once this node replicates, after a failover)"
        };
        if set.exec_mode.as_deref() == Some("IDEMPOTENT") {
            let var = &set.names.exec_mode;
            out.push(LintFinding {
                summary: format!("{var} = IDEMPOTENT"),
                why: format!(
                    "the applier ignores duplicate-key and row-not-found errors instead of \
                     stopping: a change that does not fit the replica's data is dropped or half \
                     applied without a trace, and the data drifts from the source{latent}"
                ),
                fix: set_and_persist(var, "STRICT"),
                ..finding("exec_mode_idempotent", severity, node)
            });
        }
        if let Some(errors) = set
            .skip_errors
            .as_deref()
            .filter(|e| !e.is_empty() && *e != "OFF")
        {
            let var = &set.names.skip_errors;
            out.push(LintFinding {
                summary: format!("{var} = {errors}"),
                why: format!(
                    "the applier skips every transaction that fails with these errors and goes \
                     on: each skip is a change the replica never made, and its data drifts \
                     from the source with no error to show for it{latent}"
                ),
                fix: format!(
                    "remove {var} from my.cnf (or set it to OFF) and restart the server (the \
                     variable is read-only at runtime); then check the data against the source (a \
                     table checksum) for what was skipped"
                ),
                ..finding("skip_errors", severity, node)
            });
        }
        for c in &node.channels {
            let Some(n) = c.link.skip_counter.filter(|n| *n > 0) else {
                continue;
            };
            out.push(LintFinding {
                channel: Some(c.channel.clone()),
                summary: format!("the applier will skip the next {n} event group(s)"),
                why: "a skipped event is a change the replica never makes: its data drifts \
                      from the source unless the events skipped are exactly the broken ones"
                    .to_owned(),
                fix: format!("unless meant: {}", set.names.clear_skip_counter(&c.channel)),
                ..finding("skip_counter", LintSeverity::Warning, node)
            });
        }
    }
}
