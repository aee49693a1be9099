//! PoRep commit phase 2: decodes the C1 envelope, checks it against the request, and plans
//! one `StackedCircuit` per partition; verification goes through filecoin-proofs' `verify_seal`.
use std::sync::Arc;

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::{
    as_safe_commitment, parameters::public_params, DefaultPieceDomain, DefaultPieceHasher,
    MerkleTreeTrait, PoRepConfig, VanillaSealProof,
};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCompound, StackedDrg};

use crate::error::{FilecoinError, Result};
use crate::partition::{FinishFn, MemoryEstimate, PartitionJob, ProofPlan, Synthesis, VerifyFn};
use crate::porep_witness::Pieces;
use crate::registry::{CircuitId, CircuitKind, RegisteredProof, SectorSize};
use crate::request::{check_domain, check_scalar, C1Input, ProofRequest};

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
type Scheme<Tree> = StackedDrg<'static, Tree, DefaultPieceHasher>;
type PubInputs<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    DefaultPieceDomain,
>;

/// Everything the partition closures share (read-only).
struct Shared<Tree: 'static + MerkleTreeTrait> {
    pub_in: PubInputs<Tree>,
    pp: stacked::PublicParams<Tree>,
    vanilla: Vec<Vec<VanillaSealProof<Tree>>>,
}

fn build<Tree: 'static + MerkleTreeTrait>(
    shared: &Shared<Tree>,
    k: usize,
) -> Result<stacked::StackedCircuit<Tree, DefaultPieceHasher>> {
    <Compound<Tree> as CompoundProof<Scheme<Tree>, _>>::circuit(
        &shared.pub_in,
        (),
        &shared.vanilla[k],
        &shared.pp,
        Some(k),
    )
    .map_err(|e| FilecoinError::filecoin("building the PoRep circuit", e))
}

/// Plans a PoRep C2 request.
pub(crate) fn plan<S: Synthesis>(req: &ProofRequest) -> Result<ProofPlan<S::Work>> {
    let (rp, size) = (req.registered(), req.sector_size());
    let RegisteredProof::Seal(seal) = rp else {
        return unreachable_kind();
    };
    let (sector_number, phase1) = phase1_output(req, size)?;
    if phase1.registered_proof != seal {
        return Err(FilecoinError::Mismatch {
            field: "vanilla_proof.Phase1Out.registered_proof",
            expected: format!("{seal:?} (registered_proof {})", req.registered_proof()),
            got: format!("{:?}", phase1.registered_proof),
        });
    }
    let prover_id = req.prover_id();
    crate::with_tree!(
        size,
        plan_tree<S>(req, seal, phase1, sector_number, prover_id)
    )
}

/// The sector number and the C1 output of a PoRep request, from either form of
/// `vanilla_proof` ([`C1Input`]). The envelope's size and sector number must agree with the
/// request's (a request's sector number of 0 takes the envelope's); a bare C1 output carries
/// neither, so the request's are used.
fn phase1_output(req: &ProofRequest, size: SectorSize) -> Result<(u64, SealCommitPhase1Output)> {
    let env = match C1Input::parse(&req.vanilla_proof)? {
        C1Input::Bare(json) => {
            let phase1 = serde_json::from_slice(json).map_err(FilecoinError::BareC1Json)?;
            return Ok((req.sector_number, phase1));
        }
        C1Input::Envelope(env) => env,
    };
    if env.sector_size != size.bytes() {
        return Err(FilecoinError::Mismatch {
            field: "vanilla_proof.SectorSize",
            expected: size.bytes().to_string(),
            got: env.sector_size.to_string(),
        });
    }
    let sector_number = if req.sector_number == 0 {
        env.sector_num
    } else if env.sector_num != req.sector_number {
        return Err(FilecoinError::Mismatch {
            field: "vanilla_proof.SectorNum",
            expected: req.sector_number.to_string(),
            got: env.sector_num.to_string(),
        });
    } else {
        req.sector_number
    };
    let bytes = env.phase1_bytes()?;
    let phase1 = serde_json::from_slice(&bytes).map_err(FilecoinError::Phase1Json)?;
    Ok((sector_number, phase1))
}

fn unreachable_kind<T>() -> Result<T> {
    Err(FilecoinError::Filecoin {
        context: "decoding registered_proof",
        message: "not a seal proof".into(),
    })
}

