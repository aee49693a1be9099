//! WinningPoSt and WindowPoSt: decodes the per-sector vanilla proofs, checks sector and
//! challenge counts, and plans the single `FallbackPoStCircuit` of the request; verification
//! goes through filecoin-proofs' `verify_winning_post` / `verify_window_post` (or, for a
//! WindowPoSt partition other than the first, the circuit's verifying key).
use std::collections::{BTreeMap, BTreeSet};

use blstrs::Scalar as Fr;
use filecoin_hashers::Hasher;
use filecoin_proofs::{
    as_safe_commitment, commitment_from_fr, parameters::window_post_public_params,
    parameters::winning_post_public_params, partition_vanilla_proofs,
    single_partition_vanilla_proofs, FallbackPoStSectorProof, MerkleTreeTrait, PoStConfig,
    PublicReplicaInfo, VanillaProof,
};
use filecoin_proofs_api::RegisteredPoStProof;
use sha2::{Digest, Sha256};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

mod witness;

use crate::error::{FilecoinError, Result};
use crate::partition::{MemoryEstimate, PartitionJob, ProofPlan, Synthesis, VerifyFn};
use crate::registry::{CircuitId, CircuitKind, ProofKind, RegisteredProof};
use crate::request::{bytes32, check_domain, check_scalar, ProofRequest};

/// The miner actor's `MaxPartitionsPerDeadline`: a larger `partition_index` cannot be real.
const MAX_PARTITIONS_PER_DEADLINE: usize = 3000;

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type Compound<Tree> = FallbackPoStCompound<Tree>;
type Scheme<Tree> = FallbackPoSt<'static, Tree>;

struct Shared<Tree: 'static + MerkleTreeTrait> {
    pub_in: fallback::PublicInputs<Domain<Tree>>,
    pp: fallback::PublicParams,
    partition_proof: VanillaProof<Tree>,
}

/// What both PoSt kinds decode first.
struct Decoded {
    post: RegisteredPoStProof,
    randomness: [u8; 32],
    prover_id: [u8; 32],
}

fn decode_common(req: &ProofRequest) -> Result<(Decoded, crate::registry::SectorSize)> {
    let (rp, size) = (req.registered(), req.sector_size());
    let RegisteredProof::PoSt(post) = rp else {
        return Err(FilecoinError::Filecoin {
            context: "decoding registered_proof",
            message: "not a PoSt proof".into(),
        });
    };
    let randomness = bytes32("randomness", &req.randomness)?;
    check_scalar("randomness", &randomness, false)?;
    if req.vanilla_proofs.is_empty() {
        return Err(FilecoinError::WrongCount {
            field: "vanilla_proofs".into(),
            expected: "at least 1 (one per sector)".into(),
            got: 0,
        });
    }
    Ok((
        Decoded {
            post,
            randomness,
            prover_id: req.prover_id(),
        },
        size,
    ))
}

/// Decodes and shape-checks the per-sector vanilla proofs.
fn decode_sectors<Tree: 'static + MerkleTreeTrait>(
    req: &ProofRequest,
    challenge_count: usize,
) -> Result<Vec<FallbackPoStSectorProof<Tree>>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(req.vanilla_proofs.len());
    for (i, bytes) in req.vanilla_proofs.iter().enumerate() {
        let p: FallbackPoStSectorProof<Tree> =
            bincode::deserialize(bytes).map_err(|source| FilecoinError::VanillaDecode {
                field: "vanilla_proofs",
                index: i,
                source,
            })?;
        if p.vanilla_proof.sectors.len() != 1 {
            return Err(FilecoinError::WrongCount {
                field: format!("vanilla_proofs[{i}].vanilla_proof.sectors"),
                expected: "1".into(),
                got: p.vanilla_proof.sectors.len(),
            });
        }
        let inclusion = p.vanilla_proof.sectors[0].inclusion_proofs().len();
        if inclusion != challenge_count {
            return Err(FilecoinError::WrongCount {
                field: format!("vanilla_proofs[{i}].vanilla_proof.sectors[0].inclusion_proofs"),
                expected: format!("{challenge_count} (challenges per sector)"),
                got: inclusion,
            });
        }
        check_domain("vanilla_proofs[].comm_r", &p.comm_r, true)?;
        if !seen.insert(u64::from(p.sector_id)) {
            return Err(FilecoinError::InvalidValue {
                field: "vanilla_proofs",
                reason: format!("sector {} appears twice", u64::from(p.sector_id)),
            });
        }
        out.push(p);
    }
    Ok(out)
}

