//! Which nodes a spec asks for (names, ports, server ids, sources, channels), and whether an
//! existing sandbox is the one a spec describes.

use super::state::{NamedChannel, NodeSpec, SandboxState};
use super::{SandboxError, SandboxSpec, ports};

/// The second primary of a multi-source sandbox; it writes in GTID domain 1.
pub const SECOND_PRIMARY: &str = "p2";
/// The node that replicates from both primaries: from `primary` on the default channel and from
/// [`SECOND_PRIMARY`] on a channel named after it.
pub const AGGREGATOR: &str = "agg";
/// The channel of the aggregator's link to the second primary.
pub const SECOND_CHANNEL: &str = SECOND_PRIMARY;

/// The nodes of a new sandbox: `primary`, `r1`…`rN`, `c1` (cascade), then `p2` and `agg`
/// (multi-source). Ports and server ids follow that order, and `down` stops the nodes in reverse,
/// so each replica stops before its sources.
pub(super) fn nodes(spec: &SandboxSpec) -> Result<Vec<NodeSpec>, SandboxError> {
    let node = |name: String, source: Option<&str>| NodeSpec {
        name,
        port: 0,
        server_id: 0,
        source: source.map(str::to_owned),
        channels: Vec::new(),
        gtid_domain_id: 0,
        options: Vec::new(),
    };
    let mut nodes = vec![node("primary".to_owned(), None)];
    nodes.extend((1..=spec.replicas).map(|i| node(format!("r{i}"), Some("primary"))));
    if spec.cascade && spec.replicas > 0 {
        nodes.push(node("c1".to_owned(), Some("r1")));
    }
    if spec.multi_source {
        nodes.push(NodeSpec {
            gtid_domain_id: 1,
            ..node(SECOND_PRIMARY.to_owned(), None)
        });
        nodes.push(NodeSpec {
            channels: vec![NamedChannel {
                name: SECOND_CHANNEL.to_owned(),
                source: SECOND_PRIMARY.to_owned(),
            }],
            ..node(AGGREGATOR.to_owned(), Some("primary"))
        });
    }
    if let Some(node) = spec
        .server_options
        .keys()
        .find(|name| !nodes.iter().any(|n| &n.name == *name))
    {
        return Err(SandboxError::UnknownNode { node: node.clone() });
    }
    for node in &mut nodes {
        if let Some(options) = spec.server_options.get(&node.name) {
            node.options.clone_from(options);
        }
    }
    let ports = ports::choose_ports(&spec.ports, nodes.len())?;
    for (i, (node, port)) in nodes.iter_mut().zip(ports).enumerate() {
        node.port = port;
        node.server_id = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    Ok(nodes)
}

/// What `up` on an existing sandbox compares with the spec: asking for another shape is an
/// error that says what is there, never a silent rebuild.
pub(super) fn check_same_shape(
    spec: &SandboxSpec,
    state: &SandboxState,
) -> Result<(), SandboxError> {
    let named = |name: &str| state.nodes.iter().any(|n| n.name == name);
    let replicas = state
        .nodes
        .iter()
        .filter(|n| {
            n.name
                .strip_prefix('r')
                .is_some_and(|i| i.parse::<u32>().is_ok())
        })
        .count();
    let (cascade, multi_source) = (named("c1"), named(AGGREGATOR));
    if replicas == spec.replicas
        && state.semisync == spec.semisync
        && cascade == spec.cascade
        && multi_source == spec.multi_source
        && state.parallel == u32::from(spec.parallel)
    {
        return Ok(());
    }
    let workers = format!("{} parallel workers per replica", state.parallel);
    let extras: Vec<&str> = [
        (state.semisync, "semi-sync"),
        (cascade, "a cascaded replica"),
        (multi_source, "a second primary and an aggregator"),
        (state.parallel > 0, workers.as_str()),
    ]
    .into_iter()
    .filter_map(|(on, what)| on.then_some(what))
    .collect();
    Err(SandboxError::Exists {
        dir: spec.dir.display().to_string(),
        problem: format!(
            "it has {replicas} replicas{}; run `rwtop sandbox down` first to build a different one",
            if extras.is_empty() {
                String::new()
            } else {
                format!(" with {}", extras.join(" and "))
            }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Ports;

    fn spec(options: impl FnOnce(&mut SandboxSpec)) -> SandboxSpec {
        let mut spec = SandboxSpec {
            replicas: 2,
            ports: Ports::Base(20000),
            ..SandboxSpec::new("/nonexistent")
        };
        options(&mut spec);
        spec
    }

    #[test]
    fn a_multi_source_sandbox_adds_a_second_primary_and_an_aggregator() {
        let nodes = nodes(&spec(|s| s.multi_source = true)).unwrap();
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["primary", "r1", "r2", "p2", "agg"]);
        let p2 = &nodes[3];
        assert_eq!((p2.source.as_deref(), p2.gtid_domain_id), (None, 1));
        let agg = &nodes[4];
        assert_eq!(agg.source.as_deref(), Some("primary"));
        assert_eq!(
            agg.channels,
            [NamedChannel {
                name: "p2".to_owned(),
                source: "p2".to_owned()
            }]
        );
        assert_eq!((agg.port, agg.server_id), (20004, 5));
        assert!(
            nodes
                .iter()
                .filter(|n| n.name != "p2")
                .all(|n| n.gtid_domain_id == 0)
        );
    }

    #[test]
    fn links_list_every_channel_and_roots_every_primary() {
        let state = SandboxState {
            format: SandboxState::FORMAT,
            family: "mariadb".to_owned(),
            server_version: String::new(),
            semisync: false,
            tls: false,
            parallel: 0,
            monitor_user: "rwtop".to_owned(),
            repl_user: "repl".to_owned(),
            nodes: nodes(&spec(|s| {
                s.replicas = 1;
                s.cascade = true;
                s.multi_source = true;
            }))
            .unwrap(),
        };
        let links: Vec<(&str, &str, &str)> = state
            .links()
            .map(|l| (l.replica, l.channel, l.source))
            .collect();
        assert_eq!(
            links,
            [
                ("r1", "", "primary"),
                ("c1", "", "r1"),
                ("agg", "", "primary"),
                ("agg", "p2", "p2"),
            ]
        );
        let roots: Vec<&str> = state.roots().map(|n| n.name.as_str()).collect();
        assert_eq!(roots, ["primary", "p2"]);
        assert_eq!(state.primary().map(|n| n.name.as_str()), Some("primary"));
        check_same_shape(
            &spec(|s| {
                s.replicas = 1;
                s.cascade = true;
                s.multi_source = true;
            }),
            &state,
        )
        .unwrap();
        let other = check_same_shape(
            &spec(|s| {
                s.replicas = 1;
                s.cascade = true;
            }),
            &state,
        )
        .unwrap_err()
        .to_string();
        assert!(
            other.contains(
                "1 replicas with a cascaded replica and a second primary and an aggregator"
            ),
            "{other}"
        );
        // Parallel workers are part of the shape: a sandbox built with them says so.
        let parallel = SandboxState {
            parallel: 4,
            ..state
        };
        let serial = spec(|s| {
            s.replicas = 1;
            s.cascade = true;
            s.multi_source = true;
        });
        let err = check_same_shape(&serial, &parallel)
            .unwrap_err()
            .to_string();
        assert!(err.contains("4 parallel workers per replica"), "{err}");
        let same = SandboxSpec {
            parallel: 4,
            ..serial
        };
        check_same_shape(&same, &parallel).unwrap();
    }
}
