//! The C ABI of `cuda/cuzk.cu`: `#[repr(C)]` mirrors of its structs (`cuda/abi_types.cuh`) and the extern
//! declarations. Every function returns sppark's by-value `{code, message}` error.
#![allow(unsafe_code)]

use blstrs::Scalar;
use std::os::raw::{c_char, c_int};

/// Opaque device-resident SRS.
#[repr(C)]
pub(crate) struct SrsHandle {
    _opaque: [u8; 0],
}

/// Opaque filler of a resident SRS from the file's bytes (`srs_wire.cuh`).
#[repr(C)]
pub(crate) struct SrsFillerHandle {
    _opaque: [u8; 0],
}

/// Opaque per-worker state (copy stream, pinned staging, device buffers).
#[repr(C)]
pub(crate) struct WorkerHandle {
    _opaque: [u8; 0],
}

/// Opaque fixed-base context: a generator's window table on one device (`fixed_base.cuh`).
#[repr(C)]
pub(crate) struct FixedBaseHandle {
    _opaque: [u8; 0],
}

/// Opaque device-resident constraint matrices of one compiled circuit.
#[repr(C)]
pub(crate) struct MatricesHandle {
    _opaque: [u8; 0],
}

/// The witness of a partition whose a/b/c are deferred: the inputs, and the aux values as
/// the L plan holds them (`ones` must be the L query's bitmap, or null).
#[repr(C)]
pub(crate) struct CWitness {
    pub inputs: *const Scalar,
    pub ninputs: usize,
    pub naux: usize,
    pub nconstraints: usize,
    pub ones: *const u64,
    pub idx: *const u32,
    pub scalars: *const Scalar,
    pub nothers: usize,
}

impl CWitness {
    /// No witness (a/b/c uploaded).
    pub(crate) fn none() -> CWitness {
        CWitness {
            inputs: std::ptr::null(),
            ninputs: 0,
            naux: 0,
            nconstraints: 0,
            ones: std::ptr::null(),
            idx: std::ptr::null(),
            scalars: std::ptr::null(),
            nothers: 0,
        }
    }
}

/// One split MSM (see `msm_plan::QueryPlan`).
#[repr(C)]
pub(crate) struct CQuery {
    pub nbases: usize,
    pub ones_bits: *const u64,
    pub ones_words: usize,
    pub idx: *const u32,
    pub scalars: *const Scalar,
    pub nothers: usize,
}

/// Everything `cuzk_worker_upload` stages.
#[repr(C)]
pub(crate) struct CInput {
    pub a: *const Scalar,
    pub b: *const Scalar,
    pub c: *const Scalar,
    pub abc_len: usize,
    pub lg_domain: u32,
    pub z_inv: *const Scalar,
    pub l: CQuery,
    pub a_q: CQuery,
    pub b_q: CQuery,
    /// Bases per streamed SRS chunk (a multiple of 1024); 0 when the SRS is resident.
    pub stream_chunk: usize,
    /// Non-zero: `a`, `b`, `c` are null and made on the device from `wit` and the matrices.
    pub deferred: u32,
    pub wit: CWitness,
    /// Non-zero: with a resident SRS, every query's batch addition runs up front on the
    /// worker's side stream, beside the NTTs and the H MSM (ignored when the SRS streams).
    pub early_ones: u32,
    /// Non-zero: with a resident SRS, every MSM is queued on the device with no host wait in
    /// between, and `cuzk_worker_finish` makes the host sums (ignored when the SRS streams).
    pub queued: u32,
    /// Non-zero (with `queued`): the H query's MSM by the sorted Pippenger.
    pub sorted_h: u32,
}

/// An SRS in host memory for the streamed tier: each section's pointer and length, and a
/// bitmask of the sections that are page-locked (bit 0 H, 1 L, 2 A, 3 B G1, 4 B G2).
#[repr(C)]
pub(crate) struct CHostSrs {
    pub h: *const u8,
    pub nh: usize,
    pub l: *const u8,
    pub nl: usize,
    pub a: *const u8,
    pub na: usize,
    pub b_g1: *const u8,
    pub nb1: usize,
    pub b_g2: *const u8,
    pub nb2: usize,
    pub pinned: u32,
}

/// A Jacobian G1 point, blst layout (Montgomery limbs).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct Jac1 {
    pub x: [u64; 6],
    pub y: [u64; 6],
    pub z: [u64; 6],
}

/// A Jacobian G2 point, blst layout (Montgomery limbs, c0 then c1).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct Jac2 {
    pub x: [u64; 12],
    pub y: [u64; 12],
    pub z: [u64; 12],
}

/// What `cuzk_worker_compute` returns.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct COutput {
    pub h: Jac1,
    pub l: Jac1,
    pub a: Jac1,
    pub b_g1: Jac1,
    pub b_g2: Jac2,
    pub ms_wait_upload: f64,
    pub ms_ntt_h: f64,
    pub ms_msm_h: f64,
    pub ms_msm_l: f64,
    pub ms_msm_a: f64,
    pub ms_msm_b_g1: f64,
    pub ms_msm_b_g2: f64,
    pub ms_abc: f64,
}

/// Device name and memory.
#[repr(C)]
pub(crate) struct CDeviceInfo {
    pub name: [c_char; 256],
    pub vram_total: usize,
    pub vram_free: usize,
}

