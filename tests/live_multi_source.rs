//! The sandbox's multi-source layout on real servers: two primaries in GTID domains 0 and 1 feed
//! an aggregator on two channels, and one channel can stop while the other keeps running.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{TestSandbox, eventually};
use rwtop::gtid::GtidList;
use rwtop::mysql::{RawRow, ThreadControl};
use rwtop::sandbox::{AGGREGATOR, SECOND_CHANNEL, SECOND_PRIMARY};

const DEADLINE: Duration = Duration::from_secs(30);

/// One channel as `SHOW ALL SLAVES STATUS` prints it on the aggregator: IO, SQL, `Gtid_IO_Pos`.
type Row = (String, String, String);

/// The aggregator's channels by name, read with the server's own statement (not the sandbox's
/// parser): `Slave_IO_Running`, `Slave_SQL_Running`, `Gtid_IO_Pos`.
fn channels(t: &TestSandbox) -> BTreeMap<String, Row> {
    let text = |row: &RawRow, column: &str| {
        row.text(&[column])
            .unwrap_or_else(|e| panic!("{column}: {e}"))
            .unwrap_or_default()
            .to_owned()
    };
    t.admin(AGGREGATOR, "SHOW ALL SLAVES STATUS")
        .iter()
        .map(|row| {
            let errors = (text(row, "Last_IO_Errno"), text(row, "Last_SQL_Errno"));
            assert_eq!(
                errors,
                ("0".to_owned(), "0".to_owned()),
                "{:?}: {} {}",
                text(row, "Connection_name"),
                text(row, "Last_IO_Error"),
                text(row, "Last_SQL_Error")
            );
            (
                text(row, "Connection_name"),
                (
                    text(row, "Slave_IO_Running"),
                    text(row, "Slave_SQL_Running"),
                    text(row, "Gtid_IO_Pos"),
                ),
            )
        })
        .collect()
}

fn yes_yes(row: Option<&Row>) -> bool {
    row.is_some_and(|(io, sql, _)| io == "Yes" && sql == "Yes")
}

fn variable(t: &TestSandbox, node: &str, name: &str) -> String {
    let rows = t.admin(node, &format!("SELECT @@global.{name} AS v"));
    rows[0].text(&["v"]).unwrap().unwrap_or_default().to_owned()
}

/// Writes row `id` in a table of rwtop's schema on `node`, creating the table on first use.
fn write(t: &TestSandbox, node: &str, table: &str, id: u32) {
    t.admin(
        node,
        &format!(
            "CREATE TABLE IF NOT EXISTS rwtop.{table} (id INT PRIMARY KEY); \
             INSERT INTO rwtop.{table} VALUES ({id})"
        ),
    );
}

/// Whether the aggregator has row `id` of `table` (a table it does not have yet: no).
fn has_row(t: &TestSandbox, table: &str, id: u32) -> bool {
    t.sandbox()
        .admin(
            AGGREGATOR,
            &format!("SELECT COUNT(*) AS n FROM rwtop.{table} WHERE id = {id}"),
        )
        .is_ok_and(|rows| rows[0].text(&["n"]).ok().flatten() == Some("1"))
}

async fn arrives(t: &TestSandbox, table: &str, id: u32) {
    eventually(
        &format!("row {id} of {table} on {AGGREGATOR}"),
        DEADLINE,
        async || has_row(t, table, id).then_some(()),
    )
    .await;
}

fn domains(list: &str) -> Vec<u32> {
    GtidList::parse(list)
        .unwrap_or_else(|e| panic!("{list:?}: {e}"))
        .domains()
        .collect()
}

