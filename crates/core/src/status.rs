//! What the engine reports about itself: the status types of [`crate::Engine::status`],
//! [`crate::Engine::preload_srs`] and [`crate::Engine::evict_srs`], and the status read off
//! the pipeline's shared state.
use crate::budget::BudgetSnapshot;
use crate::metrics::StageGauges;
use crate::pipeline::Shared;
use crate::request::ProofKind;
use crate::srs::SrsEntryStatus;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

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

pub use crate::metrics::BusySource;

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
    /// The device's busy time: the backend's own figure since the device was opened, else
    /// the time the engine's interlock was held since the engine started; `None` when
    /// neither is measured. Never more than wall time; a busy fraction is the difference of
    /// two readings over the wall time between them.
    pub busy: Option<Duration>,
    /// Where `busy` comes from.
    pub busy_source: BusySource,
    /// Time spent inside `start`, summed over the device's workers: overlapping workers
    /// count twice, so this can exceed wall time and is not a busy fraction.
    pub start_time: Duration,
    /// Its busy fraction over about the last minute (the sampler's reading nearest 60 s ago
    /// to now: the window, and `busy` grown over it divided by it, in parts per million);
    /// `None` before the first reading a second old, or when `busy` is not measured.
    pub busy_last_minute: Option<(Duration, u32)>,
    /// Partitions proved on it.
    pub partitions: u64,
    /// The device's memory as (total, free) bytes, if the backend has a device.
    pub memory: Option<(u64, u64)>,
    /// Device errors since the engine started (see `Config::quarantine_after`).
    pub errors: u64,
    /// Whether it is quarantined after repeated errors.
    pub quarantined: bool,
}

/// What one partition of a circuit costs the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionMemory {
    /// The circuit id.
    pub circuit_id: String,
    /// Bytes a new partition of it reserves in the budget (its calibrated estimate's
    /// admission bytes).
    pub reserved: u64,
    /// Bytes the first synthesized partition really held (its vectors' capacities).
    pub measured: u64,
}

/// The engine's state at a glance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineStatus {
    /// Per proof kind (every kind listed).
    pub queues: Vec<QueueStatus>,
    /// SRS entries (hot, warm, cold).
    pub srs: Vec<SrsEntryStatus>,
    /// Host bytes per partition of every circuit measured so far, by circuit id.
    pub partition_memory: Vec<PartitionMemory>,
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
    /// Per proof kind seen: jobs by outcome, and completed jobs' latency by phase.
    pub kinds: Vec<crate::latency::KindLatency>,
    /// Time since the engine started.
    pub uptime: Duration,
    /// Prover backends.
    pub devices: Vec<DeviceStatus>,
    /// False once shutdown began.
    pub accepting: bool,
}

impl EngineStatus {
    /// The state of the engine whose shared state is `sh`.
    pub(crate) fn of(sh: &Shared) -> EngineStatus {
        let mut per_kind: BTreeMap<ProofKind, (u32, u32)> =
            ProofKind::ALL.iter().map(|&k| (k, (0, 0))).collect();
        for j in sh.jobs.all() {
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
        let kinds = sh.metrics.latency.snapshot();
        let now = sh.metrics.now();
        let then = sh.metrics.busy_reading_within(now, Duration::from_secs(60));
        EngineStatus {
            queues: per_kind
                .into_iter()
                .map(|(kind, (pending, in_progress))| QueueStatus {
                    kind,
                    pending,
                    in_progress,
                })
                .collect(),
            partition_memory: sh
                .estimator
                .all()
                .into_iter()
                .map(|(circuit_id, e)| PartitionMemory {
                    circuit_id,
                    reserved: e.admission_bytes(),
                    measured: e.measured,
                })
                .collect(),
            srs: sh.srs.status_with(|srs| {
                let per = |f: &dyn Fn(&dyn cuzk_groth16::ProverBackend) -> u64| {
                    sh.devices.iter().map(|d| f(d.backend.as_ref())).collect()
                };
                (
                    per(&|b| b.resident_bytes(srs.id())),
                    per(&|b| b.resident_matrices_bytes(srs.id())),
                )
            }),
            budget: sh.budget.snapshot(),
            request_bytes_in_use: sh.jobs.request_bytes_in_use(),
            kept_buffers: sh.buffers.stats(),
            stages: sh.metrics.gauges(),
            total_completed: kinds.iter().map(|k| k.completed).sum(),
            total_failed: kinds.iter().map(|k| k.failed).sum(),
            total_cancelled: kinds.iter().map(|k| k.cancelled).sum(),
            kinds,
            uptime: sh.metrics.now(),
            devices: sh
                .devices
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let cur = d.current.lock().clone();
                    let (busy, busy_source) = d.busy(sh.config.prover_interlock);
                    let busy_last_minute = match (&then, busy) {
                        (Some(r), Some(b)) if now >= r.at + Duration::from_secs(1) => {
                            r.busy.get(i).copied().flatten().map(|b0| {
                                let window = now - r.at;
                                let grown = b.saturating_sub(b0).as_secs_f64();
                                let ppm = (grown / window.as_secs_f64() * 1e6).min(1e6);
                                (window, ppm as u32)
                            })
                        }
                        _ => None,
                    };
                    DeviceStatus {
                        index: i as u32,
                        name: d.name.clone(),
                        current_job: cur.as_ref().map(|c| c.0.clone()),
                        current_kind: cur.map(|c| c.1),
                        busy,
                        busy_source,
                        busy_last_minute,
                        start_time: Duration::from_nanos(d.start_ns.load(Ordering::Relaxed)),
                        partitions: d.partitions.load(Ordering::Relaxed),
                        memory: d.backend.device_memory(),
                        errors: d.errors.load(Ordering::Relaxed),
                        quarantined: d.quarantined.load(Ordering::Relaxed),
                    }
                })
                .collect(),
            accepting: sh.accepting(),
        }
    }
}
