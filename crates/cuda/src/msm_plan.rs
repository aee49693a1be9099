//! Host-side planning of the split MSMs: every assignment is classified as 0 (skipped), 1
//! (its base is batch-added on the device) or other (a Pippenger MSM over just those), and
//! mapped from variable space into each query's base space (inputs first, then the aux
//! variables in the query's density).
//!
//! The classes are a compact witness's own ([`CompactAux`]: a witness-only recording holds
//! its aux that way); a full assignment is converted first. About 92% of a Filecoin PoRep
//! witness is 0 or 1, so the Pippenger part shrinks ~12×.
use cuzk_groth16::{CompactAux, Density, ProveError, Scalar};
use ff::Field;
use rayon::prelude::*;

/// One MSM, split: `Σ_{bit i of ones} base_i + Σ_k scalars_k · base_{idx_k}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryPlan {
    /// Number of bases of the query (the length of its SRS section).
    pub nbases: usize,
    /// Bitmap over the bases whose scalar is 1 (`nbases` bits, 64 a word, LSB first).
    pub ones: Vec<u64>,
    /// Bases whose scalar is neither 0 nor 1, ascending.
    pub idx: Vec<u32>,
    /// Their scalars.
    pub scalars: Vec<Scalar>,
}

impl QueryPlan {
    /// Number of bases batch-added (scalar 1).
    pub fn ones_count(&self) -> usize {
        self.ones.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Evaluates the plan on the host (slow; the oracle for tests).
    pub fn eval<G, A>(&self, bases: &[A]) -> G
    where
        G: group::Group<Scalar = Scalar> + From<A>,
        A: Copy,
    {
        let mut acc = G::identity();
        for (w, &word) in self.ones.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let j = bits.trailing_zeros() as usize;
                acc += G::from(bases[w * 64 + j]);
                bits &= bits - 1;
            }
        }
        for (&i, s) in self.idx.iter().zip(&self.scalars) {
            acc += G::from(bases[i as usize]) * s;
        }
        acc
    }
}

/// The split plans of one partition: L (all aux), A and B (inputs + aux in the density).
/// B's plan serves both B in G1 and B in G2.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProvePlan {
    /// Σ aux_i · L_i.
    pub l: QueryPlan,
    /// Σ over inputs and A-dense aux of assignment · A.
    pub a: QueryPlan,
    /// Σ over B-dense inputs and aux of assignment · B.
    pub b: QueryPlan,
}

impl ProvePlan {
    /// Checks the plans against `bound` ([`cuzk_groth16::Srs::free_values_bound`]): the
    /// VRAM a device keeps beside a pinned SRS covers that many full scalars a query. A
    /// witness with more does not satisfy its circuit (some value its constraints hold to 0 or
    /// 1 is neither): its partition fails with a typed error of its own, never the device's.
    pub fn check_free_values(&self, bound: Option<usize>) -> Result<(), ProveError> {
        let Some(bound) = bound else {
            return Ok(());
        };
        let most = [&self.l, &self.a, &self.b]
            .iter()
            .map(|q| q.idx.len())
            .max()
            .unwrap_or(0);
        if most > bound {
            return Err(ProveError::ShapeMismatch {
                what: "values neither 0 nor 1 in one query (the circuit allows at most)",
                expected: bound,
                got: most,
            });
        }
        Ok(())
    }
}

/// Aux variables per parallel work item (a multiple of 64; small in tests so they cross
/// chunk boundaries cheaply).
#[cfg(not(test))]
const CHUNK: usize = 1 << 16;
#[cfg(test)]
const CHUNK: usize = 1 << 8;

/// Per-aux-variable classification, as bitmaps (a compact witness's own), with the values
/// neither 0 nor 1.
struct Classes<'a> {
    /// Number of aux variables.
    len: usize,
    /// Scalar is 1.
    one: &'a [u64],
    /// Scalar is neither 0 nor 1.
    other: &'a [u64],
    /// Those scalars, in order.
    values: &'a [Scalar],
    /// How many of them lie before each chunk of [`CHUNK`] variables.
    ranks: Vec<usize>,
}

