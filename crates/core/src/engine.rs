//! The engine: accepts jobs, splits them into partitions, and drives them through admission
//! (SRS + memory reservation), synthesis, the provers and the finalizers to an assembled,
//! checked proof.
//!
//! ```text
//! submit ─▶ queue (priority, FIFO) ─▶ admission: synthesis permit, SRS handle, reservation
//!        ─▶ synthesis (blocking pool) ─▶ bounded channel ─▶ prover workers (device interlock)
//!        ─▶ finalizers (finish, self-check) ─▶ assembler ─▶ outcome
//! ```
//!
//! Memory safety by construction: a partition's reservation is taken before synthesis
//! allocates, travels with the partition through the channel (the synthesis permit too, until
//! the send is accepted), shrinks after `start` frees a/b/c, and is dropped after `finish`.
//! Admission is one task, so at most one partition waits for memory at a time and no waiter
//! holds memory another waiter needs (no hold-and-wait cycle between partitions).
use crate::budget::{BudgetSnapshot, Category, MemoryBudget, Reservation};
use crate::config::Config;
use crate::error::{BudgetError, EngineError};
use crate::estimate::{resident_bytes, Estimator, WorkingSetEstimate};
use crate::metrics::{MemorySample, Metrics, PartitionTimeline, Stage, StageGauges, TimelineRow};
use crate::planner::{FinishFn, PartitionPlan, Planner, SynthesisContext, VerifyFn};
use crate::request::{
    JobOutcome, JobState, JobTimings, Priority, ProofKind, ProofRequest, Submitted,
};
use crate::reuse::BufferPool;
use crate::srs::{SrsCache, SrsEntryStatus, SrsHandle};
use cuzk_groth16::prover::PendingG2;
use cuzk_groth16::{Pending, ProverBackend, Scalar, Synthesized};
use ff::Field;
use parking_lot::Mutex;
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch, Notify, Semaphore};
use tokio::task::JoinHandle;

/// What `preload_srs` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreloadOutcome {
    /// It was loaded already.
    pub already_loaded: bool,
    /// Time the load took (zero if already loaded).
    pub load_time: Duration,
}

/// What `evict_srs` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvictOutcome {
    /// It was loaded.
    pub was_loaded: bool,
    /// Bytes given back now (0 if it was in use: it is then evicted when its last user ends).
    pub freed_bytes: u64,
}

/// Jobs of one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueStatus {
    /// The kind.
    pub kind: ProofKind,
    /// Jobs none of whose partitions has started.
    pub pending: u32,
    /// Jobs with at least one partition started and not finished.
    pub in_progress: u32,
}

/// One prover backend (device).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceStatus {
    /// Index among the engine's backends.
    pub index: u32,
    /// The backend's name (`cpu`, `cuda:0`).
    pub name: String,
    /// The job whose partition holds the device now.
    pub current_job: Option<String>,
    /// That job's kind.
    pub current_kind: Option<ProofKind>,
    /// Time spent inside `start` since the engine started.
    pub busy: Duration,
    /// Partitions proved on it.
    pub partitions: u64,
    /// The device's memory as (total, free) bytes, if the backend has a device.
    pub memory: Option<(u64, u64)>,
}

/// The engine's state at a glance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineStatus {
    /// Per proof kind (every kind listed).
    pub queues: Vec<QueueStatus>,
    /// SRS entries (hot, warm, cold).
    pub srs: Vec<SrsEntryStatus>,
    /// Budget total, reserved (by category), peaks, waiters.
    pub budget: BudgetSnapshot,
    /// Request-payload bytes in use within the request buffer.
    pub request_bytes_in_use: u64,
    /// Finished partitions' buffer sets kept for reuse, and the bytes reserved for them
    /// (part of the working-set category).
    pub kept_buffers: (usize, u64),
    /// Partitions per stage.
    pub stages: StageGauges,
    /// Jobs completed since start.
    pub total_completed: u64,
    /// Jobs failed since start.
    pub total_failed: u64,
    /// Jobs cancelled since start.
    pub total_cancelled: u64,
    /// Time since the engine started.
    pub uptime: Duration,
    /// Prover backends.
    pub devices: Vec<DeviceStatus>,
    /// False once shutdown began.
    pub accepting: bool,
}

type TaskKey = (Reverse<Priority>, u64, usize);

struct JobProgress {
    proofs: Vec<Option<Vec<u8>>>,
    done: usize,
    started: bool,
    first_admit: Option<Instant>,
    timings: JobTimings,
    verify: Option<Arc<VerifyFn>>,
    finish: Option<Arc<FinishFn>>,
    payload_bytes: u64,
    finished_at: Option<Instant>,
}

struct Job {
    id: String,
    request_id: String,
    kind: ProofKind,
    priority: Priority,
    seq: u64,
    submitted: Instant,
    n: usize,
    /// Set when the job ends other than by completing: in-flight partitions drop at their next
    /// check, waits for memory or SRS are abandoned.
    cancel: watch::Sender<bool>,
    /// The outcome, once known; `wait` subscribes.
    outcome: watch::Sender<Option<JobOutcome>>,
    progress: Mutex<JobProgress>,
}

impl Job {
    fn cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    async fn wait_cancelled(&self) {
        let mut rx = self.cancel.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }

    fn finished(&self) -> bool {
        self.progress.lock().finished_at.is_some()
    }
}

/// Keeps a partition's stage gauge and timeline row honest on every exit path.
struct Tracker {
    metrics: Arc<Metrics>,
    stage: Option<Stage>,
    row: TimelineRow,
}

