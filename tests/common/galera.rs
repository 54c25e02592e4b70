//! What the Galera tests share: a member's lag as the snapshot shows it, a cluster healthy
//! enough to start a fault from, and SQL held on a member's session in a thread of its own (a
//! read lock, a stream of writes) while the test watches.

use std::time::Duration;

use rwtop::store::Snapshot;
use rwtop::store::lag::Lag;

use super::TestSandbox;

/// A synced member's lag behind the writer: the bound for a healthy member.
pub const SYNCED_LAG: Duration = Duration::from_millis(500);

/// A member's lag behind its cluster's writer, as the snapshot shows it.
pub fn lag(s: &Snapshot, name: &str) -> Option<Lag> {
    Some(s.node(name)?.galera()?.lag.clone())
}

/// A member's lag when it is exact.
pub fn exact(s: &Snapshot, name: &str) -> Option<Duration> {
    lag(s, name)?.exact()
}

/// The first cluster with every member it found in the primary component, no split, and each
/// member's lag exact and under [`SYNCED_LAG`].
pub fn healthy(s: &Snapshot) -> Option<()> {
    let c = s.clusters.first()?;
    let all_in = c.in_primary.len() == c.expected_size && !c.split;
    let caught_up = c
        .members
        .iter()
        .all(|m| exact(s, m).is_some_and(|l| l < SYNCED_LAG));
    (all_in && caught_up).then_some(())
}

/// Runs `sql` on `node` in a thread of its own, on one session (a read lock held, a stream of
/// writes); a failure panics in that thread, and `join` reports it.
pub fn admin_in_thread(t: &TestSandbox, node: &str, sql: String) -> std::thread::JoinHandle<()> {
    let sandbox = rwtop::sandbox::Sandbox::open(t.sandbox().dir()).unwrap();
    let node = node.to_owned();
    std::thread::spawn(move || {
        sandbox
            .admin(&node, &sql)
            .unwrap_or_else(|e| panic!("{node}: {e}"));
    })
}

/// Each node of an engine's spec with its role.
pub fn roles(spec: &rwtop::engine::EngineSpec) -> Vec<(&str, rwtop::store::Role)> {
    spec.nodes
        .iter()
        .map(|(n, _, r)| (n.as_str(), *r))
        .collect()
}

/// The roles of a three-member cluster named by n1 with an async replica r1 of it: n1 the one
/// heartbeat root, n2 and n3 members.
pub const ONE_WRITER: [(&str, rwtop::store::Role); 4] = [
    ("n1", rwtop::store::Role::Primary),
    ("n2", rwtop::store::Role::Member),
    ("n3", rwtop::store::Role::Member),
    ("r1", rwtop::store::Role::Replica),
];

/// A backup's read lock on n3 held `hold_s` seconds while n1 takes `writes` rows, 50 a second
/// (into `rwtop.g`, created here): the lock's thread and the writes' thread, to join.
pub fn read_lock_under_writes(
    t: &TestSandbox,
    hold_s: u32,
    writes: usize,
) -> (std::thread::JoinHandle<()>, std::thread::JoinHandle<()>) {
    t.admin(
        "n1",
        "CREATE TABLE rwtop.g (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
    );
    let lock = admin_in_thread(
        t,
        "n3",
        format!("FLUSH TABLES WITH READ LOCK; SELECT SLEEP({hold_s}) AS s; UNLOCK TABLES"),
    );
    let load = admin_in_thread(
        t,
        "n1",
        "INSERT INTO rwtop.g (v) VALUES (1); DO SLEEP(0.02);".repeat(writes),
    );
    (lock, load)
}
