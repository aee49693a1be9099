//! Poseidon and Poseidon Merkle paths as their gadgets compute their witness, natively.
//!
//! - [`hash`]: neptune's circuit `poseidon_hash` (`circuit.rs`, the optimized round
//!   constants and sparse matrices): per S-box it allocates the input when it is a linear
//!   combination, then `(l + pre)²` or `l²`, `l⁴` and `l⁵ (+ post)`; the domain tag's first
//!   S-box is a constant; the result is allocated at the end. Every allocation carries one
//!   constraint.
//! - [`path`]: storage-proofs' `SubPath` ascent of a Poseidon tree (base, sub and top levels):
//!   per level the index bits, the siblings, the insertion's `pick`s (`insert_2/4/8`), then
//!   the level's hash.
//!
//! Tested against the gadgets on random inputs (`tests.rs`) and on real partitions.
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::{POSEIDON_CONSTANTS_2, POSEIDON_CONSTANTS_4, POSEIDON_CONSTANTS_8};
use neptune::poseidon::PoseidonConstants;
use neptune::Arity;

use bellpepper_core::SynthesisError;
use cuzk_groth16::NativeWitness;

use super::alloc;

/// `x⁵`'s allocations after the input: `x²`, `x⁴`, then `x⁴ · x (+ post)`.
fn s_box(w: &mut NativeWitness<'_>, x: Fr, post: Option<Fr>) -> Fr {
    let x2 = alloc(w, x.square());
    let x4 = alloc(w, x2.square());
    alloc(w, x4 * x + post.unwrap_or(Fr::ZERO))
}

/// The linear layer after round `round`.
fn mix<A: Arity<Fr>>(state: &mut Vec<Fr>, round: usize, c: &PoseidonConstants<Fr, A>) {
    let width = state.len();
    let sparse_offset = c.half_full_rounds - 1;
    let dense = |m: &Vec<Vec<Fr>>, s: &[Fr]| -> Vec<Fr> {
        (0..width)
            .map(|j| (0..width).fold(Fr::ZERO, |acc, i| acc + s[i] * m[i][j]))
            .collect()
    };
    *state = if round == sparse_offset {
        dense(&c.pre_sparse_matrix, state)
    } else if round > sparse_offset && round < c.half_full_rounds + c.partial_rounds {
        let m = &c.sparse_matrixes[round - sparse_offset - 1];
        let first = (0..width).fold(Fr::ZERO, |acc, i| acc + state[i] * m.w_hat[i]);
        let s0 = state[0];
        std::iter::once(first)
            .chain((1..width).map(|j| state[j] + s0 * m.v_rest[j - 1]))
            .collect()
    } else {
        dense(&c.mds_matrices.m, state)
    };
}

/// neptune's circuit `poseidon_hash` of `preimage` (values of allocated variables): the
/// hash, its intermediate values allocated into `w` in the gadget's order.
pub(crate) fn hash<A: Arity<Fr>>(
    w: &mut NativeWitness<'_>,
    preimage: &[Fr],
    c: &PoseidonConstants<Fr, A>,
) -> Result<Fr, SynthesisError> {
    let width = c.width();
    if preimage.len() + 1 != width {
        return Err(SynthesisError::Unsatisfiable);
    }
    let rc = &c.compressed_round_constants;
    let mut state: Vec<Fr> = std::iter::once(c.domain_tag)
        .chain(preimage.iter().copied())
        .collect();
    let mut off = 0;
    let mut round = 0;
    // First full round: pre- and post-round keys; the tag's S-box is a constant, the
    // preimage is already allocated.
    let (pre, post) = (&rc[off..off + width], &rc[off + width..off + 2 * width]);
    off += 2 * width;
    for i in 0..width {
        let x = state[i] + pre[i];
        state[i] = if i == 0 {
            x.square().square() * x + post[i]
        } else {
            let x2 = alloc(w, x.square());
            let x4 = alloc(w, x2.square());
            alloc(w, x4 * x + post[i])
        };
    }
    mix(&mut state, round, c);
    round += 1;
    let full_round =
        |w: &mut NativeWitness<'_>, state: &mut Vec<Fr>, off: &mut usize, last: bool| {
            for (i, s) in state.iter_mut().enumerate() {
                let post = (!last).then(|| rc[*off + i]);
                let x = alloc(w, *s);
                *s = s_box(w, x, post);
            }
            if !last {
                *off += width;
            }
        };
    for _ in 1..c.full_rounds / 2 {
        full_round(w, &mut state, &mut off, false);
        mix(&mut state, round, c);
        round += 1;
    }
    for _ in 0..c.partial_rounds {
        let key = rc[off];
        off += 1;
        let x = alloc(w, state[0]);
        state[0] = s_box(w, x, Some(key));
        mix(&mut state, round, c);
        round += 1;
    }
    for _ in 0..c.full_rounds / 2 - 1 {
        full_round(w, &mut state, &mut off, false);
        mix(&mut state, round, c);
        round += 1;
    }
    full_round(w, &mut state, &mut off, true);
    mix(&mut state, round, c);
    Ok(alloc(w, state[1]))
}