impl Tracker {
    fn to(&mut self, stage: Stage) {
        self.metrics.move_stage(self.stage, Some(stage));
        self.stage = Some(stage);
    }

    fn stamp(&self, f: impl FnOnce(&mut PartitionTimeline, Duration)) {
        let now = self.metrics.now();
        f(&mut self.row.lock(), now);
    }

    fn outcome(&self, o: &str) {
        self.row.lock().outcome = o.to_string();
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.metrics.move_stage(self.stage.take(), None);
        let mut r = self.row.lock();
        if r.outcome.is_empty() {
            r.outcome = "cancelled".into();
        }
    }
}

struct PartitionTask {
    job: Arc<Job>,
    plan: PartitionPlan,
    tracker: Tracker,
}

/// A synthesized partition on its way to a prover, with the memory and SRS it holds.
struct ProverItem {
    job: Arc<Job>,
    index: usize,
    circuit_id: String,
    public_inputs: Vec<Scalar>,
    circuit: Synthesized,
    reservation: Reservation,
    srs: SrsHandle,
    tracker: Tracker,
    flight: FlightGuard,
}

struct Device {
    backend: Arc<dyn ProverBackend>,
    name: String,
    /// Held for the duration of `start`: one heavy phase per device at a time, while the other
    /// worker of the device already holds its next partition, ready to go.
    interlock: tokio::sync::Mutex<()>,
    current: Mutex<Option<(String, ProofKind)>>,
    busy_ns: AtomicU64,
    partitions: AtomicU64,
}

