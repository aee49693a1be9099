// A Pippenger MSM over device-resident points and scalars whose kernels are all queued on
// one stream with no host wait, and whose result is summed on the host later.
//
// sppark 0.1.16's msm_t::invoke synchronises after every batch and adds the window results
// up on the host before it returns: the GPU idles through that host sum at the end of every
// MSM, five times a proof. Here the same kernels (breakdown, sort, the digit batch addition,
// accumulate, integrate) run in stream order, each batch's per-window results are copied to
// page-locked host memory, and `sum` combines them once the stream got there, while the GPU
// already works on what was queued after. Included by cuzk.cu (needs its point typedefs).
//
// The window and batch choice follows msm_t's so the kernels see the shapes they are tuned
// for; the sum does not depend on it.

#ifndef CUZK_QUEUED_MSM_CUH
#define CUZK_QUEUED_MSM_CUH

// sppark's Pippenger shape for n points: window bits, windows, batches and points per batch.
struct msm_shape {
    uint32_t wbits = 0, nwins = 0;
    size_t batch = 0, stride = 0;

    static constexpr uint32_t lg2(size_t n) { uint32_t r = 0; while (n >>= 1) r++; return r; }

    static msm_shape of(size_t n)
    {
        msm_shape s;
        size_t rounded = (n + WARP_SZ - 1) & ~(size_t)(WARP_SZ - 1);
        s.wbits = 17;
        if (rounded > 192)
            s.wbits = std::max(std::min(lg2(rounded + rounded / 2) - 8, 18u), 10u);
        else if (rounded > 0)
            s.wbits = 10;
        s.nwins = (scalar_t::bit_length() - 1) / s.wbits + 1;
        uint32_t lg = lg2(n + n / 2);
        s.batch = ((size_t)1 << (std::max(lg, s.wbits) - s.wbits)) >> 6;
        if (s.batch == 0) s.batch = 1;
        s.stride = (n + s.batch - 1) / s.batch;
        s.stride = (s.stride + WARP_SZ - 1) & ~(size_t)(WARP_SZ - 1);
        return s;
    }
};

template<class bucket_t, class point_t, class affine_t>
struct queued_msm {
    using affine_h = typename affine_t::mem_t;
    using bucket_h = typename bucket_t::mem_t;
    // integrate's thread groups per window: each leaves a (weighted sum, plain sum) pair over
    // its segment of 2^(wbits-1-NTHR_BITS) buckets in the first 2·NGROUPS buckets of its row
    static constexpr uint32_t NGROUPS = MSM_NTHREADS / bucket_t::degree;
    static constexpr uint32_t NTHR_BITS = msm_shape::lg2(NGROUPS);
#ifndef __CUDA_ARCH__
    static_assert(sizeof(bucket_t) == sizeof(bucket_h), "host buckets have the device layout");
#endif

    msm_shape shape;
    size_t n = 0;
    size_t nret = 0;                 // digit batch-addition sums per batch (one per warp)
    const bucket_t* host = nullptr;  // batch × (nwins × 2·NGROUPS pairs, then nret sums)

    // Buckets a batch leaves in host memory.
    size_t per_batch() const { return (size_t)shape.nwins * 2 * NGROUPS + nret; }

