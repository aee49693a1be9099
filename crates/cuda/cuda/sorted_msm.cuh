// sorted_msm.cuh: our own Pippenger for a dense G1 MSM over device-resident points and
// scalars (the H query), queued on one stream with no host wait, summed on the host later
// (the same contract as queued_msm.cuh, whose sppark kernels it replaces for H).
//
// What differs from sppark 0.1.16's msm_t (15 windows of 18 bits at 2^27, one thread per
// bucket, in bucket order):
// - the window width is chosen per n by the additions it costs (22 bits, 12 windows at
//   2^27: 0.8× the bucket additions);
// - each window's digits are sorted by bucket with CUB's radix sort, then cut into segments
//   of at most `cap` entries (a bucket is one segment unless it is large), and the segments
//   are sorted by length, longest first: the threads of a warp accumulate equally many
//   points, and no bucket, however full (scalars all equal), is one thread's serial walk;
// - each window's buckets are folded on the device, level by level, into a few dozen
//   (plain, weighted) pairs, which the host combines (`sum`).
//
// Digits are Booth-signed without a carry chain: d_w = raw_w + b_{cw-1} − 2^c·b_{cw+c-1}, so
// |d_w| ≤ 2^(c-1) and a window is computed from the scalar alone. Scalars above r/2 are
// negated first (sppark's abs), so every scalar is below 2^254 and c·nwins ≥ 255 suffices.
// Included by cuzk.cu, in the order listed there (it uses its point typedefs; CUB is included
// before sppark's headers there).
#pragma once

// The window shape and the fold levels for n points.
struct smsm_shape {
    static constexpr uint32_t MAX_LEVELS = 8;
    static constexpr uint32_t FIRST_GROUP = 32;  // level 1: at most this many buckets a thread
    static constexpr uint32_t GROUP = 8;         // later levels: pairs per thread
    static constexpr uint32_t HOST_PAIRS = 64;   // at most this many pairs a window to the host

    uint32_t c = 0, nwins = 0, nb = 0;  // window bits, windows, buckets a window (2^(c-1))
    uint32_t cap = 0;                   // most entries in one segment
    uint32_t nsegs = 0;                 // room for segments: nb + n / cap + 1
    uint32_t levels = 0;                // fold levels on the device
    uint32_t len[MAX_LEVELS + 1] = {0}; // level l's pairs a window (len[0]: nb + 1 buckets)
    uint32_t m[MAX_LEVELS] = {0};       // level l's group size
    uint32_t lg_scale = 0;              // log2 of the weight scale of the last level's pairs

    static uint32_t windows(uint32_t c) { return (255 + c - 1) / c; }

    // Level 1's buckets per thread: 32, or fewer where that leaves fewer than 2^14 threads a
    // window (small n: the fold runs window by window, and a thread's 2·m additions are its
    // latency), at least 2.
    static uint32_t first_group(uint32_t nb)
    {
        const uint32_t q = (nb + 1) >> 14;
        uint32_t g = 2;
        while (g * 2 <= q && g < FIRST_GROUP) g *= 2;
        return g;
    }

    static smsm_shape of(size_t n)
    {
        smsm_shape s;
        // bucket additions (12 multiplications) weigh ~1.4 mixed ones, two per bucket
        double best = 0;
        for (uint32_t c = 4; c <= 24; c++) {
            double cost = (double)windows(c) * ((double)n + 2.8 * (double)(1u << (c - 1)));
            if (s.c == 0 || cost < best) {
                best = cost;
                s.c = c;
            }
        }
        s.nwins = windows(s.c);
        s.nb = 1u << (s.c - 1);
        // ⌈√n⌉ (the double's root corrected to the integer one)
        uint64_t root = (uint64_t)std::sqrt((double)n);
        while (root * root > n) root--;
        if (root * root < n) root++;
        s.cap = std::max<uint32_t>(256u, (uint32_t)root);
        s.nsegs = s.nb + (uint32_t)(n / s.cap) + 1;
        s.len[0] = s.nb + 1;
        uint32_t lg = 0;
        while (s.levels < MAX_LEVELS && (s.levels == 0 || s.len[s.levels] > HOST_PAIRS)) {
            uint32_t g = s.levels == 0 ? first_group(s.nb) : GROUP;
            s.m[s.levels] = g;
            s.len[s.levels + 1] = (s.len[s.levels] + g - 1) / g;
            lg += msm_shape::lg2(g);
            s.levels++;
        }
        s.lg_scale = lg;
        return s;
    }
};

