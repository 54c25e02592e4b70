//! `rwtop probe`: a bake-off of read-after-write strategies against the real replicas, one line
//! per probe on stderr as it runs, then a table (or JSON with --json) on stdout.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use rwtop::config::{ConfigError, Origin};
use rwtop::engine::{Engine, EngineSpec};
use rwtop::poll::ConnState;
use rwtop::probe::target::label;
use rwtop::probe::{BakeoffPlan, ProbeSpec, Prober, Strategy, TallyView, Target, bakeoff};
use rwtop::store::lag::Lag;
use rwtop::store::{NodeView, Role, Snapshot};
use tokio::sync::watch;

use super::TargetArgs;
use super::output::emit;
use super::probe_table::{self, progress};

/// How long to wait for the replicas' measured lag (which lag-threshold routes on) before
/// probing anyway.
const SETTLE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// The replica to probe, or one of its channels as NODE/CHANNEL (agg/p2: the marker is then
    /// written on that channel's root) [default: every replica and every named channel, taking
    /// turns round by round].
    #[arg(long)]
    pub target: Option<String>,
    /// A strategy, a comma-separated list, or all, e.g. none,sleep(200ms),gtid-wait
    /// [default: probe.strategy from the config, gtid-wait].
    #[arg(long)]
    pub strategy: Option<String>,
    /// Probes per strategy [default: probe.count from the config, 10].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: Option<u32>,
    /// Pause between two probes [default: probe.spacing from the config, 100ms].
    #[arg(long, value_parser = super::duration_arg)]
    pub spacing: Option<Duration>,
    /// Print the results as JSON (docs/json-schema.md).
    #[arg(long)]
    pub json: bool,
}

/// What a bake-off produced.
struct BakeoffReport {
    rows: Vec<TallyView>,
    planned: usize,
    done: usize,
    interrupted: bool,
    /// Distinct notes the probes carried, as `strategy on replica: note`.
    notes: Vec<String>,
}

/// `rwtop probe --json` (docs/json-schema.md).
#[derive(serde::Serialize)]
struct JsonProbes<'a> {
    schema_version: &'static str,
    probes: &'a [TallyView],
}

fn flag_error(flag: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        at: Origin::Flag(flag.to_owned()),
        message,
    }
}

pub fn run(target: &TargetArgs, args: &ProbeArgs) -> anyhow::Result<()> {
    let config = super::load_config(target)?;
    let strategies = match &args.strategy {
        Some(text) => Strategy::parse_list(text, &config.settings.probe.defaults)
            .map_err(|message| flag_error("--strategy", message))?,
        None => vec![config.settings.probe.strategy],
    };
    let mut spec = EngineSpec {
        // This command owns the one prober and runs the bake-off itself.
        test_reads: rwtop::engine::TestReads::Caller,
        ..EngineSpec::from_config(&config)
    };
    let probe_spec = spec.probe_spec().ok_or_else(|| {
        anyhow::anyhow!(
            "no primary to probe: a probe writes a marker row on the primary, so name one with \
             [primary] in the config or --primary"
        )
    })?;
    let named = match args.target.as_deref().map(Target::parse).transpose() {
        Ok(named) => named,
        Err(message) => return Err(flag_error("--target", message).into()),
    };
    if named.as_ref().map(|t| t.node) == Some(probe_spec.primary.0.as_str()) {
        return Err(flag_error(
            "--target",
            format!(
                "{} is the primary: name a replica (the strategy decides when to read the primary)",
                probe_spec.primary.0
            ),
        )
        .into());
    }
    let configured: Vec<String> = config
        .nodes
        .iter()
        .filter(|n| n.role == rwtop::config::Role::Replica)
        .map(|n| n.name.clone())
        .collect();
    let mut plan = BakeoffPlan {
        strategies,
        targets: args.target.iter().cloned().collect(),
        count: args.count.unwrap_or(config.settings.probe.count),
        spacing: args.spacing.unwrap_or(config.settings.probe.spacing),
    };
    let runtime = super::runtime()?;
    let report = runtime.block_on(async {
        let engine = Engine::start_finding_roots(&mut spec).await;
        let report = bake(&engine, probe_spec, &configured, &mut plan).await;
        engine.shutdown().await;
        report
    })?;
    finish(&report, args.json)
}

