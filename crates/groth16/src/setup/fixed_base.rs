//! Fixed-base scalar multiplication of one generator by many scalars: signed windows over
//! precomputed tables, accumulated in affine coordinates with Montgomery's batch-inversion
//! trick (about half the field work of projective mixed additions, measured), straight into
//! affine outputs.
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rayon::prelude::*;
use std::ops::{AddAssign, Neg};

/// Scalars handled by one task: the accumulators of a batch stay in cache.
const BATCH: usize = 1024;

/// A projective group whose affine form we produce in bulk.
pub(crate) trait SetupGroup: Group + Copy + Send + Sync {
    /// The affine form.
    type Aff: Copy + Send + Sync + Neg<Output = Self::Aff> + PrimeCurveAffine;

    /// Mixed addition `self += p` (the projective method, kept for the timing comparison).
    #[cfg(test)]
    fn add_affine(&mut self, p: &Self::Aff);

    /// Normalizes `src` into `dst` (same length) with one inversion.
    fn normalize_batch(src: &[Self], dst: &mut [Self::Aff]);

    /// `acc[idx[j]] += add[j]` for every `j`, in affine coordinates with one shared
    /// inversion. Accumulators flagged `empty` are the identity; the caller never passes them.
    fn batch_add_affine(acc: &mut [Self::Aff], empty: &mut [bool], idx: &[u32], add: &[Self::Aff]);
}

/// Montgomery's trick over the Z coordinates, skipping the identity (Z = 0).
/// blst keeps points in Jacobian coordinates: x = X/Z², y = Y/Z³. Generic over the
/// coordinate field, which blstrs does not let us name (`Fp`, `Fp2` are private there).
fn normalize_jacobian<P, A: Copy, F: Field>(
    src: &[P],
    dst: &mut [A],
    xyz: impl Fn(&P) -> (F, F, F),
    affine: impl Fn(F, F) -> A,
    identity: A,
) {
    debug_assert_eq!(src.len(), dst.len());
    let mut prefix: Vec<F> = Vec::with_capacity(src.len());
    let mut acc = F::ONE;
    for p in src {
        prefix.push(acc);
        let (_, _, z) = xyz(p);
        if !bool::from(z.is_zero()) {
            acc *= z;
        }
    }
    // `acc` is a product of non-zero field elements, so it is invertible.
    let mut inv = Option::<F>::from(acc.invert()).unwrap_or(F::ONE);
    for i in (0..src.len()).rev() {
        let (x, y, z) = xyz(&src[i]);
        if bool::from(z.is_zero()) {
            dst[i] = identity;
            continue;
        }
        let zinv = inv * prefix[i];
        inv *= z;
        let zinv2 = zinv.square();
        dst[i] = affine(x * zinv2, y * zinv2 * zinv);
    }
}

macro_rules! setup_group {
    ($proj:ty, $aff:ty) => {
        impl SetupGroup for $proj {
            type Aff = $aff;

            #[cfg(test)]
            fn add_affine(&mut self, p: &Self::Aff) {
                self.add_assign(p);
            }

            fn normalize_batch(src: &[Self], dst: &mut [Self::Aff]) {
                normalize_jacobian(
                    src,
                    dst,
                    |p| (p.x(), p.y(), p.z()),
                    |x, y| <$aff>::from_raw_unchecked(x, y, false),
                    <$aff>::identity(),
                );
            }

            fn batch_add_affine(
                acc: &mut [Self::Aff],
                empty: &mut [bool],
                idx: &[u32],
                add: &[Self::Aff],
            ) {
                add_affine_batch(
                    acc,
                    empty,
                    idx,
                    add,
                    |p| (p.x(), p.y()),
                    |x, y| <$aff>::from_raw_unchecked(x, y, false),
                    |p, q| {
                        let mut s = p.to_curve();
                        s.add_assign(q);
                        s.to_affine()
                    },
                );
            }
        }
    };
}

