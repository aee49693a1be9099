//! The VRAM ledger of one device: its budget and the reservations taken against it, the
//! resident SRS copies and the worker contexts those reservations cover, and how a `start`
//! gets room (reuse or grow an idle context, free idle ones and unused SRS copies, wait for a
//! busy context, or stream the SRS).
//!
//! Every device allocation of this backend is covered by a [`Reservation`] taken before it is
//! made: one per resident SRS copy, one per worker context (its buffers, which only grow, plus
//! the scratch of its largest Pippenger; see [`crate::sizes`]).
#![allow(unsafe_code)]

mod matrices;
use crate::{ffi, sizes::Sizes, CudaOptions, VramStatus};
use cuzk_groth16::{ProveError, Srs};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind; keep serving.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// VRAM bytes reserved on one device, given back (and waiters woken) when dropped. Never drop
/// one while holding [`DeviceMem::mem`].
pub(crate) struct Reservation {
    dev: Arc<DeviceMem>,
    bytes: u64,
}

impl Reservation {
    /// The bytes reserved.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
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
pub(crate) struct ResidentSrs {
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

impl ResidentSrs {
    /// The device copy, for `cuzk_worker_compute`.
    pub(crate) fn handle(&self) -> *const ffi::SrsHandle {
        self.handle
    }
}

/// One circuit's A, B, C and coefficient table on one device.
pub(crate) struct ResidentMatrices {
    handle: *mut ffi::MatricesHandle,
    /// The SRS it was first used with, for status reports.
    pub(crate) srs_id: u64,
    /// Dropped after the handle (fields drop after `drop`).
    pub(crate) res: Reservation,
}

// SAFETY: the handle points to device allocations only read after creation; the C++ side
// selects the device on every call.
unsafe impl Send for ResidentMatrices {}
// SAFETY: as above; shared access is read-only.
unsafe impl Sync for ResidentMatrices {}

impl Drop for ResidentMatrices {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuzk_matrices_alloc and is dropped exactly once.
        unsafe { ffi::cuzk_matrices_destroy(self.handle) };
    }
}

impl ResidentMatrices {
    pub(crate) fn new(handle: *mut ffi::MatricesHandle, srs_id: u64, res: Reservation) -> Self {
        ResidentMatrices {
            handle,
            srs_id,
            res,
        }
    }

    /// The device copy, for `cuzk_worker_compute`.
    pub(crate) fn handle(&self) -> *const ffi::MatricesHandle {
        self.handle
    }
}

/// Copies `srs`'s bases to device `ordinal` (the caller holds the device interlock: the copy
/// uses sppark's streams) and returns the handle of the copy.
pub(crate) fn upload_srs(ordinal: usize, srs: &Srs) -> Result<*mut ffi::SrsHandle, String> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: every pointer/length pair describes a live slice of `srs` of that many
    // points; G1Affine/G2Affine are repr(transparent) over blst's 96/192-byte affine
    // points, the layout the device code expects; `handle` is a valid out-pointer.
    let err = unsafe {
        ffi::cuzk_srs_create(
            ordinal as i32,
            srs.h().as_ptr().cast(),
            srs.h().len(),
            srs.l().as_ptr().cast(),
            srs.l().len(),
            srs.a().as_ptr().cast(),
            srs.a().len(),
            srs.b_g1().as_ptr().cast(),
            srs.b_g1().len(),
            srs.b_g2().as_ptr().cast(),
            srs.b_g2().len(),
            &mut handle,
        )
    };
    ffi::check(err, "SRS upload").map(|()| handle)
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
    /// Resident copies whose SRS released its host points ([`DeviceMem::pin`]): never
    /// reclaimed or evicted to make room, only freed when that SRS is dropped.
    pinned: HashSet<u64>,
    /// Compiled circuits' matrices in VRAM keyed by `CompiledCircuit::id`; one in use is
    /// also held by the `start` using it.
    matrices: HashMap<u64, Arc<ResidentMatrices>>,
    /// Compiled circuit ids whose matrices are being uploaded (their bytes are reserved).
    uploading_matrices: HashSet<u64>,
    /// Matrices whose circuit dropped its host copy: never reclaimed, freed with the circuit.
    pinned_matrices: HashSet<u64>,
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

    /// Whether the resident copy `id` may be freed to make room (not `keep`, not pinned,
    /// used by no `start`).
    fn evictable(&self, id: u64, r: &Arc<ResidentSrs>, keep: Option<u64>) -> bool {
        Some(id) != keep && !self.pinned.contains(&id) && Arc::strong_count(r) == 1
    }

