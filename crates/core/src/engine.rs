//! The engine's handle: starts the pipeline, takes jobs in (planning them, refusing what can
//! never fit, queueing their partitions), waits for and cancels them, preloads and evicts
//! SRSs, reports status, and shuts down.
//!
//! The stages a partition goes through are in [`crate::pipeline`]; the jobs in `jobs.rs`;
//! the status types in `status.rs`.
use crate::budget::MemoryBudget;
use crate::config::Config;
use crate::error::EngineError;
use crate::estimate::WorkingSetEstimate;
use crate::jobs::{NewJob, Registered, RequestHead, RequestPermit};
use crate::metrics::{MemorySample, PartitionTimeline};
use crate::pipeline::{self, Shared};
use crate::planner::{JobPlan, Planner};
use crate::request::{JobOutcome, JobState, Priority, ProofRequest, Submitted};
use crate::status::{EngineStatus, EvictOutcome, PreloadOutcome};
use cuzk_groth16::ProverBackend;
use std::sync::Arc;
use std::time::Duration;

/// The proving engine. Cheap to clone; create it inside a tokio runtime.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("budget", &self.shared.budget)
            .finish()
    }
}

impl Engine {
    /// Starts an engine: background admission, prover workers per backend, the sampler, and
    /// preloads from the config. Must be called inside a tokio runtime.
    pub fn new(
        config: Config,
        backends: Vec<Arc<dyn ProverBackend>>,
        planner: Arc<dyn Planner>,
    ) -> Result<Engine, EngineError> {
        config.validate()?;
        if backends.is_empty() {
            return Err(EngineError::Config(
                "at least one prover backend is needed".into(),
            ));
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(EngineError::Internal(
                "Engine::new must be called inside a tokio runtime".into(),
            ));
        }
        let shared = Shared::new(config, backends, planner)?;
        pipeline::start(&shared);
        // One after the other, in the order listed: where the devices cannot hold every
        // preloaded SRS (porep-32g and snap-32g on an 80 GB card), the first listed take the
        // room, and a later one waits until the one before it is settled (streamed in,
        // declined or read into host memory). Loaded at once, the quickest load took it
        // whatever its rank. A request's own load does not wait for the preloads.
        let preload = shared.config.preload.clone();
        if !preload.is_empty() {
            let sh = shared.clone();
            tokio::spawn(async move {
                for id in preload {
                    match sh.srs.get(&id, Priority::Normal).await {
                        Ok(a) => {
                            tracing::info!(circuit = %id, ms = a.load_time.as_millis() as u64, "preloaded SRS")
                        }
                        Err(e) => {
                            tracing::warn!(circuit = %id, cause = %e, "SRS preload failed")
                        }
                    }
                }
            });
        }
        Ok(Engine { shared })
    }

    /// Submits a request: plans it (bad input fails here), queues its partitions.
    ///
    /// Planning runs on the caller's thread; for large payloads call it from a blocking
    /// context (`spawn_blocking`).
    pub fn submit(&self, req: ProofRequest) -> Result<Submitted, EngineError> {
        self.submit_with(req, None)
    }

    /// [`Engine::submit`] with the request-buffer bytes its message held while it arrived
    /// (the server's intake): the job's payload keeps them, resized to its payload, so no
    /// other message takes them between the arrival and the submit.
    pub fn submit_with(
        &self,
        req: ProofRequest,
        arrival: Option<RequestPermit>,
    ) -> Result<Submitted, EngineError> {
        let sh = &self.shared;
        if !sh.accepting() {
            return Err(EngineError::ShuttingDown);
        }
        let duplicate = |job_id| Submitted {
            job_id,
            queue_position: 0,
            duplicate: true,
        };
        // What the registry keeps is read now: the request itself moves into the planner.
        let head = RequestHead::of(&req);
        if let Some(job_id) = sh.jobs.duplicate_of(&head)? {
            return Ok(duplicate(job_id));
        }
        let JobPlan {
            partitions,
            verify,
            finish,
        } = plan_guarded(sh.planner.as_ref(), req)?;
        if partitions.is_empty() {
            return Err(EngineError::InvalidRequest(
                "the request has no partitions".into(),
            ));
        }
        let n = partitions.len();
        let mut seen = vec![false; n];
        for p in &partitions {
            if p.index >= n || std::mem::replace(&mut seen[p.index], true) {
                return Err(EngineError::Internal(format!(
                    "planner returned partition index {} twice or out of 0..{n}",
                    p.index
                )));
            }
        }
        pipeline::check_fits(sh, &partitions, head.priority)?;
        let new = NewJob {
            partitions: n,
            verify,
            finish,
            max_queued: sh.config.max_queued_jobs,
        };
        let (kind, priority) = (head.kind, head.priority);
        let (job, queue_position) = match sh.jobs.register(head, new, arrival)? {
            Registered::Duplicate(job_id) => return Ok(duplicate(job_id)),
            Registered::New {
                job,
                queue_position,
            } => (job, queue_position),
        };
        sh.enqueue(&job, partitions);
        tracing::debug!(job = %job.id, %kind, %priority, partitions = n, "job submitted");
        Ok(Submitted {
            job_id: job.id.clone(),
            queue_position,
            duplicate: false,
        })
    }

    /// [`Engine::submit`] on a blocking thread, for async callers: planning a large request
    /// (a PoRep C1 output is tens of MB of JSON) must not stall the runtime's workers.
    ///
    /// At most a few plans run at once (a quarter of the synthesis slots, at least two); the
    /// others wait their turn here without holding a thread.
    pub async fn submit_async(&self, req: ProofRequest) -> Result<Submitted, EngineError> {
        self.submit_async_with(req, None).await
    }

