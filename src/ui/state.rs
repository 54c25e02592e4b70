//! The UI's own state: selection, sorting, chart window, panes and mode. Model state stays in
//! the store; this is only how the operator is looking at it.

use crate::probe::{BakeoffPlan, ProbeSettings, Strategy};
use crate::store::alert_view::place;
use crate::store::windows::Window;
use crate::store::{NodeView, ReplicaView, Role, Snapshot};

/// What the keyboard is talking to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Help,
    /// A drain or a kill waits for `y`; see [`UiState::pending_drain`], [`UiState::pending_kill`].
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

/// The panes that take the detail pane's place, one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cover {
    TestReads,
    Whatif,
    Lint,
    Exposure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(clippy::struct_excessive_bools, reason = "independent pane toggles")]
pub struct Panes {
    pub topology: bool,
    pub detail: bool,
    pub alerts: bool,
    /// The pane shown in the detail pane's place, if any.
    pub cover: Option<Cover>,
    /// GTID sets shown in full in the detail pane instead of abbreviated.
    pub expand_gtid: bool,
    /// The alerts pane shows every incident's symptoms under its cause, not only their count.
    pub expand_incidents: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiState {
    /// Index into [`UiState::rows`].
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
    /// The kill of a waiting DDL's blocker the confirmation asks about.
    pub pending_kill: Option<super::kill::Pending>,
    /// Whether the engine runs kills (`[ddl] allow_kill = true`); off, `K` says how to enable.
    pub kill_enabled: bool,
    /// The newest kill whose outcome the footer has shown.
    pub kill_shown: Option<chrono::DateTime<chrono::Utc>>,
    /// The missing grants the footer last told of ([`super::grant_note`]): told once each.
    pub grants_told: String,
    /// Where a replay stands (shown in the footer); `None` in the live view.
    pub replay: Option<crate::record::ReplayStatus>,
    /// The what-if pane's content, worked out while the pane is shown ([`super::whatif`]).
    pub whatif: Option<super::whatif::WhatifView>,
    /// The `?` screen's first shown line, and how far it can move on the terminal it was last
    /// drawn on (0: it all fits, and any key closes it).
    pub help: HelpView,
}

/// A key that moves the `?` screen's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HelpScroll {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
}

impl HelpScroll {
    #[must_use]
    pub fn of(code: ratatui::crossterm::event::KeyCode) -> Option<Self> {
        use ratatui::crossterm::event::KeyCode as K;
        Some(match code {
            K::Up => Self::Up,
            K::Down => Self::Down,
            K::PageUp => Self::PageUp,
            K::PageDown => Self::PageDown,
            K::Home => Self::Home,
            K::End => Self::End,
            _ => return None,
        })
    }
}

/// Where the `?` screen's list stands when it is longer than the terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelpView {
    pub first: usize,
    /// Set by the screen as it draws: the most `first` can be there, and the lines a page moves.
    pub room: std::cell::Cell<(usize, usize)>,
}

impl HelpView {
    /// Moves the list; `false` when it all fits, so the key closes the screen instead.
    pub fn scroll(&mut self, by: HelpScroll) -> bool {
        use HelpScroll as S;
        let (last, page) = self.room.get();
        if last == 0 {
            return false;
        }
        self.first = match by {
            S::Up => self.first.saturating_sub(1),
            S::Down => self.first + 1,
            S::PageUp => self.first.saturating_sub(page.max(1)),
            S::PageDown => self.first + page.max(1),
            S::Home => 0,
            S::End => last,
        }
        .min(last);
        true
    }
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
                cover: None,
                expand_gtid: false,
                expand_incidents: false,
            },
            mode: Mode::Normal,
            status: None,
            keys: super::keys::KeyMap::default(),
            probe: ProbeChoice::new(ProbeSettings::default()),
            pending_drain: None,
            pending_kill: None,
            kill_enabled: false,
            kill_shown: None,
            grants_told: String::new(),
            replay: None,
            whatif: None,
            help: HelpView::default(),
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

/// One row of the replica table: a channel of a replica, or a replica with no channel yet (no
/// replication status read so far). A node with several channels has a row for each.
#[derive(Debug, Clone, Copy)]
pub struct ReplicaRow<'a> {
    pub node: &'a NodeView,
    pub channel: Option<&'a ReplicaView>,
}

