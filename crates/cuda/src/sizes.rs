//! The sizing model of the device allocations: what a worker context's buffers grow to for one
//! `start` (mirroring `cuzk_worker` in `cuda/worker.cuh`), the scratch sppark's Pippenger takes,
//! and the bytes of a resident SRS copy. Every VRAM reservation is computed here.
use crate::{msm_plan, CudaOptions};
use cuzk_groth16::Srs;

/// Rounds a device allocation up as the C++ side does (4 KiB).
fn r4k(bytes: u64) -> u64 {
    bytes.div_ceil(4096) * 4096
}

/// Device buffers of a worker context, in bytes, mirroring `cuzk_worker` (each buffer grows
/// to the largest size asked of it, never shrinks), plus the transient MSM scratch sppark
/// allocates during `compute`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sizes([u64; Sizes::N]);

impl Sizes {
    const ABC: usize = 0;
    /// bits, idx, scalars of query q at QUERY + 3q ..
    const QUERY: usize = 1;
    const GATHERED: usize = 10;
    const PARTIAL: usize = 11;
    const CHUNKS: usize = 12;
    const SCRATCH: usize = 13;
    /// Deferred a/b/c: z (inputs | aux), its value classes, the witness's own others.
    const WITNESS: usize = 14;
    const N: usize = 15;

    pub(crate) fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    pub(crate) fn max(&self, o: &Sizes) -> Sizes {
        let mut m = *self;
        for (a, b) in m.0.iter_mut().zip(o.0) {
            *a = (*a).max(b);
        }
        m
    }
}

/// Device bytes sppark's Pippenger allocates for `npoints` points (buckets, histogram,
/// digits and sort temporaries), following `msm_t` in sppark 0.1.16, with some slack.
fn msm_scratch(npoints: usize, bucket_bytes: u64) -> u64 {
    if npoints == 0 {
        return 0;
    }
    let lg2 = |n: usize| (usize::BITS - 1 - n.max(1).leading_zeros()) as u64;
    let np = npoints.div_ceil(32) * 32;
    let wbits = if np > 192 {
        lg2(np + np / 2).saturating_sub(8).clamp(10, 18)
    } else {
        10
    };
    let nwins = 254 / wbits + 1;
    let row = 1u64 << (wbits - 1);
    // room for up to 256 SMs of batch-addition results
    let blob = (nwins * row + 256 * 256 / 32) * bucket_bytes + nwins * row * 4;
    let lgn = lg2(npoints + npoints / 2).max(wbits);
    let batch = ((1u64 << (lgn - wbits)) >> 6).max(1);
    let stride = (npoints as u64).div_ceil(batch).div_ceil(32) * 32;
    let temps = stride * 16 + nwins * stride * 4;
    blob + temps + (16 << 20)
}

/// Device bytes of the sorted Pippenger (`cuda/sorted_msm.cuh`, the H query's with the SRS
/// resident) for `npoints` points: the shape `smsm_shape::of` chooses, the layout `queue`
/// allocates, and CUB's sort temporaries bounded by `npoints / 2 + 32 MiB` (the GPU test
/// `sorted_msm_scratch_is_bounded` checks the whole against the device's own figure).
pub(crate) fn sorted_scratch(npoints: usize) -> u64 {
    if npoints == 0 {
        return 0;
    }
    let n = npoints as u64;
    let windows = |c: u64| 255u64.div_ceil(c);
    let cost = |c: u64| windows(c) as f64 * (n as f64 + 2.8 * (1u64 << (c - 1)) as f64);
    // (the first of equal costs, as the C++ loop keeps it)
    let c = (4..=24u64).fold(4, |best, c| if cost(c) < cost(best) { c } else { best });
    let (w, nb) = (windows(c), 1u64 << (c - 1));
    let root = n.isqrt() + u64::from(n.isqrt().pow(2) < n); // ⌈√n⌉
    let cap = root.max(256);
    let nsegs = nb + n / cap + 1;
    let r256 = |b: u64| b.div_ceil(256) * 256;
    let mut total = 2 * r256(8 * n) + r256((4 * nb + 2) * 4) + r256(20 * nsegs) + r256(192 * nsegs);
    // the fold levels: the first groups 2..32 buckets (smsm_shape::first_group), the others
    // 8 pairs, until ≤ 64 pairs
    let mut first = 2;
    while first * 2 <= (nb + 1) >> 14 && first < 32 {
        first *= 2;
    }
    let mut len = nb + 1;
    let mut level = 0;
    while level == 0 || len > 64 {
        len = len.div_ceil(if level == 0 { first } else { 8 });
        total += r256(2 * w * len * 192);
        level += 1;
    }
    total + r256(n / 2 + (32 << 20))
}

