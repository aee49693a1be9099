//! The Filecoin kinds through the real daemon and gRPC client: each kind at 2 KiB is proved
//! with `Prove` and checked with filecoin-proofs' verifier on the client side; malformed
//! Filecoin payloads reach the Filecoin planner and come back as INVALID_ARGUMENT with a
//! readable message while the daemon keeps serving.
//!
//! Test data (a sealed 2 KiB sector, one request per kind, insecure parameters) is the same
//! directory `cuzk-filecoin`'s tests use: generated once per target dir, under a file lock.
mod common;

use common::completed;
use common::fc::{dir, prove_verified, request, start_filecoin, start_filecoin_with};
use cuzk_groth16::{
    CpuProver, Pending, Proof, ProveError, ProverBackend, Scalar, Srs, Synthesized,
};
use cuzk_server::proto::{ProveRequest, SubmitProofRequest};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tonic::Code;

/// Proves the `kind` request through `Prove` and verifies the proof with filecoin-proofs'
/// verifier; also checks that a corrupted proof is rejected (so the check can fail).
async fn prove_and_verify(kind: &str) {
    prove_and_verify_on(kind, start_filecoin().await).await;
}

async fn prove_and_verify_on(kind: &str, d: common::TestDaemon) {
    dir();
    let (req, wire) = request(kind);
    let proof = prove_verified(&d, wire, &req, kind).await;
    let plan = cuzk_filecoin::plan(&req).expect("plan");
    let mut bad = proof;
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(
        plan.verify(&bad).is_err(),
        "{kind}: a corrupted proof verified"
    );
    let s = d.status().await;
    assert_eq!(s.total_proofs_completed, 1);
    assert_eq!(s.total_proofs_failed, 0);
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn porep_c2_2k_is_proved_over_grpc_and_verifies() {
    prove_and_verify("porep").await;
}

/// NI-PoRep through the daemon: 13 partition proofs, aggregated by the job's finishing step
/// (SnarkPack), and the aggregate is what filecoin-proofs' verifier accepts (issue 29 item 5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ni_porep_2k_is_proved_over_grpc_aggregated_and_verifies() {
    prove_and_verify("porep-ni").await;
}

/// The CPU prover posing as a backend that makes a/b/c itself (as the CUDA backend does on
/// its device): it counts the circuits it is handed with a/b/c deferred, and proves them (the
/// CPU prover evaluates the matrices on the host).
#[derive(Default)]
struct DeferredCpu {
    deferred: AtomicUsize,
    evaluated: AtomicUsize,
}

impl ProverBackend for DeferredCpu {
    fn name(&self) -> String {
        "deferred-cpu".into()
    }
    fn evaluates_abc(&self) -> bool {
        true
    }
    fn start(
        &self,
        srs: &Srs,
        c: Synthesized,
        r: Scalar,
        s: Scalar,
    ) -> Result<Pending, ProveError> {
        let n = if c.is_deferred() {
            &self.deferred
        } else {
            &self.evaluated
        };
        n.fetch_add(1, Ordering::Relaxed);
        CpuProver::new().start(srs, c, r, s)
    }
    fn finish(&self, srs: &Srs, p: Pending) -> Result<Proof, ProveError> {
        CpuProver::new().finish(srs, p)
    }
}

/// Beside a backend that makes a/b/c itself, the compiled kinds reach it with a/b/c
/// deferred (the host held only the witness), WindowPoSt recorded in full (`[srs]
/// compile_window_post = false`) with them made, and every proof verifies with
/// filecoin-proofs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_abc_reach_a_backend_that_makes_them_and_verify() {
    for (kind, compile_window_post, deferred) in
        [("porep", true, 1), ("wpost", true, 1), ("wpost", false, 0)]
    {
        let backend = Arc::new(DeferredCpu::default());
        let d = start_filecoin_with(vec![backend.clone()], compile_window_post).await;
        prove_and_verify_on(kind, d).await;
        let what = format!("{kind}, compile_window_post {compile_window_post}");
        assert_eq!(backend.deferred.load(Ordering::Relaxed), deferred, "{what}");
        assert_eq!(
            backend.evaluated.load(Ordering::Relaxed),
            1 - deferred,
            "{what}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snap_deals_2k_is_proved_over_grpc_and_verifies() {
    prove_and_verify("snap").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_post_2k_is_proved_over_grpc_and_verifies() {
    prove_and_verify("wpost").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn winning_post_2k_is_proved_over_grpc_and_verifies() {
    prove_and_verify("winning").await;
}

/// Sends `req` with `SubmitProof` and with `Prove`, expects INVALID_ARGUMENT from both and
/// returns the message.
async fn invalid(c: &mut cuzk_server::client::Client, req: SubmitProofRequest) -> String {
    let e = c
        .submit_proof(req.clone())
        .await
        .expect_err("must be refused");
    assert_eq!(e.code(), Code::InvalidArgument, "{req:?}: {}", e.message());
    let e2 = c
        .prove(ProveRequest { submit: Some(req) })
        .await
        .expect_err("must be refused");
    assert_eq!(e2.code(), Code::InvalidArgument, "{}", e2.message());
    let m = e.message().to_string();
    eprintln!("refused: {m}");
    assert!(!m.is_empty());
    assert!(
        !m.contains("not supported by this build"),
        "did not reach the Filecoin planner: {m}"
    );
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_filecoin_inputs_are_invalid_argument_and_the_daemon_keeps_serving() {
    dir();
    let (_, good_porep) = request("porep");
    let (winning_req, winning) = request("winning");
    let d = start_filecoin().await;
    let mut c = d.client.clone();

    // Truncated C1 JSON envelope.
    let mut truncated = good_porep.clone();
    truncated
        .vanilla_proof
        .truncate(truncated.vanilla_proof.len() / 2);
    let m = invalid(&mut c, truncated).await;
    assert!(m.to_lowercase().contains("json"), "{m}");

    // Base64 garbage in Phase1Out.
    let mut garbage = good_porep.clone();
    garbage.vanilla_proof = format!(
        r#"{{"SectorNum":{},"Phase1Out":"%%%not base64%%%","SectorSize":2048}}"#,
        good_porep.sector_number
    )
    .into_bytes();
    let m = invalid(&mut c, garbage).await;
    assert!(m.to_lowercase().contains("base64"), "{m}");

    // Wrong sector size for the registered proof (2 KiB PoRep asked as 8 MiB).
    let mut wrong_size = good_porep.clone();
    wrong_size.sector_size = 8 << 20;
    let m = invalid(&mut c, wrong_size).await;
    assert!(m.contains("sector_size"), "{m}");

    // Empty vanilla proofs for a PoSt.
    let mut empty = winning.clone();
    empty.vanilla_proofs.clear();
    let m = invalid(&mut c, empty).await;
    assert!(m.contains("vanilla_proofs"), "{m}");

    // Nothing above broke the daemon: the real WinningPoSt request is proved and verifies.
    let r = c
        .prove(ProveRequest {
            submit: Some(winning),
        })
        .await
        .expect("valid request")
        .into_inner()
        .result
        .expect("a result");
    assert_eq!(r.status, completed(), "{}", r.error_message);
    cuzk_filecoin::plan(&winning_req)
        .expect("plan")
        .verify(&r.proof)
        .expect("winning proof verifies");
    let s = d.status().await;
    assert_eq!(s.total_proofs_completed, 1);
    assert_eq!(s.total_proofs_failed, 0);
    d.stop().await;
}
