//! Diagnostics: one MSM computed on the device by sppark's own Pippenger and by the queued one
//! ([`crate::CudaOptions::queued_msm`], `cuda/queued_msm.cuh`), for the tests to compare with each
//! other and with the host's sum, at sizes no proof in a test reaches.
use super::{dev_err, CudaProver};
use crate::ffi;
use crate::points::{jac1, jac2};
use crate::vram::lock;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cuzk_groth16::ProveError;

impl CudaProver {
    /// Σ `scalars[i]`·`bases[i mod m]` (m = `bases.len()`) on this device, by sppark's
    /// Pippenger and by the queued one, in that order, under the device interlock. The
    /// device holds all `scalars.len()` points at once (96 bytes each) beside both MSMs'
    /// scratch, outside the VRAM budget: run it on an otherwise idle device.
    pub fn msm_compare_g1(
        &self,
        bases: &[G1Affine],
        scalars: &[Scalar],
    ) -> Result<[G1Projective; 2], ProveError> {
        let mut out = [ffi::Jac1::default(); 2];
        self.msm_compare(false, bases.as_ptr().cast(), bases.len(), scalars, &mut out)?;
        Ok([jac1(&out[0]), jac1(&out[1])])
    }

    /// [`CudaProver::msm_compare_g1`] over G2 bases (192 bytes a point on the device).
    pub fn msm_compare_g2(
        &self,
        bases: &[G2Affine],
        scalars: &[Scalar],
    ) -> Result<[G2Projective; 2], ProveError> {
        let mut out = [ffi::Jac2::default(); 2];
        self.msm_compare(true, bases.as_ptr().cast(), bases.len(), scalars, &mut out)?;
        Ok([jac2(&out[0]), jac2(&out[1])])
    }

    fn msm_compare<J>(
        &self,
        g2: bool,
        bases: *const u8,
        m: usize,
        scalars: &[Scalar],
        out: &mut [J; 2],
    ) -> Result<(), ProveError> {
        if m == 0 || scalars.is_empty() {
            return Err(ProveError::ShapeMismatch {
                what: "MSM comparison bases and scalars",
                expected: 1,
                got: 0,
            });
        }
        let _held = lock(&self.dev.gpu_lock);
        let [r, g] = out;
        // SAFETY: `bases` points to `m` affine points of the declared group (blstrs' layout is
        // the device's, see `points`), `scalars` to `scalars.len()` Montgomery scalars, both
        // alive across the call; `r` and `g` are the Jacobian outputs of that group. The
        // interlock is held.
        let err = unsafe {
            ffi::cuzk_msm_compare(
                self.dev.ordinal as i32,
                g2 as i32,
                bases,
                m,
                scalars.as_ptr(),
                scalars.len(),
                (r as *mut J).cast(),
                (g as *mut J).cast(),
            )
        };
        ffi::check(err, "msm comparison").map_err(dev_err)
    }
}