    // Page-locked bytes `queue` writes for n points.
    static size_t host_bytes(const gpu_t& gpu, size_t n)
    {
        if (n == 0) return 0;
        msm_shape s = msm_shape::of(n);
        size_t nret = (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
        return s.batch * ((size_t)s.nwins * 2 * NGROUPS + nret) * sizeof(bucket_t);
    }

    // Queues Σ scalars[i]·points[i] (both on the device, scalars in Montgomery form) on `s`,
    // its results into `out` (page-locked, host_bytes(n)); `sum` may read them once `s` passed
    // this point. The scratch is allocated and freed in stream order on `s`. Every kernel of
    // it runs on `s`: accumulate's work counter is shared by every launch with the same
    // stream id on the device, so nothing else may run an MSM there meanwhile (the interlock).
    void queue(const gpu_t& gpu, const stream_t& s, const affine_h* points,
               const scalar_t* scalars, size_t npoints, void* out)
    {
        n = npoints;
        host = static_cast<const bucket_t*>(out);
        if (n == 0) return;
        CUZK_REQUIRE(n <= ((size_t)1 << 31), "too many points for one MSM");
        shape = msm_shape::of(n);
        nret = (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
        const uint32_t wbits = shape.wbits, nwins = shape.nwins;
        const uint32_t row = 1u << (wbits - 1);
        const size_t stride = shape.stride;

        // buckets (nwins rows, then the digit batch additions' sums) and histogram
        size_t nbuckets = (size_t)nwins * row + nret;
        size_t blob = nbuckets * sizeof(bucket_h) + (size_t)nwins * row * sizeof(uint32_t);
        // sort temporaries, then digits
        size_t temps = stride * 2 * sizeof(uint2);
        size_t digits = (size_t)nwins * stride * sizeof(uint32_t);
        char* d_blob = static_cast<char*>(s.Dmalloc(blob));
        char* d_temp = static_cast<char*>(s.Dmalloc(temps + digits));
        bucket_h* d_buckets = reinterpret_cast<bucket_h*>(d_blob);
        vec2d_t<uint32_t> d_hist{reinterpret_cast<uint32_t*>(d_buckets + nbuckets), row};
        vec2d_t<uint2> d_temps{reinterpret_cast<uint2*>(d_temp), (uint32_t)stride};
        vec2d_t<uint32_t> d_digits{reinterpret_cast<uint32_t*>(d_temp + temps), (uint32_t)stride};
        auto* d_points = const_cast<affine_h*>(points);

        uint32_t grid = gpu.sm_count() / 3;     // sort's grid, a power of 2 (as msm_t)
        while (grid & (grid - 1))
            grid -= grid & (0 - grid);
        const size_t sort_shared = sizeof(uint32_t) << DIGIT_BITS;
        const uint32_t top = scalar_t::bit_length() - wbits * (nwins - 1);
        const size_t rows_bytes = 2 * NGROUPS * sizeof(bucket_t);

        for (size_t b = 0; b < shape.batch; b++) {
            size_t off = b * stride;
            if (off >= n) break;
            size_t num = std::min(stride, n - off);
            // signed digits of every window, then each window's digits sorted by bucket
            breakdown<<<2 * grid, 1024, sizeof(scalar_t) * 1024, s>>>(
                d_digits, scalars + off, num, nwins, wbits, true);
            CUDA_OK(cudaGetLastError());
            uint32_t win = 0;
            for (; win + 1 < nwins; win += 2)
                s.launch_coop(sort, {{grid, 2}, SORT_BLOCKDIM, sort_shared},
                              d_digits, num, win, d_temps, d_hist,
                              wbits - 1, wbits - 1, win + 2 == nwins ? top - 1 : wbits - 1);
            if (win < nwins)
                s.launch_coop(sort, {{grid, 1}, SORT_BLOCKDIM, sort_shared},
                              d_digits, num, win, d_temps, d_hist,
                              wbits - 1, top - 1, 0u);
            // window 0's first bucket (digit 1, usually the largest) by batch addition, the
            // rest bucket by bucket, then each window's buckets into its groups' pairs
            batch_addition<bucket_t><<<gpu.sm_count(), BATCH_ADD_BLOCK_SIZE, 0, s>>>(
                d_buckets + (size_t)nwins * row, d_points + off, num,
                &d_digits[0][0], d_hist[0][0]);
            CUDA_OK(cudaGetLastError());
            s.launch_coop(accumulate<bucket_t, affine_h>, {gpu.sm_count(), 0},
                          d_buckets, nwins, wbits, d_points + off, d_digits, d_hist, 0u);
            integrate<bucket_t><<<nwins, MSM_NTHREADS,
                                  sizeof(bucket_t) * MSM_NTHREADS / bucket_t::degree, s>>>(
                d_buckets, nwins, wbits, scalar_t::bit_length());
            CUDA_OK(cudaGetLastError());
            // (the host buckets have the device layout)
            char* dst = reinterpret_cast<char*>(const_cast<bucket_t*>(host + b * per_batch()));
            CUDA_OK(cudaMemcpy2DAsync(dst, rows_bytes, d_buckets, sizeof(bucket_h) * row,
                                      rows_bytes, nwins, cudaMemcpyDeviceToHost, s));
            CUDA_OK(cudaMemcpyAsync(dst + nwins * rows_bytes, d_buckets + (size_t)nwins * row,
                                    nret * sizeof(bucket_t), cudaMemcpyDeviceToHost, s));
        }
        s.Dfree(d_temp);
        s.Dfree(d_blob);
    }

    // Window w's total Σ_d d·(bucket of digit d) from its groups' pairs `g` (res, sum),
    // summed over the batches; `lsbits`: the window's bits (fewer in the top window).
    // A full window's group t covers digits t·S+1 .. (t+1)·S (S = 2^(lsbits-1-NTHR_BITS)), its
    // res already weighted 1..S within: the total is Σ res_t + S·Σ t·sum_t, and Σ t·sum_t is
    // the sum of the suffix sums Σ_{u>=t} sum_u for t >= 1. In a narrow top window every
    // group's buckets hold one digit, 1 + (t >> k) with k = NTHR_BITS - (lsbits-1): the total
    // is the sum of the suffix sums taken at every t that is a multiple of 2^k.
    point_t window(uint32_t w, uint32_t lsbits) const
    {
        bucket_t res[NGROUPS][2];
        for (uint32_t t = 0; t < NGROUPS; t++) {
            res[t][0].inf();
            res[t][1].inf();
        }
        for (size_t b = 0; b < shape.batch && b * shape.stride < n; b++) {
            const bucket_t* g = host + b * per_batch() + (size_t)w * 2 * NGROUPS;
            for (uint32_t t = 0; t < NGROUPS; t++) {
                res[t][0].add(g[2 * t]);
                res[t][1].add(g[2 * t + 1]);
            }
        }
        bucket_t suffix, total;
        suffix.inf();
        total.inf();
        if (lsbits - 1 <= NTHR_BITS) {
            const uint32_t every = (1u << (NTHR_BITS - (lsbits - 1))) - 1;
            for (uint32_t t = NGROUPS; t-- > 0;) {
                suffix.add(res[t][1]);
                if ((t & every) == 0)
                    total.add(suffix);
            }
            return point_t(total);
        }
        bucket_t weighted;
        weighted.inf();
        for (uint32_t t = NGROUPS; t-- > 1;) {
            suffix.add(res[t][1]);
            total.add(suffix);
        }
        for (uint32_t t = 0; t < NGROUPS; t++)
            weighted.add(res[t][0]);
        point_t out = point_t(total);
        for (uint32_t i = 0; i < lsbits - 1 - NTHR_BITS; i++)
            out.dbl();
        out.add(point_t(weighted));
        return out;
    }

    // The MSM, from what `queue` left in host memory (the stream must have got past it):
    // every window's total on `pool`, then Σ_w 2^(w·wbits)·total_w, plus the batch additions.
    point_t sum(thread_pool_t& pool) const
    {
        point_t out;
        out.inf();
        if (n == 0) return out;
        const uint32_t nwins = shape.nwins, wbits = shape.wbits;
        std::vector<point_t> win(nwins);
        pool.par_map(nwins, [&](size_t w) {
            uint32_t lsbits = w + 1 == nwins
                            ? (uint32_t)(scalar_t::bit_length() - wbits * (nwins - 1)) : wbits;
            win[w] = window((uint32_t)w, lsbits);
        });
        for (uint32_t w = nwins; w-- > 0;) {
            if (w + 1 < nwins)
                for (uint32_t i = 0; i < wbits; i++)
                    out.dbl();
            out.add(win[w]);
        }
        bucket_t ones;
        ones.inf();
        for (size_t b = 0; b < shape.batch && b * shape.stride < n; b++) {
            const bucket_t* r = host + b * per_batch() + (size_t)nwins * 2 * NGROUPS;
            for (size_t i = 0; i < nret; i++)
                ones.add(r[i]);
        }
        out.add(point_t(ones));
        return out;
    }
};

#endif
