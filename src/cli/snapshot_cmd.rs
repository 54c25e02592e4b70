//! `rwtop snapshot`: poll for a while, then print one picture of the topology.

use std::fmt::Write as _;
use std::time::Duration;

use rwtop::export::json;
use rwtop::poll::{Engine, EngineSpec};
use rwtop::store::Snapshot;
use rwtop::units;

use super::TargetArgs;
use super::output::emit;

pub fn run(target: &TargetArgs, as_json: bool, duration: Duration) -> anyhow::Result<()> {
    let config = super::load_config(target)?;
    let spec = EngineSpec::from_config(&config);
    let runtime = super::runtime()?;
    let snapshot = runtime.block_on(async {
        let engine = Engine::start(&spec);
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
        table(&snapshot)
    };
    Ok(emit(&text)?)
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
        let r = n.replica.as_ref();
        let minute = r.and_then(|r| r.windows.first().and_then(|(_, w)| *w));
        let lag_now = r.map_or_else(
            || "-".to_owned(),
            |r| r.heartbeat_lag.text().unwrap_or_else(|| "?".to_owned()),
        );
        let _ = writeln!(
            out,
            "{:<12} {:<8} {:<10} {:<8} {:>6} {:>9} {:>9} {:>9} {:>10}",
            n.name,
            format!("{:?}", n.role).to_lowercase(),
            n.conn.name(),
            n.source.as_deref().unwrap_or("-"),
            r.map_or_else(
                || "-".to_owned(),
                |r| r
                    .seconds_behind_source
                    .map_or("NULL".to_owned(), units::secs)
            ),
            lag_now,
            lag(minute.map(|m| m.p50)),
            lag(minute.map(|m| m.p99)),
            r.and_then(|r| r.gtid_backlog.total())
                .map_or("-".to_owned(), |b| b.to_string()),
        );
    }
    out
}
