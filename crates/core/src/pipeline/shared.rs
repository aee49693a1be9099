//! What every stage shares, placed below them all: the resources (budget, SRS cache,
//! estimator, kept buffers, devices), the admission [`Queue`], the provers' channel, the
//! synthesis and finalizer permits, the job registry, and the [`Drain`] that shutdown runs.
//!
//! Also the failure path of every stage, [`Partition::fail`]: failing a job drops its queued
//! partitions, so it lives beside the queue.
use super::partition::{Circuit, InFlight, Partition, Planned};
use crate::budget::{Category, MemoryBudget, Pressure};
use crate::config::Config;
use crate::cpu::CpuPools;
use crate::error::EngineError;
use crate::estimate::{Estimator, HostLayout};
use crate::jobs::{Job, Registry};
use crate::measured::MeasurementStore;
use crate::metrics::Metrics;
use crate::planner::{PartitionPlan, Planner};
use crate::request::{JobState, Priority, ProofKind};
use crate::reuse::BufferPool;
use crate::srs::SrsCache;
use cuzk_groth16::ProverBackend;
use parking_lot::Mutex;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{watch, Notify, Semaphore};
use tokio::task::JoinHandle;

/// One prover backend and what the engine counts about it.
pub(crate) struct Device {
    /// The backend.
    pub(crate) backend: Arc<dyn ProverBackend>,
    /// Its name (`cpu`, `cuda:0`).
    pub(crate) name: String,
    /// Held for the duration of `start`: one heavy phase per device at a time, while the other
    /// worker of the device already holds its next partition, ready to go.
    pub(crate) interlock: tokio::sync::Mutex<()>,
    /// The job (and kind) whose partition is in `start` now.
    pub(crate) current: Mutex<Option<(String, ProofKind)>>,
    /// Nanoseconds spent in `start`, summed over the device's workers (two overlapping
    /// workers count twice, so this is no busy fraction).
    pub(crate) start_ns: AtomicU64,
    /// Nanoseconds the interlock was held with a partition in hand (from taking the
    /// partition to the end of its `start`): the device's busy time when the interlock is on.
    pub(crate) interlock_ns: AtomicU64,
    /// Partitions started.
    pub(crate) partitions: AtomicU64,
    /// Device errors (a failed `start` or `finish`, a panicking backend) since the start.
    pub(crate) errors: AtomicU64,
    /// Device errors since its last proof.
    pub(crate) failing: AtomicU32,
    /// Set after `pipeline.quarantine_after` errors in a row: it takes no more work while
    /// another device is healthy.
    pub(crate) quarantined: AtomicBool,
}

impl Device {
    /// Its busy time and where it comes from: the backend's own figure, else the time the
    /// engine's interlock was held (when `interlock` is on), else not measured.
    pub(crate) fn busy(
        &self,
        interlock: bool,
    ) -> (Option<std::time::Duration>, crate::metrics::BusySource) {
        use crate::metrics::BusySource;
        match self.backend.device_busy() {
            Some(b) => (Some(b), BusySource::Backend),
            None if interlock => (
                Some(std::time::Duration::from_nanos(
                    self.interlock_ns.load(Ordering::Relaxed),
                )),
                BusySource::Interlock,
            ),
            None => (None, BusySource::NotMeasured),
        }
    }
}

/// Queue order: highest priority, then oldest job, then partition index.
type QueueKey = (Reverse<Priority>, u64, usize);

/// The lowest priority the urgent admission lane takes (HIGH: WindowPoSt; CRITICAL: WinningPoSt).
pub(crate) const URGENT: Priority = Priority::High;

/// Partitions waiting for admission.
#[derive(Default)]
pub(crate) struct Queue {
    /// The partitions, in admission order.
    entries: Mutex<BTreeMap<QueueKey, Partition<Planned>>>,
    /// Wakes the bulk admission lane when a partition is queued (or shutdown begins).
    notify: Notify,
    /// Wakes the urgent admission lane when a HIGH or CRITICAL partition is queued.
    notify_urgent: Notify,
}

