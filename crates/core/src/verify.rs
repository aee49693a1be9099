//! Glue to the Groth16 crate: self-verifying partition proofs (parameter files are read in
//! [`crate::params`]).
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{Proof, Scalar, VerifyingKey};

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