struct Shared {
    config: Config,
    budget: MemoryBudget,
    planner: Arc<dyn Planner>,
    srs: SrsCache,
    estimator: Estimator,
    metrics: Arc<Metrics>,
    devices: Vec<Device>,
    jobs: Mutex<Jobs>,
    /// Partitions waiting for admission, highest priority then oldest job first.
    queue: Mutex<BTreeMap<TaskKey, PartitionTask>>,
    /// Wakes the admission task when a partition is queued.
    queue_notify: Notify,
    accepting: AtomicBool,
    /// Tells background tasks to stop (shutdown).
    stopping: watch::Sender<bool>,
    /// The budget slice set aside for request payloads; `request_in_use` counts what is used.
    request_pool: Mutex<Option<Reservation>>,
    request_in_use: AtomicU64,
    /// Limits partitions synthesizing at once (memory bandwidth), separately from the budget.
    synth_permits: Arc<Semaphore>,
    /// Limits concurrent `finish` + self-check work.
    finalize_permits: Arc<Semaphore>,
    /// Finished partitions' buffers kept for the next synthesis (reserved, reclaimable).
    buffers: Arc<BufferPool>,
    /// The provers' channel; taken at shutdown so the workers see it close.
    prover_tx: Mutex<Option<mpsc::Sender<ProverItem>>>,
    /// Partitions between admission and the assembler (for a clean shutdown).
    in_flight: AtomicUsize,
    in_flight_zero: Notify,
    next_seq: AtomicU64,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

#[derive(Default)]
struct Jobs {
    by_id: HashMap<String, Arc<Job>>,
    by_request: HashMap<String, String>,
}

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

fn pending_bytes(p: &Pending) -> u64 {
    const FIXED: u64 = 1024;
    match &p.b_g2 {
        PendingG2::Done(_) => FIXED,
        PendingG2::Deferred {
            inputs,
            aux,
            b_input_density,
            b_aux_density,
        } => {
            FIXED
                + 32 * (inputs.capacity() + aux.capacity()) as u64
                + 8 * (b_input_density.words.capacity() + b_aux_density.words.capacity()) as u64
        }
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
        let budget = MemoryBudget::new(config.budget_bytes);
        let request_pool = budget
            .try_acquire(config.request_buffer_bytes, Category::Requests)
            .ok_or_else(|| EngineError::Config("request buffer does not fit the budget".into()))?;
        let srs = SrsCache::new(budget.clone(), planner.clone());
        let buffers = Arc::new(BufferPool::new(config.reuse_buffers));
        {
            // Kept partition buffers go first (cheap to make again), then idle SRSs.
            let (pool, evict_srs) = (Arc::downgrade(&buffers), srs.reclaimer());
            budget.set_reclaimer(Arc::new(move |shortfall| {
                let freed = pool.upgrade().map_or(0, |p| p.reclaim(shortfall));
                if freed < shortfall {
                    evict_srs(shortfall - freed);
                }
            }));
        }
        for id in &config.preload {
            srs.note_known(id);
        }
        let samples_cap = config.timeline_capacity.max(1000);
        let metrics = Arc::new(Metrics::new(config.timeline_capacity, samples_cap));
        let devices = backends
            .into_iter()
            .map(|b| Device {
                name: b.name(),
                backend: b,
                interlock: tokio::sync::Mutex::new(()),
                current: Mutex::new(None),
                busy_ns: AtomicU64::new(0),
                partitions: AtomicU64::new(0),
            })
            .collect::<Vec<_>>();
        let (tx, rx) = mpsc::channel::<ProverItem>(config.channel_capacity);
        let (stopping, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            synth_permits: Arc::new(Semaphore::new(config.synthesis_concurrency)),
            finalize_permits: Arc::new(Semaphore::new(config.finalizers)),
            config,
            budget,
            planner,
            srs,
            estimator: Estimator::default(),
            metrics,
            devices,
            jobs: Mutex::new(Jobs::default()),
            queue: Mutex::new(BTreeMap::new()),
            queue_notify: Notify::new(),
            accepting: AtomicBool::new(true),
            stopping,
            request_pool: Mutex::new(Some(request_pool)),
            request_in_use: AtomicU64::new(0),
            buffers,
            prover_tx: Mutex::new(Some(tx)),
            in_flight: AtomicUsize::new(0),
            in_flight_zero: Notify::new(),
            next_seq: AtomicU64::new(1),
            tasks: Mutex::new(Vec::new()),
        });
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(admission_loop(shared.clone())));
        tasks.push(tokio::spawn(sampler_loop(shared.clone())));
        for d in 0..shared.devices.len() {
            for _ in 0..shared.config.prover_workers_per_device {
                tasks.push(tokio::spawn(prover_worker(shared.clone(), d, rx.clone())));
            }
        }
        for id in shared.config.preload.clone() {
            let sh = shared.clone();
            tokio::spawn(async move {
                match sh.srs.get(&id, Priority::Normal).await {
                    Ok(a) => {
                        tracing::info!(circuit = %id, ms = a.load_time.as_millis() as u64, "preloaded SRS")
                    }
                    Err(e) => tracing::warn!(circuit = %id, cause = %e, "SRS preload failed"),
                }
            });
        }
        *shared.tasks.lock() = tasks;
        Ok(Engine { shared })
    }

    /// Submits a request: plans it (bad input fails here), queues its partitions.
    ///
    /// Planning runs on the caller's thread; for large payloads call it from a blocking
    /// context (`spawn_blocking`).
    pub fn submit(&self, req: ProofRequest) -> Result<Submitted, EngineError> {
        let sh = &self.shared;
        if !sh.accepting.load(Ordering::SeqCst) {
            return Err(EngineError::ShuttingDown);
        }
        if !req.request_id.is_empty() {
            if let Some(job) = self.job_by_request(&req.request_id) {
                return Ok(Submitted {
                    job_id: job.id.clone(),
                    queue_position: 0,
                    duplicate: true,
                });
            }
        }
        let plan = sh.planner.plan(&req)?;
        if plan.partitions.is_empty() {
            return Err(EngineError::InvalidRequest(
                "the request has no partitions".into(),
            ));
        }
        let n = plan.partitions.len();
        let mut seen = vec![false; n];
        for p in &plan.partitions {
            if p.index >= n || std::mem::replace(&mut seen[p.index], true) {
                return Err(EngineError::Internal(format!(
                    "planner returned partition index {} twice or out of 0..{n}",
                    p.index
                )));
            }
        }
        self.check_fits(&plan.partitions)?;
        let payload = req.payload_bytes();
        let pool = sh.request_pool.lock().as_ref().map_or(0, |r| r.bytes());
        let mut jobs = sh.jobs.lock();
        // Re-check under the lock: two submits with one request id race here.
        if !req.request_id.is_empty() {
            if let Some(id) = jobs.by_request.get(&req.request_id) {
                return Ok(Submitted {
                    job_id: id.clone(),
                    queue_position: 0,
                    duplicate: true,
                });
            }
        }
        let active: Vec<&Arc<Job>> = jobs.by_id.values().filter(|j| !j.finished()).collect();
        if active.len() >= sh.config.max_queued_jobs {
            return Err(EngineError::QueueFull(format!(
                "{} jobs queued or running (limit {})",
                active.len(),
                sh.config.max_queued_jobs
            )));
        }
        let queue_position = active
            .iter()
            .filter(|j| j.priority >= req.priority && !j.progress.lock().started)
            .count() as u32;
        let in_use = sh.request_in_use.fetch_add(payload, Ordering::SeqCst);
        if in_use + payload > pool {
            sh.request_in_use.fetch_sub(payload, Ordering::SeqCst);
            return Err(EngineError::QueueFull(format!(
                "request payloads would use {} of {} buffered bytes",
                in_use + payload,
                pool
            )));
        }
        let seq = sh.next_seq.fetch_add(1, Ordering::SeqCst);
        let job_id = format!("job-{seq:08}");
        let job = Arc::new(Job {
            id: job_id.clone(),
            request_id: req.request_id.clone(),
            kind: req.kind,
            priority: req.priority,
            seq,
            submitted: Instant::now(),
            n,
            cancel: watch::channel(false).0,
            outcome: watch::channel(None).0,
            progress: Mutex::new(JobProgress {
                proofs: vec![None; n],
                done: 0,
                started: false,
                first_admit: None,
                timings: JobTimings::default(),
                verify: plan.verify.map(Arc::new),
                finish: plan.finish.map(Arc::new),
                payload_bytes: payload,
                finished_at: None,
            }),
        });
        jobs.by_id.insert(job_id.clone(), job.clone());
        if !req.request_id.is_empty() {
            jobs.by_request
                .insert(req.request_id.clone(), job_id.clone());
        }
        drop(jobs);
        {
            let mut q = sh.queue.lock();
            for plan in plan.partitions {
                let row = sh.metrics.add_row(PartitionTimeline {
                    job_id: job_id.clone(),
                    partition: plan.index,
                    circuit_id: plan.circuit_id.clone(),
                    priority: req.priority,
                    queued: sh.metrics.now(),
                    ..Default::default()
                });
                let mut tracker = Tracker {
                    metrics: sh.metrics.clone(),
                    stage: None,
                    row,
                };
                tracker.to(Stage::Queued);
                q.insert(
                    (Reverse(req.priority), seq, plan.index),
                    PartitionTask {
                        job: job.clone(),
                        plan,
                        tracker,
                    },
                );
            }
        }
        sh.queue_notify.notify_one();
        tracing::debug!(job = %job_id, kind = %req.kind, priority = %req.priority, partitions = n, "job submitted");
        Ok(Submitted {
            job_id,
            queue_position,
            duplicate: false,
        })
    }

    /// [`Engine::submit`] on a blocking thread, for async callers: planning a large request
    /// (a PoRep C1 output is tens of MB of JSON) must not stall the runtime's workers.
    pub async fn submit_async(&self, req: ProofRequest) -> Result<Submitted, EngineError> {
        let engine = self.clone();
        tokio::task::spawn_blocking(move || engine.submit(req))
            .await
            .map_err(|e| EngineError::Internal(format!("submit task: {e}")))?
    }

    fn check_fits(&self, parts: &[PartitionPlan]) -> Result<(), EngineError> {
        let sh = &self.shared;
        let total = sh.budget.total();
        for p in parts {
            let srs = sh.srs.size_hint(&p.circuit_id);
            if let Some(s) = srs {
                if s > total {
                    return Err(EngineError::TooLarge {
                        what: format!("SRS {}", p.circuit_id),
                        needed: s,
                        budget: total,
                    });
                }
            }
            let known = p.shape_hint.is_some() || sh.estimator.calibrated(&p.circuit_id).is_some();
            if known {
                let e = sh
                    .estimator
                    .estimate(&p.circuit_id, p.shape_hint, srs, total / 4);
                let need = e.admission_bytes() + srs.unwrap_or(0);
                if need > total {
                    return Err(EngineError::TooLarge {
                        what: format!(
                            "partition {} of {} (working set + SRS)",
                            p.index, p.circuit_id
                        ),
                        needed: need,
                        budget: total,
                    });
                }
            }
        }
        Ok(())
    }

    fn job_by_request(&self, request_id: &str) -> Option<Arc<Job>> {
        let jobs = self.shared.jobs.lock();
        let id = jobs.by_request.get(request_id)?;
        jobs.by_id.get(id).cloned()
    }

    fn job(&self, job_id: &str) -> Result<Arc<Job>, EngineError> {
        self.shared
            .jobs
            .lock()
            .by_id
            .get(job_id)
            .cloned()
            .ok_or_else(|| EngineError::NotFound(format!("job `{job_id}`")))
    }

    /// Waits for a job's outcome; with a timeout, returns `JobState::TimedOut` when it passes
    /// (the job goes on). Unknown id: `NotFound`.
    pub async fn wait(
        &self,
        job_id: &str,
        timeout: Option<Duration>,
    ) -> Result<JobOutcome, EngineError> {
        let job = self.job(job_id)?;
        let mut rx = job.outcome.subscribe();
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
        Ok(out.unwrap_or_else(|| {
            let p = job.progress.lock();
            let mut timings = p.timings;
            timings.total = job.submitted.elapsed();
            timings.queue_wait = p
                .first_admit
                .map_or(timings.total, |t| t.duration_since(job.submitted));
            JobOutcome {
                job_id: job.id.clone(),
                state: JobState::TimedOut,
                timings,
            }
        }))
    }

    /// Cancels a job: its queued partitions never start, in-flight ones are dropped at their
    /// next stage boundary (a running kernel is not interrupted) and their memory returns.
    /// Returns whether any partition had started. Unknown id: `NotFound`.
    pub fn cancel(&self, job_id: &str) -> Result<bool, EngineError> {
        let job = self.job(job_id)?;
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

    /// The engine's state.
    pub fn status(&self) -> EngineStatus {
        let sh = &self.shared;
        let mut per_kind: BTreeMap<ProofKind, (u32, u32)> =
            ProofKind::ALL.iter().map(|&k| (k, (0, 0))).collect();
        for j in sh.jobs.lock().by_id.values() {
            let p = j.progress.lock();
            if p.finished_at.is_some() {
                continue;
            }
            let e = per_kind.entry(j.kind).or_default();
            if p.started {
                e.1 += 1;
            } else {
                e.0 += 1;
            }
        }
        EngineStatus {
            queues: per_kind
                .into_iter()
                .map(|(kind, (pending, in_progress))| QueueStatus {
                    kind,
                    pending,
                    in_progress,
                })
                .collect(),
            srs: sh.srs.status(),
            budget: sh.budget.snapshot(),
            request_bytes_in_use: sh.request_in_use.load(Ordering::Relaxed),
            kept_buffers: sh.buffers.stats(),
            stages: sh.metrics.gauges(),
            total_completed: sh.metrics.completed.load(Ordering::Relaxed),
            total_failed: sh.metrics.failed.load(Ordering::Relaxed),
            total_cancelled: sh.metrics.cancelled.load(Ordering::Relaxed),
            uptime: sh.metrics.now(),
            devices: sh
                .devices
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let cur = d.current.lock().clone();
                    DeviceStatus {
                        index: i as u32,
                        name: d.name.clone(),
                        current_job: cur.as_ref().map(|c| c.0.clone()),
                        current_kind: cur.map(|c| c.1),
                        busy: Duration::from_nanos(d.busy_ns.load(Ordering::Relaxed)),
                        partitions: d.partitions.load(Ordering::Relaxed),
                        memory: d.backend.device_memory(),
                    }
                })
                .collect(),
            accepting: sh.accepting.load(Ordering::SeqCst),
        }
    }

    /// Status and counters as Prometheus text exposition.
    pub fn prometheus(&self) -> String {
        render_prometheus(&self.status())
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
        sh.accepting.store(false, Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + drain_timeout;
        loop {
            let active: Vec<Arc<Job>> = sh
                .jobs
                .lock()
                .by_id
                .values()
                .filter(|j| !j.finished())
                .cloned()
                .collect();
            let Some(job) = active.first() else {
                break;
            };
            let mut rx = job.outcome.subscribe();
            let wait = rx.wait_for(|o| o.is_some());
            if tokio::time::timeout_at(deadline, wait).await.is_err() {
                break;
            }
        }
        let rest: Vec<Arc<Job>> = sh.jobs.lock().by_id.values().cloned().collect();
        for j in rest {
            sh.finish_job(&j, JobState::Cancelled);
        }
        sh.stopping.send_replace(true);
        sh.queue_notify.notify_one();
        sh.prover_tx.lock().take();
        // Partitions in flight finish their current step (a kernel is not interrupted).
        loop {
            let zero = sh.in_flight_zero.notified();
            if sh.in_flight.load(Ordering::SeqCst) == 0 {
                break;
            }
            zero.await;
        }
        let tasks = std::mem::take(&mut *sh.tasks.lock());
        for t in tasks {
            let _ = t.await;
        }
        sh.buffers.clear();
        sh.srs.evict_all_idle();
        sh.request_pool.lock().take();
        sh.budget.close();
        tracing::info!(reserved = sh.budget.reserved(), "engine stopped");
    }
}

