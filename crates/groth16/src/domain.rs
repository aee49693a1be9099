//! Radix-2 number-theoretic transforms over the BLS12-381 scalar field (rayon-parallel,
//! in place), their coset forms, and the Groth16 quotient H = (A·B − C)/Z computed on the
//! coset `g·⟨ω⟩` with `g = Scalar::MULTIPLICATIVE_GENERATOR`, exactly as bellperson does, so the
//! resulting coefficients (and hence proofs) are identical.
use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

/// Elements per cache-resident block: the first `log2(BLOCK)` butterfly stages run inside
/// such blocks, one block per task.
const BLOCK: usize = 1 << 12;
/// Below this many elements a pass runs on one thread.
const PAR_MIN: usize = 1 << 11;

/// A radix-2 evaluation domain of size `n = 2^log_n`.
#[derive(Clone, Debug)]
pub struct Domain {
    n: usize,
    log_n: u32,
    /// ω^j for j < n/2.
    tw: Vec<Scalar>,
    n_inv: Scalar,
    omega: Scalar,
}

/// Errors building a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DomainError {
    /// The requested size is above the field's 2-adicity (2^32).
    #[error("evaluation domain of {0} elements is larger than the field supports (2^32)")]
    TooLarge(usize),
    /// Vector lengths disagree with the domain.
    #[error("vector of length {got} does not fit a domain of {n}")]
    BadLength {
        /// Domain size.
        n: usize,
        /// Length given.
        got: usize,
    },
}

/// Powers `start·base^i` for `i < len`, computed in parallel chunks.
fn powers(base: Scalar, start: Scalar, len: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; len];
    scale_by_powers(&mut out, base, start, true);
    out
}

/// `v[i] *= start·base^i` (or `v[i] = start·base^i` when `assign`), in parallel chunks.
fn scale_by_powers(v: &mut [Scalar], base: Scalar, start: Scalar, assign: bool) {
    let chunk = (v.len() / rayon::current_num_threads().max(1)).max(PAR_MIN);
    v.par_chunks_mut(chunk).enumerate().for_each(|(k, c)| {
        let mut p = start * base.pow_vartime([(k * chunk) as u64]);
        for x in c.iter_mut() {
            if assign {
                *x = p;
            } else {
                *x *= p;
            }
            p *= base;
        }
    });
}

#[inline]
fn bitreverse(v: &mut [Scalar], log_n: u32) {
    if log_n == 0 {
        return;
    }
    let shift = usize::BITS - log_n;
    for i in 0..v.len() {
        let j = i.reverse_bits() >> shift;
        if i < j {
            v.swap(i, j);
        }
    }
}

/// Butterflies of one stage (half-size `m`) over one block `lo ‖ hi` starting at pair `j0`.
/// With `inv`, the twiddle is ω^-idx = −ω^(n/2−idx), read from the same table.
#[inline]
fn butterflies(
    lo: &mut [Scalar],
    hi: &mut [Scalar],
    tw: &[Scalar],
    stride: usize,
    j0: usize,
    inv: bool,
) {
    let half = tw.len();
    for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let idx = (j0 + j) * stride;
        if idx == 0 {
            let t = *y;
            *y = *x - t;
            *x += t;
        } else if inv {
            // t = y·ω^-idx = −y·ω^(half−idx)
            let u = *y * tw[half - idx];
            *y = *x + u;
            *x -= u;
        } else {
            let t = *y * tw[idx];
            *y = *x - t;
            *x += t;
        }
    }
}

/// In-place DIT transform of bit-reversed input with twiddle table `tw` (ω^j, j < n/2).
fn dit(v: &mut [Scalar], tw: &[Scalar], log_n: u32, inv: bool) {
    let n = v.len();
    bitreverse(v, log_n);
    // Small stages inside cache-resident blocks.
    let block = BLOCK.min(n);
    let run_small = |b: &mut [Scalar]| {
        let mut m = 1;
        while m < b.len() {
            let stride = n / (2 * m);
            for pair in b.chunks_mut(2 * m) {
                let (lo, hi) = pair.split_at_mut(m);
                butterflies(lo, hi, tw, stride, 0, inv);
            }
            m *= 2;
        }
    };
    if n >= PAR_MIN {
        v.par_chunks_mut(block).for_each(run_small);
    } else {
        v.chunks_mut(block).for_each(run_small);
    }
    // Large stages, one pass each.
    let threads = rayon::current_num_threads().max(1);
    let mut m = block;
    while m < n {
        let stride = n / (2 * m);
        let blocks = n / (2 * m);
        if blocks >= 4 * threads {
            v.par_chunks_mut(2 * m).for_each(|pair| {
                let (lo, hi) = pair.split_at_mut(m);
                butterflies(lo, hi, tw, stride, 0, inv);
            });
        } else {
            let piece = (m / (4 * threads)).max(PAR_MIN.min(m));
            for pair in v.chunks_mut(2 * m) {
                let (lo, hi) = pair.split_at_mut(m);
                lo.par_chunks_mut(piece)
                    .zip(hi.par_chunks_mut(piece))
                    .enumerate()
                    .for_each(|(k, (l, h))| butterflies(l, h, tw, stride, k * piece, inv));
            }
        }
        m *= 2;
    }
}

