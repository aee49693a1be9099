//! The compact aux assignment of a witness-only recording: values that are 0 or 1 as bits,
//! the rest as full scalars.
//!
//! Most of a Filecoin witness is bits (SHA-256's, the Merkle paths' selectors), so a
//! partition's witness shrinks from 32 bytes a value to two bits a value plus the few full
//! scalars: a 32 GiB PoRep partition's 130 M aux values from 4.2 GB to ~0.1 GB. This is the
//! form the CUDA prover uploads (its L plan), and the device expands it; a prover that needs
//! every value expands it on the host ([`CompactAux::to_full`]).
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Values per parallel work item of the conversions (a multiple of 64).
const CHUNK: usize = 1 << 16;

/// An aux assignment with its 0/1 values as bits.
///
/// Bit `i` of `ones` is set when value `i` is 1, bit `i` of `others` when it is neither 0 nor
/// 1; `values` holds those others in order. Bits at and past `len` are always clear, so two
/// equal assignments are equal structs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactAux {
    len: usize,
    ones: Vec<u64>,
    others: Vec<u64>,
    values: Vec<Scalar>,
}

impl CompactAux {
    /// An empty assignment with room for `n` values' bits (the full scalars grow as they come).
    pub fn with_capacity(n: usize) -> CompactAux {
        CompactAux {
            len: 0,
            ones: Vec::with_capacity(n.div_ceil(64)),
            others: Vec::with_capacity(n.div_ceil(64)),
            values: Vec::new(),
        }
    }

    /// An empty assignment with room for `n` values' bits and `full` full scalars. Room that
    /// is never written costs address space only (the pages of a large allocation are not
    /// touched until used).
    pub fn with_capacities(n: usize, full: usize) -> CompactAux {
        CompactAux {
            values: Vec::with_capacity(full),
            ..CompactAux::with_capacity(n)
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bitmap of the values that are 1 (`len` bits, 64 a word, LSB first).
    pub fn ones(&self) -> &[u64] {
        &self.ones
    }

    /// Bitmap of the values that are neither 0 nor 1.
    pub fn others(&self) -> &[u64] {
        &self.others
    }

    /// The values that are neither 0 nor 1, in order.
    pub fn values(&self) -> &[Scalar] {
        &self.values
    }

    /// Heap bytes held (capacity-based).
    pub fn heap_bytes(&self) -> usize {
        (self.ones.capacity() + self.others.capacity()) * 8
            + self.values.capacity() * std::mem::size_of::<Scalar>()
    }

    /// Releases spare capacity (the full scalars grow by doubling).
    pub fn shrink_to_fit(&mut self) {
        self.ones.shrink_to_fit();
        self.others.shrink_to_fit();
        self.values.shrink_to_fit();
    }

    #[inline]
    fn next_slot(&mut self) -> (usize, u64) {
        let (w, b) = (self.len / 64, self.len % 64);
        if b == 0 {
            self.ones.push(0);
            self.others.push(0);
        }
        self.len += 1;
        (w, 1u64 << b)
    }

    /// Appends a value.
    #[inline]
    pub fn push(&mut self, value: Scalar) {
        let (w, bit) = self.next_slot();
        if value == Scalar::ONE {
            self.ones[w] |= bit;
        } else if !bool::from(value.is_zero()) {
            self.others[w] |= bit;
            self.values.push(value);
        }
    }

    /// Appends a value known to be 0 or 1.
    #[inline]
    pub fn push_bit(&mut self, value: bool) {
        let (w, bit) = self.next_slot();
        if value {
            self.ones[w] |= bit;
        }
    }

    /// Number of values neither 0 nor 1 before position `at`.
    fn rank(&self, at: usize) -> usize {
        let (w, b) = (at / 64, at % 64);
        let full: usize = self.others[..w]
            .iter()
            .map(|x| x.count_ones() as usize)
            .sum();
        full + if b == 0 {
            0
        } else {
            (self.others[w] & ((1u64 << b) - 1)).count_ones() as usize
        }
    }

    /// Value `i` (`None` past the end). Counts the full scalars before it: for checks, not for
    /// loops.
    pub fn get(&self, i: usize) -> Option<Scalar> {
        if i >= self.len {
            return None;
        }
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        Some(if self.ones[w] & bit != 0 {
            Scalar::ONE
        } else if self.others[w] & bit != 0 {
            self.values[self.rank(i)]
        } else {
            Scalar::ZERO
        })
    }

    /// The values in order.
    pub fn iter(&self) -> impl Iterator<Item = Scalar> + '_ {
        let mut values = self.values.iter();
        (0..self.len).map(move |i| {
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            if self.ones[w] & bit != 0 {
                Scalar::ONE
            } else if self.others[w] & bit != 0 {
                values.next().copied().unwrap_or(Scalar::ZERO)
            } else {
                Scalar::ZERO
            }
        })
    }

    /// Keeps the first `len` values.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let keep = self.rank(len);
        self.values.truncate(keep);
        let words = len.div_ceil(64);
        self.ones.truncate(words);
        self.others.truncate(words);
        if len % 64 != 0 {
            let mask = (1u64 << (len % 64)) - 1;
            self.ones[words - 1] &= mask;
            self.others[words - 1] &= mask;
        }
        self.len = len;
    }

