//! Density bitmaps: which variables appear in a query (A, B over inputs and aux), so a prover
//! can skip the bases of variables that never occur.

/// A bitmap over variables: bit `i` is set when variable `i` appears in the query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    /// Bits, 64 per word, little-endian within a word.
    pub words: Vec<u64>,
    /// Number of bits in use.
    pub len: usize,
}

impl Density {
    /// `len` cleared bits.
    pub fn new(len: usize) -> Density {
        Density {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// `len` set bits.
    pub fn full(len: usize) -> Density {
        let mut d = Density::new(len);
        d.words.iter_mut().for_each(|w| *w = u64::MAX);
        if len % 64 != 0 {
            if let Some(last) = d.words.last_mut() {
                *last = (1u64 << (len % 64)) - 1;
            }
        }
        d
    }

    /// An empty bitmap with room for `cap` bits.
    pub fn with_capacity(cap: usize) -> Density {
        Density {
            words: Vec::with_capacity(cap.div_ceil(64)),
            len: 0,
        }
    }

    /// Builds a bitmap from booleans.
    pub fn from_bools(bits: impl IntoIterator<Item = bool>) -> Density {
        let mut d = Density::default();
        for b in bits {
            d.push(b);
        }
        d
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one bit.
    pub fn push(&mut self, bit: bool) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        if bit {
            self.words[self.len / 64] |= 1u64 << (self.len % 64);
        }
        self.len += 1;
    }

    /// Sets bit `i`; out-of-range indices are ignored.
    #[inline]
    pub fn set(&mut self, i: usize) {
        if i < self.len {
            self.words[i / 64] |= 1u64 << (i % 64);
        }
    }

    /// Bit `i`; out-of-range indices read as clear.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        i < self.len && (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        // Bits past `len` are never set, so whole words can be counted.
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Appends all bits of `other`.
    pub fn extend(&mut self, other: &Density) {
        self.extend_from(other, 0);
    }

    /// Appends the bits of `other` from index `start` on.
    pub fn extend_from(&mut self, other: &Density, start: usize) {
        if start >= other.len {
            return;
        }
        if start % 64 == 0 && self.len % 64 == 0 {
            // Word-aligned: copy whole words (bits past `other.len` are clear).
            self.words.extend_from_slice(&other.words[start / 64..]);
            self.len += other.len - start;
            return;
        }
        for i in start..other.len {
            self.push(other.get(i));
        }
    }

    /// Indices of the set bits, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(move |&i| self.get(i))
    }

    /// Heap bytes held (capacity-based).
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}
