//! A sandbox, an engine watching it and a prober of its own: what the live test-read suites
//! share. Each suite waits for its own readiness and adds its own checks (`impl Rig` there).

use rwtop::engine::Engine;
use rwtop::probe::{ProbeResult, Prober, Strategy};
use rwtop::store::{Role, Snapshot};

use super::{TestSandbox, engine_spec};

pub struct Rig {
    pub t: TestSandbox,
    pub engine: Engine,
    pub prober: Prober,
}

impl Rig {
    /// The engine over `nodes` of `t`, and a prober on the same spec; nothing waited for yet.
    pub fn new(t: TestSandbox, nodes: &[(&str, Role)]) -> Self {
        let spec = engine_spec(&t, nodes);
        let engine = Engine::start(&spec);
        let mut prober = Prober::new(spec.probe_spec().expect("a primary"));
        prober.follow(engine.snapshots());
        Self { t, engine, prober }
    }

    pub async fn probe(&mut self, strategy: &str, target: &str) -> ProbeResult {
        let view = self.engine.latest();
        self.probe_on(strategy, target, &view).await
    }

    /// A probe that routes on `view`, a snapshot the test has checked, not on the latest one.
    pub async fn probe_on(&mut self, strategy: &str, target: &str, view: &Snapshot) -> ProbeResult {
        let strategy: Strategy = strategy.parse().expect("a strategy");
        let r = self.prober.run(strategy, target, view).await;
        eprintln!(
            "{strategy} on {target}: {:?} via {:?}, waited {:?}, cost {:?}, {} queries, cause {:?}, note {:?}",
            r.outcome, r.served_by, r.waited, r.cost, r.queries, r.cause, r.note
        );
        r
    }
}
