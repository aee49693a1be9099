//! Issue 32 item 1: every request shape Curio builds is accepted, proved and verifies. Each
//! message is written byte by byte with the fields Curio sets, as its Go code sets them, in
//! field-number order with proto3's zero values left out (what Go's protobuf encoder
//! writes), over the 2 KiB test sector, then sent through `Prove` and verified by
//! filecoin-proofs:
//! - PoRep from Curio's sealing pipeline (`lib/ffi/cuzk_funcs.go`, `PoRepSnarkCuzk`): the C1
//!   output in the `{"SectorNum","Phase1Out","SectorSize"}` envelope;
//! - PoRep from ProofShare (`tasks/proofshare/task_prove.go`, `computePoRep`): the bare C1
//!   JSON (`json.Marshal(Commit1OutRaw)`);
//! - SnapDeals from the sealing pipeline (`ProveUpdateCuzk`): the commitments as CID bytes
//!   (`key.Bytes()`, `sealed.Bytes()`, `unsealed.Bytes()`);
//! - SnapDeals from ProofShare (`computeSnap`): raw 32-byte commitments, no `sector_size`;
//! - WindowPoSt and WinningPoSt as `shared/PROTOCOL.md` gives them (Curio's PoSt builders for
//!   cuzk are not in the sources we could read): no `sector_size`, no `sector_number`.
mod common;

use base64::Engine as _;
use common::fc::{dir, prove_verified, request, start_filecoin};
use common::pb::W;
use cuzk_filecoin::commcid::{to_cid_bytes, Commitment};
use cuzk_filecoin::C1Envelope;
use cuzk_server::proto::{ProveRequest, SubmitProofRequest};
use prost::Message;

/// Builds a request's wire bytes from the test sector's request.
type Builder = fn(&cuzk_filecoin::ProofRequest) -> Vec<u8>;

const NORMAL: u64 = 2;
const HIGH: u64 = 3;
const CRITICAL: u64 = 4;

/// The C1 output inside the test request's envelope.
fn c1_json(req: &cuzk_filecoin::ProofRequest) -> Vec<u8> {
    C1Envelope::parse(&req.vanilla_proof)
        .and_then(|e| e.phase1_bytes())
        .expect("the test request's envelope")
}

fn raw32(b: &[u8]) -> [u8; 32] {
    b.try_into().expect("a 32-byte commitment")
}

/// `PoRepSnarkCuzk`: the envelope as Go's `json.Marshal(c1OutputWrapper{..})` writes it
/// (fields in struct order, `[]byte` as padded standard base64).
fn porep_sealing(req: &cuzk_filecoin::ProofRequest) -> Vec<u8> {
    let envelope = format!(
        r#"{{"SectorNum":{},"Phase1Out":"{}","SectorSize":{}}}"#,
        req.sector_number,
        base64::engine::general_purpose::STANDARD.encode(c1_json(req)),
        req.sector_size().bytes()
    );
    W::default()
        .s(1, &format!("porep-{}-{}", req.miner_id, req.sector_number))
        .v(2, 1)
        .v(3, req.sector_size().bytes())
        .v(4, req.registered_proof())
        .v(5, NORMAL)
        .bv(10, envelope.as_bytes())
        .v(20, req.sector_number)
        .v(21, req.miner_id)
        .0
}

/// `computePoRep`: the bare C1 output (`Commit1OutRaw`'s JSON keys are its serde names).
fn porep_proofshare(req: &cuzk_filecoin::ProofRequest) -> Vec<u8> {
    let value: serde_json::Value = serde_json::from_slice(&c1_json(req)).unwrap();
    W::default()
        .s(
            1,
            &format!("ps-porep-{}-{}", req.miner_id, req.sector_number),
        )
        .v(2, 1)
        .v(3, req.sector_size().bytes())
        .v(4, req.registered_proof())
        .v(5, NORMAL)
        .bv(10, &serde_json::to_vec(&value).unwrap())
        .v(20, req.sector_number)
        .v(21, req.miner_id)
        .0
}

