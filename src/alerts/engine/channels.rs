//! Channel rules through the store: the recorded two-connection status of a real `MariaDB`
//! replica (`docs/design.md`, "Channels and roots"), whose second connection cannot connect, is
//! alerted on that channel and no other.

use std::time::{Duration, Instant};

use crate::alerts::{AlertEngine, AlertKind, AlertSettings};
use crate::mysql::ReplicaStatus;
use crate::poll::{ConnState, PollEvent};
use crate::store::testkit::{fixture_rows, local_endpoint, replica_sample, store_settings};
use crate::store::{Role, Store};

#[test]
fn a_second_connection_that_cannot_connect_is_alerted_on_its_own_channel() {
    let rows = fixture_rows("mariadb-10.11/show_all_slaves_status__second_connection_refused.txt");
    let statuses: Vec<ReplicaStatus> = rows
        .iter()
        .map(|row| ReplicaStatus::from_row(row).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    // The fixture's default connection reads from 127.0.0.1:26306: the primary here.
    let nodes = [
        ("db1".to_owned(), local_endpoint(26_306), Role::Primary),
        ("r2".to_owned(), local_endpoint(26_308), Role::Replica),
    ];
    let mut store = Store::new(store_settings(), &nodes);
    for node in ["db1", "r2"] {
        store.apply(PollEvent::Conn {
            node: node.to_owned(),
            state: ConnState::Up,
        });
    }
    let mut engine = AlertEngine::new(AlertSettings::default());
    let t0 = Instant::now();
    let mut view = None;
    for step in 0..3u64 {
        let at = t0 + Duration::from_secs(step);
        store.apply(PollEvent::Sample {
            node: "r2".to_owned(),
            sample: Box::new(replica_sample(at, statuses.clone())),
        });
        let mut snapshot = store.snapshot(at + Duration::from_millis(100));
        snapshot.uptime = Duration::from_secs(step + 1);
        view = Some(engine.evaluate(&snapshot));
        // Both connections are kept, in the server's order, each with its own source.
        let r2 = snapshot.node("r2").expect("r2");
        let channels: Vec<_> = r2
            .channels
            .iter()
            .map(|c| (c.channel.as_str(), c.source.as_deref()))
            .collect();
        assert_eq!(channels, [("", Some("db1")), ("extra", None)]);
    }
    let view = view.expect("judged");
    let on_extra: Vec<_> = view
        .active
        .iter()
        .filter(|a| a.node.as_deref() == Some("r2") && a.channel.as_deref() == Some("extra"))
        .map(|a| a.kind)
        .collect();
    assert!(
        on_extra.contains(&AlertKind::IoThreadStopped),
        "{:#?}",
        view.active
    );
    let io = view
        .active
        .iter()
        .find(|a| a.kind == AlertKind::IoThreadStopped)
        .expect("raised");
    assert_eq!(io.evidence[0], ("channel".to_owned(), "extra".to_owned()));
    assert!(io.cause.contains("2003"), "{}", io.cause);
    // The default connection runs: nothing on it.
    let on_default: Vec<_> = view.active.iter().filter(|a| a.channel.is_none()).collect();
    assert!(on_default.is_empty(), "{on_default:#?}");
}
