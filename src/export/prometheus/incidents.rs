//! The incidents (`alerts::incidents`) as series: one per incident with its root's kind and
//! place, a count of the open ones by severity, and one per alert naming its incident, which
//! the shipped Prometheus rules turn into the labels Alertmanager's inhibition matches on
//! (`deploy/alertmanager/rwtop-inhibit.yml`).

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::{Fmt, family, gauge};
use crate::alerts::Severity;
use crate::store::Snapshot;

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Warning => "warning",
        Severity::Critical => "critical",
    }
}

fn state(recovering: bool) -> &'static str {
    if recovering { "recovering" } else { "active" }
}

pub fn incidents(e: &mut DescriptorEncoder, s: &Snapshot) -> Fmt {
    let incidents = &s.alerts.incidents;
    family(
        e,
        "rwtop_incidents_active",
        "Open incidents (active alerts grouped by root cause) by severity and state: active, or \
         recovering (every alert in it an after-effect of a replica caught up again). Every \
         pair, 0 when none.",
        MetricType::Gauge,
        |m| {
            for severity in [Severity::Critical, Severity::Warning] {
                for recovering in [false, true] {
                    let count = incidents
                        .iter()
                        .filter(|i| i.severity == severity && i.recovering == recovering)
                        .count();
                    let labels = [
                        ("severity", severity_name(severity)),
                        ("state", state(recovering)),
                    ];
                    gauge(m, &labels, count)?;
                }
            }
            Ok(())
        },
    )?;
    family(
        e,
        "rwtop_incident",
        "One per open incident, always 1: its id (the root alert's kind:place), the root's kind \
         (cause), node and channel, its severity (the highest of its alerts' kinds), its state \
         and how many alerts it holds (alerts).",
        MetricType::Gauge,
        |m| {
            incidents.iter().try_for_each(|i| {
                let alerts = i.alerts.len().to_string();
                let labels = [
                    ("incident", i.id.as_str()),
                    ("cause", i.kind.name()),
                    ("node", i.node.as_deref().unwrap_or("")),
                    ("channel", i.channel.as_deref().unwrap_or("")),
                    ("severity", severity_name(i.severity)),
                    ("state", state(i.recovering)),
                    ("alerts", alerts.as_str()),
                ];
                gauge(m, &labels, 1)
            })
        },
    )?;
    family(
        e,
        "rwtop_alert_incident",
        "One per active alert, always 1: the incident it belongs to, and its role there: cause \
         (the root) or symptom (folded under the root, caused_by its key); inherited is true \
         when it is behind only because a node upstream is.",
        MetricType::Gauge,
        |m| {
            s.alerts.active.iter().try_for_each(|a| {
                let role = if a.is_folded() { "symptom" } else { "cause" };
                let inherited = if a.membership.inherited {
                    "true"
                } else {
                    "false"
                };
                let labels = [
                    ("kind", a.kind.name()),
                    ("node", a.node.as_deref().unwrap_or("")),
                    ("channel", a.channel.as_deref().unwrap_or("")),
                    ("incident", a.membership.incident.as_str()),
                    ("role", role),
                    ("caused_by", a.membership.caused_by.as_deref().unwrap_or("")),
                    ("inherited", inherited),
                ];
                gauge(m, &labels, 1)
            })
        },
    )
}
