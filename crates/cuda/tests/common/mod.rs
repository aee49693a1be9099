//! Shared by the GPU test binaries (`gpu_vs_cpu.rs`, `device_abc.rs`, `srs_wire.rs`, ...): one
//! test at a time on device 0, the device with given options, synthetic shapes of an exact
//! domain, and a GPU proof checked against the CPU's.
#![allow(dead_code)]

use cuzk_cuda::{CudaOptions, CudaProver};
use cuzk_groth16::prover::random_blinding;
use cuzk_groth16::synthetic::SyntheticSpec;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{CpuProver, ProverBackend, Recorder, RecorderMode, Scalar, Srs, Synthesized};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::sync::{Mutex, MutexGuard};

/// One test at a time: they share device 0's options and memory state.
pub fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether there is a device (says so when there is none: the test then skips).
pub fn has_device() -> bool {
    if cuzk_cuda::devices().is_empty() {
        eprintln!("no CUDA device: skipping");
        return false;
    }
    true
}

/// Device 0 with `options`; idle contexts and SRS copies of earlier tests freed.
pub fn gpu_with(options: CudaOptions) -> CudaProver {
    let g = CudaProver::with_options(0, options).expect("device 0");
    g.trim();
    g
}

/// A spec whose domain is exactly 2^log_n.
pub fn spec(log_n: u32, a: f64, b: f64, bools: f64, seed: u64) -> SyntheticSpec {
    let inputs = 3;
    SyntheticSpec {
        constraints: (1usize << log_n) - inputs - 1,
        inputs,
        aux_ratio: 1.0,
        a_density: a,
        b_density: b,
        bool_fraction: bools,
        seed,
    }
}

/// A full synthesis of `spec`.
pub fn synth(spec: &SyntheticSpec) -> Synthesized {
    Recorder::synthesize(spec.circuit(), RecorderMode::Full).expect("synthesis")
}

/// Proves `sp` on the GPU with `srs` and on the CPU with `held` (the same parameters, the
/// latter with its host copy) under the same r, s from `seed`; asserts equal bytes and that
/// the proof verifies. Returns whether the GPU streamed the SRS.
pub fn prove_equal(gpu: &CudaProver, srs: &Srs, held: &Srs, sp: &SyntheticSpec, seed: u64) -> bool {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (r, s) = random_blinding(&mut rng);
    let c = synth(sp);
    let public: Vec<Scalar> = c.inputs[1..].to_vec();
    let cpu = CpuProver::new()
        .prove(held, c.clone(), r, s)
        .expect("cpu proof");
    let (pending, t) = gpu.start_timed(srs, c, r, s).expect("gpu start");
    let g = gpu.finish(srs, pending).expect("gpu finish");
    assert_eq!(
        g.to_bytes(),
        cpu.to_bytes(),
        "GPU and CPU proofs differ for {sp:?}, seed {seed}"
    );
    let pvk = PreparedVerifyingKey::from(srs.vk());
    assert!(
        verify_proof(&pvk, &g, &public).expect("verify"),
        "GPU proof does not verify: {sp:?}"
    );
    t.streamed
}
