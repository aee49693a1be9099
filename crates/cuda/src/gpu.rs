//! The CUDA prover: per-device state (interlock, VRAM budget and reservations, resident SRS
//! copies, worker contexts), the SRS tiers (resident in VRAM, or streamed per proof from
//! page-locked host memory), the safe wrapper around `cuda/cuzk.cu`, and the
//! `ProverBackend` implementation.
//!
//! VRAM is accounted like host memory: each device has a budget ([`CudaOptions::vram_budget`],
//! by default the free VRAM at first use less a margin) and every device allocation of this
//! backend is covered by a reservation taken before it is made: one per resident SRS copy,
//! one per worker context (its buffers, which only grow, plus the scratch of its largest
//! Pippenger). A `start` that cannot reserve frees idle contexts and unused SRS copies, or
//! waits for a busy context to come back; an SRS that does not fit beside a worker streams.
#![allow(unsafe_code)]

use crate::{assemble::assemble, ffi, plan, CudaOptions, DeviceInfo, PhaseTimings, VramStatus};
use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use cuzk_groth16::{
    prover::PendingG2, Pending, Proof, ProveError, ProverBackend, Srs, Synthesized,
};
use ff::{Field, PrimeField};
use group::Group;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Pippenger parts smaller than this run on the host: a GPU launch costs more.
const SMALL_MSM: usize = 64;
/// VRAM kept free beyond every estimate (driver, fragmentation, sppark's own buffers).
const VRAM_MARGIN: u64 = 1 << 30;

fn dev_err(msg: String) -> ProveError {
    ProveError::Device(msg)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind; keep serving.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Rounds a device allocation up as the C++ side does (4 KiB).
fn r4k(bytes: u64) -> u64 {
    bytes.div_ceil(4096) * 4096
}

/// VRAM bytes reserved on one device, given back (and waiters woken) when dropped. Never drop
/// one while holding [`DeviceMem::mem`].
struct Reservation {
    dev: Arc<DeviceMem>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            let mut m = lock(&self.dev.mem);
            m.reserved = m.reserved.saturating_sub(self.bytes);
            drop(m);
            self.dev.cv.notify_all();
        }
    }
}

/// A device-resident copy of one SRS's H, L, A, B_G1 and B_G2 bases.
struct ResidentSrs {
    handle: *mut ffi::SrsHandle,
    /// Dropped after the handle (fields drop after `drop`), so the bytes are free by then.
    res: Reservation,
}

// SAFETY: the handle points to device allocations that are only read after creation; the C++
// side has no thread affinity for them (every call selects the device first).
unsafe impl Send for ResidentSrs {}
// SAFETY: as above; shared access is read-only.
unsafe impl Sync for ResidentSrs {}

impl Drop for ResidentSrs {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuzk_srs_create and is dropped exactly once.
        unsafe { ffi::cuzk_srs_destroy(self.handle) };
    }
}

/// Device buffers of a worker context, in bytes, mirroring `cuzk_worker` (each buffer grows
/// to the largest size asked of it, never shrinks), plus the transient MSM scratch sppark
/// allocates during `compute`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sizes([u64; Sizes::N]);

impl Sizes {
    const ABC: usize = 0;
    /// bits, idx, scalars of query q at QUERY + 3q ..
    const QUERY: usize = 1;
    const GATHERED: usize = 10;
    const PARTIAL: usize = 11;
    const CHUNKS: usize = 12;
    const SCRATCH: usize = 13;
    const N: usize = 14;

    fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    fn max(&self, o: &Sizes) -> Sizes {
        let mut m = *self;
        for (a, b) in m.0.iter_mut().zip(o.0) {
            *a = (*a).max(b);
        }
        m
    }
}

/// Device bytes sppark's Pippenger allocates for `npoints` points (buckets, histogram,
/// digits and sort temporaries), following `msm_t` in sppark 0.1.16, with some slack.
fn msm_scratch(npoints: usize, bucket_bytes: u64) -> u64 {
    if npoints == 0 {
        return 0;
    }
    let lg2 = |n: usize| (usize::BITS - 1 - n.max(1).leading_zeros()) as u64;
    let np = npoints.div_ceil(32) * 32;
    let wbits = if np > 192 {
        lg2(np + np / 2).saturating_sub(8).clamp(10, 18)
    } else {
        10
    };
    let nwins = 254 / wbits + 1;
    let row = 1u64 << (wbits - 1);
    // room for up to 256 SMs of batch-addition results
    let blob = (nwins * row + 256 * 256 / 32) * bucket_bytes + nwins * row * 4;
    let lgn = lg2(npoints + npoints / 2).max(wbits);
    let batch = ((1u64 << (lgn - wbits)) >> 6).max(1);
    let stride = (npoints as u64).div_ceil(batch).div_ceil(32) * 32;
    let temps = stride * 16 + nwins * stride * 4;
    blob + temps + (16 << 20)
}

