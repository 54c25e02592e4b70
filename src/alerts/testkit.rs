//! Alert assertions over the store's synthetic topologies ([`crate::store::testkit::Topo`]).

use super::{Alert, AlertEngine, AlertKind, AlertSettings};
use crate::store::testkit::{Topo, find};

/// Judges a synthetic topology with a fresh alert engine.
pub trait Judge {
    fn raise(&self, kind: AlertKind, node: Option<&str>) -> Alert;
    fn raises_at_once(&self, kind: AlertKind, node: Option<&str>) -> bool;
    fn assert_quiet(&self, kind: AlertKind);
}

impl Judge for Topo {
    /// Asserts that two bad samples raise `kind` on `node` with its severity, evidence and
    /// cause; returns the alert. Whether one sample does is [`Judge::raises_at_once`]'s question.
    fn raise(&self, kind: AlertKind, node: Option<&str>) -> Alert {
        let mut engine = AlertEngine::new(AlertSettings::default());
        engine.evaluate(&self.at(1));
        let second = engine.evaluate(&self.at(2));
        let alert = find(&second, kind, node)
            .cloned()
            .unwrap_or_else(|| panic!("{kind:?} on {node:?} not raised: {second:#?}"));
        // A folded alert shows as a warning: its incident carries the severity.
        if !alert.is_folded() {
            assert_eq!(alert.severity, kind.severity());
        }
        assert_eq!(alert.count, 2);
        assert!(!alert.evidence.is_empty() && !alert.cause.is_empty());
        let logged = second
            .log
            .iter()
            .any(|e| e.raised && e.kind == kind && e.node.as_deref() == node);
        assert!(logged, "raise not logged: {:?}", second.log);
        alert
    }

    /// Whether the first sample already raises `kind` on `node` (a stated verdict) rather than
    /// the run of readings the hysteresis asks for.
    fn raises_at_once(&self, kind: AlertKind, node: Option<&str>) -> bool {
        let mut engine = AlertEngine::new(AlertSettings::default());
        find(&engine.evaluate(&self.at(1)), kind, node).is_some()
    }

    /// Asserts that five samples raise no alert of `kind` anywhere.
    fn assert_quiet(&self, kind: AlertKind) {
        let mut engine = AlertEngine::new(AlertSettings::default());
        for step in 1..=5 {
            let view = engine.evaluate(&self.at(step));
            let raised: Vec<_> = view.active.iter().filter(|a| a.kind == kind).collect();
            assert!(raised.is_empty(), "{kind:?} raised: {raised:#?}");
        }
    }
}

/// r1's IO thread stopped and c1, under r1 with SBM 0, as far behind as r1 plus its own 0.1 s
/// hop: judged by a real engine over two samples, as the live view gets it. One critical
/// incident, c1's alert inherited.
pub(crate) fn io_stop_incident() -> crate::store::Snapshot {
    use crate::mysql::IoRunning;
    use crate::store::lag::Lag;
    use crate::store::testkit::secs;
    let mut topo = Topo::new();
    topo.add_replica("c1", "r1", 4);
    topo.replica_mut("r1", |r| {
        r.io_running = IoRunning::No;
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::Exact { lag: secs(12.0) };
    });
    topo.replica_mut("c1", |r| {
        r.heartbeat_lag = Lag::Exact { lag: secs(12.1) };
        r.hop_lag = Some(secs(0.1));
    });
    let mut engine = AlertEngine::new(AlertSettings::default());
    engine.evaluate(&topo.at(1));
    let mut snapshot = topo.at(2);
    snapshot.alerts = engine.evaluate(&snapshot);
    snapshot
}