/// Affine additions sharing one inversion (Montgomery's trick over x2 − x1). Pairs with
/// equal x (a doubling, or a sum that is the identity) are rare and take the projective path.
fn add_affine_batch<A: Copy + PrimeCurveAffine, F: Field>(
    acc: &mut [A],
    empty: &mut [bool],
    idx: &[u32],
    add: &[A],
    xy: impl Fn(&A) -> (F, F),
    affine: impl Fn(F, F) -> A,
    slow_add: impl Fn(&A, &A) -> A,
) {
    let n = idx.len();
    let mut den: Vec<F> = Vec::with_capacity(n);
    let mut prefix: Vec<F> = Vec::with_capacity(n);
    let mut prod = F::ONE;
    for (&i, q) in idx.iter().zip(add) {
        let (x1, _) = xy(&acc[i as usize]);
        let (x2, _) = xy(q);
        let d = x2 - x1;
        prefix.push(prod);
        den.push(d);
        if !bool::from(d.is_zero()) {
            prod *= d;
        }
    }
    let mut inv = Option::<F>::from(prod.invert()).unwrap_or(F::ONE);
    for j in (0..n).rev() {
        let i = idx[j] as usize;
        let q = &add[j];
        let d = den[j];
        if bool::from(d.is_zero()) {
            let sum = slow_add(&acc[i], q);
            empty[i] = bool::from(sum.is_identity());
            acc[i] = sum;
            continue;
        }
        let dinv = inv * prefix[j];
        inv *= d;
        let (x1, y1) = xy(&acc[i]);
        let (x2, y2) = xy(q);
        let lambda = (y2 - y1) * dinv;
        let x3 = lambda.square() - x1 - x2;
        let y3 = lambda * (x1 - x3) - y1;
        acc[i] = affine(x3, y3);
    }
}

setup_group!(G1Projective, G1Affine);
setup_group!(G2Projective, G2Affine);

/// Precomputed multiples of one generator: for window `k` and digit `d` in `1..=2^(w-1)`,
/// `table[k * half + d - 1] = d · 2^(w·k) · G`. A scalar in signed base-2^w digits then costs
/// one mixed addition per non-zero digit.
pub(crate) struct FixedBase<G: SetupGroup> {
    window: usize,
    windows: usize,
    table: Vec<G::Aff>,
}

/// The window width that minimizes table building plus `n` multiplications.
pub(crate) fn best_window(n: usize) -> usize {
    (2..=16usize)
        .min_by_key(|&w| {
            let windows = 256usize.div_ceil(w);
            // Table entries cost about one addition plus a share of normalization each.
            n.saturating_mul(windows)
                .saturating_add(windows * (1usize << (w - 1)) * 3 / 2)
        })
        .unwrap_or(8)
}

impl<G: SetupGroup> FixedBase<G> {
    /// Builds the tables for `generator` with `window`-bit signed digits.
    pub(crate) fn new(generator: G, window: usize) -> Self {
        let window = window.clamp(2, 16);
        // 256 bits cover every scalar (< r < 2^255) with the carry out of the top window
        // absorbed: the top window's value is below 2^(w-1), so value + carry <= 2^(w-1).
        let windows = 256usize.div_ceil(window);
        let half = 1usize << (window - 1);
        let mut bases = Vec::with_capacity(windows);
        let mut base = generator;
        for _ in 0..windows {
            bases.push(base);
            for _ in 0..window {
                base = base.double();
            }
        }
        let mut table = vec![G::Aff::identity(); windows * half];
        table
            .par_chunks_mut(half)
            .zip(bases.par_iter())
            .for_each(|(slab, base)| {
                let mut proj = Vec::with_capacity(half);
                let mut acc = *base;
                proj.push(acc);
                for _ in 1..half {
                    acc += base;
                    proj.push(acc);
                }
                G::normalize_batch(&proj, slab);
            });
        FixedBase {
            window,
            windows,
            table,
        }
    }

