//! The failover exposure pane (key `E`, `docs/failover-exposure.md`): per root, what each replica would
//! lose if the root died now, its relay log and how long it takes to drain, what rules it out,
//! and the replica to promote, as `alerts::exposure` judged it on the snapshot shown.
//!
//! ```text
//! ╭ failover exposure · primary answers ───────────────────────────────────╮
//! │replica  not recv  relay      drain   errant  log_upd  delay            │
//! │r1             50  0          0s      -       ON       -                │
//! │r2              0  0          0s      -       ON       -                │
//! │candidate r2: loses 0 trx · lacks least: 0 trx against 50 on r1         │
//! ╰────────────────────────────────────────────────────────────────────────╯
//! ```
//! Once the root stops answering the title says so and how old its last sample is: every
//! figure is then what was lost as of that sample.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::block;
use crate::store::exposure::{ClusterExposure, ReplicaExposure};
use crate::ui::{RenderCtx, Theme};
use crate::units;

const HEADER: &str =
    "replica      not recv  relay to apply       drain     errant    log_upd  delay";

pub fn render(frame: &mut Frame, area: Rect, ctx: &RenderCtx<'_>) {
    let t = ctx.theme;
    let clusters = &ctx.snapshot.exposure;
    let title = format!(" failover exposure · {} ", title(clusters));
    let pane = block(&title, t);
    let inner = pane.inner(area);
    frame.render_widget(pane, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let mut lines = Vec::new();
    if clusters.is_empty() {
        lines.push(Line::styled("no root with a replica watched yet", t.muted));
    }
    for c in clusters {
        if clusters.len() > 1 {
            lines.push(Line::styled(format!("{}:", c.root), t.title));
        }
        lines.push(Line::styled(HEADER, t.muted));
        for r in &c.replicas {
            lines.push(row(r, c, t));
            if let Some(why) = &r.excluded {
                lines.push(Line::styled(format!("  not a candidate: {why}"), t.muted));
            }
        }
        lines.push(candidate(c, t));
        if let Some(path) = &c.commit_path {
            let style = if path.contains("FELL BACK") {
                t.critical
            } else {
                t.muted
            };
            lines.push(Line::styled(path.clone(), style));
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// `primary answers`, or `primary DOWN: as of its last sample 12s ago`.
fn title(clusters: &[ClusterExposure]) -> String {
    let parts: Vec<String> = clusters
        .iter()
        .map(|c| {
            if c.root_answers {
                format!("{} answers", c.root)
            } else {
                let age = c
                    .root_sample_age
                    .map_or_else(|| "?".to_owned(), units::duration);
                format!(
                    "{} NOT ANSWERING: as lost at its last sample, {age} ago",
                    c.root
                )
            }
        })
        .collect();
    if parts.is_empty() {
        "no root".to_owned()
    } else {
        parts.join(" · ")
    }
}

fn known(n: Option<u64>) -> String {
    n.map_or_else(|| "?".to_owned(), units::count)
}

fn row(r: &ReplicaExposure, c: &ClusterExposure, t: &Theme) -> Line<'static> {
    let relay = match (r.relay_trx, r.relay_bytes) {
        (Some(trx), Some(bytes)) if trx > 0 => {
            format!("{} ({})", units::count(trx), units::bytes(bytes))
        }
        (trx, _) => known(trx),
    };
    let drain = match (r.drain, r.drain_unknown.as_deref()) {
        (Some(d), _) => units::duration(d),
        (None, Some(why)) if why.contains("stopped") => "stopped".to_owned(),
        _ => "?".to_owned(),
    };
    let errant = if r.errant.is_empty() {
        "-".to_owned()
    } else {
        r.errant.clone()
    };
    let updates = match r.log_replica_updates {
        Some(true) => "ON",
        Some(false) => "OFF",
        None => "?",
    };
    let delay = r
        .sql_delay
        .filter(|d| *d > 0)
        .map_or_else(|| "-".to_owned(), units::secs);
    let chosen = c.candidate.as_ref().is_some_and(|k| k.node == r.node);
    let lost_style = match r.not_received {
        Some(0) => t.ok,
        Some(_) => t.warning,
        None => t.unknown,
    };
    let name_style = if chosen { t.ok } else { t.text };
    let mark = if chosen { "▶" } else { " " };
    Line::from(vec![
        Span::styled(format!("{mark}{:<11}", r.node), name_style),
        Span::styled(format!("{:>9}", known(r.not_received)), lost_style),
        Span::styled(format!("  {relay:<18}"), t.text),
        Span::styled(format!(" {drain:>7}"), t.text),
        Span::styled(format!("     {errant:<9}"), t.text),
        Span::styled(format!(" {updates:<8}"), t.text),
        Span::styled(format!(" {delay}"), t.text),
    ])
}

fn candidate(c: &ClusterExposure, t: &Theme) -> Line<'static> {
    match &c.candidate {
        Some(k) => Line::from(vec![
            Span::styled(format!("candidate {}", k.node), t.ok),
            Span::styled(
                format!(": loses {} trx · {}", known(k.loses), k.reason),
                t.text,
            ),
        ]),
        None => Line::styled("no replica qualifies for promotion", t.critical),
    }
}
