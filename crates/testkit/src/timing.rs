//! TIMING-ONLY parameters and PoRep-shaped partitions for benchmarks at 2^20–2^27
//! constraints, where a real setup would take hours.
//!
//! The parameters hold valid subgroup points (successive multiples of the generators) in the
//! real layout, but no toxic waste links them: **proofs made with them DO NOT VERIFY**. Every
//! function here says so in its name or docs, and the writer puts it in the file name.
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cuzk_groth16::setup::Sections;
use cuzk_groth16::{Density, Srs, Synthesized, VerifyingKey};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;

/// Printed by every tool that makes or uses timing-only parameters.
pub const NOT_VERIFYING: &str =
    "TIMING-ONLY PARAMETERS: random points with no trusted setup behind them; proofs made with them DO NOT VERIFY";

/// The shape of a benchmark partition and of its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartitionShape {
    /// log2 of the evaluation domain; constraints + inputs = 2^log_n.
    pub log_n: u32,
    /// Public inputs including ONE.
    pub inputs: usize,
    /// Aux variables.
    pub aux: usize,
    /// Percent of aux variables in the A density.
    pub a_percent: u32,
    /// Percent of aux variables in the B density.
    pub b_percent: u32,
    /// Percent of aux values that are 0 or 1 (half each).
    pub bool_percent: u32,
}

impl PartitionShape {
    /// A Filecoin PoRep partition scaled to 2^log_n: aux ≈ constraints, A density 100%,
    /// B density 25%, 92% of aux values in {0, 1}.
    pub fn porep_like(log_n: u32) -> PartitionShape {
        let inputs = 16;
        PartitionShape {
            log_n,
            inputs,
            aux: (1usize << log_n) - inputs,
            a_percent: 100,
            b_percent: 25,
            bool_percent: 92,
        }
    }

    /// Constraints (not counting the input constraints).
    pub fn constraints(&self) -> usize {
        (1usize << self.log_n) - self.inputs
    }
}

/// Seeded per-index coin: whether aux variable `i` is in a density of `percent`.
fn in_density(seed: u64, i: usize, percent: u32) -> bool {
    if percent >= 100 {
        return true;
    }
    let x = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    ((x >> 32) % 100) < percent as u64
}

fn density(len: usize, seed: u64, percent: u32) -> Density {
    let mut words = vec![0u64; len.div_ceil(64)];
    words.par_iter_mut().enumerate().for_each(|(w, word)| {
        for j in 0..64 {
            let i = w * 64 + j;
            if i < len && in_density(seed, i, percent) {
                *word |= 1 << j;
            }
        }
    });
    Density { words, len }
}

fn popcount(d: &Density) -> usize {
    d.words.iter().map(|w| w.count_ones() as usize).sum()
}

const A_SEED: u64 = 0xA;
const B_SEED: u64 = 0xB;

/// `n` successive multiples `k·g` (k = 1..=n), generated in parallel runs.
fn multiples<G>(g: G, n: usize) -> Vec<G::AffineRepr>
where
    G: Curve + Group<Scalar = Scalar> + Send + Sync,
    G::AffineRepr: Send + Sync + Default + Copy,
{
    const RUN: usize = 1 << 14;
    let mut out = vec![G::AffineRepr::default(); n];
    out.par_chunks_mut(RUN).enumerate().for_each(|(c, chunk)| {
        let mut acc = g * Scalar::from((c * RUN + 1) as u64);
        let mut proj = Vec::with_capacity(chunk.len());
        for _ in 0..chunk.len() {
            proj.push(acc);
            acc += g;
        }
        G::batch_normalize(&proj, chunk);
    });
    out
}

/// Builds TIMING-ONLY parameters for `shape` (see the module docs: proofs DO NOT VERIFY).
/// H, L, A and B share one run of successive multiples of the G1 generator.
pub fn timing_only_srs(shape: &PartitionShape) -> Srs {
    let n = 1usize << shape.log_n;
    let nb_aux = popcount(&density(shape.aux, B_SEED, shape.b_percent));
    let na_aux = popcount(&density(shape.aux, A_SEED, shape.a_percent));
    timing_only_srs_of(&Sections {
        constraints: shape.constraints(),
        ic: shape.inputs,
        h: n - 1,
        l: shape.aux,
        a: shape.inputs + na_aux,
        b: shape.inputs + nb_aux,
    })
}

/// TIMING-ONLY parameters with exactly the section counts `s` (e.g. a real circuit's, from
/// `cuzk_groth16::setup::sections` of its blank circuit): the layout and sizes of the real
/// file, successive multiples of the generators for points. Proofs made with them DO NOT
/// VERIFY; `VerifyingKey::is_timing_only` recognises them (γ = δ = the G2 generator).
pub fn timing_only_srs_of(s: &Sections) -> Srs {
    let g1 = multiples(
        G1Projective::generator(),
        s.h.max(s.l).max(s.a).max(s.b).max(s.ic).max(5),
    );
    let g2 = multiples(G2Projective::generator(), s.b.max(1));
    let vk = VerifyingKey {
        alpha_g1: g1[1],
        beta_g1: g1[2],
        beta_g2: g2[0],
        gamma_g2: G2Affine::generator(),
        delta_g1: g1[4],
        delta_g2: G2Affine::generator(),
        ic: g1[..s.ic].to_vec(),
    };
    let h: Vec<G1Affine> = g1[..s.h].to_vec();
    let l = g1[..s.l].to_vec();
    let b_g1 = g1[..s.b].to_vec();
    let mut a = g1;
    a.truncate(s.a);
    let mut b_g2 = g2;
    b_g2.truncate(s.b);
    Srs::new(vk, h, l, a, b_g1, b_g2)
}

