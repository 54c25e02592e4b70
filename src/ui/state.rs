//! The UI's own state: selection, sorting, chart window, panes and mode. Model state stays in
//! the store; this is only how the operator is looking at it.

use crate::probe::{BakeoffPlan, ProbeSettings, Strategy};
use crate::store::windows::Window;
use crate::store::{NodeView, Role, Snapshot};

/// What the keyboard is talking to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Help,
    /// A drain waits for `y`; see [`UiState::pending_drain`].
    Confirm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// Topology order (configured, then discovered).
    Name,
    /// Worst heartbeat lag first.
    Lag,
    /// Largest GTID backlog first.
    Backlog,
}

impl SortKey {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Name => Self::Lag,
            Self::Lag => Self::Backlog,
            Self::Backlog => Self::Name,
        }
    }

    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Name => "topology",
            Self::Lag => "lag",
            Self::Backlog => "backlog",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(clippy::struct_excessive_bools, reason = "independent pane toggles")]
pub struct Panes {
    pub topology: bool,
    pub detail: bool,
    pub alerts: bool,
    /// The test-reads pane, in the detail pane's place while shown.
    pub test_reads: bool,
    /// GTID sets shown in full in the detail pane instead of abbreviated.
    pub expand_gtid: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiState {
    /// Index into [`UiState::replicas`].
    pub selected: usize,
    pub sort: SortKey,
    pub window: Window,
    pub panes: Panes,
    pub mode: Mode,
    /// A one-line message in the footer (the answer to the last key).
    pub status: Option<String>,
    /// The key table in force (defaults plus `[keys]` from the config).
    pub keys: super::keys::KeyMap,
    /// The test-read strategy picked with `[` and `]`, and the bake-off's size.
    pub probe: ProbeChoice,
    /// The drain or undrain the confirmation asks about.
    pub pending_drain: Option<crate::drain::DrainRequest>,
    /// Where a replay stands (shown in the footer); `None` in the live view.
    pub replay: Option<crate::record::ReplayStatus>,
}

impl Default for UiState {
    fn default() -> Self {
        Self {
            selected: 0,
            sort: SortKey::Name,
            window: Window::OneMinute,
            panes: Panes {
                topology: true,
                detail: true,
                alerts: true,
                test_reads: false,
                expand_gtid: false,
            },
            mode: Mode::Normal,
            status: None,
            keys: super::keys::KeyMap::default(),
            probe: ProbeChoice::new(ProbeSettings::default()),
            pending_drain: None,
            replay: None,
        }
    }
}

/// The strategies `[` and `]` cycle through, the one in use, and what a bake-off runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeChoice {
    settings: ProbeSettings,
    /// Catalogue order, with the configured strategy among them.
    strategies: Vec<Strategy>,
    at: usize,
}

impl ProbeChoice {
    /// Starts at the configured strategy. One with a parameter of its own (`gtid-wait(300ms)`)
    /// is not in the catalogue's list: it joins it, next to its namesakes.
    #[must_use]
    pub fn new(settings: ProbeSettings) -> Self {
        let mut strategies = Strategy::all(&settings.defaults);
        let at = strategies
            .iter()
            .position(|s| *s == settings.strategy)
            .unwrap_or_else(|| {
                let at = strategies.partition_point(|s| *s < settings.strategy);
                strategies.insert(at, settings.strategy);
                at
            });
        Self {
            settings,
            strategies,
            at,
        }
    }

    #[must_use]
    pub fn current(&self) -> Strategy {
        self.strategies
            .get(self.at)
            .copied()
            .unwrap_or(self.settings.strategy)
    }

    /// The next strategy (or the previous one), wrapping around.
    pub fn step(&mut self, forward: bool) {
        let n = self.strategies.len().max(1);
        self.at = if forward {
            (self.at + 1) % n
        } else {
            (self.at + n - 1) % n
        };
    }

    /// Every catalogue strategy, `[probe] count` times each, against `target`.
    #[must_use]
    pub fn bakeoff(&self, target: &str) -> BakeoffPlan {
        BakeoffPlan {
            strategies: Strategy::all(&self.settings.defaults),
            targets: vec![target.to_owned()],
            count: self.settings.count,
            spacing: self.settings.spacing,
        }
    }
}

fn lag_ms(n: &NodeView) -> u128 {
    n.lag()
        .and_then(|lag| lag.value())
        .map_or(u128::MAX, |d| d.as_millis())
}

fn backlog(n: &NodeView) -> u64 {
    n.channels
        .iter()
        .filter_map(|r| r.gtid_backlog.total())
        .reduce(u64::saturating_add)
        .unwrap_or(0)
}

impl UiState {
    /// The replicas in the table's order.
    #[must_use]
    pub fn replicas<'a>(&self, snapshot: &'a Snapshot) -> Vec<&'a NodeView> {
        let mut replicas: Vec<&NodeView> = snapshot
            .nodes
            .iter()
            .filter(|n| n.role == Role::Replica)
            .collect();
        match self.sort {
            SortKey::Name => {}
            // Unknown lag sorts first: a replica nobody can measure is the one to look at.
            SortKey::Lag => replicas.sort_by_key(|n| std::cmp::Reverse(lag_ms(n))),
            SortKey::Backlog => replicas.sort_by_key(|n| std::cmp::Reverse(backlog(n))),
        }
        replicas
    }

    #[must_use]
    pub fn selected_node<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a NodeView> {
        let replicas = self.replicas(snapshot);
        replicas
            .get(self.selected.min(replicas.len().saturating_sub(1)))
            .copied()
    }
}
