//! `rwtop whatif`: which read-after-write setting would serve a workload here, judged from the
//! lag series alone (live, or a recording), no probe written (docs/whatif.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rwtop::engine::{Engine, EngineSpec};
use rwtop::record::Recording;
use rwtop::whatif::{self, Collector, Goal, Setting, WhatifReport, Workload};

use super::TargetArgs;
use super::output::emit;

/// The JSON document's schema, in docs/whatif.md.
pub const SCHEMA: &str = "rwtop.whatif/1";
/// Live: how often the engine's series (its last 15 minutes) is gathered.
const GATHER_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, clap::Args)]
pub struct WhatifArgs {
    /// Read this recording (made with --record FILE) instead of watching the topology live.
    #[arg(long, value_name = "FILE")]
    pub recording: Option<PathBuf>,
    /// Live: how long to watch the topology before judging (at least 30 s plus the longest
    /// setting).
    #[arg(long, default_value = "2m", value_parser = super::duration_arg)]
    pub duration: Duration,
    /// Reads the application makes per write (the primary's extra queries per write follow).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub reads_per_write: u32,
    /// How soon after its write each read comes, a comma-separated list taken in equal
    /// shares: 0 (at once), 50ms, 500ms...
    #[arg(long, default_value = "0", value_name = "LIST", value_parser = read_after_arg)]
    pub read_after: ReadAfter,
    /// The stale-read target, as a percentage of reads.
    #[arg(long, default_value = "0.1%", value_parser = share_arg)]
    pub max_stale: f64,
    /// The share of reads the primary may take in any whole minute, as a percentage; 80 % keeps
    /// the 20 % headroom the fallback path needs.
    #[arg(long, default_value = "80%", value_parser = share_arg)]
    pub primary_budget: f64,
    /// The settings to judge, comma-separated [default: every setting over a grid of values].
    #[arg(long, value_name = "LIST", value_parser = settings_arg)]
    pub settings: Option<SettingList>,
    /// Print the documented JSON document (docs/whatif.md) instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadAfter(pub Vec<Duration>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingList(pub Vec<Setting>);

fn read_after_arg(text: &str) -> Result<ReadAfter, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if ["0", "0s", "0ms"].contains(&part) {
            out.push(Duration::ZERO);
        } else {
            out.push(
                rwtop::config::parse_duration(part)
                    .map_err(|reason| format!("{reason}; write the delays as e.g. 0,50ms,500ms"))?,
            );
        }
    }
    if out.is_empty() {
        return Err("no delay given: write e.g. 0,50ms,500ms".to_owned());
    }
    Ok(ReadAfter(out))
}

fn share_arg(text: &str) -> Result<f64, String> {
    let number = text.trim().strip_suffix('%').ok_or_else(|| {
        format!("found {text:?}: write a percentage with its sign, e.g. 0.1% or 80%")
    })?;
    match number.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!(
            "found {text:?}: expected a percentage from 0% to 100%, e.g. 0.1%"
        )),
    }
}

fn settings_arg(text: &str) -> Result<SettingList, String> {
    Setting::parse_list(text).map(SettingList)
}

pub fn run(target: &TargetArgs, args: &WhatifArgs) -> anyhow::Result<()> {
    let (source, collector) = match &args.recording {
        Some(path) => (path.display().to_string(), from_recording(path)?),
        None => ("the live topology".to_owned(), live(target, args.duration)?),
    };
    let settings = args
        .settings
        .as_ref()
        .map_or_else(Setting::grid, |s| s.0.clone());
    let workload = Workload {
        reads_per_write: args.reads_per_write,
        read_after: args.read_after.0.clone(),
    };
    let goal = Goal {
        max_stale: args.max_stale,
        primary_budget: args.primary_budget,
    };
    let heartbeat = collector.heartbeat();
    let channels = collector.into_channels();
    let report = whatif::run(&source, &channels, heartbeat, &settings, &workload, goal)?;
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&document(&report))?;
        text.push('\n');
        text
    } else {
        super::whatif_table::text(&report)
    };
    emit(&text)?;
    Ok(())
}

/// The JSON document: the schema name, then the report.
#[must_use]
pub fn document(report: &WhatifReport) -> serde_json::Value {
    let mut value = serde_json::to_value(report).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("schema".to_owned(), SCHEMA.into());
    }
    value
}

/// Every frame's series gathered: a frame is read when the last one read is a minute older
/// (each holds its channels' last 15 minutes), and the last one always.
fn from_recording(path: &Path) -> anyhow::Result<Collector> {
    let recording = Recording::open(path)?;
    if let Some(warning) = recording.warning() {
        eprintln!("rwtop: warning: {warning}");
    }
    let mut collector = Collector::default();
    let mut read: Option<Duration> = None;
    for index in 0..recording.len() {
        let offset = recording.offset(index);
        let last = index + 1 == recording.len();
        if last || read.is_none_or(|r| offset >= r + GATHER_EVERY) {
            if let Some(frame) = recording.frame(index) {
                collector.add(&frame);
            }
            read = Some(offset);
        }
    }
    Ok(collector)
}

/// The configured topology watched for `duration`, its series gathered every minute.
fn live(target: &TargetArgs, duration: Duration) -> anyhow::Result<Collector> {
    let config = super::load_config(target)?;
    let mut spec = EngineSpec::from_config(&config);
    let runtime = super::runtime()?;
    eprintln!(
        "rwtop: watching the topology's lag for {} (no probe written)…",
        rwtop::units::duration(duration)
    );
    Ok(runtime.block_on(async {
        let engine = Engine::start_finding_roots(&mut spec).await;
        let mut collector = Collector::default();
        let mut left = duration;
        while !left.is_zero() {
            let step = left.min(GATHER_EVERY);
            tokio::time::sleep(step).await;
            left -= step;
            collector.add(&engine.latest());
        }
        let mut updates = engine.snapshots();
        let _ = tokio::time::timeout(Duration::from_millis(1500), updates.changed()).await;
        collector.add(&engine.latest());
        engine.shutdown().await;
        collector
    }))
}