fn plan_tree<Tree: 'static + MerkleTreeTrait, S: Synthesis>(
    req: &ProofRequest,
    seal: RegisteredSealProof,
    phase1: SealCommitPhase1Output,
    sector_number: u64,
    prover_id: [u8; 32],
) -> Result<ProofPlan<S::Work>> {
    let config: PoRepConfig = seal.as_v1_config();
    let partitions = usize::from(config.partitions);
    let SealCommitPhase1Output {
        vanilla_proofs,
        comm_r,
        comm_d,
        replica_id,
        seed,
        ticket,
        ..
    } = phase1;

    check_scalar("vanilla_proof.Phase1Out.comm_r", &comm_r, true)?;
    check_scalar("vanilla_proof.Phase1Out.comm_d", &comm_d, true)?;
    check_domain("vanilla_proof.Phase1Out.replica_id", &replica_id, false)?;
    if seed == [0u8; 32] {
        return Err(FilecoinError::InvalidValue {
            field: "vanilla_proof.Phase1Out.seed",
            reason: "must not be all zeros".into(),
        });
    }
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = vanilla_proofs
        .try_into()
        .map_err(|e| FilecoinError::filecoin("vanilla_proof.Phase1Out.vanilla_proofs", e))?;

    let pp = public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("PoRep public parameters", e))?;
    if vanilla.len() != partitions {
        return Err(FilecoinError::WrongCount {
            field: "vanilla_proof.Phase1Out.vanilla_proofs".into(),
            expected: format!("{partitions} (partitions of {seal:?})"),
            got: vanilla.len(),
        });
    }
    let challenges = pp.challenges.num_challenges_per_partition();
    for (k, p) in vanilla.iter().enumerate() {
        if p.len() != challenges {
            return Err(FilecoinError::WrongCount {
                field: format!("vanilla_proof.Phase1Out.vanilla_proofs[{k}]"),
                expected: format!("{challenges} (challenges per partition)"),
                got: p.len(),
            });
        }
    }

    let comm_r_safe: <Tree::Hasher as Hasher>::Domain = as_safe_commitment(&comm_r, "comm_r")
        .map_err(|e| FilecoinError::filecoin("vanilla_proof.Phase1Out.comm_r", e))?;
    let comm_d_safe = DefaultPieceDomain::try_from_bytes(&comm_d)
        .map_err(|e| FilecoinError::filecoin("vanilla_proof.Phase1Out.comm_d", e))?;
    let replica_fr: blstrs::Scalar = replica_id.into();
    let replica_id: <Tree::Hasher as Hasher>::Domain = replica_fr.into();
    let expected_replica = generate_replica_id::<Tree::Hasher, _>(
        &prover_id,
        sector_number,
        &ticket,
        comm_d_safe,
        &config.porep_id,
    );
    if expected_replica != replica_id {
        return Err(FilecoinError::Mismatch {
            field: "vanilla_proof.Phase1Out.replica_id",
            expected: format!(
                "the replica id of miner {} sector {} with this ticket and comm_d",
                req.miner_id, sector_number
            ),
            got: "a different replica id (wrong sector_number, miner_id or C1 output)".into(),
        });
    }

    let pub_in: PubInputs<Tree> = stacked::PublicInputs {
        replica_id,
        tau: Some(stacked::Tau {
            comm_d: comm_d_safe,
            comm_r: comm_r_safe,
        }),
        k: None,
        seed: Some(seed),
    };

    let circuit_id = CircuitId::new(
        CircuitKind::PoRep,
        RegisteredProof::Seal(seal).sector_size(),
    );
    let estimate = MemoryEstimate::for_circuit(circuit_id);
    let mut all_inputs = Vec::with_capacity(partitions);
    for k in 0..partitions {
        let inputs = <Compound<Tree> as CompoundProof<Scheme<Tree>, _>>::generate_public_inputs(
            &pub_in,
            &pp,
            Some(k),
        )
        .map_err(|e| FilecoinError::filecoin("PoRep public inputs", e))?;
        all_inputs.push(inputs);
    }

    let shared = Arc::new(Shared {
        pub_in,
        pp,
        vanilla,
    });
    let jobs = all_inputs
        .into_iter()
        .enumerate()
        .map(|(k, inputs)| {
            let (for_build, for_witness) = (Arc::clone(&shared), Arc::clone(&shared));
            let witness = move |recorder| {
                let failed = |message: String| FilecoinError::Synthesis {
                    partition: k,
                    message,
                };
                Pieces::new(&for_witness.pub_in, &for_witness.vanilla[k])
                    .map_err(failed)?
                    .witness(recorder, estimate.aux, estimate.exact)
                    .map_err(|e| failed(e.to_string()))
            };
            PartitionJob {
                circuit_id,
                partition: k,
                circuit_partition: k,
                public_inputs: inputs,
                estimate,
                synthesize: S::work_with_witness(
                    k,
                    estimate,
                    move || build(&for_build, k),
                    witness,
                ),
            }
        })
        .collect();

    let non_interactive = config.feature_enabled(ApiFeature::NonInteractivePoRep);
    // NI-PoRep: filecoin-proofs' `seal_commit_phase2` returns the SnarkPack (v2) aggregate of
    // the partition proofs, made with the aggregation SRS (`v28-fil-inner-product-v1.srs` in
    // the parameter cache), and `verify_seal` checks that aggregate.
    let finisher: Option<FinishFn> = non_interactive.then(|| {
        Box::new(move |proofs: Vec<u8>| {
            crate::partition::check_proof_len(&proofs, partitions)?;
            filecoin_proofs_api::seal::aggregate_seal_commit_proofs(
                seal,
                filecoin_proofs_api::RegisteredAggregationProof::SnarkPackV2,
                &[comm_r],
                &[seed],
                &[filecoin_proofs_api::seal::SealCommitPhase2Output { proof: proofs }],
            )
            .map_err(|e| FilecoinError::filecoin("aggregating the NI-PoRep partition proofs", e))
        }) as FinishFn
    });
    let sector_id = sector_number.into();
    let verifier: VerifyFn = Box::new(move |proof: &[u8]| {
        if !non_interactive {
            crate::partition::check_proof_len(proof, partitions)?;
        }
        crate::partition::verdict(
            "verify_seal",
            filecoin_proofs_api::seal::verify_seal(
                seal, comm_r, comm_d, prover_id, sector_id, ticket, seed, proof,
            ),
        )
    });

    Ok(ProofPlan {
        kind: req.kind(),
        registered_proof: RegisteredProof::Seal(seal),
        circuit_id,
        jobs,
        verifier,
        finisher,
    })
}
