//! One PoRep challenge's witness with its labeling computed natively.
//!
//! The order follows storage-proofs-porep's per-challenge synthesis (`stacked/circuit/params.rs`,
//! `Proof::synthesize`): the data leaf and its tree D path; each DRG, then expander, parent's
//! column, its Poseidon hash and its tree C path; the challenge's bits and public input; per
//! layer, the parents' bit decompositions and the label's SHA-256 and packing; the encoding,
//! its tree R path; the challenged column's hash and its tree C path. The labeling is done
//! here (`label`); everything else calls the same public gadgets the crate's circuit calls.
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{PrimeField, PrimeFieldBits};
use filecoin_hashers::{Hasher, POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
use filecoin_proofs::{MerkleTreeTrait, VanillaSealProof};
use serde::de::DeserializeOwned;
use storage_proofs_core::gadgets::encode::encode;
use storage_proofs_core::gadgets::por::PoRCircuit;
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_porep::stacked::ColumnProof;

use cuzk_groth16::Recorder;

use super::sha256::{sha256, Bit};

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// The partition prefix's values a challenge reads: the commitments' variables (allocated
/// again in each challenge's own recorder, as its lead) and the replica id's bits.
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

/// A field element's `NUM_BITS` bits, least significant first (`AllocatedNum::to_bits_le`).
fn le_bits(v: &Fr) -> Vec<bool> {
    v.to_le_bits()
        .into_iter()
        .take(Fr::NUM_BITS as usize)
        .collect()
}

/// `reverse_bit_numbering`: padded to whole bytes with constant zeros, each byte's bits
/// reversed.
fn reverse_bit_numbering(mut bits: Vec<Bit>) -> Vec<Bit> {
    while bits.len() % 8 != 0 {
        bits.push(Bit::Const(false));
    }
    for byte in bits.chunks_mut(8) {
        byte.reverse();
    }
    bits
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
fn hash_column<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    rows: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    match rows.len() {
        2 => neptune::circuit::poseidon_hash(cs, rows.to_vec(), &*POSEIDON_CONSTANTS_2),
        11 => neptune::circuit::poseidon_hash(cs, rows.to_vec(), &*POSEIDON_CONSTANTS_11),
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

fn alloc_num<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    v: Fr,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    AllocatedNum::alloc(cs, || Ok(v))
}

/// One challenge into `cs` (a witness-only recorder holding the lead: `comm_c` and
/// `comm_r_last`, whose variables are passed in; `comm_d` is only constrained, in
/// `tree_d_path`).
pub(crate) fn challenge<Tree: 'static + MerkleTreeTrait>(
    cs: &mut Recorder,
    prefix: &Prefix,
    comm_c: &AllocatedNum<Fr>,
    comm_r_last: &AllocatedNum<Fr>,
    proof: &VanillaSealProof<Tree>,
) -> Result<(), SynthesisError>
where
    Domain<Tree>: DeserializeOwned,
{
    let leaf: Fr = proof.comm_d_proofs.leaf().into();
    let data_leaf = alloc_num(cs, leaf)?;
    tree_d_path(cs, leaf, &proof.comm_d_proofs.as_options())?;

    let columns = &proof.replica_column_proofs;
    let mut parents: Vec<Vec<Fr>> = Vec::new();
    for column in columns.drg_parents.iter().chain(&columns.exp_parents) {
        let (rows, path) = column_parts(column)?;
        let nums = rows
            .iter()
            .map(|r| alloc_num(cs, *r))
            .collect::<Result<Vec<_>, _>>()?;
        let hash = hash_column(cs, &nums)?;
        PoRCircuit::<Tree>::synthesize(
            &mut *cs,
            Root::from_allocated::<Recorder>(hash),
            path.as_options().into(),
            Root::from_allocated::<Recorder>(comm_c.clone()),
            true,
        )?;
        parents.push(rows);
    }
    let drg = columns.drg_parents.len();
    let layers = parents.first().map_or(0, Vec::len);
    if drg == 0 || parents.iter().any(|p| p.len() != layers) {
        return Err(SynthesisError::Unsatisfiable);
    }

    let node = proof.comm_d_proofs.path_index() as u64;
    let challenge = UInt64::alloc(&mut *cs, Some(node))?;
    challenge.pack_into_input(&mut *cs)?;

    let mut labels = Vec::with_capacity(layers);
    for layer in 1..=layers {
        let mut drg_values: Vec<Fr> = parents[..drg].iter().map(|p| p[layer - 1]).collect();
        if layer > 1 {
            drg_values.extend(parents[drg..].iter().map(|p| p[layer - 2]));
        }
        let value = label(cs, prefix, layer as u32, node, &drg_values)?;
        labels.push(alloc_num(cs, value)?);
        cs.native_witness()
            .ok_or(SynthesisError::Unsatisfiable)?
            .add_constraints(1);
    }

    let key = labels.last().ok_or(SynthesisError::Unsatisfiable)?;
    let encoded = encode(&mut *cs, key, &data_leaf)?;
    PoRCircuit::<Tree>::synthesize(
        &mut *cs,
        Root::from_allocated::<Recorder>(encoded),
        proof.comm_r_last_proof.as_options().into(),
        Root::from_allocated::<Recorder>(comm_r_last.clone()),
        true,
    )?;
    let column_hash = hash_column(cs, &labels)?;
    let (_, c_x_path) = column_parts(&columns.c_x)?;
    PoRCircuit::<Tree>::synthesize(
        &mut *cs,
        Root::from_allocated::<Recorder>(column_hash),
        c_x_path.as_options().into(),
        Root::from_allocated::<Recorder>(comm_c.clone()),
        true,
    )?;
    Ok(())
}

/// The tree D inclusion of the data leaf `leaf` (`PoRCircuit` of a binary SHA-256 tree, its
/// root the prefix's `comm_d`, kept private), allocated into `cs`. Per level, from the leaf
/// up: the index bit, the sibling, the two `pick`s that order the pair, both halves' bit
/// decompositions, the SHA-256 of their 64 bytes and its packing. Then the index bits packed
/// into one public input, and the root equality (a constraint, no allocation).
fn tree_d_path(
    cs: &mut Recorder,
    leaf: Fr,
    path: &[(Vec<Option<Fr>>, Option<usize>)],
) -> Result<(), SynthesisError> {
    let mut w = cs.native_witness().ok_or(SynthesisError::Unsatisfiable)?;
    let mut cur = leaf;
    let mut index_bits = Vec::with_capacity(path.len());
    for (siblings, index) in path {
        let (&[Some(sibling)], Some(index)) = (siblings.as_slice(), *index) else {
            return Err(SynthesisError::AssignmentMissing);
        };
        let right = index & 1 == 1;
        sha256_sink_bit(&mut w, right);
        index_bits.push(right);
        w.push(sibling);
        // pick(bit, sibling, cur), then pick(bit, cur, sibling): one constraint each.
        let pair = if right {
            [sibling, cur]
        } else {
            [cur, sibling]
        };
        w.push(pair[0]);
        w.push(pair[1]);
        w.add_constraints(2);
        let mut input = Vec::with_capacity(512);
        for half in &pair {
            let le = le_bits(half);
            for &b in &le {
                sha256_sink_bit(&mut w, b);
            }
            w.add_constraints(1);
            input.extend(reverse_bit_numbering(le.into_iter().map(Bit::Is).collect()));
        }
        cur = pack(&reverse_bit_numbering(sha256(&mut w, &input)))?;
        w.push(cur);
        w.add_constraints(1);
    }
    // The path's index bits packed into one input per 254 (one constraint each), and the
    // computed root's equality with comm_d.
    for chunk in index_bits.chunks(Fr::CAPACITY as usize) {
        let mut repr = [0u8; 32];
        for (i, &b) in chunk.iter().enumerate() {
            repr[i / 8] |= u8::from(b) << (i % 8);
        }
        let v: Fr = Option::from(Fr::from_repr(repr)).ok_or(SynthesisError::Unsatisfiable)?;
        drop(w);
        cs.alloc_input(|| "", || Ok(v))?;
        w = cs.native_witness().ok_or(SynthesisError::Unsatisfiable)?;
        w.add_constraints(1);
    }
    w.add_constraints(1);
    Ok(())
}

/// `multipack::pack_bits` of the first `CAPACITY` bits (least significant first).
fn pack(bits: &[Bit]) -> Result<Fr, SynthesisError> {
    let mut repr = [0u8; 32];
    for (i, b) in bits.iter().take(Fr::CAPACITY as usize).enumerate() {
        repr[i / 8] |= u8::from(b.value()) << (i % 8);
    }
    Option::from(Fr::from_repr(repr)).ok_or(SynthesisError::Unsatisfiable)
}

/// `create_label_circuit` for `layer` (1-based) with its parents' values (the DRG parents,
/// then from layer 2 on the expander parents): the parents' bit decompositions, the SHA-256
/// of `replica id ‖ layer ‖ node ‖ 37 parents` and its packing, allocated into `cs`; returns
/// the label (whose variable the caller allocates).
fn label(
    cs: &mut Recorder,
    prefix: &Prefix,
    layer: u32,
    node: u64,
    parents: &[Fr],
) -> Result<Fr, SynthesisError> {
    let mut w = cs.native_witness().ok_or(SynthesisError::Unsatisfiable)?;
    let mut bits_of_parents = Vec::with_capacity(parents.len());
    for p in parents {
        let le = le_bits(p);
        for &b in &le {
            sha256_sink_bit(&mut w, b);
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
    pack(&reverse_bit_numbering(sha256(&mut w, &input)))
}

fn sha256_sink_bit(w: &mut cuzk_groth16::NativeWitness<'_>, value: bool) {
    super::sha256::Sink::bit(w, value);
}
