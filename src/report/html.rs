//! The report as one self-contained HTML page: the same sections as the Markdown, each
//! replica's lag drawn as inline SVG. No script, no font or picture fetched: it opens from a
//! ticket attachment or a mail, offline. Light or dark follows the reader's
//! `prefers-color-scheme`.

use std::fmt::Write;

use super::DdlReport;
use super::facts::Facts;
use super::words;
use crate::units;

/// Text for HTML (elements and attribute values alike).
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Light colours first, dark ones when the reader asks for them. The chart's classes take
/// their colours from these variables.
const STYLE: &str = "\
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1d1f23;--muted:#5f6670;--rule:#d8dce2;\
--plot:#f7f8fa;--grid:#e3e6ea;--lag:#1c64d6;--area:rgba(28,100,214,.16);--thr:#d9480f;\
--ddl:#7b2cbf;--bad:#b3261e;--good:#1e7b34}\
@media (prefers-color-scheme: dark){:root{--bg:#15171b;--fg:#e4e6ea;--muted:#9aa1ab;\
--rule:#2f343b;--plot:#1c1f24;--grid:#2c3037;--lag:#5aa2ff;--area:rgba(90,162,255,.2);\
--thr:#ff8c42;--ddl:#c77dff;--bad:#ff6b62;--good:#5fd07a}}\
body{background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,sans-serif;margin:2em auto;\
max-width:820px;padding:0 1em}\
h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:2em}h3{margin-top:1.6em}\
.muted{color:var(--muted)}\
table{border-collapse:collapse;width:100%;margin:.5em 0 1em}\
th,td{border-bottom:1px solid var(--rule);padding:.3em .5em;text-align:left;vertical-align:top}\
code{font:13px ui-monospace,monospace;word-break:break-all}\
.raised{color:var(--bad)}.cleared{color:var(--good)}\
svg.chart{display:block;max-width:100%;height:auto;margin:.3em 0 1.2em}\
svg .plot{fill:var(--plot)}svg .grid{stroke:var(--grid);stroke-width:1}\
svg .area{fill:var(--area);stroke:none}svg .lag{fill:none;stroke:var(--lag);stroke-width:2.5;\
stroke-linejoin:round}svg .peak{fill:var(--lag)}\
svg .threshold{stroke:var(--thr);stroke-width:2;stroke-dasharray:7 5}\
svg .ddl{stroke:var(--ddl);stroke-width:2}\
svg .label{fill:var(--muted);font:11px system-ui,sans-serif}\
svg .threshold-label{fill:var(--thr)}svg .ddl-label{fill:var(--ddl)}";

#[must_use]
pub fn render(report: &DdlReport) -> String {
    let mut out = String::new();
    let title = report.windows.first().map_or_else(
        || "DDL window report".to_owned(),
        |f| format!("DDL window report, {}", words::window(f)),
    );
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(&title)
    );
    let _ = writeln!(out, "<h1>DDL window report</h1>");
    let _ = writeln!(
        out,
        "<p class=\"muted\">Made by rwtop {} from {}.</p>",
        env!("CARGO_PKG_VERSION"),
        escape(&report.source)
    );
    for (i, facts) in report.windows.iter().enumerate() {
        if report.windows.len() > 1 {
            let _ = writeln!(out, "<h2>Window {} of {}</h2>", i + 1, report.windows.len());
        }
        window(&mut out, report, facts);
    }
    out.push_str("</body></html>\n");
    out
}

fn row(out: &mut String, cells: &[String]) {
    out.push_str("<tr>");
    for c in cells {
        let _ = write!(out, "<td>{c}</td>");
    }
    out.push_str("</tr>\n");
}