fn classes(aux: &CompactAux) -> Classes<'_> {
    let counts: Vec<usize> = aux
        .others()
        .par_chunks(CHUNK / 64)
        .map(|c| c.iter().map(|w| w.count_ones() as usize).sum())
        .collect();
    let mut ranks = Vec::with_capacity(counts.len());
    let mut acc = 0;
    for c in counts {
        ranks.push(acc);
        acc += c;
    }
    Classes {
        len: aux.len(),
        one: aux.ones(),
        other: aux.others(),
        values: aux.values(),
        ranks,
    }
}

/// Bits of `x` at the positions set in `mask`, packed to the bottom (BMI2's PEXT).
fn pext(x: u64, mask: u64) -> u64 {
    if mask == u64::MAX {
        return x;
    }
    let (mut m, mut r, mut k) = (mask, 0u64, 0u32);
    while m != 0 {
        let t = m & m.wrapping_neg();
        if x & t != 0 {
            r |= 1 << k;
        }
        k += 1;
        m ^= t;
    }
    r
}

/// ORs `len` (≤ 64) low bits of `bits` into `out` at bit offset `at`.
fn put_bits(out: &mut [u64], at: usize, bits: u64, len: u32) {
    if len == 0 || bits == 0 {
        return;
    }
    let (w, o) = (at / 64, (at % 64) as u32);
    out[w] |= bits << o;
    if o != 0 && o + len > 64 {
        out[w + 1] |= bits >> (64 - o);
    }
}

fn check_density(d: &Density, len: usize, what: &'static str) -> Result<(), ProveError> {
    if d.len != len {
        return Err(ProveError::ShapeMismatch {
            what,
            expected: len,
            got: d.len,
        });
    }
    if d.words.len() < len.div_ceil(64) {
        return Err(ProveError::ShapeMismatch {
            what,
            expected: len.div_ceil(64),
            got: d.words.len(),
        });
    }
    Ok(())
}

/// Plans one query over the aux variables in `density` (all when `None`), after `prefix`
/// (base index, scalar) pairs for the inputs.
/// The bits of word `w` that lie below `len` (the last word's tail is partial).
fn tail_mask(len: usize, w: usize) -> u64 {
    let rem = len - w * 64;
    if rem >= 64 {
        u64::MAX
    } else {
        (1u64 << rem) - 1
    }
}