impl Domain {
    /// The smallest domain with at least `min_size` elements (at least 1).
    pub fn for_size(min_size: usize) -> Result<Domain, DomainError> {
        let n = min_size.max(1).next_power_of_two();
        let log_n = n.trailing_zeros();
        if log_n > Scalar::S {
            return Err(DomainError::TooLarge(min_size));
        }
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_n..Scalar::S {
            omega = omega.square();
        }
        let half = n / 2;
        let n_inv = Scalar::from(n as u64).invert().unwrap_or(Scalar::ONE);
        Ok(Domain {
            n,
            log_n,
            tw: powers(omega, Scalar::ONE, half),
            n_inv,
            omega,
        })
    }

    /// Number of points.
    pub fn size(&self) -> usize {
        self.n
    }

    /// The generator ω of the domain.
    pub fn omega(&self) -> Scalar {
        self.omega
    }

    fn check(&self, v: &[Scalar]) -> Result<(), DomainError> {
        if v.len() != self.n {
            return Err(DomainError::BadLength {
                n: self.n,
                got: v.len(),
            });
        }
        Ok(())
    }

    /// Coefficients → evaluations at ω^i.
    pub fn ntt(&self, v: &mut [Scalar]) -> Result<(), DomainError> {
        self.check(v)?;
        dit(v, &self.tw, self.log_n, false);
        Ok(())
    }

    /// Evaluations at ω^i → coefficients.
    pub fn intt(&self, v: &mut [Scalar]) -> Result<(), DomainError> {
        self.check(v)?;
        dit(v, &self.tw, self.log_n, true);
        scale_by_powers(v, Scalar::ONE, self.n_inv, false);
        Ok(())
    }

    /// Coefficients → evaluations at g·ω^i.
    pub fn coset_ntt(&self, v: &mut [Scalar]) -> Result<(), DomainError> {
        self.check(v)?;
        scale_by_powers(v, Scalar::MULTIPLICATIVE_GENERATOR, Scalar::ONE, false);
        dit(v, &self.tw, self.log_n, false);
        Ok(())
    }

    /// Evaluations at g·ω^i → coefficients.
    pub fn icoset_ntt(&self, v: &mut [Scalar]) -> Result<(), DomainError> {
        self.check(v)?;
        dit(v, &self.tw, self.log_n, true);
        scale_by_powers(v, generator_inv(), self.n_inv, false);
        Ok(())
    }

    /// Evaluations on ⟨ω⟩ → evaluations on g·⟨ω⟩ (iNTT, coset shift and NTT, with the
    /// scalings fused into one pass).
    pub fn evals_to_coset(&self, v: &mut [Scalar]) -> Result<(), DomainError> {
        self.check(v)?;
        dit(v, &self.tw, self.log_n, true);
        scale_by_powers(v, Scalar::MULTIPLICATIVE_GENERATOR, self.n_inv, false);
        dit(v, &self.tw, self.log_n, false);
        Ok(())
    }

    /// 1 / Z(g) where Z(x) = x^n − 1: Z is constant on the coset.
    pub fn z_on_coset_inv(&self) -> Scalar {
        let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([self.n as u64]) - Scalar::ONE;
        z.invert().unwrap_or(Scalar::ZERO)
    }
}

fn generator_inv() -> Scalar {
    Scalar::MULTIPLICATIVE_GENERATOR
        .invert()
        .unwrap_or(Scalar::ONE)
}