impl Queue {
    /// Queues a job's partitions at once, then wakes admission.
    fn push(&self, parts: Vec<Partition<Planned>>) {
        let mut urgent = false;
        {
            let mut q = self.entries.lock();
            for p in parts {
                urgent |= p.job.priority >= URGENT;
                q.insert((Reverse(p.job.priority), p.job.seq, p.index), p);
            }
        }
        self.notify.notify_one();
        if urgent {
            self.notify_urgent.notify_one();
        }
    }

    /// The next partition to admit, if it has at least priority `min`.
    pub(crate) fn pop(&self, min: Priority) -> Option<Partition<Planned>> {
        let mut q = self.entries.lock();
        let (Reverse(prio), _, _) = *q.first_key_value()?.0;
        if prio < min {
            return None;
        }
        q.pop_first().map(|(_, p)| p)
    }

    /// Returns when a partition of priority `min` or higher may have been queued since the
    /// last wake-up of that lane.
    pub(crate) async fn notified(&self, min: Priority) {
        if min >= URGENT {
            self.notify_urgent.notified().await
        } else {
            self.notify.notified().await
        }
    }

    /// Wakes both admission lanes (shutdown).
    fn wake_all(&self) {
        self.notify.notify_one();
        self.notify_urgent.notify_one();
    }

    /// Takes a job's queued partitions out.
    fn remove_job(&self, job: &Job) -> Vec<Partition<Planned>> {
        let mut q = self.entries.lock();
        let lo = (Reverse(job.priority), job.seq, 0);
        let hi = (Reverse(job.priority), job.seq, usize::MAX);
        let keys: Vec<QueueKey> = q.range(lo..=hi).map(|(k, _)| *k).collect();
        keys.into_iter().filter_map(|k| q.remove(&k)).collect()
    }
}

/// Synthesized partitions waiting for a prover, highest priority first (then oldest job,
/// then partition index). Each holds its reservation and, until it is accepted, its
/// synthesis slot. At most `capacity` partitions below HIGH wait here; HIGH and CRITICAL
/// ones are always accepted, so they never wait behind a full queue of bulk work.
pub(crate) struct ProverQueue {
    state: Mutex<ProverQueueState>,
    /// Partitions below HIGH allowed to wait at once.
    capacity: usize,
    /// Wakes a prover worker when a partition arrives (or the queue closes).
    ready: Notify,
    /// Wakes senders waiting for room when a partition leaves (or the queue closes).
    room: Notify,
    /// Wakes quarantined devices' workers when a device's health changes.
    health: Notify,
}

#[derive(Default)]
struct ProverQueueState {
    entries: BTreeMap<QueueKey, Partition<Circuit>>,
    /// Entries below HIGH.
    bulk: usize,
    /// Set at shutdown: no more partitions are accepted.
    closed: bool,
}

impl ProverQueue {
    fn new(capacity: usize) -> ProverQueue {
        ProverQueue {
            state: Mutex::default(),
            capacity: capacity.max(1),
            ready: Notify::new(),
            room: Notify::new(),
            health: Notify::new(),
        }
    }

    /// Hands a partition to the provers, waiting for room if it is bulk work. `Err` gives it
    /// back when the queue closed (shutdown).
    pub(crate) async fn push(&self, p: Partition<Circuit>) -> Result<(), Partition<Circuit>> {
        let urgent = p.job.priority >= URGENT;
        let retry = p.avoid_device.is_some();
        loop {
            // Registered before the check, so a pop between the two still wakes us.
            let room = self.room.notified();
            {
                let mut st = self.state.lock();
                if st.closed {
                    return Err(p);
                }
                if urgent || st.bulk < self.capacity {
                    st.bulk += usize::from(!urgent);
                    st.entries
                        .insert((Reverse(p.job.priority), p.job.seq, p.index), p);
                    drop(st);
                    if retry {
                        // Meant for some devices' workers only: let all of them look.
                        self.ready.notify_waiters();
                    }
                    self.ready.notify_one();
                    return Ok(());
                }
            }
            room.await;
        }
    }

