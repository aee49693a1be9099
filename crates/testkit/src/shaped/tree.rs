//! Merkle inclusion paths of a tree's real shape (arity per level, sibling counts): random
//! paths for the timing-only trees whose roots nobody checks (PoRep, SnapDeals); trees whose
//! paths really hash to one root are `crate::sparse`'s `LazyTree` (PoSt, whose vanilla proofs
//! the planner verifies, and every synthetic-sector request).
use filecoin_hashers::sha256::Sha256Domain;
use filecoin_hashers::Domain;
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use storage_proofs_core::merkle::{base_path_length, MerkleProof, MerkleTreeTrait};
use typenum::Unsigned;

/// An inclusion proof in a tree of `Tree`'s shape (PoRep's trees C and R).
pub(crate) type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// One path element: the siblings (arity − 1 of them) and the position of the node itself.
pub(crate) type PathStep<D> = (Vec<D>, usize);

/// The arity of each level of a tree, bottom up, and its number of leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Arity of the parent of each level (the base arity, then the sub- and top-tree arities).
    pub arities: Vec<usize>,
    /// Leaves (sector nodes).
    pub leaves: usize,
}

impl Shape {
    /// The shape of `Tree` over `leaves` leaves: base levels of `Tree::Arity`, then one level
    /// of each non-zero sub- and top-tree arity (what `MerkleProof::from_parts` expects).
    pub fn of<Tree: MerkleTreeTrait>(leaves: usize) -> Shape {
        let base = Tree::Arity::to_usize();
        let sub = Tree::SubTreeArity::to_usize();
        let top = Tree::TopTreeArity::to_usize();
        let base_len =
            base_path_length::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(leaves);
        let mut arities = vec![base; base_len];
        arities.extend([sub, top].into_iter().filter(|&a| a > 0));
        Shape { arities, leaves }
    }

    /// A binary tree over `leaves` leaves (tree D: SHA-256, arity 2).
    pub fn binary(leaves: usize) -> Shape {
        Shape {
            arities: vec![2; leaves.trailing_zeros() as usize],
            leaves,
        }
    }

    /// Path length.
    pub fn height(&self) -> usize {
        self.arities.len()
    }

    /// The position of `leaf`'s ancestor within its parent's children at each level.
    pub fn indices(&self, leaf: usize) -> Vec<usize> {
        let mut rest = leaf;
        self.arities
            .iter()
            .map(|&a| {
                let i = rest % a;
                rest /= a;
                i
            })
            .collect()
    }

    /// A path to `leaf` with the right positions and random (Poseidon) siblings.
    pub fn random_path<D: Domain>(&self, leaf: usize, rng: &mut ChaCha8Rng) -> Vec<PathStep<D>> {
        self.path_drawn(leaf, rng, D::random)
    }

    /// A path to `leaf` in a SHA-256 tree (tree D): siblings as [`sha_node`] draws them.
    pub fn sha_path(&self, leaf: usize, rng: &mut ChaCha8Rng) -> Vec<PathStep<Sha256Domain>> {
        self.path_drawn(leaf, rng, sha_node)
    }

    fn path_drawn<D>(
        &self,
        leaf: usize,
        rng: &mut ChaCha8Rng,
        draw: impl Fn(&mut ChaCha8Rng) -> D,
    ) -> Vec<PathStep<D>> {
        self.arities
            .iter()
            .zip(self.indices(leaf))
            .map(|(&a, i)| ((1..a).map(|_| draw(rng)).collect(), i))
            .collect()
    }
}

/// A random SHA-256 tree node: 32 random bytes with the top two bits cleared, as the
/// Filecoin SHA-256 hasher truncates digests into the field (data leaves are fr32-padded the
/// same way).
pub(crate) fn sha_node(rng: &mut ChaCha8Rng) -> Sha256Domain {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b[31] &= 0x3f;
    Sha256Domain::from(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_proofs::SectorShape32GiB;
    use rand_core::SeedableRng;
    use storage_proofs_core::merkle::MerkleProofTrait;

    type Tree = SectorShape32GiB;
    type Proof = TreeProof<Tree>;

    #[test]
    fn shapes_of_32gib_trees() {
        let nodes = 1 << 30;
        let r = Shape::of::<Tree>(nodes);
        assert_eq!(r.arities, [vec![8; 9], vec![8]].concat());
        assert_eq!(Shape::binary(nodes).height(), 30);
        let leaf = 0x2345_6789 % nodes;
        let ix = r.indices(leaf);
        let back = ix.iter().rev().fold(0, |acc, &i| acc * 8 + i);
        assert_eq!(back, leaf);
    }

    #[test]
    fn a_random_path_has_its_leaf_s_positions_and_no_root() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let leaf = 12_345_678;
        let path = Shape::of::<Tree>(1 << 30).random_path(leaf, &mut rng);
        let p = Proof::from_parts(Domain::random(&mut rng), Domain::random(&mut rng), path);
        assert_eq!(p.path_index(), leaf);
        assert!(!p.verify());
    }
}
