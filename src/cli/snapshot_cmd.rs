//! `rwtop snapshot`: poll for a while, then print one picture of the topology.

use std::fmt::Write as _;
use std::time::Duration;

use rwtop::engine::{Engine, EngineSpec};
use rwtop::export::json;
use rwtop::store::Snapshot;
use rwtop::units;

use super::TargetArgs;
use super::output::emit;

pub fn run(target: &TargetArgs, as_json: bool, duration: Duration) -> anyhow::Result<()> {
    let config = super::load_config(target)?;
    let mut spec = EngineSpec::from_config(&config);
    let runtime = super::runtime()?;
    let snapshot = runtime.block_on(async {
        let engine = Engine::start_finding_roots(&mut spec).await;
        tokio::time::sleep(duration).await;
        // One more publication so the last events are in.
        let mut updates = engine.snapshots();
        let _ = tokio::time::timeout(Duration::from_millis(500), updates.changed()).await;
        let snapshot = engine.latest();
        engine.shutdown().await;
        snapshot
    });
    let text = if as_json {
        let mut text = serde_json::to_string_pretty(&json::from_snapshot(&snapshot))?;
        text.push('\n');
        text
    } else {
        let mut text = table(&snapshot);
        let why = why_not_up(&snapshot) + &why_unknown(&snapshot) + &missing_grants(&snapshot);
        if !why.is_empty() {
            text.push('\n');
            text.push_str(&why);
        }
        text
    };
    emit(&text)?;
    every_login_refused(&snapshot)
}

/// Why each node that is not up is not: its last error, the JSON's `state_detail`.
fn why_not_up(s: &Snapshot) -> String {
    let mut out = String::new();
    for n in &s.nodes {
        if let Some(cause) = conn_cause(&n.conn) {
            let _ = writeln!(out, "{} is {}: {cause}", n.name, n.conn.name());
        }
    }
    out
}

/// Why each root's heartbeat is not written, and why each channel's lag is unknown: a `?` in
/// the table is never left unexplained.
fn why_unknown(s: &Snapshot) -> String {
    let mut out = String::new();
    for root in &s.heartbeat.roots {
        if let Some(detail) = root.writer.detail() {
            let node = root.node.as_deref().unwrap_or("the primary");
            let _ = writeln!(out, "heartbeat on {node} {}: {detail}", root.writer.name());
        }
    }
    for n in s
        .nodes
        .iter()
        .filter(|n| n.conn == rwtop::poll::ConnState::Up)
    {
        for r in &n.channels {
            if let rwtop::store::lag::Lag::Unknown { reason } = &r.heartbeat_lag {
                let channel = Some(r.channel.as_str()).filter(|c| !c.is_empty());
                let place = rwtop::store::alert_view::place(Some(&n.name), channel);
                let _ = writeln!(out, "{} lag unknown: {reason}", place.unwrap_or_default());
            }
        }
    }
    out
}

/// What is off for want of a grant, per node, with the statement that grants it.
fn missing_grants(s: &Snapshot) -> String {
    let mut out = String::new();
    for n in &s.nodes {
        for m in &n.missing_grants {
            let _ = writeln!(out, "{} missing grant {}; fix: {}", n.name, m.text(), m.fix);
        }
    }
    out
}

fn conn_cause(conn: &rwtop::poll::ConnState) -> Option<&str> {
    use rwtop::poll::ConnState;
    match conn {
        ConnState::Retrying { cause, .. } | ConnState::Down { cause, .. } => Some(cause),
        ConnState::Connecting | ConnState::Up => None,
    }
}

/// A down node is an observation, and its snapshot a success (exit 0). But when every node
/// refused rwtop's login, the servers answered and rwtop saw nothing of them: the snapshot (still
/// printed) describes rwtop's credentials, not the topology, so a script must hear of it (exit 1).
fn every_login_refused(s: &Snapshot) -> anyhow::Result<()> {
    let refused = s
        .nodes
        .iter()
        .filter(|n| conn_cause(&n.conn).is_some_and(rwtop::mysql::conn::is_login_refused))
        .count();
    if refused > 0 && refused == s.nodes.len() {
        anyhow::bail!(
            "every node refused rwtop's login ({refused} of {refused}): nothing was observed; \
             check the DSN user and RWTOP_PASSWORD / password file"
        );
    }
    Ok(())
}

/// A lag figure, or `-` where there is none.
fn lag(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".to_owned(), units::lag)
}

fn table(s: &Snapshot) -> String {
    let mut out = format!(
        "{:<12} {:<8} {:<10} {:<8} {:>6} {:>9} {:>9} {:>9} {:>10}\n",
        "NODE", "ROLE", "STATE", "SOURCE", "SBM", "LAG NOW", "LAG P50", "LAG P99", "BACKLOG"
    );
    for n in &s.nodes {
        // A row per channel (the default one under the node's own name), or one for a node that
        // replicates from nobody.
        let rows: Vec<Option<&rwtop::store::ReplicaView>> = if n.channels.is_empty() {
            vec![None]
        } else {
            n.channels.iter().map(Some).collect()
        };
        for r in rows {
            row(&mut out, n, r);
        }
    }
    out
}

fn row(out: &mut String, n: &rwtop::store::NodeView, r: Option<&rwtop::store::ReplicaView>) {
    let place = rwtop::store::alert_view::place(
        Some(&n.name),
        r.map(|r| r.channel.as_str()).filter(|c| !c.is_empty()),
    )
    .unwrap_or_default();
    let source = r.map_or(n.source.as_deref(), |r| r.source.as_deref());
    // A Galera member's own row: its lag behind the cluster's writer, its receive queue.
    let member = r.is_none().then(|| n.galera()).flatten();
    let (lag_now, windows) = match (r, member) {
        (Some(r), _) => (Some(&r.heartbeat_lag), &r.windows[..]),
        (None, Some(g)) => (Some(&g.lag), &g.windows[..]),
        (None, None) => (None, &[][..]),
    };
    let minute = windows.first().and_then(|(_, w)| *w);
    let lag_now = lag_now.map_or_else(
        || "-".to_owned(),
        |l| l.text().unwrap_or_else(|| "?".to_owned()),
    );
    let backlog = match (r, member) {
        (Some(r), _) => r.gtid_backlog.total(),
        (None, Some(g)) => g.status.recv_queue,
        (None, None) => None,
    };
    let _ = writeln!(
        out,
        "{:<12} {:<8} {:<10} {:<8} {:>6} {:>9} {:>9} {:>9} {:>10}",
        place,
        format!("{:?}", n.role).to_lowercase(),
        n.conn.name(),
        source.unwrap_or("-"),
        r.map_or_else(
            || "-".to_owned(),
            |r| r
                .seconds_behind_source
                .map_or("NULL".to_owned(), units::secs)
        ),
        lag_now,
        lag(minute.map(|m| m.p50)),
        lag(minute.map(|m| m.p99)),
        backlog.map_or("-".to_owned(), |b| b.to_string()),
    );
}