/// A PoRep-shaped partition for `shape` with seeded random values: a and b random, c = a·b
/// on the constraint rows; aux values 0 or 1 with `bool_percent`% probability. It matches
/// [`timing_only_srs`]'s densities.
pub fn porep_like_partition(shape: &PartitionShape, seed: u64) -> Synthesized {
    let nc = shape.constraints();
    let len = nc + shape.inputs;
    const RUN: usize = 1 << 14;
    let fill = |v: &mut Vec<Scalar>, salt: u64, f: &(dyn Fn(&mut ChaCha8Rng) -> Scalar + Sync)| {
        v.par_chunks_mut(RUN).enumerate().for_each(|(c, chunk)| {
            let mut rng =
                ChaCha8Rng::seed_from_u64(seed ^ salt ^ (c as u64).wrapping_mul(0x1000_0001));
            for x in chunk.iter_mut() {
                *x = f(&mut rng);
            }
        });
    };
    let mut a = vec![Scalar::ZERO; len];
    let mut b = vec![Scalar::ZERO; len];
    fill(&mut a, 1, &|r| Scalar::random(r));
    fill(&mut b, 2, &|r| Scalar::random(r));
    let mut c = vec![Scalar::ZERO; len];
    c[..nc]
        .par_iter_mut()
        .zip(&a[..nc])
        .zip(&b[..nc])
        .for_each(|((c, a), b)| *c = *a * b);
    // input constraints: a = input, b = c = 0
    b[nc..].iter_mut().for_each(|x| *x = Scalar::ZERO);
    let mut inputs = vec![Scalar::ONE; shape.inputs];
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 3);
    for x in inputs.iter_mut().skip(1) {
        *x = Scalar::random(&mut rng);
    }
    a[nc..].copy_from_slice(&inputs);
    let bp = shape.bool_percent as u64;
    let mut aux = vec![Scalar::ZERO; shape.aux];
    fill(&mut aux, 4, &move |r| match r.next_u64() % 100 {
        x if x < bp / 2 => Scalar::ZERO,
        x if x < bp => Scalar::ONE,
        _ => Scalar::random(r),
    });
    let b_input_density = Density {
        words: vec![u64::MAX; shape.inputs.div_ceil(64)],
        len: shape.inputs,
    };
    let mut b_input_density = b_input_density;
    if shape.inputs % 64 != 0 {
        *b_input_density.words.last_mut().expect("inputs >= 1") = (1u64 << (shape.inputs % 64)) - 1;
    }
    Synthesized {
        inputs,
        aux,
        a,
        b,
        c,
        a_aux_density: density(shape.aux, A_SEED, shape.a_percent),
        b_input_density,
        b_aux_density: density(shape.aux, B_SEED, shape.b_percent),
        num_constraints: nc,
        compact: None,
        compiled: None,
    }
}

/// Whether `srs` looks like one made by [`timing_only_srs`] (γ = δ = the G2 generator).
pub fn is_timing_only(srs: &Srs) -> bool {
    srs.vk().is_timing_only()
}

/// Suggested file name for TIMING-ONLY parameters; it says so.
pub fn timing_only_file_name(log_n: u32) -> String {
    format!("TIMING-ONLY-NOT-VERIFYING-porep-like-2^{log_n}.params")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_srs_matches_partition_shape() {
        let shape = PartitionShape::porep_like(8);
        let srs = timing_only_srs(&shape);
        let p = porep_like_partition(&shape, 1);
        assert_eq!(srs.h().len() + 1, 1 << 8);
        assert_eq!(srs.l().len(), p.aux.len());
        assert_eq!(srs.a().len(), p.inputs.len() + popcount(&p.a_aux_density));
        assert_eq!(
            srs.b_g1().len(),
            popcount(&p.b_input_density) + popcount(&p.b_aux_density)
        );
        assert_eq!(srs.b_g2().len(), srs.b_g1().len());
        assert_eq!(p.a.len(), 1 << 8);
        // successive multiples of the generator, in the subgroup
        assert_eq!(
            G1Projective::from(srs.h()[2]),
            G1Projective::generator() * Scalar::from(3u64)
        );
        assert!(bool::from(srs.b_g2()[5].is_on_curve()));
        assert!(is_timing_only(&srs));
        let bools = p
            .aux
            .iter()
            .filter(|x| **x == Scalar::ZERO || **x == Scalar::ONE)
            .count();
        assert!(bools * 100 > p.aux.len() * 80, "{bools} of {}", p.aux.len());
    }
}
