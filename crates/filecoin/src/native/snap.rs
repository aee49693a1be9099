//! A SnapDeals partition's witness, computed natively, its challenges on every core.
//!
//! The order follows storage-proofs-update's `EmptySectorUpdateCircuit::synthesize`. The
//! prefix ([`prefix`]): `k_and_h_select` (an input) and its bits, the packed partition, the
//! three commitments (inputs), `phi`, `comm_c` and the two tree R roots, the apex leaves and
//! the partition path, both `comm_r` checks (Poseidon), the apex tree and its path to
//! `comm_d_new` (SHA-256, `apex_por`), every challenge's bits (`gen_challenge_bits`: Poseidon
//! digests and their bits). Then per challenge ([`challenge`]): its high bits
//! (`get_challenge_high_bits`), `rho`, the leaves, `label_r_new`, the old and new tree R paths
//! (Poseidon), the apex leaf's selection and the tree D path up to it (SHA-256). A challenge
//! reads only the prefix's values, so the challenges run in parallel, each into a recorder of
//! its own, and are appended in order.
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField, PrimeFieldBits};
use filecoin_hashers::POSEIDON_CONSTANTS_2;
use filecoin_proofs::{MerkleTreeTrait, TreeRHasher};
use storage_proofs_update::circuit::ChallengeProof;
use storage_proofs_update::constants::{hs, POSEIDON_CONSTANTS_GEN_RANDOMNESS};
use storage_proofs_update::EmptySectorUpdateCircuit;

use cuzk_groth16::{NativeWitness, Recorder, Synthesized};

use super::sha256::{le_bits, sha256_hash2, sha256_level, Sink};
use super::{alloc, native, packed, poseidon};

/// What every challenge reads from the prefix.
pub(crate) struct Prefix {
    phi: Fr,
    apex_leafs: Vec<Fr>,
    partition_bits: Vec<bool>,
    h_select_bits: Vec<bool>,
    hs: Vec<usize>,
    /// Each challenge's bits without the partition's.
    generated: Vec<Vec<bool>>,
    challenge_bit_len: usize,
    partition_bit_len: usize,
    apex_leaf_bit_len: usize,
}

fn value(v: Option<Fr>) -> Result<Fr, SynthesisError> {
    v.ok_or(SynthesisError::AssignmentMissing)
}

/// Allocates `v` as an input (`inputize`: the input and its equality).
fn inputize(cs: &mut Recorder, v: Fr) -> Result<(), SynthesisError> {
    cs.alloc_input(|| "", || Ok(v))?;
    native(cs)?.add_constraints(1);
    Ok(())
}

/// `por_no_challenge_input` over a binary SHA-256 tree: `bits` give each level's side.
fn sha256_por(
    w: &mut NativeWitness<'_>,
    leaf: Fr,
    siblings: &[Fr],
    bits: &[bool],
) -> Result<Fr, SynthesisError> {
    if siblings.len() != bits.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut cur = leaf;
    for (&s, &b) in siblings.iter().zip(bits) {
        cur = sha256_level(w, cur, s, b)?;
    }
    Ok(cur)
}

