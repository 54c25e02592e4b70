//! The proxies' consistency modes against a stalled source link (a frozen relay between r1 and
//! the primary): both of r1's threads say `Yes` and `Seconds_Behind_Master` stays 0 while r1
//! silently falls behind. `sbm-zero` reads stale there, as the articles warn; no mode does.

mod common;

use std::time::Duration;

use common::{Load, TestSandbox, engine_spec, exact, until};
use rwtop::engine::Engine;
use rwtop::probe::{Outcome, ProbeResult, Prober, Strategy};
use rwtop::store::Role;

const DEADLINE: Duration = Duration::from_secs(30);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn probe(prober: &mut Prober, engine: &Engine, strategy: &str) -> ProbeResult {
    let strategy: Strategy = strategy.parse().expect("a strategy");
    let view = engine.latest();
    let r = prober.run(strategy, "r1", view.as_ref()).await;
    eprintln!(
        "{strategy} on r1: {:?} via {:?}, waited {:?}, cost {:?}, cause {:?}, note {:?}",
        r.outcome, r.served_by, r.waited, r.cost, r.cause, r.note
    );
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_stalled_link_sbm_zero_reads_stale_and_no_proxy_mode_does() {
    let t = TestSandbox::start_with_relay(2);
    let spec = engine_spec(
        &t,
        &[
            ("primary", Role::Primary),
            ("r1", Role::Replica),
            ("r2", Role::Replica),
        ],
    );
    let engine = Engine::start(&spec);
    let mut prober = Prober::new(spec.probe_spec().expect("a primary"));
    until(&engine, "r1 and r2 caught up and polled", DEADLINE, |s| {
        let ready = ["r1", "r2"].iter().all(|n| {
            exact(s, n) == Some(Duration::ZERO) && s.node(n).is_some_and(|v| v.gtid().is_some())
        });
        ready.then_some(())
    })
    .await;
    // Create the marker table everywhere before the stall, so a stale read is a missing row.
    let r = probe(&mut prober, &engine, "gtid-wait(5s)").await;
    assert_eq!(r.outcome, Outcome::Fresh, "{r:#?}");

    t.relay("r1").stall();
    let load = Load::start(&t).await;
    // The stall is silent: r1's status still reads both threads running and 0 s behind.
    let status = t.admin("r1", "SHOW SLAVE STATUS");
    assert_eq!(
        status[0].optional_text(&["Slave_IO_Running"]),
        Some("Yes"),
        "{status:?}"
    );

    let r = probe(&mut prober, &engine, "sbm-zero(500ms)").await;
    assert_eq!(
        r.outcome,
        Outcome::Stale,
        "Seconds_Behind_Master reads 0 on a stalled link, so sbm-zero reads r1 at once: {r:#?}"
    );
    assert_eq!(r.served_by.as_deref(), Some("r1"));

    for mode in [
        "maxscale-local(500ms)",
        "maxscale-global(500ms)",
        "maxscale-universal(500ms)",
        "router-wait(500ms)",
        "gr-before(500ms)",
    ] {
        let r = probe(&mut prober, &engine, mode).await;
        assert_eq!(r.outcome, Outcome::FellBack, "{r:#?}");
        assert_eq!(r.served_by.as_deref(), Some("primary"), "{r:#?}");
        let cause = r.cause.as_deref().unwrap_or_default();
        assert_eq!(cause, "timeout after 500ms", "the SQL thread runs: {r:#?}");
        assert!(r.waited >= ms(450), "{r:#?}");
    }
    for mode in [
        "maxscale-fast",
        "maxscale-fast-global",
        "maxscale-fast-universal",
        "maxscale-fast(monitor=100ms)",
        "maxscale-fast-universal(monitor=50ms)",
        "router-wait(0)",
        "proxysql-gtid",
    ] {
        for _ in 0..3 {
            let r = probe(&mut prober, &engine, mode).await;
            assert!(
                matches!(r.outcome, Outcome::Fresh | Outcome::FellBack),
                "{r:#?}"
            );
            assert_ne!(r.served_by.as_deref(), Some("r1"), "{r:#?}");
            assert!(r.waited < ms(200), "no wait: {r:#?}");
        }
    }
    let r = probe(&mut prober, &engine, "gr-after(500ms)").await;
    assert_eq!(r.outcome, Outcome::FellBack, "{r:#?}");
    assert!(r.cost.write_wait.is_some_and(|d| d >= ms(450)), "{r:#?}");

    drop(load);
    t.relay("r1").resume();
    prober.close().await;
    engine.shutdown().await;
}
