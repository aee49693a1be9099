//! The proving engine: memory budget, SRS cache, scheduler, partition pipeline, metrics.
//!
//! - [`Engine`] (`engine.rs`): the handle: submit, wait, cancel, preload and evict SRSs,
//!   status, shutdown.
//! - `pipeline/`: the stages a partition goes through, one file each (admission, synthesis,
//!   prover, finalize, assembler), over the state they share; `jobs.rs`: the job registry
//!   and the request buffer; `status.rs` and `prometheus.rs`: what the engine reports.
//! - `budget.rs`: the byte-level [`MemoryBudget`] and RAII [`Reservation`]s.
//! - `estimate.rs`: per-circuit working-set estimates, calibrated from real partitions;
//!   `measured.rs` keeps the calibrations on disk for the next start.
//! - `srs.rs`: the SRS cache (load on demand, ref-counted, LRU eviction, tiers).
//! - `planner.rs`: the [`Planner`] trait through which proof kinds plug in; [`kinds`] holds
//!   the planners (synthetic circuits here; Filecoin kinds in `kinds::filecoin`).
//! - `metrics.rs`: stage gauges, timeline, memory samples.
//! - [`config`]: `cuzk.toml` → validated [`Config`].
//! - `params.rs`: reading `.params` files for a planner.
//!
//! What users need is re-exported here; the rest is private to the crate.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod budget;
pub mod config;
mod cpu;
mod engine;
mod error;
mod estimate;
mod jobs;
pub mod kinds;
mod latency;
mod measured;
mod metrics;
mod params;
mod pipeline;
mod planner;
mod prometheus;
mod reaper;
mod request;
mod request_buffer;
mod reuse;
mod srs;
mod status;
mod verify;

pub use budget::{BudgetSnapshot, Category, MemoryBudget, Pressure, Reclaimer, Reservation};
pub use config::Config;
pub use cpu::{CpuPools, URGENT_THREAD_PREFIX};
pub use engine::Engine;
pub use error::{BudgetError, EngineError};
pub use estimate::{resident_bytes, HostLayout, WorkingSetEstimate};
pub use latency::{
    KindLatency, PhaseLatency, BUCKETS as LATENCY_BUCKETS, PHASES as LATENCY_PHASES,
};
pub use metrics::{
    current_rss_bytes, peak_rss_bytes, MemorySample, PartitionTimeline, Stage, StageGauges,
};
pub use planner::{
    FinishFn, JobPlan, PartitionPlan, Planner, PrepareHints, Prepared, PreparedData,
    SynthesisContext, SynthesizeFn, VerifyFn,
};
pub use request::{
    JobOutcome, JobState, JobTimings, Priority, ProofKind, ProofRequest, Submitted, Work,
};
pub use request_buffer::{RequestPermit, STREAM_WINDOW};
pub use srs::{SrsEntryStatus, SrsTier};
pub use status::{
    BusySource, DeviceStatus, EngineStatus, EvictOutcome, PartitionMemory, PreloadOutcome,
    QueueStatus,
};
