//! Timing-only SnapDeals partition proofs: `PartitionProof`s with the real structure (the
//! partition's challenges derived from `comm_r_new` as the prover derives them, apex leaves,
//! tree R old/new and tree D new paths of the real lengths, one partition path shared by a
//! partition's challenges) and random values, except that each new replica label is the old
//! label plus the new data times rho, which the circuit checks while it synthesizes.
use blstrs::Scalar;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{MerkleTreeTrait, SectorUpdateConfig, TreeRHasher};
use rand_chacha::ChaCha8Rng;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_update::constants::{TreeDDomain, TreeRDomain};
use storage_proofs_update::{phi, rho, ChallengeProof, Challenges, PartitionProof, PublicParams};

use super::tree::{sha_node, Shape};
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{update_from_u64, ProofKind, SectorSize};
use cuzk_filecoin::request::ProofRequest;

/// The Go-side `RegisteredUpdateProof` of the timing-only SnapDeals request.
pub(crate) fn registered_proof(size: SectorSize) -> u64 {
    size.index()
}

/// A SnapDeals request: one bincode `PartitionProof` per partition and the three
/// commitments.
pub(crate) fn request(size: SectorSize, rng: &mut ChaCha8Rng) -> Result<ProofRequest> {
    cuzk_filecoin::with_tree!(size, request_tree(size, rng))
}

fn request_tree<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    size: SectorSize,
    rng: &mut ChaCha8Rng,
) -> Result<ProofRequest> {
    let num = registered_proof(size);
    let update = update_from_u64(num)?;
    let config = SectorUpdateConfig::from_porep_config(&update.as_v1_config());
    let pp = PublicParams::from_sector_size(size.bytes());
    let nodes = pp.sector_nodes;

    let comm_c = TreeRDomain::random(rng);
    let root_r_old = TreeRDomain::random(rng);
    let root_r_new = TreeRDomain::random(rng);
    let hash2 = <TreeRHasher as Hasher>::Function::hash2;
    let comm_r_old = hash2(&comm_c, &root_r_old);
    let comm_r_new = hash2(&comm_c, &root_r_new);
    let comm_d_new = sha_node(rng);
    let phi = phi(&comm_d_new, &comm_r_old);
    let high_shift = pp.challenge_bit_len - config.h;

    let shape_r = Shape::of::<Tree>(nodes);
    let shape_d = Shape::binary(nodes);
    let partition_rows = pp.challenge_bit_len - pp.partition_bit_len;
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, size.bytes(), num)?;
    for k in 0..pp.partition_count {
        let apex_leafs = (0..pp.apex_leaf_count).map(|_| sha_node(rng)).collect();
        // The top of tree D above this partition's apex: the same for all its challenges.
        let partition_path: Vec<TreeDDomain> =
            (0..pp.partition_bit_len).map(|_| sha_node(rng)).collect();
        let challenge_proofs = Challenges::new(nodes, comm_r_new, k)
            .map(|c| {
                let label_r_old = TreeRDomain::random(rng);
                let label_d_new = sha_node(rng);
                let rho = rho(&phi, c >> high_shift);
                let old: Scalar = label_r_old.into();
                let data: Scalar = label_d_new.into();
                let label_r_new: TreeRDomain = (old + data * rho).into();
                let mut path_d = shape_d.sha_path(c as usize, rng);
                for (step, sibling) in path_d[partition_rows..].iter_mut().zip(&partition_path) {
                    step.0 = vec![*sibling];
                }
                ChallengeProof::<Tree> {
                    proof_r_old: MerkleProof::from_parts(
                        label_r_old,
                        root_r_old,
                        shape_r.random_path(c as usize, rng),
                    ),
                    proof_d_new: MerkleProof::from_parts(label_d_new, comm_d_new, path_d),
                    proof_r_new: MerkleProof::from_parts(
                        label_r_new,
                        root_r_new,
                        shape_r.random_path(c as usize, rng),
                    ),
                }
            })
            .collect();
        let proof = PartitionProof::<Tree> {
            comm_c,
            apex_leafs,
            challenge_proofs,
        };
        req.vanilla_proofs.push(
            bincode::serialize(&proof).map_err(|e| {
                FilecoinError::filecoin("encoding a timing-only SnapDeals proof", e)
            })?,
        );
    }
    req.comm_r_old = comm_r_old.into_bytes();
    req.comm_r_new = comm_r_new.into_bytes();
    req.comm_d_new = comm_d_new.into_bytes();
    Ok(req)
}
