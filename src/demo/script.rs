//! The demo's script: a light write load and a looping timeline of real incidents, each narrated
//! in one line for the TUI's footer.
//!
//! Every incident is made with real SQL or a real stalled link, never simulated data, so what the
//! newcomer sees is exactly what rwtop would show on a production topology in the same trouble.
//!
//! Why the shape: the load, the background table build and the timeline run as three futures in
//! one task (`tokio::join!`), so stopping the script is stopping one future; administrative SQL
//! goes through `spawn_blocking` because [`crate::sandbox::Sandbox::admin`] runs the command-line client and waits
//! for it, which must not block the runtime that also draws the TUI.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::channel;
use super::director::Director;
use super::stop::{Stop, Stopped};
use crate::mysql::{Endpoint, NodeConn, Timeouts};
use crate::sandbox::{AGGREGATOR, SECOND_PRIMARY, SandboxError};
use crate::units;

/// The big table the ALTER incident rebuilds, and the load's table (both in rwtop's schema, where
/// the app user has its grants).
pub(crate) const BIG_TABLE: &str = "rwtop.demo_big";
pub(crate) const LOAD_TABLE: &str = "rwtop.demo_load";
/// The load's table on the second primary: its own name, because agg receives both primaries'
/// tables and one name created twice would stop a channel.
pub(crate) const LOAD_TABLE_P2: &str = "rwtop.demo_load_p2";

/// How often the script checks whether the replicas caught up after the ALTER. Each check runs
/// the client a few times per replica, so once a second rather than continuously.
const CATCH_UP_POLL: Duration = Duration::from_secs(1);

/// `1000000` → `1,000,000`, as the narration reads it.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The whole script, until stopped.
pub(crate) async fn run(director: Director, stop: Stop) {
    let (built_tx, built_rx) = watch::channel(None);
    let director = &director;
    let t = &director.timeline;
    // First, before the build's line: what the newcomer is looking at.
    director.say(format!(
        "demo: primary with replicas r1, r2 and c1 (under r1); {AGGREGATOR} from primary and {SECOND_PRIMARY}; \
         INSERTs on both every {}; first incident in {}",
        units::duration(t.load_every),
        units::duration(t.lead_in)
    ));
    tokio::join!(
        load(director, "primary", &director.app, LOAD_TABLE, stop.clone()),
        load(
            director,
            SECOND_PRIMARY,
            &director.app_p2,
            LOAD_TABLE_P2,
            stop.clone()
        ),
        async {
            let mut stop = stop.clone();
            if let Ok(ok) = build_big(director, &mut stop).await {
                let _ = built_tx.send(Some(ok));
            }
        },
        async {
            let mut stop = stop.clone();
            let _ = incidents(director, built_rx, &mut stop).await;
            // Leave no link stalled behind a stopped script: the caller may keep the sandbox.
            for link in director.sandbox.state().links() {
                if let Some(relay) = director.sandbox.channel_relay(link.replica, link.channel) {
                    relay.resume();
                }
            }
        },
    );
}

/// An INSERT into `table` on `node` every [`super::Timeline::load_every`] as the app user
/// (`app`), so there is something to replicate and fall behind on. Failures are narrated once per
/// streak, then retried every second.
pub(super) async fn load(
    director: &Director,
    node: &str,
    app: &Endpoint,
    table: &str,
    mut stop: Stop,
) {
    let insert = format!("INSERT INTO {table} (v) VALUES (1)");
    let mut conn: Option<NodeConn> = None;
    let mut failing = false;
    loop {
        if conn.as_ref().is_none_or(|c| !c.is_open()) {
            let Ok(connected) = stop
                .or_stop(NodeConn::connect(app, Timeouts::default()))
                .await
            else {
                break;
            };
            match connected {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    if !failing {
                        director.say(format!(
                            "load: cannot connect to {node} ({e}); retrying every second"
                        ));
                    }
                    failing = true;
                    conn = None;
                }
            }
        }
        if let Some(c) = conn.as_mut() {
            let Ok(done) = stop.or_stop(c.query_rows(&insert)).await else {
                break;
            };
            match done {
                Ok(_) if failing => {
                    director.say(format!("load: writing on {node} again"));
                    failing = false;
                }
                Ok(_) => {}
                Err(e) => {
                    if !failing {
                        director.say(format!(
                            "load: INSERT on {node} failed ({e}); retrying every second"
                        ));
                    }
                    failing = true;
                }
            }
        }
        let wait = if failing {
            Duration::from_secs(1)
        } else {
            director.timeline.load_every
        };
        if stop.sleep(wait).await.is_err() {
            break;
        }
    }
    if let Some(c) = conn {
        // Polite, but never a reason to hang a quit.
        let _ = tokio::time::timeout(Duration::from_secs(1), c.close()).await;
    }
}

