//! Test reads aimed at a channel of a multi-source replica (`agg/p2`): the marker is written on
//! that channel's root and every strategy judges that channel, so a stopped channel is never
//! hidden by the healthy default one. Against a real multi-source sandbox.

mod common;

use std::time::Duration;

use common::probe_rig::Rig;
use common::{TestSandbox, eventually, rwtop, until};
use rwtop::probe::{Outcome, ProbeResult};
use rwtop::store::{Role, Snapshot};

const DEADLINE: Duration = Duration::from_secs(30);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

impl Rig {
    /// The multi-source sandbox (`primary` and `p2` feeding `agg`), an engine over all three and
    /// a prober of its own, once agg's two channels have a lag.
    async fn start() -> Self {
        let t = TestSandbox::start_multi_source(0);
        let nodes = [
            ("primary", Role::Primary),
            ("p2", Role::Primary),
            ("agg", Role::Replica),
        ];
        let rig = Self::new(t, &nodes);
        until(
            &rig.engine,
            "agg's two channels with a lag",
            DEADLINE,
            |s| {
                let agg = s.node("agg")?;
                let measured = agg
                    .channels
                    .iter()
                    .all(|c| c.heartbeat_lag.value().is_some());
                (agg.channels.len() == 2 && measured).then_some(())
            },
        )
        .await;
        rig
    }

    /// Nothing was written on agg by a probe (every GTID it logged is a root's), and cleanup
    /// deletes the markers on both roots, both deletes reaching agg.
    async fn assert_clean(&mut self) {
        let p2_id = self.t.admin("p2", "SELECT @@server_id AS id")[0]
            .u64(&["id"])
            .unwrap()
            .to_string();
        let state = self.t.admin("agg", "SELECT @@gtid_binlog_state AS s")[0]
            .optional_text(&["s"])
            .unwrap_or_default()
            .to_owned();
        for gtid in state.split(',') {
            let server = gtid.trim().split('-').nth(1).expect("domain-server-seq");
            assert!(server == "1" || server == p2_id, "agg logged {gtid}");
        }
        self.prober.cleanup(Duration::ZERO).await.expect("cleanup");
        let rig = &*self;
        for node in ["primary", "p2", "agg"] {
            eventually("no marker left", DEADLINE, async || {
                (rig.markers(node) == 0).then_some(())
            })
            .await;
        }
    }