fn plan_query(
    classes: &Classes<'_>,
    density: Option<&Density>,
    prefix: Vec<(u32, Scalar)>,
    ninputs_in_query: usize,
) -> QueryPlan {
    let nwords = classes.len.div_ceil(64);
    let tail_mask = |w: usize| tail_mask(classes.len, w);
    let dens = |w: usize| -> u64 {
        match density {
            Some(d) => d.words[w] & tail_mask(w),
            None => tail_mask(w),
        }
    };
    // Rank of each chunk's first word in base space.
    let words_per_chunk = CHUNK / 64;
    let nchunks = nwords.div_ceil(words_per_chunk);
    let mut chunk_start = Vec::with_capacity(nchunks + 1);
    let mut acc = ninputs_in_query;
    for c in 0..nchunks {
        chunk_start.push(acc);
        let (w0, w1) = (c * words_per_chunk, ((c + 1) * words_per_chunk).min(nwords));
        acc += (w0..w1)
            .map(|w| dens(w).count_ones() as usize)
            .sum::<usize>();
    }
    let nbases = acc;

    // Pippenger entries per chunk, so every chunk fills its own slice of the output in
    // parallel (one sequential copy of ~8% of the witness cost more than the rest of planning).
    let prefix: Vec<(u32, Scalar)> = prefix
        .into_iter()
        .filter(|(_, s)| !bool::from(s.is_zero()))
        .collect();
    let chunk_words = |c: usize| (c * words_per_chunk, ((c + 1) * words_per_chunk).min(nwords));
    let counts: Vec<usize> = (0..nchunks)
        .into_par_iter()
        .map(|c| {
            let (w0, w1) = chunk_words(c);
            (w0..w1)
                .map(|w| (classes.other[w] & dens(w)).count_ones() as usize)
                .sum()
        })
        .collect();
    let total = prefix.len() + counts.iter().sum::<usize>();
    let mut idx = vec![0u32; total];
    let mut scalars: Vec<Scalar> = (0..total).into_par_iter().map(|_| Scalar::ZERO).collect();
    let (idx_pre, mut idx_rest) = idx.split_at_mut(prefix.len());
    let (sc_pre, mut sc_rest) = scalars.split_at_mut(prefix.len());
    for (k, (i, s)) in prefix.iter().enumerate() {
        idx_pre[k] = *i;
        sc_pre[k] = *s;
    }
    let mut slices = Vec::with_capacity(nchunks);
    for &n in &counts {
        let (i, ir) = std::mem::take(&mut idx_rest).split_at_mut(n);
        let (s, sr) = std::mem::take(&mut sc_rest).split_at_mut(n);
        slices.push((i, s));
        idx_rest = ir;
        sc_rest = sr;
    }
    let parts: Vec<(usize, Vec<u64>)> = slices
        .into_par_iter()
        .enumerate()
        .map(|(c, (idx, scalars))| {
            let start = chunk_start[c];
            let (w0, w1) = chunk_words(c);
            let first_word = start / 64;
            let end_bits = chunk_start.get(c + 1).copied().unwrap_or(nbases);
            let mut ones = vec![0u64; (end_bits.div_ceil(64) + 1).saturating_sub(first_word)];
            let mut k = 0;
            let mut pos = start;
            // The rank among all values neither 0 nor 1 (in the density or not) of word w's
            // first: where its values start.
            let mut rank = classes.ranks[c];
            for w in w0..w1 {
                let d = dens(w);
                let n = d.count_ones();
                put_bits(&mut ones, pos - first_word * 64, pext(classes.one[w], d), n);
                let all = classes.other[w];
                let mut ox = all & d;
                while ox != 0 {
                    let j = ox.trailing_zeros();
                    let below = (1u64 << j) - 1;
                    idx[k] = (pos + (d & below).count_ones() as usize) as u32;
                    scalars[k] = classes.values[rank + (all & below).count_ones() as usize];
                    k += 1;
                    ox &= ox - 1;
                }
                rank += all.count_ones() as usize;
                pos += n as usize;
            }
            (first_word, ones)
        })
        .collect();

    let mut ones = vec![0u64; nbases.div_ceil(64)];
    for (first_word, part) in parts {
        for (k, w) in part.iter().enumerate() {
            if *w != 0 {
                ones[first_word + k] |= *w;
            }
        }
    }
    QueryPlan {
        nbases,
        ones,
        idx,
        scalars,
    }
}

/// `q`'s plan moved `shift` bases up, after the `prefix` (base index, scalar) pairs.
fn shifted(q: &QueryPlan, prefix: Vec<(u32, Scalar)>, shift: usize) -> QueryPlan {
    let nbases = q.nbases + shift;
    let mut ones = vec![0u64; nbases.div_ceil(64)];
    let (ws, bs) = (shift / 64, (shift % 64) as u32);
    for (k, &w) in q.ones.iter().enumerate() {
        if w == 0 {
            continue;
        }
        ones[k + ws] |= w << bs;
        if bs != 0 && k + ws + 1 < ones.len() {
            ones[k + ws + 1] |= w >> (64 - bs);
        }
    }
    let prefix: Vec<(u32, Scalar)> = prefix
        .into_iter()
        .filter(|(_, s)| !bool::from(s.is_zero()))
        .collect();
    let idx: Vec<u32> = prefix
        .par_iter()
        .map(|(i, _)| *i)
        .chain(q.idx.par_iter().map(|i| i + shift as u32))
        .collect();
    let scalars: Vec<Scalar> = prefix
        .par_iter()
        .map(|(_, s)| *s)
        .chain(q.scalars.par_iter().copied())
        .collect();
    QueryPlan {
        nbases,
        ones,
        idx,
        scalars,
    }
}

