//! Diagnostics: one MSM computed on the device by sppark's own Pippenger, by the queued one
//! ([`crate::CudaOptions::queued_msm`], `cuda/queued_msm.cuh`) and, in G1, by the sorted one
//! (`cuda/sorted_msm.cuh`), for the tests to compare with each other and with the host's sum
//! at sizes no proof in a test reaches, and for `cuzk-gpu-bench msm` to time side by side; and
//! the H polynomial by six NTTs beside the textbook seven (`cuzk-gpu-bench ntt`).
use super::{dev_err, CudaProver};
use crate::ffi;
use crate::points::{jac1, jac2};
use crate::{HTimes, MsmTimes};
use crate::vram::lock;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use cuzk_groth16::ProveError;

impl CudaProver {
    /// Σ `scalars[i]`·`bases[i mod m]` (m = `bases.len()`) on this device, by sppark's
    /// Pippenger, by the queued one and by the sorted one, in that order, under the device
    /// interlock. The device holds all `scalars.len()` points at once (96 bytes each) beside
    /// the MSMs' scratch, outside the VRAM budget: run it on an otherwise idle device.
    pub fn msm_compare_g1(
        &self,
        bases: &[G1Affine],
        scalars: &[Scalar],
    ) -> Result<[G1Projective; 3], ProveError> {
        Ok(self.msm_time_g1(bases, scalars, 0)?.points)
    }

    /// [`CudaProver::msm_compare_g1`] timed: each MSM once untimed, then `runs` times (the
    /// medians; with `runs` 0, the one run's times).
    pub fn msm_time_g1(
        &self,
        bases: &[G1Affine],
        scalars: &[Scalar],
        runs: u32,
    ) -> Result<MsmTimes, ProveError> {
        let mut out = [ffi::Jac1::default(); 3];
        let mut ms = [0f64; 6];
        let all = [true; 3];
        self.msm_compare(false, bases.as_ptr().cast(), bases.len(), scalars, runs, all, &mut out, &mut ms)?;
        Ok(MsmTimes {
            points: [jac1(&out[0]), jac1(&out[1]), jac1(&out[2])],
            wall_ms: [ms[0], ms[1], ms[2]],
            device_ms: [ms[3], ms[4], ms[5]],
        })
    }

    /// [`CudaProver::msm_compare_g1`] by the sorted MSM alone (for scalars on which sppark's
    /// Pippenger walks one bucket's points on one thread, e.g. millions of equal ones).
    pub fn msm_sorted_g1(
        &self,
        bases: &[G1Affine],
        scalars: &[Scalar],
    ) -> Result<G1Projective, ProveError> {
        let mut out = [ffi::Jac1::default(); 3];
        let mut ms = [0f64; 6];
        let only = [false, false, true];
        self.msm_compare(false, bases.as_ptr().cast(), bases.len(), scalars, 0, only, &mut out, &mut ms)?;
        Ok(jac1(&out[2]))
    }

    /// [`CudaProver::msm_compare_g1`] over G2 bases (192 bytes a point on the device), by
    /// sppark's Pippenger and the queued one (the sorted one is G1 only).
    pub fn msm_compare_g2(
        &self,
        bases: &[G2Affine],
        scalars: &[Scalar],
    ) -> Result<[G2Projective; 2], ProveError> {
        let mut out = [ffi::Jac2::default(); 3];
        let mut ms = [0f64; 6];
        let two = [true, true, false];
        self.msm_compare(true, bases.as_ptr().cast(), bases.len(), scalars, 0, two, &mut out, &mut ms)?;
        Ok([jac2(&out[0]), jac2(&out[1])])
    }

