//! CUDA Groth16 backend on sppark behind the `cuda` feature; a typed-error stub without it.
//!
//! - [`CudaProver`]: one per device, implements [`cuzk_groth16::ProverBackend`]. `start`
//!   plans the split MSMs on the host, stages a/b/c to the device on a per-worker copy
//!   stream (outside the device interlock), then — holding the interlock — computes H with
//!   NTTs and every MSM (H, L, A, B in G1 and B in G2) against a device-resident SRS.
//!   Safe to share between threads: two workers per device overlap one's upload with the
//!   other's kernels. Inside the interlock, with the SRS resident, every query's "scalar is
//!   1" batch addition runs first on the worker's side stream beside the NTTs and the H MSM,
//!   its sums added on a host thread meanwhile ([`CudaOptions::early_batch_additions`]),
//!   and every kernel of the phase is queued back to back: each MSM's window sums are made
//!   on the host after the interlock is released ([`CudaOptions::queued_msm`],
//!   `cuda/queued_msm.cuh`).
//!   VRAM is a per-device budget with reservations (SRS copies, worker contexts); an SRS
//!   that does not fit is streamed from page-locked host memory per proof (see
//!   [`CudaOptions`]). Its files, bottom up: `ffi` (the C ABI of `cuda/cuzk.cu`), `sizes`
//!   (the sizing model of the device allocations), `pins` (page-locking a streamed SRS),
//!   `points` (device results as blstrs points), `vram` (the per-device VRAM ledger and
//!   reservations), `device` (the device registry and queries), `gpu` (the prover: `start`
//!   in named phases; `finish` is [`cuzk_groth16::prover::finish`]). Without the feature,
//!   `disabled` has the same API, failing with a typed error.
//! - [`CudaOptions`]: the per-device settings, read from a `[gpu]` table by
//!   [`CudaOptions::from_toml`].
//! - [`devices`]: the visible CUDA devices (empty without the feature or without a GPU).
//! - [`msm_plan`]: the host-side split of each MSM into "scalar is 1" (batch addition), "scalar is
//!   0" (skipped) and the rest (Pippenger), plain Rust, tested without a GPU.
//! - [`GpuPoints`]: the insecure setup's points made on a device (`cuda/fixed_base.cuh`), for
//!   `cuzk gen params`.
//!
//! TIMING-ONLY parameters and PoRep-shaped partitions for the GPU benchmarks, and the
//! `cuzk-gpu-bench` binary, live in `cuzk-testkit`.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod msm_plan;
mod options;
// (pure arithmetic: built and tested without the feature too)
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
mod sizes;

pub use options::{CudaOptions, CudaOptionsError, DEFAULT_STREAM_CHUNK_BASES};

/// Every item inside only with the `cuda` feature (the GPU backend itself).
macro_rules! with_cuda {
    ($($item:item)*) => { $( #[cfg(feature = "cuda")] $item )* };
}

with_cuda! {
    mod device;
    mod ffi;
    mod gpu;
    mod matrices;
    mod pins;
    mod points;
    mod setup;
    mod srs_state;
    mod vram;
    pub use device::devices;
    pub use gpu::CudaProver;
    pub use setup::GpuPoints;
}

/// VRAM accounting of one device (see [`CudaProver::vram_status`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VramStatus {
    /// Bytes the backend may reserve.
    pub budget: u64,
    /// Bytes reserved now (resident SRS copies plus worker contexts).
    pub reserved: u64,
    /// Of which resident SRS copies.
    pub reserved_srs: u64,
    /// SRS copies resident in VRAM.
    pub resident_srs: usize,
    /// Of which pinned: their SRS released its host copy, so they stay until it is dropped.
    pub pinned_srs: usize,
    /// Of `reserved`, compiled constraint matrices resident for deferred a/b/c.
    pub reserved_matrices: u64,
    /// Compiled circuits whose matrices are resident.
    pub resident_matrices: usize,
    /// Worker contexts kept for reuse.
    pub idle_workers: usize,
    /// Worker contexts in a `start` now.
    pub busy_workers: usize,
    /// Times a `start` waited for another to release VRAM.
    pub waits: u64,
}

#[cfg(not(feature = "cuda"))]
mod disabled;
#[cfg(not(feature = "cuda"))]
pub use disabled::{devices, CudaProver, GpuPoints};

/// Whether this build contains the CUDA backend.
pub const CUDA_BUILT: bool = cfg!(feature = "cuda");

/// A visible CUDA device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Index as used by [`CudaProver::new`].
    pub ordinal: usize,
    /// Marketing name (`NVIDIA H200`).
    pub name: String,
    /// Total device memory in bytes.
    pub vram_total: u64,
    /// Free device memory in bytes at the time of the query.
    pub vram_free: u64,
    /// This backend's VRAM budget on the device (0 when the device has not been opened).
    pub vram_budget: u64,
    /// VRAM bytes this backend has reserved on the device.
    pub vram_reserved: u64,
}

