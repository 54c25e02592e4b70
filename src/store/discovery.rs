//! How a replica that another node reports (`SHOW SLAVE HOSTS` / `SHOW REPLICAS`) is named and
//! reached.
//!
//! The report carries only the replica's `report_host` and `report_port`. `report_host` is often
//! a host name people know the server by (`c1`, `db2.example.com`), which makes a better name
//! than an address; but it is free text, so it may not resolve from where rwtop runs. Then the
//! replica is reached at the configured primary's host with the reported port: right when the
//! servers share a host (the sandbox, the demo, containers on one machine), and only a guess
//! otherwise, which the node's connection state then shows failing.

use std::net::IpAddr;

/// An address rather than a name: an IP, or `localhost`, which names no particular server.
pub(super) fn is_address(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok()
}

/// The host to connect to: the reported one when it is an address or a name that resolves (the
/// poller looked it up), else `fallback` (the configured primary's host).
pub(super) fn connect_host(reported: &str, fallback: &str, resolves: bool) -> String {
    if is_address(reported) || resolves {
        reported.to_owned()
    } else {
        fallback.to_owned()
    }
}

/// The node's name: the reported host name, unless it is an address or another node already
/// has that name; then the address it is reached at.
pub(super) fn node_name(reported: &str, address: &str, taken: impl Fn(&str) -> bool) -> String {
    if is_address(reported) || taken(reported) {
        address.to_owned()
    } else {
        reported.to_owned()
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::mysql::{Endpoint, Identity, ReplicaHost};
    use crate::poll::{PollEvent, ReportedReplica};
    use crate::store::{Role, Store, StoreSettings};

    #[test]
    fn names_are_kept_and_addresses_stay_connectable() {
        let (never, always) = (false, true);
        assert_eq!(connect_host("c1", "10.0.0.1", never), "10.0.0.1");
        assert_eq!(
            connect_host("db2.example", "10.0.0.1", always),
            "db2.example"
        );
        assert_eq!(connect_host("10.0.0.7", "10.0.0.1", never), "10.0.0.7");
        assert_eq!(connect_host("::1", "10.0.0.1", never), "::1");
        assert_eq!(connect_host("localhost", "10.0.0.1", never), "localhost");

        let free = |_: &str| false;
        assert_eq!(node_name("c1", "127.0.0.1:3307", free), "c1");
        assert_eq!(
            node_name("127.0.0.1", "127.0.0.1:3307", free),
            "127.0.0.1:3307"
        );
        assert_eq!(
            node_name("LocalHost", "localhost:3307", free),
            "localhost:3307"
        );
        assert_eq!(
            node_name("c1", "127.0.0.1:3307", |n| n == "c1"),
            "127.0.0.1:3307"
        );
    }

    /// A reported replica whose name does not resolve (as the poller found).
    fn host(name: &str, port: u16, server_id: u32) -> ReportedReplica {
        ReportedReplica {
            host: ReplicaHost {
                server_id,
                host: name.to_owned(),
                port,
                source_id: 1,
                uuid: None,
            },
            resolves: false,
        }
    }

    fn store(configured: &[(&str, u16)]) -> Store {
        let endpoint = crate::store::testkit::local_endpoint;
        let nodes: Vec<(String, Endpoint, Role)> = configured
            .iter()
            .enumerate()
            .map(|(i, (name, port))| {
                let role = if i == 0 { Role::Primary } else { Role::Replica };
                ((*name).to_owned(), endpoint(*port), role)
            })
            .collect();
        let settings = StoreSettings {
            discovery: true,
            template: Some(endpoint(configured[0].1)),
            ..crate::store::testkit::store_settings()
        };
        Store::new(settings, &nodes)
    }

    fn found(store: &mut Store, hosts: &[ReportedReplica]) -> Vec<(String, String)> {
        store
            .discover(hosts)
            .into_iter()
            .map(|d| (d.name, d.endpoint.address()))
            .collect()
    }

    #[test]
    fn a_replica_reporting_a_name_is_named_by_it_and_reached_at_the_primarys_host() {
        let mut s = store(&[("primary", 13306), ("r1", 13307)]);
        // A name that does not resolve: the primary's host is used with its port.
        let c1 = host("c1.invalid", 13309, 4);
        let by_ip = host("127.0.0.1", 13310, 5);
        assert_eq!(
            found(&mut s, &[c1.clone(), by_ip.clone(), host("", 13311, 6)]),
            [
                ("c1.invalid".to_owned(), "127.0.0.1:13309".to_owned()),
                ("127.0.0.1:13310".to_owned(), "127.0.0.1:13310".to_owned()),
            ],
            "an empty host is not reachable; an IP names the node by its address"
        );
        // Reported again: already polled, under its name or its address.
        assert!(found(&mut s, &[c1, by_ip]).is_empty());
        // r1 itself reports a name now: it is polled already, at that address.
        assert!(found(&mut s, &[host("r1", 13307, 2)]).is_empty());
        // A name that resolves is connected to by that name.
        let mut db3 = host("db3.example", 13312, 7);
        db3.resolves = true;
        assert_eq!(
            found(&mut s, &[db3]),
            [("db3.example".to_owned(), "db3.example:13312".to_owned())]
        );
    }

    #[test]
    fn a_name_another_node_has_falls_back_to_the_address() {
        let mut s = store(&[("primary", 13306), ("c1.invalid", 13307)]);
        assert_eq!(
            found(&mut s, &[host("c1.invalid", 13309, 4)]),
            [("127.0.0.1:13309".to_owned(), "127.0.0.1:13309".to_owned())]
        );
    }

    #[test]
    fn a_node_known_by_its_server_id_is_not_discovered_twice() {
        let mut s = store(&[("primary", 13306), ("db2", 13307)]);
        let identity = Identity {
            server_id: 2,
            log_bin: true,
            server_uuid: None,
            gtid_mode: None,
            gtid_domain_id: Some(0),
            gtid_strict_mode: Some(true),
        };
        s.apply(PollEvent::Connected {
            node: "db2".to_owned(),
            flavor: crate::mysql::Flavor::detect("10.11.19-MariaDB", "").unwrap(),
            identity,
        });
        // The same server reported under a name and port the config does not use.
        assert!(found(&mut s, &[host("db2.invalid", 3306, 2)]).is_empty());
    }
}