impl Shared {
    /// Ends a job once: publishes the outcome, drops its queued partitions, signals in-flight
    /// ones, returns its request bytes. Later calls are no-ops.
    fn finish_job(&self, job: &Arc<Job>, state: JobState) {
        let timings = {
            let mut p = job.progress.lock();
            if p.finished_at.is_some() {
                return;
            }
            let now = Instant::now();
            p.finished_at = Some(now);
            p.timings.total = now.duration_since(job.submitted);
            p.timings.queue_wait = p
                .first_admit
                .map_or(p.timings.total, |t| t.duration_since(job.submitted));
            p.proofs.clear();
            self.request_in_use
                .fetch_sub(p.payload_bytes, Ordering::SeqCst);
            p.timings
        };
        let counter = match &state {
            JobState::Completed { .. } => &self.metrics.completed,
            JobState::Failed { error } => {
                tracing::warn!(job = %job.id, cause = %error, "job failed");
                &self.metrics.failed
            }
            _ => &self.metrics.cancelled,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let completed = matches!(state, JobState::Completed { .. });
        job.outcome.send_replace(Some(JobOutcome {
            job_id: job.id.clone(),
            state,
            timings,
        }));
        if !completed {
            job.cancel.send_replace(true);
            let removed: Vec<PartitionTask> = {
                let mut q = self.queue.lock();
                let lo = (Reverse(job.priority), job.seq, 0);
                let hi = (Reverse(job.priority), job.seq, usize::MAX);
                let keys: Vec<TaskKey> = q.range(lo..=hi).map(|(k, _)| *k).collect();
                keys.into_iter().filter_map(|k| q.remove(&k)).collect()
            };
            drop(removed);
        }
    }

    fn fail(
        &self,
        job: &Arc<Job>,
        index: usize,
        circuit_id: &str,
        what: &str,
        err: impl std::fmt::Display,
    ) {
        self.finish_job(
            job,
            JobState::Failed {
                error: format!("partition {index} ({circuit_id}): {what}: {err}"),
            },
        );
    }

    fn pop_task(&self) -> Option<PartitionTask> {
        self.queue.lock().pop_first().map(|(_, t)| t)
    }

    fn enter_flight(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
    }

    fn leave_flight(&self) {
        if self.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.in_flight_zero.notify_waiters();
        }
    }