    /// The table (see the type's docs).
    pub(crate) fn into_table(self) -> Vec<G::Aff> {
        self.table
    }

    /// `out[i] = scalars[i] · G` in affine form, in parallel.
    pub(crate) fn mul_many(&self, scalars: &[Scalar], out: &mut [G::Aff]) {
        debug_assert_eq!(scalars.len(), out.len());
        out.par_chunks_mut(BATCH)
            .zip(scalars.par_chunks(BATCH))
            .for_each(|(out, scalars)| self.mul_batch(scalars, out));
    }

    fn mul_batch(&self, scalars: &[Scalar], out: &mut [G::Aff]) {
        let n = scalars.len();
        let windows = self.windows;
        let half = 1usize << (self.window - 1);
        let mut digits = vec![0i32; n * windows];
        for (s, d) in scalars.iter().zip(digits.chunks_exact_mut(windows)) {
            self.recode(s, d);
        }
        let mut acc = vec![G::Aff::identity(); n];
        let mut empty = vec![true; n];
        let mut idx: Vec<u32> = Vec::with_capacity(n);
        let mut add: Vec<G::Aff> = Vec::with_capacity(n);
        // Window-major: one table slab at a time stays hot in cache.
        for k in 0..windows {
            let slab = &self.table[k * half..(k + 1) * half];
            idx.clear();
            add.clear();
            for (i, d) in digits.chunks_exact(windows).enumerate() {
                let d = d[k];
                if d == 0 {
                    continue;
                }
                let q = if d > 0 {
                    slab[(d - 1) as usize]
                } else {
                    -slab[(-d - 1) as usize]
                };
                if empty[i] {
                    acc[i] = q;
                    empty[i] = false;
                } else {
                    idx.push(i as u32);
                    add.push(q);
                }
            }
            G::batch_add_affine(&mut acc, &mut empty, &idx, &add);
        }
        out.copy_from_slice(&acc);
    }

    /// Signed base-2^w digits of `s`, each in `-2^(w-1)..=2^(w-1)`, least significant first.
    fn recode(&self, s: &Scalar, digits: &mut [i32]) {
        let bytes = s.to_bytes_le();
        let mut limbs = [0u64; 4];
        for (l, c) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            *l = u64::from_le_bytes(b);
        }
        let w = self.window;
        let half = 1i64 << (w - 1);
        let mut carry = 0i64;
        for (k, d) in digits.iter_mut().enumerate() {
            let bit = k * w;
            let limb = bit / 64;
            let shift = bit % 64;
            let mut v = limbs[limb] >> shift;
            if shift + w > 64 && limb + 1 < 4 {
                v |= limbs[limb + 1] << (64 - shift);
            }
            let mut v = (v & ((1u64 << w) - 1)) as i64 + carry;
            if v > half {
                v -= 1i64 << w;
                carry = 1;
            } else {
                carry = 0;
            }
            *d = v as i32;
        }
        debug_assert_eq!(carry, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Curve;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    fn check<G>(window: usize)
    where
        G: SetupGroup
            + Curve<AffineRepr = <G as SetupGroup>::Aff>
            + std::ops::Mul<Scalar, Output = G>,
        G::Aff: PartialEq + std::fmt::Debug,
    {
        let mut rng = ChaCha8Rng::seed_from_u64(window as u64);
        let g = G::random(&mut rng);
        let fb = FixedBase::new(g, window);
        let mut scalars: Vec<Scalar> = (0..300).map(|_| Scalar::random(&mut rng)).collect();
        scalars[7] = Scalar::ZERO;
        scalars[8] = Scalar::ONE;
        scalars[9] = -Scalar::ONE;
        let mut out = vec![G::Aff::identity(); scalars.len()];
        fb.mul_many(&scalars, &mut out);
        for (s, o) in scalars.iter().zip(&out) {
            assert_eq!((g * *s).to_affine(), *o, "window {window}");
        }
    }

    #[test]
    fn fixed_base_matches_scalar_mul_g1() {
        for w in [2, 3, 5, 8, 11, 16] {
            check::<G1Projective>(w);
        }
    }

    #[test]
    fn fixed_base_matches_scalar_mul_g2() {
        for w in [4, 7, 13] {
            check::<G2Projective>(w);
        }
    }

    #[test]
    fn batch_affine_add_handles_doubling_and_cancellation() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let p: Vec<G1Affine> = (0..4)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        let mut acc = p.clone();
        let mut empty = vec![false; 4];
        // acc0 + acc0 (doubling), acc1 + (-acc1) (identity), acc2 + p3 (generic); acc3 untouched.
        let add = [p[0], -p[1], p[3]];
        G1Projective::batch_add_affine(&mut acc, &mut empty, &[0, 1, 2], &add);
        assert_eq!(acc[0], (p[0].to_curve() + p[0]).to_affine());
        assert!(bool::from(acc[1].is_identity()));
        assert_eq!(empty, vec![false, true, false, false]);
        assert_eq!(acc[2], (p[2].to_curve() + p[3]).to_affine());
        assert_eq!(acc[3], p[3]);
    }