/// The device buffers one `start` needs of a worker context: a/b/c, the three plans, the
/// gathered points, batch-addition sums, the chunk double buffer when streaming, and the MSM
/// scratch of its largest Pippenger.
fn worker_sizes(n: usize, plan: &plan::ProvePlan, stream_chunk: Option<usize>) -> Sizes {
    let mut s = Sizes::default();
    s.0[Sizes::ABC] = r4k(3 * 32 * n as u64);
    for (q, p) in [&plan.l, &plan.a, &plan.b].into_iter().enumerate() {
        let has_ones = p.ones.iter().any(|w| *w != 0);
        let words = p.ones.len() as u64;
        let at = Sizes::QUERY + 3 * q;
        s.0[at] = if has_ones {
            r4k((words.div_ceil(16) * 16 + 16) * 8)
        } else {
            0
        };
        s.0[at + 1] = r4k(4 * p.idx.len() as u64);
        s.0[at + 2] = r4k(32 * p.idx.len() as u64);
    }
    s.0[Sizes::GATHERED] = r4k((96 * plan.l.idx.len() as u64)
        .max(96 * plan.a.idx.len() as u64)
        .max(192 * plan.b.idx.len() as u64));
    s.0[Sizes::PARTIAL] = 1 << 20;
    s.0[Sizes::CHUNKS] = stream_chunk.map_or(0, |c| 2 * r4k(192 * c as u64));
    let h_points = match stream_chunk {
        Some(c) => c.min(n - 1),
        None => n - 1,
    };
    s.0[Sizes::SCRATCH] = msm_scratch(h_points, 192)
        .max(msm_scratch(plan.l.idx.len(), 192))
        .max(msm_scratch(plan.a.idx.len(), 192))
        .max(msm_scratch(plan.b.idx.len(), 384));
    s
}

/// Device bytes of a resident copy of `srs`.
fn srs_bytes(srs: &Srs) -> u64 {
    [srs.h.len(), srs.l.len(), srs.a.len(), srs.b_g1.len()]
        .iter()
        .map(|&n| r4k(96 * n as u64))
        .sum::<u64>()
        + r4k(192 * srs.b_g2.len() as u64)
}

/// One worker context: a copy stream, pinned staging buffers and device buffers for a/b/c
/// and the MSM plans. Used by one `start` at a time.
struct Worker {
    handle: *mut ffi::WorkerHandle,
    /// What its device buffers may have grown to (and the scratch it may use), all reserved
    /// in `res`.
    sizes: Sizes,
    /// Dropped after the handle (fields drop after `drop`).
    res: Reservation,
}

// SAFETY: a worker context is used by one thread at a time (it is moved out of the idle list
// for the duration of a `start`); the C++ side selects the device on every call.
unsafe impl Send for Worker {}

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuzk_worker_create and is dropped exactly once.
        unsafe { ffi::cuzk_worker_destroy(self.handle) };
    }
}

impl Worker {
    /// Bytes more to reserve before this context can serve `need`.
    fn growth(&self, need: &Sizes) -> u64 {
        self.sizes.max(need).total() - self.sizes.total()
    }
}

/// Memory state of one device, under one lock: the budget and what is reserved against it,
/// resident SRS copies and idle worker contexts.
struct Mem {
    options: CudaOptions,
    budget: u64,
    reserved: u64,
    /// SRS copies in VRAM keyed by [`Srs::id`]; an entry in use is also held by the `start`
    /// using it, so eviction never frees bases under a running MSM.
    resident: HashMap<u64, Arc<ResidentSrs>>,
    /// SRS ids being uploaded (their bytes are reserved already).
    uploading: HashSet<u64>,
    /// Idle worker contexts, reused so device buffers and pinned staging are allocated once.
    idle: Vec<Worker>,
    /// Worker contexts taken out of `idle` (or created) and not yet given back.
    busy: usize,
    waits: u64,
}

impl Mem {
    fn free(&self) -> u64 {
        self.budget.saturating_sub(self.reserved)
    }

    /// Bytes of resident copies nobody uses (other than `keep`).
    fn idle_srs_bytes(&self, keep: Option<u64>) -> u64 {
        self.resident
            .iter()
            .filter(|(k, r)| Some(**k) != keep && Arc::strong_count(r) == 1)
            .map(|(_, r)| r.res.bytes)
            .sum()
    }

    /// Moves idle worker contexts (all but `spare`), then idle SRS copies (not `keep`) into
    /// `out` until `want` bytes would be released. The caller drops `out` after unlocking.
    fn reclaim(&mut self, want: u64, spare: Option<usize>, keep: Option<u64>, out: &mut Victims) {
        let mut got = 0;
        let mut i = 0;
        let mut spare = spare;
        while got < want && i < self.idle.len() {
            if Some(i) == spare {
                i += 1;
                continue;
            }
            let w = self.idle.swap_remove(i);
            // swap_remove moved the last element to i: keep tracking the spare one
            if spare == Some(self.idle.len()) {
                spare = Some(i);
            }
            got += w.res.bytes;
            out.workers.push(w);
        }
        if got < want {
            let ids: Vec<u64> = self
                .resident
                .iter()
                .filter(|(k, r)| Some(**k) != keep && Arc::strong_count(r) == 1)
                .map(|(k, _)| *k)
                .collect();
            for k in ids {
                if got >= want {
                    break;
                }
                if let Some(r) = self.resident.remove(&k) {
                    got += r.res.bytes;
                    out.srs.push(r);
                }
            }
        }
    }
}

