//! Shared by the GPU test binaries (`gpu_vs_cpu.rs`, `device_abc.rs`): one test at a time on
//! device 0, the device with given options, and synthetic shapes of an exact domain.
#![allow(dead_code)]

use cuzk_cuda::{CudaOptions, CudaProver};
use cuzk_groth16::synthetic::SyntheticSpec;
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
