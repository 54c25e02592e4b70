//! The what-if states its own error (docs/whatif.md, "Error"): over the same minute of a real
//! sandbox — healthy, a write burst, a stalled source link, caught up again — a real bake-off
//! (none, sleep, lag-threshold, gtid-wait, each probing on a fixed tick) and the what-if over
//! the engine's lag series agree within the bound the what-if states.
//!
//! Judged are the comparisons that can fail: `sleep(100ms)`'s stale share, and the primary's
//! share of `lag-threshold(1s)` and of `gtid-wait(400ms)`. Each must also be beyond its bound
//! from 0, what a model that ignores lag simulates for all three, so such a model fails each.
//! Not judged, only printed: the stale shares of `none` and `lag-threshold(1s)`, because the
//! prober reads at once after its write (read-after 0) and those reads race the replica's apply,
//! which the model counts into its stated error (±76 % in a run): they cannot fail, and a later
//! read is not something the prober can measure apart from `sleep`, which is judged; the
//! primary's share of `none` and `sleep(100ms)` and the stale share of `gtid-wait(400ms)`,
//! because they are 0 on both sides by construction (neither reads the primary; the wait reads
//! fresh or falls back). That the scenario made the strategies differ is checked on the
//! measured probes.

#![expect(
    clippy::cast_precision_loss,
    reason = "probe counts and ms since the store's start fit a f64"
)]

mod common;

use std::time::Duration;

use common::{TestSandbox, engine_spec, exact, until};
use rwtop::engine::Engine;
use rwtop::probe::{Outcome, ProbeResult, Prober, Strategy};
use rwtop::store::{Role, Snapshot};
use rwtop::whatif::{self, Collector, Goal, Setting, Workload};

const DEADLINE: Duration = Duration::from_secs(60);
/// Every strategy probes once per tick; longer than the longest probe (the 400 ms wait), so
/// the probes sit on an even grid through the stall as well.
const TICK: Duration = Duration::from_millis(700);
/// The scenario's edges plus one: the probe grid's error, in probes.
const PHASE_EDGES: f64 = 5.0;
/// The comparisons judged (setting, share): the others cannot fail (see the top of the file).
const JUDGED: [(&str, &str); 3] = [
    ("sleep(100ms)", "stale"),
    ("lag-threshold(1s)", "primary"),
    ("gtid-wait(400ms)", "primary"),
];
const STRATEGIES: [&str; 4] = [
    "none",
    "sleep(100ms)",
    "lag-threshold(1s)",
    "gtid-wait(400ms)",
];

