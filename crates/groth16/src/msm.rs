//! Multi-scalar multiplication through blst's (multi-threaded) Pippenger, with density-aware
//! base selection and a fast path for the witness values that are 0 (skipped) or 1 (bases
//! summed by blst's batched affine addition) — about 92% of a Filecoin PoRep witness.
use crate::recorder::Density;
use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rayon::prelude::*;

/// Variables per classification task.
const CLASSIFY_CHUNK: usize = 1 << 14;
/// Largest number of points handed to one Pippenger call (bounds the transient copy).
const MAX_PIPPENGER: usize = 1 << 21;

/// Errors of an MSM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MsmError {
    /// The number of bases does not match the number of selected scalars.
    #[error("msm: {bases} bases for {selected} selected scalars")]
    Length {
        /// Bases given.
        bases: usize,
        /// Scalars selected by the density (all scalars without one).
        selected: usize,
    },
    /// The density's length differs from the number of scalars.
    #[error("msm: density over {density} variables for {scalars} scalars")]
    Density {
        /// Density length.
        density: usize,
        /// Number of scalars.
        scalars: usize,
    },
}

/// A group the MSM supports (G1 or G2 of BLS12-381).
pub trait MsmGroup {
    /// The affine point type of the parameters.
    type Affine: Sync;
    /// blst's affine representation.
    type Raw: Copy + Send + Sync + Default;
    /// The projective result type.
    type Proj: Group + Send;
    /// Copies a point into blst's representation.
    fn raw(a: &Self::Affine) -> Self::Raw;
    /// Pippenger over `points` with little-endian 32-byte `scalars`.
    fn mult(points: &[Self::Raw], scalars: &[u8]) -> Self::Proj;
    /// Sum of `points`.
    fn sum(points: &[Self::Raw]) -> Self::Proj;
}

/// Marker for G1.
#[derive(Debug, Clone, Copy)]
pub struct G1;
/// Marker for G2.
#[derive(Debug, Clone, Copy)]
pub struct G2;

fn g1_from(p: blst_p1) -> G1Projective {
    let mut out = G1Projective::identity();
    *out.as_mut() = p;
    out
}

fn g2_from(p: blst_p2) -> G2Projective {
    let mut out = G2Projective::identity();
    *out.as_mut() = p;
    out
}

impl MsmGroup for G1 {
    type Affine = G1Affine;
    type Raw = blst_p1_affine;
    type Proj = G1Projective;
    fn raw(a: &G1Affine) -> blst_p1_affine {
        *a.as_ref()
    }
    fn mult(points: &[blst_p1_affine], scalars: &[u8]) -> G1Projective {
        if points.is_empty() {
            return G1Projective::identity();
        }
        g1_from(points.mult(scalars, 255))
    }
    fn sum(points: &[blst_p1_affine]) -> G1Projective {
        if points.is_empty() {
            return G1Projective::identity();
        }
        g1_from(points.add())
    }
}

impl MsmGroup for G2 {
    type Affine = G2Affine;
    type Raw = blst_p2_affine;
    type Proj = G2Projective;
    fn raw(a: &G2Affine) -> blst_p2_affine {
        *a.as_ref()
    }
    fn mult(points: &[blst_p2_affine], scalars: &[u8]) -> G2Projective {
        if points.is_empty() {
            return G2Projective::identity();
        }
        g2_from(points.mult(scalars, 255))
    }
    fn sum(points: &[blst_p2_affine]) -> G2Projective {
        if points.is_empty() {
            return G2Projective::identity();
        }
        g2_from(points.add())
    }
}

/// Σ scalars[i]·bases[k(i)] over the variables `i` selected by `density` (all when `None`),
/// where `k(i)` counts the selected variables before `i`.
pub fn msm<G: MsmGroup>(
    bases: &[G::Affine],
    scalars: &[Scalar],
    density: Option<&Density>,
) -> Result<G::Proj, MsmError> {
    msm_pieces::<G>(bases, scalars, density, MAX_PIPPENGER)
}

/// [`msm`] with pieces of at most `max_piece` variables (a multiple of 64).
fn msm_pieces<G: MsmGroup>(
    bases: &[G::Affine],
    scalars: &[Scalar],
    density: Option<&Density>,
    max_piece: usize,
) -> Result<G::Proj, MsmError> {
    let selected = match density {
        Some(d) => {
            if d.len() != scalars.len() {
                return Err(MsmError::Density {
                    density: d.len(),
                    scalars: scalars.len(),
                });
            }
            d.count_ones()
        }
        None => scalars.len(),
    };
    if bases.len() != selected {
        return Err(MsmError::Length {
            bases: bases.len(),
            selected,
        });
    }
    // Pieces of at most `max_piece` variables, aligned to density words.
    let mut acc = G::Proj::identity();
    let mut start = 0;
    let mut base_start = 0;
    while start < scalars.len() {
        let end = (start + max_piece).min(scalars.len());
        let count = match density {
            Some(d) => d.words[start / 64..end.div_ceil(64)]
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum(),
            None => end - start,
        };
        acc += msm_piece::<G>(
            &bases[base_start..base_start + count],
            &scalars[start..end],
            density,
            start,
        );
        base_start += count;
        start = end;
    }
    Ok(acc)
}

