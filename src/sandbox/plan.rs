//! Which nodes a spec asks for (names, ports, server ids, sources, channels), and whether an
//! existing sandbox is the one a spec describes.

use super::state::{GaleraPorts, NamedChannel, NodeSpec, SandboxState};
use super::{SandboxError, SandboxSpec, ports};

/// The second primary of a multi-source sandbox; it writes in GTID domain 1.
pub const SECOND_PRIMARY: &str = "p2";
/// The node that replicates from both primaries: from `primary` on the default channel and from
/// [`SECOND_PRIMARY`] on a channel named after it.
pub const AGGREGATOR: &str = "agg";
/// The channel of the aggregator's link to the second primary.
pub const SECOND_CHANNEL: &str = SECOND_PRIMARY;

/// The GTID domain a Galera sandbox's cluster writes in (`wsrep_gtid_domain_id`); each member's
/// own `gtid_domain_id` is [`MEMBER_DOMAIN_BASE`] plus its number.
pub const CLUSTER_DOMAIN: u32 = 100;
const MEMBER_DOMAIN_BASE: u32 = 10;
/// Galera members in one sandbox: a cluster of more than 9 on one small machine helps nobody.
pub const MAX_MEMBERS: usize = 9;

/// The nodes of a new sandbox: `primary`, `r1`…`rN`, `c1` (cascade), then `p2` and `agg`
/// (multi-source). A Galera sandbox has members `n1`…`nN` instead of the primary, and its
/// replicas replicate from `n1`. Ports and server ids follow that order (a member's three
/// Galera ports come after every SQL port), and `down` stops the nodes in reverse, so each
/// replica stops before its sources.
pub(super) fn nodes(spec: &SandboxSpec) -> Result<Vec<NodeSpec>, SandboxError> {
    let node = |name: String, source: Option<&str>| NodeSpec {
        name,
        port: 0,
        server_id: 0,
        source: source.map(str::to_owned),
        channels: Vec::new(),
        gtid_domain_id: 0,
        options: Vec::new(),
        galera: None,
    };
    if spec.galera > 0 && (spec.cascade || spec.multi_source || spec.semisync) {
        return Err(SandboxError::BadShape {
            problem: "a Galera sandbox takes async replicas (--replicas), but no --cascade, \
                      --multi-source or --semisync"
                .to_owned(),
        });
    }
    if spec.galera > MAX_MEMBERS {
        return Err(SandboxError::BadShape {
            problem: format!(
                "--galera {} asks for more than {MAX_MEMBERS} members",
                spec.galera
            ),
        });
    }
    let members: Vec<NodeSpec> = (1..=spec.galera)
        .map(|i| NodeSpec {
            gtid_domain_id: MEMBER_DOMAIN_BASE + u32::try_from(i).unwrap_or(0),
            galera: Some(GaleraPorts {
                gcomm: 0,
                ist: 0,
                sst: 0,
            }),
            ..node(format!("n{i}"), None)
        })
        .collect();
    let (mut nodes, source) = if members.is_empty() {
        (vec![node("primary".to_owned(), None)], "primary")
    } else {
        (members, "n1")
    };
    nodes.extend((1..=spec.replicas).map(|i| node(format!("r{i}"), Some(source))));
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
    let ports = ports::choose_ports(&spec.ports, nodes.len() + 3 * spec.galera)?;
    let (sql, mut galera) = ports.split_at(nodes.len());
    for (i, (node, port)) in nodes.iter_mut().zip(sql).enumerate() {
        node.port = *port;
        node.server_id = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if let Some(member) = &mut node.galera {
            let (three, rest) = galera.split_at(3);
            *member = GaleraPorts {
                gcomm: three[0],
                ist: three[1],
                sst: three[2],
            };
            galera = rest;
        }
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
    let members = state.members().count();
    if replicas == spec.replicas
        && members == spec.galera
        && state.semisync == spec.semisync
        && cascade == spec.cascade
        && multi_source == spec.multi_source
        && state.parallel == u32::from(spec.parallel)
    {
        return Ok(());
    }
    let workers = format!("{} parallel workers per replica", state.parallel);
    let cluster = format!("a Galera cluster of {members}");
    let extras: Vec<&str> = [
        (members > 0, cluster.as_str()),
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

    /// A MariaDB sandbox's state over `nodes`, as `up` saves it.
    fn state_of(nodes: Vec<NodeSpec>) -> SandboxState {
        SandboxState {
            format: SandboxState::FORMAT,
            family: "mariadb".to_owned(),
            server_version: String::new(),
            semisync: false,
            tls: false,
            parallel: 0,
            monitor_user: "rwtop".to_owned(),
            repl_user: "repl".to_owned(),
            nodes,
        }
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
    fn a_galera_sandbox_has_members_with_their_own_ports_and_replicas_of_the_first() {
        let nodes = nodes(&spec(|s| {
            s.galera = 3;
            s.replicas = 1;
        }))
        .unwrap();
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2", "n3", "r1"]);
        // SQL ports first, in node order, then three Galera ports per member: none repeats.
        let sql: Vec<u16> = nodes.iter().map(|n| n.port).collect();
        assert_eq!(sql, [20000, 20001, 20002, 20003]);
        let galera: Vec<GaleraPorts> = nodes.iter().filter_map(|n| n.galera).collect();
        assert_eq!(
            galera[1],
            GaleraPorts {
                gcomm: 20007,
                ist: 20008,
                sst: 20009
            }
        );
        assert_eq!(galera[2].sst, 20012);
        assert!(nodes[3].galera.is_none());
        assert_eq!(nodes[3].source.as_deref(), Some("n1"));
        // A domain of each member's own, apart from the cluster's.
        let domains: Vec<u32> = nodes[..3].iter().map(|n| n.gtid_domain_id).collect();
        assert_eq!(domains, [11, 12, 13]);
        assert!(!domains.contains(&CLUSTER_DOMAIN));
        let state = state_of(nodes);
        // Accounts and the schema go to n1 alone; the cluster carries them to the others.
        let roots: Vec<&str> = state.roots().map(|n| n.name.as_str()).collect();
        assert_eq!(roots, ["n1"]);
        let members: Vec<&str> = state.members().map(|n| n.name.as_str()).collect();
        assert_eq!(members, ["n1", "n2", "n3"]);
        let gone = check_same_shape(&spec(|s| s.replicas = 1), &state)
            .unwrap_err()
            .to_string();
        assert!(gone.contains("with a Galera cluster of 3"), "{gone}");
    }

    #[test]
    fn a_galera_sandbox_refuses_what_it_cannot_build() {
        for (what, flag) in [
            (
                (|s: &mut SandboxSpec| s.cascade = true) as fn(&mut SandboxSpec),
                "--cascade",
            ),
            (
                |s: &mut SandboxSpec| s.multi_source = true,
                "--multi-source",
            ),
            (|s: &mut SandboxSpec| s.semisync = true, "--semisync"),
        ] {
            let err = nodes(&spec(|s| {
                s.galera = 3;
                what(s);
            }))
            .unwrap_err()
            .to_string();
            assert!(err.contains(flag), "{err}");
        }
        let err = nodes(&spec(|s| s.galera = MAX_MEMBERS + 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than 9 members"), "{err}");
    }

    #[test]
    fn links_list_every_channel_and_roots_every_primary() {
        let state = state_of(
            nodes(&spec(|s| {
                s.replicas = 1;
                s.cascade = true;
                s.multi_source = true;
            }))
            .unwrap(),
        );
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