    /// [`Engine::submit_with`] on a blocking thread, as [`Engine::submit_async`].
    pub async fn submit_async_with(
        &self,
        req: ProofRequest,
        arrival: Option<RequestPermit>,
    ) -> Result<Submitted, EngineError> {
        let permit = self
            .shared
            .plan_permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| EngineError::ShuttingDown)?;
        let engine = self.clone();
        tokio::task::spawn_blocking(move || {
            let r = engine.submit_with(req, arrival);
            drop(permit);
            r
        })
        .await
        .map_err(|e| EngineError::Internal(format!("submit task: {e}")))?
    }

    /// Waits for a job's outcome; with a timeout, returns `JobState::TimedOut` when it passes
    /// (the job goes on). Unknown id: `NotFound`.
    pub async fn wait(
        &self,
        job_id: &str,
        timeout: Option<Duration>,
    ) -> Result<JobOutcome, EngineError> {
        let job = self.shared.jobs.get(job_id)?;
        Ok(job.outcome(timeout).await)
    }

    /// Cancels a job: its queued partitions never start, in-flight ones are dropped at their
    /// next stage boundary (a running kernel is not interrupted) and their memory returns.
    /// Returns whether any partition had started. Unknown id: `NotFound`.
    pub fn cancel(&self, job_id: &str) -> Result<bool, EngineError> {
        let job = self.shared.jobs.get(job_id)?;
        let was_running = {
            let p = job.progress.lock();
            if p.finished_at.is_some() {
                return Ok(false);
            }
            p.started
        };
        self.shared.finish_job(&job, JobState::Cancelled);
        Ok(was_running)
    }

    /// An empty permit on the request buffer (`memory.request_buffer`). The server grows it
    /// as a message arrives ([`RequestPermit::take_waiting`]), so messages still on the wire
    /// count against the same slice as queued jobs' payloads, and hands it to
    /// [`Engine::submit_async_with`].
    pub fn request_permit(&self) -> RequestPermit {
        self.shared.jobs.request_permit()
    }

    /// The engine's state.
    pub fn status(&self) -> EngineStatus {
        EngineStatus::of(&self.shared)
    }

    /// Status and counters as Prometheus text exposition.
    pub fn prometheus(&self) -> String {
        crate::prometheus::render(&self.status())
    }

    /// Per-partition stage timestamps (the most recent `timeline_capacity` partitions).
    pub fn timeline(&self) -> Vec<PartitionTimeline> {
        self.shared.metrics.timeline()
    }

    /// The sampled reserved-bytes curve.
    pub fn memory_samples(&self) -> Vec<MemorySample> {
        self.shared.metrics.samples()
    }

    /// The memory budget (for inspection; reserving from it directly bypasses scheduling).
    pub fn budget(&self) -> &MemoryBudget {
        &self.shared.budget
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Calibrated working-set estimates per circuit id.
    pub fn estimates(&self) -> Vec<(String, WorkingSetEstimate)> {
        self.shared.estimator.all()
    }

    /// Loads a circuit's SRS now (under a reservation) and keeps it cached.
    pub async fn preload_srs(&self, circuit_id: &str) -> Result<PreloadOutcome, EngineError> {
        let a = self.shared.srs.get(circuit_id, Priority::Normal).await?;
        Ok(PreloadOutcome {
            already_loaded: a.was_loaded,
            load_time: a.load_time,
        })
    }

    /// Evicts a circuit's SRS (deferred until idle if in use). Unknown id: `UnknownCircuit`.
    pub fn evict_srs(&self, circuit_id: &str) -> Result<EvictOutcome, EngineError> {
        let (was_loaded, freed_bytes) = self.shared.srs.evict(circuit_id);
        if !was_loaded {
            self.shared.planner.params_path(circuit_id)?;
        }
        Ok(EvictOutcome {
            was_loaded,
            freed_bytes,
        })
    }

    /// Stops accepting work, lets running and queued jobs finish for up to `drain_timeout`,
    /// cancels the rest, stops the workers and returns every reservation.
    pub async fn shutdown(&self, drain_timeout: Duration) {
        let sh = &self.shared;
        sh.stop_accepting();
        let deadline = tokio::time::Instant::now() + drain_timeout;
        while let Some(job) = sh.jobs.unfinished().first().cloned() {
            if tokio::time::timeout_at(deadline, job.ended())
                .await
                .is_err()
            {
                break;
            }
        }
        for j in sh.jobs.all() {
            sh.finish_job(&j, JobState::Cancelled);
        }
        sh.stop_pipeline().await;
        sh.buffers.clear();
        sh.srs.evict_all_idle();
        sh.jobs.close_requests();
        sh.budget.close();
        tracing::info!(reserved = sh.budget.reserved(), "engine stopped");
    }
}

/// Plans `req`, turning a panic inside the planner (a proof kind's code meeting input it did
/// not expect) into a typed error for this request: the caller gets INVALID_ARGUMENT, not a
/// reset stream, and the daemon keeps serving.
fn plan_guarded(planner: &dyn Planner, req: ProofRequest) -> Result<JobPlan, EngineError> {
    let kind = req.kind();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| planner.plan(req))) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            tracing::warn!(%kind, cause = %what, "planning panicked");
            Err(EngineError::InvalidRequest(format!(
                "the {} request could not be planned: {}",
                kind,
                crate::request::clip(&what)
            )))
        }
    }
}
