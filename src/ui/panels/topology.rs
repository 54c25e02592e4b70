//! The topology tree: primary → replicas → cascaded replicas, following each node's `source`.
//!
//! A broken link (node down, IO or SQL thread not running) is drawn differently from a healthy
//! one, and each node's state has its own glyph as well as its own colour, so the tree reads
//! right on a monochrome terminal too. Nodes whose source is not in the tree are listed under
//! "unattached" rather than dropped: a replica that fell out of the topology is exactly the one
//! to notice.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::block;
use crate::mysql::IoRunning;
use crate::poll::ConnState;
use crate::store::lag::Lag;
use crate::store::{NodeView, Role, Snapshot};
use crate::ui::{RenderCtx, Theme};
use crate::units;

/// Lag column: `≥` plus six characters.
const LAG_WIDTH: usize = 7;
/// SBM column: `NULL` or whole seconds, up to `59m59s`.
const SBM_WIDTH: usize = 6;

/// Lag and SBM thresholds shared by every panel: under a second is healthy, under ten is worth
/// watching, beyond that reads are visibly stale.
pub(crate) fn severity(ms: u128, theme: &Theme) -> Style {
    match ms {
        0..1_000 => theme.ok,
        1_000..10_000 => theme.warning,
        _ => theme.critical,
    }
}

/// Heartbeat lag now: exact, a lower bound (`≥`), or `?` when it cannot be told.
pub(crate) fn lag_span(lag: &Lag, theme: &Theme) -> Span<'static> {
    match (lag.text(), lag.value()) {
        (Some(text), Some(d)) => Span::styled(text, severity(d.as_millis(), theme)),
        _ => Span::styled("?", theme.unknown),
    }
}

/// `Seconds_Behind_Source` as the server said it; NULL (a stopped thread) stays NULL.
pub(crate) fn sbm_span(sbm: Option<u64>, theme: &Theme) -> Span<'static> {
    match sbm {
        Some(s) => Span::styled(
            units::secs(s),
            severity(u128::from(s).saturating_mul(1_000), theme),
        ),
        None => Span::styled("NULL", theme.unknown),
    }
}

/// One glyph per connection state, distinct in shape as well as colour.
pub(crate) fn conn_glyph(conn: &ConnState, theme: &Theme) -> Span<'static> {
    match conn {
        ConnState::Up => Span::styled("●", theme.ok),
        ConnState::Connecting => Span::styled("◌", theme.unknown),
        ConnState::Retrying { .. } => Span::styled("◐", theme.warning),
        ConnState::Down { .. } => Span::styled("✖", theme.critical),
    }
}

/// Replication into this node does not flow: down, or a thread stopped.
fn broken(node: &NodeView) -> bool {
    matches!(node.conn, ConnState::Down { .. })
        || node
            .channels
            .iter()
            .any(|r| r.io_running != IoRunning::Yes || !r.sql_running)
}

enum Entry<'a> {
    Unattached,
    /// Tree guides (`│  └`) and the node; a prefix ending in a branch hangs from a parent.
    Node(String, &'a NodeView),
}

/// The snapshot's nodes with, for each, the indices of the nodes that replicate from it (in
/// snapshot order): built once, so the tree costs O(nodes) however many there are.
struct Forest<'a> {
    snap: &'a Snapshot,
    kids: Vec<Vec<usize>>,
    /// Index of each node's source, when that source is in the snapshot.
    source: Vec<Option<usize>>,
}

impl<'a> Forest<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        let index: std::collections::HashMap<&str, usize> = snap
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let source: Vec<Option<usize>> = snap
            .nodes
            .iter()
            .map(|n| n.source.as_deref().and_then(|s| index.get(s).copied()))
            .collect();
        let mut kids = vec![Vec::new(); snap.nodes.len()];
        for (k, parent) in source.iter().enumerate() {
            if let Some(kid_list) = parent.and_then(|p| kids.get_mut(p)) {
                kid_list.push(k);
            }
        }
        Self { snap, kids, source }
    }

    /// Appends node `i` with `prefix`, then its replicas depth first under `indent`. A node
    /// already seen is skipped, which ends any cycle in the reported sources.
    fn walk(&self, i: usize, guides: (String, &str), seen: &mut [bool], out: &mut Vec<Entry<'a>>) {
        let Some(node) = self.snap.nodes.get(i) else {
            return;
        };
        match seen.get_mut(i) {
            Some(mark) if !*mark => *mark = true,
            _ => return,
        }
        let (prefix, indent) = guides;
        out.push(Entry::Node(prefix, node));
        let kids: Vec<usize> = self.kids[i]
            .iter()
            .copied()
            .filter(|&k| seen.get(k) == Some(&false))
            .collect();
        for (n, &k) in kids.iter().enumerate() {
            let (branch, rest) = if n + 1 == kids.len() {
                ("└", "   ")
            } else {
                ("├", "│  ")
            };
            self.walk(
                k,
                (format!("{indent}{branch}"), &format!("{indent}{rest}")),
                seen,
                out,
            );
        }
    }
}