    #[allow(clippy::too_many_arguments)]
    fn msm_compare<J>(
        &self,
        g2: bool,
        bases: *const u8,
        m: usize,
        scalars: &[Scalar],
        runs: u32,
        which: [bool; 3],
        out: &mut [J; 3],
        ms: &mut [f64; 6],
    ) -> Result<(), ProveError> {
        if m == 0 || scalars.is_empty() {
            return Err(ProveError::ShapeMismatch {
                what: "MSM comparison bases and scalars",
                expected: 1,
                got: 0,
            });
        }
        let _held = lock(&self.dev.gpu_lock);
        let mut ptr = |i: usize| match which[i] {
            true => (&mut out[i] as *mut J).cast::<u8>(),
            false => std::ptr::null_mut(),
        };
        let (r, g, o) = (ptr(0), ptr(1), ptr(2));
        // SAFETY: `bases` points to `m` affine points of the declared group (blstrs' layout is
        // the device's, see `points`), `scalars` to `scalars.len()` Montgomery scalars, both
        // alive across the call; `r`, `g` and `o` are Jacobian outputs of that group or null
        // (`o` null in G2), `ms` six doubles. The interlock is held.
        let err = unsafe {
            ffi::cuzk_msm_compare(
                self.dev.ordinal as i32,
                g2 as i32,
                bases,
                m,
                scalars.as_ptr(),
                scalars.len(),
                runs,
                r,
                g,
                o,
                ms.as_mut_ptr(),
            )
        };
        ffi::check(err, "msm comparison").map_err(dev_err)
    }

    /// H = (A·B − C)/Z's 2^`lg` coefficients for A, B, C given by their evaluations `a`, `b`,
    /// `c` on the domain of 2^`lg` points (zero-padded), by the six NTTs proofs use and by the
    /// textbook seven, each once untimed and then `runs` times (the medians; with `runs` 0,
    /// the one run's times), under the device interlock. The device holds 6·2^`lg` scalars
    /// outside the VRAM budget: run it on an otherwise idle device.
    pub fn h_time(
        &self,
        lg: u32,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
        runs: u32,
    ) -> Result<HTimes, ProveError> {
        let n = 1usize << lg.min(31);
        if !(1..=28).contains(&lg) || a.len().max(b.len()).max(c.len()) > n {
            return Err(ProveError::ShapeMismatch {
                what: "H comparison domain",
                expected: n,
                got: a.len().max(b.len()).max(c.len()),
            });
        }
        let mut abc = vec![Scalar::ZERO; 3 * n];
        for (i, v) in [a, b, c].into_iter().enumerate() {
            abc[i * n..i * n + v.len()].copy_from_slice(v);
        }
        let z_inv = super::coset_z_inv(n)?;
        let (mut six, mut seven) = (vec![Scalar::ZERO; n], vec![Scalar::ZERO; n]);
        let mut ms = [0f64; 2];
        let _held = lock(&self.dev.gpu_lock);
        // SAFETY: `abc` holds 3·n scalars and `six`, `seven` n each, `ms` two doubles, all
        // alive across the call; blstrs' Scalar is the device's fr_t (Montgomery form). The
        // interlock is held.
        let err = unsafe {
            ffi::cuzk_h_compare(
                self.dev.ordinal as i32,
                lg,
                abc.as_ptr(),
                &z_inv,
                runs,
                six.as_mut_ptr(),
                seven.as_mut_ptr(),
                ms.as_mut_ptr(),
            )
        };
        ffi::check(err, "H comparison").map_err(dev_err)?;
        Ok(HTimes {
            six,
            seven,
            device_ms: ms,
        })
    }

    /// The device bytes the sorted MSM allocates for `n` points, as the device reports them
    /// and as the VRAM sizing model reserves them, in that order.
    pub fn sorted_msm_scratch(&self, n: usize) -> Result<(u64, u64), ProveError> {
        let mut bytes = 0usize;
        // SAFETY: `bytes` is a valid out-pointer for the call.
        let err = unsafe { ffi::cuzk_sorted_msm_bytes(self.dev.ordinal as i32, n, &mut bytes) };
        ffi::check(err, "sorted MSM scratch").map_err(dev_err)?;
        Ok((bytes as u64, crate::sizes::sorted_scratch(n)))
    }
}
