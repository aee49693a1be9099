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

/// Reads a `.params` file, checking every point (on the curve, in the subgroup).
pub fn read_params(path: &Path) -> Result<Srs, String> {
    let opts = cuzk_groth16::params::ReadOptions::default();
    let (srs, stats) = cuzk_groth16::params::read_params(path, &opts).map_err(|e| e.to_string())?;
    tracing::debug!(path = %path.display(), bytes = stats.bytes, gbps = stats.gbps(), "params read");
    Ok(srs)
}
