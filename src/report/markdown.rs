//! The report as Markdown, to paste into a ticket: tables GitHub, GitLab and Jira's Markdown
//! all render, and each replica's lag as a row of block characters since a ticket takes no
//! picture.

use std::fmt::Write;

use super::DdlReport;
use super::facts::Facts;
use super::words;
use crate::units;

/// Characters in a replica's row of blocks.
const SPARK_WIDTH: usize = 60;

/// A value fit for a table cell: no `|`, no line break.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A statement as inline code (a backtick inside would end it early).
fn code(text: &str) -> String {
    format!("`{}`", cell(&text.replace('`', "'")))
}

#[must_use]
pub fn render(report: &DdlReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# DDL window report\n");
    let _ = writeln!(
        out,
        "Made by rwtop {} from {}.\n",
        env!("CARGO_PKG_VERSION"),
        report.source
    );
    for (i, facts) in report.windows.iter().enumerate() {
        if report.windows.len() > 1 {
            let _ = writeln!(out, "## Window {} of {}\n", i + 1, report.windows.len());
        }
        window(&mut out, report, facts);
    }
    out
}

fn window(out: &mut String, report: &DdlReport, facts: &Facts) {
    let _ = writeln!(
        out,
        "**{}**, {}.\n",
        words::window(facts),
        words::how(facts, report.quiet)
    );
    if let Some((name, lag)) = facts.worst() {
        let _ = writeln!(
            out,
            "Worst lag: **{} on {name}**.\n",
            units::lag(words::secs(lag))
        );
    }
    for line in facts.osc_lines() {
        let _ = writeln!(out, "Online schema change: **{line}**.\n");
    }
    statements(out, facts);
    lag(out, facts);
    alerts(out, facts);
    probes(out, facts);
    drains(out, facts);
}

fn statements(out: &mut String, facts: &Facts) {
    let _ = writeln!(out, "### Statements\n");
    if facts.statements.is_empty() {
        let _ = writeln!(out, "{}\n", words::NO_DDL);
    } else {
        let _ = writeln!(
            out,
            "| node | run by | statement | started | run time | progress (highest seen) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for s in &facts.statements {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                cell(&s.node),
                words::run_by(s),
                code(&s.text),
                s.started.format("%H:%M:%S"),
                words::run_time(s),
                words::progress(s)
            );
        }
        out.push('\n');
    }
}

fn lag(out: &mut String, facts: &Facts) {
    let _ = writeln!(
        out,
        "### Replication lag (routing threshold {})\n",
        units::lag(facts.threshold)
    );
    if facts.replicas.is_empty() {
        let _ = writeln!(out, "{}\n", words::NO_LAG);
    } else {
        let _ = writeln!(
            out,
            "| replica | max lag | above the threshold → back under | catch-up |"
        );
        let _ = writeln!(out, "|---|---|---|---|");
        for r in &facts.replicas {
            let crossings = words::crossings(facts, r);
            let crossed = if crossings.is_empty() {
                "never above".to_owned()
            } else {
                crossings.join("; ")
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                cell(&r.name),
                words::max_lag(facts, r),
                cell(&crossed),
                words::catch_up(r)
            );
        }
        let _ = writeln!(out, "\n```text");
        let name_width = facts
            .replicas
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0);
        for r in &facts.replicas {
            let _ = writeln!(
                out,
                "{:name_width$}  {}",
                r.name,
                words::sparkline(r, SPARK_WIDTH)
            );
        }
        let _ = writeln!(out, "```\n");
    }
}

fn alerts(out: &mut String, facts: &Facts) {
    let _ = writeln!(out, "### Alerts raised and cleared\n");
    if facts.alerts.is_empty() {
        let _ = writeln!(out, "None.\n");
    } else {
        for a in &facts.alerts {
            let verb = if a.raised { "raised" } else { "cleared" };
            let _ = writeln!(
                out,
                "- {} {verb}: {}",
                a.at.format("%H:%M:%S"),
                cell(&a.summary)
            );
        }
        out.push('\n');
    }
}

fn probes(out: &mut String, facts: &Facts) {
    let _ = writeln!(out, "### Test reads\n");
    if facts.probes.is_empty() {
        let _ = writeln!(out, "{}\n", words::NONE_RUN);
    } else {
        let _ = writeln!(
            out,
            "| at | strategy | replica | outcome | served by | waited | cause |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|");
        for p in &facts.probes {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                p.at.format("%H:%M:%S"),
                cell(&p.strategy.to_string()),
                cell(&p.target),
                p.outcome.label(),
                cell(p.served_by.as_deref().unwrap_or("–")),
                units::duration(p.waited),
                cell(p.cause.as_deref().unwrap_or(""))
            );
        }
        out.push('\n');
    }
}

fn drains(out: &mut String, facts: &Facts) {
    let _ = writeln!(out, "### Drains\n");
    if facts.drains.is_empty() {
        let _ = writeln!(out, "None.\n");
    } else {
        for d in &facts.drains {
            let _ = writeln!(
                out,
                "- {} {} {} via {}: {} ({})",
                d.at.format("%H:%M:%S"),
                d.action.verb(),
                cell(&d.replica),
                cell(&d.backend),
                if d.ok { "done" } else { "failed" },
                cell(&d.message)
            );
        }
        out.push('\n');
    }
}
