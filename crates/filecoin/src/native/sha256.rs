//! SHA-256 as bellpepper's gadget computes its witness, without the gadget's per-bit costs.
//!
//! The gadget (`bellpepper::gadgets::sha256`) allocates one variable for every bit it cannot
//! fold: the message schedule's XORs and sums, each round's Σ XORs, `ch`, `maj` and deferred
//! sums, the final additions. Which bits it allocates depends on which inputs are constants
//! (padding, the IV, a layer index), so [`Bit`] keeps the gadget's three kinds (a constant, a
//! variable, a negated variable) and every operation below follows the gadget's case
//! analysis arm for arm, in the gadget's order. What comes out is the allocated values, in
//! allocation order, and the constraint count; no linear combination is ever built.
//!
//! Bit-exactness with the gadget is tested here on random inputs with constant and negated
//! bits mixed in, and on real PoRep partitions (`tests/porep_witness.rs`).

use bellpepper_core::SynthesisError;
use blstrs::Scalar as Fr;
use ff::{PrimeField, PrimeFieldBits};

use cuzk_groth16::NativeWitness;

/// A bit as the gadget's `Boolean` holds it. `Is` and `Not` carry the allocated variable's
/// value (so `Not(v)` is the bit `!v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bit {
    Const(bool),
    Is(bool),
    Not(bool),
}

use Bit::{Const, Is, Not};

impl Bit {
    /// The bit's value.
    pub(crate) fn value(self) -> bool {
        match self {
            Const(b) | Is(b) => b,
            Not(v) => !v,
        }
    }

    fn not(self) -> Bit {
        match self {
            Const(b) => Const(!b),
            Is(v) => Not(v),
            Not(v) => Is(v),
        }
    }

    fn is_const(self) -> bool {
        matches!(self, Const(_))
    }
}

/// Where the allocated values go, in allocation order.
pub(crate) trait Sink {
    /// One allocated bit (the gadget's `AllocatedBit`: one variable, one constraint).
    fn bit(&mut self, value: bool);
    /// Constraints enforced without an allocation (`MultiEq`'s packed sums).
    fn constraints(&mut self, n: usize);
}

/// Allocates `value` as a bit.
fn alloc(sink: &mut impl Sink, value: bool) -> Bit {
    sink.bit(value);
    Is(value)
}

/// `Boolean::xor`.
fn xor(sink: &mut impl Sink, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Const(false), x) | (x, Const(false)) => x,
        (Const(true), x) | (x, Const(true)) => x.not(),
        // Is/Not: the gadget XORs the variables and negates the result.
        (Is(u), Not(v)) | (Not(u), Is(v)) => alloc(sink, u ^ v).not(),
        (Is(u), Is(v)) | (Not(u), Not(v)) => alloc(sink, u ^ v),
    }
}

/// `Boolean::and` (its `and_not` and `nor` allocate the AND of the bits' values too).
fn and(sink: &mut impl Sink, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Const(false), _) | (_, Const(false)) => Const(false),
        (Const(true), x) | (x, Const(true)) => x,
        (x, y) => alloc(sink, x.value() & y.value()),
    }
}

/// `Boolean::sha256_ch`.
fn ch(sink: &mut impl Sink, a: Bit, b: Bit, c: Bit) -> Bit {
    let value = (a.value() & b.value()) ^ (!a.value() & c.value());
    match (a, b, c) {
        (Const(_), Const(_), Const(_)) => Const(value),
        (Const(false), _, c) => c,
        (a, Const(false), c) => and(sink, a.not(), c),
        (a, b, Const(false)) => and(sink, a, b),
        (a, b, Const(true)) => and(sink, a, b.not()).not(),
        (a, Const(true), c) => and(sink, a.not(), c.not()).not(),
        _ => alloc(sink, value),
    }
}

/// `Boolean::sha256_maj`.
fn maj(sink: &mut impl Sink, a: Bit, b: Bit, c: Bit) -> Bit {
    let value = (a.value() & b.value()) ^ (a.value() & c.value()) ^ (b.value() & c.value());
    match (a, b, c) {
        (Const(_), Const(_), Const(_)) => Const(value),
        (Const(false), b, c) => and(sink, b, c),
        (a, Const(false), c) => and(sink, a, c),
        (a, b, Const(false)) => and(sink, a, b),
        (a, b, Const(true)) => and(sink, a.not(), b.not()).not(),
        (a, Const(true), c) => and(sink, a.not(), c.not()).not(),
        (Const(true), b, c) => and(sink, b.not(), c.not()).not(),
        _ => {
            // The gadget allocates maj, then `b and c` for its constraint.
            let m = alloc(sink, value);
            and(sink, b, c);
            m
        }
    }
}

/// The gadget's `UInt32`: bits least significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Word([Bit; 32]);

impl Word {
    fn constant(v: u32) -> Word {
        Word(std::array::from_fn(|i| Const((v >> i) & 1 == 1)))
    }