/// One strategy's probes on the tick until `stop`.
async fn probe_on_tick(
    mut prober: Prober,
    strategy: Strategy,
    snapshots: tokio::sync::watch::Receiver<std::sync::Arc<Snapshot>>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Vec<ProbeResult> {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut out = Vec::new();
    while !*stop.borrow() {
        tick.tick().await;
        let view = snapshots.borrow().clone();
        out.push(prober.run(strategy, "r1", view.as_ref()).await);
    }
    out
}

/// A probe's instant on the store's clock (the series' `at_ms`).
fn at_ms(s: &Snapshot, r: &ProbeResult) -> f64 {
    let back = (s.taken_at - r.at).num_microseconds().unwrap_or(0) as f64 / 1000.0;
    s.uptime.as_secs_f64() * 1000.0 - back
}

#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whatif_agrees_with_a_real_bakeoff_within_its_stated_error() {
    let t = TestSandbox::start_with_relay(1);
    let mut spec = engine_spec(&t, &[("primary", Role::Primary), ("r1", Role::Replica)]);
    spec.interval = Duration::from_millis(500);
    let engine = Engine::start(&spec);
    until(&engine, "r1 with a measured lag", DEADLINE, |s| {
        exact(s, "r1").map(|_| ())
    })
    .await;
    t.admin(
        "primary",
        "CREATE TABLE IF NOT EXISTS rwtop.burst (id INT PRIMARY KEY, pad CHAR(200))",
    );

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = Vec::new();
    for name in STRATEGIES {
        let prober = Prober::new(spec.probe_spec().expect("a primary"));
        let strategy: Strategy = name.parse().expect("a strategy");
        tasks.push(tokio::spawn(probe_on_tick(
            prober,
            strategy,
            engine.snapshots(),
            stop_rx.clone(),
        )));
    }
    // 15 s healthy; a burst of 150 000 rows in one transaction; 20 s with the source link
    // stalled (a frozen relay: SBM stays 0); 15 s caught up.
    tokio::time::sleep(Duration::from_secs(15)).await;
    tokio::task::block_in_place(|| {
        t.admin(
            "primary",
            "INSERT INTO rwtop.burst SELECT seq, 'x' FROM rwtop.seq_1_to_150000",
        )
    });
    tokio::time::sleep(Duration::from_secs(5)).await;
    t.relay("r1").stall();
    tokio::time::sleep(Duration::from_secs(20)).await;
    t.relay("r1").resume();
    tokio::time::sleep(Duration::from_secs(15)).await;
    stop_tx.send(true).expect("the probers listen");
    let mut measured = Vec::new();
    for task in tasks {
        measured.push(task.await.expect("a prober task"));
    }
    // The last probes' lag is in the next publication.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let snapshot = engine.latest();
    engine.shutdown().await;

    let all: Vec<f64> = measured
        .iter()
        .flatten()
        .map(|r| at_ms(&snapshot, r))
        .collect();
    let from = all.iter().copied().fold(f64::INFINITY, f64::min);
    let to = all.iter().copied().fold(0.0, f64::max);
    let mut collector = Collector::default();
    collector.add(&snapshot);
    let mut channels = collector.into_channels();
    for c in &mut channels {
        c.points
            .retain(|p| (p.at_ms as f64) >= from && (p.at_ms as f64) <= to + 1_000.0);
    }
    let settings: Vec<Setting> = STRATEGIES
        .iter()
        .map(|s| Setting::parse(s).expect("a setting"))
        .collect();
    let report = whatif::run(
        "the sandbox",
        &channels,
        spec.heartbeat_interval,
        &settings,
        &Workload::default(),
        Goal::default(),
    )
    .expect("a minute of lag is enough");

    let mut failures = Vec::new();
    let mut measured_shares = Vec::new();
    for ((name, results), row) in STRATEGIES.iter().zip(&measured).zip(&report.rows) {
        let judged: Vec<&ProbeResult> = results
            .iter()
            .filter(|r| r.outcome != Outcome::Error)
            .collect();
        let n = judged.len() as f64;
        assert!(n >= 60.0, "{name}: {n} probes, expected about 80");
        let share =
            |f: &dyn Fn(&ProbeResult) -> bool| judged.iter().filter(|r| f(r)).count() as f64 / n;
        // The probe grid's own error: a run of one verdict holds its time share ± 1 probe, and
        // the scenario has four edges (burst on and off, stall on and off): ± 5 probes.
        let grid = PHASE_EDGES / n;
        let stale = share(&|r| r.outcome == Outcome::Stale);
        let primary = share(&|r| r.served_by.as_deref() == Some("primary"));
        measured_shares.push((stale, primary));
        let j = &row.judged;
        for (what, sim, model_error, meas) in [
            ("stale", j.stale, j.stale_error, stale),
            ("primary", j.primary, j.primary_error, primary),
        ] {
            let kept = JUDGED.contains(&(*name, what));
            let bound = model_error + grid;
            eprintln!(
                "{name:<18} {what:<7} simulated {:>6.2}% (± {:.2}%, {} reads) measured {:>6.2}% ({n} probes, grid ± {:.2}%) |Δ| {:.2}% ≤ {:.2}%{}",
                sim * 100.0,
                model_error * 100.0,
                j.reads,
                meas * 100.0,
                grid * 100.0,
                (sim - meas).abs() * 100.0,
                bound * 100.0,
                if kept { "" } else { " (not judged)" }
            );
            if !kept {
                continue;
            }
            if meas <= bound {
                failures.push(format!(
                    "{name} {what}: measured {meas:.4} is within the bound {bound:.4} of 0, \
                     so a model that ignores lag would pass"
                ));
            }
            if (sim - meas).abs() > bound {
                failures.push(format!(
                    "{name} {what}: simulated {sim:.4}, measured {meas:.4}, bound {bound:.4}"
                ));
            }
        }
    }
    // The scenario must have made the strategies differ, as measured, or agreeing would prove
    // nothing: the stall made reads 100 ms after their write stale (reads at once are stale
    // by the race alone), and the wait fell back rather than read stale.
    let (sleep_stale, _) = measured_shares[1];
    assert!(
        sleep_stale > 0.2,
        "the stall made `sleep(100ms)` stale: {sleep_stale}"
    );
    let (wait_stale, wait_primary) = measured_shares[3];
    assert!(
        wait_stale == 0.0 && wait_primary > 0.2,
        "gtid-wait fell back in the stall: stale {wait_stale}, primary {wait_primary}"
    );
    assert!(
        failures.is_empty(),
        "outside the stated error: {failures:#?}"
    );
}