/// Worker contexts and SRS copies taken out of [`Mem`] to be freed once its lock is released.
#[derive(Default)]
struct Victims {
    workers: Vec<Worker>,
    srs: Vec<Arc<ResidentSrs>>,
}

/// The lock and condition variable over a device's [`Mem`].
struct DeviceMem {
    mem: Mutex<Mem>,
    cv: Condvar,
}

impl DeviceMem {
    /// Waits for a release (or a short timeout, so a missed wake-up only costs time).
    fn wait<'a>(&self, m: MutexGuard<'a, Mem>) -> MutexGuard<'a, Mem> {
        match self.cv.wait_timeout(m, Duration::from_millis(200)) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        }
    }

    fn notify(&self) {
        let _m = lock(&self.mem);
        self.cv.notify_all();
    }
}

/// State shared by every [`CudaProver`] of one device.
struct DeviceState {
    ordinal: usize,
    /// The default budget: free VRAM when the device was opened, less [`VRAM_MARGIN`].
    default_budget: u64,
    /// Held for the GPU-exclusive phase (NTTs and MSMs, streamed SRS chunks included): they
    /// run on sppark's per-device streams and scratch, which two workers must not use at once.
    /// Uploads and host work happen outside it, so a second worker overlaps them with the
    /// first one's kernels. Also held while an SRS is uploaded to stay resident.
    gpu_lock: Mutex<()>,
    mem: Arc<DeviceMem>,
    /// Nanoseconds the interlock was held, for the busy fraction.
    busy_ns: AtomicU64,
}

/// A worker context taken for one `start`; given back to the idle list by [`Lease::done`],
/// dropped (and its reservation released) if the `start` fails.
struct Lease<'a> {
    dev: &'a DeviceState,
    w: Option<Worker>,
}

impl Lease<'_> {
    /// The context's handle (null only after `done`, which consumes the lease; the C++ side
    /// rejects null).
    fn handle(&self) -> *mut ffi::WorkerHandle {
        self.w.as_ref().map_or(std::ptr::null_mut(), |w| w.handle)
    }

    fn done(mut self) {
        if let Some(w) = self.w.take() {
            let mut m = lock(&self.dev.mem.mem);
            m.busy = m.busy.saturating_sub(1);
            m.idle.push(w);
            drop(m);
            self.dev.mem.cv.notify_all();
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.w.take() {
            // A failed context may hold half-finished state: drop it, keep the device.
            let mut m = lock(&self.dev.mem.mem);
            m.busy = m.busy.saturating_sub(1);
            drop(m);
            drop(w);
            self.dev.mem.notify();
        }
    }
}

/// Page-locked registrations of one SRS's vectors (portable, so any device DMAs from them),
/// made on the SRS's first streamed use and kept in [`Srs::backend_cache`], which is dropped
/// before the vectors: `Drop` unregisters them before they are freed.
struct HostPins {
    ordinal: i32,
    /// (address, bytes) of H, L, A, B_G1, B_G2 that registered; `None` for those that did not
    /// (empty, or the driver refused: their chunks go through pinned staging copies).
    pins: [Option<(usize, usize)>; 5],
}

impl HostPins {
    fn sections(srs: &Srs) -> [(*const u8, usize); 5] {
        [
            (srs.h.as_ptr().cast(), srs.h.len() * 96),
            (srs.l.as_ptr().cast(), srs.l.len() * 96),
            (srs.a.as_ptr().cast(), srs.a.len() * 96),
            (srs.b_g1.as_ptr().cast(), srs.b_g1.len() * 96),
            (srs.b_g2.as_ptr().cast(), srs.b_g2.len() * 192),
        ]
    }

    fn register(ordinal: usize, srs: &Srs) -> HostPins {
        static WARNED: AtomicBool = AtomicBool::new(false);
        let mut pins = [None; 5];
        for (i, (p, bytes)) in Self::sections(srs).into_iter().enumerate() {
            if bytes == 0 {
                continue;
            }
            let mut code = 0;
            // SAFETY: [p, p + bytes) is a live vector of `srs`; registration does not move
            // or change it, and `Drop` undoes it before the vector is freed (see the type).
            let err = unsafe { ffi::cuzk_host_register(ordinal as i32, p, bytes, &mut code) };
            match ffi::check(err, "host register") {
                Ok(()) if code == 0 => pins[i] = Some((p as usize, bytes)),
                other => {
                    if !WARNED.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            device = ordinal,
                            section = i,
                            cuda_error = code,
                            err = ?other.err(),
                            "cannot page-lock SRS host memory; streaming it through pinned \
                             staging copies instead (logged once)"
                        );
                    }
                }
            }
        }
        HostPins {
            ordinal: ordinal as i32,
            pins,
        }
    }

    /// The bitmask of sections of `srs` that are page-locked now (a section whose vector was
    /// replaced since registration is not).
    fn pinned_mask(&self, srs: &Srs) -> u32 {
        let mut mask = 0;
        for (i, (p, bytes)) in Self::sections(srs).into_iter().enumerate() {
            if self.pins[i] == Some((p as usize, bytes)) {
                mask |= 1 << i;
            }
        }
        mask
    }
}

