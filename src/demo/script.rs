//! The demo's script: a light write load and a looping timeline of real incidents, each narrated
//! in one line for the TUI's footer.
//!
//! Every incident is made with real SQL or a real stalled link, never simulated data, so what the
//! newcomer sees is exactly what rwtop would show on a production topology in the same trouble.
//!
//! Why the shape: the load, the background table build and the timeline run as three futures in
//! one task (`tokio::join!`), so stopping the script is stopping one future; administrative SQL
//! goes through `spawn_blocking` because [`Sandbox::admin`] runs the command-line client and waits
//! for it, which must not block the runtime that also draws the TUI.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use crate::mysql::{Endpoint, NodeConn, RawRow, Timeouts};
use crate::sandbox::{Sandbox, SandboxError};
use crate::units;

/// The big table the ALTER incident rebuilds, and the load's table (both in rwtop's schema, where
/// the app user has its grants).
pub(crate) const BIG_TABLE: &str = "rwtop.demo_big";
pub(crate) const LOAD_TABLE: &str = "rwtop.demo_load";

/// Timeouts for statements that legitimately run for a long time (the table build and the
/// rebuilding ALTER): long enough for a slow disk, bounded so a wedged server is still reported.
const LONG: Timeouts = Timeouts {
    connect: Duration::from_secs(3),
    query: Duration::from_secs(900),
};

/// How often the script checks whether the replicas caught up after the ALTER. Each check runs
/// the client a few times per replica, so once a second rather than continuously.
const CATCH_UP_POLL: Duration = Duration::from_secs(1);

/// How long each incident lasts, the pauses between them, and the load's pace.
///
/// [`Timeline::default`] is the real demo (about three minutes a round, first incident after 8 s);
/// [`Timeline::fast`] runs every incident for a few seconds so a test sees a whole round quickly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// Quiet time before the first incident: long enough to see a healthy topology first,
    /// short enough that something happens within the first ten seconds.
    pub lead_in: Duration,
    /// Between incidents, so the previous one's alerts clear (3 clean samples) before the next.
    pub pause: Duration,
    /// How long r2's source link stays stalled. Under `slave_net_timeout` (60 s) and the
    /// primary's `net_write_timeout` (60 s), so neither side drops the connection: SBM keeps
    /// reading 0, which is the point.
    pub stall: Duration,
    /// How long r1's IO thread stays stopped.
    pub io_stop: Duration,
    /// How long r1 keeps its `MASTER_DELAY`.
    pub delay: Duration,
    /// The `MASTER_DELAY` r1 gets, in seconds.
    pub master_delay_secs: u32,
    /// Rows in the table the ALTER rebuilds (wide latin1 rows: 1,000,000 take ~10 s to copy).
    pub big_rows: u32,
    /// How long to wait for the replicas to replay the ALTER before moving on anyway.
    pub catch_up: Duration,
    /// One INSERT of the write load every this often.
    pub load_every: Duration,
    /// Start the incidents over after the last one (the demo); otherwise idle until stopped.
    pub repeat: bool,
}

impl Default for Timeline {
    fn default() -> Self {
        Self {
            lead_in: Duration::from_secs(8),
            pause: Duration::from_secs(15),
            stall: Duration::from_secs(25),
            io_stop: Duration::from_secs(15),
            delay: Duration::from_secs(30),
            master_delay_secs: 5,
            big_rows: 1_000_000,
            catch_up: Duration::from_secs(180),
            load_every: Duration::from_millis(100),
            repeat: true,
        }
    }
}

impl Timeline {
    /// Every incident for a few seconds and a small table: a whole round in about half a minute,
    /// for tests. The incidents are the same real ones.
    #[must_use]
    pub fn fast() -> Self {
        Self {
            lead_in: Duration::from_secs(1),
            pause: Duration::from_secs(2),
            stall: Duration::from_secs(8),
            io_stop: Duration::from_secs(4),
            delay: Duration::from_secs(5),
            master_delay_secs: 2,
            big_rows: 20_000,
            catch_up: Duration::from_secs(30),
            load_every: Duration::from_millis(100),
            repeat: true,
        }
    }
}

