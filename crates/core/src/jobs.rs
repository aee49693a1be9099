//! The job registry: every job by id and by request id (kept for `result_retention` after
//! it ends), each job's progress and outcome, and the request buffer, of which every
//! unfinished job holds a [`RequestPermit`] for its payload bytes.
use crate::budget::Reservation;
use crate::error::EngineError;
use crate::metrics::Metrics;
use crate::planner::{FinishFn, VerifyFn};
use crate::request::{JobOutcome, JobState, JobTimings, Priority, ProofKind, ProofRequest};
pub use crate::request_buffer::RequestPermit;
use crate::request_buffer::RequestPool;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What the registry keeps of a request, read before the request moves into the planner.
pub(crate) struct RequestHead {
    /// The caller's idempotency key (empty: none).
    pub(crate) request_id: String,
    /// What it proves.
    pub(crate) kind: ProofKind,
    /// Its scheduling priority.
    pub(crate) priority: Priority,
    /// [`ProofRequest::payload_bytes`].
    pub(crate) payload_bytes: u64,
    /// [`ProofRequest::digest`], when it has a request id (only then is it compared).
    pub(crate) digest: Option<[u8; 32]>,
}

impl RequestHead {
    /// The head of `req`.
    pub(crate) fn of(req: &ProofRequest) -> RequestHead {
        RequestHead {
            request_id: req.request_id.clone(),
            kind: req.kind(),
            priority: req.priority,
            payload_bytes: req.payload_bytes(),
            digest: (!req.request_id.is_empty()).then(|| req.digest()),
        }
    }
}

/// What a completed job made with TIMING-ONLY parameters says about its proof.
pub(crate) const TIMING_ONLY_NOTE: &str = "TIMING-ONLY parameters ([allow] timing_only): this \
    proof DOES NOT VERIFY; it was neither self-checked nor verified";

/// What changes while a job runs; behind [`Job::progress`].
pub(crate) struct JobProgress {
    /// Partition proofs by index, until the last one arrives.
    pub(crate) proofs: Vec<Option<Vec<u8>>>,
    /// Partition proofs stored.
    pub(crate) done: usize,
    /// Whether a partition was admitted.
    pub(crate) started: bool,
    /// When the first partition was admitted.
    pub(crate) first_admit: Option<Instant>,
    /// Time spent per stage, summed over partitions.
    pub(crate) timings: JobTimings,
    /// The plan's whole-proof check.
    pub(crate) verify: Option<Arc<VerifyFn>>,
    /// The plan's whole-proof finishing step.
    pub(crate) finish: Option<Arc<FinishFn>>,
    /// A partition was proved with TIMING-ONLY parameters: the proof does not verify.
    pub(crate) timing_only: bool,
    /// The job's share of the request buffer, held until the job ends.
    request: Option<RequestPermit>,
    /// When the job ended.
    pub(crate) finished_at: Option<Instant>,
}

/// One submitted job.
pub(crate) struct Job {
    /// `job-` and 16 random hex digits: not guessable, so one client cannot name (wait on,
    /// cancel) another's job without having been told its id.
    pub(crate) id: String,
    /// The caller's id, for de-duplication (may be empty).
    pub(crate) request_id: String,
    /// [`ProofRequest::digest`] of the request, when it carried a request id: a later submit
    /// with that id is this job only if its digest is the same.
    digest: Option<[u8; 32]>,
    /// The proof kind.
    pub(crate) kind: ProofKind,
    /// The scheduling priority.
    pub(crate) priority: Priority,
    /// Submission order, the tie-break between jobs of one priority.
    pub(crate) seq: u64,
    /// When `submit` registered it.
    submitted: Instant,
    /// Partitions.
    pub(crate) n: usize,
    /// Set when the job ends other than by completing: in-flight partitions drop at their next
    /// check, waits for memory or SRS are abandoned.
    cancel: watch::Sender<bool>,
    /// The outcome, once known; `wait` subscribes.
    outcome: watch::Sender<Option<JobOutcome>>,
    /// Proofs, timings and state, under one lock.
    pub(crate) progress: Mutex<JobProgress>,
}

