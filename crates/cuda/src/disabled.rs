//! Stand-in for the CUDA backend when the crate is built without the `cuda` feature: the same
//! API, every operation failing with [`ProveError::Unavailable`].
use crate::{CudaOptions, DeviceInfo, PhaseTimings, VramStatus};
use cuzk_groth16::setup::PointMaker;
use cuzk_groth16::{Error, Pending, Proof, ProveError, ProverBackend, Scalar, Srs, Synthesized};

fn unavailable() -> ProveError {
    ProveError::Unavailable("cuzk was built without CUDA (enable the `cuda` feature)".into())
}

/// The CUDA prover; without the `cuda` feature it cannot be constructed.
#[derive(Debug)]
pub struct CudaProver {
    _private: (),
}

impl CudaProver {
    /// Always fails: this build has no CUDA backend.
    pub fn new(_ordinal: usize) -> Result<CudaProver, ProveError> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn with_options(_ordinal: usize, _options: CudaOptions) -> Result<CudaProver, ProveError> {
        Err(unavailable())
    }

    /// The device's options.
    pub fn options(&self) -> CudaOptions {
        CudaOptions::default()
    }

    /// The device's VRAM accounting.
    pub fn vram_status(&self) -> VramStatus {
        VramStatus::default()
    }

    /// Always fails: this build has no CUDA backend.
    pub fn device_info(&self) -> Result<DeviceInfo, ProveError> {
        Err(unavailable())
    }

    /// Frees idle worker contexts and SRS copies nobody uses.
    pub fn trim(&self) {}

    /// `start` returning the circuit's buffers for reuse.
    pub fn start_reusing_timed(
        &self,
        _srs: &Srs,
        _circuit: Synthesized,
        _r: Scalar,
        _s: Scalar,
    ) -> Result<(Pending, PhaseTimings, Synthesized), ProveError> {
        Err(unavailable())
    }

    /// The device this prover drives.
    pub fn ordinal(&self) -> usize {
        0
    }

    /// Always fails: this build has no CUDA backend.
    pub fn msm_compare_g1(
        &self,
        _bases: &[blstrs::G1Affine],
        _scalars: &[Scalar],
    ) -> Result<[blstrs::G1Projective; 3], ProveError> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn msm_sorted_g1(
        &self,
        _bases: &[blstrs::G1Affine],
        _scalars: &[Scalar],
    ) -> Result<blstrs::G1Projective, ProveError> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn sorted_msm_scratch(&self, _n: usize) -> Result<(u64, u64), ProveError> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn h_time(
        &self,
        _lg: u32,
        _a: &[Scalar],
        _b: &[Scalar],
        _c: &[Scalar],
        _runs: u32,
    ) -> Result<crate::HTimes, ProveError> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn msm_time_g1(
        &self,
        _bases: &[blstrs::G1Affine],
        _scalars: &[Scalar],
        _runs: u32,
    ) -> Result<crate::MsmTimes, ProveError> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn msm_compare_g2(
        &self,
        _bases: &[blstrs::G2Affine],
        _scalars: &[Scalar],
    ) -> Result<[blstrs::G2Projective; 2], ProveError> {
        Err(unavailable())
    }

    /// `start` with a phase breakdown.
    pub fn start_timed(
        &self,
        _srs: &Srs,
        _circuit: Synthesized,
        _r: Scalar,
        _s: Scalar,
    ) -> Result<(Pending, PhaseTimings), ProveError> {
        Err(unavailable())
    }

    /// Milliseconds the device interlock has been held since this device was first used.
    pub fn busy_ms(&self) -> f64 {
        0.0
    }

    /// Drops the device-resident copy of an SRS.
    pub fn evict(&self, _srs_id: u64) {}
}

impl ProverBackend for CudaProver {
    fn name(&self) -> String {
        "cuda (not built)".into()
    }

    fn locks_device_itself(&self) -> bool {
        true
    }

    fn device_busy(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::ZERO)
    }

    fn start(
        &self,
        _srs: &Srs,
        _circuit: Synthesized,
        _r: Scalar,
        _s: Scalar,
    ) -> Result<Pending, ProveError> {
        Err(unavailable())
    }

    fn finish(&self, _srs: &Srs, _pending: Pending) -> Result<Proof, ProveError> {
        Err(unavailable())
    }
}

/// No devices: this build has no CUDA backend.
pub fn devices() -> Vec<DeviceInfo> {
    Vec::new()
}

/// Setup points made on a CUDA device; without the `cuda` feature it cannot be constructed.
#[derive(Debug)]
pub struct GpuPoints {
    _private: (),
}

impl GpuPoints {
    /// Always fails: this build has no CUDA backend.
    pub fn new(_ordinal: usize) -> Result<GpuPoints, Error> {
        Err(Error::Points(unavailable().to_string()))
    }
}

impl PointMaker for GpuPoints {
    fn name(&self) -> String {
        "CUDA (not built)".into()
    }
    fn batch(&self) -> usize {
        1
    }
    fn g1(&self, _: &[Scalar], _: &mut [u8]) -> Result<(), Error> {
        Err(Error::Points(unavailable().to_string()))
    }
    fn g2(&self, _: &[Scalar], _: &mut [u8]) -> Result<(), Error> {
        Err(Error::Points(unavailable().to_string()))
    }
}
