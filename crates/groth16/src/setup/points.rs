//! What makes a setup's points: fixed-base multiples `s·G` of a group generator, encoded as a
//! `.params` file holds them (uncompressed affine, 96 bytes in G1, 192 in G2). The CPU does it
//! with signed-window tables ([`CpuPoints`]); a GPU backend implements [`PointMaker`] too
//! (`cuzk-cuda`), and every point is the same whichever makes it: affine coordinates are
//! unique.
use super::fixed_base::FixedBase;
use crate::error::Error;
use crate::params::wire::WirePoint;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::prime::PrimeCurveAffine;
use group::Group;
use rayon::prelude::*;

/// Bytes of an encoded G1 point.
pub const G1_BYTES: usize = 96;
/// Bytes of an encoded G2 point.
pub const G2_BYTES: usize = 192;

/// Makes encoded fixed-base multiples of the generators of G1 and G2.
pub trait PointMaker: Send + Sync {
    /// What does the work, for logs (`CPU (16 threads)`, `CUDA device 0`).
    fn name(&self) -> String;

    /// Scalars per call that keep it busy (the caller may pass fewer, never more).
    fn batch(&self) -> usize;

    /// Writes the encoding of `scalars[i]·G1` into `out[96·i..96·(i + 1)]`;
    /// `out.len() == 96·scalars.len()`.
    fn g1(&self, scalars: &[Scalar], out: &mut [u8]) -> Result<(), Error>;

    /// Writes the encoding of `scalars[i]·G2` into `out[192·i..192·(i + 1)]`;
    /// `out.len() == 192·scalars.len()`.
    fn g2(&self, scalars: &[Scalar], out: &mut [u8]) -> Result<(), Error>;
}

/// [`PointMaker`] on every core: 16-bit signed windows over tables of the generators, batched
/// affine additions (the method of the in-memory setup).
pub struct CpuPoints {
    g1: FixedBase<G1Projective>,
    g2: FixedBase<G2Projective>,
}

/// Scalars per call of [`CpuPoints`]: a few MiB of points a thread.
const CPU_BATCH: usize = 1 << 20;

impl CpuPoints {
    /// Builds the generators' tables (16-bit windows: ~50 MB in G1, ~100 MB in G2, a second
    /// or two on 16 cores).
    pub fn new() -> CpuPoints {
        CpuPoints {
            g1: FixedBase::new(G1Projective::generator(), 16),
            g2: FixedBase::new(G2Projective::generator(), 16),
        }
    }
}

impl Default for CpuPoints {
    fn default() -> Self {
        CpuPoints::new()
    }
}

fn encode_all<P: WirePoint>(points: &[P], out: &mut [u8]) {
    out.par_chunks_exact_mut(P::SIZE)
        .zip(points.par_iter())
        .for_each(|(o, p)| p.encode(o));
}

impl PointMaker for CpuPoints {
    fn name(&self) -> String {
        format!("CPU ({} threads)", rayon::current_num_threads())
    }

    fn batch(&self) -> usize {
        CPU_BATCH
    }

    fn g1(&self, scalars: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        debug_assert_eq!(out.len(), G1_BYTES * scalars.len());
        let mut points = vec![G1Affine::identity(); scalars.len()];
        self.g1.mul_many(scalars, &mut points);
        encode_all(&points, out);
        Ok(())
    }

    fn g2(&self, scalars: &[Scalar], out: &mut [u8]) -> Result<(), Error> {
        debug_assert_eq!(out.len(), G2_BYTES * scalars.len());
        let mut points = vec![G2Affine::identity(); scalars.len()];
        self.g2.mul_many(scalars, &mut points);
        encode_all(&points, out);
        Ok(())
    }
}

/// The window table a device's fixed-base method uploads for G1's generator:
/// `table[k·2^(w−1) + d − 1] = d·2^(w·k)·G` for the `⌈256/w⌉` windows `k` of `window` bits
/// and the digits `d` in `1..=2^(w−1)` (the CPU method's own table).
pub fn g1_window_table(window: usize) -> Vec<G1Affine> {
    FixedBase::new(G1Projective::generator(), window).into_table()
}

/// [`g1_window_table`] for G2's generator.
pub fn g2_window_table(window: usize) -> Vec<G2Affine> {
    FixedBase::new(G2Projective::generator(), window).into_table()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Curve;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    #[test]
    fn cpu_points_are_the_encoded_multiples_of_the_generators() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut s: Vec<Scalar> = (0..70).map(|_| Scalar::random(&mut rng)).collect();
        s[3] = Scalar::ONE;
        s[4] = -Scalar::ONE;
        let maker = CpuPoints::new();
        let mut g1 = vec![0u8; G1_BYTES * s.len()];
        let mut g2 = vec![0u8; G2_BYTES * s.len()];
        maker.g1(&s, &mut g1).unwrap();
        maker.g2(&s, &mut g2).unwrap();
        for (i, x) in s.iter().enumerate() {
            let p1 = (G1Projective::generator() * x)
                .to_affine()
                .to_uncompressed();
            let p2 = (G2Projective::generator() * x)
                .to_affine()
                .to_uncompressed();
            assert_eq!(&g1[G1_BYTES * i..G1_BYTES * (i + 1)], &p1[..], "G1 {i}");
            assert_eq!(&g2[G2_BYTES * i..G2_BYTES * (i + 1)], &p2[..], "G2 {i}");
        }
    }
}