    /// Probes until one reads `outcome` from `served_by`: a read at once races replication, so
    /// a single fresh read proves the channel delivers, and one never seen fails at the deadline.
    async fn until_outcome(
        &mut self,
        strategy: &str,
        target: &str,
        outcome: Outcome,
        served_by: &str,
    ) -> ProbeResult {
        let start = std::time::Instant::now();
        loop {
            let r = self.probe(strategy, target).await;
            if r.outcome == outcome && r.served_by.as_deref() == Some(served_by) {
                return r;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{strategy} on {target} never read {outcome:?} from {served_by}: {r:#?}"
            );
        }
    }

    /// Marker rows on `node`; 0 before the table is there (a root no probe wrote on).
    fn markers(&self, node: &str) -> u64 {
        let count = |sql| self.t.admin(node, sql)[0].u64(&["n"]).unwrap();
        let table = "SELECT COUNT(*) AS n FROM information_schema.TABLES \
                     WHERE TABLE_SCHEMA = 'rwtop' AND TABLE_NAME = 'probe'";
        if count(table) == 0 {
            return 0;
        }
        count("SELECT COUNT(*) AS n FROM rwtop.probe")
    }
}

fn channel_running(s: &Snapshot, channel: &str) -> Option<bool> {
    Some(s.node("agg")?.channel(channel)?.sql_running)
}

fn assert_outcome(r: &ProbeResult, outcome: Outcome, served_by: &str) {
    assert_eq!(r.outcome, outcome, "{r:#?}");
    assert_eq!(r.served_by.as_deref(), Some(served_by), "{r:#?}");
}

fn cause(r: &ProbeResult) -> &str {
    r.cause.as_deref().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_on_a_channel_writes_on_its_root_and_judges_that_channel() {
    let mut rig = Rig::start().await;

    // A channel agg does not have is refused before anything is written, naming those it has.
    let r = rig.probe("none", "agg/nope").await;
    assert_eq!(r.outcome, Outcome::Error, "{r:#?}");
    assert_eq!(
        cause(&r),
        "agg has no channel 'nope': its channels are '' (the default: agg), 'p2' (agg/p2)"
    );

    // Both channels healthy: a probe on agg/p2 writes on p2 (and nothing was written for the
    // refused one) and reads it on agg.
    let r = rig.probe("gtid-wait(5s)", "agg/p2").await;
    assert_outcome(&r, Outcome::Fresh, "agg");
    assert_eq!(rig.markers("p2"), 1, "the marker went to p2, agg/p2's root");
    assert_eq!(rig.markers("primary"), 0);

    // p2's channel stops applying; the default channel runs on.
    rig.t.admin("agg", "STOP SLAVE 'p2' SQL_THREAD");
    until(&rig.engine, "agg/p2's SQL thread stopped", DEADLINE, |s| {
        (channel_running(s, "p2") == Some(false) && channel_running(s, "") == Some(true))
            .then_some(())
    })
    .await;

    let r = rig.probe("none", "agg/p2").await;
    assert_outcome(&r, Outcome::Stale, "agg");
    rig.until_outcome("none", "agg", Outcome::Fresh, "agg")
        .await;
    let r = rig.probe("pos-wait(5s)", "agg").await;
    assert_outcome(&r, Outcome::Fresh, "agg");

    // MASTER_POS_WAIT on connection 'p2' answers NULL at once for its stopped SQL thread. Without
    // the connection name the default channel would judge p2's position (both binlogs are
    // binlog.000001) and send the read to agg, stale.
    let r = rig.probe("pos-wait(2s)", "agg/p2").await;
    assert_outcome(&r, Outcome::FellBack, "p2");
    assert!(cause(&r).starts_with("replication stopped"), "{r:?}");
    assert!(r.waited < ms(1500), "NULL at once, not the timeout: {r:?}");
    assert_eq!(r.primary_reads, 1);

    // The write's own GTID is in p2's domain (1), which agg does not apply now.
    let r = rig.probe("gtid-wait(500ms)", "agg/p2").await;
    assert_outcome(&r, Outcome::FellBack, "p2");
    assert!(cause(&r).starts_with("timeout after 500ms"), "{r:?}");
    assert!(cause(&r).contains("SQL thread is not running"), "{r:?}");
    assert!(r.waited >= ms(450), "{r:?}");

    for strategy in ["sbm-zero(300ms)", "pos-equal(300ms)", "gtid-equal(300ms)"] {
        let r = rig.probe(strategy, "agg/p2").await;
        assert_outcome(&r, Outcome::FellBack, "p2");
        assert!(cause(&r).starts_with("timeout after 300ms"), "{r:?}");
    }
    let r = rig.probe("sbm-zero(300ms)", "agg/p2").await;
    assert!(cause(&r).contains("NULL"), "that channel's SBM: {r:?}");
    let r = rig.probe("pos-equal(300ms)", "agg/p2").await;
    assert!(cause(&r).contains("SQL thread is not running"), "{r:?}");

    let r = rig.probe("primary", "agg/p2").await;
    assert_outcome(&r, Outcome::Fresh, "p2");

    // Lag-threshold judges agg/p2's own lag, and no other channel carries p2's writes.
    until(&rig.engine, "agg/p2 more than 1 s behind", DEADLINE, |s| {
        let lag = s.node("agg")?.channel("p2")?.heartbeat_lag.value()?;
        (lag > ms(1000)).then_some(())
    })
    .await;
    let r = rig.probe("lag-threshold(500ms)", "agg/p2").await;
    assert_outcome(&r, Outcome::FellBack, "p2");
    assert!(
        cause(&r).starts_with("no replica within 500ms: agg/p2"),
        "{r:?}"
    );

    // Applying again, the channel reads fresh by its write's GTID and by position.
    rig.t.admin("agg", "START SLAVE 'p2' SQL_THREAD");
    let r = rig.probe("gtid-wait(10s)", "agg/p2").await;
    assert_outcome(&r, Outcome::Fresh, "agg");
    let r = rig.probe("pos-wait(10s)", "agg/p2").await;
    assert_outcome(&r, Outcome::Fresh, "agg");

    rig.assert_clean().await;
    rig.engine.shutdown().await;
    rig.prober.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bakeoff_takes_channel_targets_and_refuses_unknown_ones() {
    let t = TestSandbox::start_multi_source(0);
    let config = t.sandbox().dir().join("rwtop.toml");
    let config = config.to_str().expect("a UTF-8 path");
    let probe = |target: &str| {
        let mut args = vec![
            "probe",
            "--config",
            config,
            "--strategy",
            "gtid-wait(5s)",
            "--count",
            "2",
            "--spacing",
            "10ms",
            "--json",
        ];
        if !target.is_empty() {
            args.extend(["--target", target]);
        }
        let out = rwtop(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        eprintln!("probe --target {target}: {:?}\n{stderr}", out.status);
        (out, stderr)
    };

    let (out, stderr) = probe("agg/nope");
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "agg has no channel 'nope': its channels are '' (the default: agg), 'p2' (agg/p2)"
        ),
        "{stderr}"
    );

    let (out, stderr) = probe("agg/p2");
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = doc["probes"].as_array().expect("probes");
    assert_eq!(rows.len(), 1, "{doc:#}");
    assert_eq!(rows[0]["replica"], "agg/p2", "{doc:#}");
    assert_eq!(rows[0]["fresh"], 2, "{doc:#}");
    assert_eq!(rows[0]["primary_reads"], 0, "{doc:#}");

    // Without a target every channel takes its turn: agg (the default channel), then agg/p2.
    let (out, stderr) = probe("");
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = doc["probes"].as_array().expect("probes");
    let aimed: Vec<_> = rows.iter().map(|r| r["replica"].as_str()).collect();
    assert_eq!(aimed, [Some("agg"), Some("agg/p2")], "{doc:#}");
    assert!(rows.iter().all(|r| r["fresh"] == 1), "{doc:#}");
}
