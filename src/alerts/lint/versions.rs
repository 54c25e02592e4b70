//! Mixed release series in one topology (`MariaDB` 10.6 and 10.11, `MySQL` 8.0 and 8.4), from
//! each answering node's `@@version`. Replication runs from an older series to a newer one, not
//! the other way: a replica older than its own source is a warning now; a node older than
//! another one is a note, since a failover can put the newer one above it.

use std::collections::BTreeSet;

use super::{LintFinding, LintSeverity, finding};
use crate::mysql::Family;
use crate::store::{NodeView, Snapshot};

/// A release series: family, major, minor.
type Series = (Family, u32, u32);

fn series(node: &NodeView) -> Option<Series> {
    node.settings()?;
    let flavor = node.identity.flavor.as_ref()?;
    Some((flavor.family, flavor.version.major, flavor.version.minor))
}

fn name((family, major, minor): Series) -> String {
    format!("{} {major}.{minor}", family.name())
}

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    let known: Vec<(&NodeView, Series)> = s
        .nodes
        .iter()
        .filter_map(|n| Some((n, series(n)?)))
        .collect();
    let all: BTreeSet<Series> = known.iter().map(|(_, v)| *v).collect();
    for &(node, own) in &known {
        // Series compare within a family only: a MariaDB number says nothing against MySQL's.
        let kin: Vec<Series> = all.iter().copied().filter(|v| v.0 == own.0).collect();
        let Some(&newest) = kin.iter().max() else {
            continue;
        };
        if own >= newest {
            continue;
        }
        let others: Vec<String> = kin
            .iter()
            .filter(|v| **v != own)
            .map(|v| name(*v))
            .collect();
        let newer_source = node.channels.iter().find_map(|c| {
            let source = s.node(c.source.as_deref()?)?;
            let theirs = known.iter().find(|(n, _)| n.name == source.name)?.1;
            (theirs.0 == own.0 && theirs > own).then(|| (source.name.clone(), theirs))
        });
        let (severity, why) = match &newer_source {
            Some((source, theirs)) => (
                LintSeverity::Warning,
                format!(
                    "it replicates from {source}, on {}: a source may write events an older \
                     replica cannot read, and replication from a newer series to an older one \
                     is not supported",
                    name(*theirs)
                ),
            ),
            None => (
                LintSeverity::Info,
                format!(
                    "a failover that promotes a node on {} leaves this one replicating from a \
                     newer series, which is not supported",
                    name(newest)
                ),
            ),
        };
        out.push(LintFinding {
            summary: format!(
                "runs {} in a topology that also runs {}",
                name(own),
                others.join(", ")
            ),
            why,
            fix: format!(
                "upgrade {} to {} (replicas first, then the source), so every node runs one \
                 series",
                node.name,
                name(newest)
            ),
            ..finding("mixed_versions", severity, node)
        });
    }
}
