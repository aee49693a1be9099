//! What an engine is built from in this binary: the prover backends this build and machine
//! offer (one CUDA prover per visible GPU, else the CPU prover) and the planner for every
//! proof kind the build knows.
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_core::kinds::synthetic::SyntheticPlanner;
use cuzk_core::kinds::Router;
use cuzk_core::{Config, Planner};
use cuzk_groth16::{CpuProver, ProverBackend};
use std::sync::Arc;

/// One CUDA prover per visible device (with `gpu`'s options); the CPU prover when there is
/// none (or the build has no CUDA).
pub fn backends(gpu: &cuzk_cuda::CudaOptions) -> anyhow::Result<Vec<Arc<dyn ProverBackend>>> {
    let mut out: Vec<Arc<dyn ProverBackend>> = Vec::new();
    for d in cuzk_cuda::devices() {
        match cuzk_cuda::CudaProver::with_options(d.ordinal, *gpu) {
            Ok(p) => {
                tracing::info!(device = d.ordinal, name = %d.name, options = ?gpu, "CUDA prover");
                out.push(Arc::new(p))
            }
            Err(e) => tracing::warn!(device = d.ordinal, cause = %e, "GPU unusable; skipping"),
        }
    }
    if out.is_empty() {
        tracing::info!("no usable GPU: proving on the CPU");
        out.push(Arc::new(CpuProver::default()));
    }
    Ok(out)
}

/// Engine settings that follow from the backends. A CUDA prover serializes its exclusive GPU
/// phase itself, while the engine's interlock covers the whole `start` (host-side planning and
/// uploads included); with CUDA the engine's interlock is turned off so one worker's host prep
/// overlaps the other worker's kernels.
pub fn tune_for_backends(config: &mut Config, backends: &[Arc<dyn ProverBackend>]) {
    if backends.iter().any(|b| b.locks_device_itself()) {
        config.prover_interlock = false;
    }
}

/// The planner for every proof kind this build supports: synthetic circuits and the
/// Filecoin kinds (PoRep C2, SnapDeals, WindowPoSt, WinningPoSt), whose parameters are read
/// from `config.params_dir` in Filecoin's layout (filecoin-proofs' verifiers read the same
/// directory: see `cuzk_filecoin::params::set_parameter_dir`).
pub fn planner(config: &Config) -> anyhow::Result<Arc<dyn Planner>> {
    Ok(Arc::new(Router {
        synthetic: config.allow_synthetic.then(SyntheticPlanner::default),
        other: Some(Arc::new(
            FilecoinPlanner::new(config.params_dir.clone())
                .with_window_post_compiled(config.compile_window_post)
                .with_compiled_cache(config.compiled_cache_path()),
        )),
    }))
}
