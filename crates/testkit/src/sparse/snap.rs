//! SnapDeals partition proofs of a synthetic sparse sector that the real update circuit
//! accepts. Its challenges come from comm_r_new, so the trees cannot be made sparse around
//! them; they are uniform instead ([`LazyTree`]): every old replica leaf is `v`, every new
//! data leaf is `d` (tree D new is the tree of a sector full of `d`), and each new replica
//! leaf is `v + d·rho(high bits)`, constant on each rho block of the sector. Every subtree
//! inside one block is then one value per level, and the whole sector's trees cost a few
//! thousand hashes.
use blstrs::Scalar;
use ff::Field;
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::{MerkleTreeTrait, SectorUpdateConfig, TreeRHasher};
use rand_chacha::ChaCha8Rng;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_update::constants::{TreeDDomain, TreeRDomain};
use storage_proofs_update::{phi, rho, ChallengeProof, Challenges, PartitionProof, PublicParams};

use super::tree::LazyTree;
use super::{break_path, Fault};
use crate::shaped::snap::registered_proof;
use crate::shaped::tree::{sha_node, Shape};
use cuzk_filecoin::error::{FilecoinError, Result};
use cuzk_filecoin::registry::{update_from_u64, ProofKind, SectorSize};
use cuzk_filecoin::request::ProofRequest;

/// A SnapDeals request for a sparse sector: one bincode `PartitionProof` per partition and
/// the three commitments.
pub(super) fn request(
    size: SectorSize,
    fault: Option<Fault>,
    rng: &mut ChaCha8Rng,
) -> Result<ProofRequest> {
    cuzk_filecoin::with_tree!(size, request_tree(size, fault, rng))
}

fn request_tree<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    size: SectorSize,
    fault: Option<Fault>,
    rng: &mut ChaCha8Rng,
) -> Result<ProofRequest> {
    let num = registered_proof(size);
    let update = update_from_u64(num)?;
    let config = SectorUpdateConfig::from_porep_config(&update.as_v1_config());
    let pp = PublicParams::from_sector_size(size.bytes());
    let nodes = pp.sector_nodes;
    let hash2 = <TreeRHasher as Hasher>::Function::hash2;

    let v = Scalar::random(&mut *rng);
    let d = sha_node(rng);
    let comm_c = TreeRDomain::from(Scalar::random(&mut *rng));
    let shape_r = Shape::of::<Tree>(nodes);
    let mut tree_r_old = LazyTree::<TreeRHasher>::uniform(shape_r.clone(), v.into());
    let comm_r_old = hash2(&comm_c, &tree_r_old.root());
    let mut tree_d = LazyTree::<Sha256Hasher>::uniform(Shape::binary(nodes), d);
    let comm_d_new: TreeDDomain = tree_d.root();

    // New replica leaves: constant on each block of 2^(challenge bits − h) nodes.
    let phi = phi(&comm_d_new, &comm_r_old);
    let block_bits = pp.challenge_bit_len - config.h;
    let data: Scalar = d.into();
    let defaults: Vec<TreeRDomain> = (0..1u32 << config.h)
        .map(|high| (v + data * rho(&phi, high)).into())
        .collect();
    let mut tree_r_new = LazyTree::<TreeRHasher>::blocks(shape_r, 1 << block_bits, defaults);
    let root_r_new = tree_r_new.root();
    let comm_r_new = hash2(&comm_c, &root_r_new);
    let root_r_old = tree_r_old.root();

    // Apex leaves: tree D's nodes at the apex height; uniform, like every level of tree D.
    let apex_height = pp.challenge_bit_len - pp.partition_bit_len - pp.apex_leaf_bit_len;
    let apex_leaf = tree_d.node(apex_height, 0);
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, size.bytes(), num)?;
    for k in 0..pp.partition_count {
        let mut challenge_proofs = Vec::with_capacity(pp.challenge_count);
        for (i, c) in Challenges::new(nodes, comm_r_new, k).enumerate() {
            let c = c as usize;
            let (old, path_old) = tree_r_old.proof(c);
            let (data_leaf, path_d) = tree_d.proof(c);
            let (new, mut path_new) = tree_r_new.proof(c);
            if k == 0 && i == 0 {
                break_path(fault, &mut path_new);
            }
            challenge_proofs.push(ChallengeProof::<Tree> {
                proof_r_old: MerkleProof::from_parts(old, root_r_old, path_old),
                proof_d_new: MerkleProof::from_parts(data_leaf, comm_d_new, path_d),
                proof_r_new: MerkleProof::from_parts(new, root_r_new, path_new),
            });
        }
        let proof = PartitionProof::<Tree> {
            comm_c,
            apex_leafs: vec![apex_leaf; pp.apex_leaf_count],
            challenge_proofs,
        };
        req.vanilla_proofs.push(
            bincode::serialize(&proof)
                .map_err(|e| FilecoinError::filecoin("encoding a sparse SnapDeals proof", e))?,
        );
    }
    req.comm_r_old = comm_r_old.into_bytes();
    req.comm_r_new = comm_r_new.into_bytes();
    req.comm_d_new = comm_d_new.into_bytes();
    Ok(req)
}