fn head(out: &mut String, names: &[&str]) {
    out.push_str("<table><thead><tr>");
    for n in names {
        let _ = write!(out, "<th>{n}</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
}

fn window(out: &mut String, report: &DdlReport, facts: &Facts) {
    let _ = writeln!(
        out,
        "<p><strong>{}</strong>, {}.</p>",
        escape(&words::window(facts)),
        escape(&words::how(facts, report.quiet))
    );
    if let Some((name, lag)) = facts.worst() {
        let _ = writeln!(
            out,
            "<p>Worst lag: <strong>{} on {}</strong>.</p>",
            units::lag(words::secs(lag)),
            escape(name)
        );
    }
    for line in facts.osc_lines() {
        let _ = writeln!(
            out,
            "<p>Online schema change: <strong>{}</strong>.</p>",
            escape(&line)
        );
    }
    statements(out, facts);
    lag(out, facts);
    alerts(out, facts);
    probes(out, facts);
    drains(out, facts);
}

fn statements(out: &mut String, facts: &Facts) {
    out.push_str("<h3>Statements</h3>\n");
    if facts.statements.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", words::NO_DDL);
    } else {
        head(
            out,
            &[
                "node",
                "run by",
                "statement",
                "started",
                "run time",
                "progress (highest seen)",
            ],
        );
        for s in &facts.statements {
            row(
                out,
                &[
                    escape(&s.node),
                    words::run_by(s).to_owned(),
                    format!("<code>{}</code>", escape(&s.text)),
                    s.started.format("%H:%M:%S").to_string(),
                    escape(&words::run_time(s)),
                    escape(&words::progress(s)),
                ],
            );
        }
        out.push_str("</tbody></table>\n");
    }
}

fn lag(out: &mut String, facts: &Facts) {
    let _ = writeln!(
        out,
        "<h3>Replication lag <span class=\"muted\">(routing threshold {})</span></h3>",
        units::lag(facts.threshold)
    );
    if facts.replicas.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", words::NO_LAG);
    }
    for r in &facts.replicas {
        let crossings = words::crossings(facts, r);
        let _ = writeln!(
            out,
            "<h4>{}</h4><p>Max lag {}. Catch-up: {}.<br>Above the threshold: {}.</p>",
            escape(&r.name),
            escape(&words::max_lag(facts, r)),
            escape(&words::catch_up(r)),
            if crossings.is_empty() {
                "never".to_owned()
            } else {
                escape(&crossings.join("; "))
            }
        );
        out.push_str(&super::svg::chart(facts, r));
        out.push('\n');
    }
}

fn alerts(out: &mut String, facts: &Facts) {
    out.push_str("<h3>Alerts raised and cleared</h3>\n");
    if facts.alerts.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        head(out, &["at", "", "alert"]);
        for a in &facts.alerts {
            let (class, verb) = if a.raised {
                ("raised", "raised")
            } else {
                ("cleared", "cleared")
            };
            row(
                out,
                &[
                    a.at.format("%H:%M:%S").to_string(),
                    format!("<span class=\"{class}\">{verb}</span>"),
                    escape(&a.summary),
                ],
            );
        }
        out.push_str("</tbody></table>\n");
    }
}

fn probes(out: &mut String, facts: &Facts) {
    out.push_str("<h3>Test reads</h3>\n");
    if facts.probes.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", words::NONE_RUN);
    } else {
        head(
            out,
            &[
                "at",
                "strategy",
                "replica",
                "outcome",
                "served by",
                "waited",
                "cause",
            ],
        );
        for p in &facts.probes {
            row(
                out,
                &[
                    p.at.format("%H:%M:%S").to_string(),
                    escape(&p.strategy.to_string()),
                    escape(&p.target),
                    p.outcome.label().to_owned(),
                    escape(p.served_by.as_deref().unwrap_or("–")),
                    units::duration(p.waited),
                    escape(p.cause.as_deref().unwrap_or("")),
                ],
            );
        }
        out.push_str("</tbody></table>\n");
    }
}

fn drains(out: &mut String, facts: &Facts) {
    out.push_str("<h3>Drains</h3>\n");
    if facts.drains.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        head(out, &["at", "action", "replica", "via", "result"]);
        for d in &facts.drains {
            row(
                out,
                &[
                    d.at.format("%H:%M:%S").to_string(),
                    d.action.verb().to_owned(),
                    escape(&d.replica),
                    escape(&d.backend),
                    escape(&format!(
                        "{}: {}",
                        if d.ok { "done" } else { "failed" },
                        d.message
                    )),
                ],
            );
        }
        out.push_str("</tbody></table>\n");
    }
}
