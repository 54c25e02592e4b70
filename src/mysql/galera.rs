//! A Galera member's own account of itself: `SHOW GLOBAL STATUS LIKE 'wsrep%'`, read into the
//! figures rwtop judges a member by. Counters and current gauges only: the `*_avg`, `*_max` and
//! the paused fraction are reset by anyone's `FLUSH STATUS`, so rates are worked out from the
//! counters between two readings (`store/galera.rs`), and rwtop never flushes.
//!
//! A MariaDB built with wsrep answers the statement on every server, member or not: without a
//! provider loaded it reports 17 rows, `wsrep_provider_name` empty and `wsrep_cluster_status`
//! `Disconnected`. Such a server is not a member ([`GaleraStatus::from_rows`] gives `None`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::row::RawRow;

/// The statement, on `MariaDB` (`MySQL` has no Galera of its own).
pub const STATUS_SQL: &str = "SHOW GLOBAL STATUS LIKE 'wsrep%'";

/// Keeps a monitor session's reads from waiting for causality: with `wsrep_sync_wait`'s SHOW
/// bit set (8) a `SHOW` waits for the cluster and stalls exactly while flow control pauses it.
/// A server built without wsrep does not know the variable (error 1193), which is harmless.
pub const NO_SYNC_WAIT_SQL: &str = "SET SESSION wsrep_sync_wait = 0";

/// A member's names for its cluster and itself (`wsrep_cluster_name`, `wsrep_node_name`): asked
/// only of a member, once, when rwtop starts.
pub const IDENTITY_SQL: &str =
    "SELECT @@wsrep_cluster_name AS cluster_name, @@wsrep_node_name AS node_name";

/// The server's error for a table read on a member outside the primary component ("WSREP has
/// not yet prepared node for application use"). `SHOW STATUS` and `SELECT 1` still answer there.
pub const NOT_IN_COMPONENT: u16 = 1047;

/// Whether `err` is a table read refused because the member is out of the primary component.
#[must_use]
pub fn out_of_component(err: &super::SqlError) -> bool {
    matches!(err, super::SqlError::Server { code, .. } if *code == NOT_IN_COMPONENT)
}

/// A member's names, as [`IDENTITY_SQL`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberNames {
    pub cluster: String,
    pub node: String,
}

impl MemberNames {
    #[must_use]
    pub fn from_rows(rows: &[RawRow]) -> Option<Self> {
        let row = rows.first()?;
        let text = |name: &str| {
            row.optional_text(&[name])
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        Some(Self {
            cluster: text("cluster_name"),
            node: text("node_name"),
        })
    }
}

/// What a server said of Galera when asked: no provider loaded, or a member's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Wsrep {
    NotMember,
    Member(Box<GaleraStatus>),
}

impl Wsrep {
    #[must_use]
    pub fn from_rows(rows: &[RawRow]) -> Self {
        GaleraStatus::from_rows(rows).map_or(Self::NotMember, |g| Self::Member(Box::new(g)))
    }

    #[must_use]
    pub fn member(&self) -> Option<&GaleraStatus> {
        match self {
            Self::NotMember => None,
            Self::Member(g) => Some(g),
        }
    }
}

/// `wsrep_local_state`: where the member is in joining and serving the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberState {
    /// 0: not in a primary component (cut off, or starting).
    Initialized,
    /// 1: receiving a state transfer.
    Joining,
    /// 2: a donor, or desynced by hand or by a backup's read lock: it falls behind without
    /// holding the cluster back.
    Donor,
    /// 3: has the state, catching up on what came meanwhile.
    Joined,
    /// 4: serving.
    Synced,
    /// Anything else the server reports.
    Other,
}

impl MemberState {
    fn of(state: Option<u64>) -> Self {
        match state {
            Some(0) => Self::Initialized,
            Some(1) => Self::Joining,
            Some(2) => Self::Donor,
            Some(3) => Self::Joined,
            Some(4) => Self::Synced,
            _ => Self::Other,
        }
    }
}

/// `wsrep_cluster_status`: the component this member is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// Has quorum: it takes writes and serves reads.
    Primary,
    /// Lost quorum: table reads fail with error 1047.
    NonPrimary,
    Disconnected,
    Other,
}

impl Component {
    fn of(text: &str) -> Self {
        match text {
            "Primary" => Self::Primary,
            "non-Primary" => Self::NonPrimary,
            "Disconnected" => Self::Disconnected,
            _ => Self::Other,
        }
    }
}

/// Flow control as this member sees it: cumulative counters and the current switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowControl {
    /// Nanoseconds the member has been paused in all, whoever asked.
    pub paused_ns: Option<u64>,
    /// Pause requests this member sent: its own backlog holding the cluster back.
    pub sent: Option<u64>,
    /// Pause requests it received.
    pub received: Option<u64>,
    /// It honours a pause now.
    pub active: Option<bool>,
    /// Its own pause request is outstanding now.
    pub requested: Option<bool>,
}

