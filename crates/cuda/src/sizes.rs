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
    let sorted_h = if stream_chunk.is_none() { sorted_scratch(h_points) } else { 0 };
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
    let c = srs.counts();
    [c.h, c.l, c.a, c.b_g1]
        .iter()
        .map(|&n| r4k(96 * n as u64))
        .sum::<u64>()
        + r4k(192 * c.b_g2 as u64)
}

/// An upper bound of a resident-tier worker context for a domain of `n` and an SRS of
/// `counts` with `inputs` inputs, before any plan exists: every base taken as a Pippenger
/// point, and a deferred witness.
pub(crate) fn worker_bound(
    n: usize,
    counts: &cuzk_groth16::params::SrsCounts,
    inputs: usize,
) -> u64 {
    let all = |nb: usize| QueryNeed {
        ones_words: nb.div_ceil(64) as u64,
        others: nb,
    };
    sizes_for(n, [all(counts.l), all(counts.a), all(counts.b_g1)], None).total()
        + witness_bytes(WitnessNeed {
            vars: inputs + counts.l,
            own_others: 0,
        })
}

/// Chunk size in bases: the option rounded up to a multiple of 1024 (batch-addition blocks).
pub(crate) fn stream_chunk(o: &CudaOptions) -> usize {
    o.stream_chunk_bases.max(1).div_ceil(1024) * 1024
}