fn safe_domains<Tree: 'static + MerkleTreeTrait>(
    d: &Decoded,
) -> Result<(Domain<Tree>, Domain<Tree>)> {
    let randomness = as_safe_commitment(&d.randomness, "randomness")
        .map_err(|e| FilecoinError::filecoin("randomness", e))?;
    let prover_id = as_safe_commitment(&d.prover_id, "prover_id")
        .map_err(|e| FilecoinError::filecoin("miner_id", e))?;
    Ok((randomness, prover_id))
}

fn comm_r_bytes<Tree: 'static + MerkleTreeTrait>(p: &FallbackPoStSectorProof<Tree>) -> [u8; 32] {
    commitment_from_fr(p.comm_r.into())
}

fn build<Tree: 'static + MerkleTreeTrait>(
    shared: &Shared<Tree>,
) -> Result<FallbackPoStCircuit<Tree>> {
    // `pub_in` holds only this partition's sectors, so they are chunk 0 whatever the
    // partition's place in the deadline (the circuit itself does not depend on it: the
    // place only enters the challenges, which are public inputs).
    <Compound<Tree> as CompoundProof<Scheme<Tree>, FallbackPoStCircuit<Tree>>>::circuit(
        &shared.pub_in,
        Default::default(),
        &shared.partition_proof,
        &shared.pp,
        Some(0),
    )
    .map_err(|e| FilecoinError::filecoin("building the PoSt circuit", e))
}

/// The public inputs of partition `k` of a PoSt, from that partition's own sectors
/// (`pub_in.sectors`, at most `pp.sector_count` of them).
///
/// filecoin-proofs' `FallbackPoStCompound::generate_public_inputs` takes the sectors of the
/// whole deadline and picks chunk `k`; the earlier chunks only shift each sector's index to
/// `k * sector_count + i`, which (before API 1.2) selects its challenges. Padding a request
/// with `k * sector_count` placeholder sectors to call it costs ~270 MiB at partition 2999
/// outside any budget, so this computes the same values from the partition's sectors: per
/// sector its `comm_r`, then one challenged leaf per challenge, and a short last partition
/// repeats its last sector's inputs up to `sector_count`. The test below checks it against
/// the library on padded inputs.
fn partition_public_inputs<Tree: 'static + MerkleTreeTrait>(
    pub_in: &fallback::PublicInputs<Domain<Tree>>,
    pp: &fallback::PublicParams,
    k: usize,
) -> Result<Vec<Fr>> {
    let sectors = &pub_in.sectors;
    if sectors.is_empty() || sectors.len() > pp.sector_count {
        return Err(FilecoinError::WrongCount {
            field: "vanilla_proofs".into(),
            expected: format!("1 to {} (sectors per partition)", pp.sector_count),
            got: sectors.len(),
        });
    }
    let per_sector = 1 + pp.challenge_count;
    let mut inputs = Vec::with_capacity(pp.sector_count * per_sector);
    for (i, sector) in sectors.iter().enumerate() {
        inputs.push(sector.comm_r.into());
        let mut seed = Sha256::new();
        seed.update(AsRef::<[u8]>::as_ref(&pub_in.randomness));
        seed.update(u64::from(sector.id).to_le_bytes());
        let sector_index = k * pp.sector_count + i;
        for n in 0..pp.challenge_count {
            let challenge =
                fallback::get_challenge_index(pp.api_version, sector_index, pp.challenge_count, n);
            let leaf = fallback::generate_leaf_challenge_inner::<Domain<Tree>>(
                seed.clone(),
                pp,
                challenge,
            );
            inputs.push(Fr::from(leaf));
        }
    }
    let last = inputs[inputs.len() - per_sector..].to_vec();
    for _ in sectors.len()..pp.sector_count {
        inputs.extend_from_slice(&last);
    }
    Ok(inputs)
}