impl ReplicaRow<'_> {
    /// The channel's name when it is a named one; the default channel (`''`) stays unnamed.
    #[must_use]
    pub fn channel_name(&self) -> Option<&str> {
        self.channel
            .map(|c| c.channel.as_str())
            .filter(|c| !c.is_empty())
    }

    /// `agg` or `agg/p2`: how every panel names the row, and the test-read target it stands for.
    #[must_use]
    pub fn label(&self) -> String {
        place(Some(&self.node.name), self.channel_name()).unwrap_or_default()
    }

    /// The node this row's channel replicates from, when rwtop polls it. Recordings before the
    /// channels kept a source only on the node (for its first channel).
    #[must_use]
    pub fn source(&self) -> Option<&str> {
        let first = match (self.channel, self.node.channels.first()) {
            (Some(channel), Some(first)) => std::ptr::eq(channel, first),
            _ => true,
        };
        self.channel
            .and_then(|c| c.source.as_deref())
            .or_else(|| self.node.source.as_deref().filter(|_| first))
    }

    /// Whether this row shows `channel` of `node`.
    #[must_use]
    pub fn is(&self, node: &NodeView, channel: Option<&ReplicaView>) -> bool {
        std::ptr::eq(self.node, node)
            && self.channel.map(|c| c.channel.as_str()) == channel.map(|c| c.channel.as_str())
    }

    /// The row's lag: its channel's, or a Galera member's behind its cluster's writer.
    #[must_use]
    pub fn lag(&self) -> Option<&crate::store::lag::Lag> {
        match self.channel {
            Some(c) => Some(&c.heartbeat_lag),
            None => self.node.galera().map(|g| &g.lag),
        }
    }

    /// The row's lag over the sliding windows, as [`Self::lag`] picks.
    #[must_use]
    pub fn windows(
        &self,
    ) -> &[(
        crate::store::windows::Window,
        Option<crate::store::windows::WindowStats>,
    )] {
        match (self.channel, self.node.galera()) {
            (Some(c), _) => &c.windows,
            (None, Some(g)) => &g.windows,
            (None, None) => &[],
        }
    }

    fn lag_ms(&self) -> u128 {
        self.lag()
            .and_then(crate::store::lag::Lag::value)
            .map_or(u128::MAX, |d| d.as_millis())
    }

    /// Transactions behind: a channel's GTID backlog, or a member's receive queue.
    fn backlog(&self) -> u64 {
        match self.channel {
            Some(c) => c.gtid_backlog.total(),
            None => self.node.galera().and_then(|g| g.status.recv_queue),
        }
        .unwrap_or(0)
    }
}

impl UiState {
    /// The replica table's rows in its order: a row per channel, each sorted on its own.
    #[must_use]
    pub fn rows<'a>(&self, snapshot: &'a Snapshot) -> Vec<ReplicaRow<'a>> {
        let mut rows: Vec<ReplicaRow<'a>> = Vec::with_capacity(snapshot.nodes.len());
        // Replicas and Galera members: the nodes reads are sent to.
        for node in snapshot.nodes.iter().filter(|n| n.role != Role::Primary) {
            if node.channels.is_empty() {
                rows.push(ReplicaRow {
                    node,
                    channel: None,
                });
            }
            rows.extend(node.channels.iter().map(|c| ReplicaRow {
                node,
                channel: Some(c),
            }));
        }
        match self.sort {
            SortKey::Name => {}
            // Unknown lag sorts first: a channel nobody can measure is the one to look at.
            SortKey::Lag => rows.sort_by_key(|r| std::cmp::Reverse(r.lag_ms())),
            SortKey::Backlog => rows.sort_by_key(|r| std::cmp::Reverse(r.backlog())),
        }
        rows
    }

    /// The selected row (the last one when the selection is past the end).
    #[must_use]
    pub fn selected_row<'a>(&self, snapshot: &'a Snapshot) -> Option<ReplicaRow<'a>> {
        let rows = self.rows(snapshot);
        rows.get(self.selected.min(rows.len().saturating_sub(1)))
            .copied()
    }

    /// The selected row's node: what a drain acts on.
    #[must_use]
    pub fn selected_node<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a NodeView> {
        self.selected_row(snapshot).map(|r| r.node)
    }
}
