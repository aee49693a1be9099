//! Reading `.params` files into an [`Srs`] (what [`crate::Planner::load_srs`] does by default).
use crate::error::EngineError;
use cuzk_groth16::Srs;
use std::path::Path;

/// Reads a `.params` file into memory.
pub fn read_params_file(circuit_id: &str, path: &Path) -> Result<Srs, EngineError> {
    read_params(path).map_err(|message| EngineError::Srs {
        circuit_id: circuit_id.to_string(),
        message,
    })
}

/// Reads a `.params` file. Every point is checked to be on the curve; the per-point subgroup
/// check is skipped.
///
/// Why: blst's subgroup check costs tens of microseconds a point, which is minutes for a
/// 1 GiB test file on a small host and hours for a 47 GiB PoRep file, while the daemon must
/// load parameters in seconds. Skipping it cannot let a bad proof out: every partition proof
/// is verified against the verifying key before it is returned (`self_verify`, on by
/// default), and Filecoin kinds are also checked by filecoin-proofs against the separate
/// `.vk` file. Filecoin's own tooling also reads the parameter cache without subgroup checks.
pub fn read_params(path: &Path) -> Result<Srs, String> {
    let opts = cuzk_groth16::params::ReadOptions {
        check_points: false,
        ..Default::default()
    };
    let (srs, stats) = cuzk_groth16::params::read_params(path, &opts).map_err(|e| e.to_string())?;
    tracing::debug!(path = %path.display(), bytes = stats.bytes, gbps = stats.gbps(), "params read");
    Ok(srs)
}