/// Fills the table the ALTER incident rebuilds: wide fixed-size latin1 rows from `MariaDB`'s
/// sequence engine (qualified with `rwtop.`, the app session has no default schema). Row-based
/// binlogs ship every row as one big transaction, so the replicas visibly lag while they apply
/// it, early in the first minute (and SBM overstates that lag, which rwtop points out). The cost
/// is disk: about 2.5 GB across the five nodes' tables and binlogs (agg gets it from the
/// primary). `Ok(true)` when the table is
/// ready.
async fn build_big(director: &Director, stop: &mut Stop) -> Result<bool, Stopped> {
    let rows = director.timeline.big_rows;
    director.say(format!(
        "setup: filling {BIG_TABLE} with {} wide rows for the ALTER incident; the replicas lag while they apply it",
        thousands(rows)
    ));
    let started = Instant::now();
    let drop_sql = format!("DROP TABLE IF EXISTS {BIG_TABLE}");
    let create = format!(
        "CREATE TABLE {BIG_TABLE} (id INT PRIMARY KEY, a CHAR(255) NOT NULL, \
         b CHAR(255) NOT NULL, KEY (a(20))) CHARSET latin1"
    );
    let fill = format!(
        "INSERT INTO {BIG_TABLE} SELECT seq, REPEAT('x', 255), REPEAT('y', 255) \
         FROM rwtop.seq_1_to_{rows}"
    );
    match director.app_sql(stop, &[&drop_sql, &create, &fill]).await? {
        Ok(()) => {
            director.say(format!(
                "setup: {BIG_TABLE} ready ({} rows in {})",
                thousands(rows),
                units::duration(started.elapsed())
            ));
            Ok(true)
        }
        Err(e) => {
            director.say(format!("error: filling {BIG_TABLE} failed: {e}"));
            Ok(false)
        }
    }
}

/// The timeline: the incidents in order, with pauses, round after round.
async fn incidents(
    director: &Director,
    mut built: watch::Receiver<Option<bool>>,
    stop: &mut Stop,
) -> Result<(), Stopped> {
    let t = &director.timeline;
    stop.sleep(t.lead_in).await?;
    let mut round = 1u32;
    loop {
        if round > 1 {
            director.say(format!("demo: round {round}: the same incidents again"));
        }
        stall_link(director, stop).await?;
        stop.sleep(t.pause).await?;
        io_thread_stopped(director, stop).await?;
        stop.sleep(t.pause).await?;
        delayed_replica(director, stop).await?;
        stop.sleep(t.pause).await?;
        // Before the ALTER, whose replay makes agg's default channel lag for a minute's window
        // too: here agg's default channel is at about 0, so the one channel behind stands out.
        channel::channel_stopped(director, stop).await?;
        stop.sleep(t.pause).await?;
        rebuilding_alter(director, &mut built, stop).await?;
        stop.sleep(t.pause).await?;
        if !t.repeat {
            director.say("demo: script done; the load keeps running until you quit");
            stop.requested().await;
            return Err(Stopped);
        }
        round = round.saturating_add(1);
    }
}

/// (a) A network that goes silent without closing: the replica keeps both threads `Yes` and
/// SBM 0 while it falls behind. Only the heartbeat tells.
async fn stall_link(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let Some(relay) = director.sandbox.relay("r2") else {
        director.say("skipped: r2 has no relay, so its link cannot be stalled");
        return Ok(());
    };
    // Stalled before it is said, so the line describes what is already true.
    relay.stall();
    director.say(
        "incident: stalling r2's source link; watch SBM stay 0 while its heartbeat lag climbs",
    );
    let held = stop.sleep(director.timeline.stall).await;
    relay.resume();
    held?;
    director.say("resolved: r2's link flows again; r2 catches up and the alert clears");
    Ok(())
}

