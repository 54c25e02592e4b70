//! The lag's two parts, transport and apply (`src/store/lag_split.rs`), against ground truth, for
//! the `lag_truth` bench.
//!
//! The truth of each part comes from what the scenario does to the disturbed replica, as the
//! truth of the whole comes from its rows: a stopped IO thread or a stalled link lets nothing
//! more arrive while the applier applies everything that did, so the whole truth is transport
//! and apply is 0; a stopped SQL thread or a `MASTER_DELAY` leaves the link receiving
//! everything, so the whole truth is apply and transport is 0. A healthy replica's few
//! milliseconds are in flight: transport. Each reported part is compared with its truth at the
//! instant the snapshot was built, over the same steady phases as the whole.

use super::{Lag, Phase, REPLICAS, Scenario, Seen, quantile, row, truth};

/// Which part a scenario's lag is: `true` for transport.
fn is_transport(scenario: Scenario) -> bool {
    matches!(
        scenario,
        Scenario::Healthy | Scenario::IoStopped | Scenario::StalledLink
    )
}

#[derive(Default)]
struct PartErrors {
    transport: Vec<f64>,
    apply: Vec<f64>,
    not_exact: usize,
}

pub fn report(rounds: &[(Vec<Phase>, Vec<Seen>)], truths: &[truth::Truth]) {
    let mut by: Vec<PartErrors> = Scenario::ALL
        .iter()
        .map(|_| PartErrors::default())
        .collect();
    for (phases, seen) in rounds {
        for snap in seen {
            let Some(phase) = Phase::holding(phases, snap.at) else {
                continue;
            };
            for (r, name) in REPLICAS.iter().enumerate() {
                let scenario = phase.scenario_of(name);
                let Some(errors) = scenario.slot().and_then(|i| by.get_mut(i)) else {
                    continue;
                };
                let Some(truth) = truths[r].at(snap.at).map(|t| t.as_secs_f64()) else {
                    continue;
                };
                let Some((Lag::Exact { lag: t }, Lag::Exact { lag: a })) = &snap.splits[r] else {
                    errors.not_exact += 1;
                    continue;
                };
                let (truth_t, truth_a) = if is_transport(scenario) {
                    (truth, 0.0)
                } else {
                    (0.0, truth)
                };
                errors.transport.push(t.as_secs_f64() - truth_t);
                errors.apply.push(a.as_secs_f64() - truth_a);
            }
        }
    }
    println!();
    println!(
        "| scenario | n | not exact | median transport − truth | **p95 \\|transport − truth\\|** \
         | median apply − truth | **p95 \\|apply − truth\\|** |"
    );
    println!("|---|---|---|---|---|---|---|");
    let abs = |v: &[f64]| v.iter().map(|x| x.abs()).collect::<Vec<f64>>();
    let secs = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{v:+.3} s"));
    for (scenario, e) in Scenario::ALL.iter().zip(&by) {
        println!(
            "| {} | {} | {} | {} | **{}** | {} | **{}** |",
            scenario.name(),
            e.transport.len(),
            e.not_exact,
            secs(quantile(&e.transport, 0.5)),
            secs(quantile(&abs(&e.transport), 0.95)),
            secs(quantile(&e.apply, 0.5)),
            secs(quantile(&abs(&e.apply), 0.95)),
        );
    }
    println!();
    for (scenario, e) in Scenario::ALL.iter().zip(&by) {
        let name = scenario.name();
        row(
            &format!("{name}_split_not_exact"),
            e.not_exact as f64,
            "snapshots",
        );
        for (part, values) in [("transport", &e.transport), ("apply", &e.apply)] {
            if let Some(v) = quantile(&abs(values), 0.95) {
                row(&format!("{name}_{part}_abs_err_p95"), v * 1000.0, "ms");
            }
        }
    }
}