    /// `UInt32::from_bits_be`.
    fn from_bits_be(bits: &[Bit]) -> Word {
        Word(std::array::from_fn(|i| bits[31 - i]))
    }

    fn value(&self) -> u32 {
        (0..32).fold(0, |v, i| v | (u32::from(self.0[i].value()) << i))
    }

    fn rotr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| self.0[(i + by) % 32]))
    }

    fn shr(&self, by: usize) -> Word {
        Word(std::array::from_fn(|i| {
            if i + by < 32 {
                self.0[i + by]
            } else {
                Const(false)
            }
        }))
    }

    fn xor(&self, sink: &mut impl Sink, other: &Word) -> Word {
        let mut out = [Const(false); 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = xor(sink, self.0[i], other.0[i]);
        }
        Word(out)
    }

    /// A bitwise function of three words (`ch`, `maj`), bit 0 first.
    fn triop<S: Sink>(
        sink: &mut S,
        a: &Word,
        b: &Word,
        c: &Word,
        f: fn(&mut S, Bit, Bit, Bit) -> Bit,
    ) -> Word {
        let mut out = [Const(false); 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(sink, a.0[i], b.0[i], c.0[i]);
        }
        Word(out)
    }
}

/// `MultiEq`: packs the sums' equalities into as few constraints as the field holds; only
/// their count matters to the witness.
struct MultiEq {
    bits_used: usize,
}

/// `Scalar::CAPACITY` of BLS12-381's scalar field.
const CAPACITY: usize = 254;

impl MultiEq {
    fn enforce_equal(&mut self, sink: &mut impl Sink, num_bits: usize) {
        if CAPACITY <= self.bits_used + num_bits {
            sink.constraints(1);
            self.bits_used = 0;
        }
        self.bits_used += num_bits;
    }

    fn finish(self, sink: &mut impl Sink) {
        if self.bits_used > 0 {
            sink.constraints(1);
        }
    }
}

/// `UInt32::addmany`: the sum's bits, every one the widest sum can need, allocated; the
/// first 32 kept.
fn addmany(sink: &mut impl Sink, eq: &mut MultiEq, ops: &[Word]) -> Word {
    debug_assert!((2..=10).contains(&ops.len()));
    let sum: u64 = ops.iter().map(|w| u64::from(w.value())).sum();
    if ops.iter().all(|w| w.0.iter().all(|b| b.is_const())) {
        return Word::constant(sum as u32);
    }
    let max = ops.len() as u64 * u64::from(u32::MAX);
    let width = 64 - max.leading_zeros() as usize;
    let mut out = [Const(false); 32];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = alloc(sink, (sum >> i) & 1 == 1);
    }
    for i in 32..width {
        alloc(sink, (sum >> i) & 1 == 1);
    }
    eq.enforce_equal(sink, width);
    Word(out)
}

const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// A working variable the gadget sums only when it is used: either known, or the operands
/// of its sum.
enum Maybe {
    Concrete(Word),
    Deferred(Vec<Word>),
}

impl Maybe {
    fn compute(self, sink: &mut impl Sink, eq: &mut MultiEq, others: &[Word]) -> Word {
        match self {
            Maybe::Concrete(w) => w,
            Maybe::Deferred(mut ops) => {
                ops.extend_from_slice(others);
                addmany(sink, eq, &ops)
            }
        }
    }
}