/// H's coefficients: `(A·B − C)/Z` for A, B, C given by their evaluations on the domain
/// (shorter vectors are zero-padded in place, so reserve capacity to avoid a reallocation).
/// `b` and `c` are consumed and freed early. Returns `n − 1` coefficients, where `n` is the
/// domain size, as bellperson's prover does.
///
/// Six NTTs, not seven: Z is the constant g^n − 1 on the coset g·⟨ω⟩, and the inverse
/// transform of a polynomial's n evaluations (on the domain or on the coset) is the
/// polynomial itself when its degree is below n. So with T = icoset(coset A · coset B),
/// icoset((coset A · coset B − coset C)/Z) = (T − intt c)/(g^n − 1): C's coset evaluations
/// are never made. The identity is exact for any a, b, c (`quotient_equals_seven_ntts`).
/// The CUDA backend's `h_ntt.cuh` computes the same.
pub fn quotient(
    mut a: Vec<Scalar>,
    mut b: Vec<Scalar>,
    mut c: Vec<Scalar>,
) -> Result<Vec<Scalar>, DomainError> {
    let len = a.len().max(b.len()).max(c.len());
    let domain = Domain::for_size(len)?;
    let n = domain.size();
    for v in [&mut a, &mut b, &mut c] {
        v.resize(n, Scalar::ZERO);
    }
    domain.evals_to_coset(&mut a)?;
    domain.evals_to_coset(&mut b)?;
    a.par_iter_mut()
        .with_min_len(PAR_MIN)
        .zip(b.par_iter())
        .for_each(|(x, y)| *x *= y);
    drop(b);
    // T/Z and C/Z: the division folded into each inverse transform's scaling
    let z_inv = domain.z_on_coset_inv();
    dit(&mut a, &domain.tw, domain.log_n, true);
    scale_by_powers(&mut a, generator_inv(), domain.n_inv * z_inv, false);
    dit(&mut c, &domain.tw, domain.log_n, true);
    scale_by_powers(&mut c, Scalar::ONE, domain.n_inv * z_inv, false);
    a.par_iter_mut()
        .with_min_len(PAR_MIN)
        .zip(c.par_iter())
        .for_each(|(x, y)| *x -= y);
    drop(c);
    a.truncate(n - 1);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    fn eval(coeffs: &[Scalar], x: Scalar) -> Scalar {
        coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
    }

    fn random_vec(rng: &mut ChaCha8Rng, n: usize) -> Vec<Scalar> {
        (0..n).map(|_| Scalar::random(&mut *rng)).collect()
    }

    #[test]
    fn ntt_matches_naive() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for log_n in [0u32, 1, 2, 3, 5, 8, 12, 13] {
            let n = 1usize << log_n;
            let d = Domain::for_size(n).expect("domain");
            let coeffs = random_vec(&mut rng, n);
            let mut v = coeffs.clone();
            d.ntt(&mut v).expect("ntt");
            // Naive check at a sample of points (all of them for small n).
            let omega = d.omega();
            assert_eq!(omega.pow_vartime([n as u64]), Scalar::ONE);
            let step = (n / 64).max(1);
            for i in (0..n).step_by(step) {
                assert_eq!(
                    v[i],
                    eval(&coeffs, omega.pow_vartime([i as u64])),
                    "n={n} i={i}"
                );
            }
            let mut w = v.clone();
            d.intt(&mut w).expect("intt");
            assert_eq!(w, coeffs);

            let mut cv = coeffs.clone();
            d.coset_ntt(&mut cv).expect("coset");
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            for i in (0..n).step_by(step) {
                assert_eq!(cv[i], eval(&coeffs, g * omega.pow_vartime([i as u64])));
            }
            let mut ev = v.clone();
            d.evals_to_coset(&mut ev).expect("evals_to_coset");
            assert_eq!(ev, cv);
            d.icoset_ntt(&mut cv).expect("icoset");
            assert_eq!(cv, coeffs);
        }
    }

    #[test]
    fn quotient_divides() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for len in [1usize, 2, 3, 7, 100, 1025] {
            let a = random_vec(&mut rng, len);
            let b = random_vec(&mut rng, len);
            let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
            let h = quotient(a.clone(), b.clone(), c.clone()).expect("quotient");
            let d = Domain::for_size(len).expect("domain");
            let n = d.size();
            assert_eq!(h.len(), n - 1);
            let interp = |v: &[Scalar]| {
                let mut v = v.to_vec();
                v.resize(n, Scalar::ZERO);
                d.intt(&mut v).expect("intt");
                v
            };
            let (pa, pb, pc) = (interp(&a), interp(&b), interp(&c));
            let tau = Scalar::random(&mut rng);
            let z = tau.pow_vartime([n as u64]) - Scalar::ONE;
            assert_eq!(
                eval(&h, tau) * z,
                eval(&pa, tau) * eval(&pb, tau) - eval(&pc, tau),
                "len={len}"
            );
        }
    }

    /// The six-NTT quotient equals the textbook seven (each of a, b, c to the coset, the
    /// pointwise (a·b − c)/Z there, back by icoset) for a, b, c that satisfy nothing.
    #[test]
    fn quotient_equals_seven_ntts() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        for len in [1usize, 2, 5, 64, 1000] {
            let (a, b, c) = (
                random_vec(&mut rng, len),
                random_vec(&mut rng, len),
                random_vec(&mut rng, len),
            );
            let d = Domain::for_size(len).expect("domain");
            let n = d.size();
            let coset = |v: &[Scalar]| {
                let mut v = v.to_vec();
                v.resize(n, Scalar::ZERO);
                d.intt(&mut v).expect("intt");
                d.coset_ntt(&mut v).expect("coset");
                v
            };
            let (ea, eb, ec) = (coset(&a), coset(&b), coset(&c));
            let z_inv = d.z_on_coset_inv();
            let mut h: Vec<Scalar> = (0..n).map(|i| (ea[i] * eb[i] - ec[i]) * z_inv).collect();
            d.icoset_ntt(&mut h).expect("icoset");
            h.truncate(n - 1);
            assert_eq!(quotient(a, b, c).expect("quotient"), h, "len={len}");
        }
    }

    #[test]
    fn wrong_length_is_an_error() {
        let d = Domain::for_size(8).expect("domain");
        let mut v = vec![Scalar::ONE; 7];
        assert!(d.ntt(&mut v).is_err());
    }
}
