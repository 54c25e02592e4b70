//! What a probe aims at: a replica, or one of its channels (`agg/p2`), and what the topology
//! says about that channel: its name as the server spells it, its source, and the root the
//! marker is written on (`docs/design.md`, "Channels and roots": test-read targets belong to a
//! channel).

use super::attempt::ProbeError;
use crate::topology::Topology;

/// A target as the operator wrote it: `node` for the node's default channel, `node/channel`
/// for a named one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    pub node: &'a str,
    /// `None`: the node's default channel (`''`, else its first).
    pub channel: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// Splits at the first `/`: node names have none, connection names may.
    ///
    /// # Errors
    /// An empty node or channel name, with what to write instead.
    pub fn parse(text: &'a str) -> Result<Self, String> {
        let text = text.trim();
        let (node, channel) = match text.split_once('/') {
            Some((node, channel)) => (node, Some(channel)),
            None => (text, None),
        };
        if node.is_empty() {
            return Err(format!(
                "{text:?} names no node: aim at NODE or NODE/CHANNEL, e.g. agg or agg/p2"
            ));
        }
        if channel == Some("") {
            return Err(format!(
                "{text:?} names no channel: the default channel is plain {node}, a named one \
                 {node}/NAME"
            ));
        }
        Ok(Self { node, channel })
    }

    /// Finds the channel in the topology: the default one for a plain node (which need not have
    /// answered yet: the server's own status settles it), a named one only when the node lists
    /// it. Returns the channel's name as the server spells it.
    ///
    /// # Errors
    /// A named channel the node does not have, listing those it has and how to aim at each.
    pub fn channel_in(&self, view: &dyn Topology) -> Result<String, String> {
        let channels = view.channels(self.node);
        let Some(wanted) = self.channel else {
            return Ok(channels
                .first()
                .map(|c| c.name.to_owned())
                .unwrap_or_default());
        };
        // MariaDB compares connection names without regard to case.
        if let Some(found) = channels
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(wanted))
        {
            return Ok(found.name.to_owned());
        }
        let node = self.node;
        if channels.is_empty() {
            return Err(format!(
                "{node} shows no replication channel (yet), so it has no channel '{wanted}': \
                 aim at {node} itself, or wait until rwtop has polled it"
            ));
        }
        let list: Vec<String> = channels
            .iter()
            .map(|c| {
                if c.name.is_empty() {
                    format!("'' (the default: {node})")
                } else {
                    format!("'{}' ({node}/{})", c.name, c.name)
                }
            })
            .collect();
        Err(format!(
            "{node} has no channel '{wanted}': its channels are {}",
            list.join(", ")
        ))
    }
}

/// A target resolved against the topology: everything a strategy needs to judge that channel.
#[derive(Debug, Clone)]
pub(super) struct Aim {
    pub node: String,
    /// As the server names it; `''` the default.
    pub channel: String,
    /// The node the channel replicates from, when known.
    pub source: Option<String>,
    /// Where the marker is written: the writable root upstream of the channel.
    pub root: String,
}

impl Aim {
    /// Resolves `target`; `primary` is the root for a channel whose chain reaches no root rwtop
    /// knows (a node not polled yet, a source outside the config), as before channels.
    pub fn resolve(
        target: &Target<'_>,
        view: &dyn Topology,
        primary: &str,
    ) -> Result<Self, ProbeError> {
        let channel = target.channel_in(view).map_err(ProbeError)?;
        let listed = view
            .channels(target.node)
            .into_iter()
            .find(|c| c.name == channel);
        let roots = view.roots_of(target.node, &channel);
        let root = match (roots.first(), target.channel) {
            (Some(root), _) => (*root).to_owned(),
            (None, None) => primary.to_owned(),
            (None, Some(_)) => {
                return Err(ProbeError(format!(
                    "{}/{channel}: its source is not a node rwtop polls, so the root to write \
                     the marker on is unknown; add the source to the config",
                    target.node
                )));
            }
        };
        Ok(Self {
            node: target.node.to_owned(),
            channel,
            source: listed.and_then(|c| c.source).map(str::to_owned),
            root,
        })
    }

    /// `agg` for the default channel, `agg/p2` for a named one.
    pub fn label(&self) -> String {
        label(&self.node, &self.channel)
    }
}

/// How a channel is aimed at: `node` for the default one, `node/channel` else.
#[must_use]
pub fn label(node: &str, channel: &str) -> String {
    if channel.is_empty() {
        node.to_owned()
    } else {
        format!("{node}/{channel}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_clear_errors() {
        let t = Target::parse("agg/p2").unwrap();
        assert_eq!((t.node, t.channel), ("agg", Some("p2")));
        assert_eq!(Target::parse("r1").unwrap().channel, None);
        assert!(Target::parse("/p2").unwrap_err().contains("names no node"));
        assert!(Target::parse("agg/").unwrap_err().contains("plain agg"));
    }
}
