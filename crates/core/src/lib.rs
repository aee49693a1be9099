//! The proving engine: memory budget, SRS cache, scheduler, partition pipeline, metrics.
//!
//! - [`budget`]: the byte-level [`MemoryBudget`] and RAII [`Reservation`]s.
//! - [`estimate`]: per-circuit working-set estimates, calibrated from real partitions.
//! - [`srs`]: the SRS cache (load on demand, ref-counted, LRU eviction, tiers).
//! - [`engine`]: the [`Engine`]: scheduler, admission, synthesis, provers, finalizers,
//!   assembler, status.
//! - [`planner`]: the [`Planner`] trait through which proof kinds plug in; [`kinds`] holds
//!   the planners (synthetic circuits here; Filecoin kinds in `kinds::filecoin`).
//! - [`metrics`]: stage gauges, timeline, memory samples.
//! - [`params`]: reading `.params` files.
//! - [`config`]: `cuzk.toml` → validated [`Config`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod budget;
pub mod config;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod kinds;
pub mod metrics;
pub mod params;
pub mod planner;
pub mod request;
mod reuse;
pub mod srs;
pub mod verify;

pub use budget::{BudgetSnapshot, Category, MemoryBudget, Reservation};
pub use config::Config;
pub use engine::{DeviceStatus, Engine, EngineStatus, EvictOutcome, PreloadOutcome, QueueStatus};
pub use error::{BudgetError, EngineError};
pub use estimate::WorkingSetEstimate;
pub use metrics::{MemorySample, PartitionTimeline, Stage, StageGauges};
pub use planner::{
    FinishFn, JobPlan, PartitionPlan, Planner, Prepared, PreparedData, SynthesisContext,
    SynthesizeFn, VerifyFn,
};
pub use request::{JobOutcome, JobState, JobTimings, Priority, ProofKind, ProofRequest, Submitted};
pub use srs::{SrsEntryStatus, SrsTier};
