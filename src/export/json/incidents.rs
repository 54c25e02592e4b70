//! The snapshot's `incidents` (docs/json-schema.md, docs/incidents.md): the active alerts
//! grouped by root cause, as plain values.

use serde::Serialize;

/// Since 1.11: one incident: its root alert and the alerts folded under it.
#[derive(Debug, Serialize)]
pub struct JsonIncident {
    pub id: String,
    /// The root alert's kind, node and named channel.
    pub kind: crate::alerts::AlertKind,
    pub node: Option<String>,
    pub channel: Option<String>,
    /// The highest severity among its members' kinds: it pages once.
    pub severity: crate::alerts::Severity,
    pub recovering: bool,
    pub since: String,
    pub summary: String,
    /// Its alerts' keys, the root first.
    pub alerts: Vec<String>,
}

pub fn incident(i: &crate::alerts::Incident) -> JsonIncident {
    JsonIncident {
        id: i.id.clone(),
        kind: i.kind,
        node: i.node.clone(),
        channel: i.channel.clone(),
        severity: i.severity,
        recovering: i.recovering,
        since: i.since.to_rfc3339(),
        summary: i.summary.clone(),
        alerts: i.alerts.clone(),
    }
}
