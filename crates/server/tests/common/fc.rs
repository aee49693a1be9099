//! The 2 KiB Filecoin test data and a daemon that proves it (shared by `filecoin.rs` and
//! `fuzz.rs`).
//!
//! Test data (a sealed 2 KiB sector, one request per kind, insecure parameters) is the same
//! directory `cuzk-filecoin`'s tests use: generated once per target dir, under a file lock.
use super::{start_with_backends, TestDaemon, Transport};
use cuzk_core::kinds::filecoin::FilecoinPlanner;
use cuzk_core::kinds::synthetic::SyntheticPlanner;
use cuzk_core::kinds::Router;
use cuzk_groth16::{CpuProver, ProverBackend};
use cuzk_server::proto::SubmitProofRequest;
use cuzk_testkit::testdata::{process_data, process_dir, Manifest};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The shared directory, with filecoin-proofs pointed at it: call it first in every test.
pub fn dir() -> PathBuf {
    process_dir(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// The shared test data (generated on first use, parameters included).
pub fn data() -> &'static (PathBuf, Manifest) {
    process_data(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// A daemon whose planner knows synthetic circuits and the Filecoin kinds.
pub async fn start_filecoin() -> TestDaemon {
    start_filecoin_on(vec![Arc::new(CpuProver::default())]).await
}

/// [`start_filecoin`] proving on `backends`.
pub async fn start_filecoin_on(backends: Vec<Arc<dyn ProverBackend>>) -> TestDaemon {
    start_filecoin_with(backends, true).await
}

/// [`start_filecoin_on`], WindowPoSt compiled or recorded in full (`[srs]
/// compile_window_post`).
pub async fn start_filecoin_with(
    backends: Vec<Arc<dyn ProverBackend>>,
    compile_window_post: bool,
) -> TestDaemon {
    let (dir, _) = data();
    let planner = Arc::new(Router {
        synthetic: Some(SyntheticPlanner::default()),
        other: Some(Arc::new(
            FilecoinPlanner::new(dir.clone()).with_window_post_compiled(compile_window_post),
        )),
    });
    let params = dir.clone();
    start_with_backends(Transport::Unix, planner, backends, move |c, _| {
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
    let mut wire = cuzk_server::client::submit_request(&req);
    wire.request_id = format!("fc-{kind}");
    (req, wire)
}

/// Proves `wire` through `Prove`, checks that it completed and that filecoin-proofs verifies
/// the proof against `req` (what `wire` was made from), and returns the proof; `what` names
/// the request in failures.
pub async fn prove_verified(
    d: &TestDaemon,
    wire: SubmitProofRequest,
    req: &cuzk_filecoin::ProofRequest,
    what: &str,
) -> Vec<u8> {
    let r = d
        .client
        .clone()
        .prove(cuzk_server::proto::ProveRequest { submit: Some(wire) })
        .await
        .unwrap_or_else(|e| panic!("{what}: Prove failed: {e}"))
        .into_inner()
        .result
        .expect("a result");
    assert_eq!(
        r.status,
        super::completed(),
        "{what}: {} {}",
        super::status_name(r.status),
        r.error_message
    );
    cuzk_filecoin::plan(req)
        .expect("plan")
        .verify(&r.proof)
        .unwrap_or_else(|e| panic!("{what}: proof does not verify: {e}"));
    r.proof
}
