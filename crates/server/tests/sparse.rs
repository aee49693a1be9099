//! Requests of a synthetic sparse sector (`cuzk_testkit::sparse`) through the real daemon
//! and gRPC client: every kind at 2 KiB is proved and its proof verifies with filecoin-proofs'
//! own verifier (`verify_seal`, `verify_empty_sector_update_proof`, `verify_window_post`,
//! `verify_winning_post`) against the insecure test parameters; a request with one wrong
//! parent label, one changed path sibling or one moved path position gives no proof, and the
//! daemon keeps serving.
mod common;

use common::fc::{dir, prove_verified, start_filecoin};
use common::{completed, status_name};
use cuzk_filecoin::{ProofKind, ProofRequest, SectorSize};
use cuzk_server::proto::{ProveRequest, ProveResponse, SubmitProofRequest};
use cuzk_testkit::sparse::{request, Fault};

fn wire(req: &ProofRequest, id: &str) -> SubmitProofRequest {
    let mut w = cuzk_server::client::submit_request(req);
    w.request_id = id.to_string();
    w
}

const KINDS: [ProofKind; 4] = [
    ProofKind::PoRepSealCommit,
    ProofKind::SnapDealsUpdate,
    ProofKind::WindowPostPartition,
    ProofKind::WinningPost,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_2k_requests_of_every_kind_are_proved_and_verify_with_filecoin_proofs() {
    dir();
    let d = start_filecoin().await;
    for kind in KINDS {
        let (req, _) = request(kind, SectorSize::S2KiB, 21, None).expect("sparse request");
        let proof = prove_verified(
            &d,
            wire(&req, &format!("sparse-{kind}")),
            &req,
            &kind.to_string(),
        )
        .await;
        let plan = cuzk_filecoin::plan(&req).expect("plan");
        // The check can fail: one flipped bit of the proof is refused.
        let mut bad = proof;
        bad[10] ^= 1;
        assert!(
            plan.verify(&bad).is_err(),
            "{kind}: a corrupted proof verified"
        );
    }
    let s = d.status().await;
    assert_eq!(s.total_proofs_completed, 4);
    assert_eq!(s.total_proofs_failed, 0);
    d.stop().await;
}

/// The daemon's answer to `req`: a result, or the gRPC error's message.
async fn answer(c: &mut cuzk_server::client::Client, req: &ProofRequest, id: &str) -> String {
    match c
        .prove(ProveRequest {
            submit: Some(wire(req, id)),
        })
        .await
    {
        Ok(r) => {
            let ProveResponse { result } = r.into_inner();
            let r = result.expect("a result");
            assert_ne!(r.status, completed(), "{id}: a broken request was proved");
            assert!(
                r.proof.is_empty(),
                "{id}: a failed job returned proof bytes"
            );
            format!("{}: {}", status_name(r.status), r.error_message)
        }
        Err(e) => format!("{:?}: {}", e.code(), e.message()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_parent_label_or_a_broken_path_gives_no_proof() {
    dir();
    let d = start_filecoin().await;
    let mut c = d.client.clone();
    // PoRep's parent label reaches the circuit (the vanilla proofs look fine to the planner):
    // the daemon's self-check refuses the proof. PoSt paths are refused at planning. (The
    // other PoRep and SnapDeals faults are checked against the circuit itself, cheaper, in
    // `cuzk-filecoin`'s tests/sparse.rs.)
    let broken = [
        (
            "porep parent label",
            ProofKind::PoRepSealCommit,
            Fault::ParentLabel,
        ),
        (
            "wpost sibling",
            ProofKind::WindowPostPartition,
            Fault::PathSibling,
        ),
        (
            "wpost position",
            ProofKind::WindowPostPartition,
            Fault::PathPosition,
        ),
        (
            "winning sibling",
            ProofKind::WinningPost,
            Fault::PathSibling,
        ),
        (
            "winning position",
            ProofKind::WinningPost,
            Fault::PathPosition,
        ),
    ]
    .map(|(name, kind, fault)| (name, request(kind, SectorSize::S2KiB, 22, Some(fault))));
    for (name, r) in broken {
        let (req, _) = r.expect("sparse request");
        let said = answer(&mut c, &req, name).await;
        eprintln!("{name}: {said}");
        let why = if name.starts_with("porep") {
            "self-check"
        } else {
            "vanilla"
        };
        assert!(said.contains(why), "{name}: {said}");
    }
    // The daemon keeps serving: the same kind, unbroken, is proved and verifies.
    let (req, _) = request(ProofKind::PoRepSealCommit, SectorSize::S2KiB, 22, None).unwrap();
    let r = c
        .prove(ProveRequest {
            submit: Some(wire(&req, "porep-after")),
        })
        .await
        .expect("prove")
        .into_inner()
        .result
        .expect("a result");
    assert_eq!(r.status, completed(), "{}", r.error_message);
    cuzk_filecoin::plan(&req)
        .expect("plan")
        .verify(&r.proof)
        .expect("verifies");
    d.stop().await;
}