/// One G1 MSM by each of the device's three Pippengers, in this order: sppark's `msm_t`, the
/// queued one (sppark's kernels, summed later; [`CudaOptions::queued_msm`]) and the sorted
/// one (ours, `cuda/sorted_msm.cuh`); see [`CudaProver::msm_time_g1`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MsmTimes {
    /// Each one's result.
    pub points: [blstrs::G1Projective; 3],
    /// Median wall milliseconds: launch to the point summed on the host.
    pub wall_ms: [f64; 3],
    /// Median device milliseconds between events around it (`msm_t`'s include its host sum,
    /// which it waits for).
    pub device_ms: [f64; 3],
}

/// The H polynomial by the six NTTs proofs use and by the textbook seven, on the same inputs;
/// see [`CudaProver::h_time`].
#[derive(Clone, Debug, PartialEq)]
pub struct HTimes {
    /// H's 2^lg coefficients by six NTTs (`cuda/h_ntt.cuh`).
    pub six: Vec<blstrs::Scalar>,
    /// The same by seven (`cuda/h_compare.cuh`).
    pub seven: Vec<blstrs::Scalar>,
    /// Median device milliseconds of six and of seven, inputs and H in VRAM.
    pub device_ms: [f64; 2],
}

/// Wall-clock milliseconds of each phase of one [`CudaProver`] `start`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimings {
    /// Host: classifying scalars into 0 / 1 / other and building the per-MSM plans.
    pub plan_ms: f64,
    /// Host → device staging of a/b/c and the plans (outside the interlock).
    pub upload_ms: f64,
    /// Freeing the host witness (a/b/c and the assignment) once it is on the device.
    pub free_ms: f64,
    /// Waiting for the device interlock.
    pub wait_lock_ms: f64,
    /// Reserving VRAM for the worker context (waiting for another `start` to release some).
    pub wait_vram_ms: f64,
    /// Making the SRS resident (first use of an SRS on this device only), or page-locking
    /// its host memory for streaming (first streamed use of an SRS only).
    pub srs_upload_ms: f64,
    /// Whether the SRS was streamed from host memory (it did not fit the VRAM budget, or
    /// streaming was forced) rather than resident in VRAM; the MSM phases then include the
    /// chunk uploads they did not hide.
    pub streamed: bool,
    /// Inverse NTTs, coset NTTs, (a·b − c)/Z, inverse coset NTT. With
    /// [`CudaOptions::queued_msm`] in force (SRS resident), this and the MSM phases below are
    /// the device's own times between events along its stream, and the MSMs' host sums are
    /// in `host_sums_ms` instead.
    pub ntt_h_ms: f64,
    /// Dense MSM over the H bases.
    pub msm_h_ms: f64,
    /// Split MSM over the L bases (with the SRS resident and
    /// [`CudaOptions::early_batch_additions`], its batch addition ran beside the NTTs and
    /// the H MSM, so only the rest is timed here; likewise for A and B).
    pub msm_l_ms: f64,
    /// Split MSM over the A bases.
    pub msm_a_ms: f64,
    /// Split MSM over the B bases in G1.
    pub msm_b_g1_ms: f64,
    /// Split MSM over the B bases in G2.
    pub msm_b_g2_ms: f64,
    /// Deferred a/b/c made on the device from the resident matrices (the witness expanded,
    /// then A·z, B·z, C·z), inside the exclusive phase; 0 when a/b/c were uploaded.
    pub abc_ms: f64,
    /// Host → device bytes staged for this proof (a/b/c or the witness, and the plans).
    pub upload_bytes: u64,
    /// Time the interlock was held (the GPU-exclusive phase).
    pub exclusive_ms: f64,
    /// The queued MSMs' window sums and batch-addition sums, on the host after the interlock
    /// was released ([`CudaOptions::queued_msm`]; 0 otherwise).
    pub host_sums_ms: f64,
    /// Whole `start`.
    pub total_ms: f64,
}
