//! The probe runner: one marker written on the primary, read back as a strategy dictates.
//!
//! The prober writes only to the primary, and only after its [`Session`] has checked that the
//! primary is writable; replicas are only read. [`super::route`] decides where the read goes.

use std::time::{Duration, Instant};

use super::attempt::{Attempt, ProbeError};
use super::marker;
use super::outcome::{Outcome, ProbeResult};
use super::route::Route;
use super::session::Session;
use super::{ProbeSpec, Strategy};
use crate::topology::{Role, Topology};

pub struct Prober {
    session: Session,
    seq: u64,
    last_cleanup: Option<Instant>,
}

impl Prober {
    #[must_use]
    pub fn new(spec: ProbeSpec) -> Self {
        Self {
            session: Session::new(spec),
            seq: 0,
            last_cleanup: None,
        }
    }

    #[must_use]
    pub fn primary_name(&self) -> &str {
        &self.session.spec.primary.0
    }

    /// Runs one probe against `target` (a replica) and reports what happened; never fails.
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
        }
    }

    /// Deletes the markers older than `age` on the primary.
    pub async fn cleanup(&mut self, age: Duration) -> Result<(), ProbeError> {
        let primary = self.session.spec.primary.0.clone();
        self.session
            .conn(&primary)
            .await?
            .query_rows(&marker::cleanup_sql(age))
            .await?;
        Ok(())
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
        self.check_target(target, view)?;
        // Strategies that need something before the write ask for it here.
        self.session.before_write(a, strategy).await?;
        let token = self.write_marker(a).await?;
        let route = self
            .session
            .route(a, strategy, target, &token, view)
            .await?;
        let primary = self.session.spec.primary.0.clone();
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

    async fn write_marker(&mut self, a: &mut Attempt) -> Result<String, ProbeError> {
        let primary = self.session.spec.primary.0.clone();
        self.session.ensure_primary(&primary).await?;
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
            .query(a, &primary, &marker::insert_sql(&token))
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
