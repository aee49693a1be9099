//! Reading `.params` files into an [`Srs`] (what [`crate::Planner::load_srs`] does by default).
use crate::error::EngineError;
use cuzk_groth16::params::ReadOptions;
use cuzk_groth16::{ParamsError, Srs};
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
    let (srs, stats) =
        cuzk_groth16::params::read_params(path, &read_options()).map_err(|e| e.to_string())?;
    tracing::debug!(path = %path.display(), bytes = stats.bytes, gbps = stats.gbps(), "params read");
    Ok(srs)
}

/// How the daemon reads points: on the curve, no subgroup check (see [`read_params`]).
pub fn read_options() -> ReadOptions {
    ReadOptions {
        check_points: false,
        ..Default::default()
    }
}

/// Reads a `.params` file's verifying key and section counts, leaving the points in the file
/// (see [`cuzk_groth16::params::read_params_header`]): for a load that streams them into the
/// devices' memory, or reads them in later ([`load_host_points`]).
pub fn read_params_header_file(circuit_id: &str, path: &Path) -> Result<Srs, EngineError> {
    let (srs, _) = cuzk_groth16::params::read_params_header(path, &read_options())
        .map_err(|e| srs_err(circuit_id, e))?;
    Ok(srs)
}

/// Reads the points of parameters read header-first into host memory. Returns the bytes.
pub fn load_host_points(circuit_id: &str, srs: &mut Srs) -> Result<u64, EngineError> {
    srs.load_host_points(&read_options())
        .map_err(|e| srs_err(circuit_id, e))
}

fn srs_err(circuit_id: &str, e: ParamsError) -> EngineError {
    EngineError::Srs {
        circuit_id: circuit_id.to_string(),
        message: e.to_string(),
    }
}
