//! The header: two lines and a rule, read at a glance.
//!
//! The first line says who the primary is (and its semi-sync: `semisync.rs`), how many replicas
//! answer, and whether the heartbeat
//! that every lag figure depends on is healthy (a stale writer makes "caught up" unknowable, so
//! it is shouted). The second line is the DDL banner while a schema change runs anywhere — the
//! usual reason replicas fall behind in a maintenance window — and otherwise a calm summary of
//! alerts and snapshot time.

pub(super) mod semisync;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::status_marks::{cluster_mark, conn_glyph};
use crate::alerts::Severity;
use crate::mysql::DdlStatement;
use crate::poll::{ConnState, WriterState};
use crate::store::{NodeView, Role};
use crate::ui::{RenderCtx, Theme};
use crate::units;

/// Server text on one line: a statement may hold newlines and tabs.
fn one_line(text: &str, max_chars: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        return flat;
    }
    let mut cut: String = flat.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Each Galera cluster's mark, after what is there.
fn clusters(spans: &mut Vec<Span<'static>>, snap: &crate::store::Snapshot, theme: &Theme) {
    for c in &snap.clusters {
        if !spans.is_empty() {
            spans.push(Span::styled(" │ ", theme.muted));
        }
        spans.extend(cluster_mark(c, theme));
    }
}

