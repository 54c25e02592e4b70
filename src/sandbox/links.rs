//! Each replica's link to its source: directly, or through a stallable [`Relay`] the handle owns.

use super::{Relay, Sandbox, SandboxError, wiring};

impl Sandbox {
    /// Starts one relay per replica, forwarding to that replica's source.
    pub(super) fn start_relays(&mut self) -> Result<(), SandboxError> {
        for node in self.state.replicas() {
            let source = node.source.as_deref().unwrap_or("primary");
            let port = self.port(source).ok_or_else(|| SandboxError::UnknownNode {
                node: source.to_owned(),
            })?;
            let relay = Relay::start(port).map_err(|e| {
                SandboxError::io(
                    format!("starting the relay from {} to {source}", node.name),
                    e,
                )
            })?;
            self.relays.push((node.name.clone(), relay));
        }
        Ok(())
    }

    /// The port a replica should replicate from: its relay's when it has one, else its source's.
    ///
    /// With a relay, the replica's `Master_Port` shows the relay port, which matches no node's
    /// address; rwtop's topology still finds the source by `Master_Server_Id`
    /// (`store::Store::source_of` falls back to it).
    pub(super) fn link_port(&self, replica: &str) -> Option<u16> {
        if let Some(relay) = self.relay(replica) {
            return Some(relay.port());
        }
        let node = self.state.nodes.iter().find(|n| n.name == replica)?;
        self.port(node.source.as_deref()?)
    }

    /// On a restart, points each replica whose configured source port is not the one it should
    /// use now: a sandbox created with relays by a process that has exited points at dead relay
    /// ports, and one reopened with relays must go through the new ones. A replica already
    /// right is not touched, so `up` on a healthy sandbox stays harmless. (A second process
    /// running `up` on a sandbox whose relays another process still holds re-points it too.)
    pub(super) fn repoint_replicas(&self) -> Result<(), SandboxError> {
        for node in self.state.replicas() {
            let Some(want) = self.link_port(&node.name) else {
                continue;
            };
            let current = self.replica_status(&node.name)?.map(|s| s.source_port);
            if current.is_some_and(|port| port != want) {
                wiring::repoint(self, &node.name, want)?;
            }
        }
        Ok(())
    }

    /// The relay carrying a replica's link, when the sandbox was started with relays (see
    /// [`SandboxSpec::relay`]); a test stalls and resumes the link through it.
    #[must_use]
    pub fn relay(&self, replica: &str) -> Option<&Relay> {
        self.relays
            .iter()
            .find(|(name, _)| name == replica)
            .map(|(_, relay)| relay)
    }
}
