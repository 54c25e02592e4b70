//! The health lint pane: the settings that cause outages (`docs/design.md`, "The health lint"),
//! judged by `alerts::lint` on the snapshot shown, errors first, each with its fix.
//!
//! ```text
//! ╭ health lint · 1 warning · settings of 3 nodes ─────────────────────────╮
//! │warning relay_log_recovery is OFF on a replica on r1, r2                 │
//! │  fix: SET GLOBAL relay_log_recovery = ON; and in my.cnf                 │
//! │       [mariadbd]/[mysqld]: relay_log_recovery = ON                      │
//! │  why: after a crash the replica resumes from a relay log that may be    │
//! ╰─────────────────────────────────────────────────────────────────────────╯
//! ```
//! A kind of finding reads once with every node it is on, and its fix in full (wrapped, never
//! cut); the reasons follow when all of them fit, else only those on the selected node; kinds
//! that do not fit are counted and `rwtop lint` prints it all.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::block;
use super::detail::{Token, words, wrap};
use crate::alerts::lint::{LintFinding, LintSeverity, lint};
use crate::ui::{RenderCtx, Theme};

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let t = ctx.theme;
    let judged = ctx
        .snapshot
        .nodes
        .iter()
        .filter(|n| n.settings().is_some())
        .count();
    let findings = lint(ctx.snapshot);
    let title = format!(" health lint · {} ", summary(&findings, judged));
    let pane = block(&title, t);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let selected = ctx
        .state
        .selected_row(ctx.snapshot)
        .map(|r| r.node.name.clone());
    let lines = if judged == 0 {
        vec![
            Line::styled("no settings read yet", t.muted),
            Line::styled(
                "they are read when a node is first reached, then every few minutes",
                t.muted,
            ),
        ]
    } else if findings.is_empty() {
        vec![Line::styled(
            format!("✓ no findings on {judged} node{}", plural(judged)),
            t.ok,
        )]
    } else {
        fitting(
            &findings,
            selected.as_deref(),
            (usize::from(inner.width), usize::from(inner.height)),
            t,
        )
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `2 errors · 1 warning · settings of 3 nodes`.
fn summary(findings: &[LintFinding], judged: usize) -> String {
    let mut parts: Vec<String> = [
        LintSeverity::Error,
        LintSeverity::Warning,
        LintSeverity::Info,
    ]
    .into_iter()
    .filter_map(|sev| {
        let n = findings.iter().filter(|f| f.severity == sev).count();
        (n > 0).then(|| format!("{n} {}{}", sev.name(), plural(n)))
    })
    .collect();
    parts.push(format!("settings of {judged} node{}", plural(judged)));
    parts.join(" · ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn style(sev: LintSeverity, t: &Theme) -> Style {
    match sev {
        LintSeverity::Error => t.critical,
        LintSeverity::Warning => t.warning,
        LintSeverity::Info => t.muted,
    }
}

fn place(f: &LintFinding) -> String {
    match f.channel.as_deref() {
        Some(c) if !c.is_empty() => format!("{}/{c}", f.node),
        _ => f.node.clone(),
    }
}

/// One kind of finding and every node (or channel) it was found on: a setting left at its
/// default reads once, not once per node.
struct Group<'a> {
    finding: &'a LintFinding,
    places: Vec<String>,
}

fn groups(findings: &[LintFinding]) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for f in findings {
        let same = |g: &&mut Group<'_>| {
            let g = g.finding;
            (g.id, g.severity, &g.summary, &g.fix, &g.why)
                == (f.id, f.severity, &f.summary, &f.fix, &f.why)
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.places.push(place(f)),
            None => out.push(Group {
                finding: f,
                places: vec![place(f)],
            }),
        }
    }
    out
}