// scalars[i] from Montgomery form to its canonical |s| (s or r − s, whichever is below r/2,
// so below 2^254), bit 255 set when negated (the digits' signs flip); smsm_restore undoes it.
__launch_bounds__(1024)
__global__ void smsm_canon(fr_t* scalars, uint32_t n)
{
#ifdef __CUDA_ARCH__  // (fr_t is blst's on the host, without abs or limb access)
    for (uint32_t i = threadIdx.x + blockIdx.x * blockDim.x; i < n;
         i += blockDim.x * gridDim.x) {
        fr_t s = scalars[i];
        s.from();
        const uint32_t neg = s.abs();
        s[7] |= neg << 31;
        scalars[i] = s;
    }
#endif
}

__launch_bounds__(1024)
__global__ void smsm_restore(fr_t* scalars, uint32_t n)
{
#ifdef __CUDA_ARCH__
    for (uint32_t i = threadIdx.x + blockIdx.x * blockDim.x; i < n;
         i += blockDim.x * gridDim.x) {
        fr_t s = scalars[i];
        const uint32_t neg = s[7] >> 31;
        s[7] &= 0x7fffffff;
        s.cneg(neg != 0);
        s.to();
        scalars[i] = s;
    }
#endif
}

// keys[i] = |d_w(scalar i)|, vals[i] = i, its top bit the digit's sign, for the window whose
// lowest bit is `lo` and width is c, from smsm_canon's scalars.
__launch_bounds__(1024)
__global__ void smsm_digits(uint32_t* keys, uint32_t* vals, const fr_t* scalars, uint32_t n,
                            uint32_t lo, uint32_t c)
{
#ifdef __CUDA_ARCH__
    const uint32_t mask = (1u << (c + 1)) - 1;
    for (uint32_t i = threadIdx.x + blockIdx.x * blockDim.x; i < n;
         i += blockDim.x * gridDim.x) {
        fr_t s = scalars[i];
        const uint32_t neg = s[7] >> 31;
        s[7] &= 0x7fffffff;
        uint32_t v;
        if (lo == 0) {
            v = s[0] << 1;
        } else {
            const uint32_t p = lo - 1, j = p / 32;
            uint64_t x = s[j];
            if (j + 1 < 8)  // (8 limbs)
                x |= (uint64_t)s[j + 1] << 32;
            v = (uint32_t)(x >> (p % 32));
        }
        v &= mask;  // bit 0: b_{lo-1}; bits 1..c: the window's raw bits
        const uint32_t raw = v >> 1, top = raw >> (c - 1);
        const int32_t d = (int32_t)(raw + (v & 1)) - (int32_t)(top << c);
        const uint32_t mag = d < 0 ? (uint32_t)-d : (uint32_t)d;
        const uint32_t sign = mag != 0 && ((d < 0) != (neg != 0));
        keys[i] = mag;
        vals[i] = i | (sign << 31);
    }
#endif
}

// Bucket k − 1's entries are [start, end) of the sorted keys (both zeroed before: empty).
__global__ void smsm_bounds(const uint32_t* keys, uint32_t n, uint32_t* start, uint32_t* end)
{
    for (uint32_t i = threadIdx.x + blockIdx.x * blockDim.x; i < n;
         i += blockDim.x * gridDim.x) {
        const uint32_t k = keys[i];
        if (k == 0) continue;
        if (i == 0 || keys[i - 1] != k) start[k - 1] = i;
        if (i + 1 == n || keys[i + 1] != k) end[k - 1] = i + 1;
    }
}

// nseg[b]: bucket b's segments (nseg[nb] = 0, the scan's total); every segment slot empty.
__global__ void smsm_count_segs(const uint32_t* start, const uint32_t* end, uint32_t nb,
                                uint32_t cap, uint32_t* nseg, uint32_t* seg_len,
                                uint32_t* seg_id, uint32_t nsegs)
{
    for (uint32_t i = threadIdx.x + blockIdx.x * blockDim.x; i < nsegs;
         i += blockDim.x * gridDim.x) {
        if (i <= nb)
            nseg[i] = i < nb ? (end[i] - start[i] + cap - 1) / cap : 0;
        seg_len[i] = 0;
        seg_id[i] = i;
    }
}