/// Primaries with their subtrees; then, under a heading, nodes whose source is outside the
/// tree (their own replicas still hang under them), and last whatever a cycle of sources left.
fn tree(snap: &Snapshot) -> Vec<Entry<'_>> {
    let forest = Forest::new(snap);
    let count = snap.nodes.len();
    let (mut seen, mut out) = (vec![false; count], Vec::new());
    for i in (0..count).filter(|&i| snap.nodes.get(i).is_some_and(|n| n.role == Role::Primary)) {
        forest.walk(i, (String::new(), ""), &mut seen, &mut out);
    }
    let attached = out.len();
    for i in 0..count {
        let source_pending = forest.source[i].is_some_and(|s| !seen[s]);
        if !source_pending {
            forest.walk(i, (" ".to_owned(), " "), &mut seen, &mut out);
        }
    }
    for i in 0..count {
        forest.walk(i, (" ".to_owned(), " "), &mut seen, &mut out);
    }
    if out.len() > attached {
        out.insert(attached, Entry::Unattached);
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let theme = ctx.theme;
    let entries = tree(ctx.snapshot);
    let selected = ctx
        .state
        .selected_node(ctx.snapshot)
        .map(|n| n.name.as_str());
    let linked = |prefix: &str| prefix.ends_with(['└', '├']);
    let left = |e: &Entry<'_>| match e {
        Entry::Unattached => 10,
        Entry::Node(prefix, node) => {
            prefix.chars().count() + if linked(prefix) { 4 } else { 2 } + node.name.chars().count()
        }
    };
    let name_col = entries.iter().map(left).max().unwrap_or(0);
    let inner = usize::from(area.width.saturating_sub(2));
    let show_lag = name_col.saturating_add(1 + LAG_WIDTH) <= inner;
    let show_sbm = show_lag && name_col.saturating_add(2 + LAG_WIDTH + SBM_WIDTH) <= inner;

    let pad = |n: usize| Span::raw(" ".repeat(n));
    let right = |span: Span<'static>, w: usize| [pad(1 + w.saturating_sub(span.width())), span];
    // Keep the selected replica in view when the tree is taller than the pane; only the lines
    // on screen are built.
    let head_rows = usize::from(show_lag);
    let focus = entries
        .iter()
        .position(|e| matches!(e, Entry::Node(_, n) if Some(n.name.as_str()) == selected))
        .map_or(0, |i| i + head_rows);
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let first = focus.saturating_sub(rows - 1);
    let mut lines = Vec::with_capacity(rows);
    if show_lag && first == 0 {
        let mut head = vec![pad(name_col)];
        head.extend(right(Span::styled("lag", theme.muted), LAG_WIDTH));
        if show_sbm {
            head.extend(right(Span::styled("SBM", theme.muted), SBM_WIDTH));
        }
        lines.push(Line::from(head));
    }
    let shown = entries.iter().skip(first.saturating_sub(head_rows));
    for entry in shown.take(rows - lines.len()) {
        let Entry::Node(prefix, node) = entry else {
            lines.push(Line::styled("unattached", theme.warning));
            continue;
        };
        let mut spans = vec![Span::styled(prefix.clone(), theme.border)];
        if linked(prefix) {
            spans.push(if broken(node) {
                Span::styled("╌╳", theme.critical)
            } else {
                Span::styled("──", theme.border)
            });
        }
        let name_style = if selected == Some(node.name.as_str()) {
            theme.selected
        } else {
            theme.text
        };
        spans.extend([conn_glyph(&node.conn, theme), Span::raw(" ")]);
        spans.push(Span::styled(node.name.clone(), name_style));
        spans.push(pad(name_col.saturating_sub(left(entry))));
        match (show_lag, node.replica()) {
            (true, Some(r)) => {
                spans.extend(right(lag_span(&r.heartbeat_lag, theme), LAG_WIDTH));
                if show_sbm {
                    spans.extend(right(sbm_span(r.seconds_behind_source, theme), SBM_WIDTH));
                }
            }
            (true, None) if node.role == Role::Replica => {
                spans.extend(right(Span::styled("?", theme.unknown), LAG_WIDTH));
            }
            _ => {}
        }
        if let Some(lb) = node.lb.as_deref().filter(|l| *l != "READY") {
            let style = if lb == "DRAIN" {
                theme.warning
            } else {
                theme.critical
            };
            spans.push(Span::styled(format!(" ⏸{lb}"), style));
        }
        lines.push(Line::from(spans));
    }
    let paragraph = Paragraph::new(lines).block(block(" topology ", theme));
    frame.render_widget(paragraph, area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testkit::Topo;
    use crate::ui::UiState;
    use crate::ui::panels::header::tests::{draw, has_all, lines, style_of, troubled};

    fn text(snap: &Snapshot, w: u16, h: u16) -> Vec<String> {
        lines(&draw(render, snap, &UiState::default(), w, h))
    }

    /// The line showing node `name`, and its row.
    fn row(all: &[String], name: &str) -> (String, usize) {
        let at = all.iter().position(|l| l.contains(&format!(" {name} ")));
        at.and_then(|i| Some((all.get(i)?.clone(), i)))
            .unwrap_or_default()
    }

    #[test]
    fn tree_follows_sources_with_cascades_and_broken_links() {
        let all = text(&troubled(), 40, 10);
        has_all(
            &all.join("\n"),
            "lag    SBM|● db1|├──● r1|│  └╌╳● r3   0.12s   NULL",
        );
        has_all(&all.join("\n"), "├╌╳✖ r2|└──● r4     ≥3.20s");
        let rows = ["r1", "r3", "r2", "r4"].map(|n| row(&all, n).1);
        assert!(rows.is_sorted() && rows[0] > 0, "{rows:?}");
        let buf = draw(render, &troubled(), &UiState::default(), 40, 10);
        assert_eq!(style_of(&buf, "NULL"), Theme::builtin().unknown);
        assert_eq!(style_of(&buf, "╌╳"), Theme::builtin().critical);
        assert_eq!(style_of(&buf, "r1").bg, Theme::builtin().selected.bg);
    }

    #[test]
    fn nodes_without_a_known_source_are_unattached_not_dropped() {
        let mut topo = Topo::new();
        topo.add_replica("orphan", "ghost", 7);
        topo.add_replica("leaf", "orphan", 8);
        topo.add_replica("loop1", "loop2", 9);
        topo.add_replica("loop2", "loop1", 10);
        topo.node_mut("r2", |n| n.source = None);
        let all = text(&topo.snapshot, 40, 12);
        let heading = all
            .iter()
            .position(|l| l.contains("unattached"))
            .unwrap_or(usize::MAX);
        for name in ["orphan", "leaf", "loop1", "loop2", "r2"] {
            assert!(row(&all, name).1 > heading, "{name}:\n{}", all.join("\n"));
        }
        assert!(
            row(&all, "leaf").0.contains(" └──● leaf"),
            "{}",
            all.join("\n")
        );
    }

    #[test]
    fn a_tall_tree_scrolls_to_the_selected_replica() {
        let mut topo = Topo::new();
        for i in 0..300 {
            topo.add_replica(&format!("x{i:03}"), "db1", 10 + i);
        }
        let state = UiState {
            selected: 250,
            ..UiState::default()
        };
        // Replicas in topology order: r1, r2, x000..; selected 250 is x248, on the last row.
        let buf = draw(render, &topo.snapshot, &state, 40, 10);
        let all = lines(&buf);
        let (line, at) = row(&all, "x248");
        assert_eq!(at, 8, "{}", all.join("\n"));
        assert!(line.contains("├──● x248"), "{line}");
        assert_eq!(row(&all, "x241").1, 1, "{}", all.join("\n"));
        assert!(
            !all.join("\n").contains("lag    SBM"),
            "the heading scrolled away"
        );
        assert_eq!(style_of(&buf, "x248").bg, Theme::builtin().selected.bg);
        // At the top again: the heading and the primary.
        let top = lines(&draw(render, &topo.snapshot, &UiState::default(), 40, 10));
        has_all(&top.join("\n"), "lag    SBM|● db1|├──● r1");
    }

    #[test]
    fn narrow_pane_drops_sbm_then_lag_and_zero_replicas_shows_the_primary() {
        let narrow = text(&troubled(), 20, 8).join("\n");
        assert!(
            !narrow.contains("SBM") && narrow.contains("lag"),
            "{narrow}"
        );
        let mut snap = Topo::new().snapshot;
        snap.nodes.retain(|n| n.role == Role::Primary);
        let alone = text(&snap, 30, 5).join("\n");
        assert!(
            alone.contains("● db1") && !alone.contains("unattached"),
            "{alone}"
        );
    }
}
