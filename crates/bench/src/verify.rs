//! Client-side checks of returned proofs, per request, and what a check can say: verified,
//! rejected, or not checked (and why). For synthetic circuits the verifying key is re-derived
//! from the spec with the daemon's (public, insecure) test-setup seed; the Filecoin kinds use
//! Filecoin's verifier (see [`crate::request_file`]).
use cuzk_core::kinds::synthetic::{circuit_id, parse_request, SyntheticPlanner};
use cuzk_core::Planner;
use cuzk_groth16::proof::PROOF_BYTES;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::Proof;
use cuzk_server::proto::{ProofKind, SubmitProofRequest};
use std::sync::{Arc, OnceLock};

/// What the client-side check of one completed proof found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The verifier accepted it.
    Verified,
    /// The verifier rejected it (or its bytes cannot be a proof of the request): a failure.
    Rejected(String),
    /// The proof completed but could not be checked (no verifying key, a timing-only request,
    /// no verifier for the kind, a verifier that gave no verdict): why. Not a failure.
    NotChecked(String),
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Check::Verified => f.write_str("ok"),
            Check::Rejected(why) => write!(f, "FAILED: {why}"),
            Check::NotChecked(why) => write!(f, "completed, not checked: {why}"),
        }
    }
}

/// Checks a returned proof on the client side.
pub type Verifier = Arc<dyn Fn(&[u8]) -> Check + Send + Sync>;

/// The check for proofs of `req`, if this build can do one.
pub fn verifier_for(req: &SubmitProofRequest) -> Option<Verifier> {
    match ProofKind::try_from(req.proof_kind) {
        Ok(ProofKind::Synthetic) => synthetic(&req.vanilla_proof),
        _ => None,
    }
}

fn synthetic(spec: &[u8]) -> Option<Verifier> {
    let text = std::str::from_utf8(spec).ok()?;
    let r = parse_request(text.trim()).ok()?;
    let id = circuit_id(&r.spec);
    let inputs = r.spec.public_inputs();
    let partitions = r.partitions;
    // The setup is as slow as one proof; run it once per template, on first use.
    let pvk: Arc<OnceLock<Result<PreparedVerifyingKey, String>>> = Arc::new(OnceLock::new());
    Some(Arc::new(move |proof: &[u8]| {
        let pvk = match pvk
            .get_or_init(|| {
                SyntheticPlanner::default()
                    .load_srs(&id)
                    .map(|srs| PreparedVerifyingKey::from(srs.vk()))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
        {
            Ok(pvk) => pvk,
            Err(e) => return Check::NotChecked(format!("re-deriving the verifying key: {e}")),
        };
        if proof.len() != partitions * PROOF_BYTES {
            return Check::Rejected(format!(
                "{} bytes, expected {partitions} partition proofs of {PROOF_BYTES} bytes",
                proof.len()
            ));
        }
        for (i, chunk) in proof.chunks(PROOF_BYTES).enumerate() {
            let p = match Proof::from_bytes(chunk) {
                Ok(p) => p,
                Err(e) => return Check::Rejected(format!("partition {i}: {e}")),
            };
            match verify_proof(pvk, &p, &inputs) {
                Ok(true) => {}
                Ok(false) => return Check::Rejected(format!("partition {i} does not verify")),
                Err(e) => return Check::Rejected(format!("partition {i}: {e}")),
            }
        }
        Check::Verified
    }))
}
