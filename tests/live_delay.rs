//! A deliberate delay is not an alert: against real servers, a replica with `MASTER_DELAY=5`
//! reads a lag of about 5 s and raises no `lag_p99_high`, while a replica whose SQL thread is
//! stopped does; the delayed one raises it too once it falls behind beyond its delay.

mod common;

use std::time::{Duration, Instant};

use common::{Load, TestSandbox, alert, evidence, exact, primary_and, until, until_healthy};
use rwtop::alerts::AlertKind;
use rwtop::engine::Engine;

const DEADLINE: Duration = Duration::from_secs(60);
const DELAY_S: u32 = 5;
/// How long the delayed replica is watched at its delay: several times what two bad samples
/// take to raise an alert.
const STRETCH: Duration = Duration::from_secs(15);

fn lag_p99(s: &rwtop::store::Snapshot, node: &str) -> Option<rwtop::alerts::Alert> {
    alert(s, AlertKind::LagP99High, Some(node))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_delayed_replica_raises_no_lag_alert_until_it_falls_behind_its_delay() {
    let t = TestSandbox::start(2, false);
    let engine = Engine::start(&primary_and(&t, &["r1", "r2"]));
    let _load = Load::start(&t).await;
    until_healthy(&engine, &["r1", "r2"], DEADLINE).await;

    // r1 delayed by 5 s (the threads stopped to change it), r2's SQL thread stopped.
    let flavor = &t.sandbox().binaries().flavor;
    let delay = format!(
        "{}; {}; {}",
        flavor.stop_replica_sql(),
        flavor.source_delay_sql(DELAY_S),
        flavor.start_replica_sql()
    );
    t.admin("r1", &delay);
    t.admin("r2", "STOP SLAVE SQL_THREAD");

    // Until r2 raised it and r1 was watched at its delay for the whole stretch, r1 raises
    // nothing.
    let mut delayed_since: Option<Instant> = None;
    let mut r1_lags = Vec::new();
    // MariaDB holds each event until its whole-second timestamp plus DELAY_S plus a clock
    // difference to the source it took in whole seconds (0 or 1 on one host) has passed, so it
    // applies a second's worth of commits at once, at a phase of its own: a model of the truth
    // is a second off on either side of that phase. The truth is watched instead: the age of
    // the newest stamp r1 applied, which is what the rule did (`common::lag_truth`).
    let truth = common::lag_truth::LagTruth::watch(&t, "r1").await;
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    let mut errors_ms = Vec::new();
    let mut r2_raised = None;
    let (s, _) = until(
        &engine,
        "r2 raised, r1 watched at its delay",
        DEADLINE,
        |s| {
            assert!(
                lag_p99(s, "r1").is_none(),
                "lag_p99_high on the delayed replica: {:?}",
                lag_p99(s, "r1")
            );
            r2_raised = r2_raised.take().or_else(|| lag_p99(s, "r2"));
            if let Some(lag) = exact(s, "r1").filter(|l| *l >= Duration::from_secs(4))
                && let Some(truth) = truth.lag_at(s.taken_at)
            {
                delayed_since.get_or_insert_with(Instant::now);
                r1_lags.push(lag);
                errors_ms.push(ms(lag) - ms(truth));
            }
            let watched = delayed_since.is_some_and(|at| at.elapsed() >= STRETCH);
            (watched && r2_raised.is_some()).then(|| s.clone())
        },
    )
    .await;
    let r1 = s
        .node("r1")
        .and_then(|n| n.replica().cloned())
        .expect("r1's status");
    assert_eq!(r1.sql_delay, Some(u64::from(DELAY_S)));
    r1_lags.sort();
    let median = r1_lags[r1_lags.len() / 2];
    eprintln!(
        "r1 at MASTER_DELAY={DELAY_S}: {} readings ≥ 4 s, median {median:?}, max {:?}",
        r1_lags.len(),
        r1_lags.last()
    );
    // Off the truth by no whole second, and otherwise within the estimator's half interval
    // and a busy machine's margin.
    common::lag_truth::judge_delayed(&format!("MASTER_DELAY={DELAY_S}"), &errors_ms);
    // r2 was judged on its true lag: no delay named.
    let r2 = r2_raised.expect("r2's alert");
    eprintln!("r2: {:?}", r2.evidence);
    assert!(r2.evidence.iter().all(|(k, _)| k != "sql_delay"), "{r2:?}");

    // r1 stopped on top of its delay: now behind beyond it, and told so with the delay named.
    t.admin("r1", "STOP SLAVE SQL_THREAD");
    let (a, took) = until(
        &engine,
        "lag_p99_high on r1 beyond its delay",
        DEADLINE,
        |s| lag_p99(s, "r1"),
    )
    .await;
    eprintln!(
        "r1 raised {took:?} after its SQL thread stopped: {:?}",
        a.evidence
    );
    assert_eq!(evidence(&a, "sql_delay"), "5s");
    let seconds = |text: &str| {
        text.trim_end_matches('s')
            .parse::<f64>()
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    let true_p99 = seconds(evidence(&a, "lag_p99_1m"));
    let beyond = seconds(evidence(&a, "lag_p99_beyond_delay_1m"));
    assert!(
        beyond > 1.0 && true_p99 > beyond + 3.0,
        "true P99 {true_p99}, beyond the delay {beyond}"
    );
    assert!(a.cause.contains("beyond the 5s SQL_Delay"), "{}", a.cause);
    engine.shutdown().await;
}
