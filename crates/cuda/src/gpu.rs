//! The CUDA prover: [`CudaProver`] over one device's shared state ([`crate::device`]), its
//! `start` in named phases (shape checks, host plan, SRS tier, worker lease, upload, the
//! GPU-exclusive compute, the pending sums) and the `ProverBackend` implementation, whose
//! `finish` is the one Groth16 assembly ([`cuzk_groth16::prover::finish`]).
//!
//! VRAM is accounted like host memory (see [`crate::vram`]): each device has a budget
//! ([`CudaOptions::vram_budget`], by default the free VRAM at first use less a margin) and
//! every device allocation is covered by a reservation taken before it is made. A `start` that
//! cannot reserve frees idle contexts and unused SRS copies, or waits for a busy context to
//! come back; an SRS that does not fit beside a worker streams from host memory.
#![allow(unsafe_code)]

use crate::device::{self, DeviceState};
use crate::matrices;
use crate::points::{jac1, jac2};
use crate::sizes::{
    srs_bytes, srs_worker_bound, stream_chunk, worker_sizes, Sizes, WitnessNeed,
};
use crate::vram::{self, lock, Lease, Placement, ResidentMatrices, Tier};
use crate::{ffi, msm_plan, pins, CudaOptions, DeviceInfo, PhaseTimings, VramStatus};
use blstrs::Scalar;
use cuzk_groth16::{
    prover::PendingG2, Pending, Proof, ProveError, ProverBackend, Srs, Synthesized,
};
use ff::{Field, PrimeField};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod check;
mod host;
mod resident;
mod wire;
use host::{plan_host, upload, HostPlan};

/// Pippenger parts smaller than this run on the host: a GPU launch costs more.
const SMALL_MSM: usize = 64;

