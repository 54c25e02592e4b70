//! The probe runner: one marker written on the root of the targeted channel, read back as a
//! strategy dictates.
//!
//! The prober writes only to a root (the configured primary, or the root upstream of the
//! channel aimed at), and only after its [`Session`] has checked that it is writable; replicas
//! are only read. [`super::route`] decides where the read goes.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::attempt::{Attempt, ProbeError};
use super::marker;
use super::outcome::{Outcome, ProbeResult};
use super::route::Route;
use super::session::Session;
use super::target::{Aim, Target};
use super::{ProbeSpec, Strategy};
use crate::topology::{Role, Topology};

pub struct Prober {
    session: Session,
    seq: u64,
    last_cleanup: Option<Instant>,
    /// Every root a marker was written on: each is cleaned up.
    written_on: BTreeSet<String>,
}

impl Prober {
    #[must_use]
    pub fn new(spec: ProbeSpec) -> Self {
        Self {
            session: Session::new(spec),
            seq: 0,
            last_cleanup: None,
            written_on: BTreeSet::new(),
        }
    }

    /// Follows an engine's snapshots: a fast mode on rwtop's polls that reads a while after
    /// its write (`after=`) routes on the newest one then.
    pub fn follow<T: Topology>(&mut self, snapshots: tokio::sync::watch::Receiver<Arc<T>>) {
        self.session.views = Some(Box::new(move || -> Arc<dyn Topology> {
            snapshots.borrow().clone()
        }));
    }

    #[must_use]
    pub fn primary_name(&self) -> &str {
        &self.session.spec.primary.0
    }

    /// Runs one probe against `target` (a replica, `agg`, or one of its channels, `agg/p2`) and
    /// reports what happened; never fails.
    pub async fn run(
        &mut self,
        strategy: Strategy,
        target: &str,
        view: &dyn Topology,
    ) -> ProbeResult {
        let at = chrono::Utc::now();
        let mut attempt = Attempt {
            started: Instant::now(),
            written: None,
            waited: Duration::ZERO,
            queries: 0,
            primary_reads: 0,
            note: None,
            cost: super::outcome::ProbeCost::default(),
        };
        let run = self.attempt(&mut attempt, strategy, target, view).await;
        let (outcome, served_by, cause) = match run {
            Ok(done) => done,
            Err(ProbeError(cause)) => (Outcome::Error, None, Some(cause)),
        };
        if self.session.spec.read_only || outcome == Outcome::Error {
            // Nothing to clean after a refusal, and a failing primary gets no extra statement.
        } else if self
            .last_cleanup
            .is_none_or(|t| t.elapsed() >= marker::CLEAN_EVERY)
        {
            self.last_cleanup = Some(Instant::now());
            let _ = self.cleanup(marker::KEEP_FOR).await;
        }
        ProbeResult {
            at,
            strategy,
            target: target.to_owned(),
            served_by,
            outcome,
            cause,
            note: attempt.note,
            waited: attempt.waited,
            total: attempt
                .written
                .map_or(Duration::ZERO, |_| attempt.started.elapsed()),
            queries: attempt.queries,
            primary_reads: attempt.primary_reads,
            cost: attempt.cost,
        }
    }

    /// Deletes the markers older than `age` on the primary and every other root written to
    /// (a root's delete replicates only the rows it has itself).
    pub async fn cleanup(&mut self, age: Duration) -> Result<(), ProbeError> {
        let mut roots = self.written_on.clone();
        roots.insert(self.session.spec.primary.0.clone());
        let mut first_error = None;
        for root in roots {
            let done: Result<(), ProbeError> = async {
                let conn = self.session.conn(&root).await?;
                conn.query_rows(&marker::cleanup_sql(age)).await?;
                Ok(())
            }
            .await;
            if let Err(ProbeError(e)) = done {
                first_error.get_or_insert(ProbeError(format!("{root}: {e}")));
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Closes every connection politely.
    pub async fn close(self) {
        self.session.close().await;
    }

    async fn attempt(
        &mut self,
        a: &mut Attempt,
        strategy: Strategy,
        target: &str,
        view: &dyn Topology,
    ) -> Result<(Outcome, Option<String>, Option<String>), ProbeError> {
        if self.session.spec.read_only {
            return Err(ProbeError(
                "refused: read-only mode (--read-only) writes nothing, and a probe writes a \
                 marker row on the primary; run without --read-only to probe"
                    .into(),
            ));
        }
        self.session.learn(view);
        self.session.follow(view);
        let target = Target::parse(target).map_err(ProbeError)?;
        self.check_target(target.node, view)?;
        let aim = Aim::resolve(&target, view, &self.session.spec.primary.0)?;
        // Strategies that need something before the write ask for it here.
        self.session.before_write(a, strategy, &aim, view).await?;
        let token = self.write_marker(a, &aim.root).await?;
        let route = self.session.route(a, strategy, &aim, &token, view).await?;
        let primary = aim.root;
        let (node, outcome, cause) = match route {
            Route::Replica(name) => {
                let seen = self.session.read_marker(a, &name, &token).await?;
                let outcome = if seen { Outcome::Fresh } else { Outcome::Stale };
                (name, outcome, None)
            }
            Route::Primary => {
                a.primary_reads += 1;
                let seen = self.session.read_marker(a, &primary, &token).await?;
                (primary.clone(), fresh_on_primary(seen)?, None)
            }
            Route::FallBack(cause) => {
                a.primary_reads += 1;
                let seen = self.session.read_marker(a, &primary, &token).await?;
                fresh_on_primary(seen)?;
                (primary.clone(), Outcome::FellBack, Some(cause))
            }
        };
        Ok((outcome, Some(node), cause))
    }

    /// A probe targets a replica that rwtop knows, and never the primary itself.
    fn check_target(&self, target: &str, view: &dyn Topology) -> Result<(), ProbeError> {
        let primary = &self.session.spec.primary.0;
        if target == primary {
            return Err(ProbeError(format!(
                "{target} is the primary: aim a probe at a replica (the strategy decides when \
                 to read the primary)"
            )));
        }
        match view.member(target) {
            None if !self.session.spec.endpoints.contains_key(target) => Err(ProbeError(format!(
                "no node named {target:?}: pick one of {}",
                view.members()
                    .iter()
                    .filter(|n| n.role != Role::Primary)
                    .map(|n| n.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            Some(node) if node.role == Role::Primary => Err(ProbeError(format!(
                "{target} is a primary now: aim a probe at a replica"
            ))),
            _ => Ok(()),
        }
    }

    /// Writes the marker on `primary` (a root), checked writable first.
    async fn write_marker(&mut self, a: &mut Attempt, primary: &str) -> Result<String, ProbeError> {
        self.session.ensure_primary(primary).await?;
        self.written_on.insert(primary.to_owned());
        self.seq += 1;
        let token = format!(
            "{}-{}-{}-{}",
            self.session.spec.token_prefix,
            std::process::id(),
            chrono::Utc::now().timestamp_micros(),
            self.seq
        );
        a.started = Instant::now();
        self.session
            .query(a, primary, &marker::insert_sql(&token))
            .await?;
        a.written = Some(Instant::now());
        Ok(token)
    }
}

fn fresh_on_primary(seen: bool) -> Result<Outcome, ProbeError> {
    if seen {
        Ok(Outcome::Fresh)
    } else {
        Err(ProbeError(
            "the primary does not show the marker it just acknowledged: is the probe \
             connection pointed at the primary?"
                .into(),
        ))
    }
}