/// Builds the single job of a PoSt plan.
fn job<Tree: 'static + MerkleTreeTrait, S: Synthesis>(
    circuit_id: CircuitId,
    circuit_partition: usize,
    shared: Shared<Tree>,
) -> Result<PartitionJob<S::Work>> {
    let estimate = MemoryEstimate::for_circuit(circuit_id);
    let public_inputs =
        partition_public_inputs::<Tree>(&shared.pub_in, &shared.pp, circuit_partition)?;
    let shared = std::sync::Arc::new(shared);
    let (for_build, for_witness) = (std::sync::Arc::clone(&shared), shared);
    let witness = move |recorder| {
        witness::witness(&for_witness, recorder, estimate.aux, estimate.exact).map_err(|e| {
            FilecoinError::Synthesis {
                partition: 0,
                message: format!("native PoSt witness: {e}"),
            }
        })
    };
    Ok(PartitionJob {
        circuit_id,
        partition: 0,
        circuit_partition,
        public_inputs,
        estimate,
        synthesize: S::work_with_witness(0, estimate, move || build(&for_build), witness),
    })
}

/// Plans a WinningPoSt request.
pub(crate) fn plan_winning<S: Synthesis>(req: &ProofRequest) -> Result<ProofPlan<S::Work>> {
    let (d, size) = decode_common(req)?;
    crate::with_tree!(size, plan_winning_tree<S>(req, d))
}

fn plan_winning_tree<Tree: 'static + MerkleTreeTrait, S: Synthesis>(
    req: &ProofRequest,
    d: Decoded,
) -> Result<ProofPlan<S::Work>> {
    let config: PoStConfig = d.post.as_v1_config();
    if req.vanilla_proofs.len() != config.sector_count {
        return Err(FilecoinError::WrongCount {
            field: "vanilla_proofs".into(),
            expected: format!("{} (sectors per WinningPoSt)", config.sector_count),
            got: req.vanilla_proofs.len(),
        });
    }
    let vanilla = decode_sectors::<Tree>(req, config.challenge_count / config.sector_count)?;
    let (randomness, prover_id) = safe_domains::<Tree>(&d)?;
    let pp = winning_post_public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("WinningPoSt public parameters", e))?;

    let sectors: Vec<PublicSector<Domain<Tree>>> = vanilla
        .iter()
        .map(|p| PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
        .collect();
    let prover_inputs = fallback::PublicInputs {
        randomness,
        prover_id,
        sectors: sectors.clone(),
        k: None,
    };
    let mut partitioned = partition_vanilla_proofs(&config, &pp, &prover_inputs, 1, &vanilla)
        .map_err(|e| FilecoinError::filecoin("vanilla_proofs (WinningPoSt)", e))?;
    let partition_proof = partitioned.pop().ok_or_else(|| FilecoinError::Filecoin {
        context: "vanilla_proofs (WinningPoSt)",
        message: "no partition proof".into(),
    })?;
    // The verifier lists the sector once per circuit "sector" slot; so do we, so the public
    // inputs are exactly those `verify_winning_post` checks against.
    let verifier_sectors: Vec<_> = (0..pp.sector_count)
        .flat_map(|_| sectors.iter().cloned())
        .collect();
    let pub_in = fallback::PublicInputs {
        randomness,
        prover_id,
        sectors: verifier_sectors,
        k: None,
    };
    let circuit_id = CircuitId::new(
        CircuitKind::WinningPost,
        RegisteredProof::PoSt(d.post).sector_size(),
    );
    let job = job::<Tree, S>(
        circuit_id,
        0,
        Shared {
            pub_in,
            pp,
            partition_proof,
        },
    )?;

    let replicas: Vec<(SectorId, [u8; 32])> = vanilla
        .iter()
        .map(|p| (p.sector_id, comm_r_bytes(p)))
        .collect();
    let Decoded {
        post,
        randomness: rand_bytes,
        prover_id: prover_bytes,
    } = d;
    let verifier: VerifyFn = Box::new(move |proof: &[u8]| {
        crate::partition::check_proof_len(proof, 1)?;
        let reps = replicas
            .iter()
            .map(|(id, comm_r)| {
                PublicReplicaInfo::new(*comm_r)
                    .map(|r| (*id, r))
                    .map_err(|e| FilecoinError::filecoin("comm_r", e))
            })
            .collect::<Result<Vec<_>>>()?;
        crate::partition::verdict(
            "verify_winning_post",
            filecoin_proofs::verify_winning_post::<Tree>(
                &post.as_v1_config(),
                &rand_bytes,
                &reps,
                prover_bytes,
                proof,
            ),
        )
    });
    Ok(ProofPlan {
        kind: ProofKind::WinningPost,
        registered_proof: RegisteredProof::PoSt(post),
        circuit_id,
        jobs: vec![job],
        verifier,
        finisher: None,
    })
}

