//! The Filecoin proof kinds (PoRep C2, SnapDeals, WindowPoSt, WinningPoSt) as a [`Planner`],
//! built on `cuzk-filecoin`: decoding, partition circuits, parameter file names, and
//! filecoin-proofs' own verifier as the job-level check.
use std::path::PathBuf;

use cuzk_filecoin::params::parameter_cache_dir;
use cuzk_filecoin::plan::ProofPlan;
use cuzk_filecoin::{CircuitId, PartitionJob};
use cuzk_groth16::RecorderMode;

use crate::error::EngineError;
use crate::planner::{JobPlan, PartitionPlan, Planner};
use crate::request::{ProofKind, ProofRequest};

/// Plans Filecoin requests; parameters are read from one directory in Filecoin's layout
/// (`v28-….params`).
///
/// The job-level verifier is filecoin-proofs' own, which reads the `.vk` files from
/// `FIL_PROOFS_PARAMETER_CACHE` (read once per process by filecoin-proofs); keep that
/// variable pointing at the same directory.
#[derive(Clone, Debug)]
pub struct FilecoinPlanner {
    /// Where the `.params` files live.
    param_dir: PathBuf,
}

impl FilecoinPlanner {
    /// A planner reading parameters from `param_dir`.
    pub fn new(param_dir: PathBuf) -> FilecoinPlanner {
        FilecoinPlanner { param_dir }
    }

    /// A planner reading parameters from `$FIL_PROOFS_PARAMETER_CACHE` (else
    /// `/var/tmp/filecoin-proof-parameters`).
    pub fn from_env() -> FilecoinPlanner {
        FilecoinPlanner::new(parameter_cache_dir())
    }

    /// The parameter directory.
    pub fn param_dir(&self) -> &std::path::Path {
        &self.param_dir
    }
}

/// The engine's request in `cuzk-filecoin`'s terms.
pub fn to_filecoin_request(req: &ProofRequest) -> Result<cuzk_filecoin::ProofRequest, EngineError> {
    use cuzk_filecoin::ProofKind as K;
    let kind = match req.kind {
        ProofKind::PorepSealCommit => K::PoRepSealCommit,
        ProofKind::SnapDealsUpdate => K::SnapDealsUpdate,
        ProofKind::WindowPostPartition => K::WindowPostPartition,
        ProofKind::WinningPost => K::WinningPost,
        other => {
            return Err(EngineError::InvalidRequest(format!(
                "{other} is not a Filecoin proof kind"
            )))
        }
    };
    let mut out = cuzk_filecoin::ProofRequest::new(kind, req.sector_size, req.registered_proof);
    out.vanilla_proof = req.vanilla_proof.clone();
    out.vanilla_proofs = req.vanilla_proofs.clone();
    out.sector_number = req.sector_number;
    out.miner_id = req.miner_id;
    out.randomness = req.randomness.clone();
    out.partition_index = req.partition_index;
    out.comm_r_old = req.comm_r_old.clone();
    out.comm_r_new = req.comm_r_new.clone();
    out.comm_d_new = req.comm_d_new.clone();
    Ok(out)
}

fn partition(job: PartitionJob) -> PartitionPlan {
    let PartitionJob {
        circuit_id,
        partition,
        public_inputs,
        estimate,
        synthesize,
        ..
    } = job;
    PartitionPlan {
        circuit_id: circuit_id.to_string(),
        index: partition,
        public_inputs,
        shape_hint: Some((estimate.constraints, estimate.inputs, estimate.aux)),
        synthesize: Box::new(move || synthesize(RecorderMode::Full).map_err(|e| e.to_string())),
    }
}

impl Planner for FilecoinPlanner {
    fn plan(&self, req: &ProofRequest) -> Result<JobPlan, EngineError> {
        let fc = to_filecoin_request(req)?;
        let ProofPlan { jobs, verifier, .. } =
            cuzk_filecoin::plan(&fc).map_err(|e| EngineError::InvalidRequest(e.to_string()))?;
        Ok(JobPlan {
            partitions: jobs.into_iter().map(partition).collect(),
            verify: Some(Box::new(move |proof: &[u8]| {
                verifier(proof).map_err(|e| e.to_string())
            })),
        })
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        let id: CircuitId = circuit_id
            .parse()
            .map_err(|_| EngineError::UnknownCircuit(circuit_id.to_string()))?;
        let files = id.param_files().map_err(|e| EngineError::Srs {
            circuit_id: circuit_id.to_string(),
            message: e.to_string(),
        })?;
        Ok(files.params_path(&self.param_dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_are_invalid_and_circuit_ids_map_to_filecoin_names() {
        let p = FilecoinPlanner::new(PathBuf::from("/nonexistent"));
        let req = ProofRequest {
            kind: ProofKind::PorepSealCommit,
            sector_size: 2048,
            registered_proof: 5,
            vanilla_proof: b"{\"SectorNum\":1".to_vec(),
            ..ProofRequest::default()
        };
        assert!(matches!(p.plan(&req), Err(EngineError::InvalidRequest(_))));
        let synthetic = ProofRequest {
            kind: ProofKind::Synthetic,
            ..ProofRequest::default()
        };
        assert!(matches!(
            p.plan(&synthetic),
            Err(EngineError::InvalidRequest(_))
        ));
        let path = p.params_path("porep-32g").unwrap();
        assert!(path.to_string_lossy().ends_with(
            "sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params"
        ));
        assert!(matches!(
            p.params_path("porep-3g"),
            Err(EngineError::UnknownCircuit(_))
        ));
    }

    #[test]
    fn plans_a_real_winning_post_request_into_a_synthesizable_partition() {
        use cuzk_filecoin::testdata::{ensure, TestdataOptions};
        let dir = tempfile::tempdir().unwrap();
        let m = ensure(&TestdataOptions {
            out: dir.path().to_path_buf(),
            sector_size: cuzk_filecoin::SectorSize::S2KiB,
            seed: 9,
            params: false,
        })
        .unwrap();
        let spec = m.request("winning").unwrap();
        let fc = spec.load(dir.path()).unwrap();
        let req = ProofRequest {
            kind: ProofKind::WinningPost,
            sector_size: fc.sector_size,
            registered_proof: fc.registered_proof,
            vanilla_proofs: fc.vanilla_proofs.clone(),
            miner_id: fc.miner_id,
            randomness: fc.randomness.clone(),
            ..ProofRequest::default()
        };
        let p = FilecoinPlanner::new(dir.path().to_path_buf());
        let mut plan = p.plan(&req).unwrap();
        assert_eq!(plan.partitions.len(), 1);
        let part = plan.partitions.remove(0);
        assert_eq!(part.circuit_id, "winning-2k");
        assert_eq!(part.shape_hint, Some((90_750, 133, 91_674)));
        let expected = part.public_inputs.clone();
        let s = (part.synthesize)().unwrap();
        assert_eq!(s.num_constraints, 90_750);
        assert_eq!(&s.inputs[1..], &expected[..]);
        // No parameters in this directory: the job-level check fails with a reason.
        let verify = plan.verify.unwrap();
        assert!(verify(&[0u8; 192]).is_err());
    }
}