// Segment segoff[b] + j of bucket b: its length and first entry.
__global__ void smsm_fill_segs(const uint32_t* start, const uint32_t* end,
                               const uint32_t* segoff, uint32_t nb, uint32_t cap,
                               uint32_t* seg_len, uint32_t* seg_start)
{
    for (uint32_t b = threadIdx.x + blockIdx.x * blockDim.x; b < nb;
         b += blockDim.x * gridDim.x) {
        const uint32_t s0 = start[b], len = end[b] - s0, off = segoff[b];
        for (uint32_t j = 0; j * cap < len; j++) {
            seg_len[off + j] = min(cap, len - j * cap);
            seg_start[off + j] = s0 + j * cap;
        }
    }
}

// Thread t sums the segment of the t-th longest length into partial[its id] (∞ if empty).
// Blocks of 128: at ~150 registers a thread, three fit an SM (12 warps; blocks of 256, one).
#define SMSM_ACC_THREADS 128
template<class bucket_t, class affine_h, class bucket_h = typename bucket_t::mem_t,
         class affine_t = typename bucket_t::affine_t>
__launch_bounds__(SMSM_ACC_THREADS)
__global__ void smsm_accumulate(bucket_h* partial, const uint32_t* lens, const uint32_t* ids,
                                const uint32_t* seg_start, const uint32_t* vals,
                                const affine_h* points, uint32_t nsegs)
{
    const uint32_t t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= nsegs) return;
    const uint32_t len = lens[t], id = ids[t];
    bucket_t acc;
    acc.inf();
    if (len) {
        const uint32_t* v = vals + seg_start[id];
        uint32_t d = v[0];
        affine_t p = points[d & 0x7fffffff];
        acc = p;
        acc.cneg(d >> 31);
        for (uint32_t j = 1; j < len; j++) {
            d = v[j];
            p = points[d & 0x7fffffff];
            acc.add(p, d >> 31);
        }
    }
    partial[id] = acc;
}

// One group's (weighted, plain) pair over entries [lo, hi) of S: weighted = Σ (i − lo)·S_i,
// plain = Σ S_i, by running sums from the top.
template<class bucket_t, class get_t>
__device__ __forceinline__ void smsm_group(uint32_t lo, uint32_t hi, get_t get,
                                           bucket_t& weighted, bucket_t& plain)
{
    weighted.inf();
    plain.inf();
    for (uint32_t i = hi; i-- > lo + 1;) {
        plain.add(get(i));
        weighted.add(plain);
    }
    if (lo < hi)
        plain.add(get(lo));
}

// Level 1 of one window: the window's buckets as S_i (S_0 = ∞, S_i = bucket i − 1, the sum of
// its segments' partials), in groups of m: A[u] = weighted, S[u] = plain.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(256)
__global__ void smsm_fold_buckets(bucket_h* A, bucket_h* S, const bucket_h* partial,
                                  const uint32_t* segoff, uint32_t nb, uint32_t m)
{
    const uint32_t len = nb + 1, groups = (len + m - 1) / m;
    const uint32_t u = threadIdx.x + blockIdx.x * blockDim.x;
    if (u >= groups) return;
    auto bucket = [&](uint32_t i) {
        bucket_t b;
        b.inf();
        if (i == 0) return b;
        const uint32_t s0 = segoff[i - 1], s1 = segoff[i];
        for (uint32_t s = s0; s < s1; s++) {
            bucket_t p = partial[s];
            b.add(p);
        }
        return b;
    };
    bucket_t w, p;
    smsm_group<bucket_t>(u * m, min(u * m + m, len), bucket, w, p);
    A[u] = w;
    S[u] = p;
}

// A later level over every window: the window's total is Σ A + 2^k·Σ_i i·S_i over its `len`
// pairs; group u of m: A'[u] = Σ A + 2^k·(weighted), S'[u] = plain, so that the total is
// Σ A' + 2^k·m·Σ_u u·S'_u.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(256)
__global__ void smsm_fold(bucket_h* A_out, bucket_h* S_out, size_t out_stride,
                          const bucket_h* A, const bucket_h* S, size_t in_stride, uint32_t len,
                          uint32_t nwins, uint32_t m, uint32_t k)
{
    const uint32_t groups = (len + m - 1) / m;
    const uint32_t t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= groups * nwins) return;
    const uint32_t w = t / groups, u = t % groups;
    const bucket_h* Sw = S + w * in_stride;
    const bucket_h* Aw = A + w * in_stride;
    const uint32_t lo = u * m, hi = min(lo + m, len);
    bucket_t weighted, plain, a;
    smsm_group<bucket_t>(lo, hi, [&](uint32_t i) { return bucket_t(Sw[i]); }, weighted, plain);
    for (uint32_t j = 0; j < k; j++) {
        bucket_t twice = weighted;
        weighted.add(twice);
    }
    a.inf();
    for (uint32_t i = lo; i < hi; i++) {
        bucket_t x = Aw[i];
        a.add(x);
    }
    a.add(weighted);
    A_out[w * out_stride + u] = a;
    S_out[w * out_stride + u] = plain;
}

