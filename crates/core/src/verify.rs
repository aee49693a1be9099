//! Glue to the Groth16 crate: reading parameter files and self-verifying partition proofs.
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{Proof, Scalar, Srs, VerifyingKey};
use std::path::Path;

/// A verifying key prepared for pairings.
pub struct PreparedVk(PreparedVerifyingKey);

impl PreparedVk {
    /// Prepares `vk`.
    pub fn new(vk: &VerifyingKey) -> PreparedVk {
        PreparedVk(PreparedVerifyingKey::from(vk))
    }
}

/// Checks one partition proof; `public_inputs` excludes ONE.
pub fn verify_partition(
    pvk: &PreparedVk,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<(), String> {
    match verify_proof(&pvk.0, proof, public_inputs) {
        Ok(true) => Ok(()),
        Ok(false) => Err("proof does not verify against the SRS verifying key".into()),
        Err(e) => Err(e.to_string()),
    }
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