/// Plans the L, A and B MSMs of one partition.
///
/// Inputs always go to the Pippenger part (there are few). Errors when a density bitmap does
/// not match the assignment's length.
pub fn plan(
    inputs: &[Scalar],
    aux: &CompactAux,
    a_aux_density: &Density,
    b_input_density: &Density,
    b_aux_density: &Density,
) -> Result<ProvePlan, ProveError> {
    check_density(a_aux_density, aux.len(), "A aux density")?;
    check_density(b_aux_density, aux.len(), "B aux density")?;
    check_density(b_input_density, inputs.len(), "B input density")?;
    if aux.len() >= u32::MAX as usize / 2 {
        return Err(ProveError::ShapeMismatch {
            what: "aux variables (u32 base indices)",
            expected: u32::MAX as usize / 2,
            got: aux.len(),
        });
    }
    let classes = classes(aux);
    let l = plan_query(&classes, None, Vec::new(), 0);
    let a_prefix: Vec<(u32, Scalar)> = inputs
        .iter()
        .enumerate()
        .map(|(i, s)| (i as u32, *s))
        .collect();
    let a = if a_aux_density
        .words
        .iter()
        .map(|w| w.count_ones() as usize)
        .sum::<usize>()
        == aux.len()
    {
        // Full A density (PoRep): A's aux part is L's plan shifted past the inputs.
        shifted(&l, a_prefix, inputs.len())
    } else {
        plan_query(&classes, Some(a_aux_density), a_prefix, inputs.len())
    };
    let mut b_prefix = Vec::new();
    for (i, s) in inputs.iter().enumerate() {
        if b_input_density.words[i / 64] >> (i % 64) & 1 == 1 {
            b_prefix.push((b_prefix.len() as u32, *s));
        }
    }
    let b_inputs = b_prefix.len();
    let b = plan_query(&classes, Some(b_aux_density), b_prefix, b_inputs);
    Ok(ProvePlan { l, a, b })
}

/// Host bytes [`plan`] holds at its peak for these assignments, counted from them without
/// building the plans: the three plans it returns (each query's bitmap of ones, and a base
/// index and a scalar for every other value, nonzero inputs included), one query's
/// per-chunk bitmaps while it is assembled (as large as its bitmap of ones), and the input
/// prefixes; with `converted`, also `aux` itself, which the caller makes from a full
/// assignment for planning only. The CUDA backend's `start` holds this beyond the circuit
/// (it pads a/b/c on the device), so a partition reserves it instead of the CPU prover's
/// padded a/b/c and converted assignments. Densities that do not match the assignments'
/// lengths are counted as full (`plan` refuses them).
pub fn host_bytes(
    inputs: &[Scalar],
    aux: &CompactAux,
    converted: bool,
    a_aux_density: &Density,
    b_input_density: &Density,
    b_aux_density: &Density,
) -> u64 {
    let (plans, transient) =
        host_bytes_parts(inputs, aux, a_aux_density, b_input_density, b_aux_density);
    let conversion = if converted {
        aux.heap_bytes() as u64
    } else {
        0
    };
    plans + transient + conversion
}

