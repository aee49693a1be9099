//! The default SRS path: a planner that only names a `.params` file; the engine reads it,
//! proves with the CPU backend and self-checks every partition against the file's key.
use cuzk_core::kinds::synthetic::{parse_request, SyntheticPlanner};
use cuzk_core::{
    Config, Engine, EngineError, JobPlan, JobState, Planner, Priority, ProofKind, ProofRequest,
    SrsTier,
};
use cuzk_groth16::CpuProver;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const SPEC: &str = "synthetic:constraints=512,inputs=2,seed=5,partitions=3";

/// Plans like the synthetic planner but names its parameters `small-test` in a directory.
struct FilePlanner {
    dir: PathBuf,
}

impl Planner for FilePlanner {
    fn plan(&self, req: ProofRequest) -> Result<JobPlan, EngineError> {
        let mut plan = SyntheticPlanner::default().plan(req)?;
        for p in &mut plan.partitions {
            p.circuit_id = "small-test".into();
        }
        Ok(plan)
    }

    fn params_path(&self, circuit_id: &str) -> Result<PathBuf, EngineError> {
        match circuit_id {
            "small-test" => Ok(self.dir.join("small-test.params")),
            _ => Err(EngineError::UnknownCircuit(circuit_id.into())),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_file_is_loaded_and_partitions_self_verify() {
    let dir = tempfile::tempdir().unwrap();
    let spec = parse_request(SPEC).unwrap().spec;
    let srs =
        cuzk_groth16::setup::generate_params(spec, &mut ChaCha8Rng::seed_from_u64(99)).unwrap();
    let path = dir.path().join("small-test.params");
    cuzk_groth16::params::write_params(&path, &srs).unwrap();

    let mut config = Config::default_for_machine();
    config.budget_bytes = 256 << 20;
    config.request_buffer_bytes = 1 << 20;
    assert!(config.self_verify, "self-check is on by default");
    let planner = Arc::new(FilePlanner {
        dir: dir.path().to_path_buf(),
    });
    let e = Engine::new(config, vec![Arc::new(CpuProver::new())], planner).unwrap();
    let req = ProofRequest {
        request_id: "file-1".into(),
        kind: ProofKind::Synthetic,
        priority: Priority::High,
        vanilla_proof: SPEC.as_bytes().to_vec(),
        ..Default::default()
    };
    let id = e.submit(req).unwrap().job_id;
    let o = e.wait(&id, None).await.unwrap();
    match &o.state {
        JobState::Completed { proof } => assert_eq!(proof.len(), 3 * 192),
        other => panic!("{other:?}"),
    }
    assert!(o.timings.srs_load > Duration::ZERO);
    let s = e.status();
    assert_eq!(s.srs.len(), 1);
    assert_eq!(s.srs[0].tier, SrsTier::Hot);
    assert_eq!(s.srs[0].size_bytes, srs.size_bytes());

    // A file whose verifying key belongs to another setup than its proving key: proofs are
    // made but fail the self-check, and the job reports it instead of returning them.
    assert!(e.evict_srs("small-test").unwrap().was_loaded);
    let other =
        cuzk_groth16::setup::generate_params(spec, &mut ChaCha8Rng::seed_from_u64(100)).unwrap();
    let mixed = cuzk_groth16::Srs::new(
        other.vk().clone(),
        srs.h().to_vec(),
        srs.l().to_vec(),
        srs.a().to_vec(),
        srs.b_g1().to_vec(),
        srs.b_g2().to_vec(),
    );
    cuzk_groth16::params::write_params(&path, &mixed).unwrap();
    let req = ProofRequest {
        request_id: "file-2".into(),
        kind: ProofKind::Synthetic,
        vanilla_proof: SPEC.as_bytes().to_vec(),
        ..Default::default()
    };
    let id = e.submit(req).unwrap().job_id;
    match e.wait(&id, None).await.unwrap().state {
        JobState::Failed { error } => assert!(error.contains("self-check"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert!(e.evict_srs("small-test").unwrap().was_loaded);
    std::fs::write(&path, b"not a params file").unwrap();
    let req = ProofRequest {
        request_id: "file-3".into(),
        kind: ProofKind::Synthetic,
        vanilla_proof: SPEC.as_bytes().to_vec(),
        ..Default::default()
    };
    let id = e.submit(req).unwrap().job_id;
    match e.wait(&id, None).await.unwrap().state {
        JobState::Failed { error } => assert!(error.contains("small-test"), "{error}"),
        other => panic!("{other:?}"),
    }
    e.shutdown(Duration::from_secs(5)).await;
    assert_eq!(e.budget().reserved(), 0);
}