impl Job {
    /// Whether the job ended other than by completing.
    pub(crate) fn cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// Returns once the job ended other than by completing.
    pub(crate) async fn wait_cancelled(&self) {
        let mut rx = self.cancel.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }

    /// Whether the job ended.
    pub(crate) fn finished(&self) -> bool {
        self.progress.lock().finished_at.is_some()
    }

    /// Whether the job ended failed or cancelled: a submit with its request id then starts
    /// afresh instead of getting this outcome back.
    fn retryable(&self) -> bool {
        matches!(
            self.outcome.borrow().as_ref().map(|o| &o.state),
            Some(JobState::Failed { .. } | JobState::Cancelled)
        )
    }

    /// Whether a partition was admitted.
    pub(crate) fn started(&self) -> bool {
        self.progress.lock().started
    }

    /// Returns once the job ended.
    pub(crate) async fn ended(&self) {
        let mut rx = self.outcome.subscribe();
        let _ = rx.wait_for(|o| o.is_some()).await;
    }

    /// The outcome, waiting for it up to `timeout`; past it, `TimedOut` with the timings so far.
    pub(crate) async fn outcome(&self, timeout: Option<Duration>) -> JobOutcome {
        let mut rx = self.outcome.subscribe();
        let fut = async {
            rx.wait_for(|o| o.is_some())
                .await
                .map(|o| o.clone())
                .ok()
                .flatten()
        };
        let out = match timeout {
            Some(t) => tokio::time::timeout(t, fut).await.ok().flatten(),
            None => fut.await,
        };
        out.unwrap_or_else(|| {
            let p = self.progress.lock();
            let mut timings = p.timings;
            timings.total = self.submitted.elapsed();
            timings.queue_wait = p
                .first_admit
                .map_or(timings.total, |t| t.duration_since(self.submitted));
            JobOutcome {
                job_id: self.id.clone(),
                state: JobState::TimedOut,
                timings,
                note: None,
            }
        })
    }

    /// Notes that a partition was admitted.
    pub(crate) fn mark_admitted(&self) {
        let mut p = self.progress.lock();
        p.started = true;
        p.first_admit.get_or_insert_with(Instant::now);
    }

    /// Ends the job once: publishes the outcome, counts it, gives its request bytes back and,
    /// unless it completed, signals its in-flight partitions. Returns true when this call ended
    /// it other than by completing: its queued partitions are then the caller's to drop.
    pub(crate) fn end(&self, state: JobState, metrics: &Metrics) -> bool {
        let timings = {
            let mut p = self.progress.lock();
            if p.finished_at.is_some() {
                return false;
            }
            let now = Instant::now();
            p.finished_at = Some(now);
            p.timings.total = now.duration_since(self.submitted);
            p.timings.queue_wait = p
                .first_admit
                .map_or(p.timings.total, |t| t.duration_since(self.submitted));
            p.proofs.clear();
            drop(p.request.take());
            (p.timings, p.timing_only)
        };
        let (timings, timing_only) = timings;
        use crate::latency::Outcome;
        let outcome = match &state {
            JobState::Completed { .. } => Outcome::Completed,
            JobState::Failed { error } => {
                tracing::warn!(job = %self.id, cause = %error, "job failed");
                Outcome::Failed
            }
            _ => Outcome::Cancelled,
        };
        metrics.latency.record(self.kind, outcome, &timings);
        let completed = matches!(state, JobState::Completed { .. });
        let note = (completed && timing_only).then(|| TIMING_ONLY_NOTE.to_string());
        self.outcome.send_replace(Some(JobOutcome {
            job_id: self.id.clone(),
            state,
            timings,
            note,
        }));
        if !completed {
            self.cancel.send_replace(true);
        }
        !completed
    }
}