/// `sha256_compression_function`: one 512-bit block into the chaining value `cv`.
fn compress(sink: &mut impl Sink, block: &[Bit], cv: &[Word; 8]) -> [Word; 8] {
    debug_assert_eq!(block.len(), 512);
    let mut w: Vec<Word> = block.chunks(32).map(Word::from_bits_be).collect();
    let mut eq = MultiEq { bits_used: 0 };
    for i in 16..64 {
        let s0 = w[i - 15].rotr(7).xor(sink, &w[i - 15].rotr(18));
        let s0 = s0.xor(sink, &w[i - 15].shr(3));
        let s1 = w[i - 2].rotr(17).xor(sink, &w[i - 2].rotr(19));
        let s1 = s1.xor(sink, &w[i - 2].shr(10));
        let next = addmany(sink, &mut eq, &[w[i - 16], s0, w[i - 7], s1]);
        w.push(next);
    }
    let mut a = Maybe::Concrete(cv[0]);
    let (mut b, mut c, mut d) = (cv[1], cv[2], cv[3]);
    let mut e = Maybe::Concrete(cv[4]);
    let (mut f, mut g, mut h) = (cv[5], cv[6], cv[7]);
    for (i, &k) in ROUND_CONSTANTS.iter().enumerate() {
        let new_e = e.compute(sink, &mut eq, &[]);
        let s1 = new_e.rotr(6).xor(sink, &new_e.rotr(11));
        let s1 = s1.xor(sink, &new_e.rotr(25));
        let ch = Word::triop(sink, &new_e, &f, &g, ch);
        let temp1 = [h, s1, ch, Word::constant(k), w[i]];
        let new_a = a.compute(sink, &mut eq, &[]);
        let s0 = new_a.rotr(2).xor(sink, &new_a.rotr(13));
        let s0 = s0.xor(sink, &new_a.rotr(22));
        let maj = Word::triop(sink, &new_a, &b, &c, maj);
        h = g;
        g = f;
        f = new_e;
        e = Maybe::Deferred(temp1.iter().copied().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Maybe::Deferred(temp1.iter().copied().chain([s0, maj]).collect());
    }
    let h0 = a.compute(sink, &mut eq, &[cv[0]]);
    let h1 = addmany(sink, &mut eq, &[cv[1], b]);
    let h2 = addmany(sink, &mut eq, &[cv[2], c]);
    let h3 = addmany(sink, &mut eq, &[cv[3], d]);
    let h4 = e.compute(sink, &mut eq, &[cv[4]]);
    let h5 = addmany(sink, &mut eq, &[cv[5], f]);
    let h6 = addmany(sink, &mut eq, &[cv[6], g]);
    let h7 = addmany(sink, &mut eq, &[cv[7], h]);
    eq.finish(sink);
    [h0, h1, h2, h3, h4, h5, h6, h7]
}

/// The gadget's `sha256`: `input` (a whole number of bytes) padded, compressed block by block
/// from the IV; the digest's 256 bits, most significant first in each word.
pub(crate) fn sha256(sink: &mut impl Sink, input: &[Bit]) -> Vec<Bit> {
    debug_assert_eq!(input.len() % 8, 0);
    let mut padded = input.to_vec();
    let len = padded.len() as u64;
    padded.push(Const(true));
    while (padded.len() + 64) % 512 != 0 {
        padded.push(Const(false));
    }
    padded.extend((0..64).rev().map(|i| Const((len >> i) & 1 == 1)));
    let mut cv = IV.map(Word::constant);
    for block in padded.chunks(512) {
        cv = compress(sink, block, &cv);
    }
    cv.iter().flat_map(|w| w.0.iter().rev().copied()).collect()
}

/// A field element's `NUM_BITS` bits, least significant first (`AllocatedNum::to_bits_le`'s
/// values).
pub(crate) fn le_bits(v: &Fr) -> Vec<bool> {
    v.to_le_bits()
        .into_iter()
        .take(Fr::NUM_BITS as usize)
        .collect()
}

/// `reverse_bit_numbering`: padded to whole bytes with constant zeros, each byte's bits
/// reversed.
pub(crate) fn reverse_bit_numbering(mut bits: Vec<Bit>) -> Vec<Bit> {
    while bits.len() % 8 != 0 {
        bits.push(Const(false));
    }
    for byte in bits.chunks_mut(8) {
        byte.reverse();
    }
    bits
}

/// `multipack::pack_bits`'s value: the first `CAPACITY` bits, least significant first.
pub(crate) fn pack(bits: &[Bit]) -> Result<Fr, SynthesisError> {
    let mut repr = [0u8; 32];
    for (i, b) in bits.iter().take(Fr::CAPACITY as usize).enumerate() {
        repr[i / 8] |= u8::from(b.value()) << (i % 8);
    }
    Option::from(Fr::from_repr(repr)).ok_or(SynthesisError::Unsatisfiable)
}

/// filecoin-hashers' SHA-256 `hash2_circuit` (and `hash_multi_leaf_circuit` of two leaves):
/// both values' bit decompositions (255 bits and one constraint each), the SHA-256 of their
/// 64 bytes, the digest packed (one allocation, one constraint). Returns the packed hash.
pub(crate) fn sha256_hash2(w: &mut NativeWitness<'_>, a: Fr, b: Fr) -> Result<Fr, SynthesisError> {
    let mut input = Vec::with_capacity(512);
    for half in [a, b] {
        let le = le_bits(&half);
        for &bit in &le {
            w.bit(bit);
        }
        w.constraints(1);
        input.extend(reverse_bit_numbering(le.into_iter().map(Is).collect()));
    }
    let h = pack(&reverse_bit_numbering(sha256(w, &input)))?;
    w.push(h);
    w.add_constraints(1);
    Ok(h)
}

/// One level of a binary SHA-256 Merkle path (`insert_2`'s two `pick`s, then the pair's
/// hash): `cur` with its `sibling`, `cur` on the right when `right`.
pub(crate) fn sha256_level(
    w: &mut NativeWitness<'_>,
    cur: Fr,
    sibling: Fr,
    right: bool,
) -> Result<Fr, SynthesisError> {
    let (l, r) = if right {
        (sibling, cur)
    } else {
        (cur, sibling)
    };
    w.push(l);
    w.push(r);
    w.add_constraints(2);
    sha256_hash2(w, l, r)
}

#[cfg(test)]
mod tests;