/// The script stopped on request; every step returns it so `?` ends the script at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped;

/// The stop signal: the caller's (the TUI quitting) or the demo's own (the [`super::Demo`]
/// dropping). A sender that is gone counts as stop, so a script can never outlive both.
#[derive(Clone)]
pub(crate) struct Stop {
    caller: watch::Receiver<bool>,
    demo: watch::Receiver<bool>,
}

impl Stop {
    pub(crate) fn new(caller: watch::Receiver<bool>, demo: watch::Receiver<bool>) -> Self {
        Self { caller, demo }
    }

    /// Resolves once either side says stop (or hangs up).
    async fn requested(&mut self) {
        tokio::select! {
            _ = self.caller.wait_for(|stop| *stop) => {}
            _ = self.demo.wait_for(|stop| *stop) => {}
        }
    }

    /// Runs `work` unless a stop comes first; the stop wins a tie, so nothing new starts after it.
    async fn or_stop<F: Future>(&mut self, work: F) -> Result<F::Output, Stopped> {
        tokio::select! {
            biased;
            () = self.requested() => Err(Stopped),
            out = work => Ok(out),
        }
    }

    async fn sleep(&mut self, how_long: Duration) -> Result<(), Stopped> {
        self.or_stop(tokio::time::sleep(how_long)).await
    }
}

/// What the script works with; cloned out of the [`super::Demo`] so the script future is
/// `'static` and can be spawned.
pub(crate) struct Ctx {
    pub sandbox: Arc<Sandbox>,
    /// The application's account on the primary: the load, the build and the ALTER run as it,
    /// because rwtop's monitor user may not ALTER (and should not).
    pub app: Endpoint,
    pub timeline: Timeline,
    pub events: mpsc::Sender<String>,
}

impl Ctx {
    /// Narrates one line. Never waits: a TUI that is behind on its footer loses a line rather
    /// than delaying an incident (or the load) it is showing.
    fn say(&self, line: impl AsRef<str>) {
        let _ = self.events.try_send(one_line(line.as_ref()));
    }

    /// Administrative SQL on a node, off the runtime. An error is narrated and returned as
    /// `None`; the caller skips the rest of its incident.
    async fn admin(
        &self,
        stop: &mut Stop,
        node: &str,
        sql: &str,
    ) -> Result<Option<Vec<RawRow>>, Stopped> {
        match self.admin_quiet(stop, node, sql).await? {
            Ok(rows) => Ok(Some(rows)),
            Err(e) => {
                self.say(format!("error: {e}"));
                Ok(None)
            }
        }
    }

    async fn admin_quiet(
        &self,
        stop: &mut Stop,
        node: &str,
        sql: &str,
    ) -> Result<Result<Vec<RawRow>, SandboxError>, Stopped> {
        let (node, sql) = (node.to_owned(), sql.to_owned());
        self.on_sandbox(stop, move |sandbox| sandbox.admin(&node, &sql))
            .await
    }

    /// Runs a blocking sandbox call on the blocking pool. On a stop the call is abandoned, not
    /// killed: it ends within the client's own deadline, and the Demo's teardown does not wait
    /// for it beyond a moment.
    async fn on_sandbox<T: Send + 'static>(
        &self,
        stop: &mut Stop,
        call: impl FnOnce(&Sandbox) -> Result<T, SandboxError> + Send + 'static,
    ) -> Result<Result<T, SandboxError>, Stopped> {
        let sandbox = Arc::clone(&self.sandbox);
        let joined = stop
            .or_stop(tokio::task::spawn_blocking(move || call(&sandbox)))
            .await?;
        Ok(joined.unwrap_or_else(|e| {
            Err(SandboxError::Admin {
                node: "?".to_owned(),
                sql: String::new(),
                problem: format!("the admin task failed: {e}"),
            })
        }))
    }

    /// Undoes an incident when the script is stopped in the middle of it, without waiting: the
    /// stop must stay prompt, and a sandbox being torn down makes the statement moot anyway.
    fn undo_in_background(&self, node: &'static str, sql: String) {
        let sandbox = Arc::clone(&self.sandbox);
        drop(tokio::task::spawn_blocking(move || {
            let _ = sandbox.admin(node, &sql);
        }));
    }

    /// Runs statements in order as the app user on one connection, under the long timeouts;
    /// the first failure is returned as text.
    async fn app_sql(
        &self,
        stop: &mut Stop,
        statements: &[&str],
    ) -> Result<Result<(), String>, Stopped> {
        let work = async {
            let mut conn = NodeConn::connect(&self.app, LONG)
                .await
                .map_err(|e| e.to_string())?;
            for sql in statements {
                if let Err(e) = conn.query_rows(sql).await {
                    return Err(e.to_string());
                }
            }
            conn.close().await;
            Ok(())
        };
        stop.or_stop(work).await
    }
}