impl Drop for HostPins {
    fn drop(&mut self) {
        for (p, _) in self.pins.iter().flatten() {
            // SAFETY: `p` was registered by cuzk_host_register and is unregistered once.
            unsafe { ffi::cuzk_host_unregister(self.ordinal, *p as *const u8) };
        }
    }
}

/// Where one proof's SRS bases come from.
enum Tier {
    Resident(Arc<ResidentSrs>),
    Streamed,
}

fn registry() -> &'static Mutex<HashMap<usize, Arc<DeviceState>>> {
    static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<DeviceState>>>> = OnceLock::new();
    DEVICES.get_or_init(|| Mutex::new(HashMap::new()))
}

fn device_count() -> Result<usize, String> {
    let mut n = 0usize;
    // SAFETY: `n` is a valid out-pointer for the duration of the call.
    let err = unsafe { ffi::cuzk_device_count(&mut n) };
    ffi::check(err, "device count")?;
    Ok(n)
}

fn device_info(ordinal: usize) -> Result<DeviceInfo, String> {
    let mut info = ffi::CDeviceInfo {
        name: [0; 256],
        vram_total: 0,
        vram_free: 0,
    };
    // SAFETY: `info` is a valid out-pointer; the C++ side NUL-terminates `name`.
    let err = unsafe { ffi::cuzk_device_info(ordinal as i32, &mut info) };
    ffi::check(err, "device info")?;
    let bytes: Vec<u8> = info
        .name
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    let (vram_budget, vram_reserved) = match lock(registry()).get(&ordinal) {
        Some(d) => {
            let m = lock(&d.mem.mem);
            (m.budget, m.reserved)
        }
        None => (0, 0),
    };
    Ok(DeviceInfo {
        ordinal,
        name: String::from_utf8_lossy(&bytes).into_owned(),
        vram_total: info.vram_total as u64,
        vram_free: info.vram_free as u64,
        vram_budget,
        vram_reserved,
    })
}

/// The visible CUDA devices; empty when there is none or the driver is missing.
pub fn devices() -> Vec<DeviceInfo> {
    let n = device_count().unwrap_or(0);
    (0..n).filter_map(|i| device_info(i).ok()).collect()
}

/// The CUDA Groth16 prover of one device. Cheap to clone; safe to call from several threads
/// (two per device is the intended load).
#[derive(Clone)]
pub struct CudaProver {
    dev: Arc<DeviceState>,
}

impl std::fmt::Debug for CudaProver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaProver")
            .field("ordinal", &self.dev.ordinal)
            .finish()
    }
}

fn jac1(j: &ffi::Jac1) -> G1Projective {
    let p = blst::blst_p1 {
        x: blst::blst_fp { l: j.x },
        y: blst::blst_fp { l: j.y },
        z: blst::blst_fp { l: j.z },
    };
    // SAFETY: blstrs declares `#[repr(transparent)] struct G1Projective(blst_p1)` (same blst
    // crate instance); the device returns Jacobian coordinates in blst's Montgomery form,
    // Z = 0 for the identity, which is exactly a blst_p1.
    unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(p) }
}

fn fp2(limbs: &[u64; 12]) -> blst::blst_fp2 {
    let mut c0 = [0u64; 6];
    let mut c1 = [0u64; 6];
    c0.copy_from_slice(&limbs[..6]);
    c1.copy_from_slice(&limbs[6..]);
    blst::blst_fp2 {
        fp: [blst::blst_fp { l: c0 }, blst::blst_fp { l: c1 }],
    }
}

fn jac2(j: &ffi::Jac2) -> G2Projective {
    let p = blst::blst_p2 {
        x: fp2(&j.x),
        y: fp2(&j.y),
        z: fp2(&j.z),
    };
    // SAFETY: as in `jac1`: `#[repr(transparent)] struct G2Projective(blst_p2)`.
    unsafe { std::mem::transmute::<blst::blst_p2, G2Projective>(p) }
}

/// Takes a small Pippenger part off a plan and evaluates it on the host.
fn host_small<G, A>(q: &mut plan::QueryPlan, bases: &[A]) -> G
where
    G: group::Group<Scalar = Scalar> + From<A>,
    A: Copy,
{
    let mut acc = G::identity();
    if q.idx.len() < SMALL_MSM {
        for (&i, s) in q.idx.iter().zip(&q.scalars) {
            acc += G::from(bases[i as usize]) * s;
        }
        q.idx.clear();
        q.scalars.clear();
    }
    acc
}

