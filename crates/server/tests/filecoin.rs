//! The Filecoin kinds through the real daemon and gRPC client: each kind at 2 KiB is proved
//! with `Prove` and checked with filecoin-proofs' verifier on the client side; malformed
//! Filecoin payloads reach the Filecoin planner and come back as INVALID_ARGUMENT with a
//! readable message while the daemon keeps serving.
//!
//! Test data (a sealed 2 KiB sector, one request per kind, insecure parameters) is the same
//! directory `cuzk-filecoin`'s tests use: generated once per target dir, under a file lock.
mod common;

use common::fc::{dir, request, start_filecoin};
use common::{completed, status_name};
use cuzk_server::proto::{ProveRequest, SubmitProofRequest};
use tonic::Code;

/// Proves the `kind` request through `Prove` and verifies the proof with filecoin-proofs'
/// verifier; also checks that a corrupted proof is rejected (so the check can fail).
async fn prove_and_verify(kind: &str) {
    dir();
    let (req, wire) = request(kind);
    let d = start_filecoin().await;
    let mut c = d.client.clone();
    let r = c
        .prove(ProveRequest { submit: Some(wire) })
        .await
        .unwrap_or_else(|e| panic!("{kind}: Prove failed: {e}"))
        .into_inner()
        .result
        .expect("a result");
    assert_eq!(
        r.status,
        completed(),
        "{kind}: {} {}",
        status_name(r.status),
        r.error_message
    );
    let plan = cuzk_filecoin::plan(&req).expect("plan");
    plan.verify(&r.proof)
        .unwrap_or_else(|e| panic!("{kind}: proof does not verify: {e}"));
    let mut bad = r.proof.clone();
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
