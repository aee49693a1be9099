//! Timing-only WinningPoSt and WindowPoSt requests: one `FallbackPoStSectorProof` per sector
//! (the real sector count of a WindowPoSt partition), challenged at the leaves
//! filecoin-proofs derives from the randomness, with inclusion proofs of the real tree shape.
//! The planner verifies PoSt vanilla proofs, so these are built from a sparse tree and do
//! verify as vanilla proofs; only the SNARKs made from them cannot.
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{
    generate_fallback_sector_challenges, FallbackPoStSectorProof, MerkleTreeTrait,
};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback;

use super::random32;
use super::tree::Shape;
use crate::sparse::tree::LazyTree;
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{post_from_u64, prover_id_from_miner_id, ProofKind, SectorSize};
use cuzk_filecoin::request::ProofRequest;

/// Bytes of a tree node.
const NODE_SIZE: usize = 32;

/// The Go-side `RegisteredPoStProof` of a timing-only PoSt request: WinningPoSt `…V1`,
/// WindowPoSt `…V1_1` (filecoin-proofs-api's `…V1_2`, as Curio sends today).
pub(crate) fn registered_proof(kind: ProofKind, size: SectorSize) -> u64 {
    match kind {
        ProofKind::WinningPost => size.index(),
        _ => 10 + size.index(),
    }
}

/// A PoSt request of `kind` (`WinningPost` or `WindowPostPartition`): as many sectors as one
/// partition holds, partition 0.
pub(crate) fn request(
    kind: ProofKind,
    size: SectorSize,
    miner_id: u64,
    rng: &mut ChaCha8Rng,
) -> Result<ProofRequest> {
    cuzk_filecoin::with_tree!(size, request_tree(kind, size, miner_id, rng))
}

fn request_tree<Tree: 'static + MerkleTreeTrait>(
    kind: ProofKind,
    size: SectorSize,
    miner_id: u64,
    rng: &mut ChaCha8Rng,
) -> Result<ProofRequest> {
    let num = registered_proof(kind, size);
    let post = post_from_u64(num)?;
    let config = post.as_v1_config();
    let prover_id = prover_id_from_miner_id(miner_id);
    let randomness = random32(rng);
    // Distinct, increasing sector numbers (a deadline's partition lists them in order).
    let mut next = 1 + rng.next_u64() % 1000;
    let ids: Vec<SectorId> = (0..config.sector_count)
        .map(|_| {
            let id = SectorId::from(next);
            next += 1 + rng.next_u64() % 4;
            id
        })
        .collect();
    let challenges =
        generate_fallback_sector_challenges::<Tree>(&config, &randomness, &ids, prover_id)
            .map_err(|e| FilecoinError::filecoin("PoSt challenges", e))?;
    let shape = Shape::of::<Tree>(u64::from(config.sector_size) as usize / NODE_SIZE);
    let base_seed = rng.next_u64();
    let vanilla_proofs = ids
        .par_iter()
        .enumerate()
        .map(|(i, id)| {
            let leaves: Vec<usize> = challenges
                .get(id)
                .ok_or_else(|| FilecoinError::filecoin("PoSt challenges", "sector missing"))?
                .iter()
                .map(|&c| c as usize)
                .collect();
            // One stream per sector, so the output does not depend on the thread count.
            let mut rng = ChaCha8Rng::seed_from_u64(base_seed);
            rng.set_stream(i as u64);
            sector_proof::<Tree>(*id, &shape, &leaves, &mut rng)
        })
        .collect::<Result<Vec<_>>>()?;

    let mut req = ProofRequest::new(kind, size.bytes(), num)?;
    req.vanilla_proofs = vanilla_proofs;
    req.miner_id = miner_id;
    req.randomness = randomness.to_vec();
    Ok(req)
}

/// One sector's vanilla proof (bincode): inclusion proofs of `leaves` in a lazy tree R,
/// with `comm_r = H(comm_c, comm_r_last)`.
fn sector_proof<Tree: 'static + MerkleTreeTrait>(
    sector_id: SectorId,
    shape: &Shape,
    leaves: &[usize],
    rng: &mut ChaCha8Rng,
) -> Result<Vec<u8>> {
    // Random challenged leaves in a tree of one random leaf elsewhere.
    let mut tree = LazyTree::<Tree::Hasher>::uniform(shape.clone(), Domain::random(rng));
    for &leaf in leaves {
        tree.set(leaf, Domain::random(rng));
    }
    let comm_r_last = tree.root();
    let inclusion_proofs = leaves
        .iter()
        .map(|&leaf| {
            let (value, path) = tree.proof(leaf);
            MerkleProof::from_parts(value, comm_r_last, path)
        })
        .collect();
    let comm_c = Domain::random(rng);
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
    let proof = FallbackPoStSectorProof::<Tree> {
        sector_id,
        comm_r,
        vanilla_proof: fallback::Proof {
            sectors: vec![fallback::SectorProof {
                inclusion_proofs,
                comm_c,
                comm_r_last,
            }],
        },
    };
    bincode::serialize(&proof)
        .map_err(|e| FilecoinError::filecoin("encoding a timing-only PoSt proof", e))
}