fn dev_err(msg: String) -> ProveError {
    ProveError::Device(msg)
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

/// The domain of one proof: `n` (a power of two, H bases + 1) and `len`, the length of a, b
/// and c (constraints + inputs); `deferred`: a/b/c are to be made from compiled matrices.
struct Domain {
    n: usize,
    len: usize,
    deferred: bool,
}

/// Phase 1: checks that `circuit` fits `srs`, before anything touches the device.
fn check_shapes(srs: &Srs, circuit: &Synthesized) -> Result<Domain, ProveError> {
    let counts = srs.counts();
    let n = counts.h + 1;
    if !n.is_power_of_two() || n < 2 {
        return Err(shape_err(
            "H bases + 1 (a power of two)",
            n.next_power_of_two(),
            n,
        ));
    }
    let deferred = circuit.is_deferred();
    if circuit.a.is_empty() && !deferred {
        return Err(ProveError::MissingEvaluations);
    }
    let len = circuit.num_constraints + circuit.inputs.len();
    if let Some(c) = circuit.compiled.as_ref().filter(|_| deferred) {
        for (what, expected, got) in [
            (
                "constraints of the compiled circuit",
                c.num_constraints(),
                circuit.num_constraints,
            ),
            (
                "inputs of the compiled circuit",
                c.num_inputs(),
                circuit.inputs.len(),
            ),
            (
                "aux of the compiled circuit",
                c.num_aux(),
                circuit.num_aux(),
            ),
        ] {
            if expected != got {
                return Err(shape_err(what, expected, got));
            }
        }
    } else {
        for (what, v) in [
            ("a evaluations", &circuit.a),
            ("b evaluations", &circuit.b),
            ("c evaluations", &circuit.c),
        ] {
            if v.len() != len {
                return Err(shape_err(what, len, v.len()));
            }
        }
    }
    if len > n {
        return Err(shape_err("constraints + inputs (domain size)", n, len));
    }
    if circuit.inputs.len() != srs.vk().ic.len() {
        return Err(shape_err("inputs", srs.vk().ic.len(), circuit.inputs.len()));
    }
    if circuit.num_aux() != counts.l {
        return Err(shape_err("aux (L bases)", counts.l, circuit.num_aux()));
    }
    if counts.b_g1 != counts.b_g2 {
        return Err(shape_err("B G2 bases", counts.b_g1, counts.b_g2));
    }
    Ok(Domain { n, len, deferred })
}

/// 1/Z on the coset of the domain of size `n`: Z = gⁿ − 1 for the multiplicative generator g.
fn coset_z_inv(n: usize) -> Result<Scalar, ProveError> {
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let z = g.pow_vartime([n as u64]) - Scalar::ONE;
    Option::<Scalar>::from(z.invert()).ok_or_else(|| dev_err("coset generator^n == 1".into()))
}

/// Where one proof's SRS bases come from, and the worker context it needs for that.
struct SrsSource {
    tier: Tier,
    /// The host sections when the SRS streams.
    host: Option<ffi::CHostSrs>,
    /// Bases per streamed chunk.
    chunk: usize,
    /// The worker context's buffers for this tier.
    need: Sizes,
    /// The resident copy the worker lease must not evict to make room.
    keep_srs: Option<u64>,
    /// [`CudaOptions::early_batch_additions`].
    early_ones: bool,
    /// [`CudaOptions::queued_msm`].
    queued: bool,
    /// [`CudaOptions::sorted_msm`].
    sorted_h: bool,
}

/// Phase 5: the interlocked kernels' results, how long the interlock took to get and how long
/// it was held, and how long the host sums after it took.
struct Computed {
    out: ffi::COutput,
    wait_lock_ms: f64,
    exclusive: Duration,
    host_sums_ms: f64,
}

impl CudaProver {
    /// The prover of device `ordinal` (as listed by [`crate::devices`]), under the device's
    /// current options ([`CudaOptions::default`] on the device's first use).
    pub fn new(ordinal: usize) -> Result<CudaProver, ProveError> {
        Self::open(ordinal, None)
    }

    /// The prover of device `ordinal`, replacing the options of the device (shared by every
    /// prover of it; see [`CudaOptions`]).
    pub fn with_options(ordinal: usize, options: CudaOptions) -> Result<CudaProver, ProveError> {
        Self::open(ordinal, Some(options))
    }

    fn open(ordinal: usize, options: Option<CudaOptions>) -> Result<CudaProver, ProveError> {
        let dev = device::open(ordinal)?;
        if let Some(o) = options {
            dev.set_options(o);
        }
        Ok(CudaProver { dev })
    }

    /// The device this prover drives.
    pub fn ordinal(&self) -> usize {
        self.dev.ordinal
    }

    /// The device's options (shared by every prover of it).
    pub fn options(&self) -> CudaOptions {
        self.dev.mem.options()
    }

    /// The device's VRAM budget and reservations.
    pub fn vram_status(&self) -> VramStatus {
        self.dev.mem.status()
    }

    /// Name, VRAM (total, free) and this backend's budget and reservations on the device.
    pub fn device_info(&self) -> Result<DeviceInfo, ProveError> {
        device::device_info(self.dev.ordinal).map_err(dev_err)
    }

    /// Milliseconds the device interlock has been held since this device was first used.
    pub fn busy_ms(&self) -> f64 {
        self.dev.busy_ms()
    }

    /// Drops the device-resident copy of an SRS (freed once no `start` uses it).
    pub fn evict(&self, srs_id: u64) {
        self.dev.mem.evict(srs_id);
    }

    /// Frees every idle worker context and every resident SRS copy no `start` is using, with
    /// their reservations.
    pub fn trim(&self) {
        self.dev.mem.trim();
    }

    /// Where `srs`'s bases come from for one proof: its resident copy (uploading it, after
    /// reserving its bytes, if it fits beside a worker needing `need_worker` bytes and the
    /// copies in use), else streaming from host memory.
    fn tier(&self, srs: &Srs, need_worker: u64) -> Tier {
        let mem = &self.dev.mem;
        if srs.host_points_released() && !mem.is_pinned(srs.id()) {
            // Nothing to upload from: only a pinned copy can serve it (the caller refuses).
            return Tier::Streamed;
        }
        let res = match mem.place_srs(srs.id(), srs_bytes(srs), need_worker) {
            Placement::Ready(tier) => return tier,
            Placement::Upload(res) => res,
        };
        // Upload under the interlock: it uses sppark's streams.
        let gpu = lock(&self.dev.gpu_lock);
        let upload = vram::upload_srs(self.dev.ordinal, srs);
        drop(gpu);
        mem.uploaded(self.dev.ordinal, srs.id(), res, upload)
    }

    /// Phase 3: the SRS tier (resident, uploading it on first use, or streamed from host
    /// memory, page-locking it on first streamed use) and the worker buffers it implies.
    fn srs_source(
        &self,
        srs: &Srs,
        n: usize,
        plan: &msm_plan::ProvePlan,
        witness: Option<(WitnessNeed, u64)>,
    ) -> Result<SrsSource, ProveError> {
        let options = self.options();
        let chunk = stream_chunk(&options);
        let wit = witness.map(|(w, _)| w);
        let need_resident = worker_sizes(n, plan, None, wit);
        // Deferred: the SRS stays resident only if the matrices fit beside it.
        let matrices = witness.map_or(0, |(_, m)| m);
        let tier = self.tier(srs, need_resident.total() + matrices);
        if matches!(tier, Tier::Streamed) && srs.host_points_released() {
            // Cannot happen while the pin holds (`make_resident`); refuse rather than hand the
            // device empty host sections.
            return Err(ProveError::Unavailable(format!(
                "CUDA device {}: the SRS has no host copy (released) and no resident copy here",
                self.dev.ordinal
            )));
        }
        let host = match &tier {
            Tier::Resident(_) => None,
            Tier::Streamed => Some(pins::host_srs(
                self.dev.ordinal,
                srs,
                crate::srs_state::state(srs)
                    .filter(|_| options.page_lock_host)
                    .map(|s| &s.pins),
            )),
        };
        let (need, keep_srs) = match &host {
            Some(_) => (worker_sizes(n, plan, Some(chunk), wit), None),
            None => (need_resident, Some(srs.id())),
        };
        Ok(SrsSource {
            tier,
            host,
            chunk,
            need,
            keep_srs,
            early_ones: options.early_batch_additions,
            queued: options.queued_msm,
            sorted_h: options.sorted_msm,
        })
    }

    /// The device copy of `c`'s matrices, uploaded (under the interlock) into a reservation
    /// on first use, when it fits beside a worker needing `need_worker` bytes and what is in
    /// use (`keep_srs` included); `None` when it does not, or the upload failed.
    fn resident_matrices(
        &self,
        srs: &Srs,
        c: &cuzk_groth16::CompiledCircuit,
        need_worker: u64,
        keep_srs: Option<u64>,
    ) -> Option<Arc<ResidentMatrices>> {
        let mem = &self.dev.mem;
        let bytes = matrices::matrices_bytes(c);
        let res = match mem.place_matrices(c.id(), bytes, need_worker, keep_srs) {
            vram::MatricesPlacement::Ready(r) => return Some(r),
            vram::MatricesPlacement::NoRoom => return None,
            vram::MatricesPlacement::Upload(res) => res,
        };
        let t0 = Instant::now();
        let gpu = lock(&self.dev.gpu_lock);
        let upload = matrices::upload(self.dev.ordinal, c);
        drop(gpu);
        let r = mem.matrices_uploaded(self.dev.ordinal, c.id(), srs.id(), res, upload)?;
        matrices::note_resident(mem, c);
        tracing::info!(
            device = self.dev.ordinal,
            circuit = c.id(),
            bytes,
            from_file = c.matrices_in_file(),
            ms = t0.elapsed().as_millis() as u64,
            "compiled matrices resident in VRAM"
        );
        Some(r)
    }

    /// Makes `srs` resident on this device and pins the copy there until `srs` is dropped
    /// (for [`ProverBackend::make_resident`]). False when it does not fit beside one worker
    /// context's upper bound and the copies in use, when streaming is forced, or when the
    /// upload failed.
    fn make_resident_pinned(&self, srs: &Srs) -> bool {
        if srs.counts().h == 0 || srs.host_points_released() {
            return self.dev.mem.is_pinned(srs.id());
        }
        let n = srs.counts().h + 1;
        if !n.is_power_of_two() {
            return false;
        }
        match self.tier(srs, srs_worker_bound(n, srs)) {
            Tier::Resident(r) => {
                let pinned = crate::srs_state::pin_resident(&self.dev.mem, srs);
                drop(r);
                pinned
            }
            Tier::Streamed => false,
        }
    }

    /// Phase 5: the GPU-exclusive part under the device interlock: H by NTTs and every MSM.
    fn compute(
        &self,
        lease: &Lease<'_>,
        src: &SrsSource,
        mats: Option<&ResidentMatrices>,
    ) -> Result<Computed, ProveError> {
        let dev_srs: *const ffi::SrsHandle = match &src.tier {
            Tier::Resident(r) => r.handle(),
            Tier::Streamed => std::ptr::null(),
        };
        let host_srs: *const ffi::CHostSrs = src
            .host
            .as_ref()
            .map_or(std::ptr::null(), |h| h as *const ffi::CHostSrs);
        let tl = Instant::now();
        let guard = lock(&self.dev.gpu_lock);
        let wait_lock_ms = ms(tl);
        let tx = Instant::now();
        let mut out = ffi::COutput::default();
        // SAFETY: the worker holds a prepared input (upload succeeded), exactly one of the SRS
        // sources is set: the resident handle stays alive through `src.tier`, the host
        // sections point into the SRS, borrowed (so alive and unmodified) by the caller for
        // the whole call. `out` is a valid out-pointer. The interlock is held.
        let mats = mats.map_or(std::ptr::null(), |m| m.handle());
        // (and the matrices, when set, stay alive through the caller's `Arc`, and were uploaded
        // for exactly this witness's shape, which the device checks again).
        let err =
            unsafe { ffi::cuzk_worker_compute(lease.handle(), dev_srs, host_srs, mats, &mut out) };
        let exclusive = tx.elapsed();
        drop(guard);
        self.dev.add_busy(exclusive);
        // On failure the caller's lease drops its context (it may hold half-finished state).
        ffi::check(err, "prove").map_err(dev_err)?;
        // Outside the interlock: a queued proof's host sums, while the next holder's kernels
        // run (after any other compute, nothing).
        let ts = Instant::now();
        // SAFETY: the worker's compute just succeeded (its results wait in its own page-locked
        // memory); `out` is a valid out-pointer. The lease keeps the context to this thread.
        let err = unsafe { ffi::cuzk_worker_finish(lease.handle(), &mut out) };
        ffi::check(err, "prove (host sums)").map_err(dev_err)?;
        Ok(Computed {
            out,
            wait_lock_ms,
            exclusive,
            host_sums_ms: ms(ts),
        })
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

    /// The whole `start`, phase by phase; `keep`: return the circuit instead of dropping it
    /// after the upload.
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

        let Domain { n, len, deferred } = check_shapes(srs, &circuit)?;

        let t0 = Instant::now();
        let hp = plan_host(srs, &circuit, deferred)?;
        // (the worker's VRAM beside a pinned SRS was sized for the circuit's bound)
        hp.plan.check_free_values(srs.free_values_bound())?;
        t.plan_ms = ms(t0);
        let z_inv = coset_z_inv(n)?;

        let compiled = circuit.compiled.clone().filter(|_| deferred);
        let witness = compiled.as_ref().map(|c| {
            let need = WitnessNeed {
                vars: circuit.inputs.len() + circuit.num_aux(),
                own_others: hp.wit_small.as_ref().map_or(0, |w| w.0.len()),
            };
            (need, matrices::matrices_bytes(c))
        });
        let t0 = Instant::now();
        let src = self.srs_source(srs, n, &hp.plan, witness)?;
        // Deferred: the circuit's matrices in VRAM (uploaded on first use), else a/b/c are
        // made on the host after all.
        let mats = match &compiled {
            Some(c) => self.resident_matrices(srs, c, src.need.total(), src.keep_srs),
            None => None,
        };
        t.srs_upload_ms = ms(t0);
        t.streamed = src.host.is_some();
        let circuit = if deferred && mats.is_none() {
            tracing::warn!(
                device = self.dev.ordinal,
                "the compiled matrices do not fit in VRAM: a/b/c made on the host"
            );
            circuit.evaluated()?
        } else {
            circuit
        };

        // Phase 4: a worker context, then a/b/c and the plans to it (outside the interlock).
        let t0 = Instant::now();
        let lease = self
            .dev
            .mem
            .take_worker(self.dev.ordinal, &src.need, src.keep_srs)?;
        t.wait_vram_ms = ms(t0);
        let t0 = Instant::now();
        t.upload_bytes = upload(&lease, &circuit, &hp, n, len, &z_inv, &src, mats.is_some())?;
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

        let Computed {
            out,
            wait_lock_ms,
            exclusive,
            host_sums_ms,
        } = self.compute(&lease, &src, mats.as_deref())?;
        t.wait_lock_ms = wait_lock_ms;
        t.host_sums_ms = host_sums_ms;
        lease.done();
        drop(src);
        // an SRS copy may have become idle (evictable)
        self.dev.mem.notify();
        t.exclusive_ms = exclusive.as_secs_f64() * 1e3;
        t.ntt_h_ms = out.ms_ntt_h;
        t.msm_h_ms = out.ms_msm_h;
        t.msm_l_ms = out.ms_msm_l;
        t.msm_a_ms = out.ms_msm_a;
        t.msm_b_g1_ms = out.ms_msm_b_g1;
        t.msm_b_g2_ms = out.ms_msm_b_g2;
        t.abc_ms = out.ms_abc;
        drop(mats);

        let pending = pending(r, s, &out, &hp);
        t.total_ms = ms(t_total);
        tracing::debug!(device = self.dev.ordinal, ?t, "cuda start");
        Ok((pending, t, kept))
    }
}

/// Phase 6: the device sums plus the host's small parts, as a [`Pending`] whose B G2 part is
/// done.
fn pending(r: Scalar, s: Scalar, out: &ffi::COutput, hp: &HostPlan) -> Pending {
    Pending {
        r,
        s,
        a_g1: jac1(&out.a) + hp.small_a,
        b_g1: jac1(&out.b_g1) + hp.small_b1,
        h_l: jac1(&out.h) + jac1(&out.l) + hp.small_l,
        b_g2: PendingG2::Done(jac2(&out.b_g2) + hp.small_b2),
    }
}

impl ProverBackend for CudaProver {
    /// The MSM plans: a/b/c are padded on the device and the witness is uploaded as it is,
    /// so planning is all that `start` adds on the host (the staging buffers are the
    /// worker's, allocated once), and, for a full aux assignment, its compact form made for
    /// planning.
    fn start_host_bytes(&self, circuit: &Synthesized) -> Option<u64> {
        let (a_aux, b_input, b_aux) = circuit.densities();
        let aux = circuit.compact_aux();
        Some(msm_plan::host_bytes(
            &circuit.inputs,
            &aux,
            circuit.compact.is_none(),
            a_aux,
            b_input,
            b_aux,
        ))
    }

    /// Deferred a/b/c are made on the device from the circuit's matrices, kept in VRAM.
    fn evaluates_abc(&self) -> bool {
        true
    }

    fn device_memory(&self) -> Option<(u64, u64)> {
        self.device_info().ok().map(|i| (i.vram_total, i.vram_free))
    }

    fn name(&self) -> String {
        format!("cuda:{}", self.dev.ordinal)
    }

    fn locks_device_itself(&self) -> bool {
        true
    }

    fn device_busy(&self) -> Option<Duration> {
        Some(self.dev.busy())
    }

    fn resident_bytes(&self, srs_id: u64) -> u64 {
        self.dev.mem.resident_bytes(srs_id)
    }

    /// Uploads the matrices beside `srs` (if not resident yet) and pins them until `compiled`
    /// is dropped: false when they do not fit beside one worker context's upper bound and
    /// what is in use, or the upload failed.
    fn make_matrices_resident(
        &self,
        srs: &Srs,
        compiled: &cuzk_groth16::CompiledCircuit,
    ) -> Result<bool, ProveError> {
        let n = srs.counts().h + 1;
        if !n.is_power_of_two() || !compiled.matrices_available() {
            return Ok(false);
        }
        let need = srs_worker_bound(n, srs);
        let Some(r) = self.resident_matrices(srs, compiled, need, Some(srs.id())) else {
            return Ok(false);
        };
        let pinned = self.dev.mem.pin_matrices(compiled.id());
        drop(r);
        Ok(pinned)
    }

    fn resident_matrices_bytes(&self, srs_id: u64) -> u64 {
        self.dev.mem.matrices_bytes_of(srs_id)
    }

    fn make_resident(&self, srs: &Srs) -> Result<bool, ProveError> {
        let t0 = Instant::now();
        let done = self.make_resident_pinned(srs);
        tracing::info!(
            device = self.dev.ordinal,
            srs = srs.id(),
            pinned = done,
            bytes = srs_bytes(srs),
            ms = t0.elapsed().as_millis() as u64,
            "SRS made resident for the host copy to be released"
        );
        Ok(done)
    }

    fn begin_resident<'a>(
        &'a self,
        srs: &'a Srs,
    ) -> Result<Option<Box<dyn cuzk_groth16::ResidentUpload + 'a>>, ProveError> {
        Ok(self.begin_resident_copy(srs))
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
        cuzk_groth16::prover::finish(srs, pending)
    }
}