/// The prefix, natively, into `cs` (the partition's recorder, ONE allocated).
pub(crate) fn prefix<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    cs: &mut Recorder,
    c: &EmptySectorUpdateCircuit<Tree>,
) -> Result<Prefix, SynthesisError> {
    let pp = &c.pub_params;
    let pi = &c.pub_inputs;
    let priv_in = &c.priv_inputs;
    let hs = hs(pp.sector_nodes).to_vec();
    let first = priv_in
        .challenge_proofs
        .first()
        .ok_or(SynthesisError::Unsatisfiable)?;
    let sans_partition = pp
        .challenge_bit_len
        .checked_sub(pp.partition_bit_len)
        .ok_or(SynthesisError::Unsatisfiable)?;
    let partition_path = first
        .path_d_new
        .get(sans_partition..)
        .ok_or(SynthesisError::Unsatisfiable)?
        .iter()
        .map(|s| value(*s.first().ok_or(SynthesisError::Unsatisfiable)?))
        .collect::<Result<Vec<Fr>, _>>()?;
    if priv_in.challenge_proofs.len() != pp.challenge_count
        || priv_in.apex_leafs.len() != pp.apex_leaf_count
        || partition_path.len() != pp.partition_bit_len
    {
        return Err(SynthesisError::Unsatisfiable);
    }

    let k_and_h_select = value(pi.k_and_h_select)?;
    native(cs)?.push(k_and_h_select);
    inputize(cs, k_and_h_select)?;
    let bit_len = pp.partition_bit_len + hs.len();
    let bits: Vec<bool> = k_and_h_select
        .to_le_bits()
        .into_iter()
        .take(bit_len)
        .collect();
    let mut w = native(cs)?;
    for &b in &bits {
        w.bit(b);
    }
    w.add_constraints(1);
    let partition_bits = bits[..pp.partition_bit_len].to_vec();
    let h_select_bits = bits[pp.partition_bit_len..].to_vec();
    let partition = alloc(&mut w, packed(&partition_bits));
    let comm_r_old = value(pi.comm_r_old)?;
    let comm_d_new = value(pi.comm_d_new)?;
    let comm_r_new = value(pi.comm_r_new)?;
    for v in [comm_r_old, comm_d_new, comm_r_new] {
        native(cs)?.push(v);
        inputize(cs, v)?;
    }
    let mut w = native(cs)?;
    let phi = poseidon::hash(
        &mut w,
        &[comm_d_new, comm_r_old],
        &*POSEIDON_CONSTANTS_GEN_RANDOMNESS,
    )?;
    let comm_c = value(priv_in.comm_c)?;
    let root_r_old = value(priv_in.root_r_old)?;
    let root_r_new = value(priv_in.root_r_new)?;
    for v in [comm_c, root_r_old, root_r_new] {
        w.push(v);
    }
    let apex_leafs = priv_in
        .apex_leafs
        .iter()
        .map(|l| value(*l))
        .collect::<Result<Vec<Fr>, _>>()?;
    for &l in &apex_leafs {
        w.push(l);
    }
    for &s in &partition_path {
        w.push(s);
    }
    for root in [root_r_old, root_r_new] {
        poseidon::hash(&mut w, &[comm_c, root], &*POSEIDON_CONSTANTS_2)?;
        w.add_constraints(1);
    }

    // apex_por: the apex tree, then its root's path to comm_d_new along the partition bits.
    let mut row = apex_leafs.clone();
    while row.len() > 1 {
        row = row
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => sha256_hash2(&mut w, *a, *b),
                _ => Err(SynthesisError::Unsatisfiable),
            })
            .collect::<Result<Vec<Fr>, _>>()?;
    }
    let apex_root = *row.first().ok_or(SynthesisError::Unsatisfiable)?;
    sha256_por(&mut w, apex_root, &partition_path, &partition_bits)?;
    w.add_constraints(1);

    // gen_challenge_bits.
    let per_digest = Fr::CAPACITY as usize / sans_partition;
    let digests = pp.challenge_count.div_ceil(per_digest);
    let mut generated = Vec::with_capacity(pp.challenge_count);
    for j in 0..digests {
        let index = alloc(
            &mut w,
            partition * Fr::from(digests as u64) + Fr::from(j as u64),
        );
        let digest = poseidon::hash(
            &mut w,
            &[comm_r_new, index],
            &*POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        )?;
        let digest_bits = le_bits(&digest);
        for &b in &digest_bits {
            w.bit(b);
        }
        w.add_constraints(1);
        let take = if j == digests - 1 {
            pp.challenge_count - generated.len()
        } else {
            per_digest
        };
        generated.extend(
            digest_bits
                .chunks(sans_partition)
                .take(take)
                .map(<[bool]>::to_vec),
        );
    }
    Ok(Prefix {
        phi,
        apex_leafs,
        partition_bits,
        h_select_bits,
        hs,
        generated,
        challenge_bit_len: pp.challenge_bit_len,
        partition_bit_len: pp.partition_bit_len,
        apex_leaf_bit_len: pp.apex_leaf_bit_len,
    })
}

/// Allocates a tree's siblings, row by row.
fn siblings(
    w: &mut NativeWitness<'_>,
    rows: &[Vec<Option<Fr>>],
) -> Result<Vec<Vec<Fr>>, SynthesisError> {
    let rows = rows
        .iter()
        .map(|r| r.iter().map(|s| value(*s)).collect::<Result<Vec<Fr>, _>>())
        .collect::<Result<Vec<_>, _>>()?;
    for r in &rows {
        for &s in r {
            w.push(s);
        }
    }
    Ok(rows)
}

