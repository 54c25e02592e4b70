//! Schema changes in flight: the usual reason replicas fall behind in a maintenance window.
//!
//! On the primary a DDL runs from a client and replicas will apply it only after it commits,
//! taking about as long again; on a replica the SQL thread applying it blocks everything behind
//! it. The alert says which, for how long, and for each lagging replica when it should have
//! caught up (see [`super::eta`]). An online schema change tool's run on a node raises the same
//! alert, named for the tool and the table, with its phase, progress, throttle and ETA.

use super::eta::{self, Eta};
use super::format;
use super::verdict::{RuleInputs, Verdict, fact};
use crate::mysql::DdlStatement;
use crate::poll::ConnState;
use crate::store::{NodeView, ReplicaView, Role};
use crate::units;

pub use super::eta::DdlMemory;

/// Judged only on a sample that carried a processlist scan: the others repeat an older scan,
/// which can neither prove the statement still runs nor that it ended.
pub fn verdict(inputs: &RuleInputs<'_>, node: &NodeView) -> Verdict {
    let scan = node.fresh_scan();
    let statement_seen = scan.is_some_and(|s| !s.ddl.is_empty());
    if !statement_seen && !node.osc().is_empty() && (node.osc_fresh() || scan.is_some()) {
        return osc_verdict(inputs, node);
    }
    let Some(scan) = scan else {
        return Verdict::Unknown;
    };
    let Some(ddl) = scan.ddl.iter().max_by_key(|d| d.elapsed_s) else {
        return Verdict::Clean;
    };
    let mut evidence = vec![
        fact("statement", format::quote(&ddl.statement)),
        fact("elapsed", units::secs(ddl.elapsed_s)),
    ];
    if let Some(progress) = ddl.progress {
        evidence.push(fact("progress", format!("{progress:.1} %")));
    }
    let run_by = if ddl.applier {
        "replication applier"
    } else {
        "client"
    };
    evidence.push(fact("run_by", run_by));
    if let Some(lock) = &ddl.waiting_for {
        evidence.push(fact("waiting_for", lock));
    }
    if let Some(blockers) = ddl.blockers.as_ref().filter(|_| ddl.waiting_for.is_some()) {
        evidence.push(fact("holders_from", blockers.source.name()));
        for holder in &blockers.holders {
            evidence.push(fact(&format!("holder_{}", holder.id), holder.summary()));
            evidence.push(fact(
                &format!("holder_{}_evidence", holder.id),
                holder.evidence(),
            ));
        }
    }
    if scan.ddl.len() > 1 {
        evidence.push(fact("ddl_statements", scan.ddl.len().to_string()));
    }

    let lagging = lagging_replicas(inputs, node);
    let etas: Vec<(&str, Eta)> = lagging
        .iter()
        .map(|(n, r)| (n.name.as_str(), eta::catch_up(inputs.ddl, n, r)))
        .collect();
    for (name, eta) in &etas {
        evidence.push(fact(&format!("eta_{name}"), eta.explained()));
    }

    let verb = if ddl.applier { "applying" } else { "running" };
    let mut cause = format!(
        "{} {verb} {} for {}{}",
        node.name,
        keyword(ddl),
        units::secs(ddl.elapsed_s),
        ddl.progress
            .map(|p| format!(" ({p:.0} %)"))
            .unwrap_or_default()
    );
    if let Some(lock) = &ddl.waiting_for {
        cause.push_str(", waiting for ");
        cause.push_str(lock);
        cause.push_str(held_up(ddl, lock));
        if let Some(blockers) = &ddl.blockers {
            cause.push_str("; ");
            cause.push_str(&blockers.summary());
        }
        return Verdict::bad(evidence, cause);
    }
    match etas.as_slice() {
        [(name, eta)] if *name == node.name => {
            cause.push_str(", ");
            cause.push_str(&eta.short());
        }
        _ if node.role == Role::Primary && etas.is_empty() => {
            cause.push_str(": replicas apply it after it commits and fall behind as long");
        }
        _ if node.role == Role::Primary => {
            let list: Vec<String> = etas
                .iter()
                .map(|(name, eta)| format!("{name} {}", eta.short()))
                .collect();
            cause.push_str("; lagging: ");
            cause.push_str(&list.join(", "));
        }
        _ if !ddl.applier => cause.push_str(", run by a client on a replica"),
        _ => {}
    }
    Verdict::bad(evidence, cause)
}