/// Waits for the lag, picks the replicas, runs the plan; Ctrl-C stops it after the probe running.
async fn bake(
    engine: &Engine,
    probe_spec: ProbeSpec,
    configured: &[String],
    plan: &mut BakeoffPlan,
) -> anyhow::Result<BakeoffReport> {
    let (stop_tx, mut stop) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let interrupt = {
        let stop_tx = Arc::clone(&stop_tx);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = stop_tx.send(true);
            }
        })
    };
    let result = bake_until_stopped(engine, probe_spec, configured, plan, &mut stop).await;
    interrupt.abort();
    result
}

async fn bake_until_stopped(
    engine: &Engine,
    probe_spec: ProbeSpec,
    configured: &[String],
    plan: &mut BakeoffPlan,
    stop: &mut watch::Receiver<bool>,
) -> anyhow::Result<BakeoffReport> {
    let mut snapshots = engine.snapshots();
    let named = plan.targets.first().cloned();
    // Read-only refuses every probe: no use waiting for lag.
    let need_lag = !probe_spec.read_only;
    settle(&mut snapshots, stop, named.as_deref(), need_lag).await;
    let mut report = BakeoffReport {
        rows: Vec::new(),
        planned: plan.total(),
        done: 0,
        interrupted: *stop.borrow(),
        notes: Vec::new(),
    };
    if !report.interrupted {
        let primary = probe_spec.primary.0.clone();
        plan.targets = targets(&engine.latest(), configured, &primary, named.as_deref())?;
        report.planned = plan.total();
        let mut prober = Prober::new(probe_spec);
        prober.follow(snapshots.clone());
        let mut notes = Vec::new();
        let total = plan.total();
        report.rows = bakeoff::run(&mut prober, plan, &snapshots, stop, |done, r| {
            let _ = writeln!(std::io::stderr(), "{}", progress(done, total, r));
            if let Some(note) = &r.note {
                let line = format!("{} on {}: {note}", r.strategy, r.target);
                if !notes.contains(&line) {
                    notes.push(line);
                }
            }
        })
        .await;
        prober.close().await;
        report.notes = notes;
        report.done = report.rows.iter().map(|t| t.probes as usize).sum();
        report.interrupted = *stop.borrow() && report.done < report.planned;
    }
    Ok(report)
}

/// Returns once the snapshot is [`ready`], Ctrl-C was pressed, or [`SETTLE`] has passed.
async fn settle(
    snapshots: &mut watch::Receiver<Arc<Snapshot>>,
    stop: &mut watch::Receiver<bool>,
    target: Option<&str>,
    need_lag: bool,
) {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let view = snapshots.borrow_and_update().clone();
        if *stop.borrow() || ready(&view, target, need_lag) {
            return;
        }
        tokio::select! {
            changed = snapshots.changed() => if changed.is_err() { return },
            _ = stop.changed() => {}
            () = tokio::time::sleep_until(deadline) => return,
        }
    }
}

