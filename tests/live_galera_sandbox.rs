//! The Galera sandbox (`rwtop sandbox up --galera N`) on real galera-4 members: one cluster of
//! three, Synced, with an async replica of `n1` that follows writes made on any member; a
//! killed member rejoins, and a cluster whose members were all killed comes back.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::TestSandbox;
use rwtop::mysql::RawRow;
use rwtop::sandbox::{CLUSTER_NAME, layout};

const MEMBERS: [&str; 3] = ["n1", "n2", "n3"];
const DEADLINE: Duration = Duration::from_secs(120);

/// `SHOW STATUS LIKE 'wsrep%'` of `node`, by name.
fn wsrep(t: &TestSandbox, node: &str, name: &str) -> String {
    let rows: Vec<RawRow> = t.admin(node, &format!("SHOW STATUS LIKE '{name}'"));
    rows.first()
        .and_then(|r| r.string(&["Value"]).ok())
        .unwrap_or_else(|| panic!("no {name} on {node}: {rows:?}"))
}

/// Waits until `node` has the row `id` of `rwtop.g`.
fn until_row(t: &TestSandbox, node: &str, id: u64) {
    let start = Instant::now();
    loop {
        let rows = t.admin(node, &format!("SELECT id FROM rwtop.g WHERE id = {id}"));
        if !rows.is_empty() {
            return;
        }
        assert!(start.elapsed() < DEADLINE, "{node} never got row {id}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every member Synced in one primary component of three, one cluster state.
fn one_cluster_of_three(t: &TestSandbox) {
    let ports: BTreeSet<String> = MEMBERS
        .iter()
        .map(|m| format!("127.0.0.1:{}", t.sandbox().port(m).unwrap()))
        .collect();
    let mut states = BTreeSet::new();
    for member in MEMBERS {
        assert_eq!(wsrep(t, member, "wsrep_local_state_comment"), "Synced");
        assert_eq!(wsrep(t, member, "wsrep_cluster_status"), "Primary");
        assert_eq!(wsrep(t, member, "wsrep_cluster_size"), "3");
        assert_eq!(wsrep(t, member, "wsrep_ready"), "ON");
        states.insert(wsrep(t, member, "wsrep_cluster_state_uuid"));
        // Each member lists the others' SQL ports: what finds the cluster from one member.
        let listed: BTreeSet<String> = wsrep(t, member, "wsrep_incoming_addresses")
            .split(',')
            .map(str::to_owned)
            .collect();
        assert_eq!(listed, ports, "{member}");
    }
    assert_eq!(states.len(), 1, "one cluster state: {states:?}");
}

#[test]
fn a_galera_sandbox_is_one_cluster_with_a_replica_that_follows_every_member() {
    let mut t = TestSandbox::start_galera(3, 1);
    one_cluster_of_three(&t);
    let name = t.admin("n2", "SELECT @@wsrep_cluster_name AS c");
    assert_eq!(name[0].string(&["c"]).unwrap(), CLUSTER_NAME);

    // Writes on any member reach the others and, through n1's binary log, the replica.
    t.admin(
        "n2",
        "CREATE TABLE rwtop.g (id BIGINT PRIMARY KEY, at VARCHAR(8)); \
         INSERT INTO rwtop.g VALUES (1, 'n2')",
    );
    // In the cluster's domain.
    let gtid = t.admin(
        "n3",
        "INSERT INTO rwtop.g VALUES (2, 'n3'); SELECT @@last_gtid AS g",
    );
    let gtid = gtid[0].string(&["g"]).unwrap();
    assert!(gtid.starts_with("100-"), "{gtid}");
    for node in ["n1", "n2", "n3", "r1"] {
        until_row(&t, node, 2);
    }
    let r1 = t.admin("r1", "SHOW ALL SLAVES STATUS");
    assert_eq!(
        r1[0].string(&["Master_Port"]).unwrap(),
        t.sandbox().port("n1").unwrap().to_string()
    );

    // The printed config watches the cluster through n1 alone: one heartbeat writer.
    let config = std::fs::read_to_string(layout::config_file(t.sandbox().dir())).unwrap();
    assert_eq!(config.matches("[primary]").count(), 1, "{config}");
    assert!(config.contains("name = \"n1\""), "{config}");
    for member in ["n2", "n3"] {
        assert!(
            !config.contains(&format!("name = \"{member}\"")),
            "{config}"
        );
        assert!(
            config.contains(&format!("# {member}: a member")),
            "{config}"
        );
    }

    // A killed member rejoins the running ones and catches up on what it missed.
    let pid = t.sandbox().pid("n3").expect("n3 runs");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let start = Instant::now();
    while wsrep(&t, "n1", "wsrep_cluster_size") != "2" {
        assert!(start.elapsed() < DEADLINE, "n1 never saw n3 leave");
        std::thread::sleep(Duration::from_millis(100));
    }
    t.admin("n1", "INSERT INTO rwtop.g VALUES (3, 'n1')");
    t.restart_stopped();
    one_cluster_of_three(&t);
    until_row(&t, "n3", 3);

    // Every member killed: the first bootstraps again, the others join it.
    for member in MEMBERS {
        let pid = t.sandbox().pid(member).expect("running");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    }
    let start = Instant::now();
    while MEMBERS.iter().any(|m| t.sandbox().pid(m).is_some()) {
        assert!(start.elapsed() < DEADLINE, "members still running");
        std::thread::sleep(Duration::from_millis(50));
    }
    t.restart_stopped();
    one_cluster_of_three(&t);
    t.admin("n2", "INSERT INTO rwtop.g VALUES (4, 'n2')");
    for node in ["n1", "n3", "r1"] {
        until_row(&t, node, 4);
    }
}