    /// The highest-priority waiting partition device `dev` may take; `None` once the queue
    /// is closed and empty. A partition retried after an error on `dev` is left to the other
    /// devices while `others_healthy` says one of them can take it.
    pub(crate) async fn pop(
        &self,
        dev: usize,
        others_healthy: impl Fn() -> bool,
    ) -> Option<Partition<Circuit>> {
        loop {
            let ready = self.ready.notified();
            {
                let mut st = self.state.lock();
                let avoid = others_healthy();
                let key = st
                    .entries
                    .iter()
                    .find(|(_, p)| !(avoid && p.avoid_device == Some(dev)))
                    .map(|(k, _)| *k);
                if let Some(p) = key.and_then(|k| st.entries.remove(&k)) {
                    if p.job.priority < URGENT {
                        st.bulk -= 1;
                    }
                    let retries = st.entries.values().any(|p| p.avoid_device.is_some());
                    let more = !st.entries.is_empty();
                    drop(st);
                    self.room.notify_waiters();
                    if retries {
                        // The next in line may be for another device's workers only.
                        self.ready.notify_waiters();
                    } else if more {
                        // Another worker may be waiting for what is left.
                        self.ready.notify_one();
                    }
                    return Some(p);
                }
                if st.closed && st.entries.is_empty() {
                    return None;
                }
            }
            ready.await;
        }
    }

    /// Wakes every waiting worker to look again (a device's health changed).
    pub(crate) fn wake_all(&self) {
        self.health.notify_waiters();
        self.ready.notify_waiters();
    }

    /// Completes at the next [`ProverQueue::wake_all`] (for workers of a quarantined device).
    pub(crate) fn woken(&self) -> tokio::sync::futures::Notified<'_> {
        self.health.notified()
    }

    /// Accepts nothing more; workers drain what is queued, then see `None`.
    fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_waiters();
        self.ready.notify_one();
        self.room.notify_waiters();
    }
}

/// What a shutdown drains.
pub(crate) struct Drain {
    /// False once shutdown began: submits are refused.
    accepting: AtomicBool,
    /// Tells background tasks to stop (shutdown).
    stopping: watch::Sender<bool>,
    /// Partitions between admission and the assembler.
    pub(crate) in_flight: Arc<InFlight>,
    /// The background tasks, awaited once they were told to stop.
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

/// The engine's state, shared by the handle and every stage.
pub(crate) struct Shared {
    /// The configuration in force.
    pub(crate) config: Config,
    /// The memory budget every reservation comes from.
    pub(crate) budget: MemoryBudget,
    /// Plans requests, names and loads SRSs.
    pub(crate) planner: Arc<dyn Planner>,
    /// Loaded SRSs.
    pub(crate) srs: SrsCache,
    /// Working-set estimates per circuit id.
    pub(crate) estimator: Estimator,
    /// Stage gauges, timeline, samples, counters.
    pub(crate) metrics: Arc<Metrics>,
    /// Prover backends.
    pub(crate) devices: Vec<Device>,
    /// Every prover makes a/b/c itself (`Config::device_abc`, `ProverBackend::evaluates_abc`):
    /// synthesis defers them.
    pub(crate) device_abc: bool,
    /// Some prover plans its MSMs on the host (`ProverBackend::start_host_bytes` answers for
    /// a circuit: the CUDA prover): estimates before a measurement count its `start`'s bytes
    /// ([`crate::estimate::HostLayout::DevicePlans`]).
    pub(crate) host_plans: bool,
    /// Finished partitions' buffers kept for the next synthesis (reserved, reclaimable).
    pub(crate) buffers: Arc<BufferPool>,
    /// Every job, and the request buffer.
    pub(crate) jobs: Registry,
    /// Partitions waiting for admission.
    pub(crate) queue: Queue,
    /// Limits partitions synthesizing at once (memory bandwidth), separately from the budget.
    pub(crate) synth_permits: Arc<Semaphore>,
    /// Synthesis slots of the urgent admission lane (HIGH and CRITICAL only), so such a
    /// partition never waits for a slot that bulk work holds.
    pub(crate) urgent_permits: Arc<Semaphore>,
    /// Where synthesis runs: HIGH and CRITICAL partitions on CPU pools of their own.
    pub(crate) cpu: Arc<CpuPools>,
    /// Limits concurrent `finish` + self-check work.
    pub(crate) finalize_permits: Arc<Semaphore>,
    /// Limits requests being planned at once (decoding and checking a PoRep C1 output is tens
    /// of MB of JSON), so a burst of submits cannot take every blocking thread and core.
    pub(crate) plan_permits: Arc<Semaphore>,
    /// Synthesized partitions waiting for a prover, by priority; closed at shutdown.
    pub(crate) provers: ProverQueue,
    /// Accepting, stopping, in flight, background tasks.
    pub(crate) drain: Drain,
}

impl Shared {
    /// How the provers hold a partition, for an estimate before any measurement: a/b/c
    /// `deferred` to the devices, else made on the host for the provers' layout; `bounded`:
    /// the circuit's aux variables held to 0 or 1.
    pub(crate) fn host_layout(&self, deferred: bool, bounded: usize) -> HostLayout {
        if deferred {
            HostLayout::Deferred { bounded }
        } else if self.host_plans {
            HostLayout::DevicePlans { bounded }
        } else {
            HostLayout::Cpu
        }
    }