/// Ones are summed in batches of this many points (bounded buffer, batched affine additions).
const ONES_BATCH: usize = 1 << 12;

/// What the first pass learns about one chunk of variables.
struct ChunkInfo<P> {
    /// Index of the chunk's first base.
    base_start: usize,
    /// Sum of the bases whose scalar is 1.
    ones: P,
    /// How many scalars are neither 0 nor 1.
    others: usize,
}

/// Calls `f(variable offset within the piece, base index)` for each selected variable of
/// `lo..hi`, starting at base `b0`.
#[inline]
fn for_selected(
    density: Option<&Density>,
    offset: usize,
    lo: usize,
    hi: usize,
    b0: usize,
    mut f: impl FnMut(usize, usize),
) {
    let mut b = b0;
    for i in lo..hi {
        if let Some(d) = density {
            if !d.get(offset + i) {
                continue;
            }
        }
        f(i, b);
        b += 1;
    }
}

fn msm_piece<G: MsmGroup>(
    bases: &[G::Affine],
    scalars: &[Scalar],
    density: Option<&Density>,
    offset: usize,
) -> G::Proj {
    let chunks: Vec<(usize, usize)> = (0..scalars.len())
        .step_by(CLASSIFY_CHUNK)
        .map(|lo| (lo, (lo + CLASSIFY_CHUNK).min(scalars.len())))
        .collect();
    let mut starts = Vec::with_capacity(chunks.len());
    let mut k = 0usize;
    for &(lo, hi) in &chunks {
        starts.push(k);
        k += match density {
            Some(d) => (offset + lo..offset + hi).filter(|&i| d.get(i)).count(),
            None => hi - lo,
        };
    }
    // Pass 1: sum the bases of scalar 1, count the others.
    let infos: Vec<ChunkInfo<G::Proj>> = chunks
        .par_iter()
        .zip(starts.par_iter())
        .map(|(&(lo, hi), &b0)| {
            let mut ones = G::Proj::identity();
            let mut buf: Vec<G::Raw> = Vec::new();
            let mut others = 0;
            for_selected(density, offset, lo, hi, b0, |i, b| {
                let v = &scalars[i];
                if *v == Scalar::ONE {
                    buf.push(G::raw(&bases[b]));
                    if buf.len() == ONES_BATCH {
                        ones += G::sum(&buf);
                        buf.clear();
                    }
                } else if !bool::from(v.is_zero()) {
                    others += 1;
                }
            });
            ones += G::sum(&buf);
            ChunkInfo {
                base_start: b0,
                ones,
                others,
            }
        })
        .collect();
    let total: usize = infos.iter().map(|c| c.others).sum();
    let mut acc = G::Proj::identity();
    for c in &infos {
        acc += c.ones;
    }
    if total == 0 {
        return acc;
    }
    // Pass 2: gather the other bases and scalars straight into their final place.
    let mut raw = vec![G::Raw::default(); total];
    let mut bytes = vec![0u8; total * 32];
    let mut raw_parts = Vec::with_capacity(chunks.len());
    let mut byte_parts = Vec::with_capacity(chunks.len());
    let (mut rest_r, mut rest_b) = (&mut raw[..], &mut bytes[..]);
    for c in &infos {
        let (r, rr) = rest_r.split_at_mut(c.others);
        let (b, bb) = rest_b.split_at_mut(c.others * 32);
        raw_parts.push(r);
        byte_parts.push(b);
        rest_r = rr;
        rest_b = bb;
    }
    chunks
        .par_iter()
        .zip(infos.par_iter())
        .zip(raw_parts.into_par_iter().zip(byte_parts.into_par_iter()))
        .for_each(|((&(lo, hi), info), (r, b))| {
            let mut j = 0;
            for_selected(density, offset, lo, hi, info.base_start, |i, bi| {
                let v = &scalars[i];
                if *v != Scalar::ONE && !bool::from(v.is_zero()) {
                    r[j] = G::raw(&bases[bi]);
                    b[32 * j..32 * j + 32].copy_from_slice(&v.to_bytes_le());
                    j += 1;
                }
            });
        });
    acc += G::mult(&raw, &bytes);
    acc
}

