//! Replication-link hygiene, per channel, from the status row of the newest poll and the settings
//! last read: the heartbeat period against the net timeout, the channel's TLS, filters, an
//! `UNTIL` condition, and an IO thread held up by `relay_log_space_limit`.
//!
//! What a node or its status row does not report (`MySQL`'s status row has no heartbeat period; a
//! recording made before these were read) is not judged.

use super::{LintFinding, LintSeverity, finding};
use crate::mysql::{ChannelTls, SafetySettings, link::waits_for_relay_space};
use crate::store::{NodeView, ReplicaView, Snapshot};
use crate::units;

/// Relay logs this full of their limit, with the applier behind, are reported before the IO
/// thread stops.
const RELAY_SPACE_NEAR: f64 = 0.9;

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    for node in &s.nodes {
        let Some(set) = node.settings() else {
            continue;
        };
        for channel in &node.channels {
            let on = |f: LintFinding| LintFinding {
                channel: Some(channel.channel.clone()),
                ..f
            };
            let found = [
                heartbeat(node, set, channel),
                tls(node, set, channel),
                filters(node, set, channel),
                until(node, set, channel),
                relay_space(node, set, channel),
            ];
            out.extend(found.into_iter().flatten().map(on));
        }
    }
}

/// `60` → `30`, `45` → `22.5`.
fn half(seconds: u64) -> String {
    if seconds.is_multiple_of(2) {
        (seconds / 2).to_string()
    } else {
        format!("{}.5", seconds / 2)
    }
}