#[tokio::test]
async fn live_two_primaries_feed_the_aggregator_and_one_channel_stops_alone() {
    let t = TestSandbox::start_multi_source(1);
    // Two channels, both running, right after `up`.
    let rows = channels(&t);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        ["", SECOND_CHANNEL],
        "{rows:?}"
    );
    assert!(rows.values().all(|r| yes_yes(Some(r))), "{rows:?}");
    assert_eq!(variable(&t, SECOND_PRIMARY, "gtid_domain_id"), "1");
    assert_eq!(variable(&t, "primary", "gtid_domain_id"), "0");

    // A write on each primary reaches the aggregator, each on its own channel.
    write(&t, "primary", "t", 1);
    write(&t, SECOND_PRIMARY, "t2", 1);
    arrives(&t, "t", 1).await;
    arrives(&t, "t2", 1).await;
    // Nothing else writes: the aggregator holds each primary's position in its own domain.
    let heads = [
        variable(&t, "primary", "gtid_binlog_pos"),
        variable(&t, SECOND_PRIMARY, "gtid_binlog_pos"),
    ];
    assert_eq!(domains(&heads[0]), [0]);
    assert_eq!(domains(&heads[1]), [1]);
    eventually("agg's gtid_slave_pos at both heads", DEADLINE, async || {
        let mut pos: Vec<String> = variable(&t, AGGREGATOR, "gtid_slave_pos")
            .split(',')
            .map(str::to_owned)
            .collect();
        pos.sort();
        (pos == heads).then_some(())
    })
    .await;

    // The second channel's link stalls: the default channel keeps applying the first primary's
    // writes while the second primary's wait, and both channels still say Yes/Yes.
    t.channel_relay(AGGREGATOR, SECOND_CHANNEL).stall();
    write(&t, SECOND_PRIMARY, "t2", 2);
    for id in [2, 3] {
        write(&t, "primary", "t", id);
        arrives(&t, "t", id).await;
    }
    assert!(!has_row(&t, "t2", 2), "p2's write crossed a stalled link");
    let rows = channels(&t);
    assert!(yes_yes(rows.get("")), "{rows:?}");
    assert!(yes_yes(rows.get(SECOND_CHANNEL)), "{rows:?}");
    t.channel_relay(AGGREGATOR, SECOND_CHANNEL).resume();
    arrives(&t, "t2", 2).await;

    // Stopping the second channel's SQL thread (the flavor's statement, through the sandbox)
    // stops that channel only: its IO thread still receives, nothing of it is applied.
    t.sandbox()
        .channel_threads(AGGREGATOR, SECOND_CHANNEL, ThreadControl::StopSql)
        .unwrap();
    write(&t, SECOND_PRIMARY, "t2", 3);
    let p2_head = variable(&t, SECOND_PRIMARY, "gtid_binlog_pos");
    eventually(
        "p2's write received on channel 'p2'",
        DEADLINE,
        async || {
            let rows = channels(&t);
            let (io, sql, received) = rows.get(SECOND_CHANNEL)?;
            assert_eq!((io.as_str(), sql.as_str()), ("Yes", "No"), "{rows:?}");
            assert!(yes_yes(rows.get("")), "{rows:?}");
            // A channel's `Gtid_IO_Pos` may list other domains too (it starts from gtid_slave_pos).
            let received = GtidList::parse(received).ok()?;
            (received.get(1) == GtidList::parse(&p2_head).unwrap().get(1)).then_some(())
        },
    )
    .await;
    write(&t, "primary", "t", 4);
    arrives(&t, "t", 4).await;
    assert!(!has_row(&t, "t2", 3), "applied with the SQL thread stopped");
    t.sandbox()
        .channel_threads(AGGREGATOR, SECOND_CHANNEL, ThreadControl::StartSql)
        .unwrap();
    arrives(&t, "t2", 3).await;
    let rows = channels(&t);
    assert!(rows.values().all(|r| yes_yes(Some(r))), "{rows:?}");
    t.sandbox().wait_replicating(DEADLINE).unwrap();
}

/// `Master_Port` of one of the aggregator's channels.
fn source_port(t: &TestSandbox, channel: &str) -> u16 {
    t.admin(AGGREGATOR, "SHOW ALL SLAVES STATUS")
        .iter()
        .find(|row| row.text(&["Connection_name"]).ok().flatten() == Some(channel))
        .unwrap_or_else(|| panic!("no channel {channel:?}"))
        .u16(&["Master_Port"])
        .unwrap()
}

/// `up` again re-points the named channel too: through a new relay, or straight to `p2`.
#[tokio::test]
async fn live_up_again_repoints_the_named_channel() {
    use rwtop::sandbox::{Ports, Sandbox, SandboxSpec};
    let t = TestSandbox::start_multi_source(1);
    let p2_port = t.sandbox().port(SECOND_PRIMARY).unwrap();
    let first_relay = t.channel_relay(AGGREGATOR, SECOND_CHANNEL).port();
    assert_eq!(source_port(&t, SECOND_CHANNEL), first_relay);
    let spec = SandboxSpec {
        replicas: 1,
        ports: Ports::Free,
        multi_source: true,
        ..SandboxSpec::new(t.sandbox().dir())
    };
    for (id, relay) in [(1, true), (2, false)] {
        let again = Sandbox::up(&SandboxSpec {
            relay,
            ..spec.clone()
        })
        .unwrap_or_else(|e| panic!("up again: {e}"));
        let want = if relay {
            let port = again
                .channel_relay(AGGREGATOR, SECOND_CHANNEL)
                .expect("a new relay")
                .port();
            assert_ne!(port, first_relay);
            port
        } else {
            assert!(again.channel_relay(AGGREGATOR, SECOND_CHANNEL).is_none());
            p2_port
        };
        assert_eq!(source_port(&t, SECOND_CHANNEL), want, "relay: {relay}");
        // Still replicating through the new link.
        write(&t, SECOND_PRIMARY, "t2", id);
        arrives(&t, "t2", id).await;
        drop(again); // not ephemeral: leaves the servers to `t`
    }
}