    fn purge_expired(&self) {
        let retention = self.config.result_retention;
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
                if !j.request_id.is_empty() {
                    jobs.by_request.remove(&j.request_id);
                }
            }
        }
    }
}

/// Leaves the in-flight count when a partition's processing ends, whatever the path.
struct FlightGuard(Arc<Shared>);

impl Drop for FlightGuard {
    fn drop(&mut self) {
        self.0.leave_flight();
    }
}

async fn sampler_loop(sh: Arc<Shared>) {
    let mut stop = sh.stopping.subscribe();
    let mut tick = tokio::time::interval(sh.config.sample_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_purge = Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let s = sh.budget.snapshot();
        sh.metrics.add_sample(MemorySample {
            at: sh.metrics.now(),
            reserved: s.reserved,
            by_category: s.by_category,
        });
        if last_purge.elapsed() > Duration::from_secs(1) {
            last_purge = Instant::now();
            sh.purge_expired();
        }
    }
}

async fn admission_loop(sh: Arc<Shared>) {
    let mut stop = sh.stopping.subscribe();
    loop {
        let permit = tokio::select! {
            p = sh.synth_permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
            _ = stop.wait_for(|s| *s) => return,
        };
        let task = loop {
            if *stop.borrow() {
                return;
            }
            if let Some(t) = sh.pop_task() {
                break t;
            }
            tokio::select! {
                _ = sh.queue_notify.notified() => {}
                _ = stop.wait_for(|s| *s) => return,
            }
        };
        admit(&sh, task, permit).await;
    }
}

