//! The topology tree: each primary → replicas → cascaded replicas, one edge per replication
//! channel. A node fed by two sources hangs, with its replicas, under the first; under the second
//! it is one more line naming the channel (`agg/p2`), with that channel's link, lag and SBM.
//!
//! A broken link (node down, IO or SQL thread not running) is drawn differently from a healthy
//! one, and each node's state has its own glyph as well as its own colour, so the tree reads
//! right on a monochrome terminal too. Nodes whose source is not in the tree are listed under
//! "unattached" rather than dropped: a replica that fell out of the topology is exactly the one
//! to notice.
//!
//! A Galera cluster is one unit after the primaries: a line naming it with its members in the
//! primary component against the members found (`⬡ rwtop-galera 3/3`), and its members under
//! it, each with its lag behind the cluster's writer and, when it is not synced, its state;
//! async replicas of a member hang under that member.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::block;
use super::status_marks::{cluster_mark, conn_glyph, lag_span, member_state, sbm_span};
use crate::mysql::IoRunning;
use crate::mysql::galera::Component;
use crate::poll::ConnState;
use crate::store::cluster::ClusterView;
use crate::store::{Role, Snapshot};
use crate::ui::{RenderCtx, ReplicaRow};

/// Lag column: `≥` plus six characters.
const LAG_WIDTH: usize = 7;
/// SBM column: `NULL` or whole seconds, up to `59m59s`.
const SBM_WIDTH: usize = 6;

/// Replication along this edge does not flow: the node is down, or the channel's IO or SQL
/// thread is not running.
fn broken(row: &ReplicaRow<'_>) -> bool {
    let outside = || {
        row.node
            .galera()
            .is_some_and(|g| g.status.component != Component::Primary)
    };
    matches!(row.node.conn, ConnState::Down { .. })
        || row
            .channel
            .is_some_and(|r| r.io_running != IoRunning::Yes || !r.sql_running)
        || (row.channel.is_none() && outside())
}

enum Entry<'a> {
    Unattached,
    /// A Galera cluster's line; its members follow as nodes.
    Cluster(&'a ClusterView),
    /// Tree guides (`│  └`) and the node as fed along this edge (its channel); a prefix ending in
    /// a branch hangs from a parent.
    Node {
        prefix: String,
        row: ReplicaRow<'a>,
    },
}

/// An edge from a source to a node it feeds: one per channel.
#[derive(Clone, Copy)]
struct Edge {
    kid: usize,
    /// Index into the kid's channels; `None` for a replica with no status yet.
    channel: Option<usize>,
    /// The kid's first edge from a node in the tree: its subtree hangs there.
    home: bool,
}

/// The snapshot's nodes with, for each, the edges to the nodes it feeds (in snapshot order):
/// built once, so the tree costs O(nodes + channels) however many there are.
struct Forest<'a> {
    snap: &'a Snapshot,
    kids: Vec<Vec<Edge>>,
    /// Index of each node's home source (its first channel's source in the snapshot).
    source: Vec<Option<usize>>,
    /// Which channel each node is drawn with in full: its home edge's, else its first.
    channel: Vec<Option<usize>>,
}

