//! What happened inside one window, kept from the snapshots as they pass: the statements seen
//! running on each node, every channel's lag points, and the alert log, test reads and drain
//! actions that fall inside it. Each snapshot's lists are bounded (the newest few), so entries
//! are kept as they appear, each once.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::ReportSettings;
use super::replica::{self, ReplicaLag};
use super::window::Bounds;
use crate::drain::ActionRecord;
use crate::mysql::DdlWait;
use crate::probe::ProbeResult;
use crate::store::alert_view::LogEntry;
use crate::store::{NodeView, Role, Snapshot};

/// One statement as seen on one node across the window's processlist scans.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub node: String,
    /// Run on a primary (by a client there), not a replica.
    pub on_primary: bool,
    /// Run by replication's applier, not a client.
    pub applier: bool,
    pub text: String,
    /// When it started: its first sighting less the time it had run by then.
    pub started: DateTime<Utc>,
    /// The last scan that still saw it.
    pub last_seen: DateTime<Utc>,
    /// The longest run time a scan reported (whole seconds, as the server counts).
    pub elapsed_s: u64,
    /// The highest progress reported, in percent (MariaDB's `PROGRESS`, which starts again
    /// from 0 for an `ALTER`'s last stage).
    pub progress: Option<f64>,
    /// Still running in the window's last snapshot.
    pub running_at_end: bool,
    /// How long of it the statement waited for a lock, and which.
    pub wait: DdlWait,
    /// An online schema change tool's run rather than one statement: `text` is its title
    /// (`pt-osc on shop.orders`), its progress approximate, and its last phase here.
    pub osc_phase: Option<crate::mysql::OscPhase>,
}

/// Everything a report shows about one window.
#[derive(Debug, Clone)]
pub struct Facts {
    pub bounds: Bounds,
    /// The window's start and end on the wall clock (UTC).
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// The routing threshold judged by.
    pub threshold: Duration,
    /// In order of start.
    pub statements: Vec<Statement>,
    /// By name (`node`, or `node/channel` for a multi-source replica's other channels).
    pub replicas: Vec<ReplicaLag>,
    /// Oldest first.
    pub alerts: Vec<LogEntry>,
    pub probes: Vec<ProbeResult>,
    pub drains: Vec<ActionRecord>,
    /// Seconds from `from`: the first statement's start, and when the primary's last one was
    /// last seen running (the moment replicas could start applying it).
    pub ddl_start: Option<f64>,
    pub primary_done: Option<f64>,
    /// Seconds from `from` to `to`.
    pub length: f64,
}

