//! A replica with parallel appliers: the detail pane's two lines, in full at 120×40 and shorter
//! in the 80×24 pane, with the GTID line still below them. No recording holds appliers yet, so
//! the snapshot is built with `rwtop::store::testkit`.

use std::time::Duration;

use insta::assert_snapshot;
use rwtop::store::testkit::Topo;
use rwtop::store::{ApplierGroups, ApplierView, BusyWorkers, Snapshot};

use super::{assert_has, draw, full_screen, pane_words, selecting};

/// r1 with 4 optimistic workers, 3 of them holding a transaction (2 waiting on commit order) at a
/// scan 1.2 s old; r2 applies with one thread and shows no applier line.
fn parallel_replica() -> Snapshot {
    let mut topo = Topo::new();
    topo.replica_mut("r1", |r| {
        r.appliers = ApplierView {
            workers: Some(4),
            mode: Some("optimistic".to_owned()),
            preserve_commit_order: None,
            busy: Some(BusyWorkers {
                workers: 4,
                busy: 3,
                commit_order_waits: Some(2),
                age: Duration::from_millis(1_200),
                shared: false,
            }),
            retried_transactions: Some(41),
            retries_per_second: Some(0.3),
            groups: ApplierGroups {
                ddl: Some(14),
                transactional: Some(2_431),
                non_transactional: Some(0),
            },
            row_events: Vec::new(),
        };
    });
    topo.replica_mut("r2", |r| r.appliers.workers = Some(0));
    topo.snapshot
}

#[test]
fn a_parallel_replica_shows_its_workers_in_the_detail_pane() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    let _beside = settings.bind_to_scope();
    let snapshot = parallel_replica();
    for ((w, h), workers) in [
        (
            (120, 40),
            "workers 4 (optimistic): 3 busy, 2 waiting on commit order (1.2s ago)",
        ),
        ((80, 24), "workers 4: 3 busy, 2 commit wait (1.2s ago)"),
    ] {
        let backend = draw(&snapshot, &selecting(&snapshot, "r1"), full_screen, w, h);
        assert_snapshot!(format!("appliers_r1_{w}x{h}"), &backend);
        let detail = pane_words(&backend, " r1 ← db1 ");
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_has(
            &detail,
            &[
                &words(workers),
                "retries 0.3/s",
                "ddl 14 trx 2.4k non-trx 0",
                "gtid slave=binlog=current",
            ],
        );
        let serial = draw(&snapshot, &selecting(&snapshot, "r2"), full_screen, w, h);
        assert!(!pane_words(&serial, " r2 ← db1 ").contains("workers"));
    }
}

/// r2 (one applier thread) lagging on an `UPDATE` of a table without a key: the detail pane
/// names the table and why it is slow, wrapped whole in the 80×24 pane.
#[test]
fn a_replica_applying_row_events_on_a_keyless_table_names_it() {
    use rwtop::mysql::{NamedBy, RowApply, RowEvent};
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    let _beside = settings.bind_to_scope();
    let mut topo = Topo::new();
    topo.replica_mut("r2", |r| {
        r.appliers.row_events = vec![RowApply {
            thread_id: 12,
            event: RowEvent::Update,
            schema: Some("shop".to_owned()),
            table: Some("events".to_owned()),
            named_by: Some(NamedBy::Statement),
            has_key: Some(false),
        }];
    });
    let snapshot = topo.snapshot;
    for (w, h) in [(120, 40), (80, 24)] {
        let backend = draw(&snapshot, &selecting(&snapshot, "r2"), full_screen, w, h);
        assert_snapshot!(format!("row_events_keyless_r2_{w}x{h}"), &backend);
        let detail = pane_words(&backend, " r2 ← db1 ");
        assert_has(
            &detail,
            &[
                "applying row events on shop.events (no primary or unique key: each row event \
               scans the table)",
            ],
        );
    }
}