/// What one query (L, A, B) asks of a worker context: bitmap words of its "scalar is 1"
/// set (0 when the set is empty) and the count of its Pippenger scalars.
#[derive(Clone, Copy)]
struct QueryNeed {
    ones_words: u64,
    others: usize,
}

/// The device buffers of a worker context for a domain of `n` and the three queries' needs
/// (L, A, B; B's points are G2 too), plus the chunk double buffer when streaming.
fn sizes_for(n: usize, q: [QueryNeed; 3], stream_chunk: Option<usize>) -> Sizes {
    let mut s = Sizes::default();
    s.0[Sizes::ABC] = r4k(3 * 32 * n as u64);
    for (i, need) in q.iter().enumerate() {
        let at = Sizes::QUERY + 3 * i;
        s.0[at] = if need.ones_words > 0 {
            r4k((need.ones_words.div_ceil(16) * 16 + 16) * 8)
        } else {
            0
        };
        s.0[at + 1] = r4k(4 * need.others as u64);
        s.0[at + 2] = r4k(32 * need.others as u64);
    }
    let [l, a, b] = q;
    s.0[Sizes::GATHERED] = r4k((96 * l.others as u64)
        .max(96 * a.others as u64)
        .max(192 * b.others as u64));
    // Batch-addition sums: four regions (L, A, B in G1, B in G2, for the early batch
    // additions) of one G2 bucket (384 bytes) per warp, up to 256 SMs × 8 warps.
    s.0[Sizes::PARTIAL] = 4 << 20;
    s.0[Sizes::CHUNKS] = stream_chunk.map_or(0, |c| 2 * r4k(192 * c as u64));
    let h_points = match stream_chunk {
        Some(c) => c.min(n - 1),
        None => n - 1,
    };
    // (H by the sorted Pippenger when resident, unless `sorted_msm` is off: the larger)
    let sorted_h = if stream_chunk.is_none() {
        sorted_scratch(h_points)
    } else {
        0
    };
    s.0[Sizes::SCRATCH] = msm_scratch(h_points, 192)
        .max(sorted_h)
        .max(msm_scratch(l.others, 192))
        .max(msm_scratch(a.others, 192))
        .max(msm_scratch(b.others, 384));
    s
}

/// What a deferred `start` stages beside the plans: the witness's shape, and the others it
/// uploads itself (when the L query's were summed on the host).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WitnessNeed {
    pub(crate) vars: usize,
    pub(crate) own_others: usize,
}

/// The worker buffers of a deferred witness (mirroring `z`, `cls`, `wit_idx`, `wit_scalars`).
fn witness_bytes(w: WitnessNeed) -> u64 {
    let (v, o) = (w.vars as u64, w.own_others as u64);
    r4k(32 * v) + r4k(v) + r4k(4 * o) + r4k(32 * o)
}

/// The device buffers one `start` needs of a worker context: a/b/c, the three plans, the
/// gathered points, batch-addition sums, the chunk double buffer when streaming, the MSM
/// scratch of its largest Pippenger, and the witness when a/b/c are deferred.
pub(crate) fn worker_sizes(
    n: usize,
    plan: &msm_plan::ProvePlan,
    stream_chunk: Option<usize>,
    witness: Option<WitnessNeed>,
) -> Sizes {
    let need = |p: &msm_plan::QueryPlan| QueryNeed {
        ones_words: if p.ones.iter().any(|w| *w != 0) {
            p.ones.len() as u64
        } else {
            0
        },
        others: p.idx.len(),
    };
    let mut s = sizes_for(
        n,
        [need(&plan.l), need(&plan.a), need(&plan.b)],
        stream_chunk,
    );
    s.0[Sizes::WITNESS] = witness.map_or(0, witness_bytes);
    s
}

/// Device bytes of a resident copy of `srs`.
pub(crate) fn srs_bytes(srs: &Srs) -> u64 {
    counts_bytes(&srs.counts())
}

/// Device bytes of a resident copy of an SRS of `c`.
fn counts_bytes(c: &cuzk_groth16::params::SrsCounts) -> u64 {
    [c.h, c.l, c.a, c.b_g1]
        .iter()
        .map(|&n| r4k(96 * n as u64))
        .sum::<u64>()
        + r4k(192 * c.b_g2 as u64)
}

