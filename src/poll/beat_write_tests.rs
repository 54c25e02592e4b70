//! The heartbeat writer's decisions on one connection, with no server: its statements, when it
//! tries for the lock, what the lock's answer and the own-table gate make of it, which sequence
//! number it writes next, when a watched row moved, and what a refused write means.

use super::*;

#[test]
fn writer_ids_are_quoted_not_trusted() {
    assert_eq!(
        heartbeat_read_sql(&["a'b\\c".to_owned()]),
        "SELECT writer_id, seq, TIMESTAMPDIFF(MICROSECOND, ts, UTC_TIMESTAMP(6)) AS age_us \
         FROM rwtop.heartbeat WHERE writer_id = 'a''b\\\\c'"
    );
    assert!(
        heartbeat_read_sql(&["p1".to_owned(), "p2".to_owned()])
            .ends_with("WHERE writer_id IN ('p1', 'p2')")
    );
    assert_eq!(
        lock_sql("a'b"),
        "SELECT GET_LOCK('rwtop-hb-a''b', 0) AS got, IS_USED_LOCK('rwtop-hb-a''b') AS holder, \
         CONNECTION_ID() AS me"
    );
    assert_eq!(
        write_sql("a'b", 42),
        "INSERT INTO rwtop.heartbeat (writer_id, seq, ts) VALUES ('a''b', 42, \
         UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE seq = VALUES(seq), ts = VALUES(ts)"
    );
}

fn serving(last_seen: Option<u64>) -> (Serving, Instant) {
    let since = Instant::now();
    (Serving::new(Run::after(None), last_seen, since), since)
}

fn got(value: Option<&str>) -> Vec<RawRow> {
    vec![RawRow::new(vec![(
        "got".to_owned(),
        value.map(str::to_owned),
    )])]
}

/// An observer tries for the lock at once and every five seconds after, each try counted from
/// when it was made; a writer holding it never asks again.
#[test]
fn an_observer_tries_for_the_lock_every_few_seconds_and_a_holder_never() {
    let (mut s, start) = serving(None);
    let at = |ms: u64| start + Duration::from_millis(ms);
    assert!(s.lock_due(at(0)));
    assert_eq!(s.locked(&got(Some("0"))), WriterState::Observing);
    assert!(!s.lock_due(at(1_000)));
    assert!(!s.lock_due(at(4_999)));
    assert!(s.lock_due(at(5_000)));
    assert!(!s.lock_due(at(9_999)), "counted from the last try");
    assert!(s.lock_due(at(10_000)));
    assert_eq!(s.locked(&got(Some("1"))), WriterState::Writing);
    assert!(s.writing);
    assert!(!s.lock_due(at(60_000)), "the holder keeps it");
}

/// Only a `1` is the lock: `0` (held elsewhere), `NULL` (an error) and an unreadable or empty
/// answer leave the connection watching.
#[test]
fn only_a_granted_lock_makes_a_writer() {
    for answer in [got(Some("0")), got(None), got(Some("x")), Vec::new()] {
        let (mut s, _) = serving(None);
        assert_eq!(s.locked(&answer), WriterState::Observing, "{answer:?}");
        assert!(!s.writing);
    }
}

/// The first write waits for every node's copy of the table to have been read, up to ten
/// seconds; a copy that would stop a channel holds the writes back, said once, until it is
/// fixed, which is said too.
#[test]
fn the_gate_holds_the_first_write_and_every_write_over_an_unsafe_copy() {
    let (mut s, since) = serving(None);
    let at = |s: u64| since + Duration::from_secs(s);
    let closed = Gated {
        open: false,
        report: None,
    };
    let open = Gated {
        open: true,
        report: None,
    };
    assert_eq!(s.gate(TableGate::Wait, "db1", at(0)), closed);
    assert_eq!(s.gate(TableGate::Wait, "db1", at(9)), closed);
    assert_eq!(
        s.gate(TableGate::Wait, "db1", at(10)),
        open,
        "not waited for"
    );
    assert_eq!(s.gate(TableGate::Open, "db1", at(11)), open);

    let unsafe_copy = || TableGate::Unsafe("r2's rwtop.heartbeat has no primary key".to_owned());
    let gated = s.gate(unsafe_copy(), "db1", at(12));
    assert!(!gated.open);
    let Some(WriterState::Refused { reason }) = gated.report else {
        panic!("said: {gated:?}");
    };
    assert!(
        reason.starts_with("r2's rwtop.heartbeat has no primary key: "),
        "{reason}"
    );
    assert!(reason.contains("no heartbeat on db1"), "{reason}");
    assert_eq!(s.gate(unsafe_copy(), "db1", at(13)), closed, "said once");
    let fixed = s.gate(TableGate::Open, "db1", at(14));
    assert_eq!(
        fixed,
        Gated {
            open: true,
            report: Some(WriterState::Writing),
        }
    );
    assert_eq!(s.gate(TableGate::Open, "db1", at(15)), open);
}