    /// The engine's state for `config`.
    pub(crate) fn new(
        config: Config,
        backends: Vec<Arc<dyn ProverBackend>>,
        planner: Arc<dyn Planner>,
    ) -> Result<Arc<Shared>, EngineError> {
        let budget =
            MemoryBudget::with_urgent_reserve(config.budget_bytes, config.urgent_reserve());
        let request_pool = budget
            .try_acquire(config.request_buffer_bytes, Category::Requests)
            .ok_or_else(|| EngineError::Config("request buffer does not fit the budget".into()))?;
        let make_resident: Option<crate::srs::MakeResident> =
            (config.release_host_srs && !backends.is_empty()).then(|| {
                let backends = backends.clone();
                Arc::new(move |srs: &cuzk_groth16::Srs| {
                    // Every backend is asked (no short cut): each pins its own copy.
                    let mut all = true;
                    for b in &backends {
                        match b.make_resident(srs) {
                            Ok(true) => {}
                            Ok(false) => all = false,
                            Err(e) => {
                                tracing::warn!(backend = %b.name(), err = %e, "making an SRS resident failed; its host copy is kept");
                                all = false;
                            }
                        }
                    }
                    all
                }) as crate::srs::MakeResident
            });
        let cpu = Arc::new(CpuPools::new(config.urgent_threads)?);
        let device_abc =
            config.device_abc && !backends.is_empty() && backends.iter().all(|b| b.evaluates_abc());
        let on_devices =
            !backends.is_empty() && backends.iter().all(|b| b.device_memory().is_some());
        // `start_host_bytes` answers `None` for the CPU prover's layout, whatever the circuit.
        let empty = cuzk_groth16::Synthesized::default();
        let host_plans = backends
            .iter()
            .any(|b| b.start_host_bytes(&empty).is_some());
        let srs = SrsCache::new(
            budget.clone(),
            planner.clone(),
            config.allow_timing_only,
            make_resident,
            on_devices,
            cpu.clone(),
            config.srs_keep_idle,
        );
        if config.release_host_srs && on_devices {
            let backends = backends.clone();
            let uploads = backends.len();
            srs.set_stream_residency(
                Arc::new(move |circuit_id, srs| {
                    crate::srs::stream_to_backends(
                        &backends,
                        circuit_id,
                        srs,
                        &crate::params::read_options(),
                    )
                }),
                uploads,
            );
        }
        if device_abc && config.release_host_srs {
            let backends = backends.clone();
            srs.set_matrices_residency(Arc::new(move |srs, compiled| {
                // Every backend is asked (no short cut): each pins its own copy.
                let mut all = true;
                for b in &backends {
                    match b.make_matrices_resident(srs, compiled) {
                        Ok(true) => {}
                        Ok(false) => all = false,
                        Err(e) => {
                            tracing::warn!(backend = %b.name(), err = %e, "making compiled matrices resident failed; their host copy is kept");
                            all = false;
                        }
                    }
                }
                all
            }));
        }
        let buffers = Arc::new(BufferPool::new(config.reuse_buffers));
        {
            // Kept partition buffers go first (cheap to make again), then idle SRSs.
            let (pool, evict_srs) = (Arc::downgrade(&buffers), srs.reclaimer());
            // The kept sets count as coming back (in flight), so freeing them leaves what
            // waiting cannot bring as it was.
            budget.set_reclaimer(Arc::new(move |p: Pressure| {
                let freed = pool.upgrade().map_or(0, |pool| pool.reclaim(p.backlog));
                evict_srs(Pressure {
                    backlog: p.backlog.saturating_sub(freed),
                    unavoidable: p.unavoidable,
                });
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
                start_ns: AtomicU64::new(0),
                interlock_ns: AtomicU64::new(0),
                partitions: AtomicU64::new(0),
                errors: AtomicU64::new(0),
                failing: AtomicU32::new(0),
                quarantined: AtomicBool::new(false),
            })
            .collect::<Vec<_>>();
        // Working-set measurements are kept where the planner keeps its compiled circuits,
        // for the next start.
        let names: Vec<String> = devices.iter().map(|d| d.name.clone()).collect();
        let estimator = Estimator::with_store(Some(Box::new(MeasurementStore::new(
            planner.clone(),
            &names,
        ))));
        let (stopping, _) = watch::channel(false);
        let capacity = config.channel_capacity;
        let shared = Arc::new(Shared {
            synth_permits: Arc::new(Semaphore::new(config.synthesis_concurrency)),
            urgent_permits: Arc::new(Semaphore::new(urgent_slots(config.synthesis_concurrency))),
            finalize_permits: Arc::new(Semaphore::new(config.finalizers)),
            cpu,
            plan_permits: Arc::new(Semaphore::new((config.synthesis_concurrency / 4).max(2))),
            config,
            budget,
            planner,
            srs,
            estimator,
            metrics,
            devices,
            device_abc,
            host_plans,
            buffers,
            jobs: Registry::new(request_pool),
            queue: Queue::default(),
            provers: ProverQueue::new(capacity),
            drain: Drain {
                accepting: AtomicBool::new(true),
                stopping,
                in_flight: Arc::default(),
                tasks: Mutex::new(Vec::new()),
            },
        });
        Ok(shared)
    }

    /// Queues a registered job's partitions.
    pub(crate) fn enqueue(&self, job: &Arc<Job>, plans: Vec<PartitionPlan>) {
        let parts = plans
            .into_iter()
            .map(|plan| Partition::queued(job.clone(), plan, &self.metrics))
            .collect();
        self.queue.push(parts);
    }

    /// Ends a job once: publishes the outcome, drops its queued partitions, signals in-flight
    /// ones, returns its request bytes. Later calls are no-ops.
    pub(crate) fn finish_job(&self, job: &Arc<Job>, state: JobState) {
        if job.end(state, &self.metrics) {
            drop(self.queue.remove_job(job));
        }
    }

    /// Queues a partition again (its retry).
    pub(crate) fn requeue(&self, p: Partition<Planned>) {
        self.queue.push(vec![p]);
    }

    /// Whether a device other than `dev` is not quarantined.
    pub(crate) fn others_healthy(&self, dev: usize) -> bool {
        self.devices
            .iter()
            .enumerate()
            .any(|(i, d)| i != dev && !d.quarantined.load(Ordering::SeqCst))
    }

    /// Counts a device error on `dev`; quarantines it after `quarantine_after` in a row.
    pub(crate) fn device_error(&self, dev: usize, err: &dyn Display) {
        let d = &self.devices[dev];
        d.errors.fetch_add(1, Ordering::Relaxed);
        let failing = d.failing.fetch_add(1, Ordering::SeqCst) + 1;
        tracing::warn!(device = %d.name, failing, cause = %err, "device error");
        if failing >= self.config.quarantine_after && !d.quarantined.swap(true, Ordering::SeqCst) {
            tracing::error!(
                device = %d.name,
                errors = failing,
                "device quarantined after repeated errors: it takes no work while another device is healthy"
            );
            self.provers.wake_all();
        }
    }

    /// A proof came off `dev`: its run of errors is over.
    pub(crate) fn device_ok(&self, dev: usize) {
        self.devices[dev].failing.store(0, Ordering::SeqCst);
    }

    /// Whether submits are accepted (false once shutdown began).
    pub(crate) fn accepting(&self) -> bool {
        self.drain.accepting.load(Ordering::SeqCst)
    }

    /// Refuses further submits.
    pub(crate) fn stop_accepting(&self) {
        self.drain.accepting.store(false, Ordering::SeqCst);
    }

    /// Set to true when the background tasks are to stop.
    pub(crate) fn stopping(&self) -> watch::Receiver<bool> {
        self.drain.stopping.subscribe()
    }

    /// Hands the background tasks to the drain.
    pub(crate) fn keep_tasks(&self, tasks: Vec<JoinHandle<()>>) {
        *self.drain.tasks.lock() = tasks;
    }

    /// Stops the pipeline once every job ended: tells the background tasks to stop, closes the
    /// provers' channel, waits until no partition is in flight, then for the tasks.
    pub(crate) async fn stop_pipeline(&self) {
        self.drain.stopping.send_replace(true);
        self.queue.wake_all();
        self.provers.close();
        // Partitions in flight finish their current step (a kernel is not interrupted).
        self.drain.in_flight.wait_zero().await;
        let tasks = std::mem::take(&mut *self.drain.tasks.lock());
        for t in tasks {
            let _ = t.await;
        }
    }
}

impl<W: Send + 'static> Partition<W> {
    /// The failure path of every stage: marks the partition failed and fails its job with
    /// `partition I (CIRCUIT): WHAT: ERR`. Returns `None`, for the stage to return.
    pub(crate) fn fail<T>(self, sh: &Shared, what: &str, err: impl Display) -> Option<T> {
        let error = format!(
            "partition {} ({}): {what}: {err}",
            self.index, self.circuit_id
        );
        self.fail_job(sh, error)
    }

    /// [`Partition::fail`] with the job's error given whole.
    pub(crate) fn fail_job<T>(self, sh: &Shared, error: String) -> Option<T> {
        self.tracker.outcome("failed");
        sh.finish_job(&self.job, JobState::Failed { error });
        None
    }
}

impl Partition<()> {
    /// The failure path of a device error (a failed `start` or `finish`, a panicking
    /// backend) on device `dev`: counts it against the device and sends the partition back
    /// to be synthesized again for its one retry, on another device while one is healthy.
    /// A partition already retried fails its job as [`Partition::fail`] does.
    pub(crate) fn device_failed<T>(
        mut self,
        sh: &Shared,
        dev: usize,
        what: &str,
        err: impl Display,
    ) -> Option<T> {
        sh.device_error(dev, &err);
        if self.job.cancelled() {
            return None;
        }
        let Some(synthesize) = self.retry.take() else {
            return self.fail(sh, what, format_args!("{err} (on its retry)"));
        };
        tracing::warn!(
            job = %self.job.id,
            partition = self.index,
            device = %sh.devices[dev].name,
            cause = %err,
            "{what} failed; synthesizing the partition again for its one retry"
        );
        self.avoid_device = Some(dev);
        self.tracker.to(crate::metrics::Stage::Queued);
        let p = self.with_work(Planned {
            shape_hint: None,
            shape_counted: false,
            synthesize,
        });
        sh.requeue(p);
        None
    }
}

/// Synthesis slots of the urgent lane: a quarter of the bulk slots, at least one. They add to
/// the bulk slots (a HIGH or CRITICAL partition briefly oversubscribes the cores rather than
/// wait for bulk work to finish).
fn urgent_slots(synthesis_concurrency: usize) -> usize {
    (synthesis_concurrency / 4).max(1)
}
