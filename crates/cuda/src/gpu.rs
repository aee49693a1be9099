//! The CUDA prover: per-device state (interlock, resident SRS copies, worker contexts), the
//! safe wrapper around `cuda/cuzk.cu`, and the `ProverBackend` implementation.
#![allow(unsafe_code)]

use crate::{assemble::assemble, ffi, plan, DeviceInfo, PhaseTimings};
use blstrs::{G1Affine, G1Projective, G2Projective, Scalar};
use cuzk_groth16::{
    prover::PendingG2, Pending, Proof, ProveError, ProverBackend, Srs, Synthesized,
};
use ff::{Field, PrimeField};
use group::Group;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

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

/// A device-resident copy of one SRS's H, L, A, B_G1 and B_G2 bases.
struct ResidentSrs {
    handle: *mut ffi::SrsHandle,
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

/// One worker context: a copy stream, pinned staging buffers and device buffers for a/b/c
/// and the MSM plans. Used by one `start` at a time.
struct Worker {
    handle: *mut ffi::WorkerHandle,
    /// Bytes of device buffers this context holds (they grow, never shrink).
    dev_bytes: u64,
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

/// State shared by every [`CudaProver`] of one device.
struct DeviceState {
    ordinal: usize,
    /// Held for the GPU-exclusive phase (NTTs and MSMs): they run on sppark's per-device
    /// streams and scratch, which two workers must not use at once. Uploads and host work
    /// happen outside it, so a second worker overlaps them with the first one's kernels.
    gpu_lock: Mutex<()>,
    /// SRS copies in VRAM keyed by [`Srs::id`]; an entry in use is also held by the `start`
    /// using it, so eviction never frees bases under a running MSM.
    resident: Mutex<HashMap<u64, Arc<ResidentSrs>>>,
    /// Idle worker contexts, reused so device buffers and pinned staging are allocated once.
    idle: Mutex<Vec<Worker>>,
    /// Nanoseconds the interlock was held, for the busy fraction.
    busy_ns: AtomicU64,
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
    Ok(DeviceInfo {
        ordinal,
        name: String::from_utf8_lossy(&bytes).into_owned(),
        vram_total: info.vram_total as u64,
        vram_free: info.vram_free as u64,
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

impl CudaProver {
    /// The prover of device `ordinal` (as listed by [`devices`]).
    pub fn new(ordinal: usize) -> Result<CudaProver, ProveError> {
        let n =
            device_count().map_err(|e| ProveError::Unavailable(format!("no CUDA devices: {e}")))?;
        if ordinal >= n {
            return Err(ProveError::Unavailable(format!(
                "CUDA device {ordinal} does not exist ({n} visible)"
            )));
        }
        let mut reg = lock(registry());
        let dev = reg
            .entry(ordinal)
            .or_insert_with(|| {
                Arc::new(DeviceState {
                    ordinal,
                    gpu_lock: Mutex::new(()),
                    resident: Mutex::new(HashMap::new()),
                    idle: Mutex::new(Vec::new()),
                    busy_ns: AtomicU64::new(0),
                })
            })
            .clone();
        Ok(CudaProver { dev })
    }

    /// The device this prover drives.
    pub fn ordinal(&self) -> usize {
        self.dev.ordinal
    }

    /// Milliseconds the device interlock has been held since this device was first used.
    pub fn busy_ms(&self) -> f64 {
        self.dev.busy_ns.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Drops the device-resident copy of an SRS (freed once no `start` uses it).
    pub fn evict(&self, srs_id: u64) {
        lock(&self.dev.resident).remove(&srs_id);
    }

    fn free_vram(&self) -> Result<u64, ProveError> {
        device_info(self.dev.ordinal)
            .map(|i| i.vram_free)
            .map_err(dev_err)
    }

    /// The device copy of `srs`, uploading it (and evicting idle copies of others) if needed.
    fn resident(&self, srs: &Srs) -> Result<Arc<ResidentSrs>, ProveError> {
        if let Some(r) = lock(&self.dev.resident).get(&srs.id) {
            return Ok(r.clone());
        }
        // Upload under the interlock: it uses sppark's streams, and the VRAM check must not
        // race another worker's allocations.
        let _gpu = lock(&self.dev.gpu_lock);
        let mut res = lock(&self.dev.resident);
        if let Some(r) = res.get(&srs.id) {
            return Ok(r.clone());
        }
        let bytes = 96 * (srs.h.len() + srs.l.len() + srs.a.len() + srs.b_g1.len()) as u64
            + 192 * srs.b_g2.len() as u64;
        let mut free = self.free_vram()?;
        if free < bytes + VRAM_MARGIN {
            // evict copies nobody is using
            let idle: Vec<u64> = res
                .iter()
                .filter(|(_, r)| Arc::strong_count(r) == 1)
                .map(|(k, _)| *k)
                .collect();
            for k in idle {
                res.remove(&k);
            }
            free = self.free_vram()?;
        }
        if free < bytes + VRAM_MARGIN {
            return Err(ProveError::Unavailable(format!(
                "SRS needs {:.1} GiB of VRAM on device {}, {:.1} GiB free (streaming from host \
                 memory is not implemented)",
                bytes as f64 / (1u64 << 30) as f64,
                self.dev.ordinal,
                free as f64 / (1u64 << 30) as f64
            )));
        }
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
        ffi::check(err, "SRS upload").map_err(dev_err)?;
        let r = Arc::new(ResidentSrs { handle });
        res.insert(srs.id, r.clone());
        Ok(r)
    }

    fn take_worker(&self) -> Result<Worker, ProveError> {
        if let Some(w) = lock(&self.dev.idle).pop() {
            return Ok(w);
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: `handle` is a valid out-pointer.
        let err = unsafe { ffi::cuzk_worker_create(self.dev.ordinal as i32, &mut handle) };
        ffi::check(err, "worker create").map_err(dev_err)?;
        Ok(Worker {
            handle,
            dev_bytes: 0,
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

        let t0 = Instant::now();
        let res = self.resident(srs)?;
        t.srs_upload_ms = ms(t0);

        let lg = n.trailing_zeros();
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let z = g.pow_vartime([n as u64]) - Scalar::ONE;
        let z_inv = Option::<Scalar>::from(z.invert())
            .ok_or_else(|| dev_err("coset generator^n == 1".into()))?;

        let mut worker = self.take_worker()?;
        let plan_bytes =
            |q: &plan::QueryPlan| (q.ones.len() * 8 + 128 + q.idx.len() * (4 + 32 + 192)) as u64;
        let need =
            3 * 32 * n as u64 + plan_bytes(&plan.l) + plan_bytes(&plan.a) + plan_bytes(&plan.b);
        let growth = need.saturating_sub(worker.dev_bytes);
        // What the worker holding the interlock may still allocate: MSM digits and
        // temporaries (≈ 80 bytes a point) plus bucket tables.
        let scratch = 80 * n as u64 + (512 << 20);
        let roomy = growth == 0 || self.free_vram()? >= growth + scratch + VRAM_MARGIN;

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
        };
        let upload = |w: &Worker| {
            // SAFETY: `input` points into `circuit` and `plan`, alive and unmoved across the
            // call; lengths were checked above (abc_len ≤ 2^lg, bitmaps cover nbases bits,
            // idx < nbases by construction of the plan). The call returns only after the
            // copy stream is idle, so the host buffers may be freed afterwards.
            let err = unsafe { ffi::cuzk_worker_upload(w.handle, &input) };
            ffi::check(err, "upload")
        };
        let t0 = Instant::now();
        let mut guard = None;
        if roomy {
            upload(&worker).map_err(dev_err)?;
            t.upload_ms = ms(t0);
        } else {
            // Not enough VRAM to grow beside a running worker: grow while holding the
            // interlock, so no one else's allocation can fail because of us.
            let tl = Instant::now();
            guard = Some(lock(&self.dev.gpu_lock));
            t.wait_lock_ms = ms(tl);
            let t0 = Instant::now();
            upload(&worker).map_err(dev_err)?;
            t.upload_ms = ms(t0);
        }
        worker.dev_bytes = worker.dev_bytes.max(need);
        // a/b/c (and the whole witness) are on the device now: free them before the kernels.
        let t0 = Instant::now();
        drop(circuit);
        t.free_ms = ms(t0);

        let guard = match guard {
            Some(g) => g,
            None => {
                let tl = Instant::now();
                let g = lock(&self.dev.gpu_lock);
                t.wait_lock_ms = ms(tl);
                g
            }
        };
        let tx = Instant::now();
        let mut out = ffi::COutput::default();
        // SAFETY: the worker holds a prepared input (upload succeeded), the SRS handle stays
        // alive through `res`, and `out` is a valid out-pointer. The interlock is held.
        let err = unsafe { ffi::cuzk_worker_compute(worker.handle, res.handle, &mut out) };
        let excl = tx.elapsed();
        drop(guard);
        self.dev
            .busy_ns
            .fetch_add(excl.as_nanos() as u64, Ordering::Relaxed);
        match ffi::check(err, "prove") {
            Ok(()) => lock(&self.dev.idle).push(worker),
            // A failed context may hold half-finished state: drop it, keep the device.
            Err(e) => return Err(dev_err(e)),
        }
        drop(res);
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
        Ok((pending, t))
    }
}

impl ProverBackend for CudaProver {
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
        self.start_timed(srs, circuit, r, s).map(|(p, _)| p)
    }

    fn finish(&self, srs: &Srs, pending: Pending) -> Result<Proof, ProveError> {
        assemble(srs, pending)
    }
}

/// Keeps `G1Affine` in use for the layout assertion below.
const _: () = assert!(std::mem::size_of::<G1Affine>() == 96);
const _: () = assert!(std::mem::size_of::<blstrs::G2Affine>() == 192);
const _: () = assert!(std::mem::size_of::<Scalar>() == 32);