extern "C" {
    pub(crate) fn cuzk_device_count(n: *mut usize) -> sppark::Error;
    pub(crate) fn cuzk_device_info(dev: c_int, info: *mut CDeviceInfo) -> sppark::Error;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_srs_create(
        dev: c_int,
        h: *const u8,
        nh: usize,
        l: *const u8,
        nl: usize,
        a: *const u8,
        na: usize,
        b_g1: *const u8,
        nb1: usize,
        b_g2: *const u8,
        nb2: usize,
        out: *mut *mut SrsHandle,
    ) -> sppark::Error;
    pub(crate) fn cuzk_srs_alloc(
        dev: c_int,
        nh: usize,
        nl: usize,
        na: usize,
        nb1: usize,
        nb2: usize,
        out: *mut *mut SrsHandle,
    ) -> sppark::Error;
    pub(crate) fn cuzk_srs_write(
        srs: *mut SrsHandle,
        section: c_int,
        start: usize,
        src: *const u8,
        n: usize,
    ) -> sppark::Error;
    pub(crate) fn cuzk_srs_destroy(srs: *mut SrsHandle);
    pub(crate) fn cuzk_srs_filler_create(
        srs: *mut SrsHandle,
        slot_bytes: usize,
        slots: *mut *mut u8,
        out: *mut *mut SrsFillerHandle,
    ) -> sppark::Error;
    pub(crate) fn cuzk_srs_filler_wait(
        filler: *mut SrsFillerHandle,
        slot: c_int,
        first_bad: *mut u64,
    ) -> sppark::Error;
    pub(crate) fn cuzk_srs_filler_submit(
        filler: *mut SrsFillerHandle,
        slot: c_int,
        section: c_int,
        start: usize,
        n: usize,
    ) -> sppark::Error;
    pub(crate) fn cuzk_srs_filler_destroy(filler: *mut SrsFillerHandle);
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_matrices_alloc(
        dev: c_int,
        rows: usize,
        nterms: *const usize,
        table: *const Scalar,
        ntable: usize,
        ninputs: usize,
        naux: usize,
        out: *mut *mut MatricesHandle,
    ) -> sppark::Error;
    pub(crate) fn cuzk_matrices_write(
        m: *mut MatricesHandle,
        matrix: c_int,
        array: c_int,
        start: usize,
        src: *const u32,
        n: usize,
    ) -> sppark::Error;
    pub(crate) fn cuzk_matrices_destroy(m: *mut MatricesHandle);
    pub(crate) fn cuzk_worker_create(dev: c_int, out: *mut *mut WorkerHandle) -> sppark::Error;
    pub(crate) fn cuzk_worker_destroy(w: *mut WorkerHandle);
    pub(crate) fn cuzk_worker_upload(w: *mut WorkerHandle, input: *const CInput) -> sppark::Error;
    /// Exactly one of `srs` (resident) and `host` (streamed) is non-null; `mats` is non-null
    /// exactly when the upload was deferred.
    pub(crate) fn cuzk_worker_compute(
        w: *mut WorkerHandle,
        srs: *const SrsHandle,
        host: *const CHostSrs,
        mats: *const MatricesHandle,
        out: *mut COutput,
    ) -> sppark::Error;
    /// After `cuzk_worker_compute` (outside the interlock): the host sums (a queued proof's
    /// window sums, every proof's batch-addition sums) into `out`'s points.
    pub(crate) fn cuzk_worker_finish(w: *mut WorkerHandle, out: *mut COutput) -> sppark::Error;
    /// Σ scalars[i]·bases[i mod m] by sppark's Pippenger into `*r`, the queued one into `*g`
    /// (Jac1, or Jac2 when `g2`) and, in G1, the sorted one into `*o`; `ms[6]`: their median
    /// wall, then device, milliseconds over `runs` timed runs after a warm-up (one untimed
    /// run when 0). The caller holds the device's interlock.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_msm_compare(
        dev: c_int,
        g2: c_int,
        bases: *const u8,
        m: usize,
        scalars: *const Scalar,
        n: usize,
        runs: u32,
        r: *mut u8,
        g: *mut u8,
        o: *mut u8,
        ms: *mut f64,
    ) -> sppark::Error;
    /// H from `abc` (a | b | c, 3·2^`lg` scalars) by six NTTs into `six` and by the textbook
    /// seven into `seven` (2^`lg` scalars each), their median device milliseconds over `runs`
    /// runs after an untimed one in `ms[0]` and `ms[1]`. The caller holds the interlock.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cuzk_h_compare(
        dev: c_int,
        lg: u32,
        abc: *const Scalar,
        z_inv: *const Scalar,
        runs: u32,
        six: *mut Scalar,
        seven: *mut Scalar,
        ms: *mut f64,
    ) -> sppark::Error;
    /// The device bytes the sorted MSM allocates for `n` points.
    pub(crate) fn cuzk_sorted_msm_bytes(dev: c_int, n: usize, bytes: *mut usize) -> sppark::Error;
    pub(crate) fn cuzk_host_register(
        dev: c_int,
        p: *const u8,
        bytes: usize,
        code: *mut c_int,
    ) -> sppark::Error;
    pub(crate) fn cuzk_host_unregister(dev: c_int, p: *const u8);
    pub(crate) fn cuzk_fixed_base_create(
        dev: c_int,
        g2: c_int,
        table: *const u8,
        len: usize,
        window: u32,
        out: *mut *mut FixedBaseHandle,
    ) -> sppark::Error;
    pub(crate) fn cuzk_fixed_base_run(
        fb: *mut FixedBaseHandle,
        scalars: *const Scalar,
        n: usize,
        out: *mut u8,
    ) -> sppark::Error;
    pub(crate) fn cuzk_fixed_base_destroy(fb: *mut FixedBaseHandle);
}

/// Turns sppark's error into a `Result`, keeping the `expr@file:line` message.
pub(crate) fn check(err: sppark::Error, what: &str) -> Result<(), String> {
    if err.code == 0 {
        Ok(())
    } else {
        Err(format!(
            "{what}: {} (code {})",
            String::from(&err),
            err.code
        ))
    }
}