/// A job to register: what [`Registry::register`] needs beyond the request.
pub(crate) struct NewJob {
    /// Partitions.
    pub(crate) partitions: usize,
    /// The plan's whole-proof check.
    pub(crate) verify: Option<VerifyFn>,
    /// The plan's whole-proof finishing step.
    pub(crate) finish: Option<FinishFn>,
    /// Unfinished jobs allowed at once.
    pub(crate) max_queued: usize,
}

/// What [`Registry::register`] did.
pub(crate) enum Registered {
    /// A job with the request's id exists: this one.
    Duplicate(String),
    /// A new job, and the unstarted jobs of its priority or higher ahead of it.
    New {
        /// The job.
        job: Arc<Job>,
        /// Unstarted jobs ahead of it.
        queue_position: u32,
    },
}

/// The maps behind [`Registry`]'s lock.
#[derive(Default)]
struct Jobs {
    /// Jobs by job id.
    by_id: HashMap<String, Arc<Job>>,
    /// Job ids by request id (requests that carried one).
    by_request: HashMap<String, String>,
}

/// Every job, unfinished or recently ended, and the request buffer.
pub(crate) struct Registry {
    /// Jobs by id and by request id.
    jobs: Mutex<Jobs>,
    /// The request buffer, shared with the permits jobs hold.
    requests: Arc<RequestPool>,
    /// The next job's sequence number.
    next_seq: AtomicU64,
}

impl Registry {
    /// An empty registry whose request buffer is `slice`.
    pub(crate) fn new(slice: Reservation) -> Registry {
        Registry {
            jobs: Mutex::new(Jobs::default()),
            requests: Arc::new(RequestPool::new(slice)),
            next_seq: AtomicU64::new(1),
        }
    }

    /// The job a submit of `req` is a duplicate of, if any: the job of its request id, unless
    /// that one failed or was cancelled (a retry starts afresh). A request id held by a job of
    /// another request (another digest) is a [`EngineError::RequestIdConflict`].
    pub(crate) fn duplicate_of(&self, req: &RequestHead) -> Result<Option<String>, EngineError> {
        Self::find_duplicate(&self.jobs.lock(), req)
    }

    fn find_duplicate(jobs: &Jobs, req: &RequestHead) -> Result<Option<String>, EngineError> {
        if req.request_id.is_empty() {
            return Ok(None);
        }
        let Some(job) = jobs
            .by_request
            .get(&req.request_id)
            .and_then(|id| jobs.by_id.get(id))
        else {
            return Ok(None);
        };
        if job.digest != req.digest {
            return Err(EngineError::RequestIdConflict(format!(
                "request_id `{}` belongs to job {} of a different request (kind, registered \
                 proof or payload differ); send this request with a request_id of its own",
                crate::request::clip(&req.request_id),
                job.id
            )));
        }
        Ok((!job.retryable()).then(|| job.id.clone()))
    }

    /// A job by id. Unknown id: `NotFound`.
    pub(crate) fn get(&self, job_id: &str) -> Result<Arc<Job>, EngineError> {
        self.jobs
            .lock()
            .by_id
            .get(job_id)
            .cloned()
            .ok_or_else(|| EngineError::NotFound(format!("job `{job_id}`")))
    }

