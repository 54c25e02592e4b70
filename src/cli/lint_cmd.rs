//! `rwtop lint`: read every node's settings once, print the health lint's findings (text, or
//! JSON with --json), and exit 1 when one is an error, so a script or a CI job can gate on it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use rwtop::alerts::lint::{self, LintFinding, LintSeverity};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::poll::ConnState;
use rwtop::store::Snapshot;

use super::TargetArgs;
use super::output::emit;

pub fn run(target: &TargetArgs, as_json: bool, wait: Duration) -> anyhow::Result<()> {
    let config = super::load_config(target)?;
    let mut spec = EngineSpec::from_config(&config);
    let runtime = super::runtime()?;
    let snapshot = runtime.block_on(async {
        let engine = Engine::start_finding_roots(&mut spec).await;
        let mut updates = engine.snapshots();
        let deadline = Instant::now() + wait;
        while !ready(&engine.latest()) && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = tokio::time::timeout(left, updates.changed()).await;
        }
        let snapshot = engine.latest();
        engine.shutdown().await;
        snapshot
    });
    let findings = lint::lint(&snapshot);
    let text = if as_json {
        let doc = serde_json::json!({
            "schema_version": rwtop::export::json::SCHEMA_VERSION,
            "lint": findings,
            "not_judged": not_judged(&snapshot),
        });
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        text
    } else {
        table(&snapshot, &findings)
    };
    emit(&text)?;
    let errors = findings
        .iter()
        .filter(|f| f.severity == LintSeverity::Error)
        .count();
    if errors > 0 {
        anyhow::bail!("{errors} error finding(s)");
    }
    Ok(())
}

/// Every node either judged (settings and a first sample in, which carries the binlog list) or
/// not answering.
fn ready(s: &Snapshot) -> bool {
    s.nodes.iter().all(|n| match n.conn {
        ConnState::Up => n.settings().is_some() && n.sample_seq > 0,
        ConnState::Connecting => false,
        ConnState::Retrying { .. } | ConnState::Down { .. } => true,
    })
}

fn not_judged(s: &Snapshot) -> Vec<serde_json::Value> {
    s.nodes
        .iter()
        .filter(|n| n.settings().is_none())
        .map(|n| serde_json::json!({"node": n.name, "state": n.conn.name()}))
        .collect()
}

fn table(s: &Snapshot, findings: &[LintFinding]) -> String {
    let mut out = String::new();
    for f in findings {
        let channel = match f.channel.as_deref() {
            None => String::new(),
            Some("") => " (default channel)".to_owned(),
            Some(c) => format!(" (channel '{c}')"),
        };
        let _ = writeln!(
            out,
            "{:<8} {:<31} {}{channel}: {}",
            f.severity.name().to_uppercase(),
            f.id,
            f.node,
            f.summary
        );
        let _ = writeln!(out, "         why: {}", f.why);
        let _ = writeln!(out, "         fix: {}", f.fix);
    }
    for n in s.nodes.iter().filter(|n| n.settings().is_none()) {
        let _ = writeln!(out, "{}: not judged (node is {})", n.name, n.conn.name());
    }
    let count = |sev| findings.iter().filter(|f| f.severity == sev).count();
    let _ = writeln!(
        out,
        "{} error(s), {} warning(s), {} info on {} node(s)",
        count(LintSeverity::Error),
        count(LintSeverity::Warning),
        count(LintSeverity::Info),
        s.nodes.iter().filter(|n| n.settings().is_some()).count()
    );
    out
}