    /// Bytes of resident copies nobody uses (other than `keep`), matrices included.
    fn idle_srs_bytes(&self, keep: Option<u64>) -> u64 {
        self.resident
            .iter()
            .filter(|(k, r)| self.evictable(**k, r, keep))
            .map(|(_, r)| r.res.bytes)
            .sum::<u64>()
            + self.idle_matrices_bytes()
    }

    /// Whether the matrices `id` may be freed to make room (not pinned, used by no `start`).
    fn matrices_evictable(&self, id: u64, r: &Arc<ResidentMatrices>) -> bool {
        !self.pinned_matrices.contains(&id) && Arc::strong_count(r) == 1
    }

    /// Bytes of resident matrices no `start` uses (pinned ones excluded).
    fn idle_matrices_bytes(&self) -> u64 {
        self.matrices
            .iter()
            .filter(|(k, r)| self.matrices_evictable(**k, r))
            .map(|(_, r)| r.res.bytes)
            .sum()
    }

    /// Bytes of what `start`s use now, or what stays by rule: SRS copies in use, pinned or
    /// `keep`, and matrices in use.
    fn in_use_bytes(&self, keep: Option<u64>) -> u64 {
        self.resident
            .iter()
            .filter(|(k, r)| {
                Arc::strong_count(r) > 1 || self.pinned.contains(k) || Some(**k) == keep
            })
            .map(|(_, r)| r.res.bytes)
            .sum::<u64>()
            + self
                .matrices
                .iter()
                .filter(|(k, r)| !self.matrices_evictable(**k, r))
                .map(|(_, r)| r.res.bytes)
                .sum::<u64>()
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
                .filter(|(k, r)| self.evictable(**k, r, keep))
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
        if got < want {
            let ids: Vec<u64> = self
                .matrices
                .iter()
                .filter(|(k, r)| self.matrices_evictable(**k, r))
                .map(|(k, _)| *k)
                .collect();
            for k in ids {
                if got >= want {
                    break;
                }
                if let Some(r) = self.matrices.remove(&k) {
                    got += r.res.bytes;
                    out.matrices.push(r);
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
    matrices: Vec<Arc<ResidentMatrices>>,
}

/// What [`DeviceMem::place_matrices`] decided.
pub(crate) enum MatricesPlacement {
    /// Resident already.
    Ready(Arc<ResidentMatrices>),
    /// To be uploaded (under the interlock) into the bytes reserved here, then handed to
    /// [`DeviceMem::matrices_uploaded`].
    Upload(Reservation),
    /// They do not fit beside a worker and what is in use: a/b/c are made on the host.
    NoRoom,
}

/// Where one proof's SRS bases come from.
pub(crate) enum Tier {
    Resident(Arc<ResidentSrs>),
    Streamed,
}

/// What [`DeviceMem::place_srs`] decided.
pub(crate) enum Placement {
    /// Resident already, or streamed.
    Ready(Tier),
    /// To be uploaded (under the interlock) into the bytes reserved here, then handed to
    /// [`DeviceMem::uploaded`].
    Upload(Reservation),
}

/// The lock and condition variable over a device's [`Mem`].
pub(crate) struct DeviceMem {
    mem: Mutex<Mem>,
    cv: Condvar,
}

impl DeviceMem {
    /// A device's ledger with the default options, `budget` and nothing reserved.
    pub(crate) fn new(budget: u64) -> DeviceMem {
        DeviceMem {
            mem: Mutex::new(Mem {
                options: CudaOptions::default(),
                budget,
                reserved: 0,
                resident: HashMap::new(),
                uploading: HashSet::new(),
                matrices: HashMap::new(),
                uploading_matrices: HashSet::new(),
                pinned_matrices: HashSet::new(),
                pinned: HashSet::new(),
                idle: Vec::new(),
                busy: 0,
                waits: 0,
            }),
            cv: Condvar::new(),
        }
    }

    /// Waits for a release (or a short timeout, so a missed wake-up only costs time).
    fn wait<'a>(&self, m: MutexGuard<'a, Mem>) -> MutexGuard<'a, Mem> {
        match self.cv.wait_timeout(m, Duration::from_millis(200)) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        }
    }

    pub(crate) fn notify(&self) {
        let _m = lock(&self.mem);
        self.cv.notify_all();
    }

    /// The device's options.
    pub(crate) fn options(&self) -> CudaOptions {
        lock(&self.mem).options
    }

    /// Replaces the options; the budget becomes theirs, or `default_budget`.
    pub(crate) fn set_options(&self, o: CudaOptions, default_budget: u64) {
        let mut m = lock(&self.mem);
        m.options = o;
        m.budget = o.vram_budget.unwrap_or(default_budget);
        drop(m);
        self.cv.notify_all();
    }

    /// (budget, reserved) bytes.
    pub(crate) fn budget_and_reserved(&self) -> (u64, u64) {
        let m = lock(&self.mem);
        (m.budget, m.reserved)
    }

    /// The budget, reservations, copies and contexts.
    pub(crate) fn status(&self) -> VramStatus {
        let m = lock(&self.mem);
        VramStatus {
            budget: m.budget,
            reserved: m.reserved,
            reserved_srs: m.resident.values().map(|r| r.res.bytes).sum(),
            resident_srs: m.resident.len(),
            pinned_srs: m.pinned.len(),
            reserved_matrices: m.matrices.values().map(|r| r.res.bytes).sum(),
            resident_matrices: m.matrices.len(),
            idle_workers: m.idle.len(),
            busy_workers: m.busy,
            waits: m.waits,
        }
    }

    /// Drops the resident copy of an SRS (freed once no `start` uses it), unless it is pinned:
    /// its SRS has no host copy left to prove from.
    pub(crate) fn evict(&self, srs_id: u64) {
        let mut m = lock(&self.mem);
        if m.pinned.contains(&srs_id) {
            return;
        }
        let r = m.resident.remove(&srs_id);
        drop(m);
        drop(r);
    }

    /// Device bytes reserved for the resident copy of `srs_id` (0: none).
    pub(crate) fn resident_bytes(&self, srs_id: u64) -> u64 {
        lock(&self.mem)
            .resident
            .get(&srs_id)
            .map_or(0, |r| r.res.bytes)
    }

    /// Pins the resident copy of `srs_id`, if there is one: it stays until
    /// [`DeviceMem::unpin`]. Returns whether it is pinned now.
    pub(crate) fn pin(&self, srs_id: u64) -> bool {
        let mut m = lock(&self.mem);
        if !m.resident.contains_key(&srs_id) {
            return false;
        }
        m.pinned.insert(srs_id);
        true
    }

    /// Unpins and drops the resident copy of `srs_id` (freed once no `start` uses it): its SRS
    /// is being dropped.
    pub(crate) fn unpin(&self, srs_id: u64) {
        let mut m = lock(&self.mem);
        m.pinned.remove(&srs_id);
        let r = m.resident.remove(&srs_id);
        drop(m);
        drop(r);
        self.cv.notify_all();
    }

    /// Whether the resident copy of `srs_id` is pinned.
    pub(crate) fn is_pinned(&self, srs_id: u64) -> bool {
        lock(&self.mem).pinned.contains(&srs_id)
    }

    /// Frees every idle worker context and every resident SRS copy no `start` is using.
    pub(crate) fn trim(&self) {
        let mut victims = Victims::default();
        {
            let mut m = lock(&self.mem);
            m.reclaim(u64::MAX, None, None, &mut victims);
        }
        drop(victims);
    }

    /// Where an SRS of `bytes` device bytes comes from for one proof: its resident copy, else
    /// an upload into room reserved here if it fits beside a worker needing `need_worker`
    /// bytes and the copies in use (freeing idle contexts and copies, or waiting for busy
    /// contexts to come back), else streaming from host memory.
    pub(crate) fn place_srs(
        self: &Arc<Self>,
        srs_id: u64,
        bytes: u64,
        need_worker: u64,
    ) -> Placement {
        loop {
            let mut victims = Victims::default();
            {
                let mut m = lock(&self.mem);
                if m.options.force_streaming {
                    return Placement::Ready(Tier::Streamed);
                }
                if let Some(r) = m.resident.get(&srs_id) {
                    return Placement::Ready(Tier::Resident(r.clone()));
                }
                if m.uploading.contains(&srs_id) {
                    m.waits += 1;
                    let _m = self.wait(m);
                    continue;
                }
                let in_use = m.in_use_bytes(None);
                if bytes + need_worker + in_use > m.budget {
                    return Placement::Ready(Tier::Streamed);
                }
                let free = m.free();
                if free >= bytes {
                    m.reserved += bytes;
                    m.uploading.insert(srs_id);
                    return Placement::Upload(Reservation {
                        dev: self.clone(),
                        bytes,
                    });
                }
                let idle_workers: u64 = m.idle.iter().map(|w| w.res.bytes).sum();
                if free + idle_workers + m.idle_srs_bytes(None) >= bytes {
                    m.reclaim(bytes - free, None, None, &mut victims);
                } else if m.busy > 0 {
                    // contexts in use come back idle, and then can be freed
                    m.waits += 1;
                    let _m = self.wait(m);
                } else {
                    return Placement::Ready(Tier::Streamed);
                }
            }
            drop(victims);
        }
    }

    /// Records the outcome of the upload [`place_srs`](Self::place_srs) asked for: the copy
    /// stays resident under `res`, or (upload failed) `res` is given back and the SRS streams.
    pub(crate) fn uploaded(
        &self,
        ordinal: usize,
        srs_id: u64,
        res: Reservation,
        upload: Result<*mut ffi::SrsHandle, String>,
    ) -> Tier {
        let mut m = lock(&self.mem);
        m.uploading.remove(&srs_id);
        match upload {
            Ok(handle) => {
                let r = Arc::new(ResidentSrs { handle, res });
                m.resident.insert(srs_id, r.clone());
                drop(m);
                self.cv.notify_all();
                Tier::Resident(r)
            }
            Err(e) => {
                drop(m);
                drop(res);
                tracing::warn!(
                    device = ordinal,
                    err = %e,
                    "SRS upload failed; streaming it from host memory instead"
                );
                Tier::Streamed
            }
        }
    }

    /// An upload [`place_srs`](Self::place_srs) asked for was given up before it began or
    /// finished (its device copy, if any, is freed already): `res` is given back.
    pub(crate) fn upload_abandoned(&self, srs_id: u64, res: Reservation) {
        lock(&self.mem).uploading.remove(&srs_id);
        drop(res);
        self.cv.notify_all();
    }

    /// A worker context of device `ordinal` whose reservation covers `need`: an idle one
    /// (grown if needed), or a new one. Frees other idle contexts and unused SRS copies (not
    /// `keep_srs`) to make room, waits for busy contexts to come back when that is not enough,
    /// and fails only when nothing could ever make room.
    pub(crate) fn take_worker(
        self: &Arc<Self>,
        ordinal: usize,
        need: &Sizes,
        keep_srs: Option<u64>,
    ) -> Result<Lease<'_>, ProveError> {
        loop {
            let mut victims = Victims::default();
            {
                let mut m = lock(&self.mem);
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
                            mem: self,
                            w: Some(w),
                        });
                    }
                    drop(m);
                    let res = Reservation {
                        dev: self.clone(),
                        bytes: growth,
                    };
                    let mut handle = std::ptr::null_mut();
                    // SAFETY: `handle` is a valid out-pointer.
                    let err = unsafe { ffi::cuzk_worker_create(ordinal as i32, &mut handle) };
                    if let Err(e) = ffi::check(err, "worker create") {
                        drop(res);
                        let mut m = lock(&self.mem);
                        m.busy = m.busy.saturating_sub(1);
                        drop(m);
                        self.cv.notify_all();
                        return Err(ProveError::Device(e));
                    }
                    return Ok(Lease {
                        mem: self,
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
                // (A pinned copy never comes back: it is not "in use" for waiting's sake.)
                if free + others + m.idle_srs_bytes(keep_srs) >= growth {
                    m.reclaim(growth - free, spare, keep_srs, &mut victims);
                } else if m.busy > 0 || srs_in_use || !m.uploading.is_empty() {
                    m.waits += 1;
                    let _m = self.wait(m);
                } else {
                    return Err(ProveError::Unavailable(format!(
                        "CUDA device {}: a worker context needs {} MiB more VRAM; budget {} MiB, \
                         {} MiB reserved",
                        ordinal,
                        growth >> 20,
                        m.budget >> 20,
                        m.reserved >> 20
                    )));
                }
            }
            drop(victims);
        }
    }
}

/// A worker context taken for one `start`; given back to the idle list by [`Lease::done`],
/// dropped (and its reservation released) if the `start` fails.
pub(crate) struct Lease<'a> {
    mem: &'a DeviceMem,
    w: Option<Worker>,
}

impl Lease<'_> {
    /// The context's handle (null only after `done`, which consumes the lease; the C++ side
    /// rejects null).
    pub(crate) fn handle(&self) -> *mut ffi::WorkerHandle {
        self.w.as_ref().map_or(std::ptr::null_mut(), |w| w.handle)
    }

    pub(crate) fn done(mut self) {
        if let Some(w) = self.w.take() {
            let mut m = lock(&self.mem.mem);
            m.busy = m.busy.saturating_sub(1);
            m.idle.push(w);
            drop(m);
            self.mem.cv.notify_all();
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.w.take() {
            // A failed context may hold half-finished state: drop it, keep the device.
            let mut m = lock(&self.mem.mem);
            m.busy = m.busy.saturating_sub(1);
            drop(m);
            drop(w);
            self.mem.notify();
        }
    }
}