    /// Appends `other`'s values from position `from` on.
    pub fn append_from(&mut self, other: &CompactAux, from: usize) {
        if from >= other.len {
            return;
        }
        let n = other.len - from;
        let at = self.len;
        let words = (at + n).div_ceil(64);
        self.ones.resize(words, 0);
        self.others.resize(words, 0);
        copy_bits(&mut self.ones, at, &other.ones, from, n);
        copy_bits(&mut self.others, at, &other.others, from, n);
        self.values
            .extend_from_slice(&other.values[other.rank(from)..]);
        self.len = at + n;
    }

    /// Appends all of `other`'s values.
    pub fn append(&mut self, other: &CompactAux) {
        self.append_from(other, 0);
    }

    /// Appends every part's values in order, and frees the parts: the bits shifted into
    /// place, the full scalars copied (each part's on every core) into room reserved exactly
    /// for them, each part freed as soon as it is copied. A witness that is nearly all full
    /// scalars (WindowPoSt's) is best joined a few parts at a time (`native::units` passes a
    /// wave), so that its parts and the whole are never both held in full.
    pub fn append_all(&mut self, parts: Vec<CompactAux>) {
        let total: usize = parts.iter().map(|p| p.values.len()).sum();
        self.values.reserve_exact(total);
        let bits: usize = parts.iter().map(|p| p.len).sum();
        let words = (self.len + bits).div_ceil(64);
        self.ones
            .reserve_exact(words.saturating_sub(self.ones.len()));
        self.others
            .reserve_exact(words.saturating_sub(self.others.len()));
        for p in &parts {
            let (at, n) = (self.len, p.len);
            let words = (at + n).div_ceil(64);
            self.ones.resize(words, 0);
            self.others.resize(words, 0);
            copy_bits(&mut self.ones, at, &p.ones, 0, n);
            copy_bits(&mut self.others, at, &p.others, 0, n);
            self.len = at + n;
        }
        for p in parts {
            self.values.par_extend(p.values.par_iter().copied());
        }
    }

    /// `other`'s values from position `from` on, as an assignment of their own.
    pub fn tail(&self, from: usize) -> CompactAux {
        let mut out = CompactAux::with_capacity(self.len.saturating_sub(from));
        out.append_from(self, from);
        out
    }

    /// The first position where `self` and `other` differ (lengths included), or `None`.
    pub fn first_difference(&self, other: &CompactAux) -> Option<usize> {
        match self.iter().zip(other.iter()).position(|(a, b)| a != b) {
            Some(i) => Some(i),
            None if self.len != other.len => Some(self.len.min(other.len)),
            None => None,
        }
    }

    /// The full count of values neither 0 nor 1 before each chunk of [`CHUNK`] values, and
    /// the total at the end.
    fn chunk_ranks(&self) -> Vec<usize> {
        let counts: Vec<usize> = self
            .others
            .par_chunks(CHUNK / 64)
            .map(|c| c.iter().map(|x| x.count_ones() as usize).sum())
            .collect();
        let mut ranks = Vec::with_capacity(counts.len() + 1);
        let mut acc = 0;
        ranks.push(0);
        for c in counts {
            acc += c;
            ranks.push(acc);
        }
        ranks
    }

    /// Every value as a full scalar (on every core).
    pub fn to_full(&self) -> Vec<Scalar> {
        let mut out = Vec::new();
        self.to_full_into(&mut out);
        out
    }

    /// [`CompactAux::to_full`] into `out`'s allocation (cleared first).
    pub fn to_full_into(&self, out: &mut Vec<Scalar>) {
        out.clear();
        out.reserve_exact(self.len);
        out.par_extend(rayon::iter::repeat_n(Scalar::ZERO, self.len));
        let ranks = self.chunk_ranks();
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, dst)| {
            let mut r = ranks[c];
            for (k, slot) in dst.chunks_mut(64).enumerate() {
                let w = c * (CHUNK / 64) + k;
                let mut ones = self.ones[w];
                while ones != 0 {
                    slot[ones.trailing_zeros() as usize] = Scalar::ONE;
                    ones &= ones - 1;
                }
                let mut others = self.others[w];
                while others != 0 {
                    slot[others.trailing_zeros() as usize] = self.values[r];
                    r += 1;
                    others &= others - 1;
                }
            }
        });
    }

    /// The compact form of `full` (on every core).
    pub fn from_full(full: &[Scalar]) -> CompactAux {
        let words = full.len().div_ceil(64);
        let (mut ones, mut others) = (vec![0u64; words], vec![0u64; words]);
        let values: Vec<Vec<Scalar>> = ones
            .par_chunks_mut(CHUNK / 64)
            .zip(others.par_chunks_mut(CHUNK / 64))
            .zip(full.par_chunks(CHUNK))
            .map(|((ones, others), src)| {
                let mut values = Vec::new();
                for (k, v) in src.iter().enumerate() {
                    let bit = 1u64 << (k % 64);
                    if *v == Scalar::ONE {
                        ones[k / 64] |= bit;
                    } else if !bool::from(v.is_zero()) {
                        others[k / 64] |= bit;
                        values.push(*v);
                    }
                }
                values
            })
            .collect();
        let mut flat = Vec::with_capacity(values.iter().map(Vec::len).sum());
        for v in values {
            flat.extend_from_slice(&v);
        }
        CompactAux {
            len: full.len(),
            ones,
            others,
            values: flat,
        }
    }
}