/// (b) The IO thread stopped: SBM goes NULL, the received-GTID backlog grows, and c1 (fed by
/// r1) falls behind with it.
async fn io_thread_stopped(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let flavor = &director.sandbox.binaries().flavor;
    let (stop_io, start_io) = (flavor.stop_io_thread_sql(), flavor.start_io_thread_sql());
    if director.admin(stop, "r1", &stop_io).await?.is_none() {
        return Ok(());
    }
    director.say("incident: r1's IO thread stopped; SBM is NULL, the GTID backlog grows, c1 falls behind too");
    let held = stop.sleep(director.timeline.io_stop).await;
    // Restarted even when stopping: a replica left without its IO thread is not what anyone
    // asked for if the sandbox outlives the script.
    if held.is_err() {
        director.undo_in_background("r1", start_io.clone());
        return Err(Stopped);
    }
    if director.admin(stop, "r1", &start_io).await?.is_some() {
        director.say("resolved: r1's IO thread is running again; r1 and c1 catch up");
    }
    Ok(())
}

/// (c) A deliberately delayed replica: lag the size of `MASTER_DELAY`, reported honestly by both
/// SBM and the heartbeat (and inherited by c1).
async fn delayed_replica(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let n = director.timeline.master_delay_secs;
    let flavor = &director.sandbox.binaries().flavor;
    let option = flavor.source_delay_option();
    let set = |delay: u32| {
        format!(
            "{}; {}; {}",
            flavor.stop_replica_sql(),
            flavor.source_delay_sql(delay),
            flavor.start_replica_sql()
        )
    };
    if director.admin(stop, "r1", &set(n)).await?.is_none() {
        return Ok(());
    }
    director.say(format!(
        "incident: r1 runs with {option}={n}; a deliberate {} lag that SBM and the heartbeat agree on (c1 inherits it)",
        units::secs(u64::from(n))
    ));
    let held = stop.sleep(director.timeline.delay).await;
    if held.is_err() {
        director.undo_in_background("r1", set(0));
        return Err(Stopped);
    }
    if director.admin(stop, "r1", &set(0)).await?.is_some() {
        director.say(format!(
            "resolved: r1's {option} is back to 0; r1 and c1 catch up"
        ));
    }
    Ok(())
}

/// (d) A rebuilding ALTER: the primary copies the whole table, then every replica replays the
/// copy after it, single-threaded, falling behind by about as long; c1 after r1 (and agg on its
/// default channel, while its channel from p2 keeps flowing).
async fn rebuilding_alter(
    director: &Director,
    built: &mut watch::Receiver<Option<bool>>,
    stop: &mut Stop,
) -> Result<(), Stopped> {
    if built.borrow().is_none() {
        director.say(format!(
            "waiting: {BIG_TABLE} is still being filled; the ALTER runs once it is ready"
        ));
    }
    let ready = stop
        .or_stop(async { built.wait_for(Option::is_some).await.ok().and_then(|v| *v) })
        .await?;
    if ready != Some(true) && !build_big(director, stop).await? {
        director.say(format!(
            "skipped: the ALTER incident, {BIG_TABLE} is not there"
        ));
        return Ok(());
    }
    // Built once: a later round rebuilds the same table.
    let alter = format!("ALTER TABLE {BIG_TABLE} ENGINE=InnoDB, ALGORITHM=COPY");
    director.say(format!(
        "incident: the app runs {alter} ({} rows); DDL in flight on the primary, then on each replica",
        thousands(director.timeline.big_rows)
    ));
    let started = Instant::now();
    if let Err(e) = director.app_sql(stop, &[&alter]).await? {
        director.say(format!("error: the ALTER failed: {e}"));
        return Ok(());
    }
    let on_primary = started.elapsed();
    director.say(format!(
        "progress: the primary rebuilt {BIG_TABLE} in {}; the replicas replay it now and fall behind",
        units::duration(on_primary)
    ));
    let replayed = Instant::now();
    loop {
        // One check, no waiting inside: the loop owns the pace and the stop.
        let behind = match director
            .on_sandbox(stop, |sandbox| sandbox.wait_replicating(Duration::ZERO))
            .await?
        {
            Ok(()) => {
                director.say(format!(
                    "resolved: every replica replayed the ALTER, {} after the primary finished",
                    units::duration(replayed.elapsed())
                ));
                return Ok(());
            }
            Err(SandboxError::NotReplicating { detail }) => detail,
            Err(e) => e.to_string(),
        };
        if replayed.elapsed() >= director.timeline.catch_up {
            director.say(format!(
                "error: replicas still behind {} after the ALTER ({behind}); moving on",
                units::duration(director.timeline.catch_up)
            ));
            return Ok(());
        }
        stop.sleep(CATCH_UP_POLL).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(20_000), "20,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(0), "0");
    }
}