/// An online schema change run (the oldest, when several): `db1: pt-osc on shop.orders, copy
/// 4m12s · ~45 % · ETA ~2m00s; lagging: r2 …`. Judged on the samples that looked for runs or
/// scanned, like a statement.
fn osc_verdict(inputs: &RuleInputs<'_>, node: &NodeView) -> Verdict {
    let Some(run) = node.osc().iter().max_by_key(|r| r.elapsed_s.unwrap_or(0)) else {
        return Verdict::Clean;
    };
    let mut evidence = vec![
        fact("tool", run.tool.name()),
        fact("table", format!("{}.{}", run.schema, run.table)),
        fact("phase", run.phase.name()),
    ];
    if let Some(s) = run.elapsed_s {
        evidence.push(fact("elapsed", units::secs(s)));
    }
    if let Some(pct) = run.progress() {
        evidence.push(fact("progress", units::approx_percent(pct)));
    }
    if let (Some(copied), Some(total)) = (run.rows_copied, run.rows_estimate) {
        let how = if run.copied_counted {
            "counted by the tool"
        } else {
            "estimated"
        };
        evidence.push(fact(
            "rows",
            format!(
                "{} of ~{} ({how})",
                units::count(copied),
                units::count(total)
            ),
        ));
    }
    if let Some(eta) = run.eta_s {
        evidence.push(fact("eta", units::eta(std::time::Duration::from_secs(eta))));
    }
    if run.throttle_published {
        evidence.push(fact("throttled", run.throttled.as_deref().unwrap_or("no")));
    }
    if let Some(why) = &run.unreadable {
        evidence.push(fact("unreadable", why));
    }
    if node.osc().len() > 1 {
        evidence.push(fact("osc_runs", node.osc().len().to_string()));
    }
    let lagging: Vec<String> = lagging_replicas(inputs, node)
        .iter()
        .map(|(n, r)| {
            let eta = eta::catch_up(inputs.ddl, n, r);
            evidence.push(fact(&format!("eta_{}", n.name), eta.explained()));
            format!("{} {}", n.name, eta.short())
        })
        .collect();
    let mut cause = format!("{}: {}, {}", node.name, run.title(), run.summary());
    if !lagging.is_empty() {
        cause.push_str("; lagging: ");
        cause.push_str(&lagging.join(", "));
    }
    Verdict::bad(evidence, cause)
}

/// What a DDL waiting for `lock` holds up: the applier everything replicated after it; a
/// client's, while it waits for a table's metadata lock, every later statement on the table
/// (the server queues them behind the pending lock).
fn held_up(ddl: &DdlStatement, lock: &str) -> &'static str {
    if ddl.applier {
        ": replication waits behind it"
    } else if lock == "table metadata lock" {
        ": every later query on the table queues behind it"
    } else {
        ""
    }
}

/// The replicas an ETA is owed: the node itself when it is a lagging replica; for a primary,
/// every lagging replica that answers.
fn lagging_replicas<'a>(
    inputs: &'a RuleInputs<'_>,
    node: &'a NodeView,
) -> Vec<(&'a NodeView, &'a ReplicaView)> {
    if let Some(r) = node.replica() {
        return if inputs.is_lagging(r) {
            vec![(node, r)]
        } else {
            Vec::new()
        };
    }
    if node.role != Role::Primary {
        return Vec::new();
    }
    inputs
        .snapshot
        .nodes
        .iter()
        .filter(|n| n.conn == ConnState::Up)
        .filter_map(|n| Some((n, n.replica()?)))
        .filter(|(_, r)| inputs.is_lagging(r))
        .collect()
}