/// Gets the partition's SRS and memory (waiting in priority order), then starts synthesis.
async fn admit(sh: &Arc<Shared>, task: PartitionTask, permit: tokio::sync::OwnedSemaphorePermit) {
    let PartitionTask { job, plan, tracker } = task;
    if job.cancelled() {
        return;
    }
    sh.enter_flight();
    let flight = FlightGuard(sh.clone());
    let prio = job.priority;
    let circuit_id = plan.circuit_id.clone();
    // The load runs in a task of its own: a cancelled job must not abandon a half-done load
    // (its memory would outlive the reservation); the SRS then stays cached, idle.
    let load = {
        let (srs, id) = (sh.srs.clone(), circuit_id.clone());
        tokio::spawn(async move { srs.get(&id, prio).await })
    };
    let acquired = tokio::select! {
        r = load => r.unwrap_or_else(|e| Err(EngineError::Internal(format!("SRS task: {e}")))),
        _ = job.wait_cancelled() => return,
    };
    let acquired = match acquired {
        Ok(a) => a,
        Err(e) => {
            tracker.outcome("failed");
            sh.fail(&job, plan.index, &circuit_id, "SRS", e);
            return;
        }
    };
    if !acquired.was_loaded {
        job.progress.lock().timings.srs_load += acquired.load_time;
    }
    let srs_bytes = sh.srs.size_hint(&circuit_id);
    let total = sh.budget.total();
    let est = sh
        .estimator
        .estimate(&circuit_id, plan.shape_hint, srs_bytes, total / 4);
    let need = est.admission_bytes();
    if need + srs_bytes.unwrap_or(0) > total {
        tracker.outcome("failed");
        sh.finish_job(
            &job,
            JobState::Failed {
                error: EngineError::TooLarge {
                    what: format!(
                        "partition {} of {} (working set + SRS)",
                        plan.index, circuit_id
                    ),
                    needed: need + srs_bytes.unwrap_or(0),
                    budget: total,
                }
                .to_string(),
            },
        );
        return;
    }
    // A finished partition's buffers of this circuit come with the reservation covering them;
    // only what the estimate asks beyond that is acquired.
    let (kept, kept_res) = match sh.buffers.take(&circuit_id) {
        Some((b, r)) => (Some(b), Some(r)),
        None => (None, None),
    };
    let more = need.saturating_sub(kept_res.as_ref().map_or(0, Reservation::bytes));
    let res = match (kept_res, more) {
        (Some(r), 0) => Ok(r),
        (kept_res, more) => {
            let r = tokio::select! {
                r = sh.budget.acquire(more, Category::WorkingSet, prio) => r,
                _ = job.wait_cancelled() => return,
            };
            r.map(|extra| match kept_res {
                Some(mut r) => {
                    // Same budget, same category: merging cannot fail.
                    let _ = r.merge(extra);
                    r
                }
                None => extra,
            })
        }
    };
    let reservation = match res {
        Ok(r) => r,
        Err(BudgetError::Closed) => return,
        Err(e) => {
            tracker.outcome("failed");
            sh.fail(&job, plan.index, &circuit_id, "memory", e);
            return;
        }
    };
    {
        let mut p = job.progress.lock();
        p.started = true;
        p.first_admit.get_or_insert_with(Instant::now);
    }
    tracker.stamp(|r, t| r.admitted = Some(t));
    let sh2 = sh.clone();
    tokio::spawn(synthesize(
        sh2,
        job,
        plan,
        tracker,
        acquired.handle,
        (reservation, kept),
        permit,
        flight,
    ));
}

#[allow(clippy::too_many_arguments)]
async fn synthesize(
    sh: Arc<Shared>,
    job: Arc<Job>,
    plan: PartitionPlan,
    mut tracker: Tracker,
    srs: SrsHandle,
    (mut reservation, reuse): (Reservation, Option<Synthesized>),
    permit: tokio::sync::OwnedSemaphorePermit,
    flight: FlightGuard,
) {
    let PartitionPlan {
        circuit_id,
        index,
        public_inputs,
        synthesize,
        ..
    } = plan;
    tracker.to(Stage::Synthesizing);
    tracker.stamp(|r, t| r.synth_start = Some(t));
    let t0 = Instant::now();
    let ctx = SynthesisContext {
        prepared: srs.prepared.clone(),
        reuse,
    };
    let out = tokio::task::spawn_blocking(move || synthesize(ctx)).await;
    let dt = t0.elapsed();
    tracker.stamp(|r, t| r.synth_end = Some(t));
    job.progress.lock().timings.synthesis += dt;
    let circuit = match out {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            tracker.outcome("failed");
            return sh.fail(&job, index, &circuit_id, "synthesis", e);
        }
        Err(e) => {
            tracker.outcome("failed");
            return sh.fail(&job, index, &circuit_id, "synthesis task", e);
        }
    };
    if job.cancelled() {
        return;
    }
    // Calibrate on the first sample, then hold what the prover will need.
    let est = sh.estimator.calibrate(&circuit_id, &circuit);
    let hold = est.proving.max(resident_bytes(&circuit));
    if hold < reservation.bytes() {
        reservation.shrink_to(hold);
    } else if hold > reservation.bytes() {
        tracing::warn!(circuit = %circuit_id, estimated = reservation.bytes(), actual = hold, "working set above its estimate");
        reservation.grow_unchecked(hold - reservation.bytes());
    }
    tracker.to(Stage::WaitingForProver);
    let tx = sh.prover_tx.lock().clone();
    let Some(tx) = tx else {
        return;
    };
    let item = ProverItem {
        job: job.clone(),
        index,
        circuit_id,
        public_inputs,
        circuit,
        reservation,
        srs,
        tracker,
        flight,
    };
    // The permit is held until the channel accepts the partition: a full channel stops
    // further synthesis instead of letting finished partitions pile up.
    tokio::select! {
        r = tx.send(item) => {
            if let Err(mpsc::error::SendError(item)) = r {
                drop(item);
            }
        }
        _ = job.wait_cancelled() => {}
    }
    drop(permit);
}

fn random_scalar() -> Scalar {
    Scalar::random(rand_core::OsRng)
}