impl<'a> Forest<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        let index: std::collections::HashMap<&str, usize> = snap
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let count = snap.nodes.len();
        let (mut kids, mut source) = (vec![Vec::new(); count], vec![None; count]);
        let mut channel = vec![None; count];
        for (k, node) in snap.nodes.iter().enumerate() {
            let rows: Vec<(Option<usize>, ReplicaRow<'a>)> = if node.channels.is_empty() {
                vec![(
                    None,
                    ReplicaRow {
                        node,
                        channel: None,
                    },
                )]
            } else {
                channel[k] = Some(0);
                let rows = node.channels.iter().enumerate();
                rows.map(|(c, r)| {
                    (
                        Some(c),
                        ReplicaRow {
                            node,
                            channel: Some(r),
                        },
                    )
                })
                .collect()
            };
            for (c, row) in rows {
                let Some(&p) = row.source().and_then(|s| index.get(s)) else {
                    continue;
                };
                let home = source[k].is_none();
                if home {
                    (source[k], channel[k]) = (Some(p), c);
                }
                if let Some(edges) = kids.get_mut(p) {
                    edges.push(Edge {
                        kid: k,
                        channel: c,
                        home,
                    });
                }
            }
        }
        Self {
            snap,
            kids,
            source,
            channel,
        }
    }

    fn row(&self, i: usize, channel: Option<usize>) -> Option<ReplicaRow<'a>> {
        let node = self.snap.nodes.get(i)?;
        Some(ReplicaRow {
            node,
            channel: channel.and_then(|c| node.channels.get(c)),
        })
    }

    /// Appends node `i` with `prefix`, then what it feeds depth first under `indent`. A node
    /// already seen is skipped, which ends any cycle in the reported sources; a further source's
    /// edge into a node is one line, never a second subtree.
    fn walk(&self, i: usize, guides: (String, &str), seen: &mut [bool], out: &mut Vec<Entry<'a>>) {
        let Some(row) = self.row(i, self.channel[i]) else {
            return;
        };
        match seen.get_mut(i) {
            Some(mark) if !*mark => *mark = true,
            _ => return,
        }
        let (prefix, indent) = guides;
        out.push(Entry::Node { prefix, row });
        let kids: Vec<Edge> = self.kids[i]
            .iter()
            .copied()
            .filter(|e| !e.home || seen.get(e.kid) == Some(&false))
            .collect();
        for (n, edge) in kids.iter().enumerate() {
            let (branch, rest) = if n + 1 == kids.len() {
                ("└", "   ")
            } else {
                ("├", "│  ")
            };
            let prefix = format!("{indent}{branch}");
            if edge.home {
                self.walk(edge.kid, (prefix, &format!("{indent}{rest}")), seen, out);
            } else if let Some(row) = self.row(edge.kid, edge.channel) {
                // Drawn in full under its home source: here only this channel's edge.
                out.push(Entry::Node { prefix, row });
            }
        }
    }
}