/// `ProveUpdateCuzk`: commitments as CIDs.
fn snap_sealing(req: &cuzk_filecoin::ProofRequest) -> Vec<u8> {
    W::default()
        .s(1, &format!("snap-{}-{}", req.miner_id, req.sector_number))
        .v(2, 2)
        .v(3, req.sector_size().bytes())
        .v(4, req.registered_proof())
        .v(5, NORMAL)
        .bvs(11, &req.vanilla_proofs)
        .v(20, req.sector_number)
        .v(21, req.miner_id)
        .bv(
            30,
            &to_cid_bytes(&raw32(&req.comm_r_old), Commitment::Sealed),
        )
        .bv(
            31,
            &to_cid_bytes(&raw32(&req.comm_r_new), Commitment::Sealed),
        )
        .bv(
            32,
            &to_cid_bytes(&raw32(&req.comm_d_new), Commitment::Unsealed),
        )
        .0
}

/// `computeSnap`: raw commitments, no sector size.
fn snap_proofshare(req: &cuzk_filecoin::ProofRequest) -> Vec<u8> {
    W::default()
        .s(
            1,
            &format!("ps-snap-{}-{}-77", req.miner_id, req.sector_number),
        )
        .v(2, 2)
        .v(4, req.registered_proof())
        .v(5, NORMAL)
        .bvs(11, &req.vanilla_proofs)
        .v(20, req.sector_number)
        .v(21, req.miner_id)
        .bv(30, &req.comm_r_old)
        .bv(31, &req.comm_r_new)
        .bv(32, &req.comm_d_new)
        .0
}

/// PoSt: the kind, registered proof, priority, vanilla proofs, miner, randomness and (for
/// WindowPoSt, when not 0) the partition index.
fn post(req: &cuzk_filecoin::ProofRequest, kind: u64, priority: u64, id: &str) -> Vec<u8> {
    let mut w = W::default()
        .s(1, id)
        .v(2, kind)
        .v(4, req.registered_proof())
        .v(5, priority)
        .bvs(11, &req.vanilla_proofs)
        .v(21, req.miner_id)
        .bv(22, &req.randomness);
    if req.partition_index != 0 {
        w = w.v(23, req.partition_index.into());
    }
    w.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_shape_curio_builds_is_proved_and_verifies() {
    dir();
    let d = start_filecoin().await;
    let shapes: Vec<(&str, &str, Builder)> = vec![
        (
            "porep",
            "PoRep, sealing pipeline (C1 envelope)",
            porep_sealing,
        ),
        (
            "porep",
            "PoRep, ProofShare (bare C1 JSON)",
            porep_proofshare,
        ),
        (
            "snap",
            "SnapDeals, sealing pipeline (CID commitments)",
            snap_sealing,
        ),
        (
            "snap",
            "SnapDeals, ProofShare (no sector_size)",
            snap_proofshare,
        ),
        ("wpost", "WindowPoSt", |r| {
            post(r, 3, HIGH, "wdpost-1000-0-0")
        }),
        ("winning", "WinningPoSt", |r| {
            post(r, 4, CRITICAL, "winning-1000-77")
        }),
    ];
    for (kind, what, build) in shapes {
        let (req, _) = request(kind);
        let wire = build(&req);
        // Our schema reads every byte Curio writes: decoding and encoding again is identity.
        let msg = SubmitProofRequest::decode(wire.as_slice()).expect("decodes");
        assert!(
            msg.encode_to_vec() == wire,
            "{what}: bytes lost or reordered"
        );
        let proof = prove_verified(&d, msg, &req, what).await;
        println!("{what}: proved, {} bytes, verified", proof.len());
    }
    d.stop().await;
}

/// A SnapDeals commitment CID of the wrong kind (comm_d's sent as comm_r_new) is refused
/// with INVALID_ARGUMENT naming the field and what was found, and the daemon keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commitment_cid_of_the_wrong_kind_is_refused_by_name() {
    dir();
    let d = start_filecoin().await;
    let (req, _) = request("snap");
    let mut msg = SubmitProofRequest::decode(snap_sealing(&req).as_slice()).unwrap();
    msg.comm_r_new = to_cid_bytes(&raw32(&req.comm_r_new), Commitment::Unsealed);
    let e = d
        .client
        .clone()
        .prove(ProveRequest { submit: Some(msg) })
        .await
        .expect_err("a comm_d CID as comm_r_new");
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    assert!(
        e.message().contains("comm_r_new") && e.message().contains("0xf101"),
        "{}",
        e.message()
    );
    d.status().await;
    d.stop().await;
}