/// One reading of a member. Every figure the server did not report (or reported garbled) is
/// `None`, never zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GaleraStatus {
    pub state: MemberState,
    /// The server's own words for the state (`Donor/Desynced`).
    pub state_comment: String,
    pub ready: Option<bool>,
    pub connected: Option<bool>,
    pub component: Component,
    pub cluster_size: Option<u64>,
    /// Equal on every member of one component; `None` outside a primary component (the server
    /// reports 2^64 − 1 there).
    pub conf_id: Option<u64>,
    pub cluster_uuid: String,
    /// Every member's SQL address, as each advertises it (`wsrep_node_incoming_address`).
    pub incoming: Vec<String>,
    /// Write-sets received and not applied yet.
    pub recv_queue: Option<u64>,
    /// Write-sets waiting to be sent.
    pub send_queue: Option<u64>,
    /// The newest write-set committed here: a cluster-wide sequence number, comparable across
    /// members (not the GTID's).
    pub last_committed: Option<u64>,
    /// How many write-sets could be applied in parallel, on average.
    pub cert_deps_distance: Option<f64>,
    pub applier_threads: Option<u64>,
    pub flow_control: FlowControl,
    /// Cumulative: local transactions that failed certification.
    pub cert_failures: Option<u64>,
    /// Cumulative: local transactions aborted by a replicated one.
    pub bf_aborts: Option<u64>,
    /// How many desyncs hold the member (a backup's read lock is one).
    pub desync_count: Option<u64>,
    /// The group's replication latency, its average over the provider's window, in seconds.
    pub repl_latency_avg_s: Option<f64>,
}

/// What the server prints for "none" in its unsigned gauges.
const NONE_U64: u64 = u64::MAX;

impl GaleraStatus {
    /// `None` on a server with no Galera provider loaded: not a member.
    #[must_use]
    pub fn from_rows(rows: &[RawRow]) -> Option<Self> {
        let values: HashMap<String, String> = rows
            .iter()
            .filter_map(|row| {
                let name = row.string(&["Variable_name"]).ok()?;
                let value = row.optional_text(&["Value"]).unwrap_or_default();
                Some((name.to_ascii_lowercase(), value.to_owned()))
            })
            .collect();
        let text = |name: &str| values.get(name).map(String::as_str);
        if text("wsrep_provider_name").is_none_or(str::is_empty) {
            return None;
        }
        let number = |name: &str| text(name)?.trim().parse::<u64>().ok();
        let real = |name: &str| text(name)?.trim().parse::<f64>().ok();
        let switch = |name: &str| match text(name)?.trim() {
            "ON" | "true" | "1" => Some(true),
            "OFF" | "false" | "0" => Some(false),
            _ => None,
        };
        Some(Self {
            state: MemberState::of(number("wsrep_local_state")),
            state_comment: text("wsrep_local_state_comment")
                .unwrap_or_default()
                .to_owned(),
            ready: switch("wsrep_ready"),
            connected: switch("wsrep_connected"),
            component: Component::of(text("wsrep_cluster_status").unwrap_or_default()),
            cluster_size: number("wsrep_cluster_size"),
            conf_id: number("wsrep_cluster_conf_id").filter(|&id| id != NONE_U64),
            cluster_uuid: text("wsrep_cluster_state_uuid")
                .unwrap_or_default()
                .to_owned(),
            incoming: text("wsrep_incoming_addresses")
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
                .collect(),
            recv_queue: number("wsrep_local_recv_queue"),
            send_queue: number("wsrep_local_send_queue"),
            last_committed: number("wsrep_last_committed"),
            cert_deps_distance: real("wsrep_cert_deps_distance"),
            applier_threads: number("wsrep_applier_thread_count"),
            flow_control: FlowControl {
                paused_ns: number("wsrep_flow_control_paused_ns"),
                sent: number("wsrep_flow_control_sent"),
                received: number("wsrep_flow_control_recv"),
                active: switch("wsrep_flow_control_active"),
                requested: switch("wsrep_flow_control_requested"),
            },
            cert_failures: number("wsrep_local_cert_failures"),
            bf_aborts: number("wsrep_local_bf_aborts"),
            desync_count: number("wsrep_desync_count"),
            // `min/avg/max/stddev/samples`; no samples yet reads as zeros.
            repl_latency_avg_s: text("wsrep_evs_repl_latency")
                .and_then(|t| t.split('/').nth(1))
                .and_then(|avg| avg.trim().parse().ok()),
        })
    }

    /// Serving reads as a member should: synced, ready and in the primary component.
    #[must_use]
    pub fn serving(&self) -> bool {
        self.state == MemberState::Synced
            && self.ready == Some(true)
            && self.component == Component::Primary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(pairs: &[(&str, &str)]) -> Vec<RawRow> {
        pairs
            .iter()
            .map(|(name, value)| {
                RawRow::of(&[("Variable_name", Some(name)), ("Value", Some(value))])
            })
            .collect()
    }

    #[test]
    fn a_server_without_a_provider_is_not_a_member() {
        let off = rows(&[
            ("wsrep_cluster_status", "Disconnected"),
            ("wsrep_provider_name", ""),
            ("wsrep_ready", "OFF"),
        ]);
        assert_eq!(GaleraStatus::from_rows(&off), None);
        assert_eq!(GaleraStatus::from_rows(&[]), None);
    }

    #[test]
    fn a_cut_off_member_has_no_conf_id_and_garbled_figures_are_unknown() {
        let g = GaleraStatus::from_rows(&rows(&[
            ("wsrep_provider_name", "Galera"),
            ("wsrep_local_state", "0"),
            ("wsrep_cluster_status", "non-Primary"),
            ("wsrep_cluster_conf_id", "18446744073709551615"),
            ("wsrep_cluster_size", "1"),
            ("wsrep_ready", "OFF"),
            ("wsrep_local_recv_queue", "lots"),
            ("wsrep_evs_repl_latency", "0/0/0/0/0"),
        ]))
        .unwrap();
        assert_eq!(g.state, MemberState::Initialized);
        assert_eq!(g.component, Component::NonPrimary);
        assert_eq!((g.conf_id, g.cluster_size), (None, Some(1)));
        assert_eq!(g.ready, Some(false));
        assert_eq!(g.recv_queue, None);
        assert_eq!(g.flow_control.sent, None, "missing is unknown, not zero");
        assert_eq!(g.repl_latency_avg_s, Some(0.0));
        assert!(!g.serving());
    }
}