/// Collapses whitespace (client errors carry newlines) so a narration is one footer line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

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
pub(crate) async fn run(ctx: Ctx, stop: Stop) {
    let (built_tx, built_rx) = watch::channel(None);
    let ctx = &ctx;
    let t = &ctx.timeline;
    // First, before the build's line: what the newcomer is looking at.
    ctx.say(format!(
        "demo: primary with replicas r1, r2 and c1 (under r1); an app INSERTs every {}; first incident in {}",
        units::duration(t.load_every),
        units::duration(t.lead_in)
    ));
    tokio::join!(
        load(ctx, stop.clone()),
        async {
            let mut stop = stop.clone();
            if let Ok(ok) = build_big(ctx, &mut stop).await {
                let _ = built_tx.send(Some(ok));
            }
        },
        async {
            let mut stop = stop.clone();
            let _ = incidents(ctx, built_rx, &mut stop).await;
            // Leave no link stalled behind a stopped script: the caller may keep the sandbox.
            for name in ["r1", "r2", "c1"] {
                if let Some(relay) = ctx.sandbox.relay(name) {
                    relay.resume();
                }
            }
        },
    );
}

/// An INSERT every [`Timeline::load_every`] as the app user, so there is something to replicate
/// and fall behind on. Failures are narrated once per streak, then retried every second.
async fn load(ctx: &Ctx, mut stop: Stop) {
    let insert = format!("INSERT INTO {LOAD_TABLE} (v) VALUES (1)");
    let mut conn: Option<NodeConn> = None;
    let mut failing = false;
    loop {
        if conn.as_ref().is_none_or(|c| !c.is_open()) {
            let Ok(connected) = stop
                .or_stop(NodeConn::connect(&ctx.app, Timeouts::default()))
                .await
            else {
                break;
            };
            match connected {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    if !failing {
                        ctx.say(format!("load: cannot connect ({e}); retrying every second"));
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
                    ctx.say("load: writing again");
                    failing = false;
                }
                Ok(_) => {}
                Err(e) => {
                    if !failing {
                        ctx.say(format!("load: INSERT failed ({e}); retrying every second"));
                    }
                    failing = true;
                }
            }
        }
        let wait = if failing {
            Duration::from_secs(1)
        } else {
            ctx.timeline.load_every
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
/// is disk: about 2 GB across the four nodes' tables and binlogs. `Ok(true)` when the table is
/// ready.
async fn build_big(ctx: &Ctx, stop: &mut Stop) -> Result<bool, Stopped> {
    let rows = ctx.timeline.big_rows;
    ctx.say(format!(
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
    match ctx.app_sql(stop, &[&drop_sql, &create, &fill]).await? {
        Ok(()) => {
            ctx.say(format!(
                "setup: {BIG_TABLE} ready ({} rows in {})",
                thousands(rows),
                units::duration(started.elapsed())
            ));
            Ok(true)
        }
        Err(e) => {
            ctx.say(format!("error: filling {BIG_TABLE} failed: {e}"));
            Ok(false)
        }
    }
}

/// The timeline: the incidents in order, with pauses, round after round.
async fn incidents(
    ctx: &Ctx,
    mut built: watch::Receiver<Option<bool>>,
    stop: &mut Stop,
) -> Result<(), Stopped> {
    let t = &ctx.timeline;
    stop.sleep(t.lead_in).await?;
    let mut round = 1u32;
    loop {
        if round > 1 {
            ctx.say(format!("demo: round {round}: the same incidents again"));
        }
        stall_link(ctx, stop).await?;
        stop.sleep(t.pause).await?;
        io_thread_stopped(ctx, stop).await?;
        stop.sleep(t.pause).await?;
        delayed_replica(ctx, stop).await?;
        stop.sleep(t.pause).await?;
        rebuilding_alter(ctx, &mut built, stop).await?;
        stop.sleep(t.pause).await?;
        if !t.repeat {
            ctx.say("demo: script done; the load keeps running until you quit");
            stop.requested().await;
            return Err(Stopped);
        }
        round = round.saturating_add(1);
    }
}

/// (a) A network that goes silent without closing: the replica keeps both threads `Yes` and
/// SBM 0 while it falls behind. Only the heartbeat tells.
async fn stall_link(ctx: &Ctx, stop: &mut Stop) -> Result<(), Stopped> {
    let Some(relay) = ctx.sandbox.relay("r2") else {
        ctx.say("skipped: r2 has no relay, so its link cannot be stalled");
        return Ok(());
    };
    // Stalled before it is said, so the line describes what is already true.
    relay.stall();
    ctx.say("incident: stalling r2's source link; watch SBM stay 0 while its heartbeat lag climbs");
    let held = stop.sleep(ctx.timeline.stall).await;
    relay.resume();
    held?;
    ctx.say("resolved: r2's link flows again; r2 catches up and the alert clears");
    Ok(())
}

/// (b) The IO thread stopped: SBM goes NULL, the received-GTID backlog grows, and c1 (fed by
/// r1) falls behind with it.
async fn io_thread_stopped(ctx: &Ctx, stop: &mut Stop) -> Result<(), Stopped> {
    if ctx
        .admin(stop, "r1", "STOP SLAVE IO_THREAD")
        .await?
        .is_none()
    {
        return Ok(());
    }
    ctx.say("incident: r1's IO thread stopped; SBM is NULL, the GTID backlog grows, c1 falls behind too");
    let held = stop.sleep(ctx.timeline.io_stop).await;
    // Restarted even when stopping: a replica left without its IO thread is not what anyone
    // asked for if the sandbox outlives the script.
    if held.is_err() {
        ctx.undo_in_background("r1", "START SLAVE IO_THREAD".to_owned());
        return Err(Stopped);
    }
    if ctx
        .admin(stop, "r1", "START SLAVE IO_THREAD")
        .await?
        .is_some()
    {
        ctx.say("resolved: r1's IO thread is running again; r1 and c1 catch up");
    }
    Ok(())
}

/// (c) A deliberately delayed replica: lag the size of `MASTER_DELAY`, reported honestly by both
/// SBM and the heartbeat (and inherited by c1).
async fn delayed_replica(ctx: &Ctx, stop: &mut Stop) -> Result<(), Stopped> {
    let n = ctx.timeline.master_delay_secs;
    let set =
        |delay: u32| format!("STOP SLAVE; CHANGE MASTER TO MASTER_DELAY={delay}; START SLAVE");
    if ctx.admin(stop, "r1", &set(n)).await?.is_none() {
        return Ok(());
    }
    ctx.say(format!(
        "incident: r1 runs with MASTER_DELAY={n}; a deliberate {} lag that SBM and the heartbeat agree on (c1 inherits it)",
        units::secs(u64::from(n))
    ));
    let held = stop.sleep(ctx.timeline.delay).await;
    if held.is_err() {
        ctx.undo_in_background("r1", set(0));
        return Err(Stopped);
    }
    if ctx.admin(stop, "r1", &set(0)).await?.is_some() {
        ctx.say("resolved: r1's MASTER_DELAY is back to 0; r1 and c1 catch up");
    }
    Ok(())
}

/// (d) A rebuilding ALTER: the primary copies the whole table, then every replica replays the
/// copy after it, single-threaded, falling behind by about as long; c1 after r1.
async fn rebuilding_alter(
    ctx: &Ctx,
    built: &mut watch::Receiver<Option<bool>>,
    stop: &mut Stop,
) -> Result<(), Stopped> {
    if built.borrow().is_none() {
        ctx.say(format!(
            "waiting: {BIG_TABLE} is still being filled; the ALTER runs once it is ready"
        ));
    }
    let ready = stop
        .or_stop(async { built.wait_for(Option::is_some).await.ok().and_then(|v| *v) })
        .await?;
    if ready != Some(true) && !build_big(ctx, stop).await? {
        ctx.say(format!(
            "skipped: the ALTER incident, {BIG_TABLE} is not there"
        ));
        return Ok(());
    }
    // Built once: a later round rebuilds the same table.
    let alter = format!("ALTER TABLE {BIG_TABLE} ENGINE=InnoDB, ALGORITHM=COPY");
    ctx.say(format!(
        "incident: the app runs {alter} ({} rows); DDL in flight on the primary, then on each replica",
        thousands(ctx.timeline.big_rows)
    ));
    let started = Instant::now();
    if let Err(e) = ctx.app_sql(stop, &[&alter]).await? {
        ctx.say(format!("error: the ALTER failed: {e}"));
        return Ok(());
    }
    let on_primary = started.elapsed();
    ctx.say(format!(
        "progress: the primary rebuilt {BIG_TABLE} in {}; the replicas replay it now and fall behind",
        units::duration(on_primary)
    ));
    let replayed = Instant::now();
    loop {
        // One check, no waiting inside: the loop owns the pace and the stop.
        let behind = match ctx
            .on_sandbox(stop, |sandbox| sandbox.wait_replicating(Duration::ZERO))
            .await?
        {
            Ok(()) => {
                ctx.say(format!(
                    "resolved: every replica replayed the ALTER, {} after the primary finished",
                    units::duration(replayed.elapsed())
                ));
                return Ok(());
            }
            Err(SandboxError::NotReplicating { detail }) => detail,
            Err(e) => e.to_string(),
        };
        if replayed.elapsed() >= ctx.timeline.catch_up {
            ctx.say(format!(
                "error: replicas still behind {} after the ALTER ({behind}); moving on",
                units::duration(ctx.timeline.catch_up)
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
    fn narration_is_one_line() {
        assert_eq!(one_line("a\n  b\tc "), "a b c");
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(20_000), "20,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(0), "0");
    }

    #[test]
    fn fast_timeline_is_the_same_script_shorter() {
        let (real, fast) = (Timeline::default(), Timeline::fast());
        assert!(fast.stall < real.stall && fast.big_rows < real.big_rows);
        // The first incident comes within ten seconds, and a round lasts a few minutes.
        assert!(real.lead_in <= Duration::from_secs(10));
        let round = real.stall + real.io_stop + real.delay + 4 * real.pause;
        assert!(round >= Duration::from_secs(120) && round <= Duration::from_secs(240));
        // The stall stays under the timeouts that would turn it into a disconnect.
        assert!(real.stall < Duration::from_secs(60));
    }

    #[tokio::test]
    async fn a_stop_ends_a_sleep_at_once_and_a_dropped_sender_counts() {
        let (caller_tx, caller_rx) = watch::channel(false);
        let (_demo_tx, demo_rx) = watch::channel(false);
        let mut stop = Stop::new(caller_rx, demo_rx);
        let started = Instant::now();
        let sleeper = tokio::spawn(async move { stop.sleep(Duration::from_secs(60)).await });
        let _ = caller_tx.send(true);
        assert_eq!(sleeper.await.ok(), Some(Err(Stopped)));
        assert!(started.elapsed() < Duration::from_secs(5));

        let (caller_tx, caller_rx) = watch::channel(false);
        let (_demo_tx, demo_rx) = watch::channel(false);
        let mut stop = Stop::new(caller_rx, demo_rx);
        drop(caller_tx);
        assert_eq!(stop.sleep(Duration::from_secs(60)).await, Err(Stopped));
    }
}
