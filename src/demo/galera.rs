//! The Galera act (`rwtop demo --galera`): a three-member cluster with an async replica of n1,
//! a light write load on n1, and a looping timeline of real Galera incidents, each narrated in
//! one line: a backup's read lock desyncing n3, n3 sending flow control under a burst of writes
//! (`gcs.fc_limit=1`), and n2 cut off from the others (`gmcast.isolate=1`), rejoining by IST.
//! Every incident is real SQL on real galera-4 members.

use std::time::{Duration, Instant};

use super::director::Director;
use super::script::{LOAD_TABLE, load};
use super::stop::{Stop, Stopped};
use crate::units;

/// The members, as the sandbox names them.
pub(crate) const MEMBERS: [&str; 3] = ["n1", "n2", "n3"];
/// Writers of the burst that drives flow control.
const BURST_WRITERS: usize = 4;
/// Rows a burst writer inserts per statement batch.
const BURST_BATCH: usize = 100;

const FC_ON: &str = "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=1'";
const FC_OFF: &str = "SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=16'";
const CUT: &str = "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'";
const REJOIN: &str = "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'";

/// The whole act, until stopped.
pub(crate) async fn run(director: Director, stop: Stop) {
    let director = &director;
    let t = &director.timeline;
    director.say(format!(
        "demo: Galera cluster n1, n2, n3 (rwtop writes its heartbeat on n1) and r1, an async \
         replica of n1; INSERTs on n1 every {}; first incident in {}",
        units::duration(t.load_every),
        units::duration(t.lead_in)
    ));
    tokio::join!(
        load(director, "n1", &director.app, LOAD_TABLE, stop.clone()),
        async {
            let mut stop = stop.clone();
            let _ = incidents(director, &mut stop).await;
        },
    );
}

async fn incidents(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let t = &director.timeline;
    stop.sleep(t.lead_in).await?;
    let mut round = 1;
    loop {
        if round > 1 {
            director.say(format!("demo: round {round}: the same incidents again"));
        }
        backup_lock(director, stop).await?;
        stop.sleep(t.pause).await?;
        flow_control(director, stop).await?;
        stop.sleep(t.pause).await?;
        cut_off(director, stop).await?;
        stop.sleep(t.pause).await?;
        if !t.repeat {
            director.say("demo: script done; the load keeps running until you quit");
            return stop.sleep(Duration::MAX).await;
        }
        round += 1;
    }
}

/// A backup's read lock on n3: it desyncs, falls behind a second a second and serves stale
/// reads, and sends no flow control, so the writes go on.
async fn backup_lock(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let held = director.timeline.stall;
    director.say(format!(
        "incident: a backup's read lock on n3 (FLUSH TABLES WITH READ LOCK, {}): n3 desyncs \
         and falls behind a second a second; reads from it are stale, the writes go on",
        units::duration(held)
    ));
    let sql = format!(
        "FLUSH TABLES WITH READ LOCK; SELECT SLEEP({}); UNLOCK TABLES",
        held.as_secs_f64()
    );
    director.admin(stop, "n3", &sql).await?;
    director.say("resolved: the lock is gone; n3 applies its queue and is synced again");
    Ok(())
}

/// n3 may hold only one write-set unapplied (`gcs.fc_limit=1`) under a burst of writes on n1:
/// it sends flow control, and every member's writes pause while its queue drains.
async fn flow_control(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let lasts = director.timeline.io_stop.max(Duration::from_secs(4));
    if director.admin(stop, "n3", FC_ON).await?.is_none() {
        return Ok(());
    }
    director.say(format!(
        "incident: n3 applies slowly (gcs.fc_limit=1) under a burst of writes on n1 for {}: \
         n3 sends flow control and every member's writes pause",
        units::duration(lasts)
    ));
    let until = Instant::now() + lasts;
    let burst = "INSERT INTO rwtop.demo_load (v) VALUES (2);".repeat(BURST_BATCH);
    let writer = || async {
        let mut stop = stop.clone();
        while Instant::now() < until {
            if director.admin(&mut stop, "n1", &burst).await?.is_none() {
                break;
            }
        }
        Ok::<(), Stopped>(())
    };
    let writers: Vec<_> = (0..BURST_WRITERS).map(|_| writer()).collect();
    let ended = futures_util::future::join_all(writers).await;
    if ended.iter().any(Result::is_err) {
        director.undo_in_background("n3", FC_OFF.to_owned());
        return Err(Stopped);
    }
    director.admin(stop, "n3", FC_OFF).await?;
    director.say("resolved: n3's limit is back to 16; no more pauses");
    Ok(())
}

/// n2 cut off from the others: it leaves the primary component and refuses reads; the others
/// commit nothing until they evict it; it rejoins by IST.
async fn cut_off(director: &Director, stop: &mut Stop) -> Result<(), Stopped> {
    let lasts = director.timeline.channel_stop;
    if director.admin(stop, "n2", CUT).await?.is_none() {
        return Ok(());
    }
    director.say(format!(
        "incident: n2 cut off from the others (gmcast.isolate=1) for {}: it leaves the primary \
         component and refuses reads; the others stall their commits until they evict it",
        units::duration(lasts)
    ));
    if stop.sleep(lasts).await.is_err() {
        director.undo_in_background("n2", REJOIN.to_owned());
        return Err(Stopped);
    }
    director.admin(stop, "n2", REJOIN).await?;
    director.say("resolved: n2 reaches the others again and catches up by IST");
    Ok(())
}
