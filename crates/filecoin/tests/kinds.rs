//! End to end for every proof kind at 2 KiB: plan → synthesize with our recorder → prove
//! with our CPU backend and our test parameters → filecoin-proofs' own verifier accepts the
//! bytes; a flipped byte, the wrong sector and the wrong randomness are rejected; our public
//! inputs equal the circuit's and filecoin-proofs' own.
mod common;

use std::collections::BTreeMap;

use blstrs::Scalar;
use cuzk_filecoin::{assemble, plan, ProofPlan, ProofRequest};
use cuzk_groth16::params::{read_params, ReadOptions};
use cuzk_groth16::prover::random_blinding;
use cuzk_groth16::{CpuProver, ProverBackend, RecorderMode};
use filecoin_proofs_api::{PublicReplicaInfo, RegisteredPoStProof, SectorId};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// Proves every partition of `plan`; returns the assembled bytes and each partition's
/// public inputs (checked against what the circuit itself allocated).
fn prove(mut plan: ProofPlan, seed: u64) -> (Vec<u8>, Vec<Vec<Scalar>>, ProofPlan) {
    let (dir, _) = common::data();
    let files = plan.circuit_id.param_files().unwrap();
    let opts = ReadOptions {
        check_points: false,
        ..ReadOptions::default()
    };
    let (srs, _) = read_params(&files.params_path(dir), &opts).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut proofs = Vec::new();
    let mut inputs = Vec::new();
    for job in plan.take_jobs() {
        let expected = job.public_inputs.clone();
        let s = job.run(RecorderMode::Full).unwrap();
        assert_eq!(s.inputs[0], Scalar::from(1u64));
        assert_eq!(
            &s.inputs[1..],
            &expected[..],
            "public inputs differ from the circuit's"
        );
        let (r, t) = random_blinding(&mut rng);
        proofs.push(CpuProver::new().prove(&srs, s, r, t).unwrap());
        inputs.push(expected);
    }
    (assemble(&proofs), inputs, plan)
}

fn flipped(bytes: &[u8], at: usize) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] ^= 0x01;
    b
}

fn assert_rejected(plan: &ProofPlan, bytes: &[u8]) {
    for at in [0, 100, bytes.len() - 1] {
        assert!(
            plan.verify(&flipped(bytes, at)).is_err(),
            "flip at {at} accepted"
        );
    }
}

#[test]
fn porep_c2_proof_verifies_with_filecoin_proofs() {
    common::dir();
    let (_, m) = common::data();
    let req = common::request("porep");
    let (bytes, inputs, plan) = prove(plan(&req).unwrap(), 1);
    assert_eq!(bytes.len(), 192);
    plan.verify(&bytes).unwrap();

    let rsp = cuzk_filecoin::registry::seal_from_u64(req.registered_proof()).unwrap();
    let s = &m.sector;
    let (comm_r, comm_d) = (common::b32(&s.comm_r), common::b32(&s.comm_d));
    let (ticket, seed) = (common::b32(&s.ticket), common::b32(&s.seed));
    let prover_id = req.prover_id();
    let sector = SectorId::from(req.sector_number);
    let ok = filecoin_proofs_api::seal::verify_seal(
        rsp, comm_r, comm_d, prover_id, sector, ticket, seed, &bytes,
    )
    .unwrap();
    assert!(ok, "verify_seal rejected our proof");

    // Public inputs: filecoin-proofs' own.
    let theirs = filecoin_proofs_api::seal::get_seal_inputs(
        rsp, comm_r, comm_d, prover_id, sector, ticket, seed,
    )
    .unwrap();
    assert_eq!(theirs, inputs);

    // One flipped byte, the wrong sector, the wrong seed.
    assert_rejected(&plan, &bytes);
    let wrong_sector = SectorId::from(req.sector_number + 1);
    assert!(!filecoin_proofs_api::seal::verify_seal(
        rsp,
        comm_r,
        comm_d,
        prover_id,
        wrong_sector,
        ticket,
        seed,
        &bytes
    )
    .unwrap_or(false));
    let mut other_seed = seed;
    other_seed[0] ^= 1;
    assert!(!filecoin_proofs_api::seal::verify_seal(
        rsp, comm_r, comm_d, prover_id, sector, ticket, other_seed, &bytes
    )
    .unwrap_or(false));
}

#[test]
fn ni_porep_partition_proofs_are_aggregated_and_verify_with_filecoin_proofs() {
    common::dir();
    let req = common::request("porep-ni");
    let planned = plan(&req).unwrap();
    assert_eq!(planned.partitions(), 13, "NI-PoRep 2 KiB has 13 partitions");
    let (concat, _, plan) = prove(planned, 6);
    assert_eq!(concat.len(), 13 * 192);
    // What filecoin-proofs' seal_commit_phase2 returns for NI-PoRep: the SnarkPack aggregate.
    let aggregate = plan.finish(concat.clone()).unwrap();
    assert_ne!(aggregate, concat);
    plan.verify(&aggregate).unwrap();
    // verify_seal checks NI-PoRep only as an aggregate: the bare partition proofs fail.
    assert!(plan.verify(&concat).is_err());
    for at in [0, aggregate.len() / 2] {
        assert!(
            plan.verify(&flipped(&aggregate, at)).is_err(),
            "flip at {at} accepted"
        );
    }
    // A wrong number of partition proofs is a typed error, not a panic.
    assert!(plan.finish(concat[..12 * 192].to_vec()).is_err());
}