/// The statement's first word (`ALTER`, `OPTIMIZE`, ...), past leading comments: enough to
/// name it in one line.
fn keyword(ddl: &DdlStatement) -> String {
    let mut text = ddl.statement.trim_start();
    while let Some(rest) = text.strip_prefix("/*") {
        text = rest
            .split_once("*/")
            .map_or("", |(_, after)| after)
            .trim_start();
    }
    text.split_whitespace()
        .next()
        .map_or_else(|| "DDL".to_owned(), str::to_ascii_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::testkit::Judge;
    use crate::alerts::{AlertEngine, AlertKind, AlertSettings};
    use crate::store::lag::Lag;
    use crate::store::testkit::{Topo, ddl, find, secs};
    use crate::store::testkit::{fresh_scan, scan, set_osc, stale_scan};

    const KIND: AlertKind = AlertKind::DdlInFlight;

    #[test]
    fn replica_applying_a_ddl_seen_on_the_primary_gets_its_eta() {
        let statement = "/* gh-ost */ alter table big add column c int";
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        topo.node_mut("db1", |n| *scan(n) = vec![ddl(statement, 160, false)]);
        let view = engine.evaluate(&topo.at(1));
        assert!(find(&view, KIND, Some("db1")).is_none());
        let view = engine.evaluate(&topo.at(2));
        let on_primary = find(&view, KIND, Some("db1")).cloned();
        let on_primary = on_primary.unwrap_or_else(|| panic!("{view:?}"));
        assert!(
            on_primary
                .cause
                .starts_with("db1 running ALTER for 2m40s: replicas apply")
        );

        topo.node_mut("db1", |n| scan(n).clear());
        topo.node_mut("r2", |n| *scan(n) = vec![ddl(statement, 41, true)]);
        topo.replica_mut("r2", |r| r.heartbeat_lag = Lag::Exact { lag: secs(41.0) });
        engine.evaluate(&topo.at(3));
        let view = engine.evaluate(&topo.at(4));
        let alert = find(&view, KIND, Some("r2")).cloned();
        let alert = alert.unwrap_or_else(|| panic!("{view:?}"));
        assert_eq!(alert.cause, "r2 applying ALTER for 41s, ~2m00s");
        assert!(
            alert
                .evidence
                .contains(&fact("run_by", "replication applier"))
        );
        assert!(
            alert
                .evidence
                .contains(&fact("eta_r2", "~2m00s (the primary ran it for 2m40s)"))
        );
    }

    #[test]
    fn an_online_schema_change_run_names_tool_and_table_and_lagging_replicas() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            stale_scan(n);

            set_osc(n, vec![crate::store::testkit::osc_run(100_000, 75)]);
        });
        topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(9.0) });
        let alert = topo.raise(KIND, Some("db1"));
        assert_eq!(
            alert.cause,
            "db1: pt-osc on shop.orders, copy 1m15s · ~25 %; lagging: r1 ETA unknown"
        );
        assert!(alert.evidence.contains(&fact("tool", "pt-osc")));
        assert!(alert.evidence.contains(&fact("table", "shop.orders")));
        assert!(
            alert
                .evidence
                .contains(&fact("rows", "100k of ~400k (estimated)"))
        );
    }

    #[test]
    fn primary_ddl_lists_lagging_replicas_with_progress() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            let mut statement = ddl("OPTIMIZE TABLE t", 75, false);
            statement.progress = Some(37.5);
            *scan(n) = vec![statement];
        });
        topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(9.0) });
        let alert = topo.raise(KIND, Some("db1"));
        assert_eq!(
            alert.cause,
            "db1 running OPTIMIZE for 1m15s (38 %); lagging: r1 ETA unknown"
        );
        assert!(alert.evidence.contains(&fact("progress", "37.5 %")));
    }

    #[test]
    fn a_ddl_waiting_for_a_lock_says_so_and_what_it_holds_up() {
        let waiting = |applier: bool, lock: &str| {
            let mut statement = ddl("ALTER TABLE big ADD c INT", 95, applier);
            statement.progress = Some(0.0);
            statement.waiting_for = Some(lock.to_owned());
            vec![statement]
        };
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| *scan(n) = waiting(false, "table metadata lock"));
        topo.replica_mut("r1", |r| r.heartbeat_lag = Lag::Exact { lag: secs(9.0) });
        let alert = topo.raise(KIND, Some("db1"));
        assert_eq!(
            alert.cause,
            "db1 running ALTER for 1m35s (0 %), waiting for table metadata lock: every later \
             query on the table queues behind it"
        );
        assert!(
            alert
                .evidence
                .contains(&fact("waiting_for", "table metadata lock"))
        );

        let mut topo = Topo::new();
        topo.node_mut("r1", |n| *scan(n) = waiting(true, "table metadata lock"));
        let alert = topo.raise(KIND, Some("r1"));
        assert_eq!(
            alert.cause,
            "r1 applying ALTER for 1m35s (0 %), waiting for table metadata lock: replication \
             waits behind it"
        );

        // A backup's lock holds back the DDL alone: nothing queues behind it.
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| *scan(n) = waiting(false, "backup lock"));
        let alert = topo.raise(KIND, Some("db1"));
        assert_eq!(
            alert.cause,
            "db1 running ALTER for 1m35s (0 %), waiting for backup lock"
        );
    }

    #[test]
    fn the_first_scan_without_the_statement_clears_and_samples_without_a_scan_judge_nothing() {
        let mut topo = Topo::new();
        let mut engine = AlertEngine::new(AlertSettings::default());
        topo.node_mut("r1", |n| {
            *scan(n) = vec![ddl("ALTER TABLE t FORCE", 5, true)];
        });
        engine.evaluate(&topo.at(1));
        // A sample without a scan repeats the older one: it does not make a second bad sample.
        topo.node_mut("r1", stale_scan);
        assert!(find(&engine.evaluate(&topo.at(2)), KIND, Some("r1")).is_none());
        topo.node_mut("r1", fresh_scan);
        assert!(find(&engine.evaluate(&topo.at(3)), KIND, Some("r1")).is_some());
        // Nor, while raised, a clean one: the statement may still run.
        topo.node_mut("r1", |n| {
            scan(n).clear();
            stale_scan(n);
        });
        assert!(find(&engine.evaluate(&topo.at(4)), KIND, Some("r1")).is_some());
        // The next scan shows it gone: cleared at once, not after three samples.
        topo.node_mut("r1", fresh_scan);
        let view = engine.evaluate(&topo.at(5));
        assert!(find(&view, KIND, Some("r1")).is_none(), "{view:#?}");
        assert!(
            view.log[0]
                .summary
                .starts_with("ddl_in_flight on r1 cleared after 1 clean sample "),
            "{:?}",
            view.log[0]
        );
    }

    #[test]
    fn a_waiting_ddl_names_who_blocks_it_and_the_kill() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            *scan(n) = vec![crate::store::testkit::blocked_ddl(
                "ALTER TABLE t FORCE",
                95,
                false,
            )];
        });
        let alert = topo.raise(KIND, Some("db1"));
        assert_eq!(
            alert.cause,
            "db1 running ALTER for 1m35s, waiting for table metadata lock: every later query on \
             the table queues behind it; blocked by #1234 app@10.0.0.5, idle 1m35s in a \
             transaction open 1m37s: KILL 1234"
        );
        assert!(
            alert
                .evidence
                .contains(&fact("holders_from", "metadata_lock_info"))
        );
        assert!(alert.evidence.contains(&fact(
            "holder_1234_evidence",
            "holds MDL_SHARED_READ on shop.t; its last statement is not told (the server keeps \
             none for an idle session)"
        )));
    }

    #[test]
    fn no_ddl_is_quiet() {
        Topo::new().assert_quiet(KIND);
    }
}
