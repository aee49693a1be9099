//! The 2 KiB Filecoin test data and a daemon that proves it (shared by `filecoin.rs` and
//! `fuzz.rs`).
//!
//! Test data (a sealed 2 KiB sector, one request per kind, insecure parameters) is the same
//! directory `cuzk-filecoin`'s tests use: generated once per target dir, under a file lock.
use super::{start_with, TestDaemon, Transport};
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_core::kinds::synthetic::SyntheticPlanner;
use cuzk_core::kinds::Router;
use cuzk_filecoin::testdata::{ensure, Manifest, TestdataOptions};
use cuzk_filecoin::SectorSize;
use cuzk_server::proto::{Priority, SubmitProofRequest};
use std::path::PathBuf;
use std::sync::{Arc, Once, OnceLock};

/// Seed of the shared test data (the same as `cuzk-filecoin`'s tests, so one copy serves
/// every test binary of the target dir).
const SEED: u64 = 0x5eed_2c1d;

static ENV: Once = Once::new();
static DATA: OnceLock<(PathBuf, Manifest)> = OnceLock::new();

/// The shared directory. filecoin-proofs reads `FIL_PROOFS_*` once per process, so this sets
/// them before anything touches the Filecoin crates: every test calls it first.
pub fn dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuzk-testdata-2k");
    ENV.call_once(|| {
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
        std::env::set_var("FIL_PROOFS_CACHE_DIR", format!("{}/", dir.display()));
    });
    dir
}

/// The shared test data (generated on first use, parameters included).
pub fn data() -> &'static (PathBuf, Manifest) {
    DATA.get_or_init(|| {
        let dir = dir();
        let m = ensure(&TestdataOptions {
            out: dir.clone(),
            sector_size: SectorSize::S2KiB,
            seed: SEED,
            params: true,
        })
        .expect("generating test data");
        (dir, m)
    })
}

/// A daemon whose planner knows synthetic circuits and the Filecoin kinds.
pub async fn start_filecoin() -> TestDaemon {
    let (dir, _) = data();
    let planner = Arc::new(Router {
        synthetic: Some(SyntheticPlanner::default()),
        other: Some(Arc::new(FilecoinPlanner::new(dir.clone()))),
    });
    let params = dir.clone();
    start_with(Transport::Unix, planner, move |c, _| {
        c.params_dir = params;
    })
    .await
}

/// The request of a kind (`porep`, `snap`, `wpost`, `winning`) as the engine's type and as
/// the wire message.
pub fn request(kind: &str) -> (cuzk_filecoin::ProofRequest, SubmitProofRequest) {
    let (dir, m) = data();
    let spec = m
        .request(kind)
        .unwrap_or_else(|| panic!("no {kind} request in the manifest"));
    let req = spec.load(dir).expect("loading request");
    let wire = SubmitProofRequest {
        request_id: format!("fc-{kind}"),
        proof_kind: spec.proof_kind,
        sector_size: req.sector_size,
        registered_proof: req.registered_proof,
        vanilla_proof: req.vanilla_proof.clone(),
        vanilla_proofs: req.vanilla_proofs.clone(),
        sector_number: req.sector_number,
        miner_id: req.miner_id,
        randomness: req.randomness.clone(),
        partition_index: req.partition_index,
        comm_r_old: req.comm_r_old.clone(),
        comm_r_new: req.comm_r_new.clone(),
        comm_d_new: req.comm_d_new.clone(),
        priority: Priority::Unspecified as i32,
    };
    (req, wire)
}