/// Every root (each primary) with its subtree; then, under a heading, nodes whose source is
/// outside the tree (their own replicas still hang under them), and last whatever a cycle of
/// sources left.
fn tree(snap: &Snapshot) -> Vec<Entry<'_>> {
    let forest = Forest::new(snap);
    let count = snap.nodes.len();
    let (mut seen, mut out) = (vec![false; count], Vec::new());
    for i in (0..count).filter(|&i| snap.nodes.get(i).is_some_and(|n| n.role == Role::Primary)) {
        forest.walk(i, (String::new(), ""), &mut seen, &mut out);
    }
    for cluster in &snap.clusters {
        out.push(Entry::Cluster(cluster));
        let members: Vec<usize> = cluster
            .members
            .iter()
            .filter_map(|m| snap.nodes.iter().position(|n| &n.name == m))
            .collect();
        for (n, &i) in members.iter().enumerate() {
            let (branch, rest) = if n + 1 == members.len() {
                ("└", "   ")
            } else {
                ("├", "│  ")
            };
            forest.walk(i, (branch.to_owned(), rest), &mut seen, &mut out);
        }
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
    let selected = ctx.state.selected_row(ctx.snapshot);
    let is_selected = |row: &ReplicaRow<'_>| selected.is_some_and(|s| s.is(row.node, row.channel));
    let linked = |prefix: &str| prefix.ends_with(['└', '├']);
    let left = |e: &Entry<'_>| match e {
        Entry::Unattached => 10,
        Entry::Cluster(c) => cluster_mark(c, theme).iter().map(Span::width).sum(),
        Entry::Node { prefix, row } => {
            prefix.chars().count()
                + if linked(prefix) { 4 } else { 2 }
                + row.label().chars().count()
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
        .position(|e| matches!(e, Entry::Node { row, .. } if is_selected(row)))
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
        let (prefix, row) = match entry {
            Entry::Node { prefix, row } => (prefix, row),
            Entry::Unattached => {
                lines.push(Line::styled("unattached", theme.warning));
                continue;
            }
            Entry::Cluster(c) => {
                lines.push(Line::from(cluster_mark(c, theme).to_vec()));
                continue;
            }
        };
        let node = row.node;
        let mut spans = vec![Span::styled(prefix.clone(), theme.border)];
        if linked(prefix) {
            spans.push(if broken(row) {
                Span::styled("╌╳", theme.critical)
            } else {
                Span::styled("──", theme.border)
            });
        }
        let name_style = if is_selected(row) {
            theme.selected
        } else {
            theme.text
        };
        spans.extend([conn_glyph(&node.conn, theme), Span::raw(" ")]);
        spans.push(Span::styled(row.label(), name_style));
        spans.push(pad(name_col.saturating_sub(left(entry))));
        match (show_lag, row.channel) {
            (true, Some(r)) => {
                spans.extend(right(lag_span(&r.heartbeat_lag, theme), LAG_WIDTH));
                if show_sbm {
                    spans.extend(right(sbm_span(r.seconds_behind_source, theme), SBM_WIDTH));
                }
            }
            (true, None) if node.role == Role::Replica => {
                spans.extend(right(Span::styled("?", theme.unknown), LAG_WIDTH));
            }
            (true, None) if row.lag().is_some() => {
                let lag = row.lag().map(|l| lag_span(l, theme));
                spans.extend(right(lag.unwrap_or_default(), LAG_WIDTH));
            }
            _ => {}
        }
        if let Some(g) = node.galera().filter(|_| node.answers()) {
            let (word, style) = member_state(&g.status, theme);
            if word != "synced" {
                spans.push(Span::styled(format!(" {word}"), style));
            }
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
    use std::time::Duration;

    use super::*;
    use crate::store::testkit::Topo;
    use crate::ui::panels::header::tests::{
        draw, has_all, lines, multi_source, style_of, troubled,
    };
    use crate::ui::{Theme, UiState};

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
    fn a_node_fed_by_two_roots_hangs_under_both_with_each_channels_link() {
        let mut topo = Topo {
            snapshot: multi_source(),
        };
        topo.add_replica("leaf", "agg", 6);
        let all = text(&topo.snapshot, 40, 12);
        let shown = all.join("\n");
        // Both roots are roots; agg and its replica under db1, agg/p2 alone under p2.
        has_all(&shown, "● db1|● p2|└──● agg       0.12s     0s|└──● leaf");
        has_all(&shown, "└╌╳● agg/p2        ?   NULL");
        let at = |name: &str| row(&all, name).1;
        assert!(at("db1") < at("agg") && at("agg") < at("leaf"), "{shown}");
        assert!(at("leaf") < at("p2") && at("p2") < at("agg/p2"), "{shown}");
        assert_eq!(shown.matches("leaf").count(), 1, "{shown}");
        assert!(!shown.contains("unattached"), "{shown}");
        // Selecting the p2 channel's row (r1, r2, agg, agg/p2, leaf) highlights its own edge.
        let state = UiState {
            selected: 3,
            ..UiState::default()
        };
        let buf = draw(render, &topo.snapshot, &state, 40, 12);
        assert_eq!(style_of(&buf, "agg/p2").bg, Theme::builtin().selected.bg);
        assert_ne!(style_of(&buf, "agg ").bg, Theme::builtin().selected.bg);
    }

    #[test]
    fn nodes_without_a_known_source_are_unattached_not_dropped() {
        let mut topo = Topo::new();
        topo.add_replica("orphan", "ghost", 7);
        topo.add_replica("leaf", "orphan", 8);
        topo.add_replica("loop1", "loop2", 9);
        topo.add_replica("loop2", "loop1", 10);
        // A source nobody polls: neither the node nor its channel names one.
        topo.node_mut("r2", |n| {
            n.source = None;
            n.channels.iter_mut().for_each(|c| c.source = None);
        });
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

    /// A Galera cluster is one unit after the primary: its members under its line, the
    /// async replica under its member, a desynced member's lag and state beside it, and a
    /// member cut off drawn as a broken link with its quorum mark.
    #[test]
    fn a_galera_cluster_is_one_unit_with_its_members_under_it() {
        use crate::mysql::galera::{Component, MemberState};
        use crate::store::lag::Lag;
        let mut topo = Topo::new();
        topo.add_cluster("c", &["g1", "g2", "g3"]);
        topo.add_replica("gr", "g1", 50);
        topo.node_mut("g3", |n| {
            let g = n.live.as_mut().unwrap().galera.as_mut().unwrap();
            g.status.state = MemberState::Donor;
            g.lag = Lag::Exact {
                lag: Duration::from_millis(12_400),
            };
        });
        let all = text(&topo.snapshot, 44, 14).join("\n");
        has_all(
            &all,
            "● db1|⬡ c 3/3|├──● g1|│  └──● gr|├──● g2|└──● g3     12.40s donor",
        );
        assert!(!all.contains("unattached"), "{all}");
        topo.node_mut("g2", |n| {
            let g = n.live.as_mut().unwrap().galera.as_mut().unwrap();
            g.status.component = Component::NonPrimary;
        });
        topo.recount_clusters("c", &["g1", "g2", "g3"]);
        let all = text(&topo.snapshot, 44, 14).join("\n");
        has_all(&all, "⬡ c 2/3|├╌╳● g2|non-Prim");
    }
}
