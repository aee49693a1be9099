//! One PoRep challenge's witness, computed natively.
//!
//! The order follows storage-proofs-porep's per-challenge synthesis (`stacked/circuit/params.rs`,
//! `Proof::synthesize`): the data leaf and its tree D path (SHA-256); each DRG, then expander,
//! parent's column, its Poseidon hash and its tree C path; the challenge's bits and public
//! input; per layer, the parents' bit decompositions and the label's SHA-256 and packing; the
//! encoding, its tree R path; the challenged column's hash and its tree C path. Each gadget's
//! allocations are mirrored by `sha256` and `poseidon`; no gadget runs.
use bellpepper_core::SynthesisError;
use blstrs::Scalar as Fr;
use filecoin_hashers::{Hasher, POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
use filecoin_proofs::{MerkleTreeTrait, VanillaSealProof};
use serde::de::DeserializeOwned;
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_porep::stacked::ColumnProof;

use cuzk_groth16::NativeWitness;

use super::sha256::{le_bits, pack, reverse_bit_numbering, sha256, sha256_level, Bit};
use super::{pack_inputs, poseidon};

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// The partition prefix's values a challenge reads: the replica id's bits.
pub(crate) struct Prefix {
    /// The replica id's 255 bits, least significant first.
    replica_id: Vec<bool>,
}

impl Prefix {
    pub(crate) fn new(replica_id: Fr) -> Prefix {
        Prefix {
            replica_id: le_bits(&replica_id),
        }
    }
}

/// A column proof's rows and inclusion proof. The crate keeps both fields to itself; its
/// serde form is `(index, rows, inclusion proof)` in order, which bincode round-trips.
pub(crate) fn column_parts<P>(c: &ColumnProof<P>) -> Result<(Vec<Fr>, P), SynthesisError>
where
    P: MerkleProofTrait + DeserializeOwned,
    <P::Hasher as Hasher>::Domain: DeserializeOwned,
{
    let bytes = bincode::serialize(c).map_err(|_| SynthesisError::AssignmentMissing)?;
    let (_index, rows, path): (u32, Vec<<P::Hasher as Hasher>::Domain>, P) =
        bincode::deserialize(&bytes).map_err(|_| SynthesisError::AssignmentMissing)?;
    Ok((rows.into_iter().map(Into::into).collect(), path))
}

/// The column hash (`hash_single_column`: Poseidon of arity 2 or 11).
fn hash_column(w: &mut NativeWitness<'_>, rows: &[Fr]) -> Result<Fr, SynthesisError> {
    match rows.len() {
        2 => poseidon::hash(w, rows, &*POSEIDON_CONSTANTS_2),
        11 => poseidon::hash(w, rows, &*POSEIDON_CONSTANTS_11),
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

/// `PoRCircuit` of a Poseidon tree with a private root: the ascent, its index bits packed
/// into inputs, the computed root's equality with the root (a constraint).
fn poseidon_por(
    w: &mut NativeWitness<'_>,
    leaf: Fr,
    path: &[(Vec<Option<Fr>>, Option<usize>)],
) -> Result<(), SynthesisError> {
    let (_, bits) = poseidon::path(w, leaf, path)?;
    pack_inputs(w, &bits);
    w.add_constraints(1);
    Ok(())
}

/// One challenge, natively, into `w`.
pub(crate) fn challenge<Tree: 'static + MerkleTreeTrait>(
    w: &mut NativeWitness<'_>,
    prefix: &Prefix,
    proof: &VanillaSealProof<Tree>,
) -> Result<(), SynthesisError>
where
    Domain<Tree>: DeserializeOwned,
{
    if <Tree::Hasher as Hasher>::name() != "poseidon_hasher" {
        return Err(SynthesisError::Unsatisfiable);
    }
    let leaf: Fr = proof.comm_d_proofs.leaf().into();
    w.push(leaf);
    tree_d_path(w, leaf, &proof.comm_d_proofs.as_options())?;

    let columns = &proof.replica_column_proofs;
    let mut parents: Vec<Vec<Fr>> = Vec::new();
    for column in columns.drg_parents.iter().chain(&columns.exp_parents) {
        let (rows, path) = column_parts(column)?;
        for &r in &rows {
            w.push(r);
        }
        let hash = hash_column(w, &rows)?;
        poseidon_por(w, hash, &path.as_options())?;
        parents.push(rows);
    }
    let drg = columns.drg_parents.len();
    let layers = parents.first().map_or(0, Vec::len);
    if drg == 0 || parents.iter().any(|p| p.len() != layers) {
        return Err(SynthesisError::Unsatisfiable);
    }

    // `UInt64::alloc` (64 bits, least significant first) and its packing into one input.
    let node = proof.comm_d_proofs.path_index() as u64;
    let node_bits: Vec<bool> = (0..64).map(|i| (node >> i) & 1 == 1).collect();
    for &b in &node_bits {
        sha256_sink_bit(w, b);
    }
    pack_inputs(w, &node_bits);

    let mut labels = Vec::with_capacity(layers);
    for layer in 1..=layers {
        let mut values: Vec<Fr> = parents[..drg].iter().map(|p| p[layer - 1]).collect();
        if layer > 1 {
            values.extend(parents[drg..].iter().map(|p| p[layer - 2]));
        }
        let label = label(w, prefix, layer as u32, node, &values)?;
        // `pack_bits`'s allocation and constraint.
        w.push(label);
        w.add_constraints(1);
        labels.push(label);
    }

    let key = *labels.last().ok_or(SynthesisError::Unsatisfiable)?;
    // `encode`: key + data leaf, one constraint.
    let encoded = key + leaf;
    w.push(encoded);
    w.add_constraints(1);
    poseidon_por(w, encoded, &proof.comm_r_last_proof.as_options())?;
    let column_hash = hash_column(w, &labels)?;
    let (_, c_x_path) = column_parts(&columns.c_x)?;
    poseidon_por(w, column_hash, &c_x_path.as_options())
}

/// The tree D inclusion of the data leaf `leaf` (`PoRCircuit` of a binary SHA-256 tree, its
/// root the prefix's `comm_d`, kept private), allocated into `w`. Per level, from the leaf
/// up: the index bit, the sibling, the two `pick`s that order the pair, both halves' bit
/// decompositions, the SHA-256 of their 64 bytes and its packing. Then the index bits packed
/// into one public input, and the root equality (a constraint, no allocation).
fn tree_d_path(
    w: &mut NativeWitness<'_>,
    leaf: Fr,
    path: &[(Vec<Option<Fr>>, Option<usize>)],
) -> Result<(), SynthesisError> {
    let mut cur = leaf;
    let mut index_bits = Vec::with_capacity(path.len());
    for (siblings, index) in path {
        let (&[Some(sibling)], Some(index)) = (siblings.as_slice(), *index) else {
            return Err(SynthesisError::AssignmentMissing);
        };
        let right = index & 1 == 1;
        sha256_sink_bit(w, right);
        index_bits.push(right);
        w.push(sibling);
        // insert_2's two picks, then the pair's hash.
        cur = sha256_level(w, cur, sibling, right)?;
    }
    // The path's index bits packed into inputs, and the computed root's equality with comm_d.
    pack_inputs(w, &index_bits);
    w.add_constraints(1);
    Ok(())
}

/// `create_label_circuit` for `layer` (1-based) with its parents' values (the DRG parents,
/// then from layer 2 on the expander parents): the parents' bit decompositions, the SHA-256
/// of `replica id ‖ layer ‖ node ‖ 37 parents` and its packing, allocated into `w`; returns
/// the label (whose variable the caller allocates).
fn label(
    w: &mut NativeWitness<'_>,
    prefix: &Prefix,
    layer: u32,
    node: u64,
    parents: &[Fr],
) -> Result<Fr, SynthesisError> {
    let mut bits_of_parents = Vec::with_capacity(parents.len());
    for p in parents {
        let le = le_bits(p);
        for &b in &le {
            sha256_sink_bit(w, b);
        }
        // `to_bits_le`'s unpacking constraint.
        w.add_constraints(1);
        bits_of_parents.push(reverse_bit_numbering(le.into_iter().map(Bit::Is).collect()));
    }
    // The hashing order repeats the parents up to 37 (`params.rs`).
    let expanded: Vec<&Vec<Bit>> = if layer > 1 {
        bits_of_parents
            .iter()
            .chain(&bits_of_parents)
            .chain(&bits_of_parents[..9])
            .collect()
    } else {
        let n = bits_of_parents.len();
        (0..6 * n + 1).map(|i| &bits_of_parents[i % n]).collect()
    };
    if expanded.len() != 37 {
        return Err(SynthesisError::Unsatisfiable);
    }

    let mut input = reverse_bit_numbering(prefix.replica_id.iter().map(|&b| Bit::Is(b)).collect());
    input.resize(256, Bit::Const(false));
    input.extend((0..32).rev().map(|i| Bit::Const((layer >> i) & 1 == 1)));
    input.extend((0..64).rev().map(|i| Bit::Is((node >> i) & 1 == 1)));
    input.resize(512, Bit::Const(false));
    for p in expanded {
        input.extend_from_slice(p);
    }
    pack(&reverse_bit_numbering(sha256(w, &input)))
}

fn sha256_sink_bit(w: &mut NativeWitness<'_>, value: bool) {
    super::sha256::Sink::bit(w, value);
}