fn cquery(q: &plan::QueryPlan) -> ffi::CQuery {
    let has_ones = q.ones.iter().any(|w| *w != 0);
    ffi::CQuery {
        nbases: q.nbases,
        ones_bits: if has_ones {
            q.ones.as_ptr()
        } else {
            std::ptr::null()
        },
        ones_words: if has_ones { q.ones.len() } else { 0 },
        idx: q.idx.as_ptr(),
        scalars: q.scalars.as_ptr(),
        nothers: q.idx.len(),
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn shape_err(what: &'static str, expected: usize, got: usize) -> ProveError {
    ProveError::ShapeMismatch {
        what,
        expected,
        got,
    }
}

/// Chunk size in bases: the option rounded up to a multiple of 1024 (batch-addition blocks).
fn stream_chunk(o: &CudaOptions) -> usize {
    o.stream_chunk_bases.max(1).div_ceil(1024) * 1024
}

impl CudaProver {
    /// The prover of device `ordinal` (as listed by [`devices`]), under the device's current
    /// options ([`CudaOptions::default`] on the device's first use).
    pub fn new(ordinal: usize) -> Result<CudaProver, ProveError> {
        Self::open(ordinal, None)
    }

    /// The prover of device `ordinal`, replacing the options of the device (shared by every
    /// prover of it; see [`CudaOptions`]).
    pub fn with_options(ordinal: usize, options: CudaOptions) -> Result<CudaProver, ProveError> {
        Self::open(ordinal, Some(options))
    }

    fn open(ordinal: usize, options: Option<CudaOptions>) -> Result<CudaProver, ProveError> {
        let n =
            device_count().map_err(|e| ProveError::Unavailable(format!("no CUDA devices: {e}")))?;
        if ordinal >= n {
            return Err(ProveError::Unavailable(format!(
                "CUDA device {ordinal} does not exist ({n} visible)"
            )));
        }
        let existing = lock(registry()).get(&ordinal).cloned();
        let dev = match existing {
            Some(d) => d,
            None => {
                // (queried before taking the registry lock: device_info takes it too)
                let free = device_info(ordinal)
                    .map_err(|e| ProveError::Unavailable(format!("CUDA device {ordinal}: {e}")))?
                    .vram_free;
                let default_budget = free.saturating_sub(VRAM_MARGIN);
                lock(registry())
                    .entry(ordinal)
                    .or_insert_with(|| {
                        Arc::new(DeviceState {
                            ordinal,
                            default_budget,
                            gpu_lock: Mutex::new(()),
                            mem: Arc::new(DeviceMem {
                                mem: Mutex::new(Mem {
                                    options: CudaOptions::default(),
                                    budget: default_budget,
                                    reserved: 0,
                                    resident: HashMap::new(),
                                    uploading: HashSet::new(),
                                    idle: Vec::new(),
                                    busy: 0,
                                    waits: 0,
                                }),
                                cv: Condvar::new(),
                            }),
                            busy_ns: AtomicU64::new(0),
                        })
                    })
                    .clone()
            }
        };
        if let Some(o) = options {
            let mut m = lock(&dev.mem.mem);
            m.options = o;
            m.budget = o.vram_budget.unwrap_or(dev.default_budget);
            drop(m);
            dev.mem.cv.notify_all();
        }
        Ok(CudaProver { dev })
    }

    /// The device this prover drives.
    pub fn ordinal(&self) -> usize {
        self.dev.ordinal
    }

    /// The device's options (shared by every prover of it).
    pub fn options(&self) -> CudaOptions {
        lock(&self.dev.mem.mem).options
    }

    /// The device's VRAM budget and reservations.
    pub fn vram_status(&self) -> VramStatus {
        let m = lock(&self.dev.mem.mem);
        VramStatus {
            budget: m.budget,
            reserved: m.reserved,
            reserved_srs: m.resident.values().map(|r| r.res.bytes).sum(),
            resident_srs: m.resident.len(),
            idle_workers: m.idle.len(),
            busy_workers: m.busy,
            waits: m.waits,
        }
    }

    /// Name, VRAM (total, free) and this backend's budget and reservations on the device.
    pub fn device_info(&self) -> Result<DeviceInfo, ProveError> {
        device_info(self.dev.ordinal).map_err(dev_err)
    }

    /// Milliseconds the device interlock has been held since this device was first used.
    pub fn busy_ms(&self) -> f64 {
        self.dev.busy_ns.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Drops the device-resident copy of an SRS (freed once no `start` uses it).
    pub fn evict(&self, srs_id: u64) {
        let r = lock(&self.dev.mem.mem).resident.remove(&srs_id);
        drop(r);
    }

    /// Frees every idle worker context and every resident SRS copy no `start` is using, with
    /// their reservations.
    pub fn trim(&self) {
        let mut victims = Victims::default();
        {
            let mut m = lock(&self.dev.mem.mem);
            m.reclaim(u64::MAX, None, None, &mut victims);
        }
        drop(victims);
    }

    /// Where `srs`'s bases come from for one proof: its resident copy (uploading it, after
    /// reserving its bytes, if it fits beside a worker needing `need_worker` bytes and the
    /// copies in use), else streaming from host memory.
    fn tier(&self, srs: &Srs, need_worker: u64) -> Result<Tier, ProveError> {
        let mem = &self.dev.mem;
        let bytes = srs_bytes(srs);
        let res = loop {
            let mut victims = Victims::default();
            {
                let mut m = lock(&mem.mem);
                if m.options.force_streaming {
                    return Ok(Tier::Streamed);
                }
                if let Some(r) = m.resident.get(&srs.id) {
                    return Ok(Tier::Resident(r.clone()));
                }
                if m.uploading.contains(&srs.id) {
                    m.waits += 1;
                    let _m = mem.wait(m);
                    continue;
                }
                let in_use: u64 = m
                    .resident
                    .values()
                    .filter(|r| Arc::strong_count(r) > 1)
                    .map(|r| r.res.bytes)
                    .sum();
                if bytes + need_worker + in_use > m.budget {
                    return Ok(Tier::Streamed);
                }
                let free = m.free();
                if free >= bytes {
                    m.reserved += bytes;
                    m.uploading.insert(srs.id);
                    break Reservation {
                        dev: mem.clone(),
                        bytes,
                    };
                }
                let idle_workers: u64 = m.idle.iter().map(|w| w.res.bytes).sum();
                if free + idle_workers + m.idle_srs_bytes(None) >= bytes {
                    m.reclaim(bytes - free, None, None, &mut victims);
                } else if m.busy > 0 {
                    // contexts in use come back idle, and then can be freed
                    m.waits += 1;
                    let _m = mem.wait(m);
                } else {
                    return Ok(Tier::Streamed);
                }
            }
            drop(victims);
        };

        // Upload under the interlock: it uses sppark's streams.
        let gpu = lock(&self.dev.gpu_lock);
        let mut handle = std::ptr::null_mut();
        // SAFETY: every pointer/length pair describes a live slice of `srs` of that many
        // points; G1Affine/G2Affine are repr(transparent) over blst's 96/192-byte affine
        // points, the layout the device code expects; `handle` is a valid out-pointer.
        let err = unsafe {
            ffi::cuzk_srs_create(
                self.dev.ordinal as i32,
                srs.h.as_ptr().cast(),
                srs.h.len(),
                srs.l.as_ptr().cast(),
                srs.l.len(),
                srs.a.as_ptr().cast(),
                srs.a.len(),
                srs.b_g1.as_ptr().cast(),
                srs.b_g1.len(),
                srs.b_g2.as_ptr().cast(),
                srs.b_g2.len(),
                &mut handle,
            )
        };
        drop(gpu);
        let mut m = lock(&mem.mem);
        m.uploading.remove(&srs.id);
        match ffi::check(err, "SRS upload") {
            Ok(()) => {
                let r = Arc::new(ResidentSrs { handle, res });
                m.resident.insert(srs.id, r.clone());
                drop(m);
                mem.cv.notify_all();
                Ok(Tier::Resident(r))
            }
            Err(e) => {
                drop(m);
                drop(res);
                tracing::warn!(
                    device = self.dev.ordinal,
                    err = %e,
                    "SRS upload failed; streaming it from host memory instead"
                );
                Ok(Tier::Streamed)
            }
        }
    }

    /// A worker context whose reservation covers `need`: an idle one (grown if needed), or a
    /// new one. Frees other idle contexts and unused SRS copies (not `keep_srs`) to make room,
    /// waits for busy contexts to come back when that is not enough, and fails only when
    /// nothing could ever make room.
    fn take_worker(&self, need: &Sizes, keep_srs: Option<u64>) -> Result<Lease<'_>, ProveError> {
        let mem = &self.dev.mem;
        loop {
            let mut victims = Victims::default();
            {
                let mut m = lock(&mem.mem);
                let best = m
                    .idle
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (w.growth(need), i))
                    .min();
                let growth = best.map_or(need.total(), |(g, _)| g);
                let free = m.free();
                if free >= growth {
                    m.reserved += growth;
                    m.busy += 1;
                    if let Some((_, i)) = best {
                        let mut w = m.idle.swap_remove(i);
                        w.res.bytes += growth;
                        w.sizes = w.sizes.max(need);
                        return Ok(Lease {
                            dev: &self.dev,
                            w: Some(w),
                        });
                    }
                    drop(m);
                    let res = Reservation {
                        dev: mem.clone(),
                        bytes: growth,
                    };
                    let mut handle = std::ptr::null_mut();
                    // SAFETY: `handle` is a valid out-pointer.
                    let err =
                        unsafe { ffi::cuzk_worker_create(self.dev.ordinal as i32, &mut handle) };
                    if let Err(e) = ffi::check(err, "worker create") {
                        drop(res);
                        let mut m = lock(&mem.mem);
                        m.busy = m.busy.saturating_sub(1);
                        drop(m);
                        mem.cv.notify_all();
                        return Err(dev_err(e));
                    }
                    return Ok(Lease {
                        dev: &self.dev,
                        w: Some(Worker {
                            handle,
                            sizes: *need,
                            res,
                        }),
                    });
                }
                let spare = best.map(|(_, i)| i);
                let others: u64 = m
                    .idle
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| Some(*i) != spare)
                    .map(|(_, w)| w.res.bytes)
                    .sum();
                let srs_in_use = m
                    .resident
                    .iter()
                    .any(|(k, r)| Some(*k) != keep_srs && Arc::strong_count(r) > 1);
                if free + others + m.idle_srs_bytes(keep_srs) >= growth {
                    m.reclaim(growth - free, spare, keep_srs, &mut victims);
                } else if m.busy > 0 || srs_in_use || !m.uploading.is_empty() {
                    m.waits += 1;
                    let _m = mem.wait(m);
                } else {
                    return Err(ProveError::Unavailable(format!(
                        "CUDA device {}: a worker context needs {} MiB more VRAM; budget {} MiB, \
                         {} MiB reserved",
                        self.dev.ordinal,
                        growth >> 20,
                        m.budget >> 20,
                        m.reserved >> 20
                    )));
                }
            }
            drop(victims);
        }
    }

    /// `start` with a phase breakdown.
    pub fn start_timed(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, PhaseTimings), ProveError> {
        self.start_inner(srs, circuit, r, s, false)
            .map(|(p, t, _)| (p, t))
    }

    /// `start` with a phase breakdown, handing the circuit back (every vector intact, with its
    /// capacity) once it is on the device, for the caller to reuse its allocations.
    pub fn start_reusing_timed(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, PhaseTimings, Synthesized), ProveError> {
        let (p, t, c) = self.start_inner(srs, circuit, r, s, true)?;
        let c = c.ok_or_else(|| dev_err("circuit not kept".into()))?;
        Ok((p, t, c))
    }

    /// The whole `start`; `keep`: return the circuit instead of dropping it after the upload.
    fn start_inner(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
        keep: bool,
    ) -> Result<(Pending, PhaseTimings, Option<Synthesized>), ProveError> {
        let t_total = Instant::now();
        let mut t = PhaseTimings::default();

        // Shapes, checked before anything touches the device.
        let n = srs.h.len() + 1;
        if !n.is_power_of_two() || n < 2 {
            return Err(shape_err(
                "H bases + 1 (a power of two)",
                n.next_power_of_two(),
                n,
            ));
        }
        if circuit.a.is_empty() {
            return Err(ProveError::MissingEvaluations);
        }
        let len = circuit.num_constraints + circuit.inputs.len();
        for (what, v) in [
            ("a evaluations", &circuit.a),
            ("b evaluations", &circuit.b),
            ("c evaluations", &circuit.c),
        ] {
            if v.len() != len {
                return Err(shape_err(what, len, v.len()));
            }
        }
        if len > n {
            return Err(shape_err("constraints + inputs (domain size)", n, len));
        }
        if circuit.inputs.len() != srs.vk.ic.len() {
            return Err(shape_err("inputs", srs.vk.ic.len(), circuit.inputs.len()));
        }
        if circuit.aux.len() != srs.l.len() {
            return Err(shape_err("aux (L bases)", srs.l.len(), circuit.aux.len()));
        }
        if srs.b_g1.len() != srs.b_g2.len() {
            return Err(shape_err("B G2 bases", srs.b_g1.len(), srs.b_g2.len()));
        }

        let t0 = Instant::now();
        let mut plan = plan::plan(
            &circuit.inputs,
            &circuit.aux,
            &circuit.a_aux_density,
            &circuit.b_input_density,
            &circuit.b_aux_density,
        )?;
        if plan.a.nbases != srs.a.len() {
            return Err(shape_err("A bases", srs.a.len(), plan.a.nbases));
        }
        if plan.b.nbases != srs.b_g1.len() {
            return Err(shape_err("B G1 bases", srs.b_g1.len(), plan.b.nbases));
        }
        let small_l: G1Projective = host_small(&mut plan.l, &srs.l);
        let small_a: G1Projective = host_small(&mut plan.a, &srs.a);
        let (small_b1, small_b2) = if plan.b.idx.len() < SMALL_MSM {
            let mut b2 = plan::QueryPlan {
                idx: plan.b.idx.clone(),
                scalars: plan.b.scalars.clone(),
                ..Default::default()
            };
            let b2: G2Projective = host_small(&mut b2, &srs.b_g2);
            (host_small::<G1Projective, _>(&mut plan.b, &srs.b_g1), b2)
        } else {
            (G1Projective::identity(), G2Projective::identity())
        };
        t.plan_ms = ms(t0);

        let lg = n.trailing_zeros();
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let z = g.pow_vartime([n as u64]) - Scalar::ONE;
        let z_inv = Option::<Scalar>::from(z.invert())
            .ok_or_else(|| dev_err("coset generator^n == 1".into()))?;

        // SRS tier: resident in VRAM, or streamed from (page-locked) host memory.
        let t0 = Instant::now();
        let options = self.options();
        let chunk = stream_chunk(&options);
        let need_resident = worker_sizes(n, &plan, None);
        let tier = self.tier(srs, need_resident.total())?;
        let host = match &tier {
            Tier::Resident(_) => None,
            Tier::Streamed => {
                let pinned = if options.page_lock_host {
                    let cache = srs
                        .backend_cache
                        .get_or_init(|| Box::new(HostPins::register(self.dev.ordinal, srs)));
                    cache
                        .downcast_ref::<HostPins>()
                        .map_or(0, |p| p.pinned_mask(srs))
                } else {
                    0
                };
                Some(ffi::CHostSrs {
                    h: srs.h.as_ptr().cast(),
                    nh: srs.h.len(),
                    l: srs.l.as_ptr().cast(),
                    nl: srs.l.len(),
                    a: srs.a.as_ptr().cast(),
                    na: srs.a.len(),
                    b_g1: srs.b_g1.as_ptr().cast(),
                    nb1: srs.b_g1.len(),
                    b_g2: srs.b_g2.as_ptr().cast(),
                    nb2: srs.b_g2.len(),
                    pinned,
                })
            }
        };
        t.srs_upload_ms = ms(t0);
        t.streamed = host.is_some();
        let (need, keep_srs) = match &host {
            Some(_) => (worker_sizes(n, &plan, Some(chunk)), None),
            None => (need_resident, Some(srs.id)),
        };

        let t0 = Instant::now();
        let lease = self.take_worker(&need, keep_srs)?;
        t.wait_vram_ms = ms(t0);

        let input = ffi::CInput {
            a: circuit.a.as_ptr(),
            b: circuit.b.as_ptr(),
            c: circuit.c.as_ptr(),
            abc_len: len,
            lg_domain: lg,
            z_inv: &z_inv,
            l: cquery(&plan.l),
            a_q: cquery(&plan.a),
            b_q: cquery(&plan.b),
            stream_chunk: if host.is_some() { chunk } else { 0 },
        };
        let t0 = Instant::now();
        // SAFETY: `input` points into `circuit` and `plan`, alive and unmoved across the
        // call; lengths were checked above (abc_len ≤ 2^lg, bitmaps cover nbases bits,
        // idx < nbases and ascending by construction of the plan). The call returns only
        // after the copy stream is idle, so the host buffers may be freed afterwards. The
        // worker's reservation covers every buffer the call may grow.
        let err = unsafe { ffi::cuzk_worker_upload(lease.handle(), &input) };
        ffi::check(err, "upload").map_err(dev_err)?;
        t.upload_ms = ms(t0);
        // a/b/c (and the whole witness) are on the device now: free them before the kernels,
        // or hand them back.
        let t0 = Instant::now();
        let kept = if keep {
            Some(circuit)
        } else {
            drop(circuit);
            None
        };
        t.free_ms = ms(t0);

        let dev_srs: *const ffi::SrsHandle = match &tier {
            Tier::Resident(r) => r.handle,
            Tier::Streamed => std::ptr::null(),
        };
        let host_srs: *const ffi::CHostSrs = host
            .as_ref()
            .map_or(std::ptr::null(), |h| h as *const ffi::CHostSrs);
        let tl = Instant::now();
        let guard = lock(&self.dev.gpu_lock);
        t.wait_lock_ms = ms(tl);
        let tx = Instant::now();
        let mut out = ffi::COutput::default();
        // SAFETY: the worker holds a prepared input (upload succeeded), exactly one of the SRS
        // sources is set: the resident handle stays alive through `tier`, the host sections
        // point into `srs`, borrowed (so alive and unmodified) for the whole call. `out` is a
        // valid out-pointer. The interlock is held.
        let err = unsafe { ffi::cuzk_worker_compute(lease.handle(), dev_srs, host_srs, &mut out) };
        let excl = tx.elapsed();
        drop(guard);
        self.dev
            .busy_ns
            .fetch_add(excl.as_nanos() as u64, Ordering::Relaxed);
        // On failure the lease drops its context (it may hold half-finished state).
        ffi::check(err, "prove").map_err(dev_err)?;
        lease.done();
        drop(tier);
        // an SRS copy may have become idle (evictable)
        self.dev.mem.notify();
        t.exclusive_ms = excl.as_secs_f64() * 1e3;
        t.ntt_h_ms = out.ms_ntt_h;
        t.msm_h_ms = out.ms_msm_h;
        t.msm_l_ms = out.ms_msm_l;
        t.msm_a_ms = out.ms_msm_a;
        t.msm_b_g1_ms = out.ms_msm_b_g1;
        t.msm_b_g2_ms = out.ms_msm_b_g2;

        let pending = Pending {
            r,
            s,
            a_g1: jac1(&out.a) + small_a,
            b_g1: jac1(&out.b_g1) + small_b1,
            h_l: jac1(&out.h) + jac1(&out.l) + small_l,
            b_g2: PendingG2::Done(jac2(&out.b_g2) + small_b2),
        };
        t.total_ms = ms(t_total);
        tracing::debug!(device = self.dev.ordinal, ?t, "cuda start");
        Ok((pending, t, kept))
    }
}

impl ProverBackend for CudaProver {
    fn device_memory(&self) -> Option<(u64, u64)> {
        self.device_info().ok().map(|i| (i.vram_total, i.vram_free))
    }

    fn name(&self) -> String {
        format!("cuda:{}", self.dev.ordinal)
    }

    fn start(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<Pending, ProveError> {
        self.start_inner(srs, circuit, r, s, false)
            .map(|(p, _, _)| p)
    }

    fn start_reusing(
        &self,
        srs: &Srs,
        circuit: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Pending, Option<Synthesized>), ProveError> {
        self.start_inner(srs, circuit, r, s, true)
            .map(|(p, _, c)| (p, c))
    }

    fn finish(&self, srs: &Srs, pending: Pending) -> Result<Proof, ProveError> {
        assemble(srs, pending)
    }
}

/// Keeps `G1Affine` in use for the layout assertion below.
const _: () = assert!(std::mem::size_of::<G1Affine>() == 96);
const _: () = assert!(std::mem::size_of::<blstrs::G2Affine>() == 192);
const _: () = assert!(std::mem::size_of::<Scalar>() == 32);
