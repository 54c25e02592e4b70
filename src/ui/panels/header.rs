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
pub(crate) mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use ratatui::style::Style;

    use super::*;
    use crate::store::Snapshot;
    use crate::store::lag::Lag;
    use crate::store::testkit::{Topo, blocked_ddl, ddl, scan, secs, set_osc};
    use crate::ui::{Theme, UiState};

    /// Renders one panel over the whole `width`×`height` test terminal.
    pub(crate) fn draw(
        panel: fn(&mut Frame, Rect, &RenderCtx<'_>),
        snap: &Snapshot,
        state: &UiState,
        w: u16,
        h: u16,
    ) -> Buffer {
        let theme = Theme::builtin();
        let ctx = RenderCtx {
            snapshot: snap,
            state,
            theme: &theme,
        };
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| panel(f, f.area(), &ctx)).unwrap();
        terminal.backend().buffer().clone()
    }

    /// The whole buffer as text, one line per row.
    pub(crate) fn buffer_text(buf: &Buffer) -> String {
        lines(buf).join("\n")
    }

    /// Column and row of the first cell where `needle` starts.
    pub(crate) fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
        lines(buf).iter().enumerate().find_map(|(y, row)| {
            let col = row.find(needle)?;
            let x = row.get(..col)?.chars().count();
            Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
        })
    }

    pub(crate) fn lines(buf: &Buffer) -> Vec<String> {
        let width = usize::from(buf.area.width).max(1);
        buf.content
            .chunks(width)
            .map(|row| row.iter().map(ratatui::buffer::Cell::symbol).collect())
            .collect()
    }

    /// The style where `needle` starts on the first line holding it, without the buffer's
    /// explicit resets, so it compares equal to a theme style.
    pub(crate) fn style_of(buf: &Buffer, needle: &str) -> Style {
        let all = lines(buf);
        let found = all
            .iter()
            .enumerate()
            .find_map(|(y, l)| Some((y, l, l.find(needle)?)));
        let (y, line, byte) = found.unwrap();
        let x = line.get(..byte).unwrap().chars().count();
        let cell = &buf[(u16::try_from(x).unwrap(), u16::try_from(y).unwrap())];
        let set = |c| Some(c).filter(|c| *c != ratatui::style::Color::Reset);
        Style {
            fg: set(cell.fg),
            bg: set(cell.bg),
            add_modifier: cell.modifier,
            ..Style::new()
        }
    }

    /// Every `|`-separated needle must be in `text`.
    pub(crate) fn has_all(text: &str, needles: &str) {
        for n in needles.split('|') {
            assert!(text.contains(n), "{n} missing:\n{text}");
        }
    }

    /// The cases the panels must show: a down replica `r2`, a stopped SQL thread with NULL SBM
    /// on `r3`, a lower-bound lag on `r4`, DDL on the primary and on `r1`.
    pub(crate) fn troubled() -> Snapshot {
        let mut topo = Topo::new();
        topo.add_replica("r3", "r1", 4);
        topo.add_replica("r4", "db1", 5);
        let cause = "refused".to_owned();
        topo.node_mut("r2", |n| {
            n.conn = ConnState::Down {
                next: secs(5.0),
                cause,
            };
        });
        topo.replica_mut("r3", |r| {
            (r.sql_running, r.seconds_behind_source) = (false, None);
            r.gtid_backlog.not_received = None;
            r.bytes_behind.io = Some(6 * 1_024 * 1_024);
            r.catch_up = crate::store::testkit::falling_behind(0.0, 1.0);
        });
        let lag = Lag::AtLeast {
            lag: secs(3.2),
            upper: None,
        };
        topo.replica_mut("r4", |r| {
            r.heartbeat_lag = lag;
            r.catch_up = crate::store::apply_rate::CatchUp::default();
        });

        let alter = "ALTER TABLE big ENGINE=InnoDB";
        topo.node_mut("db1", |n| *scan(n) = vec![ddl(alter, 7, false)]);
        let mut applying = ddl(alter, 2, true);
        applying.progress = Some(92.0);
        topo.node_mut("r1", |n| *scan(n) = vec![applying]);
        topo.snapshot
    }

    /// Two roots `db1` and `p2` feeding `agg`: its default channel from `db1` healthy, its
    /// channel `p2` unable to connect (IO `Connecting`, error 2003), nothing measured on it.
    pub(crate) fn multi_source() -> Snapshot {
        let mut topo = Topo::new();
        topo.add_primary("p2", 4);
        topo.add_replica("agg", "db1", 5);
        topo.add_channel("agg", "p2", "p2");
        topo.channel_mut("agg", "p2", |r| {
            r.io_running = crate::mysql::IoRunning::Connecting;
            r.seconds_behind_source = None;
            r.heartbeat_lag = Lag::Unknown {
                reason: "the IO thread is not connected".to_owned(),
            };
            r.gtid_backlog.not_received = None;
            r.windows.iter_mut().for_each(|(_, stats)| *stats = None);
            r.last_io_error = Some(crate::mysql::ThreadError {
                errno: 2003,
                message: "error connecting to master 'rwtop@127.0.0.1:24002' - retry-time: 1  \
                          maximum-retries: 100000  message: Can't connect to server on \
                          '127.0.0.1' (111 \"Connection refused\")"
                    .to_owned(),
                timestamp: None,
            });
            r.catch_up = crate::store::apply_rate::CatchUp::default();
        });
        topo.snapshot
    }

    fn text(snap: &Snapshot, w: u16) -> [String; 3] {
        let all = lines(&draw(render, snap, &UiState::default(), w, 3));
        [0, 1, 2].map(|i| all.get(i).cloned().unwrap_or_default())
    }

    #[test]
    fn healthy_header_names_primary_replicas_and_writer() {
        let [first, second, rule] = text(&Topo::new().snapshot, 120);
        has_all(
            &first,
            "● db1|127.0.0.1:13306|MariaDB 10.11.19 (10.11.19-MariaDB)",
        );
        has_all(
            &first,
            "replicas 2/2 up|heartbeat 250ms writing|ack 100ms ago",
        );
        has_all(
            &second,
            "no DDL running · no alerts · snapshot 22:13:20 UTC",
        );
        assert!(rule.starts_with("───"), "{rule}");
        // At 80 columns the version goes first, the address next.
        let [narrow, ..] = text(&Topo::new().snapshot, 80);
        assert!(
            !narrow.contains("(10.11.19-MariaDB)") && narrow.contains("writing"),
            "{narrow}"
        );
    }

    #[test]
    fn down_replica_and_stale_writer_are_flagged() {
        let mut snap = troubled();
        let hb = &mut snap.heartbeat;
        (hb.stale, hb.last_ack_age) = (true, Some(secs(12.0)));
        hb.writer = WriterState::Failing {
            cause: "lock wait".into(),
        };
        let buf = draw(render, &snap, &UiState::default(), 140, 3);
        let first = lines(&buf).join("\n");
        has_all(
            &first,
            "replicas 3/4 up|failing: lock wait STALE|ack 12s ago",
        );
        assert_eq!(style_of(&buf, "STALE"), Theme::builtin().critical);
        assert_eq!(style_of(&buf, "3/4 up"), Theme::builtin().warning);
    }

    #[test]
    fn spread_reads_and_a_moved_writer_are_shown() {
        let mut snap = Topo::new().snapshot;
        let [line, ..] = text(&snap, 200);
        assert!(line.contains("heartbeat 250ms writing"), "{line}");
        snap.heartbeat.read_every = Some(secs(1.0));
        snap.heartbeat.node = Some("r1".to_owned());
        let [line, ..] = text(&snap, 200);
        assert!(
            line.contains("heartbeat 250ms (read 1s) writing on r1"),
            "{line}"
        );
    }

    #[test]
    fn ddl_banner_shows_each_node_with_elapsed_and_progress() {
        let buf = draw(render, &troubled(), &UiState::default(), 120, 3);
        let banner = lines(&buf).get(1).cloned().unwrap_or_default();
        let want = "DDL ALTER TABLE big ENGINE=InnoDB — db1 running 7s · r1 applying 2s (92 %)";
        assert!(banner.contains(want), "{banner}");
        assert_eq!(style_of(&buf, "DDL"), Theme::builtin().warning);
        assert_eq!(one_line("ALTER TABLE\n  t\tFORCE", 10), "ALTER TAB…");
    }

    #[test]
    fn ddl_banner_says_what_lock_a_waiting_statement_waits_for() {
        let mut snap = troubled();
        let db1 = snap.nodes.iter_mut().find(|n| n.name == "db1").unwrap();
        scan(db1)[0].waiting_for = Some("table metadata lock".to_owned());
        scan(db1)[0].progress = Some(0.0);
        let buf = draw(render, &snap, &UiState::default(), 160, 3);
        let banner = lines(&buf).get(1).cloned().unwrap_or_default();
        let want = "— db1 running 7s, waiting for table metadata lock · r1 applying 2s (92 %)";
        assert!(banner.contains(want), "{banner}");
        // At 80 columns the statement gives way, not the wait.
        snap.nodes.iter_mut().for_each(|n| {
            let keep = usize::from(n.name == "db1");
            scan(n).truncate(keep);
        });
        let buf = draw(render, &snap, &UiState::default(), 80, 3);
        let banner = lines(&buf).get(1).cloned().unwrap_or_default();
        assert!(
            banner.starts_with(
                "DDL ALTER TABLE big ENGINE=In… — db1 running 7s, waiting for table metadata lock"
            ),
            "{banner}"
        );
    }

    #[test]
    fn ddl_banner_names_who_blocks_a_waiting_statement_and_the_kill() {
        let mut snap = troubled();
        let db1 = snap.nodes.iter_mut().find(|n| n.name == "db1").unwrap();
        *scan(db1) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, false)];
        let buf = draw(render, &snap, &UiState::default(), 220, 3);
        let banner = lines(&buf).get(1).cloned().unwrap_or_default();
        let want = "db1 running 1m35s, waiting for table metadata lock, blocked by #1234 \
                    app@10.0.0.5, idle 1m35s in a transaction open 1m37s: KILL 1234";
        assert!(banner.contains(want), "{banner}");
    }

    #[test]
    fn ddl_banner_names_an_online_schema_change_run_by_tool_and_table() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            let mut run = crate::store::testkit::osc_run(180_000, 252);
            run.eta_s = Some(310);
            set_osc(n, vec![run]);
        });
        let buf = draw(render, &topo.snapshot, &UiState::default(), 120, 3);
        let banner = lines(&buf).get(1).cloned().unwrap_or_default();
        let want = "DDL pt-osc on shop.orders — db1 copy 4m12s · ~45 % · ETA ~5m00s";
        assert!(banner.contains(want), "{banner}");
    }

    #[test]
    fn no_replicas_and_no_primary_read_as_such() {
        let mut snap = Topo::new().snapshot;
        snap.nodes.retain(|n| n.role == Role::Primary);
        snap.heartbeat.last_ack_age = None;
        has_all(&text(&snap, 100)[0], "replicas 0/0 up|no ack yet");
        snap.nodes.clear();
        has_all(&text(&snap, 100)[0], "no primary");
    }

    #[test]
    fn the_header_counts_incidents_not_alerts() {
        let mut snapshot = super::super::alerts::tests::io_stop_incident();
        assert_eq!(snapshot.alerts.active.len(), 2);
        let all = buffer_text(&draw(render, &snapshot, &UiState::default(), 100, 3));
        assert!(
            all.contains("no DDL running · 1 incident, 1 critical · snapshot"),
            "{all}"
        );
        snapshot.alerts.incidents[0].recovering = true;
        let all = buffer_text(&draw(render, &snapshot, &UiState::default(), 100, 3));
        assert!(
            all.contains("no DDL running · no incidents · 1 recovering"),
            "{all}"
        );
    }
}
