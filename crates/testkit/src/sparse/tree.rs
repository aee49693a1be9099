//! A Merkle tree over a whole sector that is computed only where a proof looks: its leaves
//! are a default value per aligned block of leaves, except for a few explicit leaves. A node
//! with no explicit leaf below it and inside one block is the root of a uniform subtree
//! (computed once per level and block); every other node is hashed from its children, and
//! only nodes on the way to the root of an explicit leaf or a block boundary ever are. So a
//! 32 GiB tree with a few thousand explicit leaves costs a few tens of thousands of hashes,
//! and its inclusion proofs hash to its root exactly as in a tree built over every leaf.
use std::collections::{HashMap, HashSet};

use filecoin_hashers::Hasher;
use storage_proofs_core::merkle::{InclusionPath, PathElement};

use crate::shaped::tree::{PathStep, Shape};

/// Hashes one node's children as the Filecoin trees do, through `InclusionPath::root` (the
/// hasher's `multi_node`, whose arity is the number of children; the path's arity type only
/// names positions, and position 0 is the same in every arity).
pub(crate) fn hash_children<H: Hasher>(children: &[H::Domain]) -> H::Domain {
    let step = PathElement::<H, typenum::U2>::from((children[1..].to_vec(), 0));
    InclusionPath::from(vec![step]).root(children[0])
}

/// A Merkle tree of [`Shape`] with leaves `default(block)` for each aligned block of
/// `block_leaves` leaves, except the explicit ones.
pub(crate) struct LazyTree<H: Hasher> {
    shape: Shape,
    /// Leaves per block of equal default leaves (a power of two).
    block_leaves: usize,
    /// Default leaf of each block.
    defaults: Vec<H::Domain>,
    /// Leaf index → explicit value.
    explicit: HashMap<usize, H::Domain>,
    /// `(level, index)` of every ancestor of an explicit leaf, the leaf included.
    ancestors: HashSet<(usize, usize)>,
    /// Leaves below a node of each level.
    span: Vec<usize>,
    /// `(level, block)` → root of that block's uniform subtree at that level.
    uniform: HashMap<(usize, usize), H::Domain>,
    /// `(level, index)` → nodes hashed from their children so far.
    memo: HashMap<(usize, usize), H::Domain>,
}

impl<H: Hasher> LazyTree<H> {
    /// A tree whose leaves are all `leaf`.
    pub fn uniform(shape: Shape, leaf: H::Domain) -> Self {
        let leaves = shape.leaves;
        Self::blocks(shape, leaves, vec![leaf])
    }

    /// A tree whose leaves are `defaults[i / block_leaves]`; `defaults` must cover every leaf.
    pub fn blocks(shape: Shape, block_leaves: usize, defaults: Vec<H::Domain>) -> Self {
        debug_assert!(block_leaves.is_power_of_two());
        debug_assert_eq!(defaults.len() * block_leaves, shape.leaves);
        let mut span = vec![1usize];
        for &a in &shape.arities {
            span.push(span.last().copied().unwrap_or(1) * a);
        }
        LazyTree {
            shape,
            block_leaves,
            defaults,
            explicit: HashMap::new(),
            ancestors: HashSet::new(),
            span,
            uniform: HashMap::new(),
            memo: HashMap::new(),
        }
    }

    /// Sets leaf `leaf` to `value`. Call before any node is read.
    pub fn set(&mut self, leaf: usize, value: H::Domain) {
        debug_assert!(self.memo.is_empty(), "leaves set after nodes were computed");
        self.explicit.insert(leaf, value);
        let mut idx = leaf;
        self.ancestors.insert((0, idx));
        for (level, &a) in self.shape.arities.iter().enumerate() {
            idx /= a;
            self.ancestors.insert((level + 1, idx));
        }
    }

    /// Root of the uniform subtree of `block` at `level`.
    fn uniform_root(&mut self, level: usize, block: usize) -> H::Domain {
        if level == 0 {
            return self.defaults[block];
        }
        if let Some(v) = self.uniform.get(&(level, block)) {
            return *v;
        }
        let child = self.uniform_root(level - 1, block);
        let v = hash_children::<H>(&vec![child; self.shape.arities[level - 1]]);
        self.uniform.insert((level, block), v);
        v
    }