/// A group's lines at `width`: the headline, the fix, and the reason when `why`.
fn group_lines(g: &Group<'_>, why: bool, width: usize, t: &Theme) -> Vec<Line<'static>> {
    let f = g.finding;
    let head = std::iter::once(Token::new(
        format!("{:<8}", f.severity.name()),
        style(f.severity, t),
    ))
    .chain(words(&f.summary, t.text))
    .chain(std::iter::once(Token::new("on", t.muted)))
    .chain(g.places.iter().enumerate().map(|(i, p)| {
        let comma = if i + 1 < g.places.len() { "," } else { "" };
        Token::new(format!("{p}{comma}"), t.title)
    }));
    let mut lines = wrap(head, width, 9);
    lines.extend(wrap(
        std::iter::once(Token::new("  fix:", t.muted)).chain(words(&f.fix, t.text)),
        width,
        7,
    ));
    if why {
        lines.extend(wrap(
            std::iter::once(Token::new("  why:", t.muted)).chain(words(&f.why, t.muted)),
            width,
            7,
        ));
    }
    lines
}

/// The lines that fit `room` rows of `width`: each kind of finding with its places and fix,
/// with every reason when all fit, else the reasons of the selected node's; kinds beyond the
/// room are counted on the last line.
fn fitting(
    findings: &[LintFinding],
    selected: Option<&str>,
    (width, room): (usize, usize),
    t: &Theme,
) -> Vec<Line<'static>> {
    let groups = groups(findings);
    let all: Vec<Line<'static>> = groups
        .iter()
        .flat_map(|g| group_lines(g, true, width, t))
        .collect();
    if all.len() <= room {
        return all;
    }
    let mut lines = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let mine = selected.is_some_and(|s| g.finding_on(s));
        let next = group_lines(g, mine, width, t);
        let left = groups.len() - i;
        let reserve = usize::from(left > 1);
        if lines.len() + next.len() + reserve > room {
            lines.truncate(room.saturating_sub(1));
            lines.push(Line::styled(
                format!("+{left} more: `rwtop lint` prints every finding"),
                t.muted,
            ));
            return lines;
        }
        lines.extend(next);
    }
    lines
}

impl Group<'_> {
    fn finding_on(&self, node: &str) -> bool {
        self.places
            .iter()
            .any(|p| p == node || p.split_once('/').is_some_and(|(n, _)| n == node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(node: &str, id: &'static str, severity: LintSeverity) -> LintFinding {
        LintFinding {
            id,
            severity,
            node: node.to_owned(),
            channel: None,
            summary: format!("{id} is OFF"),
            why: "a torn relay log".to_owned(),
            fix: format!("SET GLOBAL {id} = ON"),
        }
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn one_kind_reads_once_with_every_node_it_is_on() {
        let t = Theme::builtin();
        let f = [
            finding("r1", "relay_log_recovery", LintSeverity::Warning),
            finding("r2", "relay_log_recovery", LintSeverity::Warning),
        ];
        let lines = text(&fitting(&f, None, (80, 10), &t));
        assert_eq!(
            lines,
            [
                "warning  relay_log_recovery is OFF on r1, r2",
                "  fix: SET GLOBAL relay_log_recovery = ON",
                "  why: a torn relay log",
            ]
        );
    }

    #[test]
    fn fixes_wrap_never_cut_and_reasons_give_way_to_the_selected_nodes() {
        let t = Theme::builtin();
        let f = [
            finding("r1", "sync_binlog", LintSeverity::Error),
            finding("r2", "relay_log_recovery", LintSeverity::Warning),
        ];
        let tight = text(&fitting(&f, Some("r2"), (80, 5), &t));
        assert_eq!(tight.len(), 5);
        assert_eq!(tight[0], "error    sync_binlog is OFF on r1");
        assert!(tight[2].starts_with("warning  relay_log_recovery"));
        assert_eq!(tight[4], "  why: a torn relay log");
        let narrow = text(&fitting(&f[..1], None, (24, 10), &t));
        assert_eq!(narrow[2], "  fix: SET GLOBAL");
        assert_eq!(narrow[3], "       sync_binlog = ON");
    }

    #[test]
    fn kinds_that_do_not_fit_are_counted_never_cut_silently() {
        let t = Theme::builtin();
        let f: Vec<LintFinding> = ["a", "b", "c"]
            .iter()
            .map(|n| finding("r1", n, LintSeverity::Warning))
            .collect();
        let lines = text(&fitting(&f, None, (80, 4), &t));
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], "+2 more: `rwtop lint` prints every finding");
        assert_eq!(summary(&f, 3), "3 warnings · settings of 3 nodes");
    }
}