/// [`host_bytes`] as (the plans returned, what `plan` holds only while it runs), for a
/// compact witness the caller holds.
fn host_bytes_parts(
    inputs: &[Scalar],
    aux: &CompactAux,
    a_aux_density: &Density,
    b_input_density: &Density,
    b_aux_density: &Density,
) -> (u64, u64) {
    let classes = classes(aux);
    let nwords = aux.len().div_ceil(64);
    let tail = |w: usize| tail_mask(aux.len(), w);
    // (bases, other values) of the aux part of a query with this density.
    let count = |d: Option<&Density>| -> (usize, usize) {
        let d = d.filter(|d| d.words.len() == nwords);
        (0..nwords)
            .into_par_iter()
            .map(|w| {
                let dw = d.map_or(u64::MAX, |d| d.words[w]) & tail(w);
                (
                    dw.count_ones() as usize,
                    (classes.other[w] & dw).count_ones() as usize,
                )
            })
            .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1))
    };
    let nonzero = |s: &Scalar| !bool::from(s.is_zero());
    let b_dense = |i: usize| {
        b_input_density
            .words
            .get(i / 64)
            .is_none_or(|w| w >> (i % 64) & 1 == 1)
    };
    let a_inputs = inputs.iter().filter(|s| nonzero(s)).count();
    let b_inputs = (0..inputs.len()).filter(|&i| b_dense(i)).count();
    let b_inputs_nonzero = (0..inputs.len())
        .filter(|&i| b_dense(i) && nonzero(&inputs[i]))
        .count();
    let (l_bases, l_other) = count(None);
    let (a_bases, a_other) = count(Some(a_aux_density));
    let (b_bases, b_other) = count(Some(b_aux_density));
    let query = [
        (l_bases, l_other),
        (inputs.len() + a_bases, a_inputs + a_other),
        (b_inputs + b_bases, b_inputs_nonzero + b_other),
    ];
    let ones_bytes = |bases: usize| (bases.div_ceil(64) * 8) as u64;
    let entry = (std::mem::size_of::<u32>() + std::mem::size_of::<Scalar>()) as u64;
    let plans: u64 = query
        .iter()
        .map(|&(bases, entries)| ones_bytes(bases) + entries as u64 * entry)
        .sum();
    let assembling = query.iter().map(|&(b, _)| ones_bytes(b)).max().unwrap_or(0);
    let ranks = (nwords.div_ceil(CHUNK / 64) * std::mem::size_of::<usize>()) as u64;
    let prefixes = 2 * inputs.len() as u64 * (4 + entry);
    (plans, assembling + ranks + prefixes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Affine, G1Projective};
    use group::{Curve, Group};
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    fn density(rng: &mut ChaCha8Rng, len: usize, percent: u32) -> Density {
        let mut words = vec![0u64; len.div_ceil(64)];
        for i in 0..len {
            if rng.next_u32() % 100 < percent {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        Density { words, len }
    }

    fn scalar(rng: &mut ChaCha8Rng, p01: u32) -> Scalar {
        match rng.next_u32() % 100 {
            x if x < p01 / 2 => Scalar::ZERO,
            x if x < p01 => Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        }
    }

    /// Naive Σ scalar·base over the query's base space.
    fn naive(
        bases: &[G1Affine],
        inputs: &[Scalar],
        in_dens: Option<&Density>,
        aux: &[Scalar],
        dens: Option<&Density>,
    ) -> G1Projective {
        let mut scal = Vec::new();
        for (i, s) in inputs.iter().enumerate() {
            if in_dens.is_none_or(|d| d.words[i / 64] >> (i % 64) & 1 == 1) {
                scal.push(*s);
            }
        }
        for (i, s) in aux.iter().enumerate() {
            if dens.is_none_or(|d| d.words[i / 64] >> (i % 64) & 1 == 1) {
                scal.push(*s);
            }
        }
        assert_eq!(scal.len(), bases.len());
        bases
            .iter()
            .zip(&scal)
            .map(|(b, s)| G1Projective::from(b) * s)
            .sum()
    }

    #[test]
    fn plan_matches_naive_msm() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        // lengths across word and chunk boundaries, densities incl. empty and full
        for &(naux, ninputs, pa, pb, p01) in &[
            (1usize, 1usize, 100u32, 25u32, 92u32),
            (63, 2, 100, 0, 0),
            (200, 3, 50, 25, 100),
            (CHUNK + 77, 5, 100, 25, 92),
            (2 * CHUNK + 1, 4, 97, 100, 50),
            (3 * CHUNK + 5, 70, 100, 25, 92),
        ] {
            let g = G1Projective::generator();
            let mut pts = Vec::new();
            let mut acc = g;
            for _ in 0..(naux + ninputs) {
                pts.push(acc.to_affine());
                acc += g * Scalar::from(rng.next_u64());
            }
            let inputs: Vec<Scalar> = (0..ninputs).map(|_| scalar(&mut rng, p01)).collect();
            let aux: Vec<Scalar> = (0..naux).map(|_| scalar(&mut rng, p01)).collect();
            let da = density(&mut rng, naux, pa);
            let db = density(&mut rng, naux, pb);
            let dbi = density(&mut rng, ninputs, 60);
            let compact = CompactAux::from_full(&aux);
            let plan = plan(&inputs, &compact, &da, &dbi, &db).unwrap();
            // What the backend reserves for planning: the plans' own bytes counted exactly.
            let (plans, transient) = host_bytes_parts(&inputs, &compact, &da, &dbi, &db);
            let bytes = |q: &QueryPlan| 8 * q.ones.len() + 4 * q.idx.len() + 32 * q.scalars.len();
            let held = bytes(&plan.l) + bytes(&plan.a) + bytes(&plan.b);
            assert_eq!(plans, held as u64, "naux {naux} ninputs {ninputs}");
            assert!(transient >= 8 * plan.l.ones.len() as u64);
            // A full assignment converted for planning counts its compact form too.
            assert_eq!(
                host_bytes(&inputs, &compact, true, &da, &dbi, &db),
                plans + transient + compact.heap_bytes() as u64
            );
            // L's plan is the compact witness itself: its ones, its other values in order.
            assert_eq!(plan.l.ones, compact.ones());
            assert_eq!(plan.l.scalars, compact.values());

            let l_bases = &pts[..naux];
            assert_eq!(plan.l.nbases, naux);
            assert_eq!(
                plan.l.eval::<G1Projective, _>(l_bases),
                naive(l_bases, &[], None, &aux, None)
            );

            let na = ninputs
                + da.words
                    .iter()
                    .map(|w| w.count_ones() as usize)
                    .sum::<usize>();
            assert_eq!(plan.a.nbases, na);
            let a_bases = &pts[..na];
            assert_eq!(
                plan.a.eval::<G1Projective, _>(a_bases),
                naive(a_bases, &inputs, None, &aux, Some(&da))
            );

            let nb = dbi
                .words
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum::<usize>()
                + db.words
                    .iter()
                    .map(|w| w.count_ones() as usize)
                    .sum::<usize>();
            assert_eq!(plan.b.nbases, nb);
            let b_bases = &pts[..nb];
            assert_eq!(
                plan.b.eval::<G1Projective, _>(b_bases),
                naive(b_bases, &inputs, Some(&dbi), &aux, Some(&db))
            );
            // no bit beyond the bases
            if nb % 64 != 0 && !plan.b.ones.is_empty() {
                assert_eq!(plan.b.ones.last().unwrap() >> (nb % 64), 0);
            }
        }
    }

    #[test]
    fn pext_matches_bitwise_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let (x, m) = (rng.next_u64(), rng.next_u64() & rng.next_u64());
            let mut want = 0u64;
            let mut k = 0;
            for j in 0..64 {
                if m >> j & 1 == 1 {
                    want |= (x >> j & 1) << k;
                    k += 1;
                }
            }
            assert_eq!(pext(x, m), want);
        }
    }

    /// The engine asks an empty circuit whether the CUDA prover plans on the host
    /// (`ProverBackend::start_host_bytes` answers `Some`): counting it must not panic.
    #[test]
    fn an_empty_assignment_is_counted() {
        let d = Density::default();
        let bytes = host_bytes(&[], &CompactAux::from_full(&[]), true, &d, &d, &d);
        assert!(bytes < 1 << 10, "{bytes}");
    }

    #[test]
    fn density_length_mismatch_is_an_error() {
        let aux = vec![Scalar::ONE; 10];
        let d = Density {
            words: vec![u64::MAX],
            len: 9,
        };
        let ok = Density {
            words: vec![u64::MAX],
            len: 10,
        };
        let inp = Density {
            words: vec![1],
            len: 1,
        };
        assert!(matches!(
            plan(&[Scalar::ONE], &CompactAux::from_full(&aux), &d, &inp, &ok),
            Err(ProveError::ShapeMismatch { .. })
        ));
    }

    /// A witness within the circuit's bound on full scalars passes; one with a value more
    /// (a value the constraints hold to 0 or 1 that is neither) is the partition's typed
    /// error; without a bound nothing is checked.
    #[test]
    fn plans_beyond_the_circuits_free_values_are_refused() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let two = Scalar::ONE.double();
        let mut aux: Vec<Scalar> = (0..300).map(|_| scalar(&mut rng, 100)).collect();
        aux[7] = two;
        aux[200] = Scalar::random(&mut rng);
        // every aux variable in A and in B (300 = 4 · 64 + 44), both inputs in B
        let mut words = vec![u64::MAX; 4];
        words.push((1 << 44) - 1);
        let all = Density { words, len: 300 };
        let inp = Density {
            words: vec![3],
            len: 2,
        };
        let inputs = [Scalar::ONE, two];
        let p = plan(&inputs, &CompactAux::from_full(&aux), &all, &inp, &all).unwrap();
        // A and B: both inputs (full scalars whatever they are) and the two aux values
        assert_eq!((p.a.idx.len(), p.b.idx.len(), p.l.idx.len()), (4, 4, 2));
        assert!(p.check_free_values(None).is_ok());
        assert!(p.check_free_values(Some(4)).is_ok());
        match p.check_free_values(Some(3)) {
            Err(ProveError::ShapeMismatch {
                expected: 3,
                got: 4,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }
}