/// `por_no_challenge_input` over a Poseidon tree: each row consumes its arity's bits.
fn poseidon_por(
    w: &mut NativeWitness<'_>,
    leaf: Fr,
    rows: &[Vec<Fr>],
    bits: &[bool],
) -> Result<(), SynthesisError> {
    let mut cur = leaf;
    let mut used = 0;
    for siblings in rows {
        let n = (siblings.len() + 1).trailing_zeros() as usize;
        let b = bits
            .get(used..used + n)
            .ok_or(SynthesisError::Unsatisfiable)?;
        cur = poseidon::level(w, cur, b, siblings)?;
        used += n;
    }
    if used != bits.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    w.add_constraints(1);
    Ok(())
}

/// Challenge `c_index`, natively, into `w`.
pub(crate) fn challenge<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    w: &mut NativeWitness<'_>,
    p: &Prefix,
    c_index: usize,
    proof: &ChallengeProof<Tree>,
) -> Result<(), SynthesisError> {
    let c_bits: Vec<bool> = p
        .generated
        .get(c_index)
        .ok_or(SynthesisError::Unsatisfiable)?
        .iter()
        .chain(&p.partition_bits)
        .copied()
        .collect();
    if c_bits.len() != p.challenge_bit_len || p.hs.len() != p.h_select_bits.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    // get_challenge_high_bits.
    let mut selected = Fr::ZERO;
    for (&h, &select) in p.hs.iter().zip(&p.h_select_bits) {
        let high = alloc(w, packed(&c_bits[c_bits.len() - h..]));
        selected += alloc(w, if select { high } else { Fr::ZERO });
    }
    let c_high = alloc(w, selected);
    let rho = poseidon::hash(w, &[p.phi, c_high], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)?;
    let leaf_r_old = value(proof.leaf_r_old)?;
    let leaf_d_new = value(proof.leaf_d_new)?;
    w.push(leaf_r_old);
    w.push(leaf_d_new);
    // label_r_new.
    let d_rho = alloc(w, leaf_d_new * rho);
    let leaf_r_new = alloc(w, leaf_r_old + d_rho);

    let old = siblings(w, &proof.path_r_old)?;
    poseidon_por(w, leaf_r_old, &old, &c_bits)?;
    let new = siblings(w, &proof.path_r_new)?;
    poseidon_por(w, leaf_r_new, &new, &c_bits)?;

    // The apex leaf: `select` over the apex leaves by the bits just below the partition's.
    let start = p.challenge_bit_len - p.partition_bit_len - p.apex_leaf_bit_len;
    let apex_bits = &c_bits[start..start + p.apex_leaf_bit_len];
    let mut state = p.apex_leafs.clone();
    for &bit in apex_bits.iter().rev() {
        let half = state.len() / 2;
        state = (0..half)
            .map(|j| alloc(w, if bit { state[half + j] } else { state[j] }))
            .collect();
    }
    if state.len() != 1 {
        return Err(SynthesisError::Unsatisfiable);
    }
    let path = proof
        .path_d_new
        .get(..start)
        .ok_or(SynthesisError::Unsatisfiable)?
        .iter()
        .map(|s| value(*s.first().ok_or(SynthesisError::Unsatisfiable)?))
        .collect::<Result<Vec<Fr>, _>>()?;
    for &s in &path {
        w.push(s);
    }
    sha256_por(w, leaf_d_new, &path, &c_bits[..start])?;
    w.add_constraints(1);
    Ok(())
}

/// The partition's witness-only recording of `circuit` into `recorder`: the prefix, then the
/// challenges on rayon's threads, in order (`native::units`).
///
/// `total_aux` is the circuit's aux count, `exact` when its shape was counted: every
/// challenge has the same shape, so each then writes straight into its own slice of the
/// partition's aux vector.
pub(crate) fn witness<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    circuit: &EmptySectorUpdateCircuit<Tree>,
    mut recorder: Recorder,
    total_aux: usize,
    exact: bool,
) -> Result<Synthesized, SynthesisError> {
    recorder.alloc_input(|| "", || Ok(Fr::ONE))?;
    let p = prefix(&mut recorder, circuit)?;
    let proofs = &circuit.priv_inputs.challenge_proofs;
    let n = proofs.len().max(1);
    let rest = total_aux.saturating_sub(recorder.num_aux());
    let mut out = recorder.into_synthesized();
    super::units(
        &mut out,
        proofs.len(),
        rest / n,
        exact && rest % n == 0,
        |i, w| challenge(w, &p, i, &proofs[i]),
    )?;
    Ok(out)
}