/// A writer writes one past the newest sequence number written or seen (the row's on a new
/// connection, so a second run goes on from the first); an observer acknowledges a watched
/// row's number once, when it moved.
#[test]
fn sequence_numbers_go_on_from_the_row_and_a_watched_row_counts_when_it_moves() {
    let (mut s, _) = serving(None);
    assert_eq!(s.next_seq(), 1, "no row yet");
    let (mut on, _) = serving(Some(41));
    assert_eq!(on.next_seq(), 42);
    on.acked(42, None);
    assert_eq!(on.next_seq(), 43);

    assert_eq!(s.moved(None), None, "still no row");
    assert_eq!(s.moved(Some(7)), Some(7));
    s.acked(7, None);
    assert_eq!(s.moved(Some(7)), None, "seen already");
    assert_eq!(s.moved(None), None, "a row gone is no heartbeat");
    assert_eq!(s.moved(Some(8)), Some(8));
}

/// Each write's GTID follows the session's `@@last_gtid`: a heartbeat's own GTID when the write
/// got one, and a run's mark that moves when a run starts or the answer stops moving on.
#[test]
fn an_acknowledgement_carries_the_writes_gtid_and_the_runs_mark() {
    let gtid = |t: &str| DomainGtid::parse(t).expect("a GTID");
    let since = Instant::now();
    // The session's last GTID before the first heartbeat: the table's creation.
    let mut s = Serving::new(Run::after(Some(gtid("0-1-4"))), None, since);
    assert_eq!(
        s.acked(1, Some(gtid("0-1-5"))),
        (Some(gtid("0-1-5")), Some(Some(gtid("0-1-5")))),
        "the run starts"
    );
    assert_eq!(s.last_seen, Some(1));
    assert_eq!(
        s.acked(2, Some(gtid("0-1-6"))),
        (Some(gtid("0-1-6")), None),
        "the run goes on"
    );
    assert_eq!(
        s.acked(3, Some(gtid("0-1-6"))),
        (None, Some(None)),
        "not binary-logged: no GTID, and no run to read by"
    );
}

/// Only the server's `read_only` refusal is a refusal; any other failure is the connection's.
#[test]
fn a_write_refused_for_read_only_is_a_refusal_not_a_failure() {
    let server = |code| SqlError::Server {
        addr: "db1:3306".to_owned(),
        sql: write_sql("w", 1),
        code,
        message: "refused".to_owned(),
    };
    assert!(refused_by_read_only(&server(1290)));
    assert!(!refused_by_read_only(&server(1142)));
    assert!(!refused_by_read_only(&SqlError::Closed {
        addr: "db1:3306".to_owned(),
    }));
}

/// The lock held by the writer's own earlier session (its write stuck in a commit the server
/// has not finished, as while a Galera cluster evicts a silent member) is not another rwtop:
/// the writer says it waits for its own session and tries again every tick, and takes the lock
/// the moment it is free. Held by anyone else, it watches and tries every few seconds.
#[test]
fn its_own_stuck_session_is_waited_out_every_tick_and_another_writer_is_watched() {
    let answer = |got: &str, holder: &str, me: &str| {
        vec![RawRow::new(vec![
            ("got".to_owned(), Some(got.to_owned())),
            ("holder".to_owned(), Some(holder.to_owned())),
            ("me".to_owned(), Some(me.to_owned())),
        ])]
    };
    let (mut s, start) = serving(None);
    s.held_before = Some(7);
    let at = |ms: u64| start + Duration::from_millis(ms);
    assert!(s.lock_due(at(0)));
    let state = s.locked(&answer("0", "7", "9"));
    assert!(
        matches!(&state, WriterState::Failing { cause } if cause.contains("previous session")),
        "{state:?}"
    );
    assert!(s.lock_due(at(250)), "tried again at the next tick");
    assert_eq!(s.locked(&answer("1", "9", "9")), WriterState::Writing);
    assert_eq!(s.held_by_me, Some(9));
    // Held by a session that is not the writer's own: another rwtop.
    let (mut other, start) = serving(None);
    other.held_before = Some(7);
    assert!(other.lock_due(start));
    assert_eq!(other.locked(&answer("0", "8", "9")), WriterState::Observing);
    assert!(!other.lock_due(start + Duration::from_millis(250)));
    assert_eq!(other.held_by_me, None);
}
