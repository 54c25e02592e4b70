//! A node's `semisync` object (docs/json-schema.md, since 1.12): the source side's state, the
//! acking replicas against those required, the ACK wait per window and the newest poll
//! interval's counts; on a replica, its side's switches. `null` where neither plugin is loaded
//! or the node does not answer; every figure the server did not report is `null`, never 0.

use serde::Serialize;

use crate::store::semisync::{SemiSyncState, SemiSyncView};

#[derive(Debug, Serialize)]
pub struct JsonSemiSync {
    /// `active`, `fell_back`, `off` or `unknown`; `null` where the source side is not loaded.
    pub state: Option<SemiSyncState>,
    pub acking_replicas: Option<u64>,
    pub required_acks: Option<u64>,
    pub timeout_seconds: Option<f64>,
    pub wait_point: Option<String>,
    pub wait_sessions: Option<u64>,
    /// Percentiles of the per-poll-interval average ACK wait, per window (`1m`, `5m`, `15m`).
    pub ack_wait: Vec<JsonAckWait>,
    /// The newest poll interval; `null` before two polls and after the totals reset.
    pub interval: Option<JsonInterval>,
    /// The server's totals as read (`Rpl_semi_sync_*`).
    pub commits_acked_total: Option<u64>,
    pub commits_without_ack_total: Option<u64>,
    pub fallbacks_total: Option<u64>,
    /// Replica side: enabled, and acknowledging now.
    pub replica_enabled: Option<bool>,
    pub replica_active: Option<bool>,
}

#[derive(Debug, Serialize)]
pub struct JsonAckWait {
    pub window: &'static str,
    pub p50_seconds: f64,
    pub p99_seconds: f64,
    pub max_seconds: f64,
    pub intervals: u64,
    pub commits: u64,
}

#[derive(Debug, Serialize)]
pub struct JsonInterval {
    pub seconds: f64,
    pub commits_waited: Option<u64>,
    pub avg_ack_wait_seconds: Option<f64>,
    pub commits_without_ack: Option<u64>,
    pub fallbacks: Option<u64>,
    pub acks_sent: Option<u64>,
}

pub fn semisync(s: &SemiSyncView) -> JsonSemiSync {
    JsonSemiSync {
        state: s.state,
        acking_replicas: s.clients,
        required_acks: s.required_acks,
        timeout_seconds: s.timeout.map(|d| d.as_secs_f64()),
        wait_point: s.wait_point.clone(),
        wait_sessions: s.wait_sessions,
        ack_wait: s
            .ack_wait
            .iter()
            .filter_map(|(w, stats)| {
                let st = (*stats)?;
                Some(JsonAckWait {
                    window: super::window_name(*w),
                    p50_seconds: st.p50.as_secs_f64(),
                    p99_seconds: st.p99.as_secs_f64(),
                    max_seconds: st.max.as_secs_f64(),
                    intervals: st.intervals,
                    commits: st.commits,
                })
            })
            .collect(),
        interval: s.interval.map(|i| JsonInterval {
            seconds: i.span.as_secs_f64(),
            commits_waited: i.commits_waited,
            avg_ack_wait_seconds: i.avg_wait.map(|d| d.as_secs_f64()),
            commits_without_ack: i.no_ack_commits,
            fallbacks: i.fallbacks,
            acks_sent: i.acks_sent,
        }),
        commits_acked_total: s.totals.yes_tx,
        commits_without_ack_total: s.totals.no_tx,
        fallbacks_total: s.totals.no_times,
        replica_enabled: s.replica_enabled,
        replica_active: s.replica_active,
    }
}

/// A primary's semi-sync with every figure known, one interval and one window.
#[cfg(test)]
pub(crate) fn example() -> crate::store::semisync::SemiSyncView {
    use crate::store::semisync::{AckWaitStats, SemiSyncInterval, SemiSyncState, SemiSyncView};
    use crate::store::windows::Window;
    let ms = std::time::Duration::from_millis;
    SemiSyncView {
        state: Some(SemiSyncState::Active),
        clients: Some(2),
        required_acks: Some(1),
        timeout: Some(ms(10_000)),
        wait_point: Some("AFTER_COMMIT".to_owned()),
        wait_sessions: Some(0),
        interval: Some(SemiSyncInterval {
            span: ms(1000),
            commits_waited: Some(21),
            avg_wait: Some(ms(1)),
            no_ack_commits: Some(0),
            fallbacks: Some(0),
            acks_sent: None,
        }),
        ack_wait: vec![(
            Window::OneMinute,
            Some(AckWaitStats {
                p50: ms(1),
                p99: ms(2),
                max: ms(2),
                intervals: 58,
                commits: 1204,
            }),
        )],
        totals: crate::mysql::semisync::Counters::default(),
        replica_enabled: Some(false),
        replica_active: Some(false),
    }
}

#[cfg(test)]
mod tests {
    use super::example;
    use crate::store::testkit::Topo;
    use crate::store::testkit::live;

    #[test]
    fn semisync_figures_the_server_did_not_report_are_null_never_zero() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| {
            live(n).semisync = Some(crate::store::semisync::SemiSyncView {
                clients: None,
                interval: None,
                ..example()
            });
        });
        let d = serde_json::to_value(crate::export::json::from_snapshot(&topo.snapshot)).unwrap();
        let semi = &d["nodes"][0]["semisync"];
        assert_eq!(semi["state"], "active");
        assert!(semi["acking_replicas"].is_null(), "{semi}");
        assert!(semi["interval"].is_null(), "{semi}");
        assert!(semi["commits_without_ack_total"].is_null(), "{semi}");
        assert_eq!(semi["ack_wait"][0]["p99_seconds"], 0.002);
    }
}