/// `pick(cond, a, b)`: one allocation, one constraint.
fn pick(w: &mut NativeWitness<'_>, cond: bool, a: Fr, b: Fr) -> Fr {
    alloc(w, if cond { a } else { b })
}

/// storage-proofs' `insert` of `x` among `s` at the position of `bits` (least significant
/// first), for arities 2, 4 and 8 (`insert_2`, `insert_4`, `insert_8`).
fn insert(
    w: &mut NativeWitness<'_>,
    x: Fr,
    bits: &[bool],
    s: &[Fr],
) -> Result<Vec<Fr>, SynthesisError> {
    Ok(match (bits, s) {
        (&[b0], &[b]) => vec![pick(w, b0, b, x), pick(w, b0, x, b)],
        (&[b0, b1], &[b, c, d]) => {
            let p0 = pick(w, b0, b, x);
            let p0 = pick(w, b1, b, p0);
            let p1 = pick(w, b0, x, b);
            let p1 = pick(w, b1, c, p1);
            let p2 = pick(w, b0, d, x);
            let p2 = pick(w, b1, p2, c);
            let p3 = pick(w, b0, x, d);
            let p3 = pick(w, b1, p3, d);
            vec![p0, p1, p2, p3]
        }
        (&[b0, b1, b2], &[b, c, d, e, f, g, h]) => {
            let nor = !b0 & !b1;
            w.push_bit(nor);
            w.add_constraints(1);
            let and = b0 & b1;
            w.push_bit(and);
            w.add_constraints(1);
            let a = x;
            let p0 = pick(w, nor, a, b);
            let p0 = pick(w, b2, b, p0);
            let p1 = pick(w, b0, a, b);
            let p1 = pick(w, b1, c, p1);
            let p1 = pick(w, b2, c, p1);
            let p2 = pick(w, b0, d, a);
            let p2 = pick(w, b1, p2, c);
            let p2 = pick(w, b2, d, p2);
            let p3 = pick(w, and, a, d);
            let p3 = pick(w, b2, e, p3);
            let p4 = pick(w, nor, a, f);
            let p4 = pick(w, b2, p4, e);
            let p5 = pick(w, b0, a, f);
            let p5 = pick(w, b1, g, p5);
            let p5 = pick(w, b2, p5, f);
            let p6 = pick(w, b0, h, a);
            let p6 = pick(w, b1, p6, g);
            let p6 = pick(w, b2, p6, g);
            let p7 = pick(w, and, a, h);
            let p7 = pick(w, b2, p7, h);
            vec![p0, p1, p2, p3, p4, p5, p6, p7]
        }
        _ => return Err(SynthesisError::Unsatisfiable),
    })
}

/// Poseidon of a tree level's `arity` children with filecoin-hashers' constants for it.
fn hash_level(w: &mut NativeWitness<'_>, children: &[Fr]) -> Result<Fr, SynthesisError> {
    match children.len() {
        2 => hash(w, children, &*POSEIDON_CONSTANTS_2),
        4 => hash(w, children, &*POSEIDON_CONSTANTS_4),
        8 => hash(w, children, &*POSEIDON_CONSTANTS_8),
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

/// One level of a Poseidon Merkle path whose index bits and siblings are allocated already:
/// `cur` inserted among `siblings` at `bits` (least significant first), then hashed.
pub(crate) fn level(
    w: &mut NativeWitness<'_>,
    cur: Fr,
    bits: &[bool],
    siblings: &[Fr],
) -> Result<Fr, SynthesisError> {
    let children = insert(w, cur, bits, siblings)?;
    hash_level(w, &children)
}

/// The ascent from `leaf` along `path` (a Merkle proof's `as_options()`: per level the
/// siblings and the index), allocated into `w`: the root and the index bits, least
/// significant first, level by level.
pub(crate) fn path(
    w: &mut NativeWitness<'_>,
    leaf: Fr,
    path: &[(Vec<Option<Fr>>, Option<usize>)],
) -> Result<(Fr, Vec<bool>), SynthesisError> {
    let mut cur = leaf;
    let mut all_bits = Vec::new();
    for (siblings, index) in path {
        let arity = siblings.len() + 1;
        if !arity.is_power_of_two() || arity < 2 {
            return Err(SynthesisError::Unsatisfiable);
        }
        let index = index.ok_or(SynthesisError::AssignmentMissing)?;
        let bits: Vec<bool> = (0..arity.trailing_zeros())
            .map(|i| (index >> i) & 1 == 1)
            .collect();
        for &b in &bits {
            w.push_bit(b);
            w.add_constraints(1);
        }
        let siblings = siblings
            .iter()
            .map(|s| s.ok_or(SynthesisError::AssignmentMissing))
            .collect::<Result<Vec<Fr>, _>>()?;
        for &s in &siblings {
            w.push(s);
        }
        cur = level(w, cur, &bits, &siblings)?;
        all_bits.extend(bits);
    }
    Ok((cur, all_bits))
}

#[cfg(test)]
mod tests;
