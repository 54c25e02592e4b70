//! The replication health lint (`docs/design.md`, "The health lint"): settings nobody watches
//! until the incident, judged as pure functions of a snapshot. Each finding has a stable id, a
//! severity, the node (and channel) it is about, why it matters and the exact statement or
//! `my.cnf` line that fixes it. What is dynamic was checked on `MariaDB` 10.11: `relay_log_recovery`, `sync_binlog`,
//! `innodb_flush_log_at_trx_commit`, `binlog_format`, `read_only`, `server_id`,
//! `gtid_strict_mode` and `binlog_expire_logs_seconds` take `SET GLOBAL`; `log_slave_updates`
//! is read-only (ERROR 1238) and needs `my.cnf` and a restart.

mod drift;
#[cfg(test)]
mod hygiene_tests;
mod keyless;
mod link;
mod own_tables;
mod retention;
mod retries;
mod versions;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::mysql::SafetySettings;
use crate::store::{NodeView, Role, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LintSeverity {
    Error,
    Warning,
    Info,
}

impl LintSeverity {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LintFinding {
    /// Stable: scripts and alerting key on it.
    pub id: &'static str,
    pub severity: LintSeverity,
    pub node: String,
    /// The replication channel, for findings about one (`''` the default channel).
    pub channel: Option<String>,
    /// What was found, in one line.
    pub summary: String,
    pub why: String,
    /// The statement(s) or `my.cnf` line that fix it.
    pub fix: String,
}

/// Every finding on the nodes that answer and whose settings were read, errors first.
#[must_use]
pub fn lint(s: &Snapshot) -> Vec<LintFinding> {
    let mut out = Vec::new();
    let judged: Vec<(&NodeView, &SafetySettings)> = s
        .nodes
        .iter()
        .filter_map(|n| n.settings().map(|set| (n, set)))
        .collect();
    for &(node, set) in &judged {
        let replicas = replicas_of(s, &node.name);
        if node.channels.is_empty() {
            durability(node, set, &mut out);
        } else {
            crash_safety(node, set, &mut out);
            read_only(node, set, &mut out);
            if replicas > 0 {
                durability(node, set, &mut out);
            }
            log_updates(s, node, set, replicas, &mut out);
        }
        strictness(node, set, &mut out);
        lock_table(node, set, &mut out);
    }
    binlog_formats(&judged, &mut out);
    server_ids(&judged, &mut out);
    retention::check(s, &mut out);
    own_tables::check(s, &mut out);
    keyless::check(s, &mut out);
    link::check(s, &mut out);
    drift::check(s, &mut out);
    versions::check(s, &mut out);
    retries::check(s, &mut out);
    out.sort_by(|a, b| {
        (a.severity, &a.node, &a.channel, a.id).cmp(&(b.severity, &b.node, &b.channel, b.id))
    });
    out
}

/// Nodes with a channel from `name`.
fn replicas_of(s: &Snapshot, name: &str) -> usize {
    s.nodes
        .iter()
        .filter(|n| n.channels.iter().any(|c| c.source.as_deref() == Some(name)))
        .count()
}

fn finding(id: &'static str, severity: LintSeverity, node: &NodeView) -> LintFinding {
    LintFinding {
        id,
        severity,
        node: node.name.clone(),
        channel: None,
        summary: String::new(),
        why: String::new(),
        fix: String::new(),
    }
}

/// `SET GLOBAL` now and the same line in `my.cnf` so a restart keeps it.
fn set_and_persist(var: &str, value: &str) -> String {
    format!("SET GLOBAL {var} = {value}; and in my.cnf [mariadbd]/[mysqld]: {var} = {value}")
}

fn crash_safety(node: &NodeView, set: &SafetySettings, out: &mut Vec<LintFinding>) {
    if set.relay_log_recovery == Some(false) {
        out.push(LintFinding {
            summary: "relay_log_recovery is OFF on a replica".to_owned(),
            why: "after a crash the replica resumes from a relay log that may be torn or ahead of \
                  what it applied; with ON it discards the relay log at start and fetches again \
                  from its applied position (the setting is read at server start)"
                .to_owned(),
            fix: set_and_persist("relay_log_recovery", "ON"),
            ..finding("relay_log_recovery", LintSeverity::Warning, node)
        });
    }
    if let Some(engine) = &set.position_table_engine
        && !engine.eq_ignore_ascii_case("InnoDB")
    {
        let table = &set.names.position_table;
        out.push(LintFinding {
            summary: format!("{table} uses {engine}, not a transactional engine"),
            why: format!(
                "the applied position is written in {table} with each transaction; on a \
                 non-transactional engine a crash leaves it out of step with the data, and the \
                 replica re-applies or skips transactions"
            ),
            fix: format!(
                "{}; ALTER TABLE {table} ENGINE = InnoDB; {}",
                set.names.stop_replica, set.names.start_replica
            ),
            ..finding("position_table_engine", LintSeverity::Error, node)
        });
    }
}

/// A source's binlog and redo are flushed at every commit: a power loss loses nothing its
/// replicas already have. A warning: many run 0/2 for speed on purpose.
fn durability(node: &NodeView, set: &SafetySettings, out: &mut Vec<LintFinding>) {
    if set.sync_binlog.is_some_and(|v| v != 1) {
        out.push(LintFinding {
            summary: format!(
                "sync_binlog = {} on a source",
                set.sync_binlog.unwrap_or_default()
            ),
            why: "the binlog is not flushed at each commit: after a power loss the source can \
                  lose transactions its replicas already applied, and they diverge"
                .to_owned(),
            fix: set_and_persist("sync_binlog", "1"),
            ..finding("sync_binlog", LintSeverity::Warning, node)
        });
    }
    if let Some(v) = set.innodb_flush_log_at_trx_commit.filter(|v| *v != 1) {
        out.push(LintFinding {
            summary: format!("innodb_flush_log_at_trx_commit = {v} on a source"),
            why: "InnoDB's redo log is not flushed at each commit: a power loss can lose up to a \
                  second of committed transactions that may already be in the binlog"
                .to_owned(),
            fix: set_and_persist("innodb_flush_log_at_trx_commit", "1"),
            ..finding(
                "innodb_flush_log_at_trx_commit",
                LintSeverity::Warning,
                node,
            )
        });
    }
}

fn read_only(node: &NodeView, set: &SafetySettings, out: &mut Vec<LintFinding>) {
    let var = set.names.read_only.as_str();
    let off = if var == "super_read_only" {
        set.super_read_only == Some(false)
    } else {
        set.read_only == Some(false)
    };
    if off {
        out.push(LintFinding {
            summary: format!("{var} is OFF on a replica"),
            why: "a write made on the replica by mistake is an errant transaction: it breaks \
                  replication or a later failover"
                .to_owned(),
            fix: set_and_persist(var, "ON"),
            ..finding("read_only", LintSeverity::Warning, node)
        });
    }
}

/// An intermediate must log what it applies (its replicas get nothing otherwise); a failover
/// candidate (a replica of a primary) should, so the others can follow it.
fn log_updates(
    s: &Snapshot,
    node: &NodeView,
    set: &SafetySettings,
    replicas: usize,
    out: &mut Vec<LintFinding>,
) {
    if set.log_replica_updates != Some(false) {
        return;
    }
    let of_primary = node.channels.iter().any(|c| {
        c.source
            .as_deref()
            .and_then(|src| s.node(src))
            .is_some_and(|src| src.role == Role::Primary)
    });
    let var = &set.names.log_replica_updates;
    let (severity, summary, why) = if replicas > 0 {
        (
            LintSeverity::Error,
            format!("{var} is OFF on an intermediate with {replicas} replica(s)"),
            "what it applies is not written to its binlog, so its replicas never get it",
        )
    } else if of_primary {
        (
            LintSeverity::Warning,
            format!("{var} is OFF on a failover candidate"),
            "promoted, it would have none of the primary's history in its binlog for the other \
             replicas to follow",
        )
    } else {
        return;
    };
    out.push(LintFinding {
        summary,
        why: why.to_owned(),
        fix: format!(
            "in my.cnf [mariadbd]/[mysqld]: {var} = ON, then restart the server (the variable \
             is read-only at runtime)"
        ),
        ..finding("log_replica_updates", severity, node)
    });
}

fn strictness(node: &NodeView, set: &SafetySettings, out: &mut Vec<LintFinding>) {
    if set.gtid_strict == Some(false) {
        let var = &set.names.gtid_strict;
        out.push(LintFinding {
            summary: format!("{var} is OFF"),
            why: "out-of-order or duplicate GTIDs (an errant write, a botched failover) are \
                  accepted silently instead of stopping replication where they happen"
                .to_owned(),
            fix: set_and_persist(var, "ON"),
            ..finding("gtid_strict", LintSeverity::Warning, node)
        });
    }
}

/// Any node may run a DDL that waits for a lock (on a replica, its applier): without a lock
/// table rwtop names only suspects, and misses `LOCK TABLES`, FTWRL and backup-stage holders'
/// certainty. `MariaDB` ships the plugin; rwtop never installs it.
fn lock_table(node: &NodeView, set: &SafetySettings, out: &mut Vec<LintFinding>) {
    if set.lock_table == Some(false) {
        out.push(LintFinding {
            summary: "the metadata_lock_info plugin is not installed".to_owned(),
            why: "when a DDL waits for a lock, rwtop names who holds it for sure only from its \
                  METADATA_LOCK_INFO; without it, it names suspects (open transactions, idle \
                  sessions) and cannot tell which of them holds LOCK TABLES, FLUSH TABLES WITH \
                  READ LOCK or a backup stage"
                .to_owned(),
            fix: "INSTALL SONAME 'metadata_lock_info'; (no restart; it stays installed across \
                  restarts)"
                .to_owned(),
            ..finding("metadata_lock_info", LintSeverity::Info, node)
        });
    }
}

/// One format, ROW, across the topology: an error where they differ, a warning where all agree
/// on another.
fn binlog_formats(judged: &[(&NodeView, &SafetySettings)], out: &mut Vec<LintFinding>) {
    let formats: BTreeMap<&str, usize> = judged
        .iter()
        .filter_map(|(_, s)| s.binlog_format.as_deref())
        .fold(BTreeMap::new(), |mut m, f| {
            *m.entry(f).or_default() += 1;
            m
        });
    let mixed = formats.len() > 1;
    for &(node, set) in judged {
        let Some(format) = set.binlog_format.as_deref().filter(|f| *f != "ROW") else {
            continue;
        };
        let (severity, why) = if mixed {
            (
                LintSeverity::Error,
                "nodes log in different formats: a statement-logged change can apply differently \
                 on a row-logging replica, and the data drifts",
            )
        } else {
            (
                LintSeverity::Warning,
                "statement-based logging can apply non-deterministic statements differently on \
                 replicas; ROW is what every failover tool assumes",
            )
        };
        out.push(LintFinding {
            summary: format!("binlog_format = {format}"),
            why: why.to_owned(),
            fix: set_and_persist("binlog_format", "ROW")
                + " (a SET GLOBAL takes effect in new sessions)",
            ..finding("binlog_format", severity, node)
        });
    }
}

fn server_ids(judged: &[(&NodeView, &SafetySettings)], out: &mut Vec<LintFinding>) {
    let mut by_id: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for (node, set) in judged {
        if let Some(id) = set.server_id {
            by_id.entry(id).or_default().push(&node.name);
        }
    }
    let next_free = by_id.keys().next_back().map_or(1, |m| m.saturating_add(1));
    for &(node, set) in judged {
        let Some(id) = set.server_id else { continue };
        let sharing = &by_id[&id];
        if sharing.len() < 2 {
            continue;
        }
        let others: Vec<&str> = sharing
            .iter()
            .copied()
            .filter(|n| *n != node.name)
            .collect();
        out.push(LintFinding {
            summary: format!("server_id {id} is also {}'s", others.join(", ")),
            why: "a source skips events that carry the receiver's own server_id, and replicas \
                  with one id knock each other's connection off the source"
                .to_owned(),
            fix: format!(
                "give each node its own id: SET GLOBAL server_id = {next_free}; restart its \
                 replication; and in my.cnf: server_id = {next_free}"
            ),
            ..finding("server_id", LintSeverity::Error, node)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;

    #[test]
    fn a_node_without_a_lock_table_is_told_how_to_get_one() {
        let mut topo = Topo::new();
        let set = |lock_table| SafetySettings {
            lock_table,
            ..SafetySettings::default()
        };
        topo.node_mut("db1", |n| live(n).settings = Some(set(Some(false))));
        topo.node_mut("r1", |n| live(n).settings = Some(set(Some(true))));
        topo.node_mut("r2", |n| live(n).settings = Some(set(None)));
        let findings = lint(&topo.snapshot);
        let found: Vec<(&str, &str)> = findings
            .iter()
            .filter(|f| f.id == "metadata_lock_info")
            .map(|f| (f.node.as_str(), f.fix.split(';').next().unwrap_or_default()))
            .collect();
        assert_eq!(found, [("db1", "INSTALL SONAME 'metadata_lock_info'")]);
    }
}