/// An upper bound of a resident-tier worker context for a domain of `n` and an SRS of
/// `counts` with `inputs` inputs, before any plan exists, and a deferred witness. Each query's
/// Pippenger points are at most its bases, and at most `free_values` when the SRS knows its
/// circuit's bound ([`Srs::free_values_bound`]: a satisfying witness has no more values that
/// are neither 0 nor 1); without it every base counts as a Pippenger point (at 32 GiB that
/// alone is ~30 GB more than a real PoRep partition's plans, and an 80 GB card then keeps no
/// SRS pinned).
pub(crate) fn worker_bound(
    n: usize,
    counts: &cuzk_groth16::params::SrsCounts,
    inputs: usize,
    free_values: Option<usize>,
) -> u64 {
    let all = |nb: usize| QueryNeed {
        ones_words: nb.div_ceil(64) as u64,
        others: free_values.map_or(nb, |f| f.min(nb)),
    };
    sizes_for(n, [all(counts.l), all(counts.a), all(counts.b_g1)], None).total()
        + witness_bytes(WitnessNeed {
            vars: inputs + counts.l,
            own_others: 0,
        })
}

/// [`worker_bound`] for `srs` (its domain's `n`).
pub(crate) fn srs_worker_bound(n: usize, srs: &Srs) -> u64 {
    worker_bound(n, &srs.counts(), srs.vk().ic.len(), srs.free_values_bound())
}

/// Chunk size in bases: the option rounded up to a multiple of 1024 (batch-addition blocks).
pub(crate) fn stream_chunk(o: &CudaOptions) -> usize {
    o.stream_chunk_bases.max(1).div_ceil(1024) * 1024
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_groth16::params::SrsCounts;

    /// porep-32g's sections and inputs (the blank circuit's, `bench/RESULTS.md` "32 GiB").
    const POREP_32G: SrsCounts = SrsCounts {
        h: (1 << 27) - 1,
        l: 130_169_893,
        a: 129_753_620,
        b_g1: 33_112_282,
        b_g2: 33_112_282,
    };
    const INPUTS: usize = 328;
    /// Its aux values the constraints hold to 0 or 1 (`CompiledCircuit::bounded_aux`,
    /// RESULTS "issue 29": 128,470,791 of 130,169,893; a real partition's witness has
    /// 1,699,102 others).
    const BOUNDED: usize = 128_470_791;
    /// Its compiled matrices in VRAM (`matrices_bytes`, RESULTS: 7.38 GB).
    const MATRICES: u64 = 7_380_000_000;

    /// An 80 GB card (H100 80GB: 79.6 GiB, ~0.5 GiB of it the context's) held a porep-32g SRS
    /// only unpinned, its host copy kept (RSS 99.2 GiB, RESULTS session 27), because the
    /// bound counted every base as a full scalar. With the circuit's bound the SRS and its
    /// matrices stay beside one worker, and the budget left is less than a second one.
    #[test]
    fn porep_32g_and_its_matrices_fit_an_80_gb_card_once_the_witness_bound_is_known() {
        let budget: u64 = (79 << 30) - (1 << 30); // the free VRAM at first use, less 1 GiB
        let (n, srs) = (1 << 27, counts_bytes(&POREP_32G));
        assert_eq!(
            srs, 47_373_905_920,
            "the resident copy measured on the H200"
        );
        let worst = worker_bound(n, &POREP_32G, INPUTS, None);
        let free = INPUTS + POREP_32G.l - BOUNDED;
        let bounded = worker_bound(n, &POREP_32G, INPUTS, Some(free));
        assert!(srs + worst > budget, "{srs} + {worst}");
        assert!(
            srs + bounded + MATRICES < budget,
            "{srs} + {bounded} + {MATRICES}"
        );
        assert!(srs + 2 * bounded + MATRICES > budget);
        // a/b/c (12.9 GB), the witness (4.3 GB) and the sorted H MSM's scratch dominate: the
        // plans' share is what the bound cut from ~22 GB to under 1 GB
        assert!(worst - bounded > 20_000_000_000, "{worst} - {bounded}");
        // a bound above the bases changes nothing
        assert_eq!(worker_bound(n, &POREP_32G, INPUTS, Some(usize::MAX)), worst);
    }
}
