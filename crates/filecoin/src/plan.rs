//! Partition planning: a request becomes one [`crate::PartitionJob`] per Groth16 circuit, each with
//! its circuit id, its public inputs, a memory estimate and a lazy synthesis closure, plus a
//! job-level verifier. This is the interface the engine pipelines over; this file dispatches
//! to the kinds' planners (the vocabulary they share is in [`crate::partition`]).
use cuzk_groth16::Proof;

use crate::error::Result;
use crate::partition::{ProofPlan, Recorded, Synthesis, PARTITION_PROOF_BYTES};
use crate::registry::ProofKind;
use crate::request::ProofRequest;

/// Concatenates partition proofs in order: the byte string filecoin-proofs returns.
pub fn assemble(proofs: &[Proof]) -> Vec<u8> {
    let mut out = Vec::with_capacity(proofs.len() * PARTITION_PROOF_BYTES);
    for p in proofs {
        out.extend_from_slice(&p.to_bytes());
    }
    out
}

/// Decodes a request and splits it into partition jobs.
pub fn plan(req: &ProofRequest) -> Result<ProofPlan> {
    plan_with::<Recorded>(req)
}

/// Decodes a request and splits it into partition jobs whose work is `S`'s.
pub fn plan_with<S: Synthesis>(req: &ProofRequest) -> Result<ProofPlan<S::Work>> {
    match req.kind() {
        ProofKind::PoRepSealCommit => crate::porep::plan::<S>(req),
        ProofKind::SnapDealsUpdate => crate::snap::plan::<S>(req),
        ProofKind::WindowPostPartition => crate::post::plan_window::<S>(req),
        ProofKind::WinningPost => crate::post::plan_winning::<S>(req),
    }
}
