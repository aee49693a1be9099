//! Client-side checks of returned proofs, per request: for synthetic circuits the verifying
//! key is re-derived from the spec with the daemon's (public, insecure) test-setup seed; the
//! Filecoin kinds will use the Filecoin verifier once `cuzk-filecoin` exposes it.
use cuzk_core::kinds::synthetic::{circuit_id, parse_request, SyntheticPlanner};
use cuzk_core::Planner;
use cuzk_groth16::proof::PROOF_BYTES;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::Proof;
use cuzk_server::proto::{ProofKind, SubmitProofRequest};
use std::sync::{Arc, OnceLock};

/// Checks a returned proof on the client side; `Err` says why it is rejected.
pub type Verifier = Arc<dyn Fn(&[u8]) -> Result<(), String> + Send + Sync>;

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
        let pvk = pvk
            .get_or_init(|| {
                SyntheticPlanner::default()
                    .load_srs(&id)
                    .map(|srs| PreparedVerifyingKey::from(&srs.vk))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| format!("re-deriving the verifying key: {e}"))?;
        if proof.len() != partitions * PROOF_BYTES {
            return Err(format!(
                "{} bytes, expected {partitions} partition proofs of {PROOF_BYTES} bytes",
                proof.len()
            ));
        }
        for (i, chunk) in proof.chunks(PROOF_BYTES).enumerate() {
            let p = Proof::from_bytes(chunk).map_err(|e| format!("partition {i}: {e}"))?;
            match verify_proof(pvk, &p, &inputs) {
                Ok(true) => {}
                Ok(false) => return Err(format!("partition {i} does not verify")),
                Err(e) => return Err(format!("partition {i}: {e}")),
            }
        }
        Ok(())
    }))
}
