//! The online schema change families: one series per run a node's tables show, labelled with
//! the node, the tool and the table. No run, no series.

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::{Fmt, family, flag, gauge};
use crate::mysql::OscRun;
use crate::store::{NodeView, Snapshot};

fn runs(s: &Snapshot) -> impl Iterator<Item = (&NodeView, &OscRun)> {
    s.nodes
        .iter()
        .flat_map(|n| n.osc().iter().map(move |r| (n, r)))
}

fn labels<'a>(n: &'a NodeView, r: &'a OscRun) -> [(&'static str, &'a str); 4] {
    [
        ("node", n.name.as_str()),
        ("tool", r.tool.name()),
        ("schema", r.schema.as_str()),
        ("table", r.table.as_str()),
    ]
}

pub(super) fn osc(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    family(
        e,
        "rwtop_osc_run",
        "One per online schema change run a writable root's tables show, always 1, with its \
         phase (copy, checksum, cut-over).",
        MetricType::Gauge,
        |m| {
            runs(s).try_for_each(|(n, r)| {
                let [node, tool, schema, table] = labels(n, r);
                gauge(
                    m,
                    &[node, tool, schema, table, ("phase", r.phase.name())],
                    1,
                )
            })
        },
    )?;
    family(
        e,
        "rwtop_osc_progress_ratio",
        "Rows copied against the table's row estimate, 0 to 1 (approximate); absent when \
         unknown.",
        MetricType::Gauge,
        |m| {
            runs(s).try_for_each(|(n, r)| match r.progress() {
                Some(p) => gauge(m, &labels(n, r), p / 100.0),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_osc_eta_seconds",
        "Seconds left of the copy at its pace since rwtop first saw it; absent before.",
        MetricType::Gauge,
        |m| {
            runs(s).try_for_each(|(n, r)| match r.eta_s {
                Some(eta) => gauge(m, &labels(n, r), eta),
                None => Ok(()),
            })
        },
    )?;
    family(
        e,
        "rwtop_osc_throttled",
        "1 while the tool says it throttles (gh-ost's changelog); absent for tools that do not \
         say.",
        MetricType::Gauge,
        |m| {
            runs(s)
                .filter(|(_, r)| r.throttle_published)
                .try_for_each(|(n, r)| gauge(m, &labels(n, r), flag(r.throttled.is_some())))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{has, text};
    use crate::store::testkit::set_osc;
    use crate::store::testkit::{Topo, osc_run};

    #[test]
    fn a_run_has_its_series_and_no_run_none() {
        let mut topo = Topo::new();
        assert!(!text(&topo.snapshot).contains("rwtop_osc_run{"));
        topo.node_mut("db1", |n| {
            let mut run = osc_run(180_000, 252);
            run.eta_s = Some(310);
            set_osc(n, vec![run]);
        });
        let t = text(&topo.snapshot);
        let labels = r#"node="db1",tool="pt-osc",schema="shop",table="orders""#;
        has(&t, &format!(r#"rwtop_osc_run{{{labels},phase="copy"}} 1"#));
        has(&t, &format!("rwtop_osc_progress_ratio{{{labels}}} 0.45"));
        has(&t, &format!("rwtop_osc_eta_seconds{{{labels}}} 310"));
        // pt-osc publishes no throttle state: no series rather than a 0.
        assert!(!t.contains("rwtop_osc_throttled{"), "{t}");
    }
}