/// Primary identity, replicas up, heartbeat writer. `detail` 0 drops nothing, 1 the version,
/// 2 the address as well, so the line fits narrower terminals.
fn summary(ctx: &RenderCtx<'_>, detail: u8) -> Line<'static> {
    let (snap, theme) = (ctx.snapshot, ctx.theme);
    let role = |role| {
        snap.nodes
            .iter()
            .filter(move |n: &&NodeView| n.role == role)
    };
    // A Galera cluster stands where a primary would, after the primaries.
    let mut spans = if snap.clusters.is_empty() {
        vec![Span::styled("no primary", theme.unknown)]
    } else {
        Vec::new()
    };
    if let Some(p) = role(Role::Primary).next() {
        spans = vec![
            conn_glyph(&p.conn, theme),
            Span::styled(format!(" {}", p.name), theme.title),
        ];
        if detail < 2 {
            spans.push(Span::styled(format!(" {}", p.address), theme.muted));
        }
        spans.push(match p.identity.flavor_name() {
            Some(f) => Span::styled(format!(" {f}"), theme.text),
            None => Span::styled(" ?", theme.unknown),
        });
        if let (0, Some(v)) = (detail, p.identity.version()) {
            spans.push(Span::styled(format!(" ({v})"), theme.muted));
        }
    }
    let more = role(Role::Primary).count().saturating_sub(1);
    if more > 0 {
        spans.push(Span::styled(format!(" +{more} primaries"), theme.warning));
    }
    clusters(&mut spans, snap, theme);
    spans.extend(semisync::markers(
        snap,
        ctx.state.window,
        theme,
        detail == 2,
    ));

    let total = role(Role::Replica).count();
    let up = role(Role::Replica)
        .filter(|n| n.conn == ConnState::Up)
        .count();
    let up_style = match up {
        _ if total == 0 => theme.muted,
        _ if up == total => theme.ok,
        0 => theme.critical,
        _ => theme.warning,
    };
    let hb = &snap.heartbeat;
    spans.extend([
        Span::styled(" │ replicas ", theme.muted),
        Span::styled(format!("{up}/{total} up"), up_style),
        Span::styled(
            match hb.read_every.filter(|every| *every > hb.interval) {
                // Reads spread in a large topology: say how often each replica is read.
                Some(every) => format!(
                    " │ heartbeat {} (read {}) ",
                    units::duration(hb.interval),
                    units::duration(every)
                ),
                None => format!(" │ heartbeat {} ", units::duration(hb.interval)),
            },
            theme.muted,
        ),
        match &hb.writer {
            WriterState::Starting => Span::styled("starting", theme.muted),
            WriterState::Writing => Span::styled("writing", theme.ok),
            WriterState::Observing => Span::styled("observing", theme.ok),
            WriterState::Refused { reason } => {
                Span::styled(format!("not writing: {reason}"), theme.warning)
            }
            WriterState::Unsafe { mismatch } => Span::styled(
                format!("not writing: {} (see l)", mismatch.summary()),
                theme.critical,
            ),
            WriterState::Failing { cause } => {
                Span::styled(format!("failing: {cause}"), theme.critical)
            }
        },
    ]);
    // After a failover the writer may write elsewhere than the primary named on the left.
    let shown = role(Role::Primary).next().map(|p| p.name.as_str());
    let cluster_writer = |n: &str| snap.clusters.iter().any(|c| c.writer.as_deref() == Some(n));
    if let Some(node) = hb.node.as_deref().filter(|n| Some(*n) != shown) {
        // A cluster's writer is where it should be; anything else moved after a failover.
        let style = if cluster_writer(node) {
            theme.muted
        } else {
            theme.warning
        };
        spans.push(Span::styled(format!(" on {node}"), style));
    }
    if hb.stale {
        spans.push(Span::styled(" STALE", theme.critical));
    }
    spans.extend(other_writers(hb, theme));
    spans.push(match hb.last_ack_age {
        Some(age) => Span::styled(format!(" · ack {} ago", units::duration(age)), theme.muted),
        None => Span::styled(" · no ack yet", theme.unknown),
    });
    Line::from(spans)
}

/// The other roots' writers, when one is not writing: its reason is in the lint pane and in
/// each channel's lag below it.
fn other_writers(hb: &crate::store::HeartbeatView, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for root in hb.roots.iter().skip(1) {
        let node = root.node.as_deref().unwrap_or("?");
        match &root.writer {
            WriterState::Unsafe { .. } => spans.push(Span::styled(
                format!(" · {node}: not writing (table, see l)"),
                theme.critical,
            )),
            WriterState::Refused { .. } => spans.push(Span::styled(
                format!(" · {node}: not writing"),
                theme.warning,
            )),
            WriterState::Failing { .. } => {
                spans.push(Span::styled(format!(" · {node}: failing"), theme.critical));
            }
            WriterState::Starting | WriterState::Writing | WriterState::Observing => {}
        }
    }
    spans
}

/// `DDL <statement> — db1 running 7s · r1 applying 2s (92 %)`, one group per distinct
/// statement, primaries first; `None` when nothing runs. A statement waiting for a lock says
/// which (`db1 running 9s, waiting for table metadata lock`), and its text is cut shorter to
/// leave that room. An online schema change run is a group of its own, named for the tool and
/// the table: `DDL pt-osc on shop.orders — db1 copy 4m12s · ~45 % · ETA ~2m00s`.
fn ddl_banner(ctx: &RenderCtx<'_>, width: u16) -> Option<Line<'static>> {
    let mut nodes: Vec<&NodeView> = ctx
        .snapshot
        .nodes
        .iter()
        .filter(|n| !n.ddl().is_empty() || !n.osc().is_empty())
        .collect();
    nodes.sort_by_key(|n| n.role != Role::Primary);
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for node in nodes {
        for d in node.ddl() {
            let part = ddl_part(&node.name, d);
            let key = one_line(&d.statement, usize::MAX);
            match groups.iter_mut().find(|(s, _)| *s == key) {
                Some((_, parts)) => parts.push(part),
                None => groups.push((key, vec![part])),
            }
        }
        for run in node.osc() {
            groups.push((
                run.title(),
                vec![format!("{} {}", node.name, run.summary())],
            ));
        }
    }
    if groups.is_empty() {
        return None;
    }
    let groups: Vec<(String, String)> = groups
        .into_iter()
        .map(|(statement, parts)| (statement, parts.join(" · ")))
        .collect();
    let width = usize::from(width);
    // "DDL ", then per group " — " and its parts, "  │  " between groups.
    let fixed: usize = 4
        + groups
            .iter()
            .map(|(_, parts)| parts.chars().count() + 3)
            .sum::<usize>()
        + 5 * (groups.len() - 1);
    let most = (width / 2 / groups.len()).max(16);
    let budget = (width.saturating_sub(fixed) / groups.len()).clamp(16, most);
    let text: Vec<String> = groups
        .iter()
        .map(|(statement, parts)| format!("{} — {parts}", one_line(statement, budget)))
        .collect();
    Some(Line::styled(
        format!("DDL {}", text.join("  │  ")),
        ctx.theme.warning,
    ))
}

/// One node's part of the banner: `r1 applying 2s (92 %)`; while waiting for a lock,
/// `db1 running 9s, waiting for table metadata lock` (a progress of 0 left out: nothing done),
/// then who holds it: `, blocked by #1234 app@10.0.0.5, idle 1m35s …: KILL 1234`.
fn ddl_part(node: &str, d: &DdlStatement) -> String {
    let verb = if d.applier { "applying" } else { "running" };
    let progress = d
        .progress
        .filter(|&p| d.waiting_for.is_none() || p > 0.0)
        .map(|p| format!(" ({p:.0} %)"))
        .unwrap_or_default();
    let run = format!("{node} {verb} {}{progress}", units::secs(d.elapsed_s));
    let Some(lock) = &d.waiting_for else {
        return run;
    };
    let waiting = format!("{run}, waiting for {}", one_line(lock, 40));
    match &d.blockers {
        Some(blockers) => format!("{waiting}, {}", one_line(&blockers.summary(), 160)),
        None => waiting,
    }
}

/// No schema change: alerts at a glance and how fresh this picture is.
fn calm(ctx: &RenderCtx<'_>) -> Line<'static> {
    let theme = ctx.theme;
    let when = ctx.snapshot.taken_at.format(" · snapshot %H:%M:%S UTC");
    let mut line = vec![Span::styled("no DDL running · ", theme.muted)];
    line.extend(alert_count(&ctx.snapshot.alerts, theme));
    line.push(Span::styled(when.to_string(), theme.muted));
    Line::from(line)
}

/// The incidents at a glance: the active ones, how many critical, and the recovering ones
/// apart ("2 incidents, 1 critical · 3 recovering"). A view without incidents (a recording made
/// before them) counts its alerts.
fn alert_count(view: &crate::alerts::AlertsView, theme: &Theme) -> Vec<Span<'static>> {
    let (word, items): (&str, Vec<(Severity, bool)>) = if view.incidents.is_empty() {
        let alerts = view.active.iter().map(|a| (a.severity, false)).collect();
        ("alert", alerts)
    } else {
        let incidents = view
            .incidents
            .iter()
            .map(|i| (i.severity, i.recovering))
            .collect();
        ("incident", incidents)
    };
    let active = items.iter().filter(|(_, recovering)| !recovering).count();
    let critical = items
        .iter()
        .filter(|(s, recovering)| !recovering && *s == Severity::Critical)
        .count();
    let recovering = items.len() - active;
    let plural = |n: usize| {
        if n == 1 {
            word.to_owned()
        } else {
            format!("{word}s")
        }
    };
    let mut spans = vec![match (active, critical) {
        (0, _) => Span::styled(format!("no {}", plural(0)), theme.muted),
        (n, 0) => Span::styled(format!("{n} {}", plural(n)), theme.warning),
        (n, c) => Span::styled(format!("{n} {}, {c} critical", plural(n)), theme.critical),
    }];
    if recovering > 0 {
        spans.push(Span::styled(
            format!(" · {recovering} recovering"),
            theme.ok,
        ));
    }
    spans
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let width = usize::from(area.width);
    let line = (0..3)
        .map(|detail| summary(ctx, detail))
        .find(|l| l.width() <= width)
        .unwrap_or_else(|| summary(ctx, 2));
    let second = ddl_banner(ctx, area.width).unwrap_or_else(|| calm(ctx));
    let mut paragraph = Paragraph::new(vec![line, second]);
    // The rule only where it does not take the place of a line.
    if area.height >= 3 {
        paragraph = paragraph.block(
            Block::new()
                .borders(Borders::BOTTOM)
                .border_style(ctx.theme.border),
        );
    }
    frame.render_widget(paragraph, area);
}

#[cfg(test)]
pub(crate) mod tests;