async fn prover_worker(
    sh: Arc<Shared>,
    dev: usize,
    rx: Arc<tokio::sync::Mutex<mpsc::Receiver<ProverItem>>>,
) {
    loop {
        let item = {
            let mut rx = rx.lock().await;
            rx.recv().await
        };
        let Some(item) = item else {
            return;
        };
        let mut item = item;
        item.tracker.stamp(|r, t| r.sent = Some(t));
        if item.job.cancelled() {
            continue;
        }
        let device = &sh.devices[dev];
        let lock = if sh.config.prover_interlock {
            Some(device.interlock.lock().await)
        } else {
            None
        };
        if item.job.cancelled() {
            continue;
        }
        item.tracker.to(Stage::Proving);
        let dev_name = device.name.clone();
        item.tracker.stamp(|r, t| {
            r.prove_start = Some(t);
            r.device = Some(dev_name);
        });
        *device.current.lock() = Some((item.job.id.clone(), item.job.kind));
        let ProverItem {
            job,
            index,
            circuit_id,
            public_inputs,
            circuit,
            mut reservation,
            srs,
            mut tracker,
            flight,
        } = item;
        let backend = device.backend.clone();
        let t0 = Instant::now();
        let reuse = sh.buffers.enabled();
        let out = tokio::task::spawn_blocking(move || {
            let r = if reuse {
                backend.start_reusing(&srs.srs, circuit, random_scalar(), random_scalar())
            } else {
                backend
                    .start(&srs.srs, circuit, random_scalar(), random_scalar())
                    .map(|p| (p, None))
            };
            (r, srs)
        })
        .await;
        let dt = t0.elapsed();
        device
            .busy_ns
            .fetch_add(dt.as_nanos() as u64, Ordering::Relaxed);
        device.partitions.fetch_add(1, Ordering::Relaxed);
        *device.current.lock() = None;
        drop(lock);
        tracker.stamp(|r, t| r.prove_end = Some(t));
        job.progress.lock().timings.prover += dt;
        let ((pending, spent), srs) = match out {
            Ok((Ok(p), srs)) => (p, srs),
            Ok((Err(e), _)) => {
                tracker.outcome("failed");
                sh.fail(&job, index, &circuit_id, "prover start", e);
                continue;
            }
            Err(e) => {
                tracker.outcome("failed");
                sh.fail(&job, index, &circuit_id, "prover task", e);
                continue;
            }
        };
        // a/b/c are gone, or handed back: kept for the next synthesis with the bytes that
        // cover them, unless someone waits for memory (the waiter gets the bytes instead).
        // Freeing gigabytes (unmapping) runs off the runtime's threads, and the bytes are
        // returned to the budget only once the memory is gone.
        if let Some(spent) = spent {
            let part = reservation.split(resident_bytes(&spent).min(reservation.bytes()));
            let freed = if sh.budget.has_waiters() {
                Some((spent, part))
            } else {
                sh.buffers.put(&circuit_id, spent, part)
            };
            if let Some(set) = freed {
                tokio::task::spawn_blocking(move || drop(set));
            }
        }
        // Keep only what the pending proof holds.
        let pend = pending_bytes(&pending);
        if reservation.bytes() < pend {
            reservation.grow_unchecked(pend - reservation.bytes());
        } else {
            reservation.shrink_to(pend);
        }
        tracker.to(Stage::Finalizing);
        let backend = device.backend.clone();
        tokio::spawn(finalize(
            sh.clone(),
            Finalize {
                job,
                index,
                circuit_id,
                public_inputs,
                pending,
                reservation,
                srs,
                tracker,
                backend,
            },
            flight,
        ));
    }
}

struct Finalize {
    job: Arc<Job>,
    index: usize,
    circuit_id: String,
    public_inputs: Vec<Scalar>,
    pending: Pending,
    reservation: Reservation,
    srs: SrsHandle,
    tracker: Tracker,
    backend: Arc<dyn ProverBackend>,
}

async fn finalize(sh: Arc<Shared>, f: Finalize, flight: FlightGuard) {
    let Ok(_permit) = sh.finalize_permits.clone().acquire_owned().await else {
        return;
    };
    let Finalize {
        job,
        index,
        circuit_id,
        public_inputs,
        pending,
        reservation,
        srs,
        tracker,
        backend,
    } = f;
    if job.cancelled() {
        return;
    }
    let self_verify = sh.config.self_verify;
    let t0 = Instant::now();
    let out = tokio::task::spawn_blocking(move || {
        let proof = backend
            .finish(&srs.srs, pending)
            .map_err(|e| format!("prover finish: {e}"))?;
        if self_verify {
            crate::verify::verify_partition(srs.pvk(), &proof, &public_inputs)
                .map_err(|e| format!("self-check: {e}"))?;
        }
        Ok::<_, String>(proof.to_bytes().to_vec())
    })
    .await;
    job.progress.lock().timings.prover += t0.elapsed();
    drop(reservation);
    tracker.stamp(|r, t| r.finished = Some(t));
    let bytes = match out {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => {
            tracker.outcome("failed");
            return sh.fail(&job, index, &circuit_id, "finalize", e);
        }
        Err(e) => {
            tracker.outcome("failed");
            return sh.fail(&job, index, &circuit_id, "finalize task", e);
        }
    };
    sh.metrics.partitions_proved.fetch_add(1, Ordering::Relaxed);
    tracker.outcome("completed");
    drop(tracker);
    assemble(&sh, &job, index, bytes).await;
    drop(flight);
}