/// Copies `n` bits of `src` from bit `src_at` into `dst` from bit `dst_at` (whose bits there
/// are clear; `dst` covers them).
fn copy_bits(dst: &mut [u64], dst_at: usize, src: &[u64], src_at: usize, n: usize) {
    let mut done = 0;
    while done < n {
        let take = (n - done).min(64);
        let bits = read_bits(src, src_at + done, take);
        let at = dst_at + done;
        let (w, o) = (at / 64, at % 64);
        dst[w] |= bits << o;
        if o != 0 && o + take > 64 {
            dst[w + 1] |= bits >> (64 - o);
        }
        done += take;
    }
}

/// `len` (1..=64) bits of `src` from bit `at`, at the bottom of a word.
fn read_bits(src: &[u64], at: usize, len: usize) -> u64 {
    let (w, o) = (at / 64, at % 64);
    let mut bits = src[w] >> o;
    if o != 0 && o + len > 64 {
        bits |= src[w + 1] << (64 - o);
    }
    if len < 64 {
        bits &= (1u64 << len) - 1;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// `n` values, about `bits` percent of them 0 or 1, the rest random.
    fn values(n: usize, bits: u32, seed: u64) -> Vec<Scalar> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                if rng.gen_range(0..100) < bits {
                    Scalar::from(rng.gen_range(0..2u64))
                } else {
                    Scalar::random(&mut rng)
                }
            })
            .collect()
    }

    fn pushed(v: &[Scalar]) -> CompactAux {
        let mut c = CompactAux::with_capacity(v.len());
        for x in v {
            c.push(*x);
        }
        c
    }

    #[test]
    fn pushed_and_converted_values_come_back_the_same() {
        for (n, bits) in [
            (0, 50),
            (1, 0),
            (63, 100),
            (64, 0),
            (65, 92),
            (3 * CHUNK + 17, 92),
        ] {
            let v = values(n, bits, n as u64);
            let c = pushed(&v);
            assert_eq!(c.len(), n);
            assert_eq!(c, CompactAux::from_full(&v), "n {n}");
            assert_eq!(c.to_full(), v, "n {n}");
            assert!(c.iter().eq(v.iter().copied()));
            for i in [0, n / 3, n.saturating_sub(1), n] {
                assert_eq!(c.get(i), v.get(i).copied(), "n {n} i {i}");
            }
            let others = v
                .iter()
                .filter(|x| **x != Scalar::ONE && !bool::from(x.is_zero()))
                .count();
            assert_eq!(c.values().len(), others);
        }
    }

    #[test]
    fn appends_tails_and_truncations_at_every_alignment_match_the_full_vectors() {
        let v = values(700, 80, 7);
        for split in [0, 1, 63, 64, 65, 130, 699, 700] {
            for from in [0, 1, 31, 64, 100, 699] {
                let mut c = pushed(&v[..split]);
                let other = pushed(&v);
                c.append_from(&other, from);
                let mut want = v[..split].to_vec();
                want.extend_from_slice(&v[from..]);
                assert_eq!(c, CompactAux::from_full(&want), "split {split} from {from}");
                assert_eq!(other.tail(from), CompactAux::from_full(&v[from..]));
                let mut t = c.clone();
                t.truncate(split);
                assert_eq!(t, CompactAux::from_full(&v[..split]));
                // Several parts at once, as the native witness joins its units.
                let mut all = pushed(&v[..split]);
                all.append_all(vec![other.tail(from), pushed(&[]), pushed(&v[..split])]);
                want.extend_from_slice(&v[..split]);
                assert_eq!(
                    all,
                    CompactAux::from_full(&want),
                    "split {split} from {from}"
                );
            }
        }
    }

    #[test]
    fn the_first_difference_is_found_and_lengths_count() {
        let v = values(300, 50, 3);
        let a = pushed(&v);
        assert_eq!(a.first_difference(&a.clone()), None);
        let mut w = v.clone();
        w[201] += Scalar::ONE;
        assert_eq!(a.first_difference(&pushed(&w)), Some(201));
        assert_eq!(a.first_difference(&pushed(&v[..250])), Some(250));
    }
}