/// Σ scalars[i]·bases[i] with all scalars taken as arbitrary (plain Pippenger, no 0/1 split);
/// used for H, whose coefficients are uniformly random. The scalars are consumed: they are
/// encoded and freed before the bases are copied, to keep the peak memory down.
pub fn msm_full<G: MsmGroup>(
    bases: &[G::Affine],
    scalars: Vec<Scalar>,
) -> Result<G::Proj, MsmError> {
    if bases.len() != scalars.len() {
        return Err(MsmError::Length {
            bases: bases.len(),
            selected: scalars.len(),
        });
    }
    let mut bytes = vec![0u8; scalars.len() * 32];
    bytes
        .par_chunks_mut(32)
        .zip(scalars.par_iter())
        .with_min_len(1024)
        .for_each(|(b, v)| b.copy_from_slice(&v.to_bytes_le()));
    drop(scalars);
    let mut acc = G::Proj::identity();
    for (b, s) in bases
        .chunks(MAX_PIPPENGER)
        .zip(bytes.chunks(32 * MAX_PIPPENGER))
    {
        let raw: Vec<G::Raw> = b.par_iter().with_min_len(1024).map(G::raw).collect();
        acc += G::mult(&raw, s);
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Curve;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    fn naive_g1(bases: &[G1Affine], scalars: &[Scalar], d: Option<&Density>) -> G1Projective {
        let mut k = 0;
        let mut acc = G1Projective::identity();
        for (i, s) in scalars.iter().enumerate() {
            if d.is_some_and(|d| !d.get(i)) {
                continue;
            }
            if *s == Scalar::ONE {
                acc += bases[k];
            } else if !bool::from(s.is_zero()) {
                acc += bases[k] * s;
            }
            k += 1;
        }
        acc
    }

    fn points_g1(rng: &mut ChaCha8Rng, n: usize) -> Vec<G1Affine> {
        let g = G1Projective::random(&mut *rng);
        // Cheap distinct points: multiples of one random point by random scalars.
        let v: Vec<G1Projective> = (0..n).map(|_| g * Scalar::random(&mut *rng)).collect();
        let mut out = vec![G1Affine::default(); n];
        G1Projective::batch_normalize(&v, &mut out);
        out
    }

    /// Scalars with the given fraction (percent) of zeros and ones.
    fn scalars(rng: &mut ChaCha8Rng, n: usize, zeros: u32, ones: u32) -> Vec<Scalar> {
        (0..n)
            .map(|_| {
                let r = rng.next_u32() % 100;
                if r < zeros {
                    Scalar::ZERO
                } else if r < zeros + ones {
                    Scalar::ONE
                } else {
                    Scalar::random(&mut *rng)
                }
            })
            .collect()
    }

    #[test]
    fn g1_fast_paths_match_naive() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        for &n in &[0usize, 1, 2, 31, 64, 65, 300, 20_000] {
            let all = points_g1(&mut rng, n);
            for &(z, o) in &[(0, 0), (100, 0), (0, 100), (50, 42), (5, 5)] {
                // Large n (several classification chunks): only mostly-0/1 mixes, to keep
                // the naive reference cheap.
                if n > 1000 && z + o < 90 {
                    continue;
                }
                let sc = scalars(&mut rng, n, z, o);
                for dens in ["none", "random", "empty", "full"] {
                    let d = match dens {
                        "none" => None,
                        "random" => {
                            Some(Density::from_bools((0..n).map(|_| rng.next_u32() % 4 == 0)))
                        }
                        "empty" => Some(Density::new(n)),
                        _ => Some(Density::full(n)),
                    };
                    let k = d.as_ref().map_or(n, |d| d.count_ones());
                    let bases = &all[..k];
                    let want = naive_g1(bases, &sc, d.as_ref());
                    let got = msm::<G1>(bases, &sc, d.as_ref()).expect("msm");
                    assert_eq!(
                        got.to_affine(),
                        want.to_affine(),
                        "n={n} z={z} o={o} d={dens}"
                    );
                    // Split into small pieces: same result.
                    let pieces = msm_pieces::<G1>(bases, &sc, d.as_ref(), 128).expect("pieces");
                    assert_eq!(
                        pieces.to_affine(),
                        want.to_affine(),
                        "pieces n={n} d={dens}"
                    );
                    if d.is_none() {
                        let full = msm_full::<G1>(bases, sc.clone()).expect("msm_full");
                        assert_eq!(full.to_affine(), want.to_affine());
                    }
                }
            }
        }
    }

    #[test]
    fn g2_matches_naive() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        let n = 100;
        let g = G2Projective::random(&mut rng);
        let v: Vec<G2Projective> = (0..n).map(|_| g * Scalar::random(&mut rng)).collect();
        let mut bases = vec![G2Affine::default(); n];
        G2Projective::batch_normalize(&v, &mut bases);
        let sc = scalars(&mut rng, n, 30, 30);
        let d = Density::from_bools((0..n).map(|i| i % 3 != 0));
        let sel: Vec<Scalar> = sc
            .iter()
            .enumerate()
            .filter(|(i, _)| d.get(*i))
            .map(|(_, s)| *s)
            .collect();
        let want = sel
            .iter()
            .zip(&bases)
            .fold(G2Projective::identity(), |acc, (s, b)| acc + *b * s);
        let got = msm::<G2>(&bases[..sel.len()], &sc, Some(&d)).expect("msm");
        assert_eq!(got.to_affine(), want.to_affine());
    }

    #[test]
    fn length_errors() {
        let bases = vec![G1Affine::default(); 3];
        let sc = vec![Scalar::ONE; 4];
        assert!(msm::<G1>(&bases, &sc, None).is_err());
        assert!(msm::<G1>(&bases, &sc, Some(&Density::new(3))).is_err());
        assert!(msm_full::<G1>(&bases, sc).is_err());
    }
}