template<class bucket_t, class point_t, class affine_t>
struct sorted_msm {
    using affine_h = typename affine_t::mem_t;
    using bucket_h = typename bucket_t::mem_t;
#ifndef __CUDA_ARCH__
    static_assert(sizeof(bucket_t) == sizeof(bucket_h), "host buckets have the device layout");
#endif
    static_assert(bucket_t::degree == 1, "one thread a point (G1)");

    smsm_shape shape;
    size_t n = 0;
    const bucket_t* host = nullptr;  // nwins × (A, S) × len[levels]

    static size_t host_bytes(size_t n)
    {
        return n == 0 ? 0 : pairs_bytes(smsm_shape::of(n));
    }

    // The device scratch `queue` allocates for n points (with CUB's temporaries).
    static size_t device_bytes(size_t n)
    {
        if (n == 0) return 0;
        smsm_shape s = smsm_shape::of(n);
        return layout(s, n, sort_temp(s, n)).total;
    }

    // Queues Σ scalars[i]·points[i] (both on the device, scalars in Montgomery form) on `st`,
    // its window pairs into `out` (page-locked, host_bytes(n)); `sum` may read them once `st`
    // passed this point. The scalars are rewritten in place while the MSM runs (canonical,
    // halved, smsm_canon) and restored when it ends: nothing else may use them meanwhile, and
    // should a launch fail, they are left rewritten. The scratch is allocated and freed in
    // stream order on `st`. With CUZK_SMSM_PROFILE set, it waits for the stream and prints
    // each stage's device time to stderr.
    void queue(const gpu_t& gpu, const stream_t& st, const affine_h* points,
               scalar_t* scalars, size_t npoints, void* out)
    {
        n = npoints;
        host = static_cast<const bucket_t*>(out);
        if (n == 0) return;
        CUZK_REQUIRE(n < ((size_t)1 << 31), "too many points for one MSM");
        shape = smsm_shape::of(n);
        const smsm_shape& s = shape;
        const uint32_t nn = (uint32_t)n;
        const size_t temp_bytes = sort_temp(s, n);
        const scratch L = layout(s, n, temp_bytes);
        char* base = static_cast<char*>(st.Dmalloc(L.total));
        auto at = [&](size_t off) { return base + off; };
        uint32_t* keys[2] = {(uint32_t*)at(L.keys), (uint32_t*)at(L.keys) + n};
        uint32_t* vals[2] = {(uint32_t*)at(L.vals), (uint32_t*)at(L.vals) + n};
        uint32_t* start = (uint32_t*)at(L.bounds);
        uint32_t* end = start + s.nb;
        uint32_t* nseg = end + s.nb;
        uint32_t* segoff = nseg + s.nb + 1;
        uint32_t* seg_len[2] = {(uint32_t*)at(L.segs), (uint32_t*)at(L.segs) + s.nsegs};
        uint32_t* seg_id[2] = {seg_len[1] + s.nsegs, seg_len[1] + 2 * (size_t)s.nsegs};
        uint32_t* seg_start = seg_id[1] + s.nsegs;
        bucket_h* partial = (bucket_h*)at(L.partial);
        void* temp = at(L.temp);
        const uint32_t sms = gpu.sm_count();
        auto blocks = [](size_t work, uint32_t per) { return (uint32_t)((work + per - 1) / per); };
        const uint32_t seg_bits = msm_shape::lg2(s.cap) + 1;

        profile prof(st);
        smsm_canon<<<sms * 4, 1024, 0, st>>>(scalars, nn);
        CUDA_OK(cudaGetLastError());
        prof.mark(0);
        for (uint32_t w = 0; w < s.nwins; w++) {
            smsm_digits<<<sms * 4, 1024, 0, st>>>(keys[0], vals[0], scalars, nn, w * s.c, s.c);
            CUDA_OK(cudaGetLastError());
            prof.mark(1);
            cub::DoubleBuffer<uint32_t> dk(keys[0], keys[1]), dv(vals[0], vals[1]);
            size_t tb = temp_bytes;
            CUDA_OK(cub::DeviceRadixSort::SortPairs(temp, tb, dk, dv, (int)nn, 0, (int)s.c,
                                                    (cudaStream_t)st));
            prof.mark(2);
            const uint32_t* sk = dk.Current();
            const uint32_t* sv = dv.Current();
            CUDA_OK(cudaMemsetAsync(start, 0, 2 * sizeof(uint32_t) * s.nb, st));
            smsm_bounds<<<sms * 4, 1024, 0, st>>>(sk, nn, start, end);
            CUDA_OK(cudaGetLastError());
            smsm_count_segs<<<blocks(s.nsegs, 256), 256, 0, st>>>(start, end, s.nb, s.cap, nseg,
                                                                  seg_len[0], seg_id[0], s.nsegs);
            CUDA_OK(cudaGetLastError());
            tb = temp_bytes;
            CUDA_OK(cub::DeviceScan::ExclusiveSum(temp, tb, nseg, segoff, (int)s.nb + 1,
                                                  (cudaStream_t)st));
            smsm_fill_segs<<<blocks(s.nb, 256), 256, 0, st>>>(start, end, segoff, s.nb, s.cap,
                                                              seg_len[0], seg_start);
            CUDA_OK(cudaGetLastError());
            cub::DoubleBuffer<uint32_t> dl(seg_len[0], seg_len[1]), di(seg_id[0], seg_id[1]);
            tb = temp_bytes;
            CUDA_OK(cub::DeviceRadixSort::SortPairsDescending(temp, tb, dl, di, (int)s.nsegs, 0,
                                                              (int)seg_bits, (cudaStream_t)st));
            prof.mark(3);
            smsm_accumulate<bucket_t, affine_h>
                <<<blocks(s.nsegs, SMSM_ACC_THREADS), SMSM_ACC_THREADS, 0, st>>>(
                partial, dl.Current(), di.Current(), seg_start, sv, points, s.nsegs);
            CUDA_OK(cudaGetLastError());
            prof.mark(4);
            bucket_h* A1 = (bucket_h*)at(L.level[0]) + (size_t)w * s.len[1];
            bucket_h* S1 = A1 + (size_t)s.nwins * s.len[1];
            smsm_fold_buckets<bucket_t><<<blocks(s.len[1], 128), 128, 0, st>>>(
                A1, S1, partial, segoff, s.nb, s.m[0]);
            CUDA_OK(cudaGetLastError());
            prof.mark(5);
        }
        uint32_t lg = msm_shape::lg2(s.m[0]);
        for (uint32_t l = 1; l < s.levels; l++) {
            const size_t in = s.len[l], outn = s.len[l + 1];
            bucket_h* A = (bucket_h*)at(L.level[l - 1]);
            bucket_h* A2 = (bucket_h*)at(L.level[l]);
            smsm_fold<bucket_t><<<blocks(outn * s.nwins, 64), 64, 0, st>>>(
                A2, A2 + (size_t)s.nwins * outn, outn, A, A + (size_t)s.nwins * in, in,
                (uint32_t)in, s.nwins, s.m[l], lg);
            CUDA_OK(cudaGetLastError());
            lg += msm_shape::lg2(s.m[l]);
        }
        CUDA_OK(cudaMemcpyAsync(const_cast<bucket_t*>(host), at(L.level[s.levels - 1]),
                                pairs_bytes(s), cudaMemcpyDeviceToHost, st));
        smsm_restore<<<sms * 4, 1024, 0, st>>>(scalars, nn);
        CUDA_OK(cudaGetLastError());
        prof.mark(6);
        st.Dfree(base);
        prof.report(n, s.c, s.nwins);
    }