#[test]
fn snap_deals_proof_verifies_with_filecoin_proofs() {
    common::dir();
    let req = common::request("snap");
    let (bytes, inputs, plan) = prove(plan(&req).unwrap(), 2);
    plan.verify(&bytes).unwrap();
    let up = cuzk_filecoin::registry::update_from_u64(req.registered_proof()).unwrap();
    let (old, new, d) = (
        common::b32(&hex::encode(&req.comm_r_old)),
        common::b32(&hex::encode(&req.comm_r_new)),
        common::b32(&hex::encode(&req.comm_d_new)),
    );
    assert!(
        filecoin_proofs_api::update::verify_empty_sector_update_proof(up, &bytes, old, new, d)
            .unwrap()
    );
    let theirs = filecoin_proofs::get_sector_update_inputs::<filecoin_proofs::SectorShape2KiB>(
        &up.as_v1_config(),
        old,
        new,
        d,
    )
    .unwrap();
    assert_eq!(theirs, inputs);

    assert_rejected(&plan, &bytes);
    // The proof of another sector: other commitments.
    let mut other = new;
    other[0] ^= 1;
    assert!(
        !filecoin_proofs_api::update::verify_empty_sector_update_proof(up, &bytes, old, other, d)
            .unwrap_or(false)
    );
}

fn replicas(
    req: &ProofRequest,
    post: RegisteredPoStProof,
) -> BTreeMap<SectorId, PublicReplicaInfo> {
    let (_, m) = common::data();
    let mut map = BTreeMap::new();
    map.insert(
        SectorId::from(req.sector_number),
        PublicReplicaInfo::new(post, common::b32(&m.sector.comm_r)),
    );
    map
}

#[test]
fn winning_post_proof_verifies_with_filecoin_proofs() {
    common::dir();
    let req = common::request("winning");
    let (bytes, _, plan) = prove(plan(&req).unwrap(), 3);
    plan.verify(&bytes).unwrap();
    let post = cuzk_filecoin::registry::post_from_u64(req.registered_proof()).unwrap();
    let rand = common::b32(&hex::encode(&req.randomness));
    let reps = replicas(&req, post);
    let prover_id = req.prover_id();
    assert!(
        filecoin_proofs_api::post::verify_winning_post(&rand, &bytes, &reps, prover_id).unwrap()
    );

    assert_rejected(&plan, &bytes);
    let mut other = rand;
    other[0] ^= 1;
    assert!(
        !filecoin_proofs_api::post::verify_winning_post(&other, &bytes, &reps, prover_id)
            .unwrap_or(false)
    );
    let mut wrong = req.clone();
    wrong.sector_number += 1;
    let wrong_reps = replicas(&wrong, post);
    assert!(
        !filecoin_proofs_api::post::verify_winning_post(&rand, &bytes, &wrong_reps, prover_id)
            .unwrap_or(false)
    );
}

#[test]
fn window_post_partition_proof_verifies_with_filecoin_proofs() {
    common::dir();
    let req = common::request("wpost");
    let (bytes, _, plan) = prove(plan(&req).unwrap(), 4);
    plan.verify(&bytes).unwrap();
    let post = cuzk_filecoin::registry::post_from_u64(req.registered_proof()).unwrap();
    assert_eq!(post, RegisteredPoStProof::StackedDrgWindow2KiBV1_2);
    let rand = common::b32(&hex::encode(&req.randomness));
    let reps = replicas(&req, post);
    let prover_id = req.prover_id();
    let proofs = [(post, &bytes[..])];
    assert!(
        filecoin_proofs_api::post::verify_window_post(&rand, &proofs, &reps, prover_id).unwrap()
    );

    assert_rejected(&plan, &bytes);
    let mut other = rand;
    other[0] ^= 1;
    assert!(
        !filecoin_proofs_api::post::verify_window_post(&other, &proofs, &reps, prover_id)
            .unwrap_or(false)
    );
    let mut wrong = req.clone();
    wrong.sector_number += 1;
    assert!(!filecoin_proofs_api::post::verify_window_post(
        &rand,
        &proofs,
        &replicas(&wrong, post),
        prover_id
    )
    .unwrap_or(false));
}

#[test]
fn window_post_partition_index_matters_only_before_v1_2() {
    // WindowPoSt V1 derives a sector's challenges from its position in the whole deadline
    // (`partition_index * sectors_per_partition + i`); V1_2 (Go-side V1_1) from the sector
    // alone. Our vanilla proof answers the challenges of position 0.
    common::dir();
    let plan_for = |registered_proof: u64, partition_index: u32| {
        let mut req = common::request("wpost")
            .with_header(2048, registered_proof)
            .unwrap();
        req.partition_index = partition_index;
        plan(&req)
    };
    let inputs = |p: cuzk_filecoin::Result<ProofPlan>| p.unwrap().take_jobs().remove(0);
    let (a, b) = (inputs(plan_for(10, 0)), inputs(plan_for(10, 1)));
    assert_eq!((a.circuit_partition, b.circuit_partition), (0, 1));
    assert_eq!(a.public_inputs, b.public_inputs);
    // V1 at position 0 asks the same challenges, so the proof fits ...
    assert_eq!(inputs(plan_for(5, 0)).public_inputs, a.public_inputs);
    // ... but not as partition 1: the vanilla check names the mismatch.
    let e = plan_for(5, 1).unwrap_err();
    assert!(
        matches!(
            e,
            cuzk_filecoin::FilecoinError::Filecoin {
                context: "vanilla_proofs (WindowPoSt)",
                ..
            }
        ),
        "{e}"
    );
}