/// Milliseconds as the server prints a heartbeat period, without its trailing zeros: `45`,
/// `7.5`.
fn period(ms: u64) -> String {
    let text = format!("{}.{:03}", ms / 1000, ms % 1000);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A dead link is told from a quiet source only by the heartbeats the source sends while it has
/// nothing else to send: the IO thread takes the link for dead after `slave_net_timeout` seconds
/// without a byte. Two heartbeats per timeout let one be late.
fn heartbeat(node: &NodeView, set: &SafetySettings, c: &ReplicaView) -> Option<LintFinding> {
    let period_ms = c.link.heartbeat_period_ms?;
    let timeout = set.net_timeout.filter(|t| *t > 0)?;
    let timeout_ms = timeout.saturating_mul(1000);
    let var = &set.names.net_timeout;
    let (severity, summary, why) = if period_ms == 0 || period_ms >= timeout_ms {
        let beat = if period_ms == 0 {
            "no heartbeat (period 0)".to_owned()
        } else {
            format!("a heartbeat every {} s", period(period_ms))
        };
        (
            LintSeverity::Error,
            format!("{beat} against {var} = {timeout} s"),
            format!(
                "the source sends nothing while it is quiet for longer than the {timeout} s \
                 timeout, so the replica drops and reconnects the link at every quiet spell; a \
                 dead link looks the same as a quiet source (IO thread Yes, Seconds_Behind \
                 0) until the timeout, and the reconnects it causes are routine, so none is a \
                 sign of a dead link"
            ),
        )
    } else if period_ms.saturating_mul(2) > timeout_ms {
        (
            LintSeverity::Warning,
            format!(
                "a heartbeat every {} s against {var} = {timeout} s: fewer than two per timeout",
                period(period_ms)
            ),
            "one late heartbeat while the source is quiet and the replica takes the link for \
             dead and reconnects; with two per timeout the first late one is ridden out"
                .to_owned(),
        )
    } else {
        return None;
    };
    let option = set.names.link_option("HEARTBEAT_PERIOD");
    Some(LintFinding {
        summary,
        why,
        fix: format!(
            "{} (or raise {var} to at least twice the period: SET GLOBAL {var} = <seconds>, \
             and the same in my.cnf; the IO thread takes it when it reconnects)",
            set.names
                .change_channel(&c.channel, &format!("{option} = {}", half(timeout)))
        ),
        ..finding("heartbeat_period", severity, node)
    })
}

fn tls(node: &NodeView, set: &SafetySettings, c: &ReplicaView) -> Option<LintFinding> {
    let ssl = set.names.link_option("SSL");
    let ca = set.names.link_option("SSL_CA");
    let verify = set.names.link_option("SSL_VERIFY_SERVER_CERT");
    let ca_file = "'<the CA file that signed the source's certificate>'";
    match (c.link.tls?, c.link.verify_server_cert) {
        (ChannelTls::No | ChannelTls::Ignored, _) => Some(LintFinding {
            summary: format!(
                "the link to {} is not encrypted ({ssl} is off)",
                c.source_address
            ),
            why: "every change replicated crosses the network in clear, readable by anyone on \
                  the path, and nothing checks that the other end is the source"
                .to_owned(),
            fix: set.names.change_channel(
                &c.channel,
                &format!("{ssl} = 1, {ca} = {ca_file}, {verify} = 1"),
            ),
            ..finding("channel_tls", LintSeverity::Warning, node)
        }),
        (ChannelTls::Yes, Some(false)) => Some(LintFinding {
            summary: format!(
                "the link to {} is encrypted but the source's certificate is not verified",
                c.source_address
            ),
            why: "the replica accepts any certificate: a host on the path can pose as the \
                  source, read the stream and feed the replica its own"
                .to_owned(),
            fix: set
                .names
                .change_channel(&c.channel, &format!("{ca} = {ca_file}, {verify} = 1")),
            ..finding("channel_tls_unverified", LintSeverity::Warning, node)
        }),
        (ChannelTls::Yes, _) => None,
    }
}

fn filters(node: &NodeView, set: &SafetySettings, c: &ReplicaView) -> Option<LintFinding> {
    let filters = c.link.filters.as_ref().filter(|f| !f.is_empty())?;
    let listed: Vec<String> = filters
        .iter()
        .map(|f| format!("{} = {}", f.column, f.value))
        .collect();
    let clear: Vec<String> = filters
        .iter()
        .map(|f| set.names.clear_filter(&c.channel, &f.column))
        .collect();
    Some(LintFinding {
        summary: format!("replication filters: {}", listed.join("; ")),
        why: "the replica is not a copy of its source: promoted, it lacks what was filtered; \
              and a database filter judges a statement-logged change by the session's default \
              database, not the tables it changes, so changes can be missed or applied \
              silently against intent"
            .to_owned(),
        fix: format!(
            "{}; and remove the replicate_* line(s) from my.cnf (if the filter is meant, keep \
             this replica out of failover)",
            clear.join("; ")
        ),
        ..finding("replication_filter", LintSeverity::Warning, node)
    })
}

fn until(node: &NodeView, set: &SafetySettings, c: &ReplicaView) -> Option<LintFinding> {
    let condition = c.link.until.as_deref()?;
    let thread = Some("SQL_THREAD");
    Some(LintFinding {
        summary: format!("the applier runs only until a position (Until_Condition = {condition})"),
        why: "when it gets there the applier stops, and the replica falls behind from then on; \
              an UNTIL left from a recovery is easily forgotten"
            .to_owned(),
        fix: format!(
            "once it is no longer wanted: {}; {}",
            set.names.stop_channel(&c.channel, thread),
            set.names.start_channel(&c.channel, thread)
        ),
        ..finding("until_condition", LintSeverity::Warning, node)
    })
}

fn relay_space(node: &NodeView, set: &SafetySettings, c: &ReplicaView) -> Option<LintFinding> {
    let limit = set.relay_log_space_limit.filter(|l| *l > 0);
    let waits = waits_for_relay_space(&c.io_state);
    let space = c.link.relay_log_space;
    #[expect(
        clippy::cast_precision_loss,
        reason = "byte counts, compared as a ratio"
    )]
    let near = limit
        .zip(space)
        .is_some_and(|(l, s)| s as f64 >= l as f64 * RELAY_SPACE_NEAR);
    // An applier at the end of what was received frees space as it goes: the server lets the IO
    // thread past the limit then (seen on 10.11: 6 MiB held against a 1 MiB limit, fetching).
    let near = near && c.applied != c.received;
    if !waits && !near {
        return None;
    }
    let held = match (space, limit) {
        (Some(s), Some(l)) => format!(
            "relay logs hold {} of the {} relay_log_space_limit",
            units::format::bytes(s),
            units::format::bytes(l)
        ),
        (Some(s), None) => format!("relay logs hold {}", units::format::bytes(s)),
        (None, _) => "relay log space not reported".to_owned(),
    };
    let summary = if waits {
        format!("the IO thread waits for the applier to free relay log space ({held})")
    } else {
        format!("{held} with the applier behind: the IO thread stops fetching at the limit")
    };
    Some(LintFinding {
        summary,
        why: "while the relay logs are full the IO thread fetches nothing: what the source \
              committed since exists only there (lost if the source dies), and the replica's \
              own Seconds_Behind counts only what it fetched"
            .to_owned(),
        fix: "in my.cnf: relay_log_space_limit = 0 (no limit) or a larger size, then restart \
              the server (the variable is read-only at runtime); and make sure the relay log \
              disk can hold a catch-up"
            .to_owned(),
        ..finding("relay_log_space", LintSeverity::Warning, node)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_and_periods_print_as_the_server_takes_them() {
        assert_eq!(
            (half(60), half(45), half(1)),
            ("30".into(), "22.5".into(), "0.5".into())
        );
        assert_eq!(period(45_000), "45");
        assert_eq!(period(7_500), "7.5");
        assert_eq!(period(250), "0.25");
    }
}