    // The MSM from what `queue` left in host memory (the stream must have got past it).
    point_t sum(thread_pool_t& pool) const
    {
        point_t out;
        out.inf();
        if (n == 0) return out;
        const smsm_shape& s = shape;
        const uint32_t len = s.len[s.levels];
        std::vector<point_t> win(s.nwins);
        pool.par_map(s.nwins, [&](size_t w) {
            const bucket_t* A = host + w * len;
            const bucket_t* S = host + (size_t)s.nwins * len + w * len;
            bucket_t suffix, weighted, plain;
            suffix.inf();
            weighted.inf();
            plain.inf();
            for (uint32_t u = len; u-- > 1;) {
                suffix.add(S[u]);
                weighted.add(suffix);
            }
            for (uint32_t u = 0; u < len; u++)
                plain.add(A[u]);
            point_t t = point_t(weighted);
            for (uint32_t i = 0; i < s.lg_scale; i++)
                t.dbl();
            t.add(point_t(plain));
            win[w] = t;
        });
        for (uint32_t w = s.nwins; w-- > 0;) {
            if (w + 1 < s.nwins)
                for (uint32_t i = 0; i < s.c; i++)
                    out.dbl();
            out.add(win[w]);
        }
        return out;
    }

private:
    // The last fold level's pairs, copied to the host.
    static size_t pairs_bytes(const smsm_shape& s)
    {
        return (size_t)s.nwins * 2 * s.len[s.levels] * sizeof(bucket_t);
    }

