//! Merkle inclusion paths of a tree's real shape (arity per level, sibling counts) for the
//! timing-only requests: random paths for trees whose roots nobody checks (PoRep, SnapDeals),
//! and a sparse tree whose paths really hash to one root (PoSt, whose vanilla proofs the
//! planner verifies).
use std::collections::{HashMap, HashSet};

use filecoin_hashers::sha256::Sha256Domain;
use filecoin_hashers::{Domain, Hasher};
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use storage_proofs_core::merkle::{base_path_length, InclusionPath, MerkleTreeTrait, PathElement};
use typenum::Unsigned;

/// One path element: the siblings (arity − 1 of them) and the position of the node itself.
pub(crate) type PathStep<D> = (Vec<D>, usize);

/// A node of `Tree`.
type Node<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

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

/// Hashes one node's children the way the tree (and `InclusionPath::root`) does.
fn hash_children<Tree: MerkleTreeTrait>(children: &[Node<Tree>]) -> Node<Tree> {
    let step = PathElement::<Tree::Hasher, Tree::Arity>::from((children[1..].to_vec(), 0));
    InclusionPath::from(vec![step]).root(children[0])
}

/// A tree of `Shape` in which only the ancestors of some leaves are computed: every other
/// node is a random value drawn the first time it is needed, so the inclusion proofs of the
/// chosen leaves all hash to the same root, as in a real tree.
pub(crate) struct SparseTree<Tree: MerkleTreeTrait> {
    shape: Shape,
    /// `(level, index)` of every ancestor of a chosen leaf (level 0 = the leaves).
    ancestors: HashSet<(usize, usize)>,
    /// Values drawn or computed so far.
    memo: HashMap<(usize, usize), Node<Tree>>,
}

impl<Tree: MerkleTreeTrait> SparseTree<Tree> {
    /// A sparse tree over the chosen `leaves`.
    pub fn new(shape: Shape, leaves: &[usize]) -> Self {
        let mut ancestors = HashSet::new();
        for &leaf in leaves {
            let mut idx = leaf;
            ancestors.insert((0, idx));
            for (level, &a) in shape.arities.iter().enumerate() {
                idx /= a;
                ancestors.insert((level + 1, idx));
            }
        }
        SparseTree {
            shape,
            ancestors,
            memo: HashMap::new(),
        }
    }

    fn node(&mut self, level: usize, idx: usize, rng: &mut ChaCha8Rng) -> Node<Tree> {
        if let Some(v) = self.memo.get(&(level, idx)) {
            return *v;
        }
        let v = if level == 0 || !self.ancestors.contains(&(level, idx)) {
            Domain::random(rng)
        } else {
            let a = self.shape.arities[level - 1];
            let children: Vec<_> = (0..a)
                .map(|i| self.node(level - 1, idx * a + i, rng))
                .collect();
            hash_children::<Tree>(&children)
        };
        self.memo.insert((level, idx), v);
        v
    }

    /// The root.
    pub fn root(&mut self, rng: &mut ChaCha8Rng) -> Node<Tree> {
        self.node(self.shape.height(), 0, rng)
    }

    /// `(leaf value, path)` of a chosen leaf.
    pub fn proof(
        &mut self,
        leaf: usize,
        rng: &mut ChaCha8Rng,
    ) -> (Node<Tree>, Vec<PathStep<Node<Tree>>>) {
        let value = self.node(0, leaf, rng);
        let mut path = Vec::with_capacity(self.shape.height());
        let mut idx = leaf;
        for level in 0..self.shape.height() {
            let a = self.shape.arities[level];
            let pos = idx % a;
            let first = idx - pos;
            let siblings = (0..a)
                .filter(|&i| i != pos)
                .map(|i| self.node(level, first + i, rng))
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
    use filecoin_proofs::SectorShape32GiB;
    use rand_core::SeedableRng;
    use storage_proofs_core::merkle::{MerkleProof, MerkleProofTrait};

    type Tree = SectorShape32GiB;
    type Proof = MerkleProof<
        <Tree as MerkleTreeTrait>::Hasher,
        <Tree as MerkleTreeTrait>::Arity,
        <Tree as MerkleTreeTrait>::SubTreeArity,
        <Tree as MerkleTreeTrait>::TopTreeArity,
    >;

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
    fn sparse_tree_paths_verify_against_one_root() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let nodes = 1 << 30;
        let leaves = [5, 6, 1 << 29, (1 << 30) - 1, 12_345_678];
        let mut t = SparseTree::<Tree>::new(Shape::of::<Tree>(nodes), &leaves);
        let root = t.root(&mut rng);
        for &leaf in &leaves {
            let (value, path) = t.proof(leaf, &mut rng);
            let p = Proof::from_parts(value, root, path);
            assert!(p.validate(leaf), "leaf {leaf}");
            assert_eq!(p.root(), root);
            assert_eq!(p.path().len(), 10);
            assert!(p.path().iter().all(|(s, _)| s.len() == 7));
        }
        // A random path has the right positions but does not verify.
        let path = Shape::of::<Tree>(nodes).random_path(leaves[4], &mut rng);
        let p = Proof::from_parts(Domain::random(&mut rng), root, path);
        assert_eq!(p.path_index(), leaves[4]);
        assert!(!p.verify());
    }
}