/// Plans one WindowPoSt partition.
pub(crate) fn plan_window<S: Synthesis>(req: &ProofRequest) -> Result<ProofPlan<S::Work>> {
    let (d, size) = decode_common(req)?;
    crate::with_tree!(size, plan_window_tree<S>(req, d))
}

fn plan_window_tree<Tree: 'static + MerkleTreeTrait, S: Synthesis>(
    req: &ProofRequest,
    d: Decoded,
) -> Result<ProofPlan<S::Work>> {
    let config: PoStConfig = d.post.as_v1_config();
    let per_partition = config.sector_count;
    if req.vanilla_proofs.len() > per_partition {
        return Err(FilecoinError::WrongCount {
            field: "vanilla_proofs".into(),
            expected: format!("1 to {per_partition} (sectors per WindowPoSt partition)"),
            got: req.vanilla_proofs.len(),
        });
    }
    let vanilla = decode_sectors::<Tree>(req, config.challenge_count)?;
    let (randomness, prover_id) = safe_domains::<Tree>(&d)?;
    let pp = window_post_public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("WindowPoSt public parameters", e))?;
    let k = req.partition_index as usize;
    if k >= MAX_PARTITIONS_PER_DEADLINE {
        return Err(FilecoinError::InvalidValue {
            field: "partition_index",
            reason: format!(
                "{k} is beyond the {MAX_PARTITIONS_PER_DEADLINE} partitions a deadline can hold"
            ),
        });
    }

    let sectors: Vec<PublicSector<Domain<Tree>>> = vanilla
        .iter()
        .map(|p| PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
        .collect();
    let single = fallback::PublicInputs {
        randomness,
        prover_id,
        sectors,
        k: Some(k),
    };
    let partition_proof = single_partition_vanilla_proofs(&config, &pp, &single, &vanilla)
        .map_err(|e| FilecoinError::filecoin("vanilla_proofs (WindowPoSt)", e))?;
    let sectors = single.sectors;
    // Only this partition's sectors: `partition_public_inputs` places them at `k`.
    let pub_in = fallback::PublicInputs {
        randomness,
        prover_id,
        sectors,
        k: None,
    };
    let circuit_id = CircuitId::new(
        CircuitKind::WindowPost,
        RegisteredProof::PoSt(d.post).sector_size(),
    );
    let vk_pp = pp.clone();
    let job = job::<Tree, S>(
        circuit_id,
        k,
        Shared {
            pub_in,
            pp,
            partition_proof,
        },
    )?;

    let sorted = vanilla
        .windows(2)
        .all(|w| u64::from(w[0].sector_id) < u64::from(w[1].sector_id));
    let verifier: VerifyFn = if k == 0 && sorted {
        let replicas: Vec<(SectorId, [u8; 32])> = vanilla
            .iter()
            .map(|p| (p.sector_id, comm_r_bytes(p)))
            .collect();
        let Decoded {
            post,
            randomness: rand_bytes,
            prover_id: prover_bytes,
        } = d;
        Box::new(move |proof: &[u8]| {
            crate::partition::check_proof_len(proof, 1)?;
            let mut reps = BTreeMap::new();
            for (id, comm_r) in &replicas {
                let r = PublicReplicaInfo::new(*comm_r)
                    .map_err(|e| FilecoinError::filecoin("comm_r", e))?;
                reps.insert(*id, r);
            }
            crate::partition::verdict(
                "verify_window_post",
                filecoin_proofs::verify_window_post::<Tree>(
                    &post.as_v1_config(),
                    &rand_bytes,
                    &reps,
                    prover_bytes,
                    proof,
                ),
            )
        })
    } else {
        // `verify_window_post` takes a whole deadline; for one later partition check the
        // proof against the partition's public inputs with the circuit's verifying key.
        let inputs = vec![job.public_inputs.clone()];
        Box::new(move |proof: &[u8]| {
            let vk = <Compound<Tree> as CompoundProof<Scheme<Tree>, FallbackPoStCircuit<Tree>>>::verifying_key::<
                rand::rngs::OsRng,
            >(None, &vk_pp)
            .map_err(|e| FilecoinError::filecoin("loading the WindowPoSt verifying key", e))?;
            crate::partition::verify_with_vk("WindowPoSt partition proof", &vk, &inputs, proof)
        })
    };
    Ok(ProofPlan {
        kind: ProofKind::WindowPostPartition,
        registered_proof: RegisteredProof::PoSt(d.post),
        circuit_id,
        jobs: vec![job],
        verifier,
        finisher: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_proofs::SectorShape2KiB;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use storage_proofs_core::api_version::ApiVersion;

    type Tree = SectorShape2KiB;

    /// Our partition-local public inputs equal the library's on a deadline padded with the
    /// earlier partitions' sectors, for full and short partitions at several places.
    #[test]
    fn partition_public_inputs_match_the_library_on_a_padded_deadline() {
        let post = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
        let config = post.as_v1_config();
        let pp = window_post_public_params::<Tree>(&config).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let sector = |rng: &mut ChaCha8Rng| PublicSector::<Domain<Tree>> {
            id: SectorId::from(rng.gen::<u64>()),
            comm_r: Fr::from(rng.gen::<u64>()).into(),
        };
        let randomness: Domain<Tree> = Fr::from(rng.gen::<u64>()).into();
        let prover_id: Domain<Tree> = Fr::from(rng.gen::<u64>()).into();
        for api in [ApiVersion::V1_1_0, ApiVersion::V1_2_0] {
            let pp = fallback::PublicParams {
                api_version: api,
                ..pp.clone()
            };
            for k in [0usize, 1, 3] {
                for own in 1..=pp.sector_count {
                    let mine: Vec<_> = (0..own).map(|_| sector(&mut rng)).collect();
                    let mut deadline: Vec<_> =
                        (0..k * pp.sector_count).map(|_| sector(&mut rng)).collect();
                    deadline.extend(mine.iter().cloned());
                    let library = <Compound<Tree> as CompoundProof<
                        Scheme<Tree>,
                        FallbackPoStCircuit<Tree>,
                    >>::generate_public_inputs(
                        &fallback::PublicInputs {
                            randomness,
                            prover_id,
                            sectors: deadline,
                            k: None,
                        },
                        &pp,
                        Some(k),
                    )
                    .unwrap();
                    let ours = partition_public_inputs::<Tree>(
                        &fallback::PublicInputs {
                            randomness,
                            prover_id,
                            sectors: mine,
                            k: None,
                        },
                        &pp,
                        k,
                    )
                    .unwrap();
                    assert_eq!(ours, library, "api {api:?}, partition {k}, {own} sectors");
                }
            }
        }
    }
}