impl Facts {
    /// The wall-clock time `offset` seconds into the window.
    #[must_use]
    pub fn at(&self, offset: f64) -> DateTime<Utc> {
        let ms = (offset * 1000.0).round();
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a window's offsets are far inside i64 milliseconds"
        )]
        let ms = ms as i64;
        self.from + chrono::Duration::milliseconds(ms)
    }

    /// One line per online schema change run: `pt-osc on shop.orders, 4m12s, worst lag 3.10s
    /// on r2` (the window's worst lag, which the run caused or shared).
    #[must_use]
    pub fn osc_lines(&self) -> Vec<String> {
        let worst = self.worst().map_or_else(
            || "lag unknown".to_owned(),
            |(name, lag)| {
                format!(
                    "worst lag {} on {name}",
                    crate::units::lag(Duration::from_secs_f64(lag.max(0.0)))
                )
            },
        );
        self.statements
            .iter()
            .filter(|s| s.osc_phase.is_some())
            .map(|s| format!("{}, {}, {worst}", s.text, crate::units::secs(s.elapsed_s)))
            .collect()
    }

    /// The worst lag any replica reached, with its name.
    #[must_use]
    pub fn worst(&self) -> Option<(&str, f64)> {
        self.replicas
            .iter()
            .filter_map(|r| Some((r.name.as_str(), r.max?.1)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Keeps a window's facts from the snapshots handed to it, from the window's start on.
#[derive(Debug)]
pub struct Gatherer {
    settings: ReportSettings,
    /// The window's start, store uptime.
    from: Duration,
    /// `taken_at − uptime`: the wall-clock time of the store's start, from the first snapshot.
    origin: Option<DateTime<Utc>>,
    last: Option<Duration>,
    statements: BTreeMap<(String, u64, String), Statement>,
    /// Per chart key: `(at_ms, lag_ms)`, oldest first.
    series: BTreeMap<String, Vec<(u64, Option<u32>)>>,
    seen: HashSet<String>,
    alerts: Vec<LogEntry>,
    probes: Vec<ProbeResult>,
    drains: Vec<ActionRecord>,
}

impl Gatherer {
    /// A window that starts at `from` (store uptime).
    #[must_use]
    pub fn new(settings: ReportSettings, from: Duration) -> Self {
        Self {
            settings,
            from,
            origin: None,
            last: None,
            statements: BTreeMap::new(),
            series: BTreeMap::new(),
            seen: HashSet::new(),
            alerts: Vec::new(),
            probes: Vec::new(),
            drains: Vec::new(),
        }
    }

    fn wall(&self, uptime: Duration) -> DateTime<Utc> {
        let origin = self.origin.unwrap_or_default();
        origin + chrono::Duration::from_std(uptime).unwrap_or_default()
    }

    /// Takes what is new in `snapshot`; one seen before changes nothing.
    pub fn observe(&mut self, snapshot: &Snapshot) {
        if self.last.is_some_and(|last| snapshot.uptime <= last) {
            return;
        }
        self.last = Some(snapshot.uptime);
        let origin = *self.origin.get_or_insert_with(|| {
            snapshot.taken_at - chrono::Duration::from_std(snapshot.uptime).unwrap_or_default()
        });
        let start_ms = millis(self.from.saturating_sub(self.settings.lead_in));
        for node in &snapshot.nodes {
            self.statements_of(node, snapshot);
            for (index, channel) in node.channels.iter().enumerate() {
                let key = chart_key(node, index);
                let kept = self.series.entry(key).or_default();
                let after = kept.last().map(|p| p.0);
                kept.extend(
                    channel
                        .series
                        .iter()
                        .filter(|p| p.at_ms >= start_ms && after.is_none_or(|a| p.at_ms > a))
                        .map(|p| (p.at_ms, p.heartbeat_lag_ms)),
                );
            }
        }
        let start = origin + chrono::Duration::from_std(self.from).unwrap_or_default();
        for entry in snapshot.alerts.log.iter().rev() {
            let key = format!("a{}{}{}", entry.at, entry.raised, entry.summary);
            if entry.at >= start && self.seen.insert(key) {
                self.alerts.push(entry.clone());
            }
        }
        for probe in snapshot.probes.recent.iter().rev() {
            let key = format!("p{}{}{}", probe.at, probe.strategy, probe.target);
            if probe.at >= start && self.seen.insert(key) {
                self.probes.push(probe.clone());
            }
        }
        for action in snapshot.drain.log.iter().rev() {
            let key = format!("d{}{}{}", action.at, action.replica, action.message);
            if action.at >= start && self.seen.insert(key) {
                self.drains.push(action.clone());
            }
        }
    }

    fn statements_of(&mut self, node: &NodeView, snapshot: &Snapshot) {
        let now = self.wall(snapshot.uptime);
        for running in self.statements.values_mut().filter(|s| s.node == node.name) {
            if node.fresh_scan().is_some() {
                running.running_at_end = false;
            }
        }
        for ddl in node.ddl() {
            let key = (node.name.clone(), ddl.id, ddl.statement.clone());
            let elapsed = chrono::Duration::seconds(i64::try_from(ddl.elapsed_s).unwrap_or(0));
            let statement = self.statements.entry(key).or_insert_with(|| Statement {
                node: node.name.clone(),
                on_primary: node.role == Role::Primary,
                applier: ddl.applier,
                text: ddl.statement.clone(),
                started: now - elapsed,
                last_seen: now,
                elapsed_s: ddl.elapsed_s,
                progress: None,
                running_at_end: true,
                wait: DdlWait::default(),
                osc_phase: None,
            });
            statement.wait.observe(ddl);
            statement.last_seen = now;
            statement.elapsed_s = statement.elapsed_s.max(ddl.elapsed_s);
            statement.progress = match (statement.progress, ddl.progress) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            statement.running_at_end = true;
        }
        // A tool's run is kept as a statement of the node it runs on, keyed by its title.
        for run in node.osc() {
            let title = run.title();
            let elapsed_s = run.elapsed_s.unwrap_or(0);
            let key = (node.name.clone(), u64::MAX, title.clone());
            let elapsed = chrono::Duration::seconds(i64::try_from(elapsed_s).unwrap_or(0));
            let statement = self.statements.entry(key).or_insert_with(|| Statement {
                node: node.name.clone(),
                on_primary: node.role == Role::Primary,
                applier: false,
                text: title,
                started: now - elapsed,
                last_seen: now,
                elapsed_s,
                progress: None,
                running_at_end: true,
                wait: DdlWait::default(),
                osc_phase: None,
            });
            statement.last_seen = now;
            statement.elapsed_s = statement.elapsed_s.max(elapsed_s);
            statement.progress = match (statement.progress, run.progress()) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            statement.osc_phase = Some(run.phase);
            statement.running_at_end = true;
        }
    }

    /// The facts of the window `bounds` (whose `from` this gatherer was made with).
    #[must_use]
    pub fn finish(self, bounds: Bounds) -> Facts {
        let from = self.wall(bounds.from);
        let to = self.wall(bounds.to);
        let offset = |t: DateTime<Utc>| (t - from).as_seconds_f64();
        let mut statements: Vec<Statement> = self.statements.into_values().collect();
        statements.sort_by_key(|s| (s.started, s.node.clone()));
        let ddl_start = statements.iter().map(|s| s.started).min().map(offset);
        // The primary's own statements; failing those (a DDL run on a replica by a client),
        // any client's.
        let clients: Vec<&Statement> = statements.iter().filter(|s| !s.applier).collect();
        let on_primary = clients.iter().any(|s| s.on_primary);
        let primary_done = clients
            .iter()
            .filter(|s| s.on_primary || !on_primary)
            .filter(|s| !s.running_at_end)
            .map(|s| s.last_seen)
            .max()
            .map(offset);
        let from_ms = millis(bounds.from);
        let to_ms = millis(bounds.to);
        let threshold = self.settings.threshold.as_secs_f64();
        let replicas = self
            .series
            .into_iter()
            .filter(|(_, points)| !points.is_empty())
            .map(|(name, points)| {
                let points = points
                    .into_iter()
                    .filter(|p| p.0 <= to_ms)
                    .map(|(at, lag)| {
                        #[expect(
                            clippy::cast_precision_loss,
                            reason = "milliseconds within a window are far below 2^52"
                        )]
                        let t = (at as f64 - from_ms as f64) / 1000.0;
                        (t, lag.map(|ms| f64::from(ms) / 1000.0))
                    })
                    .collect();
                replica::judge(name, points, threshold, primary_done)
            })
            .collect();
        Facts {
            bounds,
            from,
            to,
            threshold: self.settings.threshold,
            statements,
            replicas,
            alerts: self.alerts,
            probes: self.probes,
            drains: self.drains,
            ddl_start,
            primary_done,
            length: offset(to),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `node` for a node's first channel, `node/channel` for the others (as recordings key them).
fn chart_key(node: &NodeView, index: usize) -> String {
    match node.channels.get(index) {
        Some(c) if node.replica_index() != Some(index) => format!("{}/{}", node.name, c.channel),
        _ => node.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::window::Opened;
    use crate::report::window::tests::{settings, snap};
    use crate::store::alert_view::AlertKind;
    use crate::store::testkit::set_osc;

    /// An entry made at sample `step`'s time.
    fn entry(step: u64, raised: bool) -> LogEntry {
        LogEntry {
            at: snap(step, 0.0, None).taken_at,
            raised,
            kind: AlertKind::DdlInFlight,
            node: Some("db1".to_owned()),
            channel: None,
            summary: format!(
                "ddl_in_flight on db1 {}",
                if raised { "raised" } else { "cleared" }
            ),
        }
    }

    /// The alert log repeats its entries in every snapshot, newest first: each is kept once, in
    /// order, and one from before the window is left out. The statement's run time and start
    /// come from its sightings.
    #[test]
    fn entries_are_kept_once_and_the_statement_is_timed_from_its_sightings() {
        let first = snap(10, 0.1, Some(2));
        let from = snap(8, 0.0, None).uptime;
        let mut gatherer = Gatherer::new(settings(), from);
        let mut a = first.clone();
        a.alerts.log = vec![entry(10, true), entry(4, false)].into();
        gatherer.observe(&a);
        let mut b = snap(11, 0.1, Some(3));
        b.alerts.log = vec![entry(11, false), entry(10, true), entry(4, false)].into();
        gatherer.observe(&b);
        gatherer.observe(&b);
        let end = snap(12, 0.1, None);
        gatherer.observe(&end);
        let facts = gatherer.finish(Bounds {
            from,
            to: end.uptime,
            by: Opened::Ddl,
            cut_short: false,
        });
        let raised: Vec<bool> = facts.alerts.iter().map(|e| e.raised).collect();
        assert_eq!(raised, vec![true, false], "{:?}", facts.alerts);
        let [statement] = facts.statements.as_slice() else {
            panic!("{:?}", facts.statements);
        };
        assert_eq!(statement.elapsed_s, 3);
        assert!(!statement.running_at_end && statement.on_primary);
        assert_eq!(facts.ddl_start, Some(0.0));
        assert_eq!(facts.primary_done, Some(3.0), "last seen at step 11");
        assert!((facts.length - 4.0).abs() < 1e-9);
    }

    /// A tool's run is kept as a statement named for it, and the report's line names the tool,
    /// the table, its run time and the window's worst lag (or says it is unknown).
    #[test]
    fn an_online_schema_change_run_is_kept_and_named() {
        use crate::store::testkit::{Topo, osc_run};
        let at = |step: u64, run: Option<u64>| {
            let mut topo = Topo::new();
            if let Some(elapsed) = run {
                topo.node_mut("db1", |n| {
                    set_osc(n, vec![osc_run(100_000 * elapsed / 10, elapsed)]);
                });
            }
            topo.at(step)
        };
        let from = at(0, None).uptime;
        let mut gatherer = Gatherer::new(settings(), from);
        for (step, run) in [(10, Some(10)), (20, Some(20)), (30, None)] {
            gatherer.observe(&at(step, run));
        }
        let facts = gatherer.finish(Bounds {
            from,
            to: at(30, None).uptime,
            by: Opened::Ddl,
            cut_short: false,
        });
        let [run] = facts.statements.as_slice() else {
            panic!("{:?}", facts.statements);
        };
        assert_eq!(run.text, "pt-osc on shop.orders");
        assert_eq!(run.progress, Some(50.0));
        assert!(!run.running_at_end);
        let lines = facts.osc_lines();
        assert_eq!(lines.len(), 1);
        // The synthetic snapshots carry no lag chart, from which the worst lag is read (the live
        // test sees `worst lag 0.05s on r1` from real charts).
        assert_eq!(lines, ["pt-osc on shop.orders, 20s, lag unknown"]);
    }
}