    /// The node at `(level, idx)` (level 0: the leaves).
    pub fn node(&mut self, level: usize, idx: usize) -> H::Domain {
        let explicit_below = self.ancestors.contains(&(level, idx));
        if level == 0 && explicit_below {
            return self.explicit[&idx];
        }
        if !explicit_below && self.span[level] <= self.block_leaves {
            let block = idx * self.span[level] / self.block_leaves;
            return self.uniform_root(level, block);
        }
        if let Some(v) = self.memo.get(&(level, idx)) {
            return *v;
        }
        let a = self.shape.arities[level - 1];
        let children: Vec<H::Domain> = (0..a).map(|i| self.node(level - 1, idx * a + i)).collect();
        let v = hash_children::<H>(&children);
        self.memo.insert((level, idx), v);
        v
    }

    /// The root.
    pub fn root(&mut self) -> H::Domain {
        self.node(self.shape.height(), 0)
    }

    /// `(leaf value, path)` of `leaf`, in `MerkleProof::from_parts`' form.
    pub fn proof(&mut self, leaf: usize) -> (H::Domain, Vec<PathStep<H::Domain>>) {
        let value = self.node(0, leaf);
        let mut path = Vec::with_capacity(self.shape.height());
        let mut idx = leaf;
        for level in 0..self.shape.height() {
            let a = self.shape.arities[level];
            let pos = idx % a;
            let first = idx - pos;
            let siblings = (0..a)
                .filter(|&i| i != pos)
                .map(|i| self.node(level, first + i))
                .collect();
            path.push((siblings, pos));
            idx /= a;
        }
        (value, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_hashers::poseidon::{PoseidonDomain, PoseidonHasher};
    use filecoin_hashers::sha256::{Sha256Domain, Sha256Hasher};
    use filecoin_hashers::Domain;
    use filecoin_proofs::SectorShape32GiB;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;
    use storage_proofs_core::merkle::MerkleProofTrait;

    type Tree = SectorShape32GiB;
    type Proof = crate::shaped::porep::TreeProof<Tree>;

    /// Every leaf of a small tree listed: the root by plain level-by-level hashing.
    fn full_root<H: Hasher>(shape: &Shape, leaves: Vec<H::Domain>) -> H::Domain {
        let mut level = leaves;
        for &a in &shape.arities {
            level = level.chunks(a).map(hash_children::<H>).collect();
        }
        level[0]
    }

    #[test]
    fn lazy_roots_equal_the_full_tree_s_with_blocks_and_explicit_leaves() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // 8-8-2 shaped, 256 leaves: blocks of 4 leaves (inside one base node), 32 (across
        // base nodes) and the whole tree.
        let shape = Shape {
            arities: vec![8, 2, 8, 2],
            leaves: 256,
        };
        for block in [4usize, 32, 256] {
            let defaults: Vec<PoseidonDomain> = (0..256 / block)
                .map(|_| PoseidonDomain::random(&mut rng))
                .collect();
            let mut t = LazyTree::<PoseidonHasher>::blocks(shape.clone(), block, defaults.clone());
            let mut all: Vec<PoseidonDomain> = (0..256).map(|i| defaults[i / block]).collect();
            for leaf in [0usize, 5, 100, 255] {
                let v = PoseidonDomain::random(&mut rng);
                t.set(leaf, v);
                all[leaf] = v;
            }
            assert_eq!(
                t.root(),
                full_root::<PoseidonHasher>(&shape, all),
                "block {block}"
            );
        }
        let zero = Sha256Domain::default();
        let binary = Shape::binary(64);
        let mut d = LazyTree::<Sha256Hasher>::uniform(binary.clone(), zero);
        assert_eq!(d.root(), full_root::<Sha256Hasher>(&binary, vec![zero; 64]));
    }

    #[test]
    fn lazy_32gib_paths_verify_against_one_root() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let nodes = 1 << 30;
        let leaves = [5, 6, 1 << 29, (1 << 30) - 1, 12_345_678];
        let mut t = LazyTree::<PoseidonHasher>::uniform(
            Shape::of::<Tree>(nodes),
            PoseidonDomain::random(&mut rng),
        );
        for &leaf in &leaves[..3] {
            t.set(leaf, PoseidonDomain::random(&mut rng));
        }
        let root = t.root();
        for &leaf in &leaves {
            let (value, path) = t.proof(leaf);
            let p = Proof::from_parts(value, root, path);
            assert!(p.validate(leaf), "leaf {leaf}");
            assert_eq!(p.root(), root);
        }
    }
}