    /// Registers a job for `req`, unless it is a duplicate (see [`Registry::duplicate_of`]),
    /// its payload held by `arrival` (resized to it) or taken from the request buffer. Too
    /// many unfinished jobs, or a payload that does not fit the request buffer: `QueueFull`.
    pub(crate) fn register(
        &self,
        req: RequestHead,
        new: NewJob,
        arrival: Option<RequestPermit>,
    ) -> Result<Registered, EngineError> {
        let mut jobs = self.jobs.lock();
        // Re-check under the lock: two submits with one request id race here.
        if let Some(id) = Self::find_duplicate(&jobs, &req)? {
            return Ok(Registered::Duplicate(id));
        }
        let active: Vec<&Arc<Job>> = jobs.by_id.values().filter(|j| !j.finished()).collect();
        if active.len() >= new.max_queued {
            return Err(EngineError::QueueFull(format!(
                "{} jobs queued or running (limit {})",
                active.len(),
                new.max_queued
            )));
        }
        let queue_position = active
            .iter()
            .filter(|j| j.priority >= req.priority && !j.started())
            .count() as u32;
        // The bytes the message held while it arrived become the payload's (no other message
        // can take them in between); without them, they are taken now.
        let request = match arrival {
            Some(mut permit) => {
                permit.resize(req.payload_bytes)?;
                permit
            }
            None => self.requests.try_take(req.payload_bytes)?,
        };
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        let job = Arc::new(Job {
            id: random_job_id(&jobs),
            request_id: req.request_id.clone(),
            digest: req.digest,
            kind: req.kind,
            priority: req.priority,
            seq,
            submitted: Instant::now(),
            n: new.partitions,
            cancel: watch::channel(false).0,
            outcome: watch::channel(None).0,
            progress: Mutex::new(JobProgress {
                proofs: vec![None; new.partitions],
                done: 0,
                started: false,
                first_admit: None,
                timings: JobTimings::default(),
                verify: new.verify.map(Arc::new),
                finish: new.finish.map(Arc::new),
                timing_only: false,
                request: Some(request),
                finished_at: None,
            }),
        });
        jobs.by_id.insert(job.id.clone(), job.clone());
        if !req.request_id.is_empty() {
            jobs.by_request.insert(req.request_id, job.id.clone());
        }
        Ok(Registered::New {
            job,
            queue_position,
        })
    }

    /// Every job in the registry.
    pub(crate) fn all(&self) -> Vec<Arc<Job>> {
        self.jobs.lock().by_id.values().cloned().collect()
    }

    /// Jobs that have not ended.
    pub(crate) fn unfinished(&self) -> Vec<Arc<Job>> {
        let jobs = self.jobs.lock();
        jobs.by_id
            .values()
            .filter(|j| !j.finished())
            .cloned()
            .collect()
    }

    /// Forgets jobs that ended more than `retention` ago.
    pub(crate) fn purge_expired(&self, retention: Duration) {
        let mut jobs = self.jobs.lock();
        let expired: Vec<String> = jobs
            .by_id
            .values()
            .filter(|j| {
                j.progress
                    .lock()
                    .finished_at
                    .is_some_and(|t| t.elapsed() > retention)
            })
            .map(|j| j.id.clone())
            .collect();
        for id in expired {
            if let Some(j) = jobs.by_id.remove(&id) {
                // A retry may have taken the request id over since.
                if jobs.by_request.get(&j.request_id) == Some(&j.id) {
                    jobs.by_request.remove(&j.request_id);
                }
            }
        }
    }

    /// An empty permit on the request buffer, to grow as a message arrives.
    pub(crate) fn request_permit(&self) -> RequestPermit {
        RequestPermit::empty(self.requests.clone())
    }

    /// Bytes the request buffer's permits hold (unfinished jobs' payloads, messages being
    /// received).
    pub(crate) fn request_bytes_in_use(&self) -> u64 {
        self.requests.in_use()
    }

    /// Gives the request buffer back to the budget (shutdown).
    pub(crate) fn close_requests(&self) {
        let slice = self.requests.take_slice();
        drop(slice);
    }
}

/// `job-` and 16 random hex digits, not already in use.
fn random_job_id(jobs: &Jobs) -> String {
    use rand_core::RngCore;
    loop {
        let id = format!("job-{:016x}", rand_core::OsRng.next_u64());
        if !jobs.by_id.contains_key(&id) {
            return id;
        }
    }
}