/// Every node has answered once, so the replicas each one reports are in the snapshot (the
/// store adds discovered nodes with the sample that reports them), and the targets' lag is
/// measured (every channel's, or the named one's), or cannot be soon.
fn ready(view: &Snapshot, target: Option<&str>, need_lag: bool) -> bool {
    let target = target.and_then(|t| Target::parse(t).ok());
    let gone = |n: &NodeView| matches!(n.conn, ConnState::Retrying { .. } | ConnState::Down { .. });
    let answered = |n: &NodeView| gone(n) || n.sample_seq > 0;
    let known = |lag: &Lag| match lag {
        Lag::Exact { .. } | Lag::AtLeast { upper: Some(_), .. } => true,
        Lag::AtLeast { upper: None, .. } | Lag::Unknown { .. } => false,
    };
    // A named target waits for its own channel (plain `agg`: the default one); the whole
    // topology for every channel, since each takes its turn.
    let measured = |n: &NodeView| {
        let aimed = |c: &&rwtop::store::ReplicaView| match &target {
            None => true,
            Some(Target { channel: None, .. }) => n.replica().is_some_and(|d| std::ptr::eq(d, *c)),
            Some(Target {
                channel: Some(name),
                ..
            }) => c.channel.eq_ignore_ascii_case(name),
        };
        gone(n)
            || n.channels
                .iter()
                .filter(aimed)
                .all(|c| known(&c.heartbeat_lag))
    };
    let targets = || {
        view.nodes.iter().filter(|n| match &target {
            Some(t) => n.name == t.node,
            None => n.role == Role::Replica,
        })
    };
    view.nodes.iter().all(answered) && (!need_lag || targets().all(measured))
}

/// The named replica or channel, else the configured replicas then the discovered ones, each
/// followed by its named channels (`agg`, `agg/p2`).
fn targets(
    view: &Snapshot,
    configured: &[String],
    primary: &str,
    named: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    let replicas: Vec<String> = configured
        .iter()
        .filter(|name| view.node(name).is_none_or(|n| n.role == Role::Replica))
        .cloned()
        .chain(
            view.nodes
                .iter()
                .filter(|n| n.role == Role::Replica && n.name != primary)
                .filter(|n| !configured.contains(&n.name))
                .map(|n| n.name.clone()),
        )
        .collect();
    let target = named.map(Target::parse).transpose();
    let target = target.map_err(|message| flag_error("--target", message))?;
    match (named, target) {
        (Some(name), Some(target)) if replicas.iter().any(|r| r == target.node) => {
            target
                .channel_in(view)
                .map_err(|message| flag_error("--target", message))?;
            Ok(vec![name.to_owned()])
        }
        (_, Some(Target { node: name, .. })) => {
            let message = match view.node(name) {
                Some(_) => format!("{name} is a primary now: name a replica"),
                None => format!(
                    "no replica named {name:?}; the replicas are: {}",
                    if replicas.is_empty() {
                        "none found".to_owned()
                    } else {
                        replicas.join(", ")
                    }
                ),
            };
            Err(flag_error("--target", message).into())
        }
        _ if replicas.is_empty() => Err(anyhow::anyhow!(
            "no replica to probe: name one with [[replicas]] in the config or --replica, or let \
             discovery find those the primary reports"
        )),
        _ => Ok(replicas
            .iter()
            .flat_map(|node| {
                let named = view.node(node).into_iter().flat_map(|n| {
                    let default = n.replica().map(|r| r.channel.as_str());
                    n.channels
                        .iter()
                        .filter(move |c| Some(c.channel.as_str()) != default)
                        .map(|c| label(node, &c.channel))
                });
                std::iter::once(node.clone()).chain(named)
            })
            .collect()),
    }
}

fn finish(report: &BakeoffReport, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        let doc = JsonProbes {
            schema_version: rwtop::export::json::SCHEMA_VERSION,
            probes: &report.rows,
        };
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        emit(&text)?;
    } else if !report.rows.is_empty() {
        let mut text = probe_table::table(&report.rows);
        for note in &report.notes {
            let _ = writeln!(text, "note: {note}");
        }
        emit(&text)?;
    }
    let errors: u32 = report.rows.iter().map(|t| t.errors).sum();
    if report.interrupted {
        anyhow::bail!(
            "interrupted after {} of {} probes",
            report.done,
            report.planned
        );
    }
    if report.done > 0 && errors as usize == report.done {
        let cause = report
            .rows
            .iter()
            .find_map(TallyView::main_cause)
            .unwrap_or("unknown");
        anyhow::bail!("every probe ended in error: {cause}");
    }
    Ok(())
}
