//! Each replication link (a replica's channel to one source): directly, or through a stallable
//! [`Relay`] the handle owns; and starting or stopping one channel's threads.

use super::{Relay, Sandbox, SandboxError, wiring};
use crate::mysql::{ReplicaStatus, ThreadControl};

impl Sandbox {
    /// Starts one relay per link, forwarding to that link's source.
    pub(super) fn start_relays(&mut self) -> Result<(), SandboxError> {
        let mut relays = Vec::new();
        for link in self.state.links() {
            let port = self
                .port(link.source)
                .ok_or_else(|| SandboxError::UnknownNode {
                    node: link.source.to_owned(),
                })?;
            let relay = Relay::start(port).map_err(|e| {
                SandboxError::io(
                    format!(
                        "starting the relay from {} to {}",
                        link.replica, link.source
                    ),
                    e,
                )
            })?;
            relays.push(((link.replica.to_owned(), link.channel.to_owned()), relay));
        }
        self.relays.extend(relays);
        Ok(())
    }

    /// The port a replica should replicate from on `channel`: its relay's when it has one, else
    /// its source's.
    ///
    /// With a relay, the replica's `Master_Port` shows the relay port, which matches no node's
    /// address; rwtop's topology still finds the source by `Master_Server_Id`
    /// (`store::Store::source_of` falls back to it).
    pub(super) fn link_port(&self, replica: &str, channel: &str) -> Option<u16> {
        if let Some(relay) = self.channel_relay(replica, channel) {
            return Some(relay.port());
        }
        let link = self
            .state
            .links()
            .find(|l| l.replica == replica && l.channel == channel)?;
        self.port(link.source)
    }

    /// On a restart, points each link whose configured source port is not the one it should use
    /// now: a sandbox created with relays by a process that has exited points at dead relay
    /// ports, and one reopened with relays must go through the new ones. A link already right is
    /// not touched, so `up` on a healthy sandbox stays harmless. (A second process running `up`
    /// on a sandbox whose relays another process still holds re-points it too.)
    pub(super) fn repoint_links(&self) -> Result<(), SandboxError> {
        for link in self.state.links() {
            let Some(want) = self.link_port(link.replica, link.channel) else {
                continue;
            };
            let current = self
                .channel_status(link.replica, link.channel)?
                .map(|s| s.source_port);
            if current.is_some_and(|port| port != want) {
                wiring::repoint(self, link, want)?;
            }
        }
        Ok(())
    }

    /// The relay carrying a replica's default channel, when the sandbox was started with relays
    /// (see [`super::SandboxSpec::relay`]); a test stalls and resumes the link through it.
    #[must_use]
    pub fn relay(&self, replica: &str) -> Option<&Relay> {
        self.channel_relay(replica, "")
    }

    /// The relay carrying one channel of a replica (`""`: the default channel).
    #[must_use]
    pub fn channel_relay(&self, replica: &str, channel: &str) -> Option<&Relay> {
        self.relays
            .iter()
            .find(|((name, ch), _)| name == replica && ch == channel)
            .map(|(_, relay)| relay)
    }

    /// Starts or stops threads of one channel of `replica` (`""`: the default channel) with the
    /// flavor's statement, e.g. `STOP SLAVE 'p2' SQL_THREAD` on `MariaDB`.
    pub fn channel_threads(
        &self,
        replica: &str,
        channel: &str,
        which: ThreadControl,
    ) -> Result<(), SandboxError> {
        let sql = self.binaries.flavor.channel_thread_sql(which, channel);
        self.admin(replica, &sql).map(drop)
    }

    /// The replication status of one channel of a node (`""`: the default channel); `None` when
    /// the node has no such channel.
    pub fn channel_status(
        &self,
        name: &str,
        channel: &str,
    ) -> Result<Option<ReplicaStatus>, SandboxError> {
        Ok(self
            .channel_statuses(name)?
            .into_iter()
            .find(|s| s.channel == channel))
    }

    /// Every channel's replication status on a node, as the flavor's status statement lists them.
    pub fn channel_statuses(&self, name: &str) -> Result<Vec<ReplicaStatus>, SandboxError> {
        let sql = self.binaries.flavor.replica_status_sql();
        self.admin(name, sql)?
            .iter()
            .map(ReplicaStatus::from_row)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SandboxError::Admin {
                node: name.to_owned(),
                sql: sql.to_owned(),
                problem: e.to_string(),
            })
    }
}