    #[test]
    fn best_window_grows_with_n() {
        assert!(best_window(10) < best_window(1 << 20));
        assert!(best_window(1 << 24) <= 16);
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// CPU time of this thread in ns (first field of /proc/thread-self/schedstat).
    fn cpu_ns() -> u64 {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    impl<G: SetupGroup> FixedBase<G> {
        /// The plain projective method (mixed additions), for comparison.
        fn mul_batch_projective(&self, scalars: &[Scalar], out: &mut [G::Aff]) {
            let windows = self.windows;
            let half = 1usize << (self.window - 1);
            let mut digits = vec![0i32; scalars.len() * windows];
            for (s, d) in scalars.iter().zip(digits.chunks_exact_mut(windows)) {
                self.recode(s, d);
            }
            let mut acc = vec![G::identity(); scalars.len()];
            for k in 0..windows {
                let slab = &self.table[k * half..(k + 1) * half];
                for (a, d) in acc.iter_mut().zip(digits.chunks_exact(windows)) {
                    let d = d[k];
                    if d > 0 {
                        a.add_affine(&slab[(d - 1) as usize]);
                    } else if d < 0 {
                        a.add_affine(&-slab[(-d - 1) as usize]);
                    }
                }
            }
            G::normalize_batch(&acc, out);
        }
    }

    fn compare<G: SetupGroup>(name: &str, w: usize, n: usize)
    where
        G::Aff: PartialEq + std::fmt::Debug,
    {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let fb = FixedBase::<G>::new(G::random(&mut rng), w);
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let mut a = vec![G::Aff::identity(); n];
        let mut b = vec![G::Aff::identity(); n];
        let t = cpu_ns();
        for (s, o) in scalars.chunks(BATCH).zip(a.chunks_mut(BATCH)) {
            fb.mul_batch(s, o);
        }
        let affine = cpu_ns() - t;
        let t = cpu_ns();
        for (s, o) in scalars.chunks(BATCH).zip(b.chunks_mut(BATCH)) {
            fb.mul_batch_projective(s, o);
        }
        let proj = cpu_ns() - t;
        assert_eq!(a, b);
        println!(
            "{name} w={w}: batch-affine {:.2} us/mul, projective {:.2} us/mul (CPU time)",
            affine as f64 / n as f64 / 1e3,
            proj as f64 / n as f64 / 1e3
        );
    }

    #[test]
    #[ignore = "measurement"]
    fn time_fixed_base_methods() {
        compare::<G1Projective>("G1", 16, 1 << 14);
        compare::<G1Projective>("G1", 12, 1 << 14);
        compare::<G2Projective>("G2", 16, 1 << 12);
    }
}