    // Device time per stage, summed over the windows (CUZK_SMSM_PROFILE set), else nothing.
    struct profile {
        static constexpr int STAGES = 7;
        const stream_t& st;
        const bool on;
        cudaEvent_t last = nullptr;
        std::vector<cudaEvent_t> evs;
        std::vector<int> stage;
        explicit profile(const stream_t& s) : st(s), on(getenv("CUZK_SMSM_PROFILE") != nullptr)
        {
            if (on) last = record();
        }
        ~profile()
        {
            for (auto e : evs) (void)cudaEventDestroy(e);
        }
        cudaEvent_t record()
        {
            cudaEvent_t e;
            CUDA_OK(cudaEventCreate(&e));
            evs.push_back(e);
            CUDA_OK(cudaEventRecord(e, st));
            return e;
        }
        void mark(int s)
        {
            if (!on) return;
            last = record();
            stage.push_back(s);
        }
        void report(size_t n, uint32_t c, uint32_t nwins)
        {
            if (!on) return;
            st.sync();
            double ms[STAGES] = {0};
            for (size_t i = 0; i < stage.size(); i++) {
                float t = 0;
                CUDA_OK(cudaEventElapsedTime(&t, evs[i], evs[i + 1]));
                ms[stage[i]] += t;
            }
            static const char* names[STAGES] = {"canon", "digits", "sort", "segments",
                                                "accumulate", "fold1", "folds+restore"};
            fprintf(stderr, "sorted MSM of %zu points (%u windows of %u bits):", n, nwins, c);
            for (int i = 0; i < STAGES; i++)
                fprintf(stderr, " %s %.1f ms", names[i], ms[i]);
            fprintf(stderr, "\n");
        }
    };

    struct scratch {
        size_t keys, vals, bounds, segs, partial, level[smsm_shape::MAX_LEVELS], temp, total;
    };

    static size_t sort_temp(const smsm_shape& s, size_t n)
    {
        size_t a = 0, b = 0, c = 0;
        cub::DoubleBuffer<uint32_t> k(nullptr, nullptr), v(nullptr, nullptr);
        CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, a, k, v, (int)n, 0, (int)s.c));
        CUDA_OK(cub::DeviceRadixSort::SortPairsDescending(nullptr, b, k, v, (int)s.nsegs, 0,
                                                          (int)msm_shape::lg2(s.cap) + 1));
        CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, c, (uint32_t*)nullptr,
                                              (uint32_t*)nullptr, (int)s.nb + 1));
        return std::max(a, std::max(b, c));
    }

    static scratch layout(const smsm_shape& s, size_t n, size_t temp)
    {
        scratch L{};
        size_t at = 0;
        auto take = [&](size_t bytes) {
            size_t here = at;
            at += (bytes + 255) & ~(size_t)255;
            return here;
        };
        L.keys = take(2 * n * sizeof(uint32_t));
        L.vals = take(2 * n * sizeof(uint32_t));
        L.bounds = take(((size_t)4 * s.nb + 2) * sizeof(uint32_t));
        L.segs = take((size_t)5 * s.nsegs * sizeof(uint32_t));
        L.partial = take((size_t)s.nsegs * sizeof(bucket_h));
        for (uint32_t l = 0; l < s.levels; l++)
            L.level[l] = take((size_t)2 * s.nwins * s.len[l + 1] * sizeof(bucket_h));
        L.temp = take(temp);
        L.total = at;
        return L;
    }
};