/// Stores a partition proof; the last one assembles the job's proof, checks it and completes
/// the job.
async fn assemble(sh: &Arc<Shared>, job: &Arc<Job>, index: usize, bytes: Vec<u8>) {
    let ready = {
        let mut p = job.progress.lock();
        if p.finished_at.is_some() || index >= p.proofs.len() || p.proofs[index].is_some() {
            return;
        }
        p.proofs[index] = Some(bytes);
        p.done += 1;
        if p.done < job.n {
            return;
        }
        let proof: Vec<u8> = p.proofs.iter().flatten().flatten().copied().collect();
        (proof, p.verify.clone(), p.finish.clone())
    };
    let (mut proof, verify, finish) = ready;
    if let Some(f) = finish {
        let res = tokio::task::spawn_blocking(move || f(proof)).await;
        proof = match res {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => {
                return sh.finish_job(
                    job,
                    JobState::Failed {
                        error: format!("finishing the proof: {e}"),
                    },
                )
            }
            Err(e) => {
                return sh.finish_job(
                    job,
                    JobState::Failed {
                        error: format!("finishing task: {e}"),
                    },
                )
            }
        };
    }
    if let Some(v) = verify {
        let pr = proof.clone();
        let res = tokio::task::spawn_blocking(move || v(&pr)).await;
        let err = match res {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(e) => Some(format!("verification task: {e}")),
        };
        if let Some(e) = err {
            sh.finish_job(
                job,
                JobState::Failed {
                    error: format!("assembled proof failed verification: {e}"),
                },
            );
            return;
        }
    }
    sh.finish_job(job, JobState::Completed { proof });
}

fn render_prometheus(s: &EngineStatus) -> String {
    let mut o = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, rows: &[(String, u64)]| {
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} {kind}");
        for (labels, v) in rows {
            if labels.is_empty() {
                let _ = writeln!(o, "{name} {v}");
            } else {
                let _ = writeln!(o, "{name}{{{labels}}} {v}");
            }
        }
    };
    let b = &s.budget;
    metric(
        "cuzk_budget_bytes",
        "gauge",
        "The memory budget.",
        &[(String::new(), b.total)],
    );
    metric(
        "cuzk_reserved_bytes",
        "gauge",
        "Bytes reserved now, by category.",
        &b.by_category
            .iter()
            .map(|(c, v)| (format!("category=\"{}\"", c.name()), *v))
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_reserved_total_bytes",
        "gauge",
        "Bytes reserved now.",
        &[(String::new(), b.reserved)],
    );
    metric(
        "cuzk_reserved_peak_bytes",
        "gauge",
        "Highest reserved total since start.",
        &[(String::new(), b.peak)],
    );
    metric(
        "cuzk_reserved_category_peak_bytes",
        "gauge",
        "Highest reserved bytes of each category since start.",
        &b.peak_by_category
            .iter()
            .map(|(c, v)| (format!("category=\"{}\"", c.name()), *v))
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_budget_waiters",
        "gauge",
        "Reservations waiting for memory.",
        &[(String::new(), b.waiting as u64)],
    );
    metric(
        "cuzk_request_bytes",
        "gauge",
        "Request payload bytes held.",
        &[(String::new(), s.request_bytes_in_use)],
    );
    let g = &s.stages;
    metric(
        "cuzk_partitions",
        "gauge",
        "Partitions in each pipeline stage.",
        &[
            ("stage=\"queued\"".into(), g.queued),
            ("stage=\"synthesizing\"".into(), g.synthesizing),
            ("stage=\"waiting_for_prover\"".into(), g.waiting_for_prover),
            ("stage=\"proving\"".into(), g.proving),
            ("stage=\"finalizing\"".into(), g.finalizing),
        ],
    );
    metric(
        "cuzk_jobs_total",
        "counter",
        "Jobs ended, by outcome.",
        &[
            ("outcome=\"completed\"".into(), s.total_completed),
            ("outcome=\"failed\"".into(), s.total_failed),
            ("outcome=\"cancelled\"".into(), s.total_cancelled),
        ],
    );
    let mut q = Vec::new();
    for x in &s.queues {
        q.push((
            format!("kind=\"{}\",state=\"pending\"", x.kind.name()),
            x.pending as u64,
        ));
        q.push((
            format!("kind=\"{}\",state=\"in_progress\"", x.kind.name()),
            x.in_progress as u64,
        ));
    }
    metric("cuzk_jobs", "gauge", "Jobs queued or running, by kind.", &q);
    metric(
        "cuzk_srs_bytes",
        "gauge",
        "SRS entries and their sizes, by tier.",
        &s.srs
            .iter()
            .map(|e| {
                (
                    format!("circuit_id=\"{}\",tier=\"{}\"", e.circuit_id, e.tier.name()),
                    e.size_bytes,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_srs_refs",
        "gauge",
        "Users of each SRS entry.",
        &s.srs
            .iter()
            .map(|e| {
                (
                    format!("circuit_id=\"{}\"", e.circuit_id),
                    e.ref_count as u64,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_busy_milliseconds_total",
        "counter",
        "Time each prover backend spent in `start`.",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!("device=\"{}\",index=\"{}\"", d.name, d.index),
                    d.busy.as_millis() as u64,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_device_partitions_total",
        "counter",
        "Partitions proved by each backend.",
        &s.devices
            .iter()
            .map(|d| {
                (
                    format!("device=\"{}\",index=\"{}\"", d.name, d.index),
                    d.partitions,
                )
            })
            .collect::<Vec<_>>(),
    );
    metric(
        "cuzk_uptime_seconds",
        "gauge",
        "Seconds since the engine started.",
        &[(String::new(), s.uptime.as_secs())],
    );
    o
}
